/* test_batch.c - protocol 1.9's batch of worlds (issue 16) against the real physd:
 *  - bit for bit: every world of a batch stepped through StepBatch (per-world controls, a
 *    subset of the worlds at some rounds, resets to the loaded state and to a keyframe in the
 *    same request) gives exactly the joint positions, velocities, actuator forces and sensor
 *    values (a body's position, a joint's velocity, a body's orientation) of a lone
 *    world driven the 1.8 way (SetActuatorControl in StepAndObserve, Reset, ResetToKeyframe),
 *    for batch sizes 1 and 8 and with 1 and 2 engine threads;
 *  - every refusal names the field and changes no world: an index out of range or twice, a
 *    wrong ctrl length, NaN, a reset out of range or twice, a wrong reset_keyframe count, an
 *    unknown keyframe, n over the limit, a frame over max_frame_bytes, a world_count over
 *    Limits.max_worlds or outside lock-step mode; requests about one world are refused while a
 *    batch is loaded (GetState, Step, StepAndObserve, Snapshot, SetMode, Subscribe), while
 *    GetModelInfo, Reset and a world_count 1 load are answered. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cunit_main.h"
#include "wire_client.h"

/* a two-hinge arm with motors over a free box with a hinged flap that lands on the floor
 * (contacts and warm starts); JointInfo order h1, h2, the box's free joint, h3: nq 2 + 7 + 1,
 * nv 2 + 6 + 1; two actuators; keyframe "bent" */
static const char ARM_BOX[] =
    "<mujoco model=\"armbox\">\n"
    "  <option timestep=\"0.002\"/>\n"
    "  <worldbody>\n"
    "    <geom type=\"plane\" size=\"5 5 0.1\"/>\n"
    "    <body name=\"upper\" pos=\"0 0 1\"><joint name=\"h1\" type=\"hinge\" axis=\"0 1 0\"/>\n"
    "      <geom type=\"capsule\" fromto=\"0 0 0 0.4 0 0\" size=\"0.04\"/>\n"
    "      <body name=\"fore\" pos=\"0.4 0 0\"><joint name=\"h2\" type=\"hinge\" axis=\"0 1 0\"/>\n"
    "        <geom type=\"capsule\" fromto=\"0 0 0 0.3 0 0\" size=\"0.03\"/></body></body>\n"
    "    <body name=\"box\" pos=\"0.3 0 0.15\" euler=\"5 10 0\"><freejoint/>\n"
    "      <geom type=\"box\" size=\"0.1 0.1 0.1\"/>\n"
    "      <body name=\"flap\" pos=\"0.1 0 0.1\"><joint name=\"h3\" type=\"hinge\" axis=\"0 1 0\"/>\n"
    "        <geom type=\"box\" size=\"0.08 0.08 0.01\" pos=\"0.08 0 0\"/></body></body>\n"
    "  </worldbody>\n"
    "  <actuator><motor joint=\"h1\" gear=\"20\"/><motor joint=\"h2\" gear=\"10\"/></actuator>\n"
    "  <sensor><framepos objtype=\"body\" objname=\"box\"/><jointvel joint=\"h2\"/>\n"
    "    <framequat objtype=\"body\" objname=\"flap\"/></sensor>\n"
    "  <keyframe><key name=\"bent\" qpos=\"0.5 -0.8 0.3 0 0.3 1 0 0 0 0.4\"/></keyframe>\n"
    "</mujoco>\n";

enum { NU = 2, ROUNDS = 30, STEPS = 2, MAXW = 8 };

/* ---- the scenario: who is reset, stepped and driven at round t --------------------------- */

/* reset of world w at round t: 0 none, 1 the loaded state, 2 keyframe "bent" */
static int reset_of(int t, int w) {
  if (t == 12 && w % 3 == 1) return 1;
  if (t == 20 && w % 4 == 2) return 2;
  if (t == 25 && w == 0) return 2;
  return 0;
}
static int stepped(int t, int w) { return t % 7 == 3 ? w % 2 == 0 : 1; }
static double ctrl_of(int t, int w, int a) { return 0.8 * sin(0.3 * t + 0.7 * w + a); }

/* what is compared: per world, one row per round it stepped (qpos, qvel, actuator forces) */
enum { NQ = 10, NV = 9, NS = 3 + 1 + 4, ROW = NQ + NV + NU + NS };
typedef struct traj {
  double rows[ROUNDS][ROW];
  int n;
} traj;

/* ---- requests ------------------------------------------------------------------------------ */

static Physd__V1__Envelope *load(wc_conn *c, const char *xml, uint32_t count) {
  Physd__V1__LoadWorld m = PHYSD__V1__LOAD_WORLD__INIT;
  m.source_case = PHYSD__V1__LOAD_WORLD__SOURCE_DATA;
  m.data.data = (uint8_t *)xml;
  m.data.len = strlen(xml);
  m.world_count = count;
  Physd__V1__Envelope env;
  WC_ENV(env, LOAD_WORLD, load_world, &m);
  return wc_call(c, &env, 20000);
}

/* a StepBatch; arrays nullable with count 0 */
typedef struct sb_args {
  int32_t *worlds;
  size_t nworlds;
  double *ctrl;
  size_t nctrl;
  int32_t *reset;
  size_t nreset;
  char **kf;
  size_t nkf;
  uint32_t n;
  int no_step, observe;
} sb_args;

static Physd__V1__Envelope *step_batch(wc_conn *c, const sb_args *a) {
  Physd__V1__StepBatch m = PHYSD__V1__STEP_BATCH__INIT;
  Physd__V1__BatchSelector sel = PHYSD__V1__BATCH_SELECTOR__INIT;
  sel.qpos = sel.qvel = sel.actuator_force = sel.sensors = 1;
  m.n_worlds = a->nworlds;
  m.worlds = a->worlds;
  m.n_ctrl = a->nctrl;
  m.ctrl = a->ctrl;
  m.n_reset = a->nreset;
  m.reset = a->reset;
  m.n_reset_keyframe = a->nkf;
  m.reset_keyframe = a->kf;
  m.n = a->n;
  m.no_step = a->no_step;
  if (a->observe) m.selector = &sel;
  Physd__V1__Envelope env;
  WC_ENV(env, STEP_BATCH, step_batch, &m);
  return wc_call(c, &env, 20000);
}

static int is_frame(const Physd__V1__Envelope *r) {
  return r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_BATCH_FRAME;
}

/* ---- the scenario run both ways ------------------------------------------------------------ */

/* through StepBatch on a loaded batch of nw worlds: trajectories into tr[0 .. nw-1] */
static int run_batch(wc_conn *c, int nw, traj *tr) {
  char *bent = "bent", *loaded = "";
  for (int w = 0; w < nw; w++) tr[w].n = 0;
  for (int t = 0; t < ROUNDS; t++) {
    int32_t worlds[MAXW], reset[MAXW];
    char *kf[MAXW];
    double ctrl[MAXW * NU];
    sb_args a = {.worlds = worlds, .ctrl = ctrl, .reset = reset, .kf = kf, .n = STEPS,
                 .observe = 1};
    for (int w = 0; w < nw; w++) {
      if (reset_of(t, w)) {
        kf[a.nreset] = reset_of(t, w) == 2 ? bent : loaded;
        reset[a.nreset++] = w;
      }
      if (!stepped(t, w)) continue;
      for (int u = 0; u < NU; u++) ctrl[a.nworlds * NU + (size_t)u] = ctrl_of(t, w, u);
      worlds[a.nworlds++] = w;
    }
    a.nctrl = a.nworlds * NU;
    a.nkf = a.nreset;
    Physd__V1__Envelope *r = step_batch(c, &a);
    if (!is_frame(r)) {
      fprintf(stderr, "round %d: no BatchFrame (error %d: %s)\n", t, wc_error_code(r),
              r && r->error ? r->error->message : "");
      wc_free(r);
      return -1;
    }
    const Physd__V1__BatchFrame *f = r->batch_frame;
    int ok = f->n_worlds == a.nworlds && f->nq == NQ && f->nv == NV &&
             f->n_qpos == NQ * a.nworlds && f->n_qvel == NV * a.nworlds &&
             f->n_actuator_force == NU * a.nworlds && f->n_sensor_values == NS * a.nworlds;
    for (size_t i = 0; ok && i < a.nworlds; i++) {
      traj *x = &tr[f->worlds[i]];
      ok = f->worlds[i] == worlds[i] && f->status[i] == 0;
      memcpy(x->rows[x->n], f->qpos + NQ * i, NQ * sizeof(double));
      memcpy(x->rows[x->n] + NQ, f->qvel + NV * i, NV * sizeof(double));
      memcpy(x->rows[x->n] + NQ + NV, f->actuator_force + NU * i, NU * sizeof(double));
      memcpy(x->rows[x->n] + NQ + NV + NU, f->sensor_values + NS * i, NS * sizeof(double));
      x->n++;
    }
    if (!ok)
      fprintf(stderr, "round %d: frame of %zu worlds, nq %u nv %u, %zu forces, status %d\n", t,
              f->n_worlds, f->nq, f->nv, f->n_actuator_force, f->n_status ? f->status[0] : -1);
    wc_free(r);
    if (!ok) return -1;
  }
  return 0;
}

/* the same world w alone, driven the 1.8 way (the world loaded with world_count 0) */
static int run_lone(wc_conn *c, int w, traj *x) {
  x->n = 0;
  for (int t = 0; t < ROUNDS; t++) {
    Physd__V1__Envelope env, *r;
    if (reset_of(t, w) == 1) {
      if (!wc_take_ack(wc_req_empty(c, PHYSD__V1__ENVELOPE__MSG_RESET))) {
        fprintf(stderr, "round %d: Reset refused\n", t);
        return -1;
      }
    } else if (reset_of(t, w) == 2) {
      Physd__V1__ResetToKeyframe k = PHYSD__V1__RESET_TO_KEYFRAME__INIT;
      k.name = "bent";
      WC_ENV(env, RESET_TO_KEYFRAME, reset_to_keyframe, &k);
      if (!wc_take_ack(wc_call(c, &env, 5000))) return -1;
    }
    if (!stepped(t, w)) continue;
    int32_t ids[NU] = {0, 1};
    double ctrl[NU];
    for (int u = 0; u < NU; u++) ctrl[u] = ctrl_of(t, w, u);
    Physd__V1__SetActuatorControl act = PHYSD__V1__SET_ACTUATOR_CONTROL__INIT;
    act.n_ids = act.n_ctrl = NU;
    act.ids = ids;
    act.ctrl = ctrl;
    Physd__V1__Selector sel = PHYSD__V1__SELECTOR__INIT;
    sel.all_joints = sel.actuators = sel.sensors = 1;
    Physd__V1__StepAndObserve so = PHYSD__V1__STEP_AND_OBSERVE__INIT;
    so.actuators = &act;
    so.n = STEPS;
    so.selector = &sel;
    WC_ENV(env, STEP_AND_OBSERVE, step_and_observe, &so);
    r = wc_call(c, &env, 5000);
    if (!r || r->msg_case != PHYSD__V1__ENVELOPE__MSG_STATE) {
      wc_free(r);
      return -1;
    }
    const Physd__V1__StateFrame *f = r->state;
    size_t q = 0, v = 0;
    for (size_t j = 0; j < f->n_joints; j++) {
      for (size_t i = 0; i < f->joints[j]->n_qpos && q < NQ; i++)
        x->rows[x->n][q++] = f->joints[j]->qpos[i];
      for (size_t i = 0; i < f->joints[j]->n_qvel && v < NV; i++)
        x->rows[x->n][NQ + v++] = f->joints[j]->qvel[i];
    }
    int ok = q == NQ && v == NV && f->n_actuator_force == NU && f->n_sensor_values == NS;
    if (!ok)
      fprintf(stderr, "round %d: %zu joints, %zu + %zu values, %zu forces\n", t, f->n_joints,
              q, v, f->n_actuator_force);
    for (size_t u = 0; ok && u < NU; u++) x->rows[x->n][NQ + NV + u] = f->actuator_force[u];
    for (size_t u = 0; ok && u < NS; u++) x->rows[x->n][NQ + NV + NU + u] = f->sensor_values[u];
    x->n++;
    wc_free(r);
    if (!ok) return -1;
  }
  return 0;
}

static int same_bits(const traj *a, const traj *b) {
  return a->n == b->n && memcmp(a->rows, b->rows, sizeof a->rows[0] * (size_t)a->n) == 0;
}

/* ---- bit-identical worlds ------------------------------------------------------------------ */

static traj Ref[MAXW];  /* the lone worlds, one engine thread */

static void test_lone_reference(void) {
  wc_daemon d;
  wc_conn c;
  const char *args[] = {"--threads", "1", NULL};
  CU_ASSERT_FATAL(wc_suite_start(&d, &c, args, NULL) == 0);
  for (int w = 0; w < MAXW; w++) {
    Physd__V1__Envelope *r = load(&c, ARM_BOX, 0);
    CU_ASSERT(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_WORLD_LOADED &&
              r->world_loaded->world_count == 1);
    wc_free(r);
    CU_ASSERT(run_lone(&c, w, &Ref[w]) == 0);
  }
  /* the box moved, the arm swung: the rows say something */
  CU_ASSERT(Ref[0].n == ROUNDS && Ref[1].n == ROUNDS - 4);
  CU_ASSERT(fabs(Ref[1].rows[Ref[1].n - 1][0]) > 1e-3);
  CU_ASSERT(memcmp(Ref[0].rows[5], Ref[1].rows[5], sizeof Ref[0].rows[5]) != 0);
  CU_ASSERT(wc_suite_stop(&d, &c) == 0);
}

/* a batch of nw worlds on a daemon with `threads`: world for world equal to Ref */
static void batch_equals_lone(const char *threads, int nw) {
  wc_daemon d;
  wc_conn c;
  const char *args[] = {"--threads", threads, NULL};
  CU_ASSERT_FATAL(wc_suite_start(&d, &c, args, NULL) == 0);
  Physd__V1__Envelope *r = load(&c, ARM_BOX, (uint32_t)nw);
  CU_ASSERT(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_WORLD_LOADED &&
            r->world_loaded->world_count == (uint32_t)nw);
  wc_free(r);
  static traj got[MAXW];
  CU_ASSERT(run_batch(&c, nw, got) == 0);
  for (int w = 0; w < nw; w++) {
    if (!same_bits(&got[w], &Ref[w]))
      fprintf(stderr, "threads %s, batch %d: world %d differs from the lone world\n", threads,
              nw, w);
    CU_ASSERT(same_bits(&got[w], &Ref[w]));
  }
  CU_ASSERT(wc_suite_stop(&d, &c) == 0);
}

static void test_batch1_threads1(void) { batch_equals_lone("1", 1); }
static void test_batch1_threads2(void) { batch_equals_lone("2", 1); }
static void test_batch8_threads1(void) { batch_equals_lone("1", 8); }
static void test_batch8_threads2(void) { batch_equals_lone("2", 8); }

/* ---- errors -------------------------------------------------------------------------------- */

static wc_daemon D;
static wc_conn C;
enum { EW = 4 };

/* every world's step and (with `observe`) qpos bits, taken without a step: what a refused
 * request must not change */
static uint64_t batch_digest(wc_conn *c, int observe) {
  sb_args a = {.no_step = 1, .observe = observe};
  Physd__V1__Envelope *r = step_batch(c, &a);
  uint64_t h = 1469598103934665603ull;
  if (!is_frame(r)) {
    wc_free(r);
    return 0;
  }
  const Physd__V1__BatchFrame *f = r->batch_frame;
  for (size_t i = 0; i < f->n_step; i++) h = (h ^ f->step[i]) * 1099511628211ull;
  for (size_t i = 0; i < f->n_qpos; i++) {
    uint64_t b;
    memcpy(&b, &f->qpos[i], 8);
    h = (h ^ b) * 1099511628211ull;
  }
  wc_free(r);
  return h;
}

/* a refused request: its code, a message naming `field`, and no world changed (qpos compared
 * when the request itself observes nothing) */
static void refused(sb_args *a, int code, const char *field) {
  int observe = !a->observe;
  uint64_t before = batch_digest(&C, observe);
  Physd__V1__Envelope *r = step_batch(&C, a);
  CU_ASSERT_EQUAL(wc_error_code(r), code);
  if (r && r->error && !strstr(r->error->message, field))
    fprintf(stderr, "message \"%s\" does not name %s\n", r->error->message, field);
  CU_ASSERT(r && r->error && strstr(r->error->message, field));
  wc_free(r);
  CU_ASSERT(before != 0 && batch_digest(&C, observe) == before);
}

static void test_errors_step_batch(void) {
  Physd__V1__Envelope *r = load(&C, ARM_BOX, EW);
  CU_ASSERT(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_WORLD_LOADED);
  wc_free(r);
  sb_args step = {.n = 3};
  CU_ASSERT(is_frame(r = step_batch(&C, &step)));
  wc_free(r);
  const int INV = PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT;
  int32_t bad_w[] = {0, EW}, twice[] = {1, 1}, one[] = {1};
  double ctrl3[3] = {0, 0, 0}, ctrl_nan[EW * NU] = {0, NAN};
  char *nokf[] = {"nosuch"}, *two_kf[] = {"", ""};
  sb_args a1 = {.worlds = bad_w, .nworlds = 2};
  refused(&a1, INV, "StepBatch.worlds[1]");
  sb_args a2 = {.worlds = twice, .nworlds = 2};
  refused(&a2, INV, "StepBatch.worlds[1]");
  sb_args a3 = {.ctrl = ctrl3, .nctrl = 3};
  refused(&a3, INV, "StepBatch.ctrl");
  sb_args a4 = {.ctrl = ctrl_nan, .nctrl = EW * NU};
  refused(&a4, INV, "StepBatch.ctrl[1]");
  sb_args a5 = {.reset = bad_w, .nreset = 2};
  refused(&a5, INV, "StepBatch.reset[1]");
  sb_args a6 = {.reset = twice, .nreset = 2};
  refused(&a6, INV, "StepBatch.reset[1]");
  sb_args a7 = {.reset = one, .nreset = 1, .kf = two_kf, .nkf = 2};
  refused(&a7, INV, "StepBatch.reset_keyframe");
  sb_args a8 = {.reset = one, .nreset = 1, .kf = nokf, .nkf = 1};
  refused(&a8, PHYSD__V1__ERROR_CODE__NOT_FOUND, "StepBatch.reset_keyframe[0]");
  sb_args a9 = {.n = 101};
  refused(&a9, INV, "max_steps_per_call");
  /* qpos, qvel and forces of 64 worlds do not fit in 8192 bytes; no selector does */
  r = load(&C, ARM_BOX, 64);
  wc_free(r);
  sb_args a10 = {.observe = 1};
  refused(&a10, PHYSD__V1__ERROR_CODE__RESOURCE_EXHAUSTED, "max_frame_bytes");
  sb_args plain = {0};
  r = step_batch(&C, &plain);
  CU_ASSERT(is_frame(r) && r->batch_frame->n_worlds == 64 && r->batch_frame->step[63] == 1 &&
            r->batch_frame->nq == 0 && r->batch_frame->n_qpos == 0);
  wc_free(r);
}

/* resets in the request: to the loaded state (step 0, the loaded qpos) and to a keyframe */
static void test_resets(void) {
  Physd__V1__Envelope *r = load(&C, ARM_BOX, EW);
  wc_free(r);
  sb_args obs = {.no_step = 1, .observe = 1};
  Physd__V1__Envelope *r0 = step_batch(&C, &obs);
  sb_args run = {.n = 50};
  wc_free(step_batch(&C, &run));
  int32_t rs[] = {2, 0};
  char *kf[] = {"", "bent"};
  sb_args a = {.reset = rs, .nreset = 2, .kf = kf, .nkf = 2, .no_step = 1, .observe = 1};
  r = step_batch(&C, &a);
  CU_ASSERT_FATAL(is_frame(r) && is_frame(r0));
  const Physd__V1__BatchFrame *f = r->batch_frame, *f0 = r0->batch_frame;
  CU_ASSERT(f->step[0] == 0 && f->step[1] == 50 && f->step[2] == 0 && f->step[3] == 50);
  CU_ASSERT(f->sim_time_ns[1] == 100000000ull && f->sim_time_ns[2] == 0);
  /* world 2 as loaded, world 0 at the keyframe, world 1 moved on */
  CU_ASSERT(memcmp(f->qpos + 2 * NQ, f0->qpos + 2 * NQ, NQ * sizeof(double)) == 0);
  CU_ASSERT_DOUBLE_EQUAL(f->qpos[0], 0.5, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(f->qpos[1], -0.8, 1e-12);
  CU_ASSERT(memcmp(f->qpos + NQ, f0->qpos + NQ, NQ * sizeof(double)) != 0);
  wc_free(r);
  wc_free(r0);
  /* Reset: every world as loaded */
  CU_ASSERT(wc_take_ack(wc_req_empty(&C, PHYSD__V1__ENVELOPE__MSG_RESET)));
  r = step_batch(&C, &obs);
  CU_ASSERT(is_frame(r) && r->batch_frame->step[1] == 0 && r->batch_frame->step[3] == 0);
  wc_free(r);
}

/* requests about one world while a batch is loaded; loads refused by the limit and the mode */
static void test_batch_request_rules(void) {
  Physd__V1__Envelope *r = load(&C, ARM_BOX, EW), env;
  wc_free(r);
  const int INC = PHYSD__V1__ERROR_CODE__INCORRECT_STATE;
  r = wc_req_state(&C);
  CU_ASSERT_EQUAL(wc_error_code(r), INC);
  CU_ASSERT(r && r->error && strstr(r->error->message, "GetState") &&
            strstr(r->error->message, "StepBatch"));
  wc_free(r);
  CU_ASSERT_EQUAL(wc_take_error(wc_req_step(&C, 1)), INC);
  CU_ASSERT_EQUAL(wc_take_error(wc_req_empty(&C, PHYSD__V1__ENVELOPE__MSG_SNAPSHOT)), INC);
  CU_ASSERT_EQUAL(wc_take_error(wc_req_set_mode(&C, PHYSD__V1__MODE__MODE_MAX_SPEED, 0, 0, 0)),
                  INC);
  Physd__V1__StepAndObserve so = PHYSD__V1__STEP_AND_OBSERVE__INIT;
  WC_ENV(env, STEP_AND_OBSERVE, step_and_observe, &so);
  CU_ASSERT_EQUAL(wc_take_error(wc_call(&C, &env, 5000)), INC);
  Physd__V1__Subscribe sub = PHYSD__V1__SUBSCRIBE__INIT;
  WC_ENV(env, SUBSCRIBE, subscribe, &sub);
  CU_ASSERT_EQUAL(wc_take_error(wc_call(&C, &env, 5000)), INC);
  r = wc_req_empty(&C, PHYSD__V1__ENVELOPE__MSG_GET_MODEL_INFO);
  CU_ASSERT(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_MODEL_INFO &&
            r->model_info->n_actuators == NU);
  wc_free(r);
  /* over the limit (the daemon's --max-worlds 64): refused, the batch stays */
  uint64_t before = batch_digest(&C, 1);
  r = load(&C, ARM_BOX, 65);
  CU_ASSERT_EQUAL(wc_error_code(r), PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT);
  CU_ASSERT(r && r->error && strstr(r->error->message, "LoadWorld.world_count") &&
            strstr(r->error->message, "max_worlds 64"));
  wc_free(r);
  CU_ASSERT(before != 0 && batch_digest(&C, 1) == before);
  /* a single world again: 1.8 requests work, and a batch needs lock-step mode */
  r = load(&C, ARM_BOX, 1);
  CU_ASSERT(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_WORLD_LOADED &&
            r->world_loaded->world_count == 1);
  wc_free(r);
  CU_ASSERT(wc_take_ack(wc_req_step(&C, 1)));
  CU_ASSERT(wc_take_ack(wc_req_set_mode(&C, PHYSD__V1__MODE__MODE_REALTIME, 1.0, 0, 0)));
  r = load(&C, ARM_BOX, 2);
  CU_ASSERT_EQUAL(wc_error_code(r), INC);
  CU_ASSERT(r && r->error && strstr(r->error->message, "world_count"));
  wc_free(r);
  sb_args a = {0};
  CU_ASSERT_EQUAL(wc_take_error(step_batch(&C, &a)), INC); /* StepBatch is lock-step too */
  CU_ASSERT(wc_take_ack(wc_req_set_mode(&C, PHYSD__V1__MODE__MODE_LOCKSTEP, 0, 0, 0)));
}

static void test_welcome_limit(void) {
  wc_conn c;
  CU_ASSERT_FATAL(wc_connect_unix(&c, D.sock, 1) == 0);
  Physd__V1__Envelope *w = wc_hello(&c, 1, NULL);
  CU_ASSERT(w && w->welcome && w->welcome->minor == 9 && w->welcome->limits->max_worlds == 64);
  wc_free(w);
  wc_close(&c);
}

static const char *const ErrArgs[] = {"--max-worlds", "64", "--max-frame-bytes", "8192",
                                      "--max-steps-per-call", "100", NULL};
static int err_setup(void) { return wc_suite_start(&D, &C, ErrArgs, NULL); }
static int err_teardown(void) { return wc_suite_stop(&D, &C); }

int register_tests(void) {
  CU_pSuite s = CU_add_suite("server_batch", NULL, NULL);
  CU_pSuite e = CU_add_suite("server_batch_errors", err_setup, err_teardown);
  if (!s || !e || !CU_add_test(s, "lone_reference", test_lone_reference) ||
      !CU_add_test(s, "batch1_threads1", test_batch1_threads1) ||
      !CU_add_test(s, "batch1_threads2", test_batch1_threads2) ||
      !CU_add_test(s, "batch8_threads1", test_batch8_threads1) ||
      !CU_add_test(s, "batch8_threads2", test_batch8_threads2) ||
      !CU_add_test(e, "refusals_change_nothing", test_errors_step_batch) ||
      !CU_add_test(e, "resets", test_resets) ||
      !CU_add_test(e, "one_world_requests", test_batch_request_rules) ||
      !CU_add_test(e, "welcome_limit", test_welcome_limit))
    return -1;
  return 0;
}
