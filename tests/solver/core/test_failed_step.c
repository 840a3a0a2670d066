/* test_failed_step.c - a step that fails on a non-finite or unsteppable state names the body it
 * started from and leaves no trace.
 *
 * The scene: a two-finger gripper (hinge links under a fixed palm, held by position servos,
 * with sensors) whose finger rests against a box, and more boxes on the ground; the boxes come
 * after the gripper in body-id order, so a blame that follows the solve's order would name a
 * finger. One box is given a velocity of 1e300 (finite, but its kinetic energy overflows), or
 * NaN written into its state (white-box: the API refuses NaN), or a spin of 1e154 rad/s about x
 * (its kinetic energy is finite, so the step runs, and the solve goes non-finite; a linear
 * 9e153 m/s did too until SubADMM's Anderson acceleration, which reverts to plain iterations
 * when its residual overflows, kept that solve finite). The step must
 * fail naming that box, and every getter of the last step's outputs (contacts, islands,
 * actuator and command forces, sensors, statistics, the state hash and snapshot) must return
 * bitwise what it returned before. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cunit_main.h"
#include "core/world_internal.h"
#include "gripper_scene.h"

#define SETTLE 200 /* steps before the failure: the boxes rest, finger_r leans on box_b */

/* every output of the last step that the API shows, in flat arrays compared bytewise */
typedef struct outputs {
  int ncontacts, nislands, nbodies, nact, njoint, nsens;
  phys_contact_info contacts[64];
  int island[16];
  double act[8], cmd[8], sens[64];
  phys_step_stats stats;
  uint64_t hash;
  size_t snap_size;
  unsigned char *snap;
} outputs;

static void capture(const phys_world *w, outputs *o) {
  memset(o, 0, sizeof *o); /* padding too: compared with memcmp */
  o->ncontacts = phys_world_contact_count(w);
  CU_ASSERT_FATAL(o->ncontacts <= 64);
  for (int i = 0; i < o->ncontacts; i++)
    CU_ASSERT_EQUAL(phys_world_get_contact(w, i, &o->contacts[i]), PHYS_OK);
  o->nislands = phys_world_island_count(w);
  o->nbodies = phys_world_body_id_bound(w);
  CU_ASSERT_FATAL(o->nbodies <= 16);
  for (int b = 0; b < o->nbodies; b++) o->island[b] = phys_body_island(w, b);
  o->nact = phys_world_actuator_count(w);
  for (int i = 0; i < o->nact; i++)
    CU_ASSERT_EQUAL(phys_actuator_get(w, i, &o->act[i], NULL), PHYS_OK);
  const char *links[] = {"finger_l", "finger_r"};
  for (int i = 0; i < 2; i++)
    CU_ASSERT_EQUAL(phys_link_get_command_force(w, phys_world_find_body(w, links[i]), &o->cmd[i]),
                    PHYS_OK);
  for (int i = 0; i < phys_world_sensor_count(w); i++) {
    CU_ASSERT_EQUAL(phys_sensor_read(w, i, o->sens + o->nsens), PHYS_OK);
    o->nsens += phys_sensor_dim(w, i);
  }
  o->stats = *phys_world_stats(w);
  o->hash = phys_world_state_hash(w);
  o->snap_size = phys_world_state_size(w);
  o->snap = malloc(o->snap_size);
  CU_ASSERT_EQUAL(phys_world_save_state(w, o->snap, o->snap_size, NULL), PHYS_OK);
}

/* 1 when a and b are bitwise equal (the snapshot's bytes compared separately) */
static int same(const outputs *a, const outputs *b) {
  int ok = 1;
  if (a->ncontacts != b->ncontacts || memcmp(a->contacts, b->contacts, sizeof a->contacts)) {
    printf("\n    contacts differ (%d before, %d after)", a->ncontacts, b->ncontacts);
    ok = 0;
  }
  if (a->nislands != b->nislands || memcmp(a->island, b->island, sizeof a->island)) {
    printf("\n    islands differ");
    ok = 0;
  }
  if (memcmp(a->act, b->act, sizeof a->act) || memcmp(a->cmd, b->cmd, sizeof a->cmd)) {
    printf("\n    actuator or command forces differ");
    ok = 0;
  }
  if (a->nsens != b->nsens || memcmp(a->sens, b->sens, sizeof a->sens)) {
    printf("\n    sensors differ");
    ok = 0;
  }
  if (memcmp(&a->stats, &b->stats, sizeof a->stats)) {
    printf("\n    statistics differ");
    ok = 0;
  }
  if (a->hash != b->hash || a->snap_size != b->snap_size ||
      memcmp(a->snap, b->snap, a->snap_size)) {
    printf("\n    state differs");
    ok = 0;
  }
  return ok;
}

static phys_world *settled(void) {
  phys_world *w = NULL;
  phys_error err;
  phys_status st = phys_load_mjcf_string(GRIPPER_SCENE, sizeof GRIPPER_SCENE - 1,
                                         "gripper_boxes", NULL, &w, &err);
  if (st) printf("\n  load: %s\n", err.message);
  CU_ASSERT_EQUAL_FATAL(st, PHYS_OK);
  CU_ASSERT_EQUAL(phys_actuator_set_ctrl(w, 1, -0.1), PHYS_OK); /* finger_r leans on box_b */
  for (int i = 0; i < SETTLE; i++) CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
  return w;
}

/* does box_b touch finger_r in the last step? */
static int finger_touches_box(const phys_world *w) {
  int f = phys_world_find_body(w, "finger_r"), b = phys_world_find_body(w, "box_b");
  for (int i = 0; i < phys_world_contact_count(w); i++) {
    phys_contact_info ci;
    phys_world_get_contact(w, i, &ci);
    if ((ci.body_a == f && ci.body_b == b) || (ci.body_a == b && ci.body_b == f)) return 1;
  }
  return 0;
}

/* box_b's velocity becomes v and its angular velocity spin about x (through the API, or v written
 * in when `raw`); the step fails naming box_b, and nothing of the failed step shows */
static void fail_case(double v, double spin, int raw, const char *what) {
  phys_world *w = settled();
  int box = phys_world_find_body(w, "box_b"), finger = phys_world_find_body(w, "finger_r");
  CU_ASSERT_FATAL(box > finger && finger >= 0);
  CU_ASSERT_TRUE(finger_touches_box(w)); /* the blow-up has a neighbour to spread to */
  if (raw) {
    w->bodies[box].v[0] = v;
  } else {
    double lin[3] = {v, 0.0, -v}, ang[3] = {spin, 0.0, 0.0};
    CU_ASSERT_EQUAL_FATAL(phys_body_set_state(w, box, NULL, NULL, lin, ang), PHYS_OK);
  }
  outputs before, after;
  capture(w, &before);
  phys_status st = phys_world_step(w);
  CU_ASSERT_EQUAL(st, PHYS_E_NUMERIC);
  const char *msg = phys_world_last_error(w);
  char want[64];
  snprintf(want, sizeof want, "body %d ('box_b')", box);
  CU_ASSERT_PTR_NOT_NULL(strstr(msg, want));
  printf("\n    %s: %s", what, msg);
  capture(w, &after);
  CU_ASSERT_TRUE(same(&before, &after));
  CU_ASSERT_EQUAL(phys_world_step_index(w), (uint64_t)SETTLE);
  free(before.snap);
  free(after.snap);
  phys_world_destroy(w);
}

static void test_velocity_1e300(void) { fail_case(1e300, 0.0, 0, "1e300"); }
static void test_velocity_nan(void) { fail_case(NAN, 0.0, 1, "NaN"); }

/* a spin of 1e154 rad/s enters the step (its kinetic energy is finite) and the solve goes
 * non-finite; in this scene it also turns box_a (a lower id, solved before box_b) non-finite,
 * so a blame by id or solve order would name box_a: the fastest body going in among those that
 * did is named */
static void test_spin_1e154(void) { fail_case(0.0, 1e154, 0, "spin 1e154"); }

/* after a failed step (one that fails late, in the solve, and restores) with box_b's angular
 * velocity put back bit for bit, the steps go on exactly as in a world that never saw it */
static void test_retry_after_failure(void) {
  phys_world *ref = settled(), *w = settled();
  int box = phys_world_find_body(w, "box_b");
  double v0[3];
  memcpy(v0, w->bodies[box].w, sizeof v0);
  w->bodies[box].w[0] = 1e154;
  CU_ASSERT_EQUAL(phys_world_step(w), PHYS_E_NUMERIC);
  CU_ASSERT_PTR_NOT_NULL(strstr(phys_world_last_error(w), "became non-finite"));
  memcpy(w->bodies[box].w, v0, sizeof v0);
  CU_ASSERT_EQUAL(phys_world_state_hash(w), phys_world_state_hash(ref));
  for (int i = 0; i < 5; i++) {
    CU_ASSERT_EQUAL_FATAL(phys_world_step(ref), PHYS_OK);
    CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
    CU_ASSERT_EQUAL(phys_world_state_hash(w), phys_world_state_hash(ref));
  }
  phys_world_destroy(ref);
  phys_world_destroy(w);
}

int register_tests(void) {
  CU_pSuite s = CU_add_suite("failed_step", NULL, NULL);
  if (!s) return -1;
  if (!CU_add_test(s, "1e300 velocity: named, no trace", test_velocity_1e300) ||
      !CU_add_test(s, "NaN velocity: named, no trace", test_velocity_nan) ||
      !CU_add_test(s, "spin of 1e154 rad/s: blow-up in the solve, named, no trace",
                   test_spin_1e154) ||
      !CU_add_test(s, "the steps after a failed one", test_retry_after_failure))
    return -1;
  return 0;
}
