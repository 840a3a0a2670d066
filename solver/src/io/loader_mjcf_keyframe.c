/* loader_mjcf_keyframe.c - MJCF loader: <keyframe><key name time qpos qvel act ctrl>.
 *
 * qpos and qvel follow MuJoCo's order: the joints in depth-first document order, 7/6 values for
 * a free joint (position, quaternion / linear velocity in world axes, angular velocity in local
 * axes), 4/3 for a ball joint (quaternion / local angular velocity), 1/1 for hinge and slide
 * (radians whatever <compiler angle>). Omitted vectors take qpos0 (the file's pose), zero
 * velocity and zero controls. mpos/mquat give the mocap bodies' poses (3 and 4 values each, in
 * document order; omitted: the file's). Each key is set on the world, captured with
 * phys_world_add_keyframe, and the world goes back to its initial state afterwards.
 */
#include <ctype.h>
#include <math.h>
#include <string.h>
#include "io/loader_mjcf_internal.h"
#include "core/world_internal.h"
#include "core/alloc.h"
#include "core/math3.h"

/* Number of whitespace-separated tokens of attribute `name` (0 when absent). */
static int token_count(const xmlNode *node, const char *name) {
  const char *s = phys__mj_attr(node, name);
  int n = 0;
  while (s && *s) {
    while (isspace((unsigned char)*s)) s++;
    if (!*s) break;
    n++;
    while (*s && !isspace((unsigned char)*s)) s++;
  }
  return n;
}

/* Read attribute `name` of exactly `want` values into out (absent: *given = 0). */
static phys_status vector_attr(mj_ctx *c, const xmlNode *node, const char *name, int want,
                               const char *what, double *out, int *given) {
  int n = token_count(node, name);
  *given = n > 0;
  if (!n) return PHYS_OK;
  if (n != want)
    return phys__mj_fail(c, node, PHYS_E_PARSE, "attribute '%s' has %d values, the model has %d %s",
                   name, n, want, what);
  return phys__mj_reals(c, node, name, out, want, want, &n);
}

/* Set one joint from its qpos/qvel slices (MuJoCo conventions, see the file comment). */
static phys_status joint_set(mj_ctx *c, const xmlNode *key, const mj_qjoint *j, const double *q,
                             const double *v) {
  phys_world *w = c->world;
  if (j->type == MJ_JOINT_HINGE || j->type == MJ_JOINT_SLIDE) {
    if (phys_link_set_joint(w, j->body, q[0], v[0]))
      return phys__mj_fail(c, key, phys__last_status_or(w, PHYS_E_INVALID),
                           "%s", phys_world_last_error(w));
    return PHYS_OK;
  }
  /* quaternions: any nonzero 4-vector, normalised */
  int off = j->type == MJ_JOINT_FREE ? 3 : 0;
  double quat[4] = {q[off], q[off + 1], q[off + 2], q[off + 3]};
  if (!(q_normalize(quat) > 1e-300))
    return phys__mj_fail(c, key, PHYS_E_PARSE, "zero quaternion in qpos for joint at line %ld",
                   xmlGetLineNo(j->node));
  double R[9];
  q_to_m3(R, quat);
  if (j->link) {
    /* a link's generalised coordinates (artic.c: local angular velocity, and for a free root
     * the body-frame linear velocity) */
    phys_body *b = &w->bodies[j->body];
    phys_artic *a = &w->artics[b->artic];
    double *aq = a->qpos + a->qadr[b->link], *av = a->qvel + a->vadr[b->link];
    if (j->type == MJ_JOINT_FREE) {
      memcpy(aq, q, 3 * sizeof(double));
      memcpy(aq + 3, quat, sizeof quat);
      double vt[3];
      for (int i = 0; i < 3; i++) vt[i] = R[i] * v[0] + R[3 + i] * v[1] + R[6 + i] * v[2];
      v3_copy(av, vt);
      v3_copy(av + 3, v + 3);
    } else {
      memcpy(aq, quat, sizeof quat);
      v3_copy(av, v);
    }
    phys__artic_forward(w, b->artic);
    return PHYS_OK;
  }
  /* a free body: COM velocity = origin velocity + w x (R ipos); angular velocity to world */
  const phys_body *b = &w->bodies[j->body];
  double wv[3], r[3], lin[3];
  m3_mulv(wv, R, v + 3);
  m3_mulv(r, R, b->ipos);
  v3_cross(lin, wv, r);
  v3_add(lin, lin, v);
  if (phys_body_set_state(w, j->body, q, quat, lin, wv))
    return phys__mj_fail(c, key, phys__last_status_or(w, PHYS_E_INVALID),
                         "%s", phys_world_last_error(w));
  return PHYS_OK;
}

/* One <key>: set the world as the key says (on top of the initial state) and capture it. */
static phys_status key_parse(mj_ctx *c, const xmlNode *node, int nq, int nv, double *buf) {
  static const char *const attrs[] = {"name", "time", "qpos", "qvel", "act", "ctrl", "mpos",
                                      "mquat", NULL};
  phys_status st;
  if ((st = phys__mj_check_attrs(c, node, attrs))) return st;
  int na = c->world->nactuators, given, n;
  double *qpos = buf, *qvel = buf + nq, *ctrl = buf + nq + nv;
  /* qpos0: each joint's value in the initial state (the file's pose) */
  for (int i = 0, q = 0; i < c->nqjoint; i++) {
    const mj_qjoint *j = &c->qjoints[i];
    int nqj = 0;
    if (j->link) phys_link_get_joint(c->world, j->body, qpos + q, NULL, &nqj, NULL);
    else phys_body_get_state(c->world, j->body, qpos + q, qpos + q + 3, NULL, NULL);
    q += j->type == MJ_JOINT_FREE ? 7 : j->type == MJ_JOINT_BALL ? 4 : 1;
  }
  memset(qvel, 0, (size_t)nv * sizeof(double));
  memset(ctrl, 0, (size_t)na * sizeof(double));
  if ((st = vector_attr(c, node, "qpos", nq, "position coordinates (nq)", qpos, &given)) ||
      (st = vector_attr(c, node, "qvel", nv, "degrees of freedom (nv)", qvel, &given)) ||
      (st = vector_attr(c, node, "ctrl", na, "actuators", ctrl, &given)))
    return st;
  if (token_count(node, "act"))
    return phys__mj_fail(c, node, PHYS_E_PARSE, "attribute 'act' given, the model has 0 activations");
  /* mocap poses: 3 / 4 values per mocap body in document order; omitted: the file's poses */
  int nm = c->nmocap;
  double *mpos = ctrl + na, *mquat = mpos + 3 * nm;
  for (int m = 0; m < nm; m++)
    phys_body_get_state(c->world, c->mocaps[m], mpos + 3 * m, mquat + 4 * m, NULL, NULL);
  if ((st = vector_attr(c, node, "mpos", 3 * nm, "mocap position values (3 per mocap body)", mpos, &given)) ||
      (st = vector_attr(c, node, "mquat", 4 * nm, "mocap quaternion values (4 per mocap body)", mquat, &given)))
    return st;
  double t = 0.0;
  if ((st = phys__mj_reals(c, node, "time", &t, 1, 1, &n))) return st;
  /* set the joints in order, the controls and the time, then capture */
  for (int i = 0, q = 0, v = 0; i < c->nqjoint; i++) {
    const mj_qjoint *j = &c->qjoints[i];
    if ((st = joint_set(c, node, j, qpos + q, qvel + v))) return st;
    q += j->type == MJ_JOINT_FREE ? 7 : j->type == MJ_JOINT_BALL ? 4 : 1;
    v += j->type == MJ_JOINT_FREE ? 6 : j->type == MJ_JOINT_BALL ? 3 : 1;
  }
  for (int a = 0; a < na; a++)
    if (phys_actuator_set_ctrl(c->world, a, ctrl[a]))
      return phys__mj_fail(c, node, phys__last_status_or(c->world, PHYS_E_INVALID),
                           "%s", phys_world_last_error(c->world));
  for (int m = 0; m < nm; m++)
    if (phys_body_set_mocap_pose(c->world, c->mocaps[m], mpos + 3 * m, mquat + 4 * m))
      return phys__mj_fail(c, node, phys__last_status_or(c->world, PHYS_E_PARSE),
                           "mocap body %d of the key: %s", m,
                           phys_world_last_error(c->world));
  c->world->time = t;
  const char *name = phys__mj_attr(node, "name");
  if (phys_world_add_keyframe(c->world, name, NULL))
    return phys__mj_fail(c, node, phys__last_status_or(c->world, PHYS_E_INVALID),
                         "%s", phys_world_last_error(c->world));
  return PHYS_OK;
}

phys_status phys__mj_keyframes(mj_ctx *c, const xmlNode *node) {
  phys_status st = phys__mj_check_attrs(c, node, (const char *const[]){NULL});
  if (st) return st;
  phys_world *w = c->world;
  int nq = 0, nv = 0, na = w->nactuators;
  for (int i = 0; i < c->nqjoint; i++) {
    mj_joint_type t = c->qjoints[i].type;
    nq += t == MJ_JOINT_FREE ? 7 : t == MJ_JOINT_BALL ? 4 : 1;
    nv += t == MJ_JOINT_FREE ? 6 : t == MJ_JOINT_BALL ? 3 : 1;
  }
  /* the initial state and controls, restored after the keys */
  size_t size = phys_world_state_size(w);
  unsigned char *state0 = phys__xmalloc(size ? size : 1);
  double *buf = phys__xmalloc((size_t)(nq + nv + 2 * na + 7 * c->nmocap + 1) * sizeof(double));
  if (!state0 || !buf) {
    phys__xfree(state0);
    phys__xfree(buf);
    return phys__mj_fail(c, node, PHYS_E_NOMEM, "out of memory");
  }
  double *ctrl0 = buf + nq + nv + na + 7 * c->nmocap;
  for (int a = 0; a < na; a++) ctrl0[a] = w->actuators[a].ctrl;
  st = phys_world_save_state(w, state0, size, NULL)
           ? phys__mj_fail(c, node, phys__last_status_or(w, PHYS_E_INVALID),
                           "%s", phys_world_last_error(w))
           : PHYS_OK;
  for (const xmlNode *ch = node->children; ch && !st; ch = ch->next) {
    if (ch->type != XML_ELEMENT_NODE) continue;
    if (strcmp(phys__mj_name(ch), "key") != 0) {
      st = phys__mj_fail(c, ch, PHYS_E_PARSE, "unknown element in <keyframe>");
      break;
    }
    st = key_parse(c, ch, nq, nv, buf);
    if (!st && phys_world_load_state(w, state0, size))
      st = phys__mj_fail(c, ch, phys__last_status_or(w, PHYS_E_INVALID),
                         "%s", phys_world_last_error(w));
    for (int a = 0; a < na; a++) w->actuators[a].ctrl = ctrl0[a];
  }
  phys__xfree(state0);
  phys__xfree(buf);
  return st;
}
