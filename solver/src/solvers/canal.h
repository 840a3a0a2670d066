/* canal.h - CANAL (paper 002 sec. 5): the per-row-set model of its surrogate (the prox onto the
 * friction cone and the other row kinds, canal_model.c) and the solver's workspace (canal.c).
 * Private to the solver and its tests. */
#ifndef PHYS_SOLVERS_CANAL_H
#define PHYS_SOLVERS_CANAL_H

#include "solvers/newton.h"
#include "solvers/solver.h"

/* row-set model types (phys_newton_row.type) */
enum {
  CANAL_ROW_CONE = 0,   /* 3-row contact: prox onto { ||x_t|| <= mu x_n }, par[0] = mu */
  CANAL_ROW_NORMAL = 1, /* one row (frictionless contact, joint or tendon limit): max(0, x_n) */
  CANAL_ROW_FREE = 2,   /* hard bilateral rows (connect, weld): lambda = x */
  CANAL_ROW_SOFT = 3,   /* spring-damper rows: lambda = c x / (c + beta), par = c per row */
  CANAL_ROW_DISK = 4,   /* a condim 4/6 contact's angular rows: rolling (t1, t2) in the disk of
                           radius par[0], torsion (n) in [-par[1], par[1]]; both radii frozen
                           from the previous AL iteration's normal impulse */
  CANAL_ROW_BOX = 5     /* one row (a dof's dry friction): x_n clamped to [-par[0], par[0]] */
};

/* the prox onto the friction cone C = {||x_t|| <= mu x_n}, components (t1, t2, n), and its
 * generalised derivative (23) (symmetric; NULL D: not computed). Returns the region: 0 open
 * (polar cone), 1 stick (inside C), 2 slip. Pure. */
int phys__canal_prox_cone(double mu, const double x[3], double lam[3], double D[9]);

/* the model callbacks (newton.h) of CANAL's row types */
void phys__canal_model_eval(const phys_newton_row *row, double beta, const double x[3],
                            double lam[3], double D[9]);
double phys__canal_model_potential(const phys_newton_row *row, double beta, const double x[3]);

/* one island's CANAL state */
typedef struct phys_canal_island {
  phys_dense d;
  phys_newton nt;
  double *lam_prev;      /* 3 per row set: lambda^l of the last AL iteration */
  double *zt;            /* per row set: ||z_t|| of the last AL iteration (cascade p) */
  double beta;
  int al_iters, newton_iters, ls_failures, factor_failures, descent_failures, status, sparse;
} phys_canal_island;

typedef struct phys_canal_ws {
  phys_canal_island *isl; /* per island */
} phys_canal_ws;

/* islands with at least this many dofs use the sparse (CHOLMOD) Hessian when it is built in
 * (measured crossover, docs/engine.md); tests and benchmarks may change it between steps */
extern int phys__canal_sparse_min_dofs;

/* test hooks, NULL/0 in normal runs: an observer called after every multiplier update with
 * the island, the AL iteration, beta, and per row set u (from eq. 12) and lambda (3 each)
 * (phys__newton_test_fault injects faults) */
typedef void (*phys_canal_observer)(int k, int l, double beta, const phys_newton *nt,
                                    const double *u, const double *lam);
extern phys_canal_observer phys__canal_test_observer;

#endif
