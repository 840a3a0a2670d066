/* solver_table.c - the one list of contact solvers: names, what each declares, its callbacks;
 * and the public lookups by kind and by name (phys_solver_*). Adding a solver is one row here
 * plus its own files; every entry point (options, MJCF, the daemon, physbench, physctl) takes
 * its names from this table. */
#include <stdio.h>
#include <string.h>
#include "solvers/solver.h"

/* ICF's contacts enter the problem icf.margin before they touch (paper 001 sec. X) */
static double icf_margin(const phys_world_options *o) { return o->icf.margin; }

static const phys_solver_def solver_table[PHYS_SOLVER_COUNT] = {
  {PHYS_SOLVER_SUBADMM, "subadmm",
   "SubADMM (paper 002 sec. 6): ADMM split per subsystem and per body, tree-sparse factors",
   1, 1, phys__subadmm_prepare, phys__subadmm_solve_island, phys__subadmm_stats, NULL, 0, 0},
  {PHYS_SOLVER_SUBADMM_NOSUB, "subadmm-nosub",
   "No Sub ablation (paper 002 Table III): vanilla ADMM, one dense factor per island",
   1, 0, phys__subadmm_prepare, phys__subadmm_solve_island, phys__subadmm_stats, NULL, 0, 0},
  {PHYS_SOLVER_SUBADMM_NOBODY, "subadmm-nobody",
   "No Body ablation (paper 002 Table III): per subsystem, dense tree factors",
   1, 1, phys__subadmm_prepare, phys__subadmm_solve_island, phys__subadmm_stats, NULL, 0, 0},
  {PHYS_SOLVER_CANAL, "canal",
   "CANAL (paper 002 sec. 5): augmented Lagrangian, Newton on the cone's prox, exact line search",
   1, 0, phys__canal_prepare, phys__canal_solve_island, phys__canal_stats, NULL, 0, 0},
  {PHYS_SOLVER_PGS, "pgs",
   "PGS (paper 002 sec. 9): projected Gauss-Seidel on Delassus blocks, graph-coloured sweeps",
   1, 1, phys__pgs_prepare, phys__pgs_solve_island, phys__pgs_stats, NULL, 0, 0},
  {PHYS_SOLVER_SAP, "sap",
   "SAP (paper 000): compliant contact, one convex problem, Newton with exact line search",
   0, 0, phys__sap_prepare, phys__sap_solve_island, phys__sap_stats, NULL, 1, 1},
  {PHYS_SOLVER_ICF_LAGGED, "icf-lagged",
   "ICF Lagged (paper 001): compliant Hunt & Crossley contact, last step's normal impulse in friction",
   0, 0, phys__icf_lagged_prepare, phys__sap_solve_island, phys__sap_stats, icf_margin, 1, 1},
  {PHYS_SOLVER_ICF_SIMILAR, "icf-similar",
   "ICF Similar (paper 001): compliant Hunt & Crossley contact at z = v_n - mu ||v_t||_s",
   0, 0, phys__icf_similar_prepare, phys__sap_solve_island, phys__sap_stats, icf_margin, 1, 1},
  {PHYS_SOLVER_NSN, "nsn",
   "NSN (paper 003): non-smooth Newton on NCP rows, matrix-free PCR or GMRES on the Schur complement",
   1, 0, phys__nsn_prepare, phys__nsn_solve_island, phys__nsn_stats, NULL, 0, 0},
  {PHYS_SOLVER_FIRSTORDER, "firstorder",
   "First-order stable (paper 004): implicit spring-damper rows, one convex problem on sap's Newton",
   0, 0, phys__firstorder_prepare, phys__firstorder_solve_island, phys__firstorder_stats,
   phys__firstorder_margin, 0, 0},
};

double phys__solver_contact_margin(const phys_world_options *o) {
  const phys_solver_def *d = phys__solver_def(o->solver);
  return o->contact_margin + (d && d->margin ? d->margin(o) : 0.0);
}

const phys_solver_def *phys__solver_def(phys_solver_kind kind) {
  if ((int)kind < 0 || (int)kind >= PHYS_SOLVER_COUNT) return NULL;
  return &solver_table[kind];
}

int phys_solver_count(void) { return PHYS_SOLVER_COUNT; }

const char *phys_solver_name(int kind) {
  const phys_solver_def *d = phys__solver_def((phys_solver_kind)kind);
  return d ? d->name : NULL;
}

const char *phys_solver_summary(int kind) {
  const phys_solver_def *d = phys__solver_def((phys_solver_kind)kind);
  return d ? d->summary : NULL;
}

phys_status phys_solver_find(const char *name, phys_solver_kind *out, phys_error *err) {
  for (int k = 0; name && k < PHYS_SOLVER_COUNT; k++)
    if (strcmp(name, solver_table[k].name) == 0) {
      if (out) *out = (phys_solver_kind)k;
      return PHYS_OK;
    }
  /* the known names, for the message */
  char known[256] = "";
  size_t len = 0;
  for (int k = 0; k < PHYS_SOLVER_COUNT && len < sizeof known; k++)
    len += (size_t)snprintf(known + len, sizeof known - len, "%s%s", k ? ", " : "",
                            solver_table[k].name);
  if (!name) return phys__error(err, PHYS_E_NOT_FOUND, "known solvers: %s", known);
  /* the name is the caller's: quote it only when printable, and cut it short */
  char shown[48];
  size_t n = 0;
  for (const char *c = name; *c && n + 1 < sizeof shown; c++)
    shown[n++] = (*c >= 0x20 && *c < 0x7f && *c != '"') ? *c : '?';
  shown[n] = '\0';
  return phys__error(err, PHYS_E_NOT_FOUND, "unknown solver \"%s%s\"; known solvers: %s", shown,
                     name[n] ? "..." : "", known);
}
