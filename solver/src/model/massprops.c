/* massprops.c - volumes and inertias of primitives, and the symmetric 3x3 eigen-decomposition
 * used to find a body's principal axes. */
#include <math.h>
#include <string.h>
#include "core/world_internal.h"
#include "core/math3.h"

double phys__shape_volume(phys_geom_type type, const double s[3]) {
  switch (type) {
    case PHYS_GEOM_SPHERE: return 4.0 / 3.0 * M_PI * s[0] * s[0] * s[0];
    case PHYS_GEOM_BOX: return 8.0 * s[0] * s[1] * s[2];
    case PHYS_GEOM_CYLINDER: return M_PI * s[0] * s[0] * 2.0 * s[1];
    case PHYS_GEOM_CAPSULE:
      return M_PI * s[0] * s[0] * 2.0 * s[1] + 4.0 / 3.0 * M_PI * s[0] * s[0] * s[0];
    case PHYS_GEOM_ELLIPSOID: return 4.0 / 3.0 * M_PI * s[0] * s[1] * s[2];
    default: return 0.0;
  }
}

void phys__shape_unit_inertia(phys_geom_type type, const double s[3], double out[3]) {
  double r = s[0], h = s[1];
  switch (type) {
    case PHYS_GEOM_SPHERE:
      out[0] = out[1] = out[2] = 0.4 * r * r;
      return;
    case PHYS_GEOM_BOX:
      out[0] = (s[1] * s[1] + s[2] * s[2]) / 3.0;
      out[1] = (s[0] * s[0] + s[2] * s[2]) / 3.0;
      out[2] = (s[0] * s[0] + s[1] * s[1]) / 3.0;
      return;
    case PHYS_GEOM_CYLINDER:
      out[0] = out[1] = r * r / 4.0 + h * h / 3.0;
      out[2] = r * r / 2.0;
      return;
    case PHYS_GEOM_CAPSULE: {
      /* cylinder of mass mc plus two hemispheres of total mass ms (per unit density) */
      double mc = M_PI * r * r * 2.0 * h, ms = 4.0 / 3.0 * M_PI * r * r * r, m = mc + ms;
      out[0] = out[1] = (mc * (r * r / 4.0 + h * h / 3.0) +
                         ms * (0.4 * r * r + h * h + 0.75 * h * r)) / m;
      out[2] = (mc * 0.5 * r * r + ms * 0.4 * r * r) / m;
      return;
    }
    case PHYS_GEOM_ELLIPSOID:
      out[0] = (s[1] * s[1] + s[2] * s[2]) / 5.0;
      out[1] = (s[0] * s[0] + s[2] * s[2]) / 5.0;
      out[2] = (s[0] * s[0] + s[1] * s[1]) / 5.0;
      return;
    default:
      out[0] = out[1] = out[2] = 0.0;
  }
}

double phys__geom_mass_frame(const phys_world *w, const phys_geom_desc *g, double center[3],
                             double unit_inertia[9]) {
  memset(unit_inertia, 0, 9 * sizeof(double));
  v3_zero(center);
  if (g->type == PHYS_GEOM_SDF) {
    /* the revolved solid: centre on its axis, integrated at registration (sdf_massprops.c) */
    const phys_sdf_shape *s = phys__sdf_shape(w, g->sdf);
    if (!s) return 0.0;
    v3_copy(center, s->center);
    memcpy(unit_inertia, s->unit_inertia, 9 * sizeof(double));
    return s->volume;
  }
  if (g->type == PHYS_GEOM_MESH) {
    /* the solid hull: its centre of volume is off the mesh-frame origin in general */
    const phys_hull *h = phys__mesh_hull(w, g->mesh);
    if (!h) return 0.0;
    v3_copy(center, h->center);
    memcpy(unit_inertia, h->unit_inertia, 9 * sizeof(double));
    return h->volume;
  }
  double d[3];
  phys__shape_unit_inertia(g->type, g->size, d);
  unit_inertia[0] = d[0];
  unit_inertia[4] = d[1];
  unit_inertia[8] = d[2];
  return phys__shape_volume(g->type, g->size);
}

void phys__sym3_eigen(const double a_in[9], double values[3], double rot[9]) {
  double a[9];
  memcpy(a, a_in, sizeof a);
  m3_identity(rot);

  /* cyclic Jacobi sweeps: zero the off-diagonal entries one rotation at a time */
  for (int sweep = 0; sweep < 50; sweep++) {
    double off = a[1] * a[1] + a[2] * a[2] + a[5] * a[5];
    double diag = a[0] * a[0] + a[4] * a[4] + a[8] * a[8];
    if (off <= 1e-30 * diag || off == 0.0) break;
    for (int p = 0; p < 2; p++) {
      for (int q = p + 1; q < 3; q++) {
        double apq = a[3 * p + q];
        if (apq == 0.0) continue;
        double theta = (a[3 * q + q] - a[3 * p + p]) / (2.0 * apq);
        double t = (theta >= 0 ? 1.0 : -1.0) / (fabs(theta) + sqrt(theta * theta + 1.0));
        double c = 1.0 / sqrt(t * t + 1.0), s = t * c;
        /* a <- G^T a G with G the rotation in the (p, q) plane */
        for (int k = 0; k < 3; k++) {
          double akp = a[3 * k + p], akq = a[3 * k + q];
          a[3 * k + p] = c * akp - s * akq;
          a[3 * k + q] = s * akp + c * akq;
        }
        for (int k = 0; k < 3; k++) {
          double apk = a[3 * p + k], aqk = a[3 * q + k];
          a[3 * p + k] = c * apk - s * aqk;
          a[3 * q + k] = s * apk + c * aqk;
        }
        /* accumulate the eigenvectors in the columns of rot */
        for (int k = 0; k < 3; k++) {
          double rkp = rot[3 * k + p], rkq = rot[3 * k + q];
          rot[3 * k + p] = c * rkp - s * rkq;
          rot[3 * k + q] = s * rkp + c * rkq;
        }
      }
    }
  }
  values[0] = a[0];
  values[1] = a[4];
  values[2] = a[8];

  /* make the frame right-handed */
  double c0[3] = {rot[0], rot[3], rot[6]}, c1[3] = {rot[1], rot[4], rot[7]}, c2[3];
  v3_cross(c2, c0, c1);
  rot[2] = c2[0];
  rot[5] = c2[1];
  rot[8] = c2[2];
}
