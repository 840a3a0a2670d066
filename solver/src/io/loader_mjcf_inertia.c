/* loader_mjcf_inertia.c - MJCF loader: the compiler's inertia post-processing for moving bodies
 * (balanceinertia, boundmass, boundinertia) and the physical check of explicit <inertial>
 * values (triangle inequality, inertia_check.h). MJCF has no repair option other than the
 * file's own balanceinertia: a violating inertia is rejected with the body named.
 */
#include <math.h>
#include <string.h>
#include "io/loader_mjcf_internal.h"
#include "model/inertia_check.h"
#include "core/world_internal.h"
#include "core/math3.h"

/* MuJoCo's balanceinertia: a moment larger than the sum of the two others becomes that sum. */
static void balance(double m[3]) {
  for (int i = 0; i < 3; i++) {
    double s = m[(i + 1) % 3] + m[(i + 2) % 3];
    if (m[i] > s) m[i] = s;
  }
}

/* The body's name for messages. */
static const char *body_label(const xmlNode *body) {
  const char *n = phys__mj_attr(body, "name");
  return n ? n : "(unnamed)";
}

phys_status phys__mj_inertia_finish(mj_ctx *c, const xmlNode *body, const xmlNode *inertial,
                              phys_body_desc *b) {
  if (c->balanceinertia) balance(b->inertia);
  if (b->mass < c->boundmass) b->mass = c->boundmass;
  for (int i = 0; i < 3; i++)
    if (b->inertia[i] < c->boundinertia) b->inertia[i] = c->boundinertia;
  switch (phys__inertia_check(b->inertia)) {
    case PHYS_INERTIA_OK: return PHYS_OK;
    case PHYS_INERTIA_NOT_POSITIVE:
      return phys__mj_fail(c, inertial, PHYS_E_PARSE, "body '%s': inertia (%g, %g, %g) is not positive",
                     body_label(body), b->inertia[0], b->inertia[1], b->inertia[2]);
    default:
      return phys__mj_fail(c, inertial, PHYS_E_PARSE,
                     "body '%s': principal inertia (%g, %g, %g) breaks the triangle inequality "
                     "(a + b >= c); fix it or set <compiler balanceinertia=\"true\">",
                     body_label(body), b->inertia[0], b->inertia[1], b->inertia[2]);
  }
}

phys_status phys__mj_inertia_from_geoms(mj_ctx *c, const xmlNode *body, phys_body_desc *b) {
  if (!(c->boundmass > 0.0) && !(c->boundinertia > 0.0) && !c->balanceinertia) return PHYS_OK;
  /* mass, COM and tensor of the geoms as the world computes them (body.c; a mesh's or an SDF's
   * mass centre may be off its frame): the COM first, then the tensor about it */
  double mtot = 0.0, com[3] = {0, 0, 0}, I[9] = {0};
  for (int pass = 0; pass < 2; pass++)
    for (int i = 0; i < c->ngeom; i++) {
      const phys_geom_desc *g = &c->geoms[i];
      double cen[3], q[4], R[9], U[9], gc[3], d[3];
      double vol = phys__geom_mass_frame(c->world, g, cen, U);
      double m = g->mass >= 0.0 ? g->mass : g->density * vol;
      memcpy(q, g->quat, sizeof q);
      q_normalize(q);
      q_to_m3(R, q);
      m3_mulv(gc, R, cen);
      v3_add(gc, gc, g->pos);
      if (pass == 0) {
        mtot += m;
        v3_madd(com, com, m, gc);
        if (i == c->ngeom - 1 && mtot > 0.0) v3_scale(com, com, 1.0 / mtot);
        continue;
      }
      if (!(mtot > 0.0)) break;
      v3_sub(d, gc, com);
      double dd = v3_dot(d, d);
      for (int r = 0; r < 3; r++)
        for (int k = 0; k < 3; k++) {
          double rot = 0.0; /* (R (m U) R^T)[r][k] */
          for (int j = 0; j < 3; j++)
            for (int l = 0; l < 3; l++) rot += R[3 * r + j] * m * U[3 * j + l] * R[3 * k + l];
          I[3 * r + k] += rot + m * ((r == k ? dd : 0.0) - d[r] * d[k]);
        }
    }
  double moments[3] = {0, 0, 0}, axes[9];
  q_identity(b->inertia_quat);
  if (mtot > 0.0) {
    phys__sym3_eigen(I, moments, axes);
    m3_to_q(b->inertia_quat, axes);
  }
  b->mass = mtot;
  v3_copy(b->com, com);
  memcpy(b->inertia, moments, sizeof moments);
  if (!(b->mass > 0.0) && !(c->boundmass > 0.0))
    return phys__mj_fail(c, body, PHYS_E_INVALID, "body '%s': the geoms give a total mass of 0",
                   body_label(body));
  return phys__mj_inertia_finish(c, body, body, b);
}
