/* sim_req_world.c - the requests that load, inspect or edit the world: LoadWorld,
 * GetModelInfo, AddBody, RemoveBody, SetBodyState, ApplyWrench, GetState, Reset, Snapshot,
 * Restore and GetStats. Each is a row of the request table (requests.c) and runs on the
 * simulation thread at a step boundary. */
#include <stdlib.h>

#include "log.h"
#include "requests.h"
#include "sim_internal.h"
#include "textesc.h"

/* the selector's body ids must exist */
int sim_check_selector(sim *s, const Physd__V1__Selector *sel, perr *e) {
  if (!sel) return 0;
  for (size_t i = 0; i < sel->n_bodies; i++)
    if (phys_body_get_mass(s->wc.w, sel->bodies[i], NULL, NULL) != PHYS_OK)
      return perr_set(e, PHYSD__V1__ERROR_CODE__NOT_FOUND, "body %d: no such body",
                      sel->bodies[i]);
  for (size_t i = 0; i < sel->n_joints; i++)
    if (phys_link_get_joint_info(s->wc.w, sel->joints[i], NULL, NULL, NULL) != PHYS_OK)
      return perr_set(e, PHYSD__V1__ERROR_CODE__NOT_FOUND, "joint %d: no such joint",
                      sel->joints[i]);
  return 0;
}

/* a load may take seconds: say in the log that one has started, and from what */
static void log_load_start(const Physd__V1__LoadWorld *m) {
  char shown[700];
  if (m->source_case == PHYSD__V1__LOAD_WORLD__SOURCE_PATH)
    log_info("loading world", "path=\"%s\"", text_escape(shown, sizeof shown, m->path));
  else
    log_info("loading world", "bytes=%zu name=\"%s\"", m->data.len,
             text_escape(shown, sizeof shown, m->name));
}

void sim_req_load_world(sim *s, const reply_to *to, const Physd__V1__Envelope *req) {
  const Physd__V1__LoadWorld *m = req->load_world;
  perr e;
  int rc;
  int is_path = m->source_case == PHYSD__V1__LOAD_WORLD__SOURCE_PATH;
  int is_data = m->source_case == PHYSD__V1__LOAD_WORLD__SOURCE_DATA;
  if (!text_utf8_valid(m->name)) {
    /* checked before anything is read: the world in force stays as it is */
    rc = perr_set(&e, PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT, "LoadWorld.name is not valid UTF-8");
  } else if (!is_path && !is_data) {
    rc = perr_set(&e, PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT, "LoadWorld needs a path or data");
  } else if (m->world_count > s->cfg->max_worlds) {
    rc = perr_set(&e, PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT,
                  "LoadWorld.world_count %u is over Limits.max_worlds %u", m->world_count,
                  s->cfg->max_worlds);
  } else if (m->world_count > 1 && s->mode != PHYSD__V1__MODE__MODE_LOCKSTEP) {
    /* a batch steps only through StepBatch: no free-running mode may step its prototype */
    rc = perr_set(&e, PHYSD__V1__ERROR_CODE__INCORRECT_STATE,
                  "LoadWorld.world_count %u needs lock-step mode (SetMode MODE_LOCKSTEP first)",
                  m->world_count);
  } else {
    log_load_start(m);
    rc = is_path ? world_load_path(&s->wc, m->path, m, s->cfg->allowed_roots,
                                   s->cfg->n_allowed_roots, &e)
                 : world_load_bytes(&s->wc, m->data.data, m->data.len, m->name, m,
                                    s->cfg->allowed_roots, s->cfg->n_allowed_roots, &e);
  }
  if (rc) {
    char shown[700];
    log_info("load refused", "code=%d reason=\"%s\"", e.code,
             text_escape(shown, sizeof shown, e.msg));
    sim_reply_perr(s, to, &e);
    return;
  }
  sim_joints_forget(s);
  sim_world_changed(s);
  int nnot = phys_world_notice_count(s->wc.w);
  char wname[300];
  text_escape(wname, sizeof wname, s->wc.name);
  solver_in_use su;
  world_solver_in_use(&s->wc, &su);
  log_info("world loaded", "name=\"%s\" bodies=%d worlds=%d notices=%d solver=%s "
           "max_iterations=%u tolerance=%g", wname, phys_world_body_count(s->wc.w),
           s->wc.world_count, nnot, su.msg.name, su.msg.max_iterations, su.msg.tolerance);
  char **notices = nnot > 0 ? calloc((size_t)nnot, sizeof *notices) : NULL;
  for (int i = 0; i < nnot; i++) {
    const char *msg = phys_world_notice(s->wc.w, i);
    char note[700];
    log_info("loader notice", "name=\"%s\" notice=\"%s\"", wname,
             text_escape(note, sizeof note, msg));
    if (notices) notices[i] = (char *)(msg ? msg : "");
  }
  Physd__V1__WorldLoaded wl = PHYSD__V1__WORLD_LOADED__INIT;
  Physd__V1__Clock clock;
  sim_clock c;
  sim_clock_get(s, &c);
  sim_fill_clock(&c, &clock);
  wl.name = s->wc.name;
  wl.bodies = (uint32_t)phys_world_body_count(s->wc.w);
  wl.model_hash = phys_world_model_hash(s->wc.w);
  wl.world_count = (uint32_t)s->wc.world_count;
  wl.clock = &clock;
  if (notices) {
    wl.n_notices = (size_t)nnot;
    wl.notices = notices;
  }
  Physd__V1__Envelope env = PHYSD__V1__ENVELOPE__INIT;
  env.msg_case = PHYSD__V1__ENVELOPE__MSG_WORLD_LOADED;
  env.world_loaded = &wl;
  sim_reply_env(s, to, &env, 0, 0);
  free(notices);
}

void sim_req_get_model_info(sim *s, const reply_to *to, const Physd__V1__Envelope *m) {
  perr e;
  Physd__V1__ModelInfo mi;
  if (world_model_info(&s->wc, &mi, &e)) {
    sim_reply_perr(s, to, &e);
    return;
  }
  Physd__V1__Envelope env = PHYSD__V1__ENVELOPE__INIT;
  env.msg_case = PHYSD__V1__ENVELOPE__MSG_MODEL_INFO;
  env.model_info = &mi;
  sim_reply_env(s, to, &env, 0, 0);
  world_model_info_free(&mi);
}

void sim_req_add_body(sim *s, const reply_to *to, const Physd__V1__Envelope *m) {
  perr e;
  int32_t id;
  if (world_add_body(&s->wc, m->add_body, &id, &e)) {
    sim_reply_perr(s, to, &e);
    return;
  }
  sim_world_changed(s);
  Physd__V1__BodyAdded ba = PHYSD__V1__BODY_ADDED__INIT;
  ba.id = id;
  Physd__V1__Envelope env = PHYSD__V1__ENVELOPE__INIT;
  env.msg_case = PHYSD__V1__ENVELOPE__MSG_BODY_ADDED;
  env.body_added = &ba;
  sim_reply_env(s, to, &env, 0, 0);
}

void sim_req_remove_body(sim *s, const reply_to *to, const Physd__V1__Envelope *m) {
  perr e;
  if (world_remove_body(&s->wc, m->remove_body->id, &e)) {
    sim_reply_perr(s, to, &e);
    return;
  }
  sim_world_changed(s);
  sim_reply_ack(s, to);
}

void sim_req_set_body_state(sim *s, const reply_to *to, const Physd__V1__Envelope *m) {
  perr e;
  if (world_set_body_state(&s->wc, m->set_body_state, &e)) {
    sim_reply_perr(s, to, &e);
    return;
  }
  sim_world_changed(s);
  sim_reply_ack(s, to);
}

void sim_req_apply_wrench(sim *s, const reply_to *to, const Physd__V1__Envelope *m) {
  perr e;
  if (world_apply_wrench(&s->wc, m->apply_wrench, &e)) {
    sim_reply_perr(s, to, &e);
    return;
  }
  sim_reply_ack(s, to);
}

void sim_req_get_state(sim *s, const reply_to *to, const Physd__V1__Envelope *m) {
  perr e;
  const Physd__V1__Selector *sel = m->get_state->selector;
  if (sim_check_selector(s, sel, &e)) {
    sim_reply_perr(s, to, &e);
    return;
  }
  sess_state *ss = sim_sess_get(s, to->session, 0);
  sim_reply_state(s, to, sel, ss ? ss->last_cmd_seq : 0, 0);
}

void sim_req_reset(sim *s, const reply_to *to, const Physd__V1__Envelope *m) {
  perr e;
  if (world_reset(&s->wc, &e)) {
    sim_reply_perr(s, to, &e);
    return;
  }
  sim_joints_forget(s);
  sim_world_changed(s);
  sim_reply_ack(s, to);
}

void sim_req_snapshot(sim *s, const reply_to *to, const Physd__V1__Envelope *m) {
  perr e;
  size_t len;
  uint8_t *data = world_snapshot(&s->wc, &len, &e);
  if (!data) {
    sim_reply_perr(s, to, &e);
    return;
  }
  Physd__V1__SnapshotData sd = PHYSD__V1__SNAPSHOT_DATA__INIT;
  sd.data.data = data;
  sd.data.len = len;
  Physd__V1__Envelope env = PHYSD__V1__ENVELOPE__INIT;
  env.msg_case = PHYSD__V1__ENVELOPE__MSG_SNAPSHOT_DATA;
  env.snapshot_data = &sd;
  sim_reply_env(s, to, &env, 0, 0);
  free(data);
}

void sim_req_restore(sim *s, const reply_to *to, const Physd__V1__Envelope *m) {
  perr e;
  if (world_restore(&s->wc, m->restore->data.data, m->restore->data.len, &e)) {
    sim_reply_perr(s, to, &e);
    return;
  }
  sim_joints_forget(s);
  sim_world_changed(s);
  sim_reply_ack(s, to);
}

void sim_req_get_stats(sim *s, const reply_to *to, const Physd__V1__Envelope *m) {
  Physd__V1__Stats st = PHYSD__V1__STATS__INIT;
  Physd__V1__Clock clock;
  Physd__V1__StepStats last = PHYSD__V1__STEP_STATS__INIT;
  sim_clock c;
  sim_clock_get(s, &c);
  sim_fill_clock(&c, &clock);
  st.clock = &clock;
  st.steps = s->stats.steps;
  stats_summary(&s->stats, &st.step_ms_p50, &st.step_ms_p99, &st.step_ms_max,
                &st.real_time_factor_measured);
  st.overruns = s->stats.overruns;
  st.stale_commands = s->stats.stale_commands;
  st.released_commands = s->stats.released_commands;
  st.stream_frames_sent = atomic_load(&s->nc->frames_sent);
  st.stream_frames_dropped = atomic_load(&s->nc->frames_dropped);
  st.clients = atomic_load(&s->nc->clients);
  st.subscriptions = atomic_load(&s->nc->subscriptions);
  const phys_step_stats *ps = phys_world_stats(s->wc.w);
  last.step_ms = ps->time_total * 1e3;
  last.contacts = (uint32_t)(ps->contacts > 0 ? ps->contacts : 0);
  last.islands = (uint32_t)(ps->islands > 0 ? ps->islands : 0);
  last.iterations_max = (uint32_t)(ps->iterations_max > 0 ? ps->iterations_max : 0);
  last.iterations_mean = ps->iterations_mean;
  last.residual = ps->residual;
  last.penetration_max = ps->penetration_max;
  /* 1.2: the solver that ran the last step (none before the first) and the one in force */
  const char *ran = ps->step > 0 ? phys_solver_name((int)ps->solver) : NULL;
  last.solver = (char *)(ran ? ran : "");
  last.residual_mean = ps->residual_mean;
  st.last_step = &last;
  solver_in_use su;
  world_solver_in_use(&s->wc, &su);
  st.solver = &su.msg;
  Physd__V1__Envelope env = PHYSD__V1__ENVELOPE__INIT;
  env.msg_case = PHYSD__V1__ENVELOPE__MSG_STATS;
  env.stats = &st;
  sim_reply_env(s, to, &env, 0, 0);
}
