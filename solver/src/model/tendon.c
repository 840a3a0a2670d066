/* tendon.c - tendons: fixed ones, L = sum coef_i q_i over hinge/slide joints of one
 * articulation (MuJoCo's <fixed> tendon), and what fixed and spatial tendons (tendon_spatial.c)
 * share: names, readings, the row over the dofs. The model data and its readings; the limit rows are built by
 * constraints/island.c and problem.c, the passive spring-damper and tendon actuators act in
 * dynamics/tree_step.c. */
#include <math.h>
#include <string.h>
#include "core/world_internal.h"
#include "core/alloc.h"

phys_tendon_desc phys_tendon_desc_default(void) {
  phys_tendon_desc d;
  memset(&d, 0, sizeof d);
  for (int i = 0; i < PHYS_TENDON_MAX_JOINTS; i++) d.joint[i] = PHYS_ID_NONE;
  return d;
}

/* the articulation of a hinge or slide link, or -1 */
static int joint_artic(const phys_world *w, phys_id body) {
  if (!phys__body_ok(w, body) || w->bodies[body].artic < 0) return -1;
  const phys_artic *a = &w->artics[w->bodies[body].artic];
  int l = w->bodies[body].link;
  if (a->tb[l].joint != PHYS_JOINT_HINGE && a->tb[l].joint != PHYS_JOINT_SLIDE) return -1;
  return w->bodies[body].artic;
}

phys_status phys_world_add_tendon(phys_world *w, const phys_tendon_desc *d, const char *name,
                                  int *out_id) {
  if (!d) return phys__fail(w, PHYS_E_INVALID, "tendon: NULL description");
  if (d->njoints < 1 || d->njoints > PHYS_TENDON_MAX_JOINTS)
    return phys__fail(w, PHYS_E_INVALID, "tendon: %d joints (1 to %d)", d->njoints,
                      PHYS_TENDON_MAX_JOINTS);
  if (name && (strlen(name) >= sizeof w->tendons[0].name))
    return phys__fail(w, PHYS_E_INVALID, "tendon: name longer than 63 bytes");
  if (name && name[0] && phys_world_find_tendon(w, name) >= 0)
    return phys__fail(w, PHYS_E_INVALID, "tendon '%s': the name is taken", name);
  int artic = -1;
  for (int i = 0; i < d->njoints; i++) {
    int ai = joint_artic(w, d->joint[i]);
    if (ai < 0)
      return phys__fail(w, PHYS_E_INVALID, "tendon: joint %d (body %d) is not a hinge or slide "
                                           "link", i, d->joint[i]);
    if (artic >= 0 && ai != artic)
      return phys__fail(w, PHYS_E_INVALID, "tendon: its joints belong to two articulations "
                                           "(body %d and body %d)", d->joint[0], d->joint[i]);
    artic = ai;
    for (int j = 0; j < i; j++)
      if (d->joint[j] == d->joint[i])
        return phys__fail(w, PHYS_E_INVALID, "tendon: joint of body %d repeated", d->joint[i]);
    if (!isfinite(d->coef[i]) || d->coef[i] == 0.0)
      return phys__fail(w, PHYS_E_INVALID, "tendon: coefficient %d must be finite and non-zero",
                        i);
  }
  if (d->limited && !(isfinite(d->range[0]) && isfinite(d->range[1]) && d->range[0] < d->range[1]))
    return phys__fail(w, PHYS_E_INVALID, "tendon: range must be finite and increasing");
  if (!isfinite(d->stiffness) || !isfinite(d->damping) || d->stiffness < 0.0 ||
      d->damping < 0.0 || !isfinite(d->springlength))
    return phys__fail(w, PHYS_E_INVALID, "tendon: stiffness and damping must be finite and >= 0, "
                                         "springlength finite");
  if (PHYS_RESERVE(w->tendons, w->tendons_cap, w->ntendons + 1))
    return phys__fail(w, PHYS_E_NOMEM, "out of memory");
  phys_tendon *t = &w->tendons[w->ntendons];
  memset(t, 0, sizeof *t);
  t->desc = *d;
  for (int i = d->njoints; i < PHYS_TENDON_MAX_JOINTS; i++) {
    t->desc.joint[i] = PHYS_ID_NONE;
    t->desc.coef[i] = 0.0;
  }
  t->artic = artic;
  if (name) strcpy(t->name, name);
  phys__tendon_refresh(w, w->ntendons);
  if (out_id) *out_id = w->ntendons;
  w->ntendons++;
  return PHYS_OK;
}

void phys__tendon_refresh(phys_world *w, int id) {
  phys_tendon *t = &w->tendons[id];
  if (t->spatial) {
    phys__tendon_spatial_jacobian(w, t);
    return;
  }
  const phys_artic *a = &w->artics[t->artic];
  for (int i = 0; i < t->desc.njoints; i++) t->dof[i] = a->vadr[w->bodies[t->desc.joint[i]].link];
}

void phys__tendon_length(const phys_world *w, int id, double *L, double *Ld) {
  const phys_tendon *t = &w->tendons[id];
  if (t->spatial) {
    phys__tendon_spatial_length(w, t, L, Ld);
    return;
  }
  const phys_artic *a = &w->artics[t->artic];
  double l = 0.0, v = 0.0;
  for (int i = 0; i < t->desc.njoints; i++) {
    int d = t->dof[i];
    l += t->desc.coef[i] * a->qpos[a->qadr[a->dof_body[d]]];
    v += t->desc.coef[i] * a->qvel[d];
  }
  if (L) *L = l;
  if (Ld) *Ld = v;
}

void phys__tendon_row(const phys_world *w, int id, int *n, const int **dof, const double **coef) {
  const phys_tendon *t = &w->tendons[id];
  *n = t->spatial ? t->nj : t->desc.njoints;
  *dof = t->spatial ? t->jdof : t->dof;
  *coef = t->spatial ? t->jcoef : t->desc.coef;
}

int phys_world_tendon_count(const phys_world *w) { return w->ntendons; }

int phys_world_find_tendon(const phys_world *w, const char *name) {
  for (int i = 0; name && i < w->ntendons; i++)
    if (strcmp(w->tendons[i].name, name) == 0) return i;
  return -1;
}

const char *phys_tendon_get_name(const phys_world *w, int id) {
  return id >= 0 && id < w->ntendons ? w->tendons[id].name : NULL;
}

phys_status phys_tendon_get_length(const phys_world *w, int id, double *length,
                                   double *velocity) {
  if (id < 0 || id >= w->ntendons)
    return phys__fail((phys_world *)w, PHYS_E_NOT_FOUND, "tendon %d: no such tendon", id);
  phys__tendon_length(w, id, length, velocity);
  return PHYS_OK;
}
