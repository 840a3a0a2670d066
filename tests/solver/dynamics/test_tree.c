/* test_tree.c - kinematic trees: CRBA against finite differences of RNEA, the tree-sparse
 * LTDL factorisation against LAPACKE's dense Cholesky, and two pendulums integrated in
 * generalised coordinates (small-angle period, double-pendulum energy). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <lapacke.h>
#include "cunit_main.h"
#include "dynamics/tree.h"
#include "core/math3.h"

#define MAXB 16
#define MAXV (6 * MAXB)

/* deterministic uniform numbers in [lo, hi) */
static unsigned rng_state = 12345u;
static double urand(double lo, double hi) {
  rng_state = rng_state * 1664525u + 1013904223u;
  return lo + (hi - lo) * ((rng_state >> 8) / 16777216.0);
}

static void random_quat(double q[4]) {
  for (int i = 0; i < 4; i++) q[i] = urand(-1, 1);
  q_normalize(q);
}

/* a random tree of n bodies: root free (or hinge), the rest hinge/slide/ball/fixed */
static void random_tree(phys_tree_body *b, int n, int free_root) {
  for (int i = 0; i < n; i++) {
    memset(&b[i], 0, sizeof b[i]);
    b[i].parent = i == 0 ? -1 : (int)urand(0, i);
    b[i].joint = i == 0 ? (free_root ? PHYS_JOINT_FREE : PHYS_JOINT_HINGE)
                        : 1 + (int)urand(0, 4) % 4; /* hinge, slide, ball, free->fixed */
    if (i > 0 && b[i].joint == PHYS_JOINT_FREE) b[i].joint = PHYS_JOINT_FIXED;
    for (int k = 0; k < 3; k++) {
      b[i].pos[k] = urand(-0.5, 0.5);
      b[i].axis[k] = urand(-1, 1);
      b[i].jpos[k] = urand(-0.2, 0.2);
      b[i].com[k] = urand(-0.2, 0.2);
    }
    random_quat(b[i].quat);
    b[i].mass = urand(0.5, 3.0);
    /* principal moments that satisfy the triangle inequality, randomly rotated */
    double a = urand(0.01, 0.1), c = urand(0.01, 0.1), d = urand(0.01, 0.1), R[9], q[4];
    double D[9] = {c + d, 0, 0, 0, a + d, 0, 0, 0, a + c}, T[9], Rt[9];
    random_quat(q);
    q_to_m3(R, q);
    m3_mul(T, R, D);
    m3_transpose(Rt, R);
    m3_mul(b[i].inertia, T, Rt);
  }
}

typedef struct tree_ws {
  phys_tree t;
  int qadr[MAXB], vadr[MAXB], vnum[MAXB], dof_parent[MAXV], dof_body[MAXV];
  double xrot[9 * MAXB], xpos[3 * MAXB], S[6 * MAXV], Iw[36 * MAXB], scratch[36 * MAXB];
} tree_ws;

static void ws_init(tree_ws *ws, const phys_tree_body *b, int n) {
  memset(ws, 0, sizeof *ws);
  ws->t.nbody = n;
  ws->t.body = b;
  ws->t.qadr = ws->qadr;
  ws->t.vadr = ws->vadr;
  ws->t.vnum = ws->vnum;
  ws->t.dof_parent = ws->dof_parent;
  ws->t.dof_body = ws->dof_body;
  CU_ASSERT_EQUAL_FATAL(phys__tree_index(&ws->t), 0);
}

/* kinematics and inertias at qpos */
static void ws_kin(tree_ws *ws, const double *qpos) {
  phys__tree_kinematics(&ws->t, qpos, ws->xrot, ws->xpos, ws->S);
  phys__tree_inertias(&ws->t, ws->xrot, ws->xpos, ws->Iw);
}

/* random configuration: angles, offsets, unit quaternions */
static void random_qpos(const tree_ws *ws, double *q) {
  for (int i = 0; i < ws->t.nbody; i++) {
    double *qi = q + ws->t.qadr[i];
    switch (ws->t.body[i].joint) {
      case PHYS_JOINT_HINGE:
      case PHYS_JOINT_SLIDE: qi[0] = urand(-2, 2); break;
      case PHYS_JOINT_BALL: random_quat(qi); break;
      case PHYS_JOINT_FREE:
        for (int k = 0; k < 3; k++) qi[k] = urand(-1, 1);
        random_quat(qi + 3);
        break;
      default: break;
    }
  }
}

/* CRBA equals the mass matrix from RNEA differences (M e_i = rnea(e_i) - rnea(0)) to 1e-9 */
static void test_crba_vs_rnea(void) {
  for (int trial = 0; trial < 20; trial++) {
    phys_tree_body b[MAXB];
    int n = 3 + trial % 10;
    random_tree(b, n, trial % 2);
    tree_ws ws;
    ws_init(&ws, b, n);
    int nv = ws.t.nv;
    double q[7 * MAXB], qd[MAXV], qdd[MAXV] = {0}, tau0[MAXV], tau1[MAXV], H[MAXV * MAXV];
    double g[3] = {0.3, -0.2, -9.81};
    random_qpos(&ws, q);
    for (int k = 0; k < nv; k++) qd[k] = urand(-1, 1);
    ws_kin(&ws, q);
    phys__tree_crba(&ws.t, ws.S, ws.Iw, H, ws.scratch);
    phys__tree_rnea(&ws.t, ws.S, ws.Iw, qd, qdd, g, tau0, ws.scratch);
    double maxerr = 0.0, scale = 0.0;
    for (int k = 0; k < nv; k++) {
      memset(qdd, 0, sizeof qdd);
      qdd[k] = 1.0;
      phys__tree_rnea(&ws.t, ws.S, ws.Iw, qd, qdd, g, tau1, ws.scratch);
      for (int j = 0; j < nv; j++) {
        double col = tau1[j] - tau0[j];
        maxerr = fmax(maxerr, fabs(col - H[j * nv + k]));
        scale = fmax(scale, fabs(H[j * nv + k]));
      }
    }
    CU_ASSERT_TRUE(maxerr < 1e-9 * fmax(1.0, scale));
    if (trial == 0) printf("\n  CRBA vs RNEA: nv %d, max error %.2e (scale %.2e)\n", nv, maxerr, scale);
  }
}

/* the random tree of trial `trial` of the LTDL tests (3 to 14 links, a free root on every
 * third) in b and ws; returns its link count */
static int trial_tree(int trial, phys_tree_body *b, tree_ws *ws) {
  int n = 3 + trial % 12;
  random_tree(b, n, trial % 3 == 0);
  ws_init(ws, b, n);
  return n;
}

/* the LTDL factor solves like LAPACKE's dense Cholesky to 1e-10, also with SubADMM's H_b */
static void test_ltdl_vs_lapacke(void) {
  for (int trial = 0; trial < 20; trial++) {
    phys_tree_body b[MAXB];
    tree_ws ws;
    int n = trial_tree(trial, b, &ws), nv = ws.t.nv;
    double q[7 * MAXB], H[MAXV * MAXV], A[MAXV * MAXV], x[MAXV], y[MAXV];
    random_qpos(&ws, q);
    ws_kin(&ws, q);

    /* H_b = I_b + beta sum u u^T for a few random contact rows on odd trials */
    if (trial % 2) {
      for (int i = 0; i < n; i++)
        for (int c = 0; c < 3; c++) {
          double u[6];
          for (int r = 0; r < 6; r++) u[r] = urand(-1, 1);
          for (int r = 0; r < 6; r++)
            for (int s = 0; s < 6; s++) ws.Iw[36 * i + 6 * r + s] += 50.0 * u[r] * u[s];
        }
    }
    phys__tree_crba(&ws.t, ws.S, ws.Iw, H, ws.scratch);
    memcpy(A, H, sizeof(double) * nv * nv);
    for (int k = 0; k < nv; k++) x[k] = y[k] = urand(-1, 1);
    CU_ASSERT_EQUAL(phys__tree_ltdl(&ws.t, H), 0);
    phys__tree_ltdl_solve(&ws.t, H, x);
    CU_ASSERT_EQUAL(LAPACKE_dposv(LAPACK_ROW_MAJOR, 'L', nv, 1, A, nv, y, 1), 0);
    double maxerr = 0.0, scale = 0.0;
    for (int k = 0; k < nv; k++) {
      maxerr = fmax(maxerr, fabs(x[k] - y[k]));
      scale = fmax(scale, fabs(y[k]));
    }
    CU_ASSERT_TRUE(maxerr < 1e-10 * fmax(1.0, scale));
    if (trial == 1) printf("\n  LTDL vs LAPACKE: nv %d, max error %.2e\n", nv, maxerr);
  }
  /* a matrix that is not SPD is refused */
  phys_tree_body b[2];
  random_tree(b, 2, 0);
  tree_ws ws;
  ws_init(&ws, b, 2);
  int nv = ws.t.nv; /* 1 + the second link's dofs (0 to 3) */
  double H[MAXV * MAXV] = {0};
  for (int k = 0; k < nv; k++) H[k * nv + k] = 1.0;
  H[nv * nv - 1] = -1.0;
  CU_ASSERT_EQUAL(phys__tree_ltdl(&ws.t, H), -1);
}

/* the packed factorisation (gathered from the dense matrix, factorised in place) leaves the
 * values of the dense factorisation followed by packing, bit for bit, on random trees with and
 * without free roots and penalised inertias; the quadratic form by half a solve agrees with the
 * whole solve; the sparsity the tree keeps (phys__tree_index with
 * ltdl_row/ltdl_i set) equals the one computed for a packed factor; a matrix that is not SPD is
 * refused */
static void test_ltdl_packed_factor(void) {
  int chains = 0;
  for (int trial = 0; trial < 20; trial++) {
    phys_tree_body b[MAXB];
    tree_ws ws;
    int n = trial_tree(trial, b, &ws), nv = ws.t.nv, nnz = phys__tree_ltdl_nnz(&ws.t);
    double q[7 * MAXB], H[MAXV * MAXV];
    random_qpos(&ws, q);
    ws_kin(&ws, q);
    if (trial % 2)
      for (int i = 0; i < n; i++)
        for (int r = 0; r < 6; r++) ws.Iw[36 * i + 7 * r] += 30.0 * urand(0, 1);
    phys__tree_crba(&ws.t, ws.S, ws.Iw, H, ws.scratch);

    int row_a[MAXV + 1], i_a[MAXV * MAXV], row_b[MAXV + 1], i_b[MAXV * MAXV];
    double l_a[MAXV * MAXV], d_a[MAXV], l_b[MAXV * MAXV], d_b[MAXV];
    phys_ltdl_packed dense = {.row = row_a, .i = i_a, .l = l_a, .invd = d_a};
    phys_ltdl_packed packed = {.row = row_b, .i = i_b, .l = l_b, .invd = d_b};
    phys__tree_ltdl_structure(&ws.t, &packed);
    CU_ASSERT_EQUAL(packed.nnz, nnz);
    phys__tree_ltdl_gather(H, &packed);
    CU_ASSERT_EQUAL(phys__tree_ltdl_factor_packed(&packed), 0);
    CU_ASSERT_EQUAL(phys__tree_ltdl(&ws.t, H), 0);
    phys__tree_ltdl_pack(&ws.t, H, &dense);
    CU_ASSERT_EQUAL(memcmp(row_a, row_b, sizeof(int) * (size_t)(nv + 1)), 0);
    CU_ASSERT_EQUAL(memcmp(i_a, i_b, sizeof(int) * (size_t)nnz), 0);
    CU_ASSERT_EQUAL(memcmp(l_a, l_b, sizeof(double) * (size_t)nnz), 0);
    CU_ASSERT_EQUAL(memcmp(d_a, d_b, sizeof(double) * (size_t)nv), 0);

    /* g^T H^-1 g by half a solve equals g . (H^-1 g) by a whole one, for a dense g and a
     * unit row */
    for (int unit = 0; unit < 2; unit++) {
      double g[MAXV], x[MAXV], y[MAXV], full = 0.0;
      for (int k = 0; k < nv; k++) g[k] = unit ? (k == nv - 1) : urand(-1, 1);
      memcpy(x, g, sizeof(double) * (size_t)nv);
      memcpy(y, g, sizeof(double) * (size_t)nv);
      phys__tree_ltdl_solve_packed(&packed, y);
      for (int k = 0; k < nv; k++) full += g[k] * y[k];
      double half = phys__tree_ltdl_quad_packed(&packed, x);
      CU_ASSERT_TRUE(full > 0.0 && fabs(half - full) <= 1e-12 * full);
      /* the chain's path (a free root's six dofs in registers) and the general one agree bit
       * for bit */
      phys_ltdl_packed general = packed;
      general.nchain = 0;
      double xg[MAXV];
      memcpy(xg, g, sizeof(double) * (size_t)nv);
      double half_g = phys__tree_ltdl_quad_packed(&general, xg);
      CU_ASSERT_EQUAL(memcmp(&half_g, &half, sizeof half), 0);
      CU_ASSERT_EQUAL(memcmp(xg, x, sizeof(double) * (size_t)nv), 0);
      memcpy(x, g, sizeof(double) * (size_t)nv);
      phys__tree_ltdl_solve_packed(&general, x);
      CU_ASSERT_EQUAL(memcmp(x, y, sizeof(double) * (size_t)nv), 0);
    }
    chains += packed.nchain >= 6;

    /* the tree's own copy of the sparsity */
    int row_t[MAXV + 1], i_t[MAXV * MAXV];
    ws.t.ltdl_row = row_t;
    ws.t.ltdl_i = i_t;
    CU_ASSERT_EQUAL(phys__tree_index(&ws.t), 0);
    CU_ASSERT_EQUAL(memcmp(row_t, row_b, sizeof(int) * (size_t)(nv + 1)), 0);
    CU_ASSERT_EQUAL(memcmp(i_t, i_b, sizeof(int) * (size_t)nnz), 0);
    CU_ASSERT_EQUAL(ws.t.ltdl_chain, packed.nchain);
  }
  CU_ASSERT_TRUE(chains > 0); /* the free roots took the chain's path */
  /* not SPD */
  phys_tree_body b[2];
  random_tree(b, 2, 0);
  tree_ws ws;
  ws_init(&ws, b, 2);
  int row[MAXV + 1], ii[MAXV * MAXV], nv = ws.t.nv;
  double l[MAXV * MAXV], d[MAXV], H[MAXV * MAXV] = {0};
  for (int k = 0; k < nv; k++) H[k * nv + k] = 1.0;
  H[nv * nv - 1] = -1.0; /* the deepest dof's pivot, the first one factorised */
  phys_ltdl_packed p = {.row = row, .i = ii, .l = l, .invd = d};
  phys__tree_ltdl_structure(&ws.t, &p);
  phys__tree_ltdl_gather(H, &p);
  CU_ASSERT_EQUAL(phys__tree_ltdl_factor_packed(&p), -1);
}

/* semi-implicit Euler in generalised coordinates for hinge chains: qdd = M^-1 (-bias) */
static void chain_step(tree_ws *ws, double *q, double *qd, double h, const double g[3]) {
  int nv = ws->t.nv;
  double H[MAXV * MAXV], bias[MAXV], zero[MAXV] = {0};
  ws_kin(ws, q);
  phys__tree_crba(&ws->t, ws->S, ws->Iw, H, ws->scratch);
  phys__tree_rnea(&ws->t, ws->S, ws->Iw, qd, zero, g, bias, ws->scratch);
  for (int k = 0; k < nv; k++) bias[k] = -bias[k];
  CU_ASSERT_EQUAL(phys__tree_ltdl(&ws->t, H), 0);
  phys__tree_ltdl_solve(&ws->t, H, bias);
  for (int k = 0; k < nv; k++) {
    qd[k] += h * bias[k];
    q[k] += h * qd[k];
  }
}

/* generalised accelerations of a hinge chain at (q, qd) */
static void chain_qdd(tree_ws *ws, const double *q, const double *qd, const double g[3],
                      double *qdd) {
  int nv = ws->t.nv;
  double H[MAXV * MAXV], zero[MAXV] = {0};
  ws_kin(ws, q);
  phys__tree_crba(&ws->t, ws->S, ws->Iw, H, ws->scratch);
  phys__tree_rnea(&ws->t, ws->S, ws->Iw, qd, zero, g, qdd, ws->scratch);
  for (int k = 0; k < nv; k++) qdd[k] = -qdd[k];
  CU_ASSERT_EQUAL(phys__tree_ltdl(&ws->t, H), 0);
  phys__tree_ltdl_solve(&ws->t, H, qdd);
}

/* one classical Runge-Kutta step of a hinge chain (checks the dynamics, not an integrator) */
static void chain_rk4(tree_ws *ws, double *q, double *qd, double h, const double g[3]) {
  int nv = ws->t.nv;
  double k1q[MAXV], k1v[MAXV], k2q[MAXV], k2v[MAXV], k3q[MAXV], k3v[MAXV], k4q[MAXV], k4v[MAXV];
  double tq[MAXV], tv[MAXV];
  memcpy(k1q, qd, sizeof(double) * nv);
  chain_qdd(ws, q, qd, g, k1v);
  for (int k = 0; k < nv; k++) { tq[k] = q[k] + 0.5 * h * k1q[k]; tv[k] = qd[k] + 0.5 * h * k1v[k]; }
  memcpy(k2q, tv, sizeof(double) * nv);
  chain_qdd(ws, tq, tv, g, k2v);
  for (int k = 0; k < nv; k++) { tq[k] = q[k] + 0.5 * h * k2q[k]; tv[k] = qd[k] + 0.5 * h * k2v[k]; }
  memcpy(k3q, tv, sizeof(double) * nv);
  chain_qdd(ws, tq, tv, g, k3v);
  for (int k = 0; k < nv; k++) { tq[k] = q[k] + h * k3q[k]; tv[k] = qd[k] + h * k3v[k]; }
  memcpy(k4q, tv, sizeof(double) * nv);
  chain_qdd(ws, tq, tv, g, k4v);
  for (int k = 0; k < nv; k++) {
    q[k] += h / 6.0 * (k1q[k] + 2 * k2q[k] + 2 * k3q[k] + k4q[k]);
    qd[k] += h / 6.0 * (k1v[k] + 2 * k2v[k] + 2 * k3v[k] + k4v[k]);
  }
}

/* total energy of a hinge chain */
static double chain_energy(tree_ws *ws, const double *q, const double *qd, const double g[3]) {
  int nv = ws->t.nv;
  double H[MAXV * MAXV], e = 0.0;
  ws_kin(ws, q);
  phys__tree_crba(&ws->t, ws->S, ws->Iw, H, ws->scratch);
  for (int i = 0; i < nv; i++)
    for (int j = 0; j < nv; j++) e += 0.5 * qd[i] * H[i * nv + j] * qd[j];
  for (int i = 0; i < ws->t.nbody; i++) {
    double c[3];
    m3_mulv(c, ws->xrot + 9 * i, ws->t.body[i].com);
    v3_add(c, c, ws->xpos + 3 * i);
    e -= ws->t.body[i].mass * v3_dot(g, c);
  }
  return e;
}

/* a hinge pendulum, point-like bob at l = 1 m: small-angle period within 0.5 % */
static void test_pendulum_period(void) {
  phys_tree_body b;
  memset(&b, 0, sizeof b);
  b.parent = -1;
  b.joint = PHYS_JOINT_HINGE;
  q_identity(b.quat);
  b.axis[1] = 1.0;
  b.mass = 1.0;
  b.com[2] = -1.0;
  for (int k = 0; k < 3; k++) b.inertia[4 * k] = 1e-6;
  tree_ws ws;
  ws_init(&ws, &b, 1);
  double q[1] = {0.05}, qd[1] = {0}, g[3] = {0, 0, -9.81}, h = 1e-3, prev = q[0], t = 0;
  double first = -1, last = -1;
  int crossings = 0;
  for (int i = 0; i < 10000; i++) {
    chain_step(&ws, q, qd, h, g);
    t += h;
    if (prev > 0 && q[0] <= 0) {
      double tc = t - h * q[0] / (q[0] - prev);
      if (first < 0) first = tc;
      last = tc;
      crossings++;
    }
    prev = q[0];
  }
  double period = (last - first) / (crossings - 1), expected = 2 * M_PI * sqrt(1.0 / 9.81);
  printf("\n  pendulum: period %.5f s, expected %.5f s\n", period, expected);
  CU_ASSERT_DOUBLE_EQUAL(period, expected, 0.005 * expected);
}

/* a frictionless double pendulum released at 90 degrees, integrated with RK4 at 1 ms: energy
 * within 0.01 % over 10 s, so RNEA and CRBA describe a conservative system (semi-implicit
 * Euler at 1 ms loses 2.3 % here: the engine's integrator is a separate matter) */
static void test_double_pendulum_energy(void) {
  phys_tree_body b[2];
  memset(b, 0, sizeof b);
  for (int i = 0; i < 2; i++) {
    b[i].parent = i - 1;
    b[i].joint = PHYS_JOINT_HINGE;
    q_identity(b[i].quat);
    b[i].axis[1] = 1.0;
    b[i].mass = 1.0;
    b[i].com[2] = -0.5;
    double rod = 1.0 / 12.0; /* thin 1 kg rod of 1 m about its centre */
    b[i].inertia[0] = b[i].inertia[4] = rod;
    b[i].inertia[8] = 1e-4;
  }
  b[1].pos[2] = -1.0;
  tree_ws ws;
  ws_init(&ws, b, 2);
  double q[2] = {M_PI / 2, 0.0}, qd[2] = {0, 0}, g[3] = {0, 0, -9.81};
  double e0 = chain_energy(&ws, q, qd, g), emax = 0.0;
  for (int i = 0; i < 10000; i++) {
    chain_rk4(&ws, q, qd, 1e-3, g);
    double e = chain_energy(&ws, q, qd, g);
    emax = fmax(emax, fabs(e - e0));
  }
  /* the energy scale: the potential energy the release makes available */
  double scale = 9.81 * (0.5 + 1.5);
  printf("\n  double pendulum: max energy error %.3g J of %.3g J (%.3f %%)\n", emax, scale,
         100 * emax / scale);
  CU_ASSERT_TRUE(emax < 1e-4 * scale);
}

int register_tests(void) {
  CU_pSuite s = CU_add_suite("tree", NULL, NULL);
  if (!s) return -1;
  if (!CU_add_test(s, "CRBA equals RNEA differences", test_crba_vs_rnea) ||
      !CU_add_test(s, "LTDL solves like LAPACKE", test_ltdl_vs_lapacke) ||
      !CU_add_test(s, "packed LTDL factor equals the dense one", test_ltdl_packed_factor) ||
      !CU_add_test(s, "pendulum period", test_pendulum_period) ||
      !CU_add_test(s, "double pendulum energy", test_double_pendulum_energy))
    return -1;
  return 0;
}
