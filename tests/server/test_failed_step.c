/* test_failed_step.c - a step that fails leaves no trace in what the daemon answers.
 *
 * The gripper scene (gripper_scene.h: a finger resting on box_b, more boxes, actuators and
 * sensors) settles; box_b gets a velocity of 1e300 (finite, but its kinetic energy overflows:
 * refused before the step) or a spin of 1e154 rad/s about x (its kinetic energy is finite, so
 * the step runs; the solve goes non-finite and the engine restores).
 * Step and StepAndObserve must fail naming box_b by id and name, and GetState with every field
 * selected (bodies, contacts, joints, actuator forces, sensors, statistics) must return bitwise
 * the frame it returned before the failed step (wall time and req_id aside). A NaN velocity is
 * refused by SetBodyState with the world unchanged. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cunit_main.h"
#include "gripper_scene.h"
#include "wire_client.h"

static wc_daemon D;
static wc_conn C;

static int setup(void) {
  if (wc_suite_start(&D, &C, NULL, NULL)) return -1;
  Physd__V1__Envelope *r = wc_req_load_data(&C, GRIPPER_SCENE);
  int ok = r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_WORLD_LOADED;
  wc_free(r);
  return ok ? 0 : -1;
}

static int teardown(void) { return wc_suite_stop(&D, &C); }

/* a body's id by name (GetModelInfo), -1 if none */
static int body_id(const char *name) {
  Physd__V1__Envelope *r = wc_req_empty(&C, PHYSD__V1__ENVELOPE__MSG_GET_MODEL_INFO);
  int id = -1;
  if (r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_MODEL_INFO)
    for (size_t i = 0; i < r->model_info->n_bodies; i++)
      if (strcmp(r->model_info->bodies[i]->name, name) == 0) id = r->model_info->bodies[i]->id;
  wc_free(r);
  return id;
}

/* GetState with every field, packed again with req_id and wall time zeroed (malloc'd) */
static uint8_t *full_state(size_t *len, size_t *ncontacts) {
  Physd__V1__Selector sel = PHYSD__V1__SELECTOR__INIT;
  sel.all_bodies = 1;
  sel.contacts = 1;
  sel.stats = 1;
  sel.all_joints = 1;
  sel.actuators = 1;
  sel.sensors = 1;
  Physd__V1__GetState gs = PHYSD__V1__GET_STATE__INIT;
  gs.selector = &sel;
  Physd__V1__Envelope env;
  WC_ENV(env, GET_STATE, get_state, &gs);
  Physd__V1__Envelope *r = wc_call(&C, &env, 5000);
  CU_ASSERT_FATAL(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_STATE);
  CU_ASSERT(r->state->n_joints == 2 && r->state->n_actuator_force == 2);
  CU_ASSERT(r->state->n_sensor_values > 0);
  *ncontacts = r->state->n_contacts;
  r->req_id = 0;
  r->state->wall_mono_ns = 0;
  *len = physd__v1__envelope__get_packed_size(r);
  uint8_t *buf = malloc(*len);
  physd__v1__envelope__pack(r, buf);
  wc_free(r);
  return buf;
}

/* body id's velocity becomes (v, 0, -v) and its angular velocity (spin, 0, 0) */
static Physd__V1__Envelope *set_velocity(int32_t id, double v, double spin) {
  Physd__V1__Vec3 lin = PHYSD__V1__VEC3__INIT, ang = PHYSD__V1__VEC3__INIT;
  lin.x = v;
  lin.z = -v;
  ang.x = spin;
  Physd__V1__SetBodyState sb = PHYSD__V1__SET_BODY_STATE__INIT;
  sb.id = id;
  sb.linvel = &lin;
  sb.angvel = &ang;
  Physd__V1__Envelope env;
  WC_ENV(env, SET_BODY_STATE, set_body_state, &sb);
  return wc_call(&C, &env, 5000);
}

static void test_failed_step_leaves_no_trace(void) {
  /* the right finger's servo leans it on box_b */
  int32_t act = 1;
  double ctrl = -0.1;
  Physd__V1__SetActuatorControl ac = PHYSD__V1__SET_ACTUATOR_CONTROL__INIT;
  ac.n_ids = 1;
  ac.ids = &act;
  ac.n_ctrl = 1;
  ac.ctrl = &ctrl;
  Physd__V1__Envelope env;
  WC_ENV(env, SET_ACTUATOR_CONTROL, set_actuator_control, &ac);
  CU_ASSERT(wc_take_ack(wc_call(&C, &env, 5000)));
  CU_ASSERT(wc_take_ack(wc_req_step(&C, 200)));
  int box = body_id("box_b"), finger = body_id("finger_r");
  CU_ASSERT_FATAL(box > finger && finger > 0);

  /* NaN: refused, nothing changes */
  size_t n0, n1, nc0, nc1;
  uint8_t *s0 = full_state(&n0, &nc0);
  CU_ASSERT(nc0 > 0);
  CU_ASSERT_EQUAL(wc_take_error(set_velocity(box, NAN, 0.0)), PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT);
  uint8_t *s1 = full_state(&n1, &nc1);
  CU_ASSERT(n0 == n1 && memcmp(s0, s1, n0) == 0);
  free(s0);
  free(s1);

  /* 1e300: accepted (finite), the step fails naming box_b, no trace of it */
  CU_ASSERT(wc_take_ack(set_velocity(box, 1e300, 0.0)));
  s0 = full_state(&n0, &nc0);
  char want[64];
  snprintf(want, sizeof want, "body %d ('box_b')", box);
  Physd__V1__Envelope *r = wc_req_step(&C, 1);
  CU_ASSERT_EQUAL_FATAL(wc_error_code(r), PHYSD__V1__ERROR_CODE__INTERNAL);
  CU_ASSERT_PTR_NOT_NULL(strstr(r->error->message, want));
  printf("\n    Step: %s", r->error->message);
  wc_free(r);
  s1 = full_state(&n1, &nc1);
  CU_ASSERT_EQUAL(nc1, nc0);
  CU_ASSERT(n0 == n1 && memcmp(s0, s1, n0) == 0);
  free(s1);

  /* StepAndObserve: the same error, the same frame afterwards */
  Physd__V1__StepAndObserve so = PHYSD__V1__STEP_AND_OBSERVE__INIT;
  so.n = 3;
  WC_ENV(env, STEP_AND_OBSERVE, step_and_observe, &so);
  r = wc_call(&C, &env, 5000);
  CU_ASSERT_EQUAL_FATAL(wc_error_code(r), PHYSD__V1__ERROR_CODE__INTERNAL);
  CU_ASSERT_PTR_NOT_NULL(strstr(r->error->message, want));
  wc_free(r);
  s1 = full_state(&n1, &nc1);
  CU_ASSERT(n0 == n1 && memcmp(s0, s1, n0) == 0);
  free(s1);
  free(s0);

  /* a spin of 1e154 rad/s: steppable going in, the solve goes non-finite and the engine
   * restores: the same */
  CU_ASSERT(wc_take_ack(set_velocity(box, 0.0, 1e154)));
  s0 = full_state(&n0, &nc0);
  r = wc_req_step(&C, 4);
  CU_ASSERT_EQUAL_FATAL(wc_error_code(r), PHYSD__V1__ERROR_CODE__INTERNAL);
  CU_ASSERT_PTR_NOT_NULL(strstr(r->error->message, want));
  CU_ASSERT_PTR_NOT_NULL(strstr(r->error->message, "became non-finite"));
  printf("\n    Step: %s", r->error->message);
  wc_free(r);
  s1 = full_state(&n1, &nc1);
  CU_ASSERT_EQUAL(nc1, nc0);
  CU_ASSERT(n0 == n1 && memcmp(s0, s1, n0) == 0);
  free(s1);
  free(s0);

  /* a sane velocity again: the world steps on */
  CU_ASSERT(wc_take_ack(set_velocity(box, 0.0, 0.0)));
  CU_ASSERT(wc_take_ack(wc_req_step(&C, 5)));
}

int register_tests(void) {
  CU_pSuite s = CU_add_suite("server_failed_step", setup, teardown);
  if (!s) return -1;
  if (!CU_add_test(s, "a failed step names its body and leaves no trace",
                   test_failed_step_leaves_no_trace))
    return -1;
  return 0;
}
