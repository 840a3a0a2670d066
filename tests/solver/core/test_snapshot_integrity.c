/* test_snapshot_integrity.c - white-box: a damaged snapshot is refused whole and changes
 * nothing (issue 11, item 2).
 *
 * A scene with contacts (boxes on the ground), an articulation (hinge then ball), a connect,
 * a limited fixed tendon on the hinge (its warm start is state), an actuator and sensors is stepped 50 steps and saved. Then:
 *  - every 8-byte word of the snapshot written over with NaN, and separately every bit of it
 *    flipped: each load must be refused, the state hash must not change, and a step after it
 *    must succeed (0 accepted corruptions);
 *  - damage with the checksum recomputed (as someone who knows the format would): NaN in the
 *    first double of every element of every double field, non-unit quaternions, ids, flags,
 *    modes and counts out of range, one link of a tree asleep and another awake: each refused
 *    by the value checks, nothing changed;
 *  - a clean snapshot, loaded after all that, continues for 100 steps with the same state
 *    hash at every step as the run that went on after the save. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cunit_main.h"
#include "core/state_table.h"
#include "core/world_internal.h"

static const char scene_xml[] =
    "<mujoco model='snapshot_integrity'>"
    "  <option timestep='0.005'/>"
    "  <worldbody>"
    "    <geom type='plane' size='5 5 0.1'/>"
    "    <body name='box1' pos='0 0 0.12'><freejoint/>"
    "      <geom type='box' size='0.1 0.1 0.1' mass='1'/><site name='s1'/></body>"
    "    <body name='box2' pos='0.05 0 0.35'><freejoint/>"
    "      <geom type='box' size='0.1 0.1 0.1' mass='1'/></body>"
    "    <body name='box3' pos='0.6 0.3 0.1' euler='0 0 30'><freejoint/>"
    "      <geom type='box' size='0.08 0.08 0.08' mass='0.5'/></body>"
    "    <body name='base' pos='1 0 0.5'>"
    "      <joint name='j1' type='hinge' axis='0 1 0' limited='true' range='-0.3 0.3'/>"
    "      <geom type='capsule' fromto='0 0 0 0.3 0 0' size='0.04' mass='1'/>"
    "      <body name='l2' pos='0.3 0 0'>"
    "        <joint name='j2' type='ball'/>"
    "        <geom type='capsule' fromto='0 0 0 0 0 -0.3' size='0.04' mass='1'/>"
    "        <site name='tip' pos='0 0 -0.3'/>"
    "      </body>"
    "    </body>"
    "    <body name='hang' pos='-1 0 1'><freejoint/>"
    "      <geom type='sphere' size='0.05' mass='0.5' contype='0' conaffinity='0'/></body>"
    "  </worldbody>"
    "  <equality><connect body1='hang' anchor='0.2 0 0'/></equality>"
    "  <tendon><fixed name='t1' limited='true' range='-0.25 0.25'><joint joint='j1' coef='1'/>"
    "</fixed></tendon>"
    "  <actuator><motor name='m1' joint='j1' gear='1'/></actuator>"
    "  <sensor><touch site='s1'/><accelerometer site='tip'/><jointpos joint='j1'/></sensor>"
    "</mujoco>";

#define HEADER 48     /* the snapshot header (state.c) */
#define SUM_AT 40     /* its checksum: FNV-1a of bytes [0, 40) and then the payload */
#define NWARM_AT 24   /* its warm-record count */
#define NSAVE 50      /* steps before the save */
#define NAFTER 100    /* steps compared after a restore */

static phys_world *scene(void) {
  phys_world *w = NULL;
  phys_error err;
  phys_status st = phys_load_mjcf_string(scene_xml, sizeof scene_xml - 1, "snapshot_integrity",
                                         NULL, &w, &err);
  if (st) printf("\n  load: %s\n", err.message);
  CU_ASSERT_EQUAL_FATAL(st, PHYS_OK);
  return w;
}

static unsigned char *snapshot(const phys_world *w, size_t *n) {
  *n = phys_world_state_size(w);
  unsigned char *buf = malloc(*n);
  CU_ASSERT_FATAL(buf != NULL);
  CU_ASSERT_EQUAL_FATAL(phys_world_save_state(w, buf, *n, NULL), PHYS_OK);
  return buf;
}

/* recompute the checksum of a snapshot of n bytes, as the format says */
static void reseal(unsigned char *buf, size_t n) {
  uint64_t h = phys__fnv1a(PHYS_FNV_START, buf, SUM_AT);
  h = phys__fnv1a(h, buf + HEADER, n - HEADER);
  memcpy(buf + SUM_AT, &h, sizeof h);
}

/* the world after NSAVE steps, its snapshot, and the hashes of the NAFTER steps that follow */
typedef struct fixture {
  phys_world *w;
  unsigned char *snap;
  size_t n;
  uint64_t h0, after[NAFTER];
  int nwarm;
} fixture;

static void fixture_make(fixture *f) {
  f->w = scene();
  for (int i = 0; i < NSAVE; i++) CU_ASSERT_EQUAL_FATAL(phys_world_step(f->w), PHYS_OK);
  f->snap = snapshot(f->w, &f->n);
  f->h0 = phys_world_state_hash(f->w);
  f->nwarm = f->w->nwarm;
  for (int i = 0; i < NAFTER; i++) {
    CU_ASSERT_EQUAL_FATAL(phys_world_step(f->w), PHYS_OK);
    f->after[i] = phys_world_state_hash(f->w);
  }
  CU_ASSERT_EQUAL_FATAL(phys_world_load_state(f->w, f->snap, f->n), PHYS_OK);
  CU_ASSERT_EQUAL_FATAL(phys_world_state_hash(f->w), f->h0);
}

static void fixture_free(fixture *f) {
  free(f->snap);
  phys_world_destroy(f->w);
}

/* load the damaged copy `bad`: it must be refused with a message and change nothing; a step
 * must then succeed. The world is put back to the clean snapshot. Returns 1 if accepted. */
static int try_bad(fixture *f, const unsigned char *bad, phys_status want, const char *what) {
  phys_status st = phys_world_load_state(f->w, bad, f->n);
  int accepted = st == PHYS_OK;
  if (accepted) printf("\n  accepted: %s\n", what);
  if (!accepted && want != PHYS_OK && st != want)
    printf("\n  %s: status %d, wanted %d (%s)\n", what, (int)st, (int)want,
           phys_world_last_error(f->w));
  if (want != PHYS_OK) CU_ASSERT_EQUAL(st, want);
  CU_ASSERT(accepted || strlen(phys_world_last_error(f->w)) > 0);
  uint64_t h = phys_world_state_hash(f->w);
  CU_ASSERT_EQUAL(h, f->h0);
  if (!accepted && h != f->h0) printf("\n  %s: refused but the state changed\n", what);
  CU_ASSERT_EQUAL(phys_world_step(f->w), PHYS_OK);
  CU_ASSERT_EQUAL(phys_world_load_state(f->w, f->snap, f->n), PHYS_OK);
  return accepted;
}

/* the clean snapshot continues as the original run did, bit for bit */
static void check_continues(fixture *f) {
  CU_ASSERT_EQUAL_FATAL(phys_world_load_state(f->w, f->snap, f->n), PHYS_OK);
  int same = 0;
  for (int i = 0; i < NAFTER; i++) {
    CU_ASSERT_EQUAL_FATAL(phys_world_step(f->w), PHYS_OK);
    same += phys_world_state_hash(f->w) == f->after[i];
  }
  CU_ASSERT_EQUAL(same, NAFTER);
}

static void test_fuzz_every_word(void) {
  fixture f;
  fixture_make(&f);
  CU_ASSERT(f.nwarm > 0); /* the boxes touch the ground: warm-start records are in it */
  unsigned char *bad = malloc(f.n);
  CU_ASSERT_FATAL(bad != NULL);
  const double nan = NAN;
  int words = 0, accepted = 0;
  for (size_t at = 0; at < f.n; at += 8) {
    size_t o = at + 8 <= f.n ? at : f.n - 8; /* a short tail: its last 8 bytes */
    memcpy(bad, f.snap, f.n);
    memcpy(bad + o, &nan, sizeof nan);
    if (memcmp(bad, f.snap, f.n) == 0) continue;
    char what[64];
    snprintf(what, sizeof what, "NaN at byte %zu", o);
    accepted += try_bad(&f, bad, PHYS_OK, what);
    words++;
  }
  int bits = 0, flips_accepted = 0;
  for (size_t b = 0; b < 8 * f.n; b++) {
    memcpy(bad, f.snap, f.n);
    bad[b / 8] ^= (unsigned char)(1u << (b % 8));
    char what[64];
    snprintf(what, sizeof what, "bit %zu flipped", b);
    flips_accepted += try_bad(&f, bad, PHYS_OK, what);
    bits++;
  }
  printf("\n  snapshot %zu bytes, %d warm records: %d NaN words, %d accepted; %d bit flips, "
         "%d accepted\n", f.n, f.nwarm, words, accepted, bits, flips_accepted);
  CU_ASSERT(words >= (int)(f.n / 8));
  CU_ASSERT_EQUAL(accepted, 0);
  CU_ASSERT_EQUAL(flips_accepted, 0);
  check_continues(&f);
  free(bad);
  fixture_free(&f);
}

/* elements of a field's group in the fixture's snapshot */
static int group_count(const fixture *f, phys_state_group g) {
  const phys_world *w = f->w;
  switch (g) {
    case PHYS_SG_BODY_MOTION:
    case PHYS_SG_BODY: return w->nbodies;
    case PHYS_SG_CONNECT: return w->nconnects;
    case PHYS_SG_ARTIC: return w->nartics;
    case PHYS_SG_ACTUATOR: return w->nactuators;
    case PHYS_SG_TENDON: return w->ntendons;
    case PHYS_SG_WORLD: return 1;
    case PHYS_SG_WARM: return f->nwarm;
    default: return 0;
  }
}

/* the damaged copy with `len` bytes of `src` written at field `name` of element `elem` (+ `sub`
 * bytes), resealed; refused with `want` and a message naming `name` */
static int refused_resealed(fixture *f, unsigned char *bad, const char *name, int elem,
                            size_t sub, const void *src, size_t len, phys_status want) {
  long o = phys__state_offset(f->w, PHYS_STATE_SNAPSHOT, name, elem, f->nwarm);
  CU_ASSERT_FATAL(o >= 0);
  memcpy(bad, f->snap, f->n);
  memcpy(bad + HEADER + o + sub, src, len);
  reseal(bad, f->n);
  char what[96];
  snprintf(what, sizeof what, "%s of element %d (+%zu), resealed", name, elem, sub);
  int acc = try_bad(f, bad, want, what);
  /* the message names the field (the alive check and the value checks both do) */
  phys_world_load_state(f->w, bad, f->n);
  int named = strstr(phys_world_last_error(f->w), name) != NULL;
  if (!named) printf("\n  %s: message '%s'\n", what, phys_world_last_error(f->w));
  CU_ASSERT(named);
  CU_ASSERT_EQUAL(phys_world_load_state(f->w, f->snap, f->n), PHYS_OK);
  return !acc && named;
}

static void test_resealed_values(void) {
  fixture f;
  fixture_make(&f);
  unsigned char *bad = malloc(f.n);
  CU_ASSERT_FATAL(bad != NULL);
  phys_world *w = f.w;

  /* NaN in every double field of every element (the first double; for an articulation array
   * its first item) */
  int nfields, cases = 0, refused = 0;
  const phys_state_field *t = phys__state_table(&nfields);
  const double nan = NAN, inf = INFINITY;
  for (int i = 0; i < nfields; i++) {
    const phys_state_field *fl = &t[i];
    if (!(fl->sets & PHYS_STATE_SNAPSHOT) || fl->rule == PHYS_SR_BOOL ||
        fl->rule == PHYS_SR_BODY_LABEL || fl->rule == PHYS_SR_CMD_MODE ||
        fl->rule == PHYS_SR_STEP_INDEX)
      continue;
    size_t sub = fl->rule == PHYS_SR_WARM ? 8 : 0; /* a warm record: its impulse */
    for (int e = 0; e < group_count(&f, fl->group); e++) {
      cases++;
      refused += refused_resealed(&f, bad, fl->name, e, sub, (e & 1) ? &inf : &nan, 8,
                                  PHYS_E_INVALID);
    }
  }
  printf("\n  non-finite values, resealed: %d cases, %d refused naming the field\n", cases,
         refused);
  CU_ASSERT(cases > 100);
  CU_ASSERT_EQUAL(refused, cases);

  /* non-unit quaternions: a box's body.q and q0, the ball joint's qpos (after the hinge) */
  phys_id box = phys_world_find_body(w, "box3");
  CU_ASSERT_FATAL(box >= 0);
  double q[4];
  long oq = phys__state_offset(w, PHYS_STATE_SNAPSHOT, "body.q", box, f.nwarm);
  memcpy(q, f.snap + HEADER + oq, sizeof q);
  for (int k = 0; k < 4; k++) q[k] *= 1.001;
  CU_ASSERT(refused_resealed(&f, bad, "body.q", box, 0, q, sizeof q, PHYS_E_INVALID));
  for (int k = 0; k < 4; k++) q[k] = k == 0 ? 1e-7 : 0.0;
  CU_ASSERT(refused_resealed(&f, bad, "body.q", box, 0, q, sizeof q, PHYS_E_INVALID));
  for (int k = 0; k < 4; k++) q[k] = 0.6;
  CU_ASSERT(refused_resealed(&f, bad, "body.q0", box, 0, q, sizeof q, PHYS_E_INVALID));
  CU_ASSERT_EQUAL_FATAL(w->nartics, 1);
  CU_ASSERT_EQUAL_FATAL(w->artics[0].t.nq, 5); /* hinge 1 + ball 4 */
  long oa = phys__state_offset(w, PHYS_STATE_SNAPSHOT, "artic.qpos", 0, f.nwarm);
  memcpy(q, f.snap + HEADER + oa + 8, sizeof q);
  for (int k = 0; k < 4; k++) q[k] *= 1.5;
  CU_ASSERT(refused_resealed(&f, bad, "artic.qpos", 0, 8, q, sizeof q, PHYS_E_INVALID));

  /* flags, ids, modes, counts out of range */
  int two = 2, seven = 7, nb = w->nbodies, minus2 = -2, mode = 9;
  CU_ASSERT(refused_resealed(&f, bad, "body.alive", 1, 0, &two, 4, PHYS_E_INVALID));
  CU_ASSERT(refused_resealed(&f, bad, "body.asleep", 2, 0, &seven, 4, PHYS_E_INVALID));
  CU_ASSERT(refused_resealed(&f, bad, "body.sleep_label", 1, 0, &nb, 4, PHYS_E_INVALID));
  CU_ASSERT(refused_resealed(&f, bad, "body.sleep_label", 1, 0, &minus2, 4, PHYS_E_INVALID));
  CU_ASSERT(refused_resealed(&f, bad, "artic.cmd.mode", 0, 0, &mode, 4, PHYS_E_INVALID));
  /* one link of a tree asleep, the other awake (crashed the next step; found by fuzz_snapshot) */
  phys_id l2 = phys_world_find_body(w, "l2");
  int one = 1;
  CU_ASSERT_FATAL(l2 >= 0);
  CU_ASSERT_FATAL(phys_body_is_sleeping(w, l2) == 0);
  CU_ASSERT(refused_resealed(&f, bad, "body.asleep", l2, 0, &one, 4, PHYS_E_INVALID));
  double neg = -1.0;
  CU_ASSERT(refused_resealed(&f, bad, "artic.cmd.kp", 0, 0, &neg, 8, PHYS_E_INVALID));
  CU_ASSERT(refused_resealed(&f, bad, "body.rest_time", 1, 0, &neg, 8, PHYS_E_INVALID));
  uint64_t big = 1ull << 63;
  CU_ASSERT(refused_resealed(&f, bad, "world.step_index", 0, 0, &big, 8, PHYS_E_INVALID));
  /* a warm record naming a geom the world lacks, and records out of order */
  CU_ASSERT_FATAL(f.nwarm >= 2);
  uint64_t key = (uint64_t)w->ngeoms << 40;
  CU_ASSERT(refused_resealed(&f, bad, "warm.record", 0, 0, &key, 8, PHYS_E_INVALID));
  long ow = phys__state_offset(w, PHYS_STATE_SNAPSHOT, "warm.record", 1, f.nwarm);
  uint64_t k1;
  memcpy(&k1, f.snap + HEADER + ow, 8);
  uint64_t above = k1 + 1; /* record 0 a key above record 1's: not ascending */
  CU_ASSERT(refused_resealed(&f, bad, "warm.record", 0, 0, &above, 8, PHYS_E_INVALID));
  /* a removed body's state restored as alive: the alive check (the world differs) */
  int zero = 0;
  CU_ASSERT(refused_resealed(&f, bad, "body.alive", box, 0, &zero, 4, PHYS_E_STATE));

  /* header counts with the checksum recomputed: warm records, bodies, the reserved word */
  int32_t v;
  memcpy(bad, f.snap, f.n);
  memcpy(&v, bad + NWARM_AT, 4);
  v += 1;
  memcpy(bad + NWARM_AT, &v, 4);
  reseal(bad, f.n);
  CU_ASSERT_EQUAL(try_bad(&f, bad, PHYS_E_INVALID, "nwarm + 1, resealed"), 0);
  memcpy(bad, f.snap, f.n);
  v = -5;
  memcpy(bad + NWARM_AT, &v, 4);
  reseal(bad, f.n);
  CU_ASSERT_EQUAL(try_bad(&f, bad, PHYS_E_INVALID, "nwarm -5, resealed"), 0);
  memcpy(bad, f.snap, f.n);
  v = w->nbodies + 1;
  memcpy(bad + 16, &v, 4);
  reseal(bad, f.n);
  CU_ASSERT_EQUAL(try_bad(&f, bad, PHYS_E_STATE, "nbodies + 1, resealed"), 0);
  memcpy(bad, f.snap, f.n);
  v = 1;
  memcpy(bad + 28, &v, 4);
  reseal(bad, f.n);
  CU_ASSERT_EQUAL(try_bad(&f, bad, PHYS_E_INVALID, "reserved word, resealed"), 0);

  /* the messages say what did not match */
  memcpy(bad, f.snap, f.n);
  bad[HEADER + 3] ^= 1;
  CU_ASSERT_EQUAL(phys_world_load_state(w, bad, f.n), PHYS_E_INVALID);
  CU_ASSERT(strstr(phys_world_last_error(w), "checksum mismatch") != NULL);
  memcpy(bad, f.snap, f.n);
  bad[4] ^= 1;
  CU_ASSERT_EQUAL(phys_world_load_state(w, bad, f.n), PHYS_E_INVALID);
  CU_ASSERT(strstr(phys_world_last_error(w), "version") != NULL);
  CU_ASSERT_EQUAL(phys_world_load_state(w, f.snap, f.n - 1), PHYS_E_INVALID);
  CU_ASSERT(strstr(phys_world_last_error(w), "size mismatch") != NULL);
  memcpy(bad, f.snap, f.n);
  bad[8] ^= 1;
  reseal(bad, f.n);
  CU_ASSERT_EQUAL(phys_world_load_state(w, bad, f.n), PHYS_E_STATE);
  CU_ASSERT(strstr(phys_world_last_error(w), "model hash mismatch") != NULL);
  CU_ASSERT_EQUAL(phys_world_state_hash(w), f.h0);

  check_continues(&f);
  free(bad);
  fixture_free(&f);
}

static void test_clean_restore_bit_identical(void) {
  fixture f;
  fixture_make(&f);
  /* into the same world after it moved on, and into a fresh world of the same model */
  for (int i = 0; i < 37; i++) CU_ASSERT_EQUAL(phys_world_step(f.w), PHYS_OK);
  check_continues(&f);
  phys_world *w2 = scene();
  CU_ASSERT_EQUAL_FATAL(phys_world_load_state(w2, f.snap, f.n), PHYS_OK);
  CU_ASSERT_EQUAL(phys_world_state_hash(w2), f.h0);
  int same = 0;
  for (int i = 0; i < NAFTER; i++) {
    CU_ASSERT_EQUAL_FATAL(phys_world_step(w2), PHYS_OK);
    same += phys_world_state_hash(w2) == f.after[i];
  }
  CU_ASSERT_EQUAL(same, NAFTER);
  phys_world_destroy(w2);
  fixture_free(&f);
}

int register_tests(void) {
  CU_pSuite s = CU_add_suite("snapshot_integrity", NULL, NULL);
  if (!s) return -1;
  if (!CU_add_test(s, "every NaN word and bit flip is refused, nothing changes",
                   test_fuzz_every_word) ||
      !CU_add_test(s, "resealed bad values are refused by validation", test_resealed_values) ||
      !CU_add_test(s, "a clean snapshot restores bit for bit", test_clean_restore_bit_identical))
    return -1;
  return 0;
}
