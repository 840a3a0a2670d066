/* gradient.h - gradients through contact (paper 001 sec. X-B; gradient.c): per island, after the
 * Newton solve of sap, icf-lagged or icf-similar, dv/dv0 and dv/dtheta for each contact's
 * stiffness and dissipation from H dv/dtheta = -dr/dtheta, reusing the island's last Newton
 * factor. Records and values live in the world (phys_world.grad_*), laid out serially before the
 * solve and written by each island's solve into its own range. Private to the solvers. */
#ifndef PHYS_SOLVERS_GRADIENT_H
#define PHYS_SOLVERS_GRADIENT_H

#include "solvers/newton.h"

/* What the gradients differentiate per row set ("theta"): the contact's stiffness k, its
 * dissipation (sap: tau_d; icf: Hunt & Crossley's d), and its entry normal velocity v_n0 =
 * J_n v0 (Lagged's gamma_n0, the regularised stiction tolerance). A row set's chain holds, per
 * theta, d par[0..5] / d theta then d eps[0..2] / d theta (newton.h's phys_newton_row), as the
 * solver's setup computed them; lambda's derivative is the model's d lambda / d par (dpar) and
 * -beta D through eps. */
enum { PHYS_GRAD_K = 0, PHYS_GRAD_DISS = 1, PHYS_GRAD_VN0 = 2, PHYS_GRAD_NTHETA = 3 };
#define PHYS_GRAD_PER_THETA 9
#define PHYS_GRAD_CHAIN (PHYS_GRAD_NTHETA * PHYS_GRAD_PER_THETA)

/* an island's gradient status */
enum {
  PHYS_GRAD_PENDING = 0,      /* not computed (the solve did not get to it) */
  PHYS_GRAD_DONE = 1,
  PHYS_GRAD_NOT_CONVERGED = 2,/* the solve ended with another status (arg: phys_sap_status) */
  PHYS_GRAD_ACTUATOR = 3,     /* a tendon or site actuator on its bodies (arg: the actuator) */
  PHYS_GRAD_TENDON = 4,       /* a tendon damper on its trees (arg: the tendon) */
  PHYS_GRAD_FACTOR_FAILED = 5 /* the factorisation for the gradient failed */
};

/* one island's record in the world's buffers */
typedef struct phys_grad_island {
  int dof0, ndof;             /* its dofs in w->grad_dof */
  int con0, ncon;             /* its point contacts in w->grad_contact */
  int val0;                   /* dv/dv0 (ndof^2), dv/dk, dv/ddiss (ndof * ncon each) */
  int status, arg;
} phys_grad_island;

/* Serial, in the solver's prepare: with opt.gradients set, every island's record (sizes, the
 * velocity-dependent explicit forces it cannot differentiate) and room for its dofs, contacts
 * and values in the world's buffers, which its solve fills; without, nothing. PHYS_OK or
 * PHYS_E_NOMEM recorded on the world. */
phys_status phys__grad_begin(phys_world *w, const phys_problem *s);

/* doubles of scratch phys__grad_island needs for an island of n dofs */
size_t phys__grad_scratch_size(const phys_problem *s, int n);

/* Island k's gradients after its solve (its dofs and contacts too; nt holds the final iterate's x, lambda and D, and the
 * last Newton factor when nt->factored), written into its range of the world's buffers:
 * converged = 0 records PHYS_GRAD_NOT_CONVERGED with `solve_status`. chain: PHYS_GRAD_CHAIN
 * per row set; scratch: phys__grad_scratch_size doubles. Adds the factorisations and
 * refinement sweeps it made. Thread-safe for distinct islands. */
void phys__grad_island(const phys_world *w, phys_problem *s, phys_newton *nt, int k,
                       int converged, int solve_status, const double *chain, double *scratch,
                       int *factorisations, int *refinements);

/* free the world's gradient buffers (world destruction) */
void phys__grad_free(phys_world *w);

#endif
