/* sim_req_joint.c - the protocol 1.3 requests on joints and keyframes: ResetToKeyframe and
 * SetJointState. Rows of the request table (requests.c); they run on the simulation thread at
 * a step boundary and are checked whole: a refused request changes nothing. */
#include "log.h"
#include "requests.h"
#include "sim_internal.h"
#include "textesc.h"

/* log a refusal and answer it */
static void refuse(sim *s, const reply_to *to, const char *what, const perr *e) {
  char shown[600];
  log_info(what, "session=%llu reason=\"%s\"", (unsigned long long)to->session,
           text_escape(shown, sizeof shown, e->msg));
  sim_reply_perr(s, to, e);
}

void sim_req_reset_to_keyframe(sim *s, const reply_to *to, const Physd__V1__Envelope *m) {
  const Physd__V1__ResetToKeyframe *r = m->reset_to_keyframe;
  perr e;
  if (world_reset_to_keyframe(&s->wc, r->name, r->index, r->has_index, &e)) {
    refuse(s, to, "keyframe refused", &e);
    return;
  }
  /* as Reset: joint commands end, the world is new to subscribers */
  sim_joints_forget(s);
  sim_world_changed(s);
  sim_reply_ack(s, to);
}

void sim_req_set_joint_state(sim *s, const reply_to *to, const Physd__V1__Envelope *m) {
  perr e;
  if (world_set_joint_state(&s->wc, m->set_joint_state, &e)) {
    refuse(s, to, "joint state refused", &e);
    return;
  }
  sim_world_changed(s);
  sim_reply_ack(s, to);
}
