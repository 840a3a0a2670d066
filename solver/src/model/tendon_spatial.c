/* tendon_spatial.c - spatial tendons (MuJoCo's <tendon><spatial> through sites, no wrapping):
 * L = sum |p_{i+1} - p_i| over consecutive sites' world points, Ldot from the sites' point
 * velocities, and the Jacobian dL/dq = sum unit(p_{i+1} - p_i) . (J_{i+1} - J_i) over the dofs
 * of the one articulation the sites' links belong to (sites on the world or static bodies are
 * fixed points). The Jacobian is rebuilt at the start of every step (phys__tendon_refresh);
 * the limit rows, spring-damper and actuators then use it as a fixed tendon's coef vector. */
#include <math.h>
#include <string.h>
#include "model/sensor.h"
#include "core/alloc.h"
#include "core/spatial.h"
#include "core/math3.h"

/* entries of the Jacobian below this share of its largest are dropped (rounding noise of
 * cancelling terms: SubADMM divides by coef^2) */
#define JAC_DROP 1e-10

phys_spatial_tendon_desc phys_spatial_tendon_desc_default(void) {
  phys_spatial_tendon_desc d;
  memset(&d, 0, sizeof d);
  for (int i = 0; i < PHYS_TENDON_MAX_SITES; i++) d.site[i] = -1;
  return d;
}

/* the link of site i's body, -1 for a fixed point (world or static body), -2 for a free body */
static int site_link(const phys_world *w, int i, int *artic) {
  phys_id b = w->sites[i].body;
  *artic = -1;
  if (b == PHYS_ID_NONE || w->bodies[b].is_static) return -1;
  if (w->bodies[b].artic < 0) return -2;
  *artic = w->bodies[b].artic;
  return w->bodies[b].link;
}

/* add dof to the set (n entries, at most PHYS__TENDON_MAX_DOFS); its index or -1 when full */
static int dof_slot(int *set, int *n, int dof) {
  for (int j = 0; j < *n; j++)
    if (set[j] == dof) return j;
  if (*n == PHYS__TENDON_MAX_DOFS) return -1;
  set[*n] = dof;
  return (*n)++;
}

phys_status phys_world_add_spatial_tendon(phys_world *w, const phys_spatial_tendon_desc *d,
                                          const char *name, int *out_id) {
  if (!d) return phys__fail(w, PHYS_E_INVALID, "spatial tendon: NULL description");
  if (d->nsites < 2 || d->nsites > PHYS_TENDON_MAX_SITES)
    return phys__fail(w, PHYS_E_INVALID, "spatial tendon: %d sites (2 to %d)", d->nsites,
                      PHYS_TENDON_MAX_SITES);
  if (name && strlen(name) >= sizeof w->tendons[0].name)
    return phys__fail(w, PHYS_E_INVALID, "spatial tendon: name longer than 63 bytes");
  if (name && name[0] && phys_world_find_tendon(w, name) >= 0)
    return phys__fail(w, PHYS_E_INVALID, "spatial tendon '%s': the name is taken", name);
  int artic = -1, set[PHYS__TENDON_MAX_DOFS], nset = 0;
  for (int i = 0; i < d->nsites; i++) {
    int s = d->site[i], ai;
    if (s < 0 || s >= w->nsites)
      return phys__fail(w, PHYS_E_NOT_FOUND, "spatial tendon: site %d (entry %d): no such site",
                        s, i);
    if (i > 0 && d->site[i - 1] == s)
      return phys__fail(w, PHYS_E_INVALID, "spatial tendon: site %d twice in a row", s);
    phys_id b = w->sites[s].body;
    if (b != PHYS_ID_NONE && !phys__body_ok(w, b))
      return phys__fail(w, PHYS_E_STATE, "spatial tendon: site %d: its body %d was removed", s,
                        b);
    int l = site_link(w, s, &ai);
    if (l == -2)
      return phys__fail(w, PHYS_E_INVALID, "spatial tendon: site %d ('%s') is on free body %d; "
                        "a tendon's sites must lie on links of one articulation or on the world",
                        s, w->sites[s].name, b);
    if (l < 0) continue;
    if (artic >= 0 && ai != artic)
      return phys__fail(w, PHYS_E_INVALID, "spatial tendon: its sites lie on two articulations "
                        "(site %d is on another than the earlier sites)", s);
    artic = ai;
    const phys_artic *a = &w->artics[ai];
    for (int k = l; k >= 0; k = a->tb[k].parent)
      for (int j = 0; j < a->vnum[k]; j++)
        if (dof_slot(set, &nset, a->vadr[k] + j) < 0)
          return phys__fail(w, PHYS_E_INVALID, "spatial tendon: its sites' links depend on more "
                            "than %d dofs", PHYS__TENDON_MAX_DOFS);
  }
  if (artic < 0)
    return phys__fail(w, PHYS_E_INVALID, "spatial tendon: no site lies on a link (nothing "
                                         "could move it)");
  if (d->limited && !(isfinite(d->range[0]) && isfinite(d->range[1]) && d->range[0] < d->range[1]))
    return phys__fail(w, PHYS_E_INVALID, "spatial tendon: range must be finite and increasing");
  if (!isfinite(d->stiffness) || !isfinite(d->damping) || d->stiffness < 0.0 ||
      d->damping < 0.0 || !isfinite(d->springlength))
    return phys__fail(w, PHYS_E_INVALID, "spatial tendon: stiffness and damping must be finite "
                                         "and >= 0, springlength finite");
  if (PHYS_RESERVE(w->tendons, w->tendons_cap, w->ntendons + 1))
    return phys__fail(w, PHYS_E_NOMEM, "out of memory");
  phys_tendon *t = &w->tendons[w->ntendons];
  memset(t, 0, sizeof *t);
  t->desc = phys_tendon_desc_default();
  t->desc.limited = d->limited;
  memcpy(t->desc.range, d->range, sizeof t->desc.range);
  t->desc.stiffness = d->stiffness;
  t->desc.damping = d->damping;
  t->desc.springlength = d->springlength;
  t->artic = artic;
  t->spatial = 1;
  t->nsites = d->nsites;
  for (int i = 0; i < PHYS_TENDON_MAX_SITES; i++) t->site[i] = i < d->nsites ? d->site[i] : -1;
  if (name) strcpy(t->name, name);
  phys__tendon_refresh(w, w->ntendons);
  if (out_id) *out_id = w->ntendons;
  w->ntendons++;
  return PHYS_OK;
}

int phys_tendon_is_spatial(const phys_world *w, int id) {
  return id >= 0 && id < w->ntendons ? w->tendons[id].spatial : -1;
}

/* world point of site i and its velocity (zero for a fixed point); a site whose static body
 * was removed stays where its pose says in that body's frame, taken as the world's */
static void site_point(const phys_world *w, int i, double p[3], double v[3]) {
  double q[4];
  if (phys__site_frame(w, i, p, q)) v3_copy(p, w->sites[i].pos);
  if (!v) return;
  phys_id b = w->sites[i].body;
  v3_zero(v);
  if (b == PHYS_ID_NONE || w->bodies[b].is_static) return;
  const phys_body *bd = &w->bodies[b];
  double r[3], wxr[3];
  v3_sub(r, p, bd->x);
  v3_cross(wxr, bd->w, r);
  v3_add(v, bd->v, wxr);
}

void phys__tendon_spatial_length(const phys_world *w, const phys_tendon *t, double *L,
                                 double *Ld) {
  double l = 0.0, ld = 0.0, p0[3], v0[3];
  site_point(w, t->site[0], p0, v0);
  for (int i = 1; i < t->nsites; i++) {
    double p1[3], v1[3], d[3], dv[3];
    site_point(w, t->site[i], p1, v1);
    v3_sub(d, p1, p0);
    double n = v3_norm(d);
    if (n > 0.0) {
      l += n;
      v3_sub(dv, v1, v0);
      ld += v3_dot(d, dv) / n;
    }
    v3_copy(p0, p1);
    v3_copy(v0, v1);
  }
  if (L) *L = l;
  if (Ld) *Ld = ld;
}

/* the Jacobian's entries of the point p of `link` moving along u (sign +1 or -1) */
static void add_point(phys_tendon *t, const phys_artic *a, int link, const double p[3],
                      const double u[3], double sign) {
  double us[6];
  v3_copy(us, u);
  v3_cross(us + 3, p, u);
  for (int l = link; l >= 0; l = a->tb[l].parent)
    for (int j = 0; j < a->vnum[l]; j++) {
      int dof = a->vadr[l] + j, k = dof_slot(t->jdof, &t->nj, dof);
      if (k >= 0) t->jcoef[k] += sign * sp_dot(a->S + 6 * dof, us); /* k < 0: checked when
                                                                         added, cannot happen */
    }
}

void phys__tendon_spatial_jacobian(const phys_world *w, phys_tendon *t) {
  const phys_artic *a = &w->artics[t->artic];
  t->nj = 0;
  memset(t->jcoef, 0, sizeof t->jcoef);
  double p0[3];
  site_point(w, t->site[0], p0, NULL);
  for (int i = 1; i < t->nsites; i++) {
    double p1[3], d[3];
    site_point(w, t->site[i], p1, NULL);
    v3_sub(d, p1, p0);
    double n = v3_norm(d);
    if (n > 0.0) {
      v3_scale(d, d, 1.0 / n);
      int ai, l0 = site_link(w, t->site[i - 1], &ai), l1 = site_link(w, t->site[i], &ai);
      if (l1 >= 0) add_point(t, a, l1, p1, d, 1.0);
      if (l0 >= 0) add_point(t, a, l0, p0, d, -1.0);
    }
    v3_copy(p0, p1);
  }
  /* drop the cancelled entries (a common ancestor's translation, a segment within a link) */
  double big = 0.0;
  for (int j = 0; j < t->nj; j++) big = fmax(big, fabs(t->jcoef[j]));
  int n = 0;
  for (int j = 0; j < t->nj; j++)
    if (fabs(t->jcoef[j]) > JAC_DROP * big) {
      t->jdof[n] = t->jdof[j];
      t->jcoef[n++] = t->jcoef[j];
    }
  for (int j = n; j < t->nj; j++) t->jcoef[j] = 0.0;
  t->nj = n;
}
