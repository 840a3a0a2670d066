/* test_problem.c - the assembled problem's shared kernels, white-box: the Delassus diagonal
 * (J A^-1 J^T)_rr of every row of a step's problem, computed directly by phys__delassus_diag,
 * equals the response of that row to a unit impulse through the accuracy metric's path
 * (J^T e, the subsystems' A^-1, then J), on scenes with free bodies, links, condim 4 contacts,
 * joint limits, a connect between two trees and one within a tree. An island's dense rows
 * (constraints/dense.h) give the same J v as the pieces, the same Delassus diagonal through
 * the dense A, and the same free motion A^-1 b. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cunit_main.h"
#include "loader_util.h"
#include <lapacke.h>
#include "constraints/dense.h"
#include "constraints/problem.h"
#include "constraints/rows.h"
#include "solvers/solver.h"

/* row r of row set ci at the metric velocities: (J vm)_r */
static double row_velocity(const phys_problem *s, int ci, int r) {
  const phys_con *c = &s->con[ci];
  if (c->kind == PHYS_CON_LIMIT)
    return (c->side == 0 ? 1.0 : -1.0) * s->tree[c->tree].qdm[c->dof];
  double sum = 0.0;
  for (int k = 0; k < c->np; k++) {
    const phys_piece *p = &s->piece[c->p0 + k];
    double jv[3];
    piece_jv(c, p, s->vm + 6 * p->sb, jv);
    sum += jv[r];
  }
  return sum;
}

/* (J A^-1 J^T)_rr by a unit impulse on row r of row set ci, every other impulse and every
 * momentum zero, through phys__metric_velocity */
static double unit_response(const phys_world *w, phys_problem *s, int ci, int r) {
  for (int k = 0; k < s->ncon; k++) memset(s->con[k].lambda, 0, sizeof s->con[k].lambda);
  memset(s->base, 0, 6 * sizeof(double) * (size_t)s->nb);
  for (int k = 0; k < s->ntrees; k++)
    memset(s->tree[k].base, 0, sizeof(double) * (size_t)s->tree[k].nv);
  s->con[ci].lambda[r] = 1.0;
  for (int sb = 0; sb < s->nb; sb++) phys__metric_velocity(w, s, sb);
  return row_velocity(s, ci, r);
}

/* check every row of the step's problem after `steps` steps; counts what it saw by kind */
static void check_scene(const char *xml, int steps, int *contacts, int *limits, int *connects,
                        int *angular) {
  phys_world *w = must_load(xml);
  for (int i = 0; i < steps; i++) CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
  phys_problem s;
  double tc, ti;
  CU_ASSERT_EQUAL_FATAL(phys__step_assemble(w, &s, &tc, &ti), PHYS_OK);
  double scratch[2 * 64];
  CU_ASSERT_FATAL(phys__problem_max_nv(&s) <= 64);
  /* the scale of the diagonal: a row that no subsystem can move (along a hinge's axis on a
   * link lying flat) has a zero diagonal, met to round-off relative to the others */
  double scale = 0.0;
  for (int ci = 0; ci < s.ncon; ci++) {
    double d[3];
    phys__delassus_diag(w, &s, ci, d, scratch);
    for (int r = 0; r < 3; r++) scale = fmax(scale, d[r]);
  }
  CU_ASSERT(scale > 0.0);
  double worst = 0.0;
  for (int ci = 0; ci < s.ncon; ci++) {
    const phys_con *c = &s.con[ci];
    *contacts += c->kind == PHYS_CON_CONTACT && !c->ang;
    *angular += c->kind == PHYS_CON_CONTACT && c->ang;
    *limits += c->kind == PHYS_CON_LIMIT;
    *connects += c->kind == PHYS_CON_CONNECT;
    double d[3];
    phys__delassus_diag(w, &s, ci, d, scratch);
    for (int r = 3 - c->dim; r < 3; r++) {
      double ref = unit_response(w, &s, ci, r);
      double err = fabs(d[r] - ref) / fmax(fabs(ref), 1e-12 * scale);
      CU_ASSERT(d[r] >= -1e-15 * scale);
      if (err > worst) worst = err;
      if (!(err < 1e-9))
        printf("\n  row set %d (kind %d, ang %d) row %d: direct %.12e, unit response %.12e", ci,
               c->kind, c->ang, r, d[r], ref);
      CU_ASSERT(err < 1e-9);
    }
  }
  printf("\n  %d row sets, worst relative difference %.1e", s.ncon, worst);
  phys_world_destroy(w);
}

/* free boxes on the ground and on an arm lying on it, a limited hinge at its stop, a condim 4
 * geom, and a connect from a free sphere to the arm */
static const char *scene_mixed =
  "<mujoco><option timestep='0.002'/><worldbody>"
  "<geom type='plane' size='5 5 0.1'/>"
  "<body pos='0 0 0.1'><freejoint/><geom type='box' size='0.1 0.1 0.1'/></body>"
  "<body pos='0 0 0.3'><freejoint/><geom type='box' size='0.1 0.1 0.1' condim='4'/></body>"
  "<body name='arm' pos='1 0 0.05'>"
  "  <joint type='hinge' axis='0 1 0' limited='true' range='0 5'/>"
  "  <geom type='capsule' fromto='0 0 0 0.5 0 0' size='0.05'/>"
  "  <body name='fore' pos='0.5 0 0'>"
  "    <joint type='hinge' axis='0 0 1'/>"
  "    <geom type='capsule' fromto='0 0 0 0.4 0 0' size='0.05'/>"
  "  </body>"
  "</body>"
  "<body pos='1.2 0 0.2'><freejoint/><geom type='box' size='0.05 0.05 0.05'/></body>"
  "<body name='ball' pos='2.5 0 1'><freejoint/><geom type='sphere' size='0.05'/></body>"
  "</worldbody>"
  "<equality><connect body1='ball' body2='fore' anchor='0 0 0'/></equality>"
  "</mujoco>";

/* a chain of three links whose first and last are joined by a connect: both pieces of that row
 * set sit on one tree, so the diagonal needs their cross term */
static const char *scene_loop =
  "<mujoco><option timestep='0.001' gravity='0 0 -9.81'/><worldbody>"
  "<body name='l1' pos='0 0 1'><joint type='hinge' axis='0 1 0'/>"
  "  <geom type='capsule' fromto='0 0 0 0.3 0 0' size='0.02' contype='0' conaffinity='0'/>"
  "  <body name='l2' pos='0.3 0 0'><joint type='hinge' axis='0 1 0'/>"
  "    <geom type='capsule' fromto='0 0 0 0 0 -0.3' size='0.02' contype='0' conaffinity='0'/>"
  "    <body name='l3' pos='0 0 -0.3'><joint type='hinge' axis='0 1 0'/>"
  "      <geom type='capsule' fromto='0 0 0 -0.3 0 0' size='0.02' contype='0' conaffinity='0'/>"
  "    </body>"
  "  </body>"
  "</body>"
  "</worldbody>"
  "<equality><connect body1='l1' body2='l3' anchor='0 0 -0.3'/></equality>"
  "</mujoco>";

static void test_delassus_mixed(void) {
  int contacts = 0, limits = 0, connects = 0, angular = 0;
  check_scene(scene_mixed, 150, &contacts, &limits, &connects, &angular);
  CU_ASSERT(contacts >= 8);
  CU_ASSERT(angular >= 1);
  CU_ASSERT(limits >= 1);
  CU_ASSERT(connects >= 1);
}

static void test_delassus_same_tree(void) {
  int contacts = 0, limits = 0, connects = 0, angular = 0;
  check_scene(scene_loop, 20, &contacts, &limits, &connects, &angular);
  CU_ASSERT_EQUAL(connects, 1);
}

/* v* = A^-1 base, from the kernel, is what the solver gives when nothing constrains the bodies:
 * a free body falling and tumbling, and a driven double pendulum, with no contact */
static void test_free_velocity(void) {
  static const char *xml =
    "<mujoco><option timestep='0.002'/><worldbody>"
    "<body pos='0 0 5'><freejoint/><geom type='box' size='0.1 0.2 0.3'/></body>"
    "<body name='l1' pos='3 0 5'><joint type='hinge' axis='0 1 0' damping='0.3'/>"
    "  <geom type='capsule' fromto='0 0 0 0.4 0 0' size='0.03'/>"
    "  <body pos='0.4 0 0'><joint type='hinge' axis='0 1 0' stiffness='20'/>"
    "    <geom type='capsule' fromto='0 0 0 0.4 0 0.1' size='0.03'/></body>"
    "</body></worldbody></mujoco>";
  phys_world *w = must_load(xml);
  for (int i = 0; i < 3; i++) CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
  CU_ASSERT_EQUAL(phys_body_set_state(w, 0, NULL, NULL, (double[3]){0.1, -0.2, 0.3},
                                      (double[3]){2.0, -1.0, 0.5}), PHYS_OK);
  phys_problem s;
  double tc, ti, v[6 * 8], qd[16], vref[6 * 8];
  CU_ASSERT_EQUAL_FATAL(phys__step_assemble(w, &s, &tc, &ti), PHYS_OK);
  CU_ASSERT_EQUAL_FATAL(s.ncon, 0);
  CU_ASSERT_FATAL(s.nb <= 8 && s.ntrees == 1 && s.tree[0].nv <= 16);
  for (int sb = 0; sb < s.nb; sb++) phys__free_velocity(w, &s, sb, v, qd);
  /* the solver on the same problem: with no row, its one v-update is the free motion */
  CU_ASSERT_EQUAL_FATAL(phys__solve_islands(w, &s), PHYS_OK);
  memcpy(vref, s.v, 6 * sizeof(double) * (size_t)s.nb);
  double worst = 0.0;
  for (int i = 0; i < 6 * s.nb; i++)
    worst = fmax(worst, fabs(v[i] - vref[i]) / fmax(1.0, fabs(vref[i])));
  for (int d = 0; d < s.tree[0].nv; d++)
    worst = fmax(worst, fabs(qd[d] - s.tree[0].qd[d]) / fmax(1.0, fabs(s.tree[0].qd[d])));
  printf("\n  free velocity against the unconstrained solve: worst %.1e", worst);
  CU_ASSERT(worst < 1e-12);
  /* and it is not the start velocity: gravity and the spring act */
  CU_ASSERT(fabs(vref[2] - 0.3) > 1e-3);
  phys_world_destroy(w);
}

/* island k's dense rows against the piece kernels: J v for a random island vector (scattered
 * into the bodies and read back by piece_jv), J A^-1 J^T on the diagonal against
 * phys__delassus_diag, v^T (sum J^T J) v against sum (J v)^2, and A^-1 b against the free-motion
 * kernel. Returns the worst relative difference. */
static double check_dense_island(phys_world *w, phys_problem *s, int k, int *rows_seen) {
  phys_dense d;
  CU_ASSERT_EQUAL_FATAL(phys__dense_build(w, s, k, &w->arena, 4096, &d), 0);
  int n = d.n, c0 = s->isl_con_start[k], c1 = s->isl_con_start[k + 1];
  double *v = calloc((size_t)n, sizeof *v), *x = calloc((size_t)n, sizeof *x);
  double *A = calloc((size_t)n * n, sizeof *A), *K = calloc((size_t)n * n, sizeof *K);
  double scratch[2 * 64], worst = 0.0;
  unsigned seed = 12345u + (unsigned)k;
  for (int i = 0; i < n; i++) {
    seed = seed * 1103515245u + 12345u;
    v[i] = (double)(seed >> 8) / (double)(1u << 24) - 0.5;
  }

  /* J v: dense rows against the pieces at the scattered velocities */
  phys__dense_scatter(w, s, &d, v);
  for (int sb = s->isl_body_start[k]; sb < s->isl_body_start[k + 1]; sb++)
    memcpy(s->vm + 6 * sb, s->v + 6 * sb, 6 * sizeof(double));
  for (int t = 0; t < s->ntrees; t++)
    memcpy(s->tree[t].qdm, s->tree[t].qd, sizeof(double) * (size_t)s->tree[t].nv);
  for (int ci = c0; ci < c1; ci++)
    for (int r = phys__dense_first_row(&s->con[ci]); r < 3; r++) {
      double a = phys__dense_row_dot(s, &d, ci, r, v), b = row_velocity(s, ci, r);
      worst = fmax(worst, fabs(a - b) / fmax(1.0, fabs(b)));
      (*rows_seen)++;
    }

  /* the Delassus diagonal through the dense A's Cholesky factor */
  phys__dense_fill_A(w, s, &d, A);
  CU_ASSERT_EQUAL_FATAL(LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', n, A, n), 0);
  for (int ci = c0; ci < c1; ci++) {
    double dg[3];
    phys__delassus_diag(w, s, ci, dg, scratch);
    for (int r = phys__dense_first_row(&s->con[ci]); r < 3; r++) {
      memset(x, 0, sizeof(double) * (size_t)n);
      phys__dense_row_add(s, &d, ci, r, 1.0, x);
      CU_ASSERT_EQUAL_FATAL(LAPACKE_dpotrs(LAPACK_COL_MAJOR, 'L', n, 1, A, n, x, n), 0);
      double ref = phys__dense_row_dot(s, &d, ci, r, x);
      worst = fmax(worst, fabs(dg[r] - ref) / fmax(fabs(ref), 1e-9));
    }
  }

  /* v^T (sum_r J_r^T J_r) v = sum_r (J_r v)^2, and the matrix is symmetric */
  double sq = 0.0, quad = 0.0;
  for (int ci = c0; ci < c1; ci++)
    for (int r = phys__dense_first_row(&s->con[ci]); r < 3; r++) {
      phys__dense_add_outer(s, &d, ci, r, r, 1.0, K);
      double jv = phys__dense_row_dot(s, &d, ci, r, v);
      sq += jv * jv;
    }
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      quad += v[i] * K[(size_t)i * n + j] * v[j];
      CU_ASSERT(fabs(K[(size_t)i * n + j] - K[(size_t)j * n + i]) <=
                1e-12 * fmax(1.0, fabs(K[(size_t)i * n + j])));
    }
  worst = fmax(worst, fabs(quad - sq) / fmax(1.0, sq));

  /* free motion: A^-1 b from the dense system against phys__free_velocity */
  phys__dense_base(s, &d, x);
  CU_ASSERT_EQUAL_FATAL(LAPACKE_dpotrs(LAPACK_COL_MAJOR, 'L', n, 1, A, n, x, n), 0);
  double *vf = calloc(6 * (size_t)s->nb, sizeof *vf), qd[64];
  for (int sb = s->isl_body_start[k]; sb < s->isl_body_start[k + 1]; sb++) {
    int off, m;
    phys__dense_sub_range(s, &d, sb, &off, &m);
    if (d.off[sb - d.b0] < 0) continue;
    CU_ASSERT_FATAL(m <= 64);
    phys__free_velocity(w, s, sb, vf, qd);
    const double *ref = s->sb_tree[sb] < 0 ? vf + 6 * sb : qd;
    for (int i = 0; i < m; i++) worst = fmax(worst, fabs(x[off + i] - ref[i]) / fmax(1.0, fabs(ref[i])));
  }
  free(vf);
  free(v);
  free(x);
  free(A);
  free(K);
  return worst;
}

static void dense_scene(const char *xml, int steps, int min_rows) {
  phys_world *w = must_load(xml);
  for (int i = 0; i < steps; i++) CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
  phys_problem s;
  double tc, ti, worst = 0.0;
  int rows = 0;
  CU_ASSERT_EQUAL_FATAL(phys__step_assemble(w, &s, &tc, &ti), PHYS_OK);
  for (int k = 0; k < s.nislands; k++) worst = fmax(worst, check_dense_island(w, &s, k, &rows));
  printf("\n  %d islands, %d rows: worst relative difference %.1e", s.nislands, rows, worst);
  CU_ASSERT(rows >= min_rows);
  CU_ASSERT(worst < 1e-9);
  phys_world_destroy(w);
}

static void test_dense_rows(void) {
  dense_scene(scene_mixed, 150, 30);
  dense_scene(scene_loop, 20, 3);
}

/* an island over the dof cap is refused with -2 */
static void test_dense_cap(void) {
  phys_world *w = must_load(scene_mixed);
  for (int i = 0; i < 150; i++) CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
  phys_problem s;
  double tc, ti;
  phys_dense d;
  CU_ASSERT_EQUAL_FATAL(phys__step_assemble(w, &s, &tc, &ti), PHYS_OK);
  CU_ASSERT_EQUAL(phys__dense_build(w, &s, 0, &w->arena, 5, &d), -2);
  phys_world_destroy(w);
}

int register_tests(void) {
  CU_pSuite s = CU_add_suite("problem", NULL, NULL);
  if (!s) return -1;
  if (!CU_add_test(s, "Delassus diagonal = unit response (free bodies, links, limits)",
                   test_delassus_mixed) ||
      !CU_add_test(s, "Delassus diagonal with both pieces on one tree", test_delassus_same_tree) ||
      !CU_add_test(s, "free-motion velocity = the unconstrained solve", test_free_velocity) ||
      !CU_add_test(s, "an island's dense rows agree with the piece kernels", test_dense_rows) ||
      !CU_add_test(s, "an island over the dense dof cap is refused", test_dense_cap))
    return -1;
  return 0;
}
