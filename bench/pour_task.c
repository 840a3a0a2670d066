/* pour_task.c - the pouring task's control schedule and figures (pour_task.h). */
#include "pour_task.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- small pose algebra ------------------------------------------------------------------- */

/* v rotated by the unit quaternion q (w, x, y, z) */
static void quat_rotate(const double q[4], const double v[3], double out[3]) {
  double t[3] = {2 * (q[2] * v[2] - q[3] * v[1]), 2 * (q[3] * v[0] - q[1] * v[2]),
                 2 * (q[1] * v[1] - q[2] * v[0])};
  out[0] = v[0] + q[0] * t[0] + q[2] * t[2] - q[3] * t[1];
  out[1] = v[1] + q[0] * t[1] + q[3] * t[0] - q[1] * t[2];
  out[2] = v[2] + q[0] * t[2] + q[1] * t[1] - q[2] * t[0];
}

/* a b (Hamilton product) */
static void quat_mul(const double a[4], const double b[4], double out[4]) {
  double r[4] = {a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3],
                 a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2],
                 a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1],
                 a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0]};
  memcpy(out, r, sizeof r);
}

/* the point p (world) in the frame (pos, quat) */
static void to_frame(const double pos[3], const double quat[4], const double p[3], double out[3]) {
  double conj[4] = {quat[0], -quat[1], -quat[2], -quat[3]}, d[3] = {p[0] - pos[0], p[1] - pos[1],
                                                                     p[2] - pos[2]};
  quat_rotate(conj, d, out);
}

/* the world pose of the geom g (its body's frame composed with the geom's) */
static int geom_pose(const phys_world *w, const phys_geom_info *g, double pos[3], double quat[4]) {
  if (g->body == PHYS_ID_NONE) {
    memcpy(pos, g->pos, 3 * sizeof *pos);
    memcpy(quat, g->quat, 4 * sizeof *quat);
    return 0;
  }
  double bp[3], bq[4], off[3];
  if (phys_body_get_state(w, g->body, bp, bq, NULL, NULL) != PHYS_OK) return -1;
  quat_rotate(bq, g->pos, off);
  for (int k = 0; k < 3; k++) pos[k] = bp[k] + off[k];
  quat_mul(bq, g->quat, quat);
  return 0;
}

/* the SDF geom owned by `body` (PHYS_ID_NONE: a static world geom), or PHYS_ID_NONE */
static phys_id find_sdf_geom(const phys_world *w, phys_id body, phys_geom_info *out) {
  for (phys_id g = 0; g < phys_world_geom_id_bound(w); g++)
    if (phys_world_get_geom(w, g, out) == PHYS_OK && out->type == PHYS_GEOM_SDF &&
        out->body == body)
      return g;
  return PHYS_ID_NONE;
}

/* ---- reading the task --------------------------------------------------------------------- */

static int fail(char *why, size_t n, const char *msg, const char *name) {
  snprintf(why, n, "%s%s%s", msg, name ? " " : "", name ? name : "");
  return -1;
}

/* the keyframes pour_0, pour_1, ...: their times and controls */
static int read_schedule(pour_task *t, phys_world *w, char *why, size_t n) {
  char name[32];
  t->nact = phys_world_actuator_count(w);
  if (t->nact < 1 || t->nact > POUR_MAX_ACTUATORS) return fail(why, n, "actuator count", NULL);
  for (t->nkeys = 0;; t->nkeys++) {
    snprintf(name, sizeof name, "pour_%d", t->nkeys);
    int k = phys_world_find_keyframe(w, name);
    if (k < 0) break;
    if (t->nkeys == POUR_MAX_KEYS) return fail(why, n, "too many keyframes from", name);
    if (phys_world_apply_keyframe(w, k) != PHYS_OK)
      return fail(why, n, "cannot apply keyframe", name);
    t->key_time[t->nkeys] = phys_world_time(w);
    if (t->nkeys && !(t->key_time[t->nkeys] > t->key_time[t->nkeys - 1]))
      return fail(why, n, "keyframe times must increase at", name);
    for (int a = 0; a < t->nact; a++)
      if (phys_actuator_get_ctrl(w, a, &t->key_ctrl[t->nkeys][a]) != PHYS_OK)
        return fail(why, n, "cannot read the controls of", name);
  }
  if (t->nkeys == 0) return fail(why, n, "no keyframe", "pour_0");
  return phys_world_apply_keyframe(w, phys_world_find_keyframe(w, "pour_0")) == PHYS_OK
             ? 0
             : fail(why, n, "cannot restore", "pour_0");
}

int pour_task_init(pour_task *t, phys_world *w, char *why, size_t n) {
  memset(t, 0, sizeof *t);
  const char *pads[2] = {"L_finger", "R_finger"};
  t->bottle = phys_world_find_body(w, "bottle");
  if (t->bottle == PHYS_ID_NONE) return fail(why, n, "no body", "bottle");
  for (int s = 0; s < 2; s++)
    if ((t->pad[s] = phys_world_find_body(w, pads[s])) == PHYS_ID_NONE)
      return fail(why, n, "no body", pads[s]);
  for (;; t->nballs++) {
    char name[32];
    snprintf(name, sizeof name, "ball%d", t->nballs);
    phys_id b = phys_world_find_body(w, name);
    if (b == PHYS_ID_NONE) break;
    if (t->nballs == POUR_MAX_BALLS) return fail(why, n, "too many balls from", name);
    t->ball[t->nballs] = b;
  }
  if (t->nballs == 0) return fail(why, n, "no body", "ball0");
  phys_geom_info g;
  if (find_sdf_geom(w, t->bottle, &g) == PHYS_ID_NONE ||
      phys_world_get_sdf(w, g.sdf, &t->bottle_shape) != PHYS_OK)
    return fail(why, n, "the bottle has no SDF geom", NULL);
  if (find_sdf_geom(w, PHYS_ID_NONE, &g) == PHYS_ID_NONE ||
      phys_world_get_sdf(w, g.sdf, &t->cup_shape) != PHYS_OK)
    return fail(why, n, "no static SDF geom (the cup)", NULL);
  geom_pose(w, &g, t->cup_pos, t->cup_quat);
  if (read_schedule(t, w, why, n)) return -1;
  pour_task_mark_grip(t, w);
  return 0;
}

/* ---- driving ------------------------------------------------------------------------------ */

int pour_task_control(const pour_task *t, phys_world *w) {
  double time = phys_world_time(w);
  int k = 0;
  while (k + 1 < t->nkeys && t->key_time[k + 1] <= time) k++;
  double s = 0.0;
  if (k + 1 < t->nkeys) s = (time - t->key_time[k]) / (t->key_time[k + 1] - t->key_time[k]);
  s = fmin(fmax(s, 0.0), 1.0);
  for (int a = 0; a < t->nact; a++) {
    double c = t->key_ctrl[k][a];
    if (k + 1 < t->nkeys) c += s * (t->key_ctrl[k + 1][a] - c);
    if (phys_actuator_set_ctrl(w, a, c) != PHYS_OK) return -1;
  }
  return 0;
}

double pour_task_end(const pour_task *t) { return t->key_time[t->nkeys - 1]; }

/* ---- measuring ---------------------------------------------------------------------------- */

/* the bottle's origin and orientation in pad s's frame */
static void bottle_in_pad(const pour_task *t, const phys_world *w, int s, double p[3],
                          double q[4]) {
  double bp[3], bq[4], fp[3], fq[4];
  phys_body_get_state(w, t->bottle, bp, bq, NULL, NULL);
  phys_body_get_state(w, t->pad[s], fp, fq, NULL, NULL);
  to_frame(fp, fq, bp, p);
  double conj[4] = {fq[0], -fq[1], -fq[2], -fq[3]};
  quat_mul(conj, bq, q);
}

void pour_task_mark_grip(pour_task *t, const phys_world *w) {
  for (int s = 0; s < 2; s++) bottle_in_pad(t, w, s, t->grip0[s], t->grip0_quat[s]);
}

/* largest r and z of a profile, thickness added */
static void profile_extent(const phys_sdf_desc *d, double *rmax, double *zmax) {
  *rmax = *zmax = -INFINITY;
  for (int i = 0; i < d->npoint; i++) {
    *rmax = fmax(*rmax, d->point[i][0] + d->thickness);
    *zmax = fmax(*zmax, d->point[i][1] + d->thickness);
  }
}

pour_state pour_task_measure(const pour_task *t, const phys_world *w) {
  pour_state out = {0};
  double cup_r, cup_top, bot_r, bot_top, bpos[3], bquat[4];
  profile_extent(&t->cup_shape, &cup_r, &cup_top);
  profile_extent(&t->bottle_shape, &bot_r, &bot_top);
  phys_geom_info g;
  find_sdf_geom(w, t->bottle, &g);
  geom_pose(w, &g, bpos, bquat);
  for (int i = 0; i < t->nballs; i++) {
    double p[3], c[3], b[3];
    phys_body_get_state(w, t->ball[i], p, NULL, NULL, NULL);
    to_frame(t->cup_pos, t->cup_quat, p, c);
    to_frame(bpos, bquat, p, b);
    out.in_cup += c[2] > 0.0 && c[2] < cup_top && hypot(c[0], c[1]) < cup_r;
    out.out_of_bottle += b[2] > bot_top || b[2] < 0.0 || hypot(b[0], b[1]) > bot_r;
  }
  for (int s = 0; s < 2; s++) {
    double p[3], q[4];
    bottle_in_pad(t, w, s, p, q);
    double d[3] = {p[0] - t->grip0[s][0], p[1] - t->grip0[s][1], p[2] - t->grip0[s][2]};
    out.grip_drift = fmax(out.grip_drift, sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]));
    /* the angle of q0^-1 q */
    const double *q0 = t->grip0_quat[s];
    double dot = fabs(q0[0] * q[0] + q0[1] * q[1] + q0[2] * q[2] + q0[3] * q[3]);
    out.grip_turn = fmax(out.grip_turn, 2.0 * acos(fmin(dot, 1.0)));
  }
  return out;
}
