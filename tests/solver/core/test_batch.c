/* test_batch.c - batches of worlds (phys_batch.h): clones step as their originals, a world's
 * results do not depend on the batch size, the thread count or the other worlds, subsets and
 * resets touch only their worlds, warmed-up batch steps allocate nothing, bad arguments are
 * refused with a message and change nothing, a batch's worlds die with it, and running out of
 * memory while cloning or creating a batch leaves nothing behind.
 *
 * The scene is small (a box and a sphere on the ground, a motor-driven chain of three hinges
 * swinging into them), and world i of a batch is perturbed as lone world i is: the sphere gets
 * a sideways velocity and the motor a control that grow with i, so that every world differs. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "cunit_main.h"
#include "scene_util.h"
#include "core/alloc.h"
#include "core/world_internal.h"

#define STEPS 500

/* the scene; sleeping off so that every world keeps moving */
static phys_world *build_scene(void) {
  phys_world_options o = phys_world_options_default();
  o.sleep_enabled = 0;
  phys_world *w = make_world(&o);
  add_ground(w, 0.8);
  double pb[3] = {0.3, 0.0, 0.1}, ps[3] = {-0.3, 0.1, 0.3};
  add_box(w, pb, NULL, 0.1, 1.0, 0.8);
  add_sphere(w, ps, 0.1, 1.0, 0.8);
  phys_id parent = PHYS_ID_NONE;
  for (int i = 0; i < 3; i++) {
    phys_body_desc b = phys_body_desc_default();
    b.pos[2] = i == 0 ? 0.7 : -0.15;
    phys_geom_desc g = phys_geom_desc_default();
    g.type = PHYS_GEOM_CAPSULE;
    g.size[0] = 0.04;
    g.size[1] = 0.05;
    g.pos[2] = -0.075;
    phys_joint_desc j = phys_joint_desc_default();
    j.axis[0] = 0.0;
    j.axis[1] = 1.0;
    j.axis[2] = 0.0;
    j.qpos0 = i == 0 ? -1.0 : 0.0;
    j.damping = 0.01;
    CU_ASSERT_EQUAL_FATAL(phys_world_add_link(w, parent, &b, &j, &g, 1, &parent), PHYS_OK);
    if (i == 0) {
      phys_actuator_desc a = phys_actuator_desc_default();
      CU_ASSERT_EQUAL_FATAL(phys_world_add_actuator(w, parent, &a, NULL), PHYS_OK);
    }
  }
  return w;
}

/* world i's perturbation: the sphere (body 1) pushed sideways, the motor driven */
static void perturb(phys_world *w, int i) {
  double v[3] = {0.05 * i, -0.02 * i, 0.0};
  CU_ASSERT_EQUAL(phys_body_set_state(w, 1, NULL, NULL, v, NULL), PHYS_OK);
  CU_ASSERT_EQUAL(phys_actuator_set_ctrl(w, 0, 0.02 * i - 0.1), PHYS_OK);
}

/* the state hash of lone world i after `steps` steps */
static uint64_t lone_hash(int i, int steps) {
  phys_world *w = build_scene();
  perturb(w, i);
  for (int k = 0; k < steps; k++) CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
  uint64_t h = phys_world_state_hash(w);
  phys_world_destroy(w);
  return h;
}

/* a batch of `count` clones of the scene on `threads` threads, world i perturbed as lone i */
static phys_batch *make_batch(int count, int threads) {
  phys_world *proto = build_scene();
  phys_batch_options bo = phys_batch_options_default();
  bo.threads = threads;
  phys_batch *b = NULL;
  phys_error err;
  CU_ASSERT_EQUAL_FATAL(phys_batch_create(proto, count, &bo, &b, &err), PHYS_OK);
  phys_world_destroy(proto); /* the batch holds its own copies */
  for (int i = 0; i < count; i++) perturb(phys_batch_world(b, i), i);
  return b;
}

/* (1) world i of batches of 1, 4 and 16 on 1 and 2 threads ends where lone world i does */
static void test_batch_matches_lone(void) {
  uint64_t lone[16];
  for (int i = 0; i < 16; i++) lone[i] = lone_hash(i, STEPS);
  CU_ASSERT_NOT_EQUAL(lone[0], lone[1]); /* the perturbations make the worlds differ */
  CU_ASSERT_NOT_EQUAL(lone[1], lone[15]);
  static const int sizes[3] = {1, 4, 16};
  for (int s = 0; s < 3; s++)
    for (int threads = 1; threads <= 2; threads++) {
      phys_batch *b = make_batch(sizes[s], threads);
      for (int k = 0; k < STEPS; k++) CU_ASSERT_EQUAL_FATAL(phys_batch_step(b), PHYS_OK);
      int same = 0;
      for (int i = 0; i < sizes[s]; i++) {
        phys_world *w = phys_batch_world(b, i);
        same += phys_world_state_hash(w) == lone[i];
        CU_ASSERT_EQUAL(phys_world_step_index(w), STEPS);
        CU_ASSERT_EQUAL(phys_batch_world_status(b, i), PHYS_OK);
      }
      if (same != sizes[s])
        printf("\n  batch of %d on %d threads: %d of its worlds match\n", sizes[s], threads, same);
      CU_ASSERT_EQUAL(same, sizes[s]);
      phys_batch_destroy(b);
    }
}

/* (1b) a clone of a loaded robot (meshes, keyframes, actuators, sensors) steps as its original,
 * and accepts the original's saved state */
static void test_clone_loaded_model(void) {
  const char *data = getenv("PHYS_TEST_DATA");
  CU_ASSERT_PTR_NOT_NULL_FATAL(data);
  char path[1024];
  snprintf(path, sizeof path, "%s/menagerie_bot/scene.xml", data);
  phys_world *w = NULL, *c = NULL;
  phys_error err;
  CU_ASSERT_EQUAL_FATAL(phys_load_model(path, NULL, NULL, &w, &err), PHYS_OK);
  int key = phys_world_find_keyframe(w, "home");
  CU_ASSERT_FATAL(key >= 0);
  CU_ASSERT_EQUAL(phys_world_apply_keyframe(w, key), PHYS_OK);
  for (int k = 0; k < 50; k++) CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
  CU_ASSERT_EQUAL_FATAL(phys_world_clone(w, &c, &err), PHYS_OK);
  CU_ASSERT_EQUAL(phys_world_model_hash(c), phys_world_model_hash(w));
  CU_ASSERT_EQUAL(phys_world_state_hash(c), phys_world_state_hash(w));
  CU_ASSERT_EQUAL(phys_world_keyframe_count(c), phys_world_keyframe_count(w));
  CU_ASSERT_EQUAL(phys_world_notice_count(c), phys_world_notice_count(w));
  for (int k = 0; k < 200; k++) {
    CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
    CU_ASSERT_EQUAL_FATAL(phys_world_step(c), PHYS_OK);
  }
  CU_ASSERT_EQUAL(phys_world_state_hash(c), phys_world_state_hash(w));
  /* independent from here: the original's keyframe does not move the clone */
  uint64_t hc = phys_world_state_hash(c);
  CU_ASSERT_EQUAL(phys_world_apply_keyframe(w, key), PHYS_OK);
  CU_ASSERT_EQUAL(phys_world_state_hash(c), hc);
  /* the original's saved state loads into the clone */
  size_t n = phys_world_state_size(w);
  void *buf = malloc(n);
  CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
  CU_ASSERT_EQUAL(phys_world_save_state(w, buf, n, NULL), PHYS_OK);
  CU_ASSERT_EQUAL(phys_world_load_state(c, buf, n), PHYS_OK);
  CU_ASSERT_EQUAL(phys_world_state_hash(c), phys_world_state_hash(w));
  free(buf);
  phys_world_destroy(w);
  CU_ASSERT_EQUAL(phys_world_step(c), PHYS_OK); /* the clone outlives its original */
  phys_world_destroy(c);
}

/* (1c) a clone of a settled 64-sphere pile under sap (contacts, warm starts, the sparse
 * Hessian's cached analysis in the original) steps as its original: its contacts and warm
 * records are copied, its caches start empty */
static void test_clone_settled_sap(void) {
  phys_world_options o = phys_world_options_default();
  o.solver = PHYS_SOLVER_SAP;
  o.sleep_enabled = 0;
  o.threads = 1;
  phys_world *w = make_world(&o), *c = NULL;
  add_ground(w, 1.0);
  add_sphere_pile(w, 4, 0.1, 0.5, 0.12, 0.0, 0.0);
  step_n(w, 150);
  CU_ASSERT(phys_world_contact_count(w) >= 64);
  phys_error err;
  CU_ASSERT_EQUAL_FATAL(phys_world_clone(w, &c, &err), PHYS_OK);
  CU_ASSERT_EQUAL(phys_world_contact_count(c), phys_world_contact_count(w));
  CU_ASSERT_EQUAL(phys_world_state_hash(c), phys_world_state_hash(w));
  for (int k = 0; k < 20; k++) {
    CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
    CU_ASSERT_EQUAL_FATAL(phys_world_step(c), PHYS_OK);
  }
  CU_ASSERT_EQUAL(phys_world_state_hash(c), phys_world_state_hash(w));
  phys_world_destroy(w);
  phys_world_destroy(c);
}

/* (2) a subset step moves only its worlds; the others keep hash, time and step index */
static void test_subset(void) {
  phys_batch *b = make_batch(6, 2);
  for (int k = 0; k < 20; k++) CU_ASSERT_EQUAL_FATAL(phys_batch_step(b), PHYS_OK);
  uint64_t before[6];
  double t[6];
  for (int i = 0; i < 6; i++) {
    before[i] = phys_world_state_hash(phys_batch_world(b, i));
    t[i] = phys_world_time(phys_batch_world(b, i));
  }
  static const int sub[3] = {4, 1, 2};
  for (int k = 0; k < 30; k++) CU_ASSERT_EQUAL_FATAL(phys_batch_step_subset(b, sub, 3), PHYS_OK);
  for (int i = 0; i < 6; i++) {
    phys_world *w = phys_batch_world(b, i);
    int in = i == 1 || i == 2 || i == 4;
    CU_ASSERT_EQUAL(phys_world_step_index(w), in ? 50u : 20u);
    if (in) {
      CU_ASSERT_NOT_EQUAL(phys_world_state_hash(w), before[i]);
      CU_ASSERT(phys_world_time(w) > t[i]);
    } else {
      CU_ASSERT_EQUAL(phys_world_state_hash(w), before[i]);
      CU_ASSERT_EQUAL(phys_world_time(w), t[i]);
    }
  }
  /* a world stepped alone in a subset ends where it would in the full batch */
  CU_ASSERT_EQUAL(phys_world_state_hash(phys_batch_world(b, 4)), lone_hash(4, 50));
  CU_ASSERT_EQUAL(phys_batch_step_subset(b, NULL, 0), PHYS_OK); /* nothing to step */
  CU_ASSERT_EQUAL(phys_world_step_index(phys_batch_world(b, 0)), 20u);
  /* one world on two threads goes through its own phys_world_step: the same result */
  static const int five[1] = {5};
  CU_ASSERT_EQUAL(phys_batch_step_subset(b, five, 1), PHYS_OK);
  CU_ASSERT_EQUAL(phys_world_state_hash(phys_batch_world(b, 5)), lone_hash(5, 21));
  CU_ASSERT_EQUAL(phys_world_step_index(phys_batch_world(b, 0)), 20u);
  phys_batch_destroy(b);
}

/* the hooked step's callbacks: before sets world k's control from a table, after records the
 * world's step index and outcome, and both count their calls per entry */
typedef struct hook_log {
  double ctrl[8];
  int before[8], after[8];
  uint64_t step[8];
  phys_status st[8];
} hook_log;

static void log_before(phys_world *w, int k, void *user) {
  hook_log *h = user;
  h->before[k]++;
  phys_actuator_set_ctrl(w, 0, h->ctrl[k]);
}

static void log_after(phys_world *w, int k, phys_status st, void *user) {
  hook_log *h = user;
  h->after[k]++;
  h->step[k] = phys_world_step_index(w);
  h->st[k] = st;
}

/* (2b) callbacks around each world's step: a control set by `before` gives what setting it
 * between steps gives, bit for bit (1 and 2 threads, a full list and a subset, one world on
 * two threads), `after` sees the stepped world once per entry, and a refused list calls none */
static void test_hooked(void) {
  static const int lists[3][4] = {{0, 1, 2, 3}, {3, 1, -1, -1}, {2, -1, -1, -1}};
  static const int lens[3] = {4, 2, 1};
  for (int threads = 1; threads <= 2; threads++)
    for (int l = 0; l < 3; l++) {
      phys_batch *hooked = make_batch(4, threads), *plain = make_batch(4, threads);
      hook_log h;
      memset(&h, 0, sizeof h);
      phys_batch_hooks hk = {log_before, log_after, &h};
      for (int k = 0; k < 40; k++) {
        for (int e = 0; e < lens[l]; e++) {
          h.ctrl[e] = 0.05 * (e + 1) * (k % 7 - 3);
          phys_actuator_set_ctrl(phys_batch_world(plain, lists[l][e]), 0, h.ctrl[e]);
        }
        CU_ASSERT_EQUAL_FATAL(phys_batch_step_hooked(hooked, lists[l], lens[l], &hk), PHYS_OK);
        CU_ASSERT_EQUAL_FATAL(phys_batch_step_subset(plain, lists[l], lens[l]), PHYS_OK);
      }
      for (int e = 0; e < lens[l]; e++) {
        int i = lists[l][e];
        CU_ASSERT_EQUAL(h.before[e], 40);
        CU_ASSERT_EQUAL(h.after[e], 40);
        CU_ASSERT_EQUAL(h.step[e], 40u);
        CU_ASSERT_EQUAL(h.st[e], PHYS_OK);
        CU_ASSERT_EQUAL(phys_world_state_hash(phys_batch_world(hooked, i)),
                        phys_world_state_hash(phys_batch_world(plain, i)));
      }
      /* the controls did change the motion: world lists[l][0] differs from an undriven run */
      CU_ASSERT_NOT_EQUAL(phys_world_state_hash(phys_batch_world(hooked, lists[l][0])),
                          lone_hash(lists[l][0], 40));
      phys_batch_destroy(hooked);
      phys_batch_destroy(plain);
    }
  /* no callbacks (NULL hooks, NULL members) is phys_batch_step_subset */
  phys_batch *a = make_batch(3, 1), *b = make_batch(3, 1);
  phys_batch_hooks none = {NULL, NULL, NULL};
  static const int all[3] = {0, 1, 2};
  for (int k = 0; k < 10; k++) {
    CU_ASSERT_EQUAL(phys_batch_step_hooked(a, all, 3, k % 2 ? &none : NULL), PHYS_OK);
    CU_ASSERT_EQUAL(phys_batch_step(b), PHYS_OK);
  }
  for (int i = 0; i < 3; i++)
    CU_ASSERT_EQUAL(phys_world_state_hash(phys_batch_world(a, i)),
                    phys_world_state_hash(phys_batch_world(b, i)));
  /* a refused list steps nothing and calls nothing */
  hook_log h;
  memset(&h, 0, sizeof h);
  phys_batch_hooks hk = {log_before, log_after, &h};
  static const int twice[2] = {1, 1}, out[1] = {3};
  CU_ASSERT_EQUAL(phys_batch_step_hooked(a, twice, 2, &hk), PHYS_E_INVALID);
  CU_ASSERT(strstr(phys_batch_last_error(a), "given twice") != NULL);
  CU_ASSERT_EQUAL(phys_batch_step_hooked(a, out, 1, &hk), PHYS_E_INVALID);
  CU_ASSERT_EQUAL(phys_batch_step_hooked(NULL, all, 3, &hk), PHYS_E_INVALID);
  CU_ASSERT_EQUAL(h.before[0] + h.before[1] + h.after[0] + h.after[1], 0);
  CU_ASSERT_EQUAL(phys_world_step_index(phys_batch_world(a, 1)), 10u);
  phys_batch_destroy(a);
  phys_batch_destroy(b);
}

/* the held-up thread's log: which thread stepped each entry, and how often; `held` is set by
 * thread 0 (only it reads or writes it) */
typedef struct claim_log {
  int thread[8], steps[8], held;
} claim_log;

static void claim_before(phys_world *w, int k, void *user) {
  (void)w;
  claim_log *c = user;
  int t = omp_get_thread_num();
  c->thread[k] = t;
  __atomic_fetch_add(&c->steps[k], 1, __ATOMIC_RELAXED);
  if (t == 0 && !c->held) { /* thread 0 loses 100 ms before its first world */
    c->held = 1;
    struct timespec ts = {0, 100 * 1000 * 1000};
    nanosleep(&ts, NULL);
  }
}

/* (2c) a thread held up does not hold up the batch step: on 2 threads and 8 worlds (runs 0-3
 * and 4-7), thread 0 sleeps 100 ms before its first world, and thread 1, done with its own run
 * in well under that, steps every other world, 3 or more of them from thread 0's run (a static
 * schedule would leave all 4 to thread 0); thread 0 steps at most that one world (none when
 * thread 1 got to them all before thread 0 started). Every entry is stepped once a batch step,
 * and every world ends bit for bit where a one-thread batch does */
static void test_held_up_thread(void) {
  phys_batch *two = make_batch(8, 2), *one = make_batch(8, 1);
  static const int all[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  int taken = 0, by_held = 0;
  for (int k = 0; k < 3; k++) {
    claim_log c;
    memset(&c, 0, sizeof c);
    phys_batch_hooks hk = {claim_before, NULL, &c};
    CU_ASSERT_EQUAL_FATAL(phys_batch_step_hooked(two, all, 8, &hk), PHYS_OK);
    CU_ASSERT_EQUAL_FATAL(phys_batch_step(one), PHYS_OK);
    int held_now = 0;
    for (int e = 0; e < 8; e++) {
      CU_ASSERT_EQUAL(c.steps[e], 1);
      held_now += c.thread[e] == 0;
      taken += e < 4 && c.thread[e] == 1;
    }
    CU_ASSERT_TRUE(held_now <= 1);
    by_held += held_now;
  }
  printf("\n  worlds stepped by the held thread: %d of 24; of its run's, by the other: %d of 12\n",
         by_held, taken);
  CU_ASSERT_TRUE(taken >= 9);
  for (int i = 0; i < 8; i++)
    CU_ASSERT_EQUAL(phys_world_state_hash(phys_batch_world(two, i)),
                    phys_world_state_hash(phys_batch_world(one, i)));
  phys_batch_destroy(two);
  phys_batch_destroy(one);
}

/* (3) a world reset mid-run (its keyframe, a loaded state) does not disturb the others */
static void test_reset_one(void) {
  phys_world *proto = build_scene();
  CU_ASSERT_EQUAL_FATAL(phys_world_add_keyframe(proto, "start", NULL), PHYS_OK);
  phys_batch_options bo = phys_batch_options_default();
  bo.threads = 2;
  phys_batch *b = NULL;
  CU_ASSERT_EQUAL_FATAL(phys_batch_create(proto, 4, &bo, &b, NULL), PHYS_OK);
  phys_world_destroy(proto);
  for (int i = 0; i < 4; i++) perturb(phys_batch_world(b, i), i);
  /* world 3's state at step 0, for a reset by load_state */
  phys_world *w3 = phys_batch_world(b, 3);
  size_t n = phys_world_state_size(w3);
  void *saved = malloc(n);
  CU_ASSERT_PTR_NOT_NULL_FATAL(saved);
  CU_ASSERT_EQUAL(phys_world_save_state(w3, saved, n, NULL), PHYS_OK);
  uint64_t h3_0 = phys_world_state_hash(w3);

  for (int k = 0; k < 150; k++) CU_ASSERT_EQUAL_FATAL(phys_batch_step(b), PHYS_OK);
  phys_world *w1 = phys_batch_world(b, 1);
  CU_ASSERT_EQUAL(phys_world_apply_keyframe(w1, phys_world_find_keyframe(w1, "start")), PHYS_OK);
  CU_ASSERT_EQUAL(phys_world_step_index(w1), 0u);
  CU_ASSERT_EQUAL(phys_world_load_state(w3, saved, n), PHYS_OK);
  CU_ASSERT_EQUAL(phys_world_state_hash(w3), h3_0);
  perturb(w1, 1); /* the keyframe held the unperturbed scene and no control */
  for (int k = 0; k < 150; k++) CU_ASSERT_EQUAL_FATAL(phys_batch_step(b), PHYS_OK);
  /* worlds 0 and 2 went on undisturbed; 1 and 3 ran 150 steps from their start */
  CU_ASSERT_EQUAL(phys_world_state_hash(phys_batch_world(b, 0)), lone_hash(0, 300));
  CU_ASSERT_EQUAL(phys_world_state_hash(phys_batch_world(b, 2)), lone_hash(2, 300));
  CU_ASSERT_EQUAL(phys_world_state_hash(w1), lone_hash(1, 150));
  CU_ASSERT_EQUAL(phys_world_state_hash(w3), lone_hash(3, 150));
  free(saved);
  phys_batch_destroy(b);
}

/* (4) no heap allocation in warmed-up batch steps, full and subset, on 1 and 2 threads */
static void test_no_allocation(void) {
  for (int threads = 1; threads <= 2; threads++) {
    phys_batch *b = make_batch(8, threads);
    for (int k = 0; k < 200; k++) CU_ASSERT_EQUAL_FATAL(phys_batch_step(b), PHYS_OK);
    static const int sub[2] = {7, 0};
    for (int k = 0; k < 10; k++) CU_ASSERT_EQUAL_FATAL(phys_batch_step_subset(b, sub, 2), PHYS_OK);
    uint64_t a0 = phys_alloc_count();
    for (int k = 0; k < 100; k++) {
      CU_ASSERT_EQUAL_FATAL(phys_batch_step(b), PHYS_OK);
      CU_ASSERT_EQUAL_FATAL(phys_batch_step_subset(b, sub, 2), PHYS_OK);
    }
    uint64_t allocs = phys_alloc_count() - a0;
    if (allocs) printf("\n  %d threads: %llu allocations\n", threads, (unsigned long long)allocs);
    CU_ASSERT_EQUAL(allocs, 0u);
    phys_batch_destroy(b);
  }
}

/* (4b) the worlds of a batch step in their thread's scratch arena, not in one each (a batch of
 * 256 humanoids would otherwise sweep 256 arenas of ~75 KB through the cache every batch
 * step): after full and subset steps on 1 and 2 threads no world holds an arena of its own,
 * and a world stepped alone afterwards grows its own and steps as lone world i does */
static void test_shared_scratch(void) {
  for (int threads = 1; threads <= 2; threads++) {
    phys_batch *b = make_batch(6, threads);
    static const int sub[3] = {5, 2, 0};
    for (int k = 0; k < 50; k++) {
      CU_ASSERT_EQUAL_FATAL(phys_batch_step(b), PHYS_OK);
      CU_ASSERT_EQUAL_FATAL(phys_batch_step_subset(b, sub, 3), PHYS_OK);
    }
    for (int i = 0; i < 6; i++) {
      const phys_world *w = phys_batch_world(b, i);
      CU_ASSERT_EQUAL(w->arena.capacity, 0u);
      CU_ASSERT_PTR_NULL(w->arena.base);
    }
    /* world 3 alone, then in the batch again: the same bits as lone world 3 stepped as often */
    phys_world *w3 = phys_batch_world(b, 3);
    for (int k = 0; k < 20; k++) CU_ASSERT_EQUAL_FATAL(phys_world_step(w3), PHYS_OK);
    CU_ASSERT(w3->arena.capacity > 0);
    for (int k = 0; k < 20; k++) CU_ASSERT_EQUAL_FATAL(phys_batch_step(b), PHYS_OK);
    CU_ASSERT_EQUAL(phys_world_step_index(w3), 50 + 20 + 20); /* not in the subset */
    CU_ASSERT_EQUAL(phys_world_state_hash(w3), lone_hash(3, 50 + 20 + 20));
    phys_batch_destroy(b);
  }
}

/* (5) bad arguments: a clear status and message, nothing created or stepped */
static void test_bad_arguments(void) {
  phys_world *proto = build_scene();
  int sentinel;
  phys_batch *none = (phys_batch *)&sentinel; /* must come back NULL */
  phys_error err;
  CU_ASSERT_EQUAL(phys_batch_create(proto, 0, NULL, &none, &err), PHYS_E_INVALID);
  CU_ASSERT_PTR_NULL(none);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "count"));
  CU_ASSERT_EQUAL(phys_batch_create(proto, -3, NULL, &none, &err), PHYS_E_INVALID);
  CU_ASSERT_EQUAL(phys_batch_create(NULL, 2, NULL, &none, &err), PHYS_E_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "NULL"));
  CU_ASSERT_EQUAL(phys_batch_create(proto, 2, NULL, NULL, &err), PHYS_E_INVALID);
  phys_batch_options bo = phys_batch_options_default();
  bo.threads = 0;
  CU_ASSERT_EQUAL(phys_batch_create(proto, 2, &bo, &none, &err), PHYS_E_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "threads"));
  CU_ASSERT_PTR_NULL(none);
  phys_world *c = (phys_world *)&c;
  CU_ASSERT_EQUAL(phys_world_clone(NULL, &c, &err), PHYS_E_INVALID);
  CU_ASSERT_PTR_NULL(c);

  phys_batch *b = NULL;
  CU_ASSERT_EQUAL_FATAL(phys_batch_create(proto, 3, NULL, &b, &err), PHYS_OK);
  if (!b) return;
  CU_ASSERT_EQUAL(phys_batch_count(b), 3);
  CU_ASSERT_PTR_NULL(phys_batch_world(b, 3));
  CU_ASSERT_PTR_NOT_NULL(strstr(phys_batch_last_error(b), "out of range"));
  CU_ASSERT_PTR_NULL(phys_batch_world(b, -1));
  CU_ASSERT_EQUAL(phys_batch_world_status(b, 5), PHYS_E_NOT_FOUND);
  uint64_t h[3];
  for (int i = 0; i < 3; i++) h[i] = phys_world_state_hash(phys_batch_world(b, i));
  static const int out_of_range[2] = {0, 3}, twice[3] = {2, 0, 2}, negative[1] = {-1};
  CU_ASSERT_EQUAL(phys_batch_step_subset(b, out_of_range, 2), PHYS_E_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(phys_batch_last_error(b), "world index 3 out of range"));
  CU_ASSERT_EQUAL(phys_batch_step_subset(b, twice, 3), PHYS_E_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(phys_batch_last_error(b), "world 2 given twice"));
  CU_ASSERT_EQUAL(phys_batch_step_subset(b, negative, 1), PHYS_E_INVALID);
  CU_ASSERT_EQUAL(phys_batch_step_subset(b, twice, 4), PHYS_E_INVALID); /* more than count */
  CU_ASSERT_EQUAL(phys_batch_step_subset(b, NULL, 2), PHYS_E_INVALID);
  CU_ASSERT_EQUAL(phys_batch_step_subset(NULL, twice, 1), PHYS_E_INVALID);
  CU_ASSERT_EQUAL(phys_batch_step(NULL), PHYS_E_INVALID);
  for (int i = 0; i < 3; i++) { /* nothing was stepped: world 0 came before the bad entry */
    CU_ASSERT_EQUAL(phys_world_state_hash(phys_batch_world(b, i)), h[i]);
    CU_ASSERT_EQUAL(phys_world_step_index(phys_batch_world(b, i)), 0u);
  }
  bo.threads = 2000;
  CU_ASSERT_EQUAL(phys_batch_set_options(b, &bo), PHYS_E_INVALID);
  CU_ASSERT_EQUAL(phys_batch_get_options(b).threads, 1);

  /* a world whose step fails (a speed too large to step): the others are still stepped, the
   * batch names it, and it keeps its state */
  double fast[3] = {1e300, 0.0, 0.0};
  CU_ASSERT_EQUAL(phys_body_set_state(phys_batch_world(b, 1), 1, NULL, NULL, fast, NULL), PHYS_OK);
  uint64_t h1 = phys_world_state_hash(phys_batch_world(b, 1));
  CU_ASSERT_EQUAL(phys_batch_step(b), PHYS_E_NUMERIC);
  CU_ASSERT_PTR_NOT_NULL(strstr(phys_batch_last_error(b), "world 1 failed"));
  CU_ASSERT_EQUAL(phys_batch_world_status(b, 0), PHYS_OK);
  CU_ASSERT_EQUAL(phys_batch_world_status(b, 1), PHYS_E_NUMERIC);
  CU_ASSERT_EQUAL(phys_world_step_index(phys_batch_world(b, 0)), 1u);
  CU_ASSERT_EQUAL(phys_world_step_index(phys_batch_world(b, 2)), 1u);
  CU_ASSERT_EQUAL(phys_world_state_hash(phys_batch_world(b, 1)), h1);
  phys_world_destroy(proto);
  phys_batch_destroy(b);
}

/* (6) a batch's worlds belong to it: phys_world_destroy on one is refused with a message, the
 * batch goes on stepping it, and phys_batch_destroy releases every world (ASan checks that
 * nothing leaks or is freed twice) */
static void test_ownership(void) {
  phys_batch *b = make_batch(3, 2);
  phys_world *w = phys_batch_world(b, 2);
  CU_ASSERT_PTR_NOT_NULL_FATAL(w);
  if (!w) return;
  phys_world_destroy(w);
  CU_ASSERT_PTR_NOT_NULL(strstr(phys_world_last_error(w), "belongs to a batch"));
  CU_ASSERT_EQUAL(phys_batch_step(b), PHYS_OK);
  CU_ASSERT_EQUAL(phys_world_step_index(w), 1u);
  /* a world of the batch is an ordinary world to every per-world call, its own step included */
  CU_ASSERT_EQUAL(phys_world_step(w), PHYS_OK);
  CU_ASSERT_EQUAL(phys_world_step_index(w), 2u);
  phys_world *c = NULL;
  CU_ASSERT_EQUAL(phys_world_clone(w, &c, NULL), PHYS_OK); /* a clone of it is the caller's */
  phys_batch_destroy(b);
  CU_ASSERT_EQUAL(phys_world_step(c), PHYS_OK);
  CU_ASSERT_EQUAL(phys_world_step_index(c), 3u);
  phys_world_destroy(c);
  phys_batch_destroy(NULL);
  CU_ASSERT_EQUAL(phys_batch_count(NULL), 0);
}

/* (7) out of memory at every allocation of a clone and of a batch's creation: PHYS_E_NOMEM,
 * nothing returned, nothing leaked (ASan) and the original untouched; the first count that
 * succeeds gives a clone that steps as the original */
static void test_out_of_memory(void) {
  const char *data = getenv("PHYS_TEST_DATA");
  CU_ASSERT_PTR_NOT_NULL_FATAL(data);
  char path[1024];
  snprintf(path, sizeof path, "%s/menagerie_bot/scene.xml", data); /* meshes, keyframes, trees */
  phys_world *w = NULL;
  CU_ASSERT_EQUAL_FATAL(phys_load_model(path, NULL, NULL, &w, NULL), PHYS_OK);
  if (!w) return;
  for (int k = 0; k < 10; k++) CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
  uint64_t h = phys_world_state_hash(w);
  int failures = 0, ok = 0;
  for (long long n = 0; n < 10000 && !ok; n++) {
    phys_world *c = (phys_world *)&c;
    phys_error err;
    phys__alloc_fail_after(n);
    phys_status st = phys_world_clone(w, &c, &err);
    phys__alloc_fail_after(-1);
    if (st == PHYS_OK) {
      ok = 1;
      CU_ASSERT_EQUAL(phys_world_step(c), PHYS_OK);
      CU_ASSERT_EQUAL(phys_world_step(w), PHYS_OK);
      CU_ASSERT_EQUAL(phys_world_state_hash(c), phys_world_state_hash(w));
      phys_world_destroy(c);
    } else {
      failures++;
      CU_ASSERT_EQUAL(st, PHYS_E_NOMEM);
      CU_ASSERT_PTR_NULL(c);
      CU_ASSERT_EQUAL(phys_world_state_hash(w), h);
    }
  }
  CU_ASSERT(ok);
  CU_ASSERT(failures > 20); /* the clone allocates many arrays: each failure point was tried */
  ok = 0;
  for (long long n = 0; n < 10000 && !ok; n++) {
    phys_batch *b = NULL;
    phys_error err;
    phys__alloc_fail_after(n);
    phys_status st = phys_batch_create(w, 3, NULL, &b, &err);
    phys__alloc_fail_after(-1);
    if (st == PHYS_OK) {
      ok = 1;
      CU_ASSERT_EQUAL(phys_batch_step(b), PHYS_OK);
      phys_batch_destroy(b);
    } else {
      CU_ASSERT_EQUAL(st, PHYS_E_NOMEM);
      CU_ASSERT_PTR_NULL(b);
      CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "out of memory"));
    }
  }
  CU_ASSERT(ok);
  phys_world_destroy(w);
}

int register_tests(void) {
  CU_pSuite s = CU_add_suite("batch", NULL, NULL);
  if (!s) return -1;
  if (!CU_add_test(s, "world i of a batch matches lone world i (1, 4, 16 worlds; 1, 2 threads)",
                   test_batch_matches_lone) ||
      !CU_add_test(s, "a clone of a loaded robot steps as its original", test_clone_loaded_model) ||
      !CU_add_test(s, "a clone of a settled sap pile steps as its original",
                   test_clone_settled_sap) ||
      !CU_add_test(s, "a subset step moves only its worlds", test_subset) ||
      !CU_add_test(s, "callbacks around each world's step (controls before, state after)",
                   test_hooked) ||
      !CU_add_test(s, "a thread held up: the other steps its worlds", test_held_up_thread) ||
      !CU_add_test(s, "resetting one world leaves the others alone", test_reset_one) ||
      !CU_add_test(s, "no allocation in warmed-up batch steps", test_no_allocation) ||
      !CU_add_test(s, "worlds step in their thread's scratch arena", test_shared_scratch) ||
      !CU_add_test(s, "bad arguments are refused with a message", test_bad_arguments) ||
      !CU_add_test(s, "a batch owns its worlds", test_ownership) ||
      !CU_add_test(s, "out of memory in a clone or a batch", test_out_of_memory))
    return -1;
  return 0;
}
