/* test_step_failure.c - white-box: a failed step changes no state and says why.
 *
 * A scene with contacts, a connect, a hinge tree with a limit and an actuator, and sensors is
 * stepped; at every step that allocates, every allocation in turn is made to fail (the
 * allocator's failure injection, core/alloc.h). After each failure the step must return an
 * error with a message, the state hash and the snapshot bytes must equal those from before the
 * step, and the steps that follow must give exactly the undisturbed world's states. Also:
 * snapshots carry the sensors' per-step records, and the state table is laid out as the step
 * and the sensors expect. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cunit_main.h"
#include "core/alloc.h"
#include "core/state_table.h"

static const char scene_xml[] =
    "<mujoco model='step_failure'>"
    "  <option timestep='0.005'/>"
    "  <worldbody>"
    "    <geom type='plane' size='5 5 0.1'/>"
    "    <body name='box1' pos='0 0 0.12'><freejoint/>"
    "      <geom type='box' size='0.1 0.1 0.1' mass='1'/><site name='s1'/></body>"
    "    <body name='box2' pos='0.05 0 0.45'><freejoint/>"
    "      <geom type='box' size='0.1 0.1 0.1' mass='1'/></body>"
    "    <body name='ball' pos='0.5 0 0.3'><freejoint/>"
    "      <geom type='sphere' size='0.1' mass='1'/></body>"
    "    <body name='late' pos='-0.6 0 0.8'><freejoint/>"
    "      <geom type='sphere' size='0.08' mass='1'/></body>"
    "    <body name='base' pos='1 0 0.3'>"
    "      <joint name='j1' type='hinge' axis='0 1 0' limited='true' range='-0.3 0.3'/>"
    "      <geom type='capsule' fromto='0 0 0 0.4 0 0' size='0.05' mass='1'/>"
    "      <body name='l2' pos='0.4 0 0'>"
    "        <joint name='j2' type='hinge' axis='0 1 0'/>"
    "        <geom type='capsule' fromto='0 0 0 0.3 0 0' size='0.05' mass='1'/>"
    "        <site name='tip' pos='0.3 0 0'/>"
    "      </body>"
    "    </body>"
    "    <body name='hang' pos='-1 0 1'><freejoint/>"
    "      <geom type='sphere' size='0.05' mass='0.5' contype='0' conaffinity='0'/></body>"
    "  </worldbody>"
    "  <equality><connect body1='hang' anchor='0.2 0 0'/></equality>"
    "  <actuator><position name='servo' joint='j2' kp='20'/></actuator>"
    "  <sensor><touch site='s1'/><accelerometer site='tip'/><force site='tip'/>"
    "    <torque site='tip'/><jointpos joint='j1'/><actuatorfrc actuator='servo'/></sensor>"
    "</mujoco>";

/* steps covered: the boxes, the ball and the late sphere land at different times, so the
 * contact buffers and the warm-start store grow in several steps */
#define NSTEPS 120
/* steps compared after a failed step was retried */
#define AFTER 3

static phys_world *scene(void) {
  phys_world *w = NULL;
  phys_error err;
  phys_status st = phys_load_mjcf_string(scene_xml, sizeof scene_xml - 1, "step_failure", NULL,
                                         &w, &err);
  if (st) printf("\n  load: %s\n", err.message);
  CU_ASSERT_EQUAL_FATAL(st, PHYS_OK);
  return w;
}

/* a snapshot of the world in a fresh buffer (*n its size) */
static unsigned char *snapshot(const phys_world *w, size_t *n) {
  *n = phys_world_state_size(w);
  unsigned char *buf = malloc(*n);
  CU_ASSERT_EQUAL_FATAL(phys_world_save_state(w, buf, *n, NULL), PHYS_OK);
  return buf;
}

/* every sensor's values, concatenated (at most 64) */
static int read_sensors(const phys_world *w, double *out) {
  int n = 0;
  for (int i = 0; i < phys_world_sensor_count(w); i++) {
    CU_ASSERT_EQUAL(phys_sensor_read(w, i, out + n), PHYS_OK);
    n += phys_sensor_dim(w, i);
  }
  return n;
}

/* the undisturbed run: the state hash after each step, and the allocations each step made */
static void reference(uint64_t *hash, int *allocs) {
  phys_world *w = scene();
  hash[0] = phys_world_state_hash(w);
  for (int s = 0; s < NSTEPS + AFTER; s++) {
    uint64_t a0 = phys_alloc_count();
    CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
    allocs[s] = (int)(phys_alloc_count() - a0);
    hash[s + 1] = phys_world_state_hash(w);
  }
  phys_world_destroy(w);
}

/* step s of a fresh world with its k-th allocation (and all later ones) failing */
static int fail_at(int s, int k, const uint64_t *ref) {
  phys_world *w = scene();
  for (int i = 0; i < s; i++) CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
  size_t n0, n1;
  unsigned char *before = snapshot(w, &n0);
  uint64_t h0 = phys_world_state_hash(w);
  double sens0[64], sens1[64];
  int ns = read_sensors(w, sens0);

  phys__alloc_fail_after(k);
  phys_status st = phys_world_step(w);
  phys__alloc_fail_after(-1);
  int failed = st != PHYS_OK;
  if (failed) {
    /* an error code with a message, and no state changed */
    CU_ASSERT_TRUE(st == PHYS_E_NOMEM);
    CU_ASSERT_TRUE(strlen(phys_world_last_error(w)) > 0);
    CU_ASSERT_EQUAL(phys_world_state_hash(w), h0);
    unsigned char *after = snapshot(w, &n1);
    CU_ASSERT_TRUE(n1 == n0 && memcmp(before, after, n0) == 0);
    CU_ASSERT_EQUAL(read_sensors(w, sens1), ns);
    CU_ASSERT_TRUE(memcmp(sens0, sens1, (size_t)ns * sizeof(double)) == 0);
    free(after);
    if (phys_world_state_hash(w) != h0)
      printf("\n  step %d, allocation %d: state changed (%s)\n", s, k, phys_world_last_error(w));
    /* the retried step continues as if nothing had happened */
    CU_ASSERT_EQUAL(phys_world_step(w), PHYS_OK);
  } else {
    /* the injected failure was survivable (the arena's growth): the step is the normal one */
    CU_ASSERT_EQUAL(st, PHYS_OK);
  }
  CU_ASSERT_EQUAL(phys_world_state_hash(w), ref[s + 1]);
  if (phys_world_state_hash(w) != ref[s + 1])
    printf("\n  step %d, allocation %d (%s): differs from the undisturbed step\n", s, k,
           failed ? "failed" : "survived");
  for (int i = 1; i <= AFTER; i++) {
    CU_ASSERT_EQUAL(phys_world_step(w), PHYS_OK);
    CU_ASSERT_EQUAL(phys_world_state_hash(w), ref[s + 1 + i]);
  }
  free(before);
  phys_world_destroy(w);
  return failed;
}

/* every allocation of every allocating step, in turn */
static void test_fail_every_allocation(void) {
  uint64_t ref[NSTEPS + AFTER + 1];
  int allocs[NSTEPS + AFTER];
  reference(ref, allocs);
  int sites = 0, failures = 0, steps = 0;
  for (int s = 0; s < NSTEPS; s++) {
    if (allocs[s] == 0) continue;
    steps++;
    for (int k = 0; k < allocs[s]; k++) {
      sites++;
      failures += fail_at(s, k, ref);
    }
  }
  printf("\n  %d allocating steps, %d allocations failed in turn, %d steps failed\n", steps, sites,
         failures);
  CU_ASSERT_TRUE(steps >= 2); /* the first step and at least one later growth */
  CU_ASSERT_TRUE(failures > 0);
}

/* a snapshot restores the sensors' readings, including those from the last step's records */
static void test_snapshot_sensor_records(void) {
  phys_world *w = scene();
  for (int i = 0; i < 150; i++) CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
  double s0[64], s1[64];
  int n = read_sensors(w, s0);
  size_t size;
  unsigned char *buf = snapshot(w, &size);
  for (int i = 0; i < 7; i++) CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
  CU_ASSERT_EQUAL_FATAL(phys_world_load_state(w, buf, size), PHYS_OK);
  CU_ASSERT_EQUAL(read_sensors(w, s1), n);
  CU_ASSERT_TRUE(memcmp(s0, s1, (size_t)n * sizeof(double)) == 0);
  free(buf);
  phys_world_destroy(w);
}

/* a snapshot of another format version is refused with a message naming the versions */
static void test_snapshot_version(void) {
  phys_world *w = scene();
  CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
  size_t size;
  unsigned char *buf = snapshot(w, &size);
  uint32_t version;
  memcpy(&version, buf + 4, sizeof version);
  uint32_t old = version - 1;
  memcpy(buf + 4, &old, sizeof old);
  CU_ASSERT_EQUAL(phys_world_load_state(w, buf, size), PHYS_E_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(phys_world_last_error(w), "version"));
  free(buf);
  phys_world_destroy(w);
}

/* the table's layout: body motion first (13 doubles per body in the step's buffer, which the
 * sensors and the position pass index), every field in a set, hash set = snapshot set */
static void test_table_layout(void) {
  int nf = 0;
  const phys_state_field *f = phys__state_table(&nf);
  CU_ASSERT_EQUAL_FATAL(f[0].group, PHYS_SG_BODY_MOTION);
  size_t motion = 0;
  for (int i = 0; i < nf; i++) {
    if (i > 0) CU_ASSERT_TRUE(f[i].group >= f[i - 1].group); /* buffer order */
    /* in snapshots, or one of the last step's outputs that a failed step restores */
    CU_ASSERT_TRUE((f[i].sets & PHYS_STATE_SNAPSHOT) != 0 || f[i].sets == PHYS_STATE_STEP);
    CU_ASSERT_EQUAL(!!(f[i].sets & PHYS_STATE_SNAPSHOT), !!(f[i].sets & PHYS_STATE_HASH));
    if (f[i].group == PHYS_SG_BODY_MOTION) {
      CU_ASSERT_TRUE((f[i].sets & PHYS_STATE_STEP) != 0);
      motion += f[i].size;
    }
  }
  CU_ASSERT_EQUAL(motion, 13 * sizeof(double));
  /* after a step, the saved buffer holds each body's x, q, v, w from before it */
  phys_world *w = scene();
  CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
  double *pre = malloc(13 * sizeof(double) * (size_t)w->nbodies);
  for (int b = 0; b < w->nbodies; b++) {
    memcpy(pre + 13 * b, w->bodies[b].x, 3 * sizeof(double));
    memcpy(pre + 13 * b + 3, w->bodies[b].q, 4 * sizeof(double));
    memcpy(pre + 13 * b + 7, w->bodies[b].v, 3 * sizeof(double));
    memcpy(pre + 13 * b + 10, w->bodies[b].w, 3 * sizeof(double));
  }
  CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
  CU_ASSERT_TRUE(memcmp(pre, w->saved_state, 13 * sizeof(double) * (size_t)w->nbodies) == 0);
  free(pre);
  phys_world_destroy(w);
}

int register_tests(void) {
  CU_pSuite s = CU_add_suite("step_failure", NULL, NULL);
  if (!s) return -1;
  if (!CU_add_test(s, "every allocation failing in turn changes nothing",
                   test_fail_every_allocation) ||
      !CU_add_test(s, "snapshots carry the sensor records", test_snapshot_sensor_records) ||
      !CU_add_test(s, "another snapshot version is refused", test_snapshot_version) ||
      !CU_add_test(s, "state table layout", test_table_layout))
    return -1;
  return 0;
}
