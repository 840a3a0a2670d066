/* firstorder_radius.c - the lagged friction radii of the first-order solver as a fixed point,
 * accelerated by Anderson mixing (issue 14). Each solve of an island takes every contact's disk
 * radius rho as given and returns its normal impulse, so the radii that the step needs solve
 * rho = G(rho) = mu gamma_n(rho). The plain iteration rho <- G(rho) crept on piles (20-40
 * re-solves without settling, docs/engine.md); Anderson's type-II update with depth m,
 *
 *   f_k = G(rho_k) - rho_k,   gamma = argmin |f_k - dF gamma|_2,   rho_k+1 = G(rho_k) - dG gamma,
 *
 * (dF, dG: the last m differences of f and G between iterates) is the secant (multisecant
 * Broyden) version of the same map and settles them in a fraction of the re-solves. Safeguards:
 * the history is dropped (a plain step taken) when |f| grew by more than FO_AA_GROWTH over the
 * last iterate or the small least-squares system is not solvable, and each radius is kept
 * within a factor FO_AA_CLIP of its G (an extrapolation clipped at 0 gave binding contacts a
 * disk of radius 0, and one above a G of 0 friction without a normal impulse).
 * Every operation is a fixed-order loop over the island's rows: the same result whatever thread
 * runs the island. */
#include <math.h>
#include <string.h>
#include "core/anderson.h"
#include "solvers/firstorder.h"

/* |f| may grow by this factor over the last iterate before the history is dropped */
#define FO_AA_GROWTH 2.0
/* an accelerated radius stays within [G / FO_AA_CLIP, FO_AA_CLIP G] */
#define FO_AA_CLIP 2.0

double phys__fo_radius_update(phys_anderson *r, double *rho, const double *g) {
  int n = r->n;
  double gmax = 0.0, fmax_ = 0.0, fnorm = 0.0;
  for (int i = 0; i < n; i++) {
    double f = g[i] - (isfinite(rho[i]) ? rho[i] : g[i]);
    r->f[i] = f;
    fnorm += f * f;
    if (fabs(f) > fmax_) fmax_ = fabs(f);
    if (g[i] > gmax) gmax = g[i];
  }
  fnorm = sqrt(fnorm);
  double measure = gmax > 0.0 ? fmax_ / gmax : 0.0;
  /* the first iterate of a step (radii unbounded: stuck) or no acceleration: rho = G(rho) */
  int first = 0;
  for (int i = 0; i < n && !first; i++) first = !isfinite(rho[i]);
  if (first || r->m == 0) {
    memcpy(rho, g, (size_t)n * sizeof(double));
    phys__anderson_reset(r);
    if (!first && r->m == 0) return measure;
    memcpy(r->fprev, r->f, (size_t)n * sizeof(double));
    memcpy(r->gprev, g, (size_t)n * sizeof(double));
    r->have_prev = !first;
    r->fprev_norm = fnorm;
    return measure;
  }
  /* the newest difference pair, then the safeguard */
  if (r->have_prev) {
    double *dF = r->dF + (size_t)r->next * n, *dG = r->dG + (size_t)r->next * n;
    for (int i = 0; i < n; i++) {
      dF[i] = r->f[i] - r->fprev[i];
      dG[i] = g[i] - r->gprev[i];
    }
    r->next = (r->next + 1) % r->m;
    if (r->kept < r->m) r->kept++;
    if (fnorm > FO_AA_GROWTH * r->fprev_norm) r->kept = r->next = 0;
  }
  memcpy(r->fprev, r->f, (size_t)n * sizeof(double));
  memcpy(r->gprev, g, (size_t)n * sizeof(double));
  r->have_prev = 1;
  r->fprev_norm = fnorm;
  /* gamma from the normal equations of min |f - dF gamma| (k <= 16 columns) */
  int k = r->kept;
  double G[PHYS_ANDERSON_MAX_DEPTH][PHYS_ANDERSON_MAX_DEPTH], b[PHYS_ANDERSON_MAX_DEPTH],
      c[PHYS_ANDERSON_MAX_DEPTH];
  for (int p = 0; p < k; p++) {
    const double *fp = r->dF + (size_t)p * n;
    for (int q = 0; q <= p; q++) {
      const double *fq = r->dF + (size_t)q * n;
      double d = 0.0;
      for (int i = 0; i < n; i++) d += fp[i] * fq[i];
      G[p][q] = G[q][p] = d;
    }
    double d = 0.0;
    for (int i = 0; i < n; i++) d += fp[i] * r->f[i];
    b[p] = d;
  }
  if (k == 0 || phys__anderson_coefficients(k, G, b, c) != 0) {
    memcpy(rho, g, (size_t)n * sizeof(double));
    r->kept = r->next = 0;
    return measure;
  }
  int ok = 1;
  for (int i = 0; i < n; i++) {
    double x = g[i];
    for (int p = 0; p < k; p++) x -= c[p] * r->dG[(size_t)p * n + i];
    ok &= isfinite(x);
    double lo = g[i] / FO_AA_CLIP, hi = FO_AA_CLIP * g[i];
    rho[i] = x < lo ? lo : (x > hi ? hi : x);
  }
  if (!ok) {
    memcpy(rho, g, (size_t)n * sizeof(double));
    r->kept = r->next = 0;
  }
  return measure;
}
