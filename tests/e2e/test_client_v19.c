/* test_client_v19.c - libphysclient's protocol 1.9 against the real physd: a batch loaded with
 * physclient_load_options.world_count (world_loaded.world_count, Welcome's max_worlds),
 * physclient_step_batch (every world, a subset in request order, per-world controls, resets to
 * the loaded state and to a keyframe, no_step, frames reused without reallocation), a world of
 * the batch bit for bit the same as a lone world given the same controls, the client's EINVAL
 * and the server's refusals (naming the field, nothing changed), and the C example
 * clients/c/examples/vec_pd.c run over 256 worlds. Skipped (exit 77) when the daemon is not
 * built. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cunit_main.h"
#include "e2e_util.h"
#include "physclient.h"

static e2e_daemon g_d;

/* a free base carrying a two-hinge arm with motors: nq 7 + 2, nv 6 + 2, nu 2; keyframe "up" */
static const char *World =
    "<mujoco><option timestep='0.002'/><worldbody><geom type='plane' size='5 5 0.1'/>"
    "<body name='base' pos='0 0 0.3'><freejoint/><geom type='box' size='0.1 0.1 0.05'/>"
    "<body name='upper' pos='0 0 0.05'><joint name='h1' type='hinge' axis='0 1 0'/>"
    "<geom type='capsule' fromto='0 0 0 0 0 0.3' size='0.03'/>"
    "<body name='fore' pos='0 0 0.3'><joint name='h2' type='hinge' axis='0 1 0'/>"
    "<geom type='capsule' fromto='0 0 0 0.2 0 0' size='0.02'/></body></body></body>"
    "</worldbody><actuator><motor joint='h1' gear='5'/><motor joint='h2' gear='2'/></actuator>"
    "<keyframe><key name='up' qpos='0 0 0.5 1 0 0 0 0.3 -0.3'/></keyframe></mujoco>";
enum { NQ = 9, NV = 8, NU = 2, NW = 4 };

static int suite_init(void) { return e2e_start(&g_d, World) == 0 ? 0 : -1; }
static int suite_clean(void) { return e2e_stop_checked(&g_d); }

/* load World as a batch of n (1: one world); 0 or -1 */
static int load(physclient *c, uint32_t n) {
  physclient_load_options lo = {.world_count = n};
  physclient_world_loaded wl;
  physclient_error err;
  int st = physclient_load_world_path_opts(c, g_d.world, &lo, &wl, NULL, &err);
  if (st) fprintf(stderr, "load: %s\n", err.message);
  return st == PHYSCLIENT_OK && wl.world_count == (n ? n : 1) ? 0 : -1;
}

static double ctrl_of(int t, int w, int a) { return 0.7 * sin(0.25 * t + w + 0.5 * a); }

static void test_step_batch(void) {
  physclient *c = e2e_connect(&g_d, "e2e-v19");
  CU_ASSERT_EQUAL(physclient_welcome_info(c)->limits.max_worlds, 4096);
  CU_ASSERT_FATAL(load(c, NW) == 0);
  physclient_error err;
  physclient_batch_frame f = {0};
  /* every world, observed without a step: as loaded */
  physclient_batch_request obs = {.no_step = true, .qpos = true, .qvel = true,
                                  .actuator_force = true};
  CU_ASSERT_EQUAL_FATAL(physclient_step_batch(c, &obs, &f, &err), PHYSCLIENT_OK);
  CU_ASSERT(f.n_worlds == NW && f.nq == NQ && f.nv == NV && f.nu == NU);
  CU_ASSERT(f.worlds[3] == 3 && f.step[3] == 0 && f.qpos[3 * NQ + 2] == 0.3);
  /* a subset in request order, with controls: worlds 2 and 0 step twice */
  int32_t sub[] = {2, 0};
  double ctrl[] = {1, -1, 0.5, 0.5};
  physclient_batch_request rq = {.worlds = sub, .n_worlds = 2, .ctrl = ctrl, .n_ctrl = 4,
                                 .n = 2, .qpos = true};
  CU_ASSERT_EQUAL_FATAL(physclient_step_batch(c, &rq, &f, &err), PHYSCLIENT_OK);
  CU_ASSERT(f.n_worlds == 2 && f.worlds[0] == 2 && f.worlds[1] == 0);
  CU_ASSERT(f.step[0] == 2 && f.sim_time_ns[1] == 4000000 && f.status[0] == 0);
  CU_ASSERT(f.nv == 0 && f.nu == 0);
  /* resets: world 2 to the loaded state, world 1 to keyframe "up"; the frame is reused */
  int32_t rs[] = {2, 1};
  const char *kf[] = {"", "up"};
  const double *qpos_before = f.qpos;
  physclient_batch_request rr = {.reset = rs, .n_reset = 2, .reset_keyframe = kf,
                                 .n_reset_keyframe = 2, .no_step = true, .qpos = true};
  CU_ASSERT_EQUAL_FATAL(physclient_step_batch(c, &rr, &f, &err), PHYSCLIENT_OK);
  CU_ASSERT(f.qpos == qpos_before);
  CU_ASSERT(f.step[0] == 2 && f.step[1] == 0 && f.step[2] == 0 && f.step[3] == 0);
  CU_ASSERT(f.qpos[1 * NQ + 2] == 0.5 && f.qpos[1 * NQ + 7] == 0.3);
  CU_ASSERT(f.qpos[2 * NQ + 2] == 0.3);
  /* the client's refusals: nothing sent */
  physclient_batch_request bad = {.ctrl = NULL, .n_ctrl = 3};
  CU_ASSERT_EQUAL(physclient_step_batch(c, &bad, &f, &err), PHYSCLIENT_EINVAL);
  CU_ASSERT_EQUAL(physclient_step_batch(c, NULL, &f, &err), PHYSCLIENT_EINVAL);
  /* the server's: naming the field, nothing changed */
  int32_t out_of_range[] = {NW};
  physclient_batch_request srv = {.worlds = out_of_range, .n_worlds = 1};
  CU_ASSERT_EQUAL(physclient_step_batch(c, &srv, &f, &err), PHYSCLIENT_ESERVER);
  CU_ASSERT_EQUAL(err.code, PHYSCLIENT_CODE_INVALID_ARGUMENT);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "StepBatch.worlds[0]"));
  CU_ASSERT_EQUAL(f.n_worlds, 0);
  CU_ASSERT_EQUAL_FATAL(physclient_step_batch(c, &obs, &f, &err), PHYSCLIENT_OK);
  CU_ASSERT(f.step[0] == 2 && f.step[3] == 0);
  physclient_batch_frame_free(&f);
  CU_ASSERT(f.qpos == NULL && f.n_worlds == 0);
  physclient_close(c);
}

/* world 3 of a batch of 4 against a batch of 1, both driven with world 3's controls */
static void test_world_equals_lone(void) {
  physclient *c = e2e_connect(&g_d, "e2e-v19-lone");
  physclient_error err;
  enum { T = 30 };
  static double traj[T][NQ + NV];
  for (int pass = 0; pass < 2; pass++) {
    int nw = pass == 0 ? NW : 1, me = pass == 0 ? 3 : 0;
    CU_ASSERT_FATAL(load(c, (uint32_t)nw) == 0);
    physclient_batch_frame f = {0};
    for (int t = 0; t < T; t++) {
      double ctrl[NW * NU];
      for (int w = 0; w < nw; w++)
        for (int a = 0; a < NU; a++) ctrl[w * NU + a] = ctrl_of(t, pass == 0 ? w : 3, a);
      physclient_batch_request rq = {.ctrl = ctrl, .n_ctrl = (size_t)nw * NU, .qpos = true,
                                     .qvel = true};
      CU_ASSERT_EQUAL_FATAL(physclient_step_batch(c, &rq, &f, &err), PHYSCLIENT_OK);
      double row[NQ + NV];
      memcpy(row, f.qpos + me * NQ, NQ * sizeof(double));
      memcpy(row + NQ, f.qvel + me * NV, NV * sizeof(double));
      if (pass == 0) memcpy(traj[t], row, sizeof row);
      else CU_ASSERT(memcmp(traj[t], row, sizeof row) == 0);
    }
    physclient_batch_frame_free(&f);
  }
  CU_ASSERT(fabs(traj[T - 1][7]) > 1e-3); /* the arm moved */
  physclient_close(c);
}

/* clients/c/examples/vec_pd over 256 worlds (the humanoid when MuJoCo's models are there) */
static void test_example(void) {
  const char *bin = getenv("VEC_PD_BIN");
  CU_ASSERT_PTR_NOT_NULL_FATAL(bin); /* meson sets it to the example it builds */
  const char *humanoid = "/usr/share/mujoco/model/humanoid/humanoid.xml";
  FILE *h = fopen(humanoid, "r");
  if (h) fclose(h);
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "%s --socket %s --world %s --worlds 256 --steps 3", bin, g_d.sock,
           h ? humanoid : g_d.world);
  FILE *p = popen(cmd, "r");
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  char out[1024] = "";
  size_t n = fread(out, 1, sizeof out - 1, p);
  out[n] = 0;
  CU_ASSERT_EQUAL(pclose(p), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "\"worlds\": 256, \"env_steps\": 3"));
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "\"finite\": true"));
}

int register_tests(void) {
  if (!e2e_physd_bin()) {
    fprintf(stderr, "PHYSD_BIN is not an executable physd: skipping\n");
    exit(77);
  }
  CU_pSuite s = CU_add_suite("client_v19", suite_init, suite_clean);
  if (!s || !CU_add_test(s, "step_batch", test_step_batch) ||
      !CU_add_test(s, "world_equals_lone", test_world_equals_lone) ||
      !CU_add_test(s, "example_vec_pd", test_example))
    return -1;
  return 0;
}
