/* requests.c - the request table (see requests.h): one row per client message. */
#include "requests.h"

#include <stdio.h>
#include <string.h>

#define MSG(x) PHYSD__V1__ENVELOPE__MSG_##x
#define SIM(props) (REQ_ON_SIM | REQ_AFTER_HELLO | (props))
#define W REQ_CHANGES_WORLD
#define B REQ_BATCH_OK

static const request_def table[] = {
    /* loop thread */
    {MSG(HELLO), "Hello", 0, NULL, session_req_hello},
    {MSG(PING), "Ping", REQ_AFTER_HELLO, NULL, session_req_ping},
    {MSG(SUBSCRIBE), "Subscribe", REQ_AFTER_HELLO, NULL, session_req_subscribe},
    {MSG(UNSUBSCRIBE), "Unsubscribe", REQ_AFTER_HELLO, NULL, session_req_unsubscribe},
    /* simulation thread */
    {MSG(LOAD_WORLD), "LoadWorld", SIM(W | B), sim_req_load_world, NULL},
    {MSG(GET_MODEL_INFO), "GetModelInfo", SIM(B), sim_req_get_model_info, NULL},
    {MSG(ADD_BODY), "AddBody", SIM(W), sim_req_add_body, NULL},
    {MSG(REMOVE_BODY), "RemoveBody", SIM(W), sim_req_remove_body, NULL},
    {MSG(SET_BODY_STATE), "SetBodyState", SIM(W), sim_req_set_body_state, NULL},
    {MSG(SET_JOINT_COMMAND), "SetJointCommand", SIM(W), sim_req_set_joint_command, NULL},
    {MSG(APPLY_WRENCH), "ApplyWrench", SIM(W), sim_req_apply_wrench, NULL},
    {MSG(STEP), "Step", SIM(W | REQ_STEPS), sim_req_step, NULL},
    {MSG(STEP_AND_OBSERVE), "StepAndObserve", SIM(W | REQ_STEPS), sim_req_step_and_observe, NULL},
    {MSG(PAUSE), "Pause", SIM(W | B), sim_req_pause, NULL},
    {MSG(RESUME), "Resume", SIM(W | B), sim_req_resume, NULL},
    {MSG(SET_MODE), "SetMode", SIM(W | B), sim_req_set_mode, NULL},
    {MSG(SET_REAL_TIME_FACTOR), "SetRealTimeFactor", SIM(W), sim_req_set_real_time_factor, NULL},
    {MSG(GET_STATE), "GetState", SIM(0), sim_req_get_state, NULL},
    {MSG(RESET), "Reset", SIM(W | B), sim_req_reset, NULL},
    {MSG(SNAPSHOT), "Snapshot", SIM(0), sim_req_snapshot, NULL},
    {MSG(RESTORE), "Restore", SIM(W), sim_req_restore, NULL},
    {MSG(GET_STATS), "GetStats", SIM(0), sim_req_get_stats, NULL},
    {MSG(JOIN_BARRIER), "JoinBarrier", SIM(0), sim_req_join_barrier, NULL},
    {MSG(LEAVE_BARRIER), "LeaveBarrier", SIM(0), sim_req_leave_barrier, NULL},
    {MSG(SET_ACTUATOR_CONTROL), "SetActuatorControl", SIM(W), sim_req_set_actuator_control,
     NULL},
    {MSG(SET_SOLVER), "SetSolver", SIM(W), sim_req_set_solver, NULL},
    {MSG(RESET_TO_KEYFRAME), "ResetToKeyframe", SIM(W), sim_req_reset_to_keyframe, NULL},
    {MSG(SET_JOINT_STATE), "SetJointState", SIM(W), sim_req_set_joint_state, NULL},
    {MSG(STEP_BATCH), "StepBatch", SIM(W | REQ_STEPS | B), sim_req_step_batch, NULL},
};

#define NREQ ((int)(sizeof table / sizeof table[0]))

/* client messages are the Envelope's fields 10 .. 99; replies and events are 100 and up */
#define CLIENT_FIRST 10
#define CLIENT_LAST 99

const request_def *request_find(int msg_case) {
  for (int i = 0; i < NREQ; i++)
    if (table[i].msg_case == msg_case) return &table[i];
  return NULL;
}

int request_count(void) { return NREQ; }

const request_def *request_at(int i) { return i >= 0 && i < NREQ ? &table[i] : NULL; }

int request_table_check(char *err, size_t errlen) {
  const ProtobufCMessageDescriptor *d = &physd__v1__envelope__descriptor;
  int rows_seen = 0;
  for (unsigned f = 0; f < d->n_fields; f++) {
    const ProtobufCFieldDescriptor *fd = &d->fields[f];
    int is_client = fd->id >= CLIENT_FIRST && fd->id <= CLIENT_LAST;
    int n = 0;
    const request_def *r = NULL;
    for (int i = 0; i < NREQ; i++)
      if (table[i].msg_case == (int)fd->id) {
        n++;
        r = &table[i];
      }
    if (!is_client && n) {
      snprintf(err, errlen, "request table: %s (field %u) is a server message", fd->name, fd->id);
      return -1;
    }
    if (!is_client) continue;
    if (n != 1) {
      snprintf(err, errlen, "request table: %s (field %u) has %d rows, expected 1", fd->name,
               fd->id, n);
      return -1;
    }
    if ((r->props & REQ_ON_SIM) ? (!r->on_sim || r->on_loop) : (!r->on_loop || r->on_sim)) {
      snprintf(err, errlen, "request table: %s has no handler for its thread", r->name);
      return -1;
    }
    rows_seen++;
  }
  if (rows_seen != NREQ) {
    snprintf(err, errlen, "request table: %d rows name no client message of the Envelope",
             NREQ - rows_seen);
    return -1;
  }
  return 0;
}
