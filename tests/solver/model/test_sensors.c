/* test_sensors.c - sites and sensors: joint, actuator and frame sensors against the state and
 * the discrete free fall, accelerometer and gyro, force/torque at a site on hanging links,
 * contact force on a resting box, MJCF <site>/<sensor>, and the error paths. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cunit_main.h"
#include "scene_util.h"
#include "core/math3.h"

/* add a sensor, asserting success; returns its index */
static int add_sensor(phys_world *w, phys_sensor_type t, phys_sensor_obj ot, int oid,
                      phys_sensor_obj rt, int rid, const char *name) {
  phys_sensor_desc d = phys_sensor_desc_default();
  d.type = t;
  d.objtype = ot;
  d.objid = oid;
  d.reftype = rt;
  d.refid = rid;
  int id = -1;
  CU_ASSERT_EQUAL(phys_world_add_sensor(w, &d, name, &id), PHYS_OK);
  return id;
}

/* set d's type and object, then add it unnamed: the status (d's other fields stay as set) */
static phys_status add_as(phys_world *w, phys_sensor_desc *d, phys_sensor_type t,
                          phys_sensor_obj ot, int oid) {
  d->type = t;
  d->objtype = ot;
  d->objid = oid;
  return phys_world_add_sensor(w, d, NULL, NULL);
}

static void read3(const phys_world *w, int id, double *out) {
  CU_ASSERT_EQUAL(phys_sensor_read(w, id, out), PHYS_OK);
}

/* a hinge link about world y through `pivot` with a massive sphere at `off` (body frame) */
static phys_id add_hinge_bob(phys_world *w, phys_id parent, const double pivot[3],
                             const double off[3], double m, double qpos0) {
  phys_body_desc b = phys_body_desc_default();
  memcpy(b.pos, pivot, sizeof b.pos);
  phys_geom_desc g = phys_geom_desc_default();
  g.size[0] = 0.05;
  g.mass = m;
  g.contype = g.conaffinity = 0;
  memcpy(g.pos, off, sizeof g.pos);
  phys_joint_desc j = phys_joint_desc_default();
  v3_set(j.axis, 0, 1, 0);
  j.qpos0 = qpos0;
  phys_id id = PHYS_ID_NONE;
  CU_ASSERT_EQUAL(phys_world_add_link(w, parent, &b, &j, &g, 1, &id), PHYS_OK);
  return id;
}

/* jointpos, jointvel and actuatorfrc equal the joint and actuator queries, every step */
static void test_joint_actuator(void) {
  phys_world *w = make_world(NULL);
  double pivot[3] = {0, 0, 2}, off[3] = {0, 0, -1};
  phys_id link = add_hinge_bob(w, PHYS_ID_NONE, pivot, off, 1.0, 0.3);
  phys_actuator_desc ad = phys_actuator_desc_default();
  ad.type = PHYS_ACT_POSITION;
  ad.kp = 5.0;
  ad.kv = 0.5;
  int act;
  CU_ASSERT_EQUAL_FATAL(phys_world_add_actuator(w, link, &ad, &act), PHYS_OK);
  CU_ASSERT_EQUAL(phys_actuator_set_ctrl(w, act, -0.2), PHYS_OK);
  int sp = add_sensor(w, PHYS_SENSOR_JOINTPOS, PHYS_SENSOR_OBJ_BODY, link, 0, -1, "q");
  int sv = add_sensor(w, PHYS_SENSOR_JOINTVEL, PHYS_SENSOR_OBJ_BODY, link, 0, -1, "qd");
  int sa = add_sensor(w, PHYS_SENSOR_ACTUATORFRC, PHYS_SENSOR_OBJ_ACTUATOR, act, 0, -1, "f");
  CU_ASSERT_EQUAL(phys_world_sensor_count(w), 3);
  CU_ASSERT_EQUAL(phys_sensor_dim(w, sp), 1);
  CU_ASSERT_EQUAL(phys_world_find_sensor(w, "qd"), sv);
  CU_ASSERT_STRING_EQUAL(phys_sensor_get_name(w, sa), "f");
  double maxdiff = 0.0, fbig = 0.0;
  for (int i = 0; i < 300; i++) {
    CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
    double q[7], qd[6], f, s[4];
    phys_link_get_joint(w, link, q, qd, NULL, NULL);
    phys_actuator_get(w, act, &f, NULL);
    read3(w, sp, s);
    maxdiff = fmax(maxdiff, fabs(s[0] - q[0]));
    read3(w, sv, s);
    maxdiff = fmax(maxdiff, fabs(s[0] - qd[0]));
    read3(w, sa, s);
    maxdiff = fmax(maxdiff, fabs(s[0] - f));
    fbig = fmax(fbig, fabs(f));
  }
  printf("\n  joint/actuator sensors: max difference %.3g (|f| up to %.3f N m)\n", maxdiff, fbig);
  CU_ASSERT_EQUAL(maxdiff, 0.0);
  CU_ASSERT(fbig > 0.1);
  phys_world_destroy(w);
}

/* frame sensors on a falling, spinning cube against the discrete free fall of the
 * semi-implicit integrator: v_n = v0 + n h g, x_n = x0 + n h v0 + h^2 g n (n + 1) / 2, and the
 * exact rotation q_n = exp(n h w / 2) q0 (a cube's inertia is isotropic: w stays constant) */
static void test_frame_free_fall(void) {
  phys_world_options o = phys_world_options_default();
  o.timestep = 0.001;
  phys_world *w = make_world(&o);
  double p0[3] = {0.5, -0.2, 10.0}, v0[3] = {1.0, 0.5, 2.0}, om[3] = {0.3, -0.4, 1.2};
  phys_id box = add_box(w, p0, NULL, 0.1, 2.0, 0.5);
  CU_ASSERT_EQUAL(phys_body_set_state(w, box, NULL, NULL, v0, om), PHYS_OK);
  double spos[3] = {0.1, 0.05, -0.02}, squat[4] = {cos(0.3), sin(0.3), 0, 0};
  int site;
  CU_ASSERT_EQUAL_FATAL(phys_world_add_site(w, box, spos, squat, "tip", &site), PHYS_OK);
  int fp = add_sensor(w, PHYS_SENSOR_FRAMEPOS, PHYS_SENSOR_OBJ_BODY, box, 0, -1, "pos");
  int fq = add_sensor(w, PHYS_SENSOR_FRAMEQUAT, PHYS_SENSOR_OBJ_BODY, box, 0, -1, "quat");
  int fv = add_sensor(w, PHYS_SENSOR_FRAMELINVEL, PHYS_SENSOR_OBJ_BODY, box, 0, -1, "vel");
  int fw = add_sensor(w, PHYS_SENSOR_FRAMEANGVEL, PHYS_SENSOR_OBJ_BODY, box, 0, -1, "angvel");
  int tp = add_sensor(w, PHYS_SENSOR_FRAMEPOS, PHYS_SENSOR_OBJ_SITE, site, 0, -1, "tippos");
  int tv = add_sensor(w, PHYS_SENSOR_FRAMELINVEL, PHYS_SENSOR_OBJ_SITE, site, 0, -1, "tipvel");
  int rp = add_sensor(w, PHYS_SENSOR_FRAMEPOS, PHYS_SENSOR_OBJ_SITE, site, PHYS_SENSOR_OBJ_BODY,
                      box, "relpos");
  int rv = add_sensor(w, PHYS_SENSOR_FRAMELINVEL, PHYS_SENSOR_OBJ_SITE, site,
                      PHYS_SENSOR_OBJ_BODY, box, "relvel");
  int rq = add_sensor(w, PHYS_SENSOR_FRAMEQUAT, PHYS_SENSOR_OBJ_SITE, site, PHYS_SENSOR_OBJ_BODY,
                      box, "relquat");
  int acc = add_sensor(w, PHYS_SENSOR_ACCELEROMETER, PHYS_SENSOR_OBJ_SITE, site, 0, -1, "acc");
  CU_ASSERT_EQUAL(phys_sensor_dim(w, fq), 4);
  int n = 500;
  double err = 0.0, rel = 0.0, accmax = 0.0, h = o.timestep, g[3] = {0, 0, -9.81};
  for (int i = 1; i <= n; i++) {
    CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
    if (i % 50) continue;
    double x[3], v[3], q[4], e[4], s[4], t = i * h;
    for (int k = 0; k < 3; k++) {
      v[k] = v0[k] + i * h * g[k];
      x[k] = p0[k] + t * v0[k] + h * h * g[k] * i * (i + 1) / 2.0;
    }
    double wn = v3_norm(om), half = 0.5 * t * wn;
    e[0] = cos(half);
    for (int k = 0; k < 3; k++) e[1 + k] = om[k] / wn * sin(half);
    memcpy(q, e, sizeof q);
    read3(w, fp, s);
    for (int k = 0; k < 3; k++) err = fmax(err, fabs(s[k] - x[k]));
    read3(w, fv, s);
    for (int k = 0; k < 3; k++) err = fmax(err, fabs(s[k] - v[k]));
    read3(w, fw, s);
    for (int k = 0; k < 3; k++) err = fmax(err, fabs(s[k] - om[k]));
    read3(w, fq, s);
    double sg = s[0] * q[0] < 0 ? -1.0 : 1.0;
    for (int k = 0; k < 4; k++) err = fmax(err, fabs(sg * s[k] - q[k]));
    /* the site: x + R spos, v + w x R spos */
    double r[3], wr[3];
    q_rotate(r, q, spos);
    v3_cross(wr, om, r);
    read3(w, tp, s);
    for (int k = 0; k < 3; k++) err = fmax(err, fabs(s[k] - (x[k] + r[k])));
    read3(w, tv, s);
    for (int k = 0; k < 3; k++) err = fmax(err, fabs(s[k] - (v[k] + wr[k])));
    /* relative to the body: constant pose, no velocity */
    read3(w, rp, s);
    for (int k = 0; k < 3; k++) rel = fmax(rel, fabs(s[k] - spos[k]));
    read3(w, rv, s);
    for (int k = 0; k < 3; k++) rel = fmax(rel, fabs(s[k]));
    read3(w, rq, s);
    sg = s[0] * squat[0] < 0 ? -1.0 : 1.0;
    for (int k = 0; k < 4; k++) rel = fmax(rel, fabs(sg * s[k] - squat[k]));
    /* in free fall an accelerometer reads only the centripetal term w x (w x r) */
    double wwr[3], a[3];
    v3_cross(wwr, om, wr);
    read3(w, acc, s);
    double Rq[9], Rs[9], R[9];
    q_to_m3(Rq, q);
    q_to_m3(Rs, squat);
    m3_mul(R, Rq, Rs);
    m3_tmulv(a, R, wwr);
    for (int k = 0; k < 3; k++) accmax = fmax(accmax, fabs(s[k] - a[k]));
  }
  printf("\n  free fall: frame sensors within %.3g of the discrete solution, relative frame "
         "%.3g, accelerometer %.3g m/s^2\n", err, rel, accmax);
  CU_ASSERT(err < 1e-9);
  CU_ASSERT(rel < 1e-12);
  CU_ASSERT(accmax < 1e-6);
  phys_world_destroy(w);
}

/* a box resting on the ground: the accelerometer reads +g (in its tilted site frame), contact
 * force and touch read the weight; a free-falling sphere's accelerometer reads ~0 */
static void test_resting_box(void) {
  for (int sleep = 0; sleep < 2; sleep++) {
    phys_world_options o = phys_world_options_default();
    o.sleep_enabled = sleep;
    phys_world *w = make_world(&o);
    add_ground(w, 0.8);
    double p[3] = {0, 0, 0.1}, m = 3.0, g = 9.81;
    phys_id box = add_box(w, p, NULL, 0.1, m, 0.8);
    double spos[3] = {0.05, 0, 0.1}, sq[4] = {cos(0.4), 0, sin(0.4), 0}; /* 0.8 rad about y */
    int site, fall_site;
    CU_ASSERT_EQUAL_FATAL(phys_world_add_site(w, box, spos, sq, "imu", &site), PHYS_OK);
    double fp[3] = {5, 0, 50};
    phys_id ball = add_sphere(w, fp, 0.1, 1.0, 0.5);
    CU_ASSERT_EQUAL_FATAL(phys_world_add_site(w, ball, fp, NULL, NULL, &fall_site), PHYS_OK);
    int acc = add_sensor(w, PHYS_SENSOR_ACCELEROMETER, PHYS_SENSOR_OBJ_SITE, site, 0, -1, "acc");
    int cf = add_sensor(w, PHYS_SENSOR_CONTACTFORCE, PHYS_SENSOR_OBJ_BODY, box, 0, -1, "cf");
    int to = add_sensor(w, PHYS_SENSOR_TOUCH, PHYS_SENSOR_OBJ_SITE, site, 0, -1, "touch");
    int fa = add_sensor(w, PHYS_SENSOR_ACCELEROMETER, PHYS_SENSOR_OBJ_SITE, fall_site, 0, -1,
                        "fall");
    double a[4], f[4], t[4], af[4];
    read3(w, acc, a); /* before the first step: -gravity in the site frame */
    CU_ASSERT_DOUBLE_EQUAL(a[2], g * cos(0.8), 1e-12);
    CU_ASSERT_EQUAL_FATAL(step_n(w, 1000) < 1e-2, 1);
    read3(w, acc, a);
    read3(w, cf, f);
    read3(w, to, t);
    read3(w, fa, af);
    /* +g up, seen from a site pitched by 0.8 rad about y: (-g sin, 0, g cos) */
    double ex[3] = {-g * sin(0.8), 0.0, g * cos(0.8)};
    double aerr = 0.0;
    for (int k = 0; k < 3; k++) aerr = fmax(aerr, fabs(a[k] - ex[k]));
    printf("\n  resting box (sleep %d, asleep %d): accelerometer error %.3g m/s^2, contact force "
           "(%.4f, %.4f, %.5f) N for m g = %.5f N, touch %.5f N; falling sphere reads %.3g\n",
           sleep, phys_body_is_sleeping(w, box), aerr, f[0], f[1], f[2], m * g, t[0],
           v3_norm(af));
    CU_ASSERT(aerr < 1e-3);
    CU_ASSERT(fabs(f[2] - m * g) < 1e-3 * m * g);
    CU_ASSERT(fabs(f[0]) < 1e-3 * m * g && fabs(f[1]) < 1e-3 * m * g);
    CU_ASSERT(fabs(t[0] - m * g) < 1e-3 * m * g);
    CU_ASSERT(v3_norm(af) < 1e-9);
    phys_world_destroy(w);
  }
}

/* a body spinning about a non-principal axis (it tumbles): the gyro reads its angular velocity
 * in the site frame at every step */
static void test_gyro(void) {
  phys_world_options o = phys_world_options_default();
  v3_zero(o.gravity);
  phys_world *w = make_world(&o);
  phys_geom_desc g = phys_geom_desc_default();
  g.type = PHYS_GEOM_BOX;
  v3_set(g.size, 0.3, 0.1, 0.05);
  phys_body_desc b = phys_body_desc_default();
  v3_set(b.angvel, 2.0, 1.0, 3.0);
  phys_id id;
  CU_ASSERT_EQUAL_FATAL(phys_world_add_body(w, &b, &g, 1, &id), PHYS_OK);
  double spos[3] = {0.1, 0, 0}, sq[4] = {0.5, 0.5, 0.5, 0.5};
  int site;
  CU_ASSERT_EQUAL_FATAL(phys_world_add_site(w, id, spos, sq, "gyro_site", &site), PHYS_OK);
  int gy = add_sensor(w, PHYS_SENSOR_GYRO, PHYS_SENSOR_OBJ_SITE, site, 0, -1, "gyro");
  double err = 0.0, change = 0.0, first[3] = {0, 0, 0};
  for (int i = 0; i < 500; i++) {
    CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
    double q[4], om[3], sp[3], sqw[4], R[9], ex[3], r[4];
    phys_body_get_state(w, id, NULL, q, NULL, om);
    CU_ASSERT_EQUAL(phys_site_get_pose(w, site, sp, sqw), PHYS_OK);
    q_to_m3(R, sqw);
    m3_tmulv(ex, R, om);
    read3(w, gy, r);
    for (int k = 0; k < 3; k++) err = fmax(err, fabs(r[k] - ex[k]));
    /* the site's orientation is the body's composed with the site's own */
    double qq[4];
    q_mul(qq, q, sq);
    double sg = qq[0] * sqw[0] < 0 ? -1 : 1;
    for (int k = 0; k < 4; k++) err = fmax(err, fabs(sg * qq[k] - sqw[k]));
    if (i == 0) v3_copy(first, r);
    change = fmax(change, fabs(r[0] - first[0]) + fabs(r[1] - first[1]) + fabs(r[2] - first[2]));
  }
  printf("\n  gyro: error %.3g rad/s on a tumbling box (reading changed by up to %.3f)\n", err,
         change);
  CU_ASSERT(err < 1e-12);
  CU_ASSERT(change > 0.1);
  phys_world_destroy(w);
}

/* force and torque at sites on a hanging two-link chain at rest: the upper link carries both
 * weights, the lower one its own; the torque is the lever arm of the weights about the site */
static void test_force_torque(void) {
  phys_world *w = make_world(NULL);
  double pivot[3] = {0, 0, 3}, off1[3] = {0, 0, -0.5}, off2[3] = {0, 0, -0.4};
  double m1 = 2.0, m2 = 1.5, g = 9.81;
  phys_id l1 = add_hinge_bob(w, PHYS_ID_NONE, pivot, off1, m1, 0.0);
  double jp[3] = {0, 0, -1};
  phys_id l2 = add_hinge_bob(w, l1, jp, off2, m2, 0.0);
  /* sites: on link 1 at the hinge, shifted 0.3 in x; on link 2, rotated 90 deg about z */
  double s1[3] = {0.3, 0, 0}, s2[3] = {0, 0.2, -0.1}, qz[4] = {cos(M_PI / 4), 0, 0, sin(M_PI / 4)};
  int site1, site2;
  CU_ASSERT_EQUAL_FATAL(phys_world_add_site(w, l1, s1, NULL, "s1", &site1), PHYS_OK);
  CU_ASSERT_EQUAL_FATAL(phys_world_add_site(w, l2, s2, qz, "s2", &site2), PHYS_OK);
  int f1 = add_sensor(w, PHYS_SENSOR_FORCE, PHYS_SENSOR_OBJ_SITE, site1, 0, -1, "f1");
  int t1 = add_sensor(w, PHYS_SENSOR_TORQUE, PHYS_SENSOR_OBJ_SITE, site1, 0, -1, "t1");
  int f2 = add_sensor(w, PHYS_SENSOR_FORCE, PHYS_SENSOR_OBJ_SITE, site2, 0, -1, "f2");
  int t2 = add_sensor(w, PHYS_SENSOR_TORQUE, PHYS_SENSOR_OBJ_SITE, site2, 0, -1, "t2");
  step_n(w, 200);
  double F1[4], T1[4], F2[4], T2[4];
  read3(w, f1, F1);
  read3(w, t1, T1);
  read3(w, f2, F2);
  read3(w, t2, T2);
  /* expected, world axes: site 1 at (0.3, 0, 3); COMs at (0, 0, 2.5) and (0, 0, 1.6) */
  double W1 = m1 * g, W2 = m2 * g;
  double eF1[3] = {0, 0, W1 + W2};
  double eT1[3] = {0, 0.3 * (W1 + W2), 0}; /* (x - p) x (0, 0, W): (-0.3, 0, .) x W z */
  /* site 2 at (0, 0.2, 1.9), rotated 90 deg about z: world y is its -x... R^T (a, b, c) =
   * (b, -a, c) */
  double eF2[3] = {0, 0, W2};
  double wT2[3] = {-0.2 * W2, 0, 0}; /* (0, -0.2, .) x (0, 0, W2) = (-0.2 W2, 0, 0) */
  double eT2[3] = {wT2[1], -wT2[0], wT2[2]};
  double err = 0.0;
  for (int k = 0; k < 3; k++) {
    err = fmax(err, fabs(F1[k] - eF1[k]) / (W1 + W2));
    err = fmax(err, fabs(T1[k] - eT1[k]) / (W1 + W2));
    err = fmax(err, fabs(F2[k] - eF2[k]) / W2);
    err = fmax(err, fabs(T2[k] - eT2[k]) / W2);
  }
  printf("\n  hanging chain: force (%.5f, %.5f, %.5f) N for %.5f N, torque (%.5f, %.5f, %.5f) N m "
         "for %.5f N m; lower link force z %.5f, torque y %.5f (expected %.5f); relative error "
         "%.3g\n", F1[0], F1[1], F1[2], W1 + W2, T1[0], T1[1], T1[2], eT1[1], F2[2], T2[1],
         eT2[1], err);
  CU_ASSERT(err < 1e-3);

  /* swinging: the force is no longer the weight, but the sensor still balances Newton: the
   * lower link's force equals m2 (a_com - g) summed with no external force */
  CU_ASSERT_EQUAL(phys_link_set_joint(w, l1, 0.5, 0.0), PHYS_OK);
  step_n(w, 100);
  read3(w, f2, F2);
  CU_ASSERT(fabs(F2[2]) > 0.01 && fabs(F2[2] - W2) > 1e-3);
  phys_world_destroy(w);
}

/* the model hash covers sites; reading allocates nothing; stepping with sensors stays
 * allocation-free once warm */
static void test_hash_alloc(void) {
  phys_world *w = make_world(NULL);
  add_ground(w, 0.5);
  double p[3] = {0, 0, 0.1};
  phys_id box = add_box(w, p, NULL, 0.1, 1.0, 0.5);
  uint64_t h0 = phys_world_model_hash(w);
  double sp[3] = {0, 0, 0.1};
  int site;
  CU_ASSERT_EQUAL_FATAL(phys_world_add_site(w, box, sp, NULL, "top", &site), PHYS_OK);
  CU_ASSERT_NOT_EQUAL(phys_world_model_hash(w), h0);
  int ids[4];
  ids[0] = add_sensor(w, PHYS_SENSOR_FORCE, PHYS_SENSOR_OBJ_SITE, site, 0, -1, NULL);
  ids[1] = add_sensor(w, PHYS_SENSOR_ACCELEROMETER, PHYS_SENSOR_OBJ_SITE, site, 0, -1, NULL);
  ids[2] = add_sensor(w, PHYS_SENSOR_CONTACTFORCE, PHYS_SENSOR_OBJ_BODY, box, 0, -1, NULL);
  ids[3] = add_sensor(w, PHYS_SENSOR_FRAMEQUAT, PHYS_SENSOR_OBJ_SITE, site, 0, -1, NULL);
  CU_ASSERT_STRING_EQUAL(phys_sensor_get_name(w, ids[0]), "");
  step_n(w, 50);
  uint64_t a0 = phys_alloc_count();
  double v[4];
  for (int i = 0; i < 50; i++) {
    CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
    for (int k = 0; k < 4; k++) CU_ASSERT_EQUAL(phys_sensor_read(w, ids[k], v), PHYS_OK);
  }
  CU_ASSERT_EQUAL(phys_alloc_count(), a0);
  /* a resting free body receives nothing "from its parent": force ~ 0 */
  CU_ASSERT_EQUAL(phys_sensor_read(w, ids[0], v), PHYS_OK);
  printf("\n  free box at rest: force sensor %.3g N\n", v3_norm(v));
  CU_ASSERT(v3_norm(v) < 1e-2);
  phys_world_destroy(w);
}

/* bad descriptions and ids are rejected with the world unchanged; removed bodies read STATE */
static void test_api_errors(void) {
  phys_world *w = make_world(NULL);
  double p[3] = {0, 0, 1}, zero[3] = {0, 0, 0}, nan3[3] = {NAN, 0, 0}, q0[4] = {0, 0, 0, 0};
  phys_id box = add_box(w, p, NULL, 0.1, 1.0, 0.5);
  phys_id fixed;
  phys_body_desc sd = phys_body_desc_default();
  sd.is_static = 1;
  CU_ASSERT_EQUAL_FATAL(phys_world_add_body(w, &sd, NULL, 0, &fixed), PHYS_OK);
  int site, wsite;
  /* sites */
  CU_ASSERT_EQUAL(phys_world_add_site(w, 99, zero, NULL, NULL, NULL), PHYS_E_NOT_FOUND);
  CU_ASSERT_EQUAL(phys_world_add_site(w, box, nan3, NULL, NULL, NULL), PHYS_E_INVALID);
  CU_ASSERT_EQUAL(phys_world_add_site(w, box, NULL, NULL, NULL, NULL), PHYS_E_INVALID);
  CU_ASSERT_EQUAL(phys_world_add_site(w, box, zero, q0, NULL, NULL), PHYS_E_INVALID);
  CU_ASSERT_EQUAL(phys_world_add_site(w, box, zero, NULL, "s", &site), PHYS_OK);
  CU_ASSERT_EQUAL(phys_world_add_site(w, box, zero, NULL, "s", NULL), PHYS_E_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(phys_world_last_error(w), "duplicate"));
  CU_ASSERT_EQUAL(phys_world_add_site(w, PHYS_ID_NONE, p, NULL, "w", &wsite), PHYS_OK);
  CU_ASSERT_EQUAL(phys_world_site_count(w), 2);
  CU_ASSERT_EQUAL(phys_world_find_site(w, "w"), wsite);
  CU_ASSERT_EQUAL(phys_world_find_site(w, "nope"), -1);
  CU_ASSERT_EQUAL(phys_world_find_site(w, NULL), -1);
  CU_ASSERT_PTR_NULL(phys_site_get_name(w, 5));
  CU_ASSERT_EQUAL(phys_site_get_pose(w, -1, NULL, NULL), PHYS_E_NOT_FOUND);
  CU_ASSERT_EQUAL(phys_site_get_pose(w, 7, NULL, NULL), PHYS_E_NOT_FOUND);
  double sp[3], sq[4];
  CU_ASSERT_EQUAL(phys_site_get_pose(w, wsite, sp, sq), PHYS_OK);
  CU_ASSERT_DOUBLE_EQUAL(sp[2], 1.0, 0.0);
  phys_id sb;
  CU_ASSERT_EQUAL(phys_site_get_info(w, site, &sb, NULL, NULL), PHYS_OK);
  CU_ASSERT_EQUAL(sb, box);
  /* sensors */
  phys_sensor_desc d = phys_sensor_desc_default();
  CU_ASSERT_EQUAL(phys_world_add_sensor(w, NULL, NULL, NULL), PHYS_E_INVALID);
  d.type = (phys_sensor_type)99;
  CU_ASSERT_EQUAL(phys_world_add_sensor(w, &d, NULL, NULL), PHYS_E_INVALID);
  /* a free body has no joint */
  CU_ASSERT_EQUAL(add_as(w, &d, PHYS_SENSOR_JOINTPOS, PHYS_SENSOR_OBJ_BODY, box), PHYS_E_NOT_FOUND);
  CU_ASSERT_EQUAL(add_as(w, &d, PHYS_SENSOR_ACTUATORFRC, PHYS_SENSOR_OBJ_ACTUATOR, 0),
                  PHYS_E_NOT_FOUND);
  CU_ASSERT_EQUAL(add_as(w, &d, PHYS_SENSOR_GYRO, PHYS_SENSOR_OBJ_BODY, box), PHYS_E_INVALID);
  CU_ASSERT_EQUAL(add_as(w, &d, PHYS_SENSOR_GYRO, PHYS_SENSOR_OBJ_SITE, 42), PHYS_E_NOT_FOUND);
  d.reftype = PHYS_SENSOR_OBJ_BODY;
  d.refid = box;
  CU_ASSERT_EQUAL(add_as(w, &d, PHYS_SENSOR_GYRO, PHYS_SENSOR_OBJ_SITE, site), PHYS_E_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(phys_world_last_error(w), "reference"));
  d.reftype = PHYS_SENSOR_OBJ_NONE;
  /* a world site has no parent joint */
  CU_ASSERT_EQUAL(add_as(w, &d, PHYS_SENSOR_FORCE, PHYS_SENSOR_OBJ_SITE, wsite), PHYS_E_INVALID);
  CU_ASSERT_EQUAL(add_as(w, &d, PHYS_SENSOR_CONTACTFORCE, PHYS_SENSOR_OBJ_BODY, fixed),
                  PHYS_E_INVALID);
  CU_ASSERT_EQUAL(add_as(w, &d, PHYS_SENSOR_FRAMEPOS, PHYS_SENSOR_OBJ_ACTUATOR, 0),
                  PHYS_E_INVALID);
  d.objtype = PHYS_SENSOR_OBJ_BODY_COM;
  d.objid = box;
  d.reftype = PHYS_SENSOR_OBJ_SITE;
  d.refid = 9;
  CU_ASSERT_EQUAL(phys_world_add_sensor(w, &d, NULL, NULL), PHYS_E_NOT_FOUND);
  char longname[80];
  memset(longname, 'x', sizeof longname - 1);
  longname[79] = '\0';
  d.reftype = PHYS_SENSOR_OBJ_NONE;
  CU_ASSERT_EQUAL(phys_world_add_sensor(w, &d, longname, NULL), PHYS_E_INVALID);
  CU_ASSERT_EQUAL(phys_world_sensor_count(w), 0);
  int sid;
  CU_ASSERT_EQUAL(phys_world_add_sensor(w, &d, "com", &sid), PHYS_OK);
  CU_ASSERT_EQUAL(phys_world_add_sensor(w, &d, "com", NULL), PHYS_E_INVALID);
  CU_ASSERT_EQUAL(phys_world_sensor_count(w), 1);
  phys_sensor_desc back;
  CU_ASSERT_EQUAL(phys_sensor_get_desc(w, sid, &back), PHYS_OK);
  CU_ASSERT_EQUAL(back.objtype, PHYS_SENSOR_OBJ_BODY_COM);
  CU_ASSERT_EQUAL(phys_sensor_dim(w, 3), -1);
  CU_ASSERT_PTR_NULL(phys_sensor_get_name(w, -1));
  double v[4];
  CU_ASSERT_EQUAL(phys_sensor_read(w, 1, v), PHYS_E_NOT_FOUND);
  CU_ASSERT_EQUAL(phys_sensor_read(w, sid, NULL), PHYS_E_NOT_FOUND);
  CU_ASSERT_EQUAL(phys_sensor_read(w, sid, v), PHYS_OK);
  CU_ASSERT_DOUBLE_EQUAL(v[2], 1.0, 1e-12);
  /* removing the body: its sensors and sites report it */
  CU_ASSERT_EQUAL(phys_world_remove_body(w, box), PHYS_OK);
  CU_ASSERT_EQUAL(phys_sensor_read(w, sid, v), PHYS_E_STATE);
  CU_ASSERT_PTR_NOT_NULL(strstr(phys_world_last_error(w), "removed"));
  CU_ASSERT_EQUAL(phys_site_get_pose(w, site, sp, NULL), PHYS_E_STATE);
  CU_ASSERT_EQUAL(phys_world_add_site(w, box, zero, NULL, NULL, NULL), PHYS_E_NOT_FOUND);
  phys_world_destroy(w);
}

/* a swinging pendulum: the hinge's reaction read at a site on the hinge, in the link frame,
 * against m (a_com - g) with a_com from the pendulum equation at the current angle and rate
 * (the sensor's acceleration is the step's finite difference: O(h) agreement) */
static void test_swinging_reaction(void) {
  phys_world_options o = phys_world_options_default();
  o.timestep = 0.0005;
  phys_world *w = make_world(&o);
  double pivot[3] = {0, 0, 2}, off[3] = {0, 0, -1}, m = 1.0, L = 1.0, r = 0.05, g = 9.81;
  phys_id link = add_hinge_bob(w, PHYS_ID_NONE, pivot, off, m, 1.0);
  double zero[3] = {0, 0, 0};
  int site;
  CU_ASSERT_EQUAL_FATAL(phys_world_add_site(w, link, zero, NULL, "hinge", &site), PHYS_OK);
  int fs = add_sensor(w, PHYS_SENSOR_FORCE, PHYS_SENSOR_OBJ_SITE, site, 0, -1, "f");
  int ts = add_sensor(w, PHYS_SENSOR_TORQUE, PHYS_SENSOR_OBJ_SITE, site, 0, -1, "t");
  double I = 0.4 * m * r * r + m * L * L, err = 0.0, terr = 0.0;
  for (int i = 0; i < 2000; i++) {
    CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
    if (i % 100 != 99) continue;
    double q[7], qd[6], F[4], T[4];
    phys_link_get_joint(w, link, q, qd, NULL, NULL);
    read3(w, fs, F);
    read3(w, ts, T);
    /* link frame: the rod along -z, the hinge about y; theta about +y moves the bob to -x */
    double th = q[0], thd = qd[0], thdd = -m * g * L * sin(th) / I;
    /* COM acceleration in link axes: centripetal +z L thd^2 (toward the pivot), tangential
     * -x L thdd; gravity in link axes: R_y(th)^T (0, 0, -g) = (g sin th, 0, -g cos th) */
    double a[3] = {-L * thdd, 0.0, L * thd * thd};
    double gl[3] = {g * sin(th), 0.0, -g * cos(th)};
    for (int k = 0; k < 3; k++) err = fmax(err, fabs(F[k] - m * (a[k] - gl[k])) / (m * g));
    /* a hinge transmits no torque about its axis (up to the O(h) of the finite difference) */
    terr = fmax(terr, fabs(T[1]) / (m * g * L));
  }
  printf("\n  swinging pendulum (h = 0.5 ms): hinge reaction within %.3g m g of m (a - g), axial "
         "torque %.3g m g L\n", err, terr);
  CU_ASSERT(err < 2e-3);
  CU_ASSERT(terr < 2e-3);
  phys_world_destroy(w);
}

/* MJCF: sites in bodies, welded children, the world and defaults; sensors of every supported
 * kind read back by name */
static const char *mjcf_ok =
  "<mujoco>\n"
  "  <default>\n"
  "    <site size='0.01' rgba='1 0 0 1'/>\n"
  "    <default class='up'><site pos='0 0 0.1' euler='0 0 90'/></default>\n"
  "  </default>\n"
  "  <worldbody>\n"
  "    <geom type='plane' size='5 5 0.1'/>\n"
  "    <site name='origin' pos='1 2 3'/>\n"
  "    <body name='arm' pos='0 0 2'>\n"
  "      <joint name='hinge' type='hinge' axis='0 1 0'/>\n"
  "      <geom type='capsule' fromto='0 0 0 0 0 -1' size='0.05' mass='2'/>\n"
  "      <site name='hinge_site' pos='0.3 0 0'/>\n"
  "      <body name='tip' pos='0 0 -1'>\n"
  "        <site name='tip_site' class='up'/>\n"
  "      </body>\n"
  "    </body>\n"
  "    <body name='box' pos='2 0 0.1'>\n"
  "      <freejoint/>\n"
  "      <geom type='box' size='0.1 0.1 0.1' mass='3'/>\n"
  "      <site name='imu' type='box' size='0.02'/>\n"
  "    </body>\n"
  "  </worldbody>\n"
  "  <actuator><motor name='m' joint='hinge' gear='2'/></actuator>\n"
  "  <sensor>\n"
  "    <jointpos name='q' joint='hinge'/>\n"
  "    <jointvel name='qd' joint='hinge' noise='0.01'/>\n"
  "    <actuatorfrc name='frc' actuator='m'/>\n"
  "    <framepos name='tip_pos' objtype='site' objname='tip_site'/>\n"
  "    <framequat name='tip_quat' objtype='site' objname='tip_site' reftype='xbody' refname='arm'/>\n"
  "    <framelinvel name='box_vel' objtype='body' objname='box'/>\n"
  "    <frameangvel name='box_w' objtype='xbody' objname='box' reftype='site' refname='origin'/>\n"
  "    <accelerometer name='acc' site='imu'/>\n"
  "    <gyro name='gyro' site='imu'/>\n"
  "    <force name='f' site='hinge_site'/>\n"
  "    <torque name='t' site='hinge_site' cutoff='100'/>\n"
  "    <touch name='touch' site='imu'/>\n"
  "  </sensor>\n"
  "</mujoco>\n";

static void test_mjcf(void) {
  phys_world *w = NULL;
  phys_error err;
  phys_status st = phys_load_mjcf_string(mjcf_ok, strlen(mjcf_ok), "s.xml", NULL, &w, &err);
  if (st) printf("\n  %s\n", err.message);
  CU_ASSERT_EQUAL_FATAL(st, PHYS_OK);
  CU_ASSERT_EQUAL(phys_world_site_count(w), 4);
  CU_ASSERT_EQUAL(phys_world_sensor_count(w), 12);
  /* poses: the world site, the welded tip's site (class 'up': 0.1 above the tip, yawed 90) */
  double p[3], q[4];
  CU_ASSERT_EQUAL(phys_site_get_pose(w, phys_world_find_site(w, "origin"), p, q), PHYS_OK);
  CU_ASSERT_DOUBLE_EQUAL(p[0] + p[1] + p[2], 6.0, 1e-12);
  int tip = phys_world_find_site(w, "tip_site");
  phys_id body;
  CU_ASSERT_EQUAL(phys_site_get_info(w, tip, &body, p, q), PHYS_OK);
  CU_ASSERT_EQUAL(body, phys_world_find_body(w, "arm"));
  CU_ASSERT_DOUBLE_EQUAL(p[2], -0.9, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(fabs(q[0]), cos(M_PI / 4), 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(fabs(q[3]), sin(M_PI / 4), 1e-12);
  /* notices: noise, cutoff, touch */
  int nn = 0;
  for (int i = 0; i < phys_world_notice_count(w); i++) {
    const char *n = phys_world_notice(w, i);
    nn += strstr(n, "noise") != NULL || strstr(n, "cutoff") != NULL || strstr(n, "touch") != NULL;
  }
  CU_ASSERT_EQUAL(nn, 3);
  /* run with a motor torque; read everything back */
  phys_actuator_set_ctrl(w, phys_world_find_actuator(w, "m"), 1.5);
  step_n(w, 300);
  double v[4], jq[7], jqd[6];
  phys_id arm = phys_world_find_body(w, "arm"), box = phys_world_find_body(w, "box");
  phys_link_get_joint(w, arm, jq, jqd, NULL, NULL);
  read3(w, phys_world_find_sensor(w, "q"), v);
  CU_ASSERT_DOUBLE_EQUAL(v[0], jq[0], 0.0);
  CU_ASSERT(fabs(jq[0]) > 0.1);
  read3(w, phys_world_find_sensor(w, "qd"), v);
  CU_ASSERT_DOUBLE_EQUAL(v[0], jqd[0], 0.0);
  read3(w, phys_world_find_sensor(w, "frc"), v);
  CU_ASSERT_DOUBLE_EQUAL(v[0], 1.5, 1e-12);
  /* the tip site relative to the arm's body frame: yaw 90 whatever the joint does */
  read3(w, phys_world_find_sensor(w, "tip_quat"), v);
  CU_ASSERT_DOUBLE_EQUAL(fabs(v[0]), cos(M_PI / 4), 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(fabs(v[3]), sin(M_PI / 4), 1e-12);
  double tp[3];
  CU_ASSERT_EQUAL(phys_site_get_pose(w, tip, tp, NULL), PHYS_OK);
  read3(w, phys_world_find_sensor(w, "tip_pos"), v);
  CU_ASSERT_DOUBLE_EQUAL(v[0], tp[0], 1e-15);
  CU_ASSERT_DOUBLE_EQUAL(v[2], tp[2], 1e-15);
  double bv[3];
  phys_body_get_state(w, box, NULL, NULL, bv, NULL);
  read3(w, phys_world_find_sensor(w, "box_vel"), v);
  CU_ASSERT_DOUBLE_EQUAL(v[2], bv[2], 1e-15);
  read3(w, phys_world_find_sensor(w, "acc"), v);
  CU_ASSERT_DOUBLE_EQUAL(v[2], 9.81, 1e-3);
  read3(w, phys_world_find_sensor(w, "touch"), v);
  CU_ASSERT_DOUBLE_EQUAL(v[0], 3 * 9.81, 3 * 9.81e-3);
  read3(w, phys_world_find_sensor(w, "f"), v);
  CU_ASSERT(v3_norm(v) > 1.0);
  phys_world_destroy(w);
}

/* MJCF errors name the file, line and element */
static void test_mjcf_errors(void) {
  static const struct { const char *sensor; phys_status code; const char *text; } cases[] = {
    {"<jointpos joint='nope'/>", PHYS_E_PARSE, "unknown joint 'nope'"},
    {"<accelerometer site='nope'/>", PHYS_E_PARSE, "unknown site 'nope'"},
    {"<gyro/>", PHYS_E_PARSE, "missing required attribute 'site'"},
    {"<actuatorfrc actuator='x'/>", PHYS_E_PARSE, "unknown actuator 'x'"},
    {"<framepos objtype='body' objname='ghost'/>", PHYS_E_PARSE, "unknown body 'ghost'"},
    {"<framepos objtype='body' objname='welded'/>", PHYS_E_UNSUPPORTED, "welded"},
    {"<framepos objtype='geom' objname='g'/>", PHYS_E_UNSUPPORTED, "objtype 'geom'"},
    {"<framepos objtype='site' objname='s' reftype='body'/>", PHYS_E_PARSE, "together"},
    {"<rangefinder site='s'/>", PHYS_E_UNSUPPORTED, "<rangefinder>: sensor type not supported"},
    {"<bogus/>", PHYS_E_PARSE, "unknown element in <sensor>"},
    {"<gyro site='s' nsample='3'/>", PHYS_E_UNSUPPORTED, "nsample"},
    {"<gyro site='s' name='a'/><gyro site='s' name='a'/>", PHYS_E_INVALID, "duplicate name"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char xml[1024];
    snprintf(xml, sizeof xml,
             "<mujoco>\n<worldbody>\n<body name='b'>\n<freejoint/>\n<geom size='0.1'/>\n"
             "<site name='s'/>\n<body name='welded'><geom name='g' size='0.1'/></body>\n"
             "</body>\n</worldbody>\n<sensor>\n%s\n</sensor>\n</mujoco>\n", cases[i].sensor);
    phys_world *w = NULL;
    phys_error err;
    phys_status st = phys_load_mjcf_string(xml, strlen(xml), "e.xml", NULL, &w, &err);
    int ok = st == cases[i].code && strstr(err.message, cases[i].text) &&
             strncmp(err.message, "e.xml:11:", 9) == 0;
    if (!ok) printf("\n  case %zu: %d '%s'\n", i, (int)st, err.message);
    CU_ASSERT(ok);
    CU_ASSERT_PTR_NULL(w);
    phys_world_destroy(w);
  }
  /* site errors: a duplicate name, an unknown class, an unsupported attribute */
  static const struct { const char *site; const char *text; } sites[] = {
    {"<site name='s'/><site name='s'/>", "duplicate name 's'"},
    {"<site class='nope'/>", "unknown default class 'nope'"},
    {"<site fromto='0 0 0 1 1 1'/>", "attribute 'fromto' not supported"},
    {"<site pos='1 2'/>", "pos"},
  };
  for (size_t i = 0; i < sizeof sites / sizeof sites[0]; i++) {
    char xml[512];
    snprintf(xml, sizeof xml,
             "<mujoco>\n<worldbody>\n<body>\n<freejoint/>\n<geom size='0.1'/>\n%s\n</body>\n"
             "</worldbody>\n</mujoco>\n", sites[i].site);
    phys_world *w = NULL;
    phys_error err;
    phys_status st = phys_load_mjcf_string(xml, strlen(xml), "e.xml", NULL, &w, &err);
    int ok = st != PHYS_OK && strstr(err.message, sites[i].text) &&
             strncmp(err.message, "e.xml:6: <site>", 15) == 0;
    if (!ok) printf("\n  site case %zu: %d '%s'\n", i, (int)st, err.message);
    CU_ASSERT(ok);
    phys_world_destroy(w);
  }
}

/* a horizontal arm on a hinge, its tip held by a connect to the world: torque balance about the
 * hinge puts half the weight on each, so the hinge site reads m g / 2 (the connect's impulse is
 * an external force on the arm's subtree) */
static void test_connect_share(void) {
  phys_world *w = make_world(NULL);
  double pivot[3] = {0, 0, 1}, off[3] = {0.5, 0, 0}, m = 2.0, g = 9.81;
  phys_id arm = add_hinge_bob(w, PHYS_ID_NONE, pivot, off, m, 0.0);
  double tip[3] = {1, 0, 0}, zero[3] = {0, 0, 0};
  CU_ASSERT_EQUAL_FATAL(phys_world_add_connect(w, arm, PHYS_ID_NONE, tip, NULL), PHYS_OK);
  int site;
  CU_ASSERT_EQUAL_FATAL(phys_world_add_site(w, arm, zero, NULL, "hinge", &site), PHYS_OK);
  int fs = add_sensor(w, PHYS_SENSOR_FORCE, PHYS_SENSOR_OBJ_SITE, site, 0, -1, "f");
  int ts = add_sensor(w, PHYS_SENSOR_TORQUE, PHYS_SENSOR_OBJ_SITE, site, 0, -1, "t");
  step_n(w, 500);
  double F[4], T[4], q[7];
  read3(w, fs, F);
  read3(w, ts, T);
  phys_link_get_joint(w, arm, q, NULL, NULL, NULL);
  printf("\n  arm held by a connect: hinge force z %.5f N for m g / 2 = %.5f N, torque y %.3g N m, "
         "angle %.3g rad\n", F[2], 0.5 * m * g, T[1], q[0]);
  CU_ASSERT(fabs(F[2] - 0.5 * m * g) < 1e-3 * m * g);
  CU_ASSERT(fabs(T[1]) < 1e-3 * m * g);
  phys_world_destroy(w);
}

int register_tests(void) {
  CU_pSuite s = CU_add_suite("sensors", NULL, NULL);
  if (!s) return -1;
  if (!CU_add_test(s, "joint and actuator sensors", test_joint_actuator) ||
      !CU_add_test(s, "frame sensors in free fall", test_frame_free_fall) ||
      !CU_add_test(s, "resting box: accelerometer, contact force, touch", test_resting_box) ||
      !CU_add_test(s, "gyro on a tumbling box", test_gyro) ||
      !CU_add_test(s, "force and torque on a hanging chain", test_force_torque) ||
      !CU_add_test(s, "model hash and allocations", test_hash_alloc) ||
      !CU_add_test(s, "swinging pendulum: hinge reaction", test_swinging_reaction) ||
      !CU_add_test(s, "arm held by a connect: shared weight", test_connect_share) ||
      !CU_add_test(s, "MJCF sites and sensors", test_mjcf) ||
      !CU_add_test(s, "MJCF errors", test_mjcf_errors) ||
      !CU_add_test(s, "API errors", test_api_errors))
    return -1;
  return 0;
}
