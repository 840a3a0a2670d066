/* test_requests.c - every request against the real daemon: the success path with its reply
 * contents, and each error path with its code, the world unchanged after an error. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cunit_main.h"
#include "test_scene.h"
#include "wire_client.h"

static wc_daemon D;
static wc_conn C;

/* ids of the test scene after a load: wall 0 (static), a 1, b 2, c 3 */
enum { WALL = 0, BODY_A = 1, BODY_B = 2, BODY_C = 3 };

static int setup(void) {
  if (wc_suite_start(&D, &C, NULL, NULL)) return -1;
  return wc_load_world(&C, wc_write_file(&D, "scene.xml", TEST_SCENE));
}

static int teardown(void) { return wc_suite_stop(&D, &C); }

/* the whole state as a vector, for "unchanged" checks */
static double *state(size_t *n) {
  Physd__V1__Envelope *r = wc_req_state(&C);
  double *v = wc_state_vector(r, n);
  wc_free(r);
  return v;
}

static int same_state(const double *a, size_t na) {
  size_t nb;
  double *b = state(&nb);
  int same = b && na == nb && memcmp(a, b, na * sizeof *a) == 0;
  free(b);
  return same;
}

static uint64_t model_hash(void) {
  Physd__V1__Envelope *r = wc_req_empty(&C, PHYSD__V1__ENVELOPE__MSG_GET_MODEL_INFO);
  uint64_t h = r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_MODEL_INFO ? r->model_info->model_hash : 0;
  wc_free(r);
  return h;
}

/* ---- world -------------------------------------------------------------------------------- */

static void test_load_world(void) {
  /* by path */
  const char *path = wc_write_file(&D, "scene2.xml", TEST_SCENE);
  Physd__V1__Envelope *r = wc_req_load_path(&C, path);
  CU_ASSERT_FATAL(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_WORLD_LOADED);
  CU_ASSERT_EQUAL(r->world_loaded->bodies, 4);
  CU_ASSERT(r->world_loaded->model_hash != 0);
  CU_ASSERT(r->world_loaded->clock && r->world_loaded->clock->step == 0 &&
            r->world_loaded->clock->timestep_ns == 2000000);
  uint64_t hash = r->world_loaded->model_hash;
  wc_free(r);

  /* by bytes: same model, same hash */
  r = wc_req_load_data(&C, TEST_SCENE);
  CU_ASSERT_FATAL(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_WORLD_LOADED);
  CU_ASSERT_EQUAL(r->world_loaded->model_hash, hash);
  wc_free(r);

  size_t n;
  double *before = state(&n);
  CU_ASSERT_FATAL(before != NULL && n == 4 * 14);

  /* errors, the world unchanged after each */
  CU_ASSERT_EQUAL(wc_take_error(wc_req_load_path(&C, wc_write_file(&D, "nothing-here.xml", "") )),
                  PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT); /* empty document */
  char missing[400];
  snprintf(missing, sizeof missing, "%s/missing.xml", D.dir);
  CU_ASSERT_EQUAL(wc_take_error(wc_req_load_path(&C, missing)), PHYSD__V1__ERROR_CODE__NOT_FOUND);
  const char *malformed = wc_write_file(&D, "bad.xml", "<mujoco><worldbody><body></worldbody>");
  r = wc_req_load_path(&C, malformed);
  CU_ASSERT_EQUAL(wc_error_code(r), PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT);
  CU_ASSERT(r && strstr(r->error->message, "bad.xml") != NULL);
  wc_free(r);
  CU_ASSERT_EQUAL(wc_take_error(wc_req_load_path(&C, "/etc/hostname")), PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT);
  char escape[400];
  snprintf(escape, sizeof escape, "%s/../../etc/passwd", D.dir);
  r = wc_req_load_path(&C, escape);
  CU_ASSERT_EQUAL(wc_error_code(r), PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT);
  CU_ASSERT(r && strstr(r->error->message, "allowed roots") != NULL);
  wc_free(r);
  /* a symlink inside the root that points outside is resolved and refused */
  char link[400];
  snprintf(link, sizeof link, "%s/link.xml", D.dir);
  CU_ASSERT(symlink("/etc/passwd", link) == 0);
  CU_ASSERT_EQUAL(wc_take_error(wc_req_load_path(&C, link)), PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT);
  /* URDF is loaded (tests/server/test_load_urdf.c); a robot without links is malformed */
  CU_ASSERT_EQUAL(wc_take_error(wc_req_load_path(&C, wc_write_file(&D, "r.urdf", "<robot/>"))),
                  PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT);
  CU_ASSERT_EQUAL(wc_take_error(wc_req_load_data(&C, "<?xml version=\"1.0\"?><robot name=\"r\"/>")),
                  PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT);
  /* an MJCF feature the engine does not have (height fields) */
  CU_ASSERT_EQUAL(wc_take_error(wc_req_load_data(&C, "<mujoco><worldbody><geom type=\"hfield\"/>"
                                              "</worldbody></mujoco>")),
                  PHYSD__V1__ERROR_CODE__UNSUPPORTED);
  Physd__V1__LoadWorld l = PHYSD__V1__LOAD_WORLD__INIT;
  Physd__V1__Envelope env;
  WC_ENV(env, LOAD_WORLD, load_world, &l);
  CU_ASSERT_EQUAL(wc_take_error(wc_call(&C, &env, 5000)), PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT);
  l.source_case = PHYSD__V1__LOAD_WORLD__SOURCE_PATH;
  l.path = (char *)path;
  l.format = (Physd__V1__ModelFormat)7;
  CU_ASSERT_EQUAL(wc_take_error(wc_call(&C, &env, 5000)), PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT);
  l.format = PHYSD__V1__MODEL_FORMAT__FORMAT_URDF; /* an MJCF file read as URDF */
  CU_ASSERT_EQUAL(wc_take_error(wc_call(&C, &env, 5000)), PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT);
  CU_ASSERT(same_state(before, n));
  CU_ASSERT_EQUAL(model_hash(), hash);
  CU_ASSERT(wc_daemon_log_has(&D, "load refused"));
  free(before);
}

static void test_model_info(void) {
  Physd__V1__Envelope *r = wc_req_empty(&C, PHYSD__V1__ENVELOPE__MSG_GET_MODEL_INFO);
  CU_ASSERT_FATAL(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_MODEL_INFO);
  const Physd__V1__ModelInfo *mi = r->model_info;
  CU_ASSERT_EQUAL_FATAL(mi->n_bodies, 4);
  const char *names[] = {"wall", "a", "b", "c"};
  for (int i = 0; i < 4; i++) {
    CU_ASSERT_EQUAL(mi->bodies[i]->id, i);
    CU_ASSERT_STRING_EQUAL(mi->bodies[i]->name, names[i]);
  }
  CU_ASSERT(mi->bodies[0]->is_static && mi->bodies[0]->mass == 0.0);
  ASSERT_NEAR(mi->bodies[1]->mass, 1000.0 * 0.2 * 0.2 * 0.2, 1e-9);
  ASSERT_NEAR(mi->bodies[2]->mass, 1000.0 * 4.0 / 3.0 * M_PI * 1e-3, 1e-9);
  CU_ASSERT(!mi->bodies[3]->is_static);
  CU_ASSERT_EQUAL(mi->n_joints, 0);
  ASSERT_NEAR(mi->timestep, 0.002, 1e-15);
  CU_ASSERT(mi->gravity && mi->gravity->z == -9.81);
  CU_ASSERT(mi->model_hash != 0);
  wc_free(r);
}

/* ---- entities ----------------------------------------------------------------------------- */

static Physd__V1__Envelope *add_body(const char *name, double z, double mass, int gtype,
                                     size_t nsize, const double *size) {
  Physd__V1__Vec3 pos = PHYSD__V1__VEC3__INIT;
  pos.x = -1.0;
  pos.z = z;
  Physd__V1__GeomSpec g = PHYSD__V1__GEOM_SPEC__INIT;
  g.type = (Physd__V1__GeomType)gtype;
  g.n_size = nsize;
  g.size = (double *)size;
  Physd__V1__GeomSpec *gp = &g;
  Physd__V1__AddBody ab = PHYSD__V1__ADD_BODY__INIT;
  ab.name = (char *)name;
  ab.pos = &pos;
  ab.mass = mass;
  ab.n_geoms = 1;
  ab.geoms = &gp;
  Physd__V1__Envelope env;
  WC_ENV(env, ADD_BODY, add_body, &ab);
  return wc_call(&C, &env, 5000);
}

static void test_add_remove_body(void) {
  size_t n;
  double *before = state(&n);
  uint64_t hash = model_hash();
  const double s1[] = {0.1}, s3[] = {0.1, 0.2, 0.3}, snan[] = {NAN}, sneg[] = {-0.1};

  /* errors first: nothing changes */
  CU_ASSERT_EQUAL(wc_take_error(add_body("x", NAN, 0, 0, 1, s1)), PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT);
  CU_ASSERT_EQUAL(wc_take_error(add_body("x", INFINITY, 0, 0, 1, s1)), PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT);
  CU_ASSERT_EQUAL(wc_take_error(add_body("x", 1, NAN, 0, 1, s1)), PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT);
  CU_ASSERT_EQUAL(wc_take_error(add_body("x", 1, -2, 0, 1, s1)), PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT);
  CU_ASSERT_EQUAL(wc_take_error(add_body("x", 1, 0, 9, 1, s1)), PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT);
  CU_ASSERT_EQUAL(wc_take_error(add_body("x", 1, 0, 2, 1, s1)), PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT);
  CU_ASSERT_EQUAL(wc_take_error(add_body("x", 1, 0, 0, 1, snan)), PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT);
  CU_ASSERT_EQUAL(wc_take_error(add_body("x", 1, 0, 0, 1, sneg)), PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT);
  CU_ASSERT_EQUAL(wc_take_error(add_body("x", 1, 0, 0, 0, NULL)), PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT);
  CU_ASSERT_EQUAL(wc_take_error(add_body("a", 1, 0, 0, 1, s1)), PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT);
  Physd__V1__AddBody none = PHYSD__V1__ADD_BODY__INIT;
  Physd__V1__Envelope env;
  WC_ENV(env, ADD_BODY, add_body, &none);
  CU_ASSERT_EQUAL(wc_take_error(wc_call(&C, &env, 5000)), PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT);
  CU_ASSERT(same_state(before, n));
  CU_ASSERT_EQUAL(model_hash(), hash);

  /* success: a box of 5 kg */
  Physd__V1__Envelope *r = add_body("newbox", 2.0, 5.0, PHYSD__V1__GEOM_TYPE__GEOM_BOX, 3, s3);
  CU_ASSERT_FATAL(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_BODY_ADDED);
  int32_t id = r->body_added->id;
  CU_ASSERT_EQUAL(id, 4);
  wc_free(r);
  r = wc_req_empty(&C, PHYSD__V1__ENVELOPE__MSG_GET_MODEL_INFO);
  CU_ASSERT_FATAL(r && r->model_info->n_bodies == 5);
  CU_ASSERT_STRING_EQUAL(r->model_info->bodies[4]->name, "newbox");
  ASSERT_NEAR(r->model_info->bodies[4]->mass, 5.0, 1e-12);
  CU_ASSERT(r->model_info->model_hash != hash);
  wc_free(r);

  /* remove it; unknown and removed ids are NOT_FOUND */
  Physd__V1__RemoveBody rb = PHYSD__V1__REMOVE_BODY__INIT;
  rb.id = id;
  WC_ENV(env, REMOVE_BODY, remove_body, &rb);
  CU_ASSERT(wc_take_ack(wc_call(&C, &env, 5000)));
  CU_ASSERT_EQUAL(wc_take_error(wc_call(&C, &env, 5000)), PHYSD__V1__ERROR_CODE__NOT_FOUND);
  rb.id = 999;
  CU_ASSERT_EQUAL(wc_take_error(wc_call(&C, &env, 5000)), PHYSD__V1__ERROR_CODE__NOT_FOUND);
  rb.id = -1;
  CU_ASSERT_EQUAL(wc_take_error(wc_call(&C, &env, 5000)), PHYSD__V1__ERROR_CODE__NOT_FOUND);
  free(before);
}

static void test_set_body_state(void) {
  Physd__V1__Vec3 pos = PHYSD__V1__VEC3__INIT, vel = PHYSD__V1__VEC3__INIT;
  pos.x = 0.25;
  pos.y = -0.5;
  pos.z = 1.75;
  vel.z = 3.0;
  Physd__V1__SetBodyState sb = PHYSD__V1__SET_BODY_STATE__INIT;
  sb.id = BODY_B;
  sb.pos = &pos;
  sb.linvel = &vel;
  Physd__V1__Envelope env;
  WC_ENV(env, SET_BODY_STATE, set_body_state, &sb);
  CU_ASSERT(wc_take_ack(wc_call(&C, &env, 5000)));
  Physd__V1__Envelope *r = wc_req_state(&C);
  CU_ASSERT_FATAL(r && r->state->n_bodies == 4);
  const Physd__V1__BodyState *b = r->state->bodies[BODY_B];
  CU_ASSERT(b->id == BODY_B && b->pos->x == 0.25 && b->pos->y == -0.5 && b->pos->z == 1.75 &&
            b->linvel->z == 3.0);
  wc_free(r);

  size_t n;
  double *before = state(&n);
  pos.z = NAN;
  CU_ASSERT_EQUAL(wc_take_error(wc_call(&C, &env, 5000)), PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT);
  pos.z = 1.0;
  vel.x = -INFINITY;
  CU_ASSERT_EQUAL(wc_take_error(wc_call(&C, &env, 5000)), PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT);
  vel.x = 0;
  Physd__V1__Quat q = PHYSD__V1__QUAT__INIT; /* all zero */
  sb.quat = &q;
  CU_ASSERT_EQUAL(wc_take_error(wc_call(&C, &env, 5000)), PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT);
  sb.quat = NULL;
  sb.id = 77;
  CU_ASSERT_EQUAL(wc_take_error(wc_call(&C, &env, 5000)), PHYSD__V1__ERROR_CODE__NOT_FOUND);
  sb.id = WALL;
  CU_ASSERT_EQUAL(wc_take_error(wc_call(&C, &env, 5000)), PHYSD__V1__ERROR_CODE__INCORRECT_STATE);
  CU_ASSERT(same_state(before, n));
  free(before);
}

/* a mocap body: listed in ModelInfo, posed by SetBodyState (pose only: a velocity is refused and
 * nothing changes); the test scene is loaded again afterwards */
static void test_set_body_state_mocap(void) {
  const char *scene =
      "<mujoco><worldbody><body name='hand' mocap='true' pos='0 0 1'><geom size='0.1'/></body>"
      "<body name='ball' pos='0 0 0.5'><freejoint/><geom size='0.1'/></body></worldbody>"
      "</mujoco>";
  CU_ASSERT_FATAL(wc_load_world(&C, wc_write_file(&D, "mocap.xml", scene)) == 0);
  Physd__V1__Envelope *r = wc_req_empty(&C, PHYSD__V1__ENVELOPE__MSG_GET_MODEL_INFO);
  CU_ASSERT_FATAL(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_MODEL_INFO &&
                  r->model_info->n_bodies == 2);
  CU_ASSERT(r->model_info->bodies[0]->is_mocap && r->model_info->bodies[0]->is_static);
  CU_ASSERT(!r->model_info->bodies[1]->is_mocap && !r->model_info->bodies[1]->is_static);
  wc_free(r);

  Physd__V1__Vec3 pos = PHYSD__V1__VEC3__INIT, vel = PHYSD__V1__VEC3__INIT;
  Physd__V1__Quat q = PHYSD__V1__QUAT__INIT;
  pos.x = 0.5;
  pos.z = 2.0;
  q.w = 0.0;
  q.z = 1.0;
  Physd__V1__SetBodyState sb = PHYSD__V1__SET_BODY_STATE__INIT;
  sb.id = 0;
  sb.pos = &pos;
  sb.quat = &q;
  sb.linvel = &vel; /* zero: accepted */
  Physd__V1__Envelope env;
  WC_ENV(env, SET_BODY_STATE, set_body_state, &sb);
  CU_ASSERT(wc_take_ack(wc_call(&C, &env, 5000)));
  r = wc_req_state(&C);
  CU_ASSERT_FATAL(r && r->state->n_bodies == 2);
  const Physd__V1__BodyState *b = r->state->bodies[0];
  CU_ASSERT(b->pos->x == 0.5 && b->pos->y == 0.0 && b->pos->z == 2.0);
  CU_ASSERT(b->quat->w == 0.0 && b->quat->z == 1.0);
  wc_free(r);

  /* a velocity on a mocap body: INVALID_ARGUMENT naming mocap, the world unchanged */
  size_t n;
  double *before = state(&n);
  pos.x = 3.0;
  vel.z = 1.0;
  r = wc_call(&C, &env, 5000);
  CU_ASSERT_EQUAL(wc_error_code(r), PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT);
  CU_ASSERT(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_ERROR &&
            strstr(r->error->message, "mocap") != NULL);
  wc_free(r);
  vel.z = 0.0;
  sb.linvel = NULL;
  Physd__V1__Vec3 w = PHYSD__V1__VEC3__INIT;
  w.x = 0.1;
  sb.angvel = &w;
  CU_ASSERT_EQUAL(wc_take_error(wc_call(&C, &env, 5000)), PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT);
  CU_ASSERT(same_state(before, n));
  free(before);
  CU_ASSERT_FATAL(wc_load_world(&C, wc_write_file(&D, "scene.xml", TEST_SCENE)) == 0);
}

static void test_joint_command(void) {
  int32_t joints[] = {0};
  Physd__V1__SetJointCommand jc = PHYSD__V1__SET_JOINT_COMMAND__INIT;
  jc.n_joint_ids = 1;
  jc.joint_ids = joints;
  Physd__V1__Envelope env;
  WC_ENV(env, SET_JOINT_COMMAND, set_joint_command, &jc);
  Physd__V1__Envelope *r = wc_call(&C, &env, 5000);
  CU_ASSERT_EQUAL(wc_error_code(r), PHYSD__V1__ERROR_CODE__NOT_FOUND);
  CU_ASSERT(r && strstr(r->error->message, "no joints") != NULL);
  wc_free(r);
  /* values without ids, and an unknown mode */
  double q[] = {1.0};
  jc.n_joint_ids = 0;
  jc.n_q = 1;
  jc.q = q;
  CU_ASSERT_EQUAL(wc_take_error(wc_call(&C, &env, 5000)), PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT);
  jc.n_q = 0;
  jc.mode = (Physd__V1__CommandMode)9;
  CU_ASSERT_EQUAL(wc_take_error(wc_call(&C, &env, 5000)), PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT);
  /* an empty command is accepted and its seq shows on frames */
  jc.mode = PHYSD__V1__COMMAND_MODE__CMD_TORQUE;
  jc.seq = 42;
  CU_ASSERT(wc_take_ack(wc_call(&C, &env, 5000)));
  r = wc_req_state(&C);
  CU_ASSERT(r && r->state->last_cmd_seq == 42);
  wc_free(r);
}

static void test_apply_wrench(void) {
  Physd__V1__Envelope *r = wc_req_state(&C);
  CU_ASSERT_FATAL(r != NULL);
  double vx0 = r->state->bodies[BODY_B]->linvel->x;
  wc_free(r);
  Physd__V1__Vec3 f = PHYSD__V1__VEC3__INIT;
  f.x = 100.0;
  Physd__V1__ApplyWrench w = PHYSD__V1__APPLY_WRENCH__INIT;
  w.body = BODY_B;
  w.force = &f;
  Physd__V1__Envelope env;
  WC_ENV(env, APPLY_WRENCH, apply_wrench, &w);
  CU_ASSERT(wc_take_ack(wc_call(&C, &env, 5000)));
  CU_ASSERT(wc_take_ack(wc_req_step(&C, 1)));
  r = wc_req_state(&C);
  CU_ASSERT(r && r->state->bodies[BODY_B]->linvel->x > vx0 + 0.04); /* F/m dt = 0.048 */
  wc_free(r);

  size_t n;
  double *before = state(&n);
  f.x = NAN;
  CU_ASSERT_EQUAL(wc_take_error(wc_call(&C, &env, 5000)), PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT);
  f.x = INFINITY;
  CU_ASSERT_EQUAL(wc_take_error(wc_call(&C, &env, 5000)), PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT);
  f.x = 1;
  w.body = 1234;
  CU_ASSERT_EQUAL(wc_take_error(wc_call(&C, &env, 5000)), PHYSD__V1__ERROR_CODE__NOT_FOUND);
  w.body = WALL;
  CU_ASSERT_EQUAL(wc_take_error(wc_call(&C, &env, 5000)), PHYSD__V1__ERROR_CODE__INCORRECT_STATE);
  CU_ASSERT(same_state(before, n));
  free(before);
}

/* ---- time --------------------------------------------------------------------------------- */

static void test_step(void) {
  Physd__V1__Envelope *r = wc_req_state(&C);
  uint64_t step0 = r ? r->state->step : 0;
  wc_free(r);
  CU_ASSERT(wc_take_ack(wc_req_step(&C, 10)));
  r = wc_req_state(&C);
  CU_ASSERT_FATAL(r != NULL);
  CU_ASSERT_EQUAL(r->state->step, step0 + 10);
  CU_ASSERT_EQUAL(r->state->sim_time_ns, (step0 + 10) * 2000000ull);
  CU_ASSERT(r->state->wall_mono_ns > 0);
  CU_ASSERT(r->state->flags != NULL);
  wc_free(r);
  /* n = 0 (n unset) is one step, as in StepAndObserve */
  CU_ASSERT(wc_take_ack(wc_req_step(&C, 0)));
  r = wc_req_state(&C);
  CU_ASSERT(r && r->state->step == step0 + 11);
  wc_free(r);
  CU_ASSERT_EQUAL(wc_take_error(wc_req_step(&C, 100001)), PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT);

  /* paused: Step is refused; Resume allows it again */
  CU_ASSERT(wc_take_ack(wc_req_empty(&C, PHYSD__V1__ENVELOPE__MSG_PAUSE)));
  r = wc_req_empty(&C, PHYSD__V1__ENVELOPE__MSG_GET_STATS);
  CU_ASSERT(r && r->stats->clock->paused);
  wc_free(r);
  CU_ASSERT_EQUAL(wc_take_error(wc_req_step(&C, 1)), PHYSD__V1__ERROR_CODE__INCORRECT_STATE);
  CU_ASSERT(wc_take_ack(wc_req_empty(&C, PHYSD__V1__ENVELOPE__MSG_RESUME)));
  CU_ASSERT(wc_take_ack(wc_req_step(&C, 1)));
}

static void test_step_and_observe(void) {
  int32_t ids[] = {BODY_A, BODY_C};
  Physd__V1__Selector sel = PHYSD__V1__SELECTOR__INIT;
  sel.n_bodies = 2;
  sel.bodies = ids;
  sel.contacts = 1;
  sel.stats = 1;
  Physd__V1__SetJointCommand jc = PHYSD__V1__SET_JOINT_COMMAND__INIT;
  jc.seq = 7;
  Physd__V1__Vec3 f = PHYSD__V1__VEC3__INIT;
  f.y = 1.0;
  Physd__V1__ApplyWrench w = PHYSD__V1__APPLY_WRENCH__INIT;
  w.body = BODY_A;
  w.force = &f;
  Physd__V1__ApplyWrench *wp = &w;
  Physd__V1__StepAndObserve so = PHYSD__V1__STEP_AND_OBSERVE__INIT;
  so.command = &jc;
  so.n_wrenches = 1;
  so.wrenches = &wp;
  so.n = 0; /* read as 1 */
  so.selector = &sel;
  Physd__V1__Envelope env;
  WC_ENV(env, STEP_AND_OBSERVE, step_and_observe, &so);
  CU_ASSERT(wc_take_ack(wc_req_step(&C, 300))); /* everything at rest on the ground */
  Physd__V1__Envelope *r0 = wc_req_state(&C);
  Physd__V1__Envelope *r = wc_call(&C, &env, 5000);
  CU_ASSERT_FATAL(r0 && r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_STATE);
  CU_ASSERT_EQUAL(r->state->step, r0->state->step + 1);
  CU_ASSERT_EQUAL(r->state->n_bodies, 2);
  CU_ASSERT(r->state->bodies[0]->id == BODY_A && r->state->bodies[1]->id == BODY_C);
  CU_ASSERT(r->state->stats != NULL);
  CU_ASSERT(r->state->n_contacts > 0); /* the bodies rest on the ground by now */
  CU_ASSERT_EQUAL(r->state->last_cmd_seq, 7);
  CU_ASSERT_EQUAL(r->state->subscription_id, 0);
  wc_free(r);
  wc_free(r0);

  /* errors: a NaN wrench (nothing applied, no step), an unknown body, a joint */
  size_t n;
  double *before = state(&n);
  f.y = NAN;
  CU_ASSERT_EQUAL(wc_take_error(wc_call(&C, &env, 5000)), PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT);
  f.y = 1.0;
  ids[1] = 55;
  CU_ASSERT_EQUAL(wc_take_error(wc_call(&C, &env, 5000)), PHYSD__V1__ERROR_CODE__NOT_FOUND);
  ids[1] = BODY_C;
  w.body = 55;
  CU_ASSERT_EQUAL(wc_take_error(wc_call(&C, &env, 5000)), PHYSD__V1__ERROR_CODE__NOT_FOUND);
  w.body = BODY_A;
  int32_t j[] = {3};
  jc.n_joint_ids = 1;
  jc.joint_ids = j;
  CU_ASSERT_EQUAL(wc_take_error(wc_call(&C, &env, 5000)), PHYSD__V1__ERROR_CODE__NOT_FOUND);
  jc.n_joint_ids = 0;
  so.n = 1000000;
  CU_ASSERT_EQUAL(wc_take_error(wc_call(&C, &env, 5000)), PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT);
  CU_ASSERT(same_state(before, n));
  free(before);
}

static void test_modes(void) {
  /* bad arguments */
  CU_ASSERT_EQUAL(wc_take_error(wc_req_set_mode(&C, 9, 0, 0, 0)), PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT);
  CU_ASSERT_EQUAL(wc_take_error(wc_req_set_mode(&C, 2, NAN, 0, 0)), PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT);
  CU_ASSERT_EQUAL(wc_take_error(wc_req_set_mode(&C, 2, -1, 0, 0)), PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT);
  CU_ASSERT_EQUAL(wc_take_error(wc_req_set_mode(&C, 1, 0, 0, 5)), PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT);
  Physd__V1__SetRealTimeFactor f = PHYSD__V1__SET_REAL_TIME_FACTOR__INIT;
  Physd__V1__Envelope env;
  WC_ENV(env, SET_REAL_TIME_FACTOR, set_real_time_factor, &f);
  double bad[] = {0.0, -1.0, NAN, INFINITY, 1e9};
  for (int i = 0; i < 5; i++) {
    f.factor = bad[i];
    CU_ASSERT_EQUAL(wc_take_error(wc_call(&C, &env, 5000)), PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT);
  }
  f.factor = 2.0;
  CU_ASSERT(wc_take_ack(wc_call(&C, &env, 5000)));

  /* real time: the world runs on its own and Step is refused */
  CU_ASSERT(wc_take_ack(wc_req_set_mode(&C, PHYSD__V1__MODE__MODE_REALTIME, 0, 0, 0)));
  Physd__V1__Envelope *r = wc_req_empty(&C, PHYSD__V1__ENVELOPE__MSG_GET_STATS);
  CU_ASSERT(r && r->stats->clock->mode == PHYSD__V1__MODE__MODE_REALTIME &&
            r->stats->clock->real_time_factor == 2.0);
  uint64_t s0 = r ? r->stats->clock->step : 0;
  wc_free(r);
  usleep(200000);
  CU_ASSERT_EQUAL(wc_take_error(wc_req_step(&C, 1)), PHYSD__V1__ERROR_CODE__INCORRECT_STATE);
  r = wc_req_empty(&C, PHYSD__V1__ENVELOPE__MSG_GET_STATS);
  CU_ASSERT(r && r->stats->clock->step > s0 + 20);
  wc_free(r);
  /* max speed, then back to lock-step: the world stops */
  CU_ASSERT(wc_take_ack(wc_req_set_mode(&C, PHYSD__V1__MODE__MODE_MAX_SPEED, 0, 0, 0)));
  usleep(100000);
  CU_ASSERT(wc_take_ack(wc_req_set_mode(&C, PHYSD__V1__MODE__MODE_LOCKSTEP, 1.0, 0, 0)));
  r = wc_req_state(&C);
  uint64_t s1 = r ? r->state->step : 0;
  wc_free(r);
  usleep(100000);
  r = wc_req_state(&C);
  CU_ASSERT(r && r->state->step == s1);
  wc_free(r);
}

static void test_get_state_selector(void) {
  int32_t ids[] = {BODY_C, 99};
  Physd__V1__Selector sel = PHYSD__V1__SELECTOR__INIT;
  sel.n_bodies = 1;
  sel.bodies = ids;
  Physd__V1__GetState g = PHYSD__V1__GET_STATE__INIT;
  g.selector = &sel;
  Physd__V1__Envelope env;
  WC_ENV(env, GET_STATE, get_state, &g);
  Physd__V1__Envelope *r = wc_call(&C, &env, 5000);
  CU_ASSERT(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_STATE && r->state->n_bodies == 1 &&
            r->state->bodies[0]->id == BODY_C && r->state->n_contacts == 0 && !r->state->stats);
  wc_free(r);
  sel.n_bodies = 2;
  CU_ASSERT_EQUAL(wc_take_error(wc_call(&C, &env, 5000)), PHYSD__V1__ERROR_CODE__NOT_FOUND);
  /* no selector: every body */
  g.selector = NULL;
  r = wc_call(&C, &env, 5000);
  CU_ASSERT(r && r->state->n_bodies == 4);
  wc_free(r);
}

static void test_subscribe(void) {
  Physd__V1__Selector sel = PHYSD__V1__SELECTOR__INIT;
  sel.all_bodies = 1;
  Physd__V1__Subscribe sub = PHYSD__V1__SUBSCRIBE__INIT;
  sub.selector = &sel;
  sub.period_ns = 1000; /* below the minimum */
  Physd__V1__Envelope env;
  WC_ENV(env, SUBSCRIBE, subscribe, &sub);
  CU_ASSERT_EQUAL(wc_take_error(wc_call(&C, &env, 5000)), PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT);
  int32_t bad[] = {42};
  sel.n_bodies = 1;
  sel.bodies = bad;
  sub.period_ns = 0;
  CU_ASSERT_EQUAL(wc_take_error(wc_call(&C, &env, 5000)), PHYSD__V1__ERROR_CODE__NOT_FOUND);
  sel.n_bodies = 0;
  sub.period_ns = 10000000; /* 10 ms of sim time = every 5 steps */
  Physd__V1__Envelope *r = wc_call(&C, &env, 5000);
  CU_ASSERT_FATAL(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_SUBSCRIBED);
  uint32_t id = r->subscribed->subscription_id;
  wc_free(r);

  /* 50 steps one at a time: 10 frames, none dropped */
  for (int i = 0; i < 50; i++) wc_free(wc_req_step(&C, 1));
  int frames = 0;
  uint64_t dropped = 0;
  while ((r = wc_recv(&C, 300)) != NULL) {
    if (r->req_id == 0 && r->msg_case == PHYSD__V1__ENVELOPE__MSG_STATE &&
        r->state->subscription_id == id) {
      frames++;
      dropped = r->state->dropped;
      CU_ASSERT(r->state->sim_time_ns % 10000000ull == 0);
      CU_ASSERT_EQUAL(r->state->n_bodies, 4);
    }
    wc_free(r);
  }
  frames += (int)C.stream_frames;
  C.stream_frames = 0;
  CU_ASSERT_EQUAL(frames, 10);
  CU_ASSERT_EQUAL(dropped, 0);

  /* the subscription limit */
  Physd__V1__Envelope *subs[16];
  int ok = 0, exhausted = 0;
  for (int i = 0; i < 16; i++) {
    subs[i] = wc_call(&C, &env, 5000);
    ok += subs[i] && subs[i]->msg_case == PHYSD__V1__ENVELOPE__MSG_SUBSCRIBED;
    exhausted += wc_error_code(subs[i]) == PHYSD__V1__ERROR_CODE__RESOURCE_EXHAUSTED;
  }
  CU_ASSERT_EQUAL(ok, 15);
  CU_ASSERT_EQUAL(exhausted, 1);
  r = wc_req_empty(&C, PHYSD__V1__ENVELOPE__MSG_GET_STATS);
  CU_ASSERT(r && r->stats->subscriptions == 16 && r->stats->clients == 1);
  wc_free(r);

  /* unsubscribe all; an unknown id is NOT_FOUND */
  Physd__V1__Unsubscribe un = PHYSD__V1__UNSUBSCRIBE__INIT;
  Physd__V1__Envelope uenv;
  WC_ENV(uenv, UNSUBSCRIBE, unsubscribe, &un);
  un.subscription_id = id;
  CU_ASSERT(wc_take_ack(wc_call(&C, &uenv, 5000)));
  CU_ASSERT_EQUAL(wc_take_error(wc_call(&C, &uenv, 5000)), PHYSD__V1__ERROR_CODE__NOT_FOUND);
  for (int i = 0; i < 16; i++) {
    if (subs[i] && subs[i]->msg_case == PHYSD__V1__ENVELOPE__MSG_SUBSCRIBED) {
      un.subscription_id = subs[i]->subscribed->subscription_id;
      CU_ASSERT(wc_take_ack(wc_call(&C, &uenv, 5000)));
    }
    wc_free(subs[i]);
  }
  r = wc_req_empty(&C, PHYSD__V1__ENVELOPE__MSG_GET_STATS);
  CU_ASSERT(r && r->stats->subscriptions == 0);
  wc_free(r);
}

/* ---- state -------------------------------------------------------------------------------- */

static void test_reset_snapshot_restore(void) {
  Physd__V1__Envelope *r = wc_req_load_data(&C, TEST_SCENE);
  wc_free(r);
  size_t n0;
  double *loaded = state(&n0);
  CU_ASSERT(wc_take_ack(wc_req_step(&C, 200)));
  CU_ASSERT(!same_state(loaded, n0));
  CU_ASSERT(wc_take_ack(wc_req_empty(&C, PHYSD__V1__ENVELOPE__MSG_RESET)));
  CU_ASSERT(same_state(loaded, n0));
  r = wc_req_state(&C);
  CU_ASSERT(r && r->state->step == 0 && r->state->sim_time_ns == 0);
  wc_free(r);

  /* restore: garbage, and a snapshot of another model */
  Physd__V1__Envelope *snap = wc_req_empty(&C, PHYSD__V1__ENVELOPE__MSG_SNAPSHOT);
  CU_ASSERT_FATAL(snap && snap->msg_case == PHYSD__V1__ENVELOPE__MSG_SNAPSHOT_DATA);
  CU_ASSERT(snap->snapshot_data->data.len > 48);
  Physd__V1__Restore rs = PHYSD__V1__RESTORE__INIT;
  uint8_t junk[100];
  memset(junk, 0xab, sizeof junk);
  rs.data.data = junk;
  rs.data.len = sizeof junk;
  Physd__V1__Envelope env;
  WC_ENV(env, RESTORE, restore, &rs);
  CU_ASSERT_EQUAL(wc_take_error(wc_call(&C, &env, 5000)), PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT);
  rs.data.len = 0;
  CU_ASSERT_EQUAL(wc_take_error(wc_call(&C, &env, 5000)), PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT);
  rs.data = snap->snapshot_data->data;
  rs.data.len -= 8; /* truncated */
  CU_ASSERT_EQUAL(wc_take_error(wc_call(&C, &env, 5000)), PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT);
  const double s1[] = {0.1};
  wc_free(add_body("extra", 3.0, 0, 0, 1, s1));
  rs.data = snap->snapshot_data->data;
  r = wc_call(&C, &env, 5000);
  CU_ASSERT_EQUAL(wc_error_code(r), PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT);
  CU_ASSERT(r && strstr(r->error->message, "another model") != NULL);
  wc_free(r);
  /* reset drops the added body; the snapshot fits again */
  CU_ASSERT(wc_take_ack(wc_req_empty(&C, PHYSD__V1__ENVELOPE__MSG_RESET)));
  CU_ASSERT(wc_take_ack(wc_req_step(&C, 30)));
  CU_ASSERT(wc_take_ack(wc_call(&C, &env, 5000)));
  CU_ASSERT(same_state(loaded, n0));
  wc_free(snap);
  free(loaded);
}

/* 64-bit FNV-1a (the engine snapshot's checksum, docs/engine.md) */
static uint64_t fnv1a(uint64_t h, const uint8_t *p, size_t n) {
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

/* a Snapshot's bytes (malloc'd, *n long), or NULL */
static uint8_t *snapshot_bytes(size_t *n) {
  Physd__V1__Envelope *r = wc_req_empty(&C, PHYSD__V1__ENVELOPE__MSG_SNAPSHOT);
  uint8_t *b = NULL;
  if (r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_SNAPSHOT_DATA) {
    *n = r->snapshot_data->data.len;
    b = malloc(*n);
    if (b) memcpy(b, r->snapshot_data->data.data, *n);
  }
  wc_free(r);
  return b;
}

/* Restore of `data`: the error code (0 for an Ack), the message copied to msg */
static int restore(const uint8_t *data, size_t len, char *msg, size_t msg_size) {
  Physd__V1__Restore rs = PHYSD__V1__RESTORE__INIT;
  rs.data.data = (uint8_t *)data;
  rs.data.len = len;
  Physd__V1__Envelope env;
  WC_ENV(env, RESTORE, restore, &rs);
  Physd__V1__Envelope *r = wc_call(&C, &env, 5000);
  int code = r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_ACK ? 0 : wc_error_code(r);
  if (msg) snprintf(msg, msg_size, "%s", r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_ERROR ?
                    r->error->message : "");
  wc_free(r);
  return code;
}

/* step and time of GetState */
static void step_time(uint64_t *step, uint64_t *t_ns) {
  Physd__V1__Envelope *r = wc_req_state(&C);
  *step = r && r->state ? r->state->step : 0;
  *t_ns = r && r->state ? r->state->sim_time_ns : 0;
  wc_free(r);
}

/* issue 11 item 2: every 8-byte word of a snapshot written over with NaN is refused with
 * INVALID_ARGUMENT, and so is one whose engine checksum was recomputed over a NaN (the value
 * checks); the world is unchanged (its snapshot bytes, which are what the engine's state hash
 * covers, its state, step and time) and steps on */
static void test_restore_corrupt(void) {
  wc_free(wc_req_load_data(&C, TEST_SCENE));
  CU_ASSERT(wc_take_ack(wc_req_step(&C, 120))); /* the bodies are down: contacts, warm starts */
  size_t n = 0, n1;
  uint8_t *snap = snapshot_bytes(&n);
  CU_ASSERT_FATAL(snap != NULL && n > 96);
  CU_ASSERT(wc_take_ack(wc_req_step(&C, 40))); /* the world moves on from the snapshot */
  size_t nst;
  double *before = state(&nst);
  size_t nref = 0;
  uint8_t *ref = snapshot_bytes(&nref); /* the world as it is now (other contacts: other size) */
  CU_ASSERT_FATAL(ref != NULL);
  uint64_t step0, t0, step1, t1;
  step_time(&step0, &t0);

  uint8_t *bad = malloc(n);
  CU_ASSERT_FATAL(bad != NULL);
  const double nan = NAN;
  int words = 0, invalid = 0;
  char msg[512];
  for (size_t at = 0; at + 8 <= n; at += 8) {
    memcpy(bad, snap, n);
    memcpy(bad + at, &nan, 8);
    int code = restore(bad, n, msg, sizeof msg);
    words++;
    invalid += code == PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT;
    if (code != PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT)
      printf("\n    NaN at byte %zu: code %d (%s)\n", at, code, msg);
  }
  printf("\n    snapshot %zu bytes: %d NaN words, %d refused with INVALID_ARGUMENT\n", n, words,
         invalid);
  CU_ASSERT_EQUAL(invalid, words);

  /* a NaN behind a valid checksum: the daemon header is 48 bytes, then the engine snapshot
   * (its header 48 bytes, checksum at 40 over bytes 0..39 and the payload; the payload starts
   * with body 0's position) */
  memcpy(bad, snap, n);
  memcpy(bad + 96, &nan, 8);
  uint64_t h = fnv1a(1469598103934665603ull, bad + 48, 40);
  h = fnv1a(h, bad + 96, n - 96);
  memcpy(bad + 48 + 40, &h, 8);
  CU_ASSERT_EQUAL(restore(bad, n, msg, sizeof msg), PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT);
  CU_ASSERT(strstr(msg, "body.x") != NULL && strstr(msg, "not finite") != NULL);
  printf("    resealed NaN: %s\n", msg);
  memcpy(bad, snap, n);
  bad[100] ^= 0x10;
  CU_ASSERT_EQUAL(restore(bad, n, msg, sizeof msg), PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT);
  CU_ASSERT(strstr(msg, "checksum mismatch") != NULL);

  /* nothing changed */
  uint8_t *after = snapshot_bytes(&n1);
  CU_ASSERT(after != NULL && n1 == nref && memcmp(after, ref, nref) == 0);
  CU_ASSERT(same_state(before, nst));
  step_time(&step1, &t1);
  CU_ASSERT_EQUAL(step1, step0);
  CU_ASSERT_EQUAL(t1, t0);
  /* a later Step works, and the clean snapshot still restores */
  CU_ASSERT(wc_take_ack(wc_req_step(&C, 10)));
  step_time(&step1, &t1);
  CU_ASSERT_EQUAL(step1, step0 + 10);
  CU_ASSERT_EQUAL(restore(snap, n, NULL, 0), 0);
  free(after);
  free(bad);
  free(ref);
  free(before);
  free(snap);
}

static void test_stats(void) {
  CU_ASSERT(wc_take_ack(wc_req_step(&C, 100)));
  Physd__V1__Envelope *r = wc_req_empty(&C, PHYSD__V1__ENVELOPE__MSG_GET_STATS);
  CU_ASSERT_FATAL(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_STATS);
  const Physd__V1__Stats *s = r->stats;
  CU_ASSERT(s->steps >= 100);
  CU_ASSERT(s->step_ms_p50 > 0.0 && s->step_ms_p50 <= s->step_ms_p99 && s->step_ms_p99 <= s->step_ms_max);
  CU_ASSERT(s->clock && s->clock->mode == PHYSD__V1__MODE__MODE_LOCKSTEP);
  CU_ASSERT(s->last_step != NULL);
  CU_ASSERT_EQUAL(s->clients, 1);
  CU_ASSERT(s->overruns <= s->steps); /* the real-time part of test_modes may overrun on a busy machine */
  wc_free(r);
}

static void test_barrier_requests(void) {
  CU_ASSERT_EQUAL(wc_take_error(wc_req_empty(&C, PHYSD__V1__ENVELOPE__MSG_LEAVE_BARRIER)),
                  PHYSD__V1__ERROR_CODE__INCORRECT_STATE);
  Physd__V1__JoinBarrier j = PHYSD__V1__JOIN_BARRIER__INIT;
  Physd__V1__Envelope env;
  WC_ENV(env, JOIN_BARRIER, join_barrier, &j);
  CU_ASSERT(wc_take_ack(wc_call(&C, &env, 5000)));
  CU_ASSERT(wc_take_ack(wc_req_empty(&C, PHYSD__V1__ENVELOPE__MSG_LEAVE_BARRIER)));
}

/* envelope-level errors: req_id 0, a server message, an empty envelope */
static void test_envelope_errors(void) {
  Physd__V1__Ack ack = PHYSD__V1__ACK__INIT;
  Physd__V1__Envelope env;
  WC_ENV(env, ACK, ack, &ack);
  CU_ASSERT_EQUAL(wc_take_error(wc_call(&C, &env, 5000)), PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT);
  physd__v1__envelope__init(&env);
  CU_ASSERT_EQUAL(wc_take_error(wc_call(&C, &env, 5000)), PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT);
  Physd__V1__Step st = PHYSD__V1__STEP__INIT;
  st.n = 1;
  WC_ENV(env, STEP, step, &st);
  env.req_id = 0;
  CU_ASSERT(wc_send_env(&C, &env) == 0);
  Physd__V1__Envelope *r = wc_recv(&C, 5000);
  CU_ASSERT(r && r->req_id == 0 && wc_error_code(r) == PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT);
  wc_free(r);
  CU_ASSERT(wc_take_ack(wc_req_step(&C, 1))); /* still served */
}

/* a full command queue answers RESOURCE_EXHAUSTED; replies stay in request order */
static void test_queue_full(void) {
  wc_daemon d;
  const char *args[] = {"--command-queue", "1", NULL};
  CU_ASSERT_FATAL(wc_daemon_start(&d, args) == 0);
  wc_conn c;
  CU_ASSERT_FATAL(wc_open(&c, &d) == 0);
  wc_free(wc_req_load_data(&c, TEST_SCENE));
  /* a long step, then 20 pipelined requests */
  Physd__V1__Step st = PHYSD__V1__STEP__INIT;
  st.n = 20000;
  Physd__V1__Envelope env;
  WC_ENV(env, STEP, step, &st);
  env.req_id = 100;
  CU_ASSERT(wc_send_env(&c, &env) == 0);
  Physd__V1__GetStats gs = PHYSD__V1__GET_STATS__INIT;
  WC_ENV(env, GET_STATS, get_stats, &gs);
  for (int i = 0; i < 20; i++) {
    env.req_id = 101 + (uint64_t)i;
    CU_ASSERT(wc_send_env(&c, &env) == 0);
  }
  int exhausted = 0, in_order = 1;
  uint64_t expect = 100;
  for (int i = 0; i < 21; i++) {
    Physd__V1__Envelope *r = wc_recv(&c, 60000);
    CU_ASSERT_FATAL(r != NULL);
    in_order &= r->req_id == expect++;
    exhausted += wc_error_code(r) == PHYSD__V1__ERROR_CODE__RESOURCE_EXHAUSTED;
    if (i == 0) CU_ASSERT(r->msg_case == PHYSD__V1__ENVELOPE__MSG_ACK);
    if (i == 0 && r->msg_case == PHYSD__V1__ENVELOPE__MSG_ERROR) printf("\n    step: %s\n", r->error->message);
    wc_free(r);
  }
  CU_ASSERT(in_order);
  CU_ASSERT(exhausted >= 1);
  printf("\n    queue 1: %d of 20 pipelined requests got RESOURCE_EXHAUSTED\n", exhausted);
  wc_close(&c);
  CU_ASSERT_EQUAL(wc_daemon_stop(&d), 0);
}

int register_tests(void) {
  CU_pSuite s = CU_add_suite("server_requests", setup, teardown);
  if (!s) return -1;
  if (!CU_add_test(s, "load_world", test_load_world) ||
      !CU_add_test(s, "model_info", test_model_info) ||
      !CU_add_test(s, "add_remove_body", test_add_remove_body) ||
      !CU_add_test(s, "set_body_state", test_set_body_state) ||
      !CU_add_test(s, "set_body_state_mocap", test_set_body_state_mocap) ||
      !CU_add_test(s, "joint_command", test_joint_command) ||
      !CU_add_test(s, "apply_wrench", test_apply_wrench) ||
      !CU_add_test(s, "step", test_step) ||
      !CU_add_test(s, "step_and_observe", test_step_and_observe) ||
      !CU_add_test(s, "modes", test_modes) ||
      !CU_add_test(s, "get_state_selector", test_get_state_selector) ||
      !CU_add_test(s, "subscribe", test_subscribe) ||
      !CU_add_test(s, "reset_snapshot_restore", test_reset_snapshot_restore) ||
      !CU_add_test(s, "restore_corrupt", test_restore_corrupt) ||
      !CU_add_test(s, "stats", test_stats) ||
      !CU_add_test(s, "barrier_requests", test_barrier_requests) ||
      !CU_add_test(s, "envelope_errors", test_envelope_errors) ||
      !CU_add_test(s, "queue_full", test_queue_full))
    return -1;
  return 0;
}
