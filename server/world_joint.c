/* world_joint.c - joints and keyframes of the world by value (protocol 1.3, see world.h):
 * ResetToKeyframe and SetJointState, each checked whole before anything changes. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "world.h"

int world_reset_to_keyframe(world_ctx *wc, const char *name, int index, int has_index, perr *e) {
  int n = phys_world_keyframe_count(wc->w), k;
  if (has_index) {
    if (index < 0 || index >= n)
      return perr_set(e, PHYSD__V1__ERROR_CODE__NOT_FOUND,
                      "keyframe %d: no such keyframe (the model has %d)", index, n);
    k = index;
  } else {
    k = name && *name ? phys_world_find_keyframe(wc->w, name) : -1;
    if (k < 0)
      return perr_set(e, PHYSD__V1__ERROR_CODE__NOT_FOUND,
                      "keyframe \"%.100s\": no such keyframe (ModelInfo.keyframes lists them)",
                      name ? name : "");
  }
  /* the loaded state, then the keyframe (model data: the same keyframe after the reset) */
  if (world_reset(wc, e)) return -1;
  if (phys_world_apply_keyframe(wc->w, k) != PHYS_OK)
    return perr_set(e, PHYSD__V1__ERROR_CODE__INTERNAL, "keyframe %d: %s", k,
                    phys_world_last_error(wc->w));
  return 0;
}

/* one target of a SetJointState: its joint and the slices of qpos / qvel it takes */
typedef struct joint_target {
  phys_id id;
  int nq, nv;
} joint_target;

/* the joint's position and velocity counts; 0 or -1 when `id` is not a joint */
static int joint_counts(const phys_world *w, phys_id id, int *nq, int *nv) {
  double q[7], v[6];
  return phys_link_get_joint(w, id, q, v, nq, nv) == PHYS_OK ? 0 : -1;
}

int world_set_joint_state(world_ctx *wc, const Physd__V1__SetJointState *m, perr *e) {
  size_t nt = m->n_joint_ids + m->n_joint_names;
  if (nt == 0) return perr_set(e, PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT, "no joint given");
  if (nt > 4096) return perr_set(e, PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT, "too many joints");
  joint_target *t = calloc(nt, sizeof *t);
  if (!t) return perr_set(e, PHYSD__V1__ERROR_CODE__RESOURCE_EXHAUSTED, "out of memory");
  int rc = 0;
  size_t wantq = 0, wantv = 0;
  /* targets: ids, then names; each a joint, none twice */
  for (size_t i = 0; i < nt && !rc; i++) {
    if (i < m->n_joint_ids) {
      t[i].id = m->joint_ids[i];
      if (joint_counts(wc->w, t[i].id, &t[i].nq, &t[i].nv))
        rc = perr_set(e, PHYSD__V1__ERROR_CODE__NOT_FOUND, "joint %d: no such joint", t[i].id);
    } else {
      const char *name = m->joint_names[i - m->n_joint_ids];
      t[i].id = phys_world_find_joint(wc->w, name);
      if (t[i].id == PHYS_ID_NONE || joint_counts(wc->w, t[i].id, &t[i].nq, &t[i].nv))
        rc = perr_set(e, PHYSD__V1__ERROR_CODE__NOT_FOUND,
                      "joint \"%.100s\": no such joint (ModelInfo.joints lists them)", name);
    }
    for (size_t j = 0; j < i && !rc; j++)
      if (t[j].id == t[i].id)
        rc = perr_set(e, PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT, "joint %d given twice", t[i].id);
    wantq += (size_t)t[i].nq;
    wantv += (size_t)t[i].nv;
  }
  /* lengths and values */
  if (!rc && m->n_qpos && m->n_qpos != wantq)
    rc = perr_set(e, PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT,
                  "qpos has %zu values, the joints take %zu (JointInfo.nq each)", m->n_qpos, wantq);
  if (!rc && m->n_qvel && m->n_qvel != wantv)
    rc = perr_set(e, PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT,
                  "qvel has %zu values, the joints take %zu (JointInfo.nv each)", m->n_qvel, wantv);
  if (!rc && !m->n_qpos && !m->n_qvel)
    rc = perr_set(e, PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT, "neither qpos nor qvel given");
  for (size_t i = 0; !rc && i < m->n_qpos; i++)
    if (!isfinite(m->qpos[i]))
      rc = perr_set(e, PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT, "qpos[%zu] is not finite", i);
  for (size_t i = 0; !rc && i < m->n_qvel; i++)
    if (!isfinite(m->qvel[i]))
      rc = perr_set(e, PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT, "qvel[%zu] is not finite", i);
  /* a zero quaternion (ball: the 4 values, free: the last 4) is refused before anything moves */
  size_t oq = 0;
  for (size_t i = 0; !rc && m->n_qpos && i < nt; i++) {
    if (t[i].nq == 4 || t[i].nq == 7) {
      const double *qq = m->qpos + oq + (t[i].nq == 7 ? 3 : 0);
      if (!(qq[0] * qq[0] + qq[1] * qq[1] + qq[2] * qq[2] + qq[3] * qq[3] > 1e-24))
        rc = perr_set(e, PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT, "joint %d: zero quaternion",
                      t[i].id);
    }
    oq += (size_t)t[i].nq;
  }
  /* apply: every check passed, so each call succeeds */
  oq = 0;
  size_t ov = 0;
  for (size_t i = 0; !rc && i < nt; i++) {
    phys_status st = phys_link_set_joint_state(wc->w, t[i].id, m->n_qpos ? m->qpos + oq : NULL,
                                               t[i].nq, m->n_qvel ? m->qvel + ov : NULL, t[i].nv);
    if (st != PHYS_OK)
      rc = perr_set(e, PHYSD__V1__ERROR_CODE__INTERNAL, "joint %d: %s", t[i].id,
                    phys_world_last_error(wc->w));
    oq += (size_t)t[i].nq;
    ov += (size_t)t[i].nv;
  }
  free(t);
  return rc;
}
