/* test_threads.c - the adaptive thread count's controller (core/threads.c), driven directly
 * with made-up step times.
 *
 * A world with opt.threads 2 starts on the team; when one thread is faster it goes home to one
 * thread after the first probe. Long steps (200 us) keep probing the team now and then (so a
 * machine that frees up is noticed); short steps (8 us: a lone small robot) never probe again
 * once at one thread, and probe again when the steps grow past the team's minimum. A team that
 * wins keeps the team. */
#include <string.h>
#include "cunit_main.h"
#include "core/world_internal.h"
#include "core/threads.h"

static phys_world *make_world(void) {
  phys_world_options o = phys_world_options_default();
  o.threads = 2;
  o.adaptive_threads = 1;
  phys_world *w = NULL;
  CU_ASSERT_EQUAL_FATAL(phys_world_create(&o, &w, NULL), PHYS_OK);
  return w;
}

/* run n steps where one thread takes t1 s and the team t2 s; the number of team steps */
static int drive(phys_world *w, int n, double t1, double t2) {
  int team = 0;
  for (int i = 0; i < n; i++) {
    phys__threads_begin(w);
    int on_team = w->step_threads > 1;
    team += on_team;
    phys__threads_end(w, on_team ? t2 : t1);
  }
  return team;
}

static void test_short_steps_stop_probing(void) {
  phys_world *w = make_world();
  /* the team loses: home goes to one thread within the first period and its probe */
  int first = drive(w, 100, 8e-6, 20e-6);
  CU_ASSERT(first > 0 && first < 40);
  CU_ASSERT_EQUAL(w->tctl.home, 0);
  /* 8 us steps at one thread: no team step in 20000 steps */
  CU_ASSERT_EQUAL(drive(w, 20000, 8e-6, 20e-6), 0);
  /* the world grows: 200 us steps probe the team again (and the team still loses) */
  int probes = drive(w, 20000, 200e-6, 300e-6);
  CU_ASSERT(probes > 0);
  CU_ASSERT(probes < 200); /* probes back off: a losing way costs few steps */
  CU_ASSERT_EQUAL(w->tctl.home, 0);
  phys_world_destroy(w);
}

static void test_team_that_wins_stays(void) {
  phys_world *w = make_world();
  int team = drive(w, 5000, 400e-6, 250e-6);
  CU_ASSERT_EQUAL(w->tctl.home, 1);
  CU_ASSERT(team > 4900); /* only probes of one thread leave it */
  phys_world_destroy(w);
}

int register_tests(void) {
  CU_pSuite s = CU_add_suite("threads", NULL, NULL);
  if (!s) return -1;
  if (!CU_add_test(s, "short one-thread steps never probe the team", test_short_steps_stop_probing) ||
      !CU_add_test(s, "a team that wins stays", test_team_that_wins_stays))
    return -1;
  return 0;
}
