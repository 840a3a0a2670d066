/* test_loader_mjcf_frame.c - MJCF <frame> (MuJoCo 3): a pose and a childclass with no body of
 * its own. A scene with nested, rotated frames (in <worldbody> and in a body) must load to the
 * same bodies, geoms and sites as the scene written without frames, the composed poses put in by
 * hand; a frame's childclass reaches what it holds; errors in frames name file, line and
 * element. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "cunit_main.h"
#include "phys/phys.h"
#include "core/world_internal.h"
#include "loader_util.h"

static void qmul(double out[4], const double a[4], const double b[4]) {
  double t[4] = {a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3],
                 a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2],
                 a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1],
                 a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0]};
  double n = sqrt(t[0] * t[0] + t[1] * t[1] + t[2] * t[2] + t[3] * t[3]);
  for (int i = 0; i < 4; i++) out[i] = t[i] / n;
}

static void qrot(double out[3], const double q[4], const double v[3]) {
  double p[4] = {0, v[0], v[1], v[2]}, qc[4] = {q[0], -q[1], -q[2], -q[3]}, t[4], r[4];
  /* unnormalised products: v's length is kept */
  t[0] = q[0] * p[0] - q[1] * p[1] - q[2] * p[2] - q[3] * p[3];
  t[1] = q[0] * p[1] + q[1] * p[0] + q[2] * p[3] - q[3] * p[2];
  t[2] = q[0] * p[2] - q[1] * p[3] + q[2] * p[0] + q[3] * p[1];
  t[3] = q[0] * p[3] + q[1] * p[2] - q[2] * p[1] + q[3] * p[0];
  r[1] = t[0] * qc[1] + t[1] * qc[0] + t[2] * qc[3] - t[3] * qc[2];
  r[2] = t[0] * qc[2] - t[1] * qc[3] + t[2] * qc[0] + t[3] * qc[1];
  r[3] = t[0] * qc[3] + t[1] * qc[2] - t[2] * qc[1] + t[3] * qc[0];
  out[0] = r[1];
  out[1] = r[2];
  out[2] = r[3];
}

/* (pos, q) = frame (fp, fq) composed with local (lp, lq) */
static void compose(double pos[3], double q[4], const double fp[3], const double fq[4],
                    const double lp[3], const double lq[4]) {
  double r[3], t[4];
  qrot(r, fq, lp);
  qmul(t, fq, lq);
  for (int i = 0; i < 3; i++) pos[i] = fp[i] + r[i];
  memcpy(q, t, sizeof t);
}

/* the loader's quaternion of an orientation attribute, read from a static body carrying it */
static void orientation_of(const char *attr, double q[4]) {
  char xml[512];
  snprintf(xml, sizeof xml,
           "<mujoco><compiler angle='degree' eulerseq='zyx'/><worldbody><body name='f' %s>"
           "<geom size='0.01'/></body></worldbody></mujoco>", attr);
  phys_world *w = must_load(xml);
  phys_body_get_state(w, phys_world_find_body(w, "f"), NULL, q, NULL, NULL);
  phys_world_destroy(w);
}

/* the scene with frames: two nested frames in <worldbody> (the inner one with a childclass)
 * holding a static geom, a world site and a free body; a frame in that body holding a geom, a
 * site and a jointed child body */
static const char *framed =
    "<mujoco><compiler angle='degree' eulerseq='zyx'/>\n"
    "<default><default class='big'><geom type='box' size='0.3 0.2 0.1'/></default></default>\n"
    "<worldbody>\n"
    "<frame name='f1' pos='1 2 0.5' euler='30 20 10'>\n"
    "  <geom name='floor' type='box' size='0.5 0.5 0.1' pos='0 0 -0.1' axisangle='1 0 0 5'/>\n"
    "  <site name='ws' pos='0.1 0 0'/>\n"
    "  <frame pos='0.2 0 0.3' axisangle='0 1 0 25' childclass='big'>\n"
    "    <body name='b' pos='0.1 0.2 0.3' quat='0.9 0.1 0.2 0.3'>\n"
    "      <freejoint/>\n"
    "      <geom/>\n"
    "      <frame pos='0.05 0 0' xyaxes='0 1 0 -1 0 0'>\n"
    "        <geom type='sphere' size='0.05' pos='0 0.1 0'/>\n"
    "        <site name='bs' pos='0 0 0.2'/>\n"
    "        <frame zaxis='0 1 1'>\n"
    "          <body name='c' pos='0.3 0 0'><joint type='hinge' axis='0 0 1'/>\n"
    "            <geom type='capsule' size='0.02 0.1'/></body>\n"
    "        </frame>\n"
    "      </frame>\n"
    "    </body>\n"
    "  </frame>\n"
    "</frame>\n"
    "</worldbody></mujoco>";

/* world pose of the first live geom of body `b` (or world geom when b is NONE) */
static const phys_geom *geom_of(const phys_world *w, phys_id b, int k) {
  for (int g = 0; g < w->ngeoms; g++)
    if (w->geoms[g].alive && w->geoms[g].body == b && k-- == 0) return &w->geoms[g];
  return NULL;
}

static double pose_diff(const double p1[3], const double q1[4], const double p2[3],
                        const double q2[4]) {
  double d = 0.0;
  for (int i = 0; i < 3; i++) d = fmax(d, fabs(p1[i] - p2[i]));
  for (int i = 0; i < 4; i++) d = fmax(d, fabs(q1[i] - q2[i]));
  return d;
}

static void test_frames_compose(void) {
  /* the frames' and the body's orientations as the loader reads them */
  double qf1[4], qf2[4], qg[4], qb[4];
  orientation_of("euler='30 20 10'", qf1);
  orientation_of("axisangle='0 1 0 25'", qf2);
  orientation_of("axisangle='1 0 0 5'", qg);
  orientation_of("quat='0.9 0.1 0.2 0.3'", qb);
  double f1p[3] = {1, 2, 0.5}, f2l[3] = {0.2, 0, 0.3}, gl[3] = {0, 0, -0.1}, sl[3] = {0.1, 0, 0};
  double bl[3] = {0.1, 0.2, 0.3}, f2p[3], f2q[4], gp[3], gq[4], sp[3], sq[4], bp[3], bq[4];
  double ident[4] = {1, 0, 0, 0};
  compose(f2p, f2q, f1p, qf1, f2l, qf2);
  compose(gp, gq, f1p, qf1, gl, qg);
  compose(sp, sq, f1p, qf1, sl, ident);
  compose(bp, bq, f2p, f2q, bl, qb);

  /* the same scene without frames: world poses by hand, the frame in the body as a welded body
   * (MuJoCo's equivalent), the childclass on the body */
  char plain[2048];
  snprintf(plain, sizeof plain,
           "<mujoco><compiler angle='degree' eulerseq='zyx'/>\n"
           "<default><default class='big'><geom type='box' size='0.3 0.2 0.1'/></default>"
           "</default>\n<worldbody>\n"
           "<geom name='floor' type='box' size='0.5 0.5 0.1' pos='%.17g %.17g %.17g' "
           "quat='%.17g %.17g %.17g %.17g'/>\n"
           "<site name='ws' pos='%.17g %.17g %.17g' quat='%.17g %.17g %.17g %.17g'/>\n"
           "<body name='b' childclass='big' pos='%.17g %.17g %.17g' "
           "quat='%.17g %.17g %.17g %.17g'>\n"
           "  <freejoint/><geom/>\n"
           "  <body pos='0.05 0 0' xyaxes='0 1 0 -1 0 0'>\n"
           "    <geom type='sphere' size='0.05' pos='0 0.1 0'/><site name='bs' pos='0 0 0.2'/>\n"
           "    <body zaxis='0 1 1'><body name='c' pos='0.3 0 0'><joint type='hinge' "
           "axis='0 0 1'/><geom type='capsule' size='0.02 0.1'/></body></body>\n"
           "  </body>\n</body>\n</worldbody></mujoco>",
           gp[0], gp[1], gp[2], gq[0], gq[1], gq[2], gq[3], sp[0], sp[1], sp[2], sq[0], sq[1],
           sq[2], sq[3], bp[0], bp[1], bp[2], bq[0], bq[1], bq[2], bq[3]);
  phys_world *a = must_load(framed), *p = must_load(plain);
  CU_ASSERT_EQUAL_FATAL(phys_world_body_count(a), phys_world_body_count(p));
  CU_ASSERT_EQUAL_FATAL(a->ngeoms, p->ngeoms);
  CU_ASSERT_EQUAL(phys_world_body_count(a), 2);
  double worst = 0.0, p1[3], q1[4], p2[3], q2[4];
  /* bodies: pose, mass and inertia */
  const char *names[] = {"b", "c"};
  for (int k = 0; k < 2; k++) {
    phys_id ia = phys_world_find_body(a, names[k]), ip = phys_world_find_body(p, names[k]);
    CU_ASSERT_FATAL(ia != PHYS_ID_NONE && ip != PHYS_ID_NONE);
    phys_body_get_state(a, ia, p1, q1, NULL, NULL);
    phys_body_get_state(p, ip, p2, q2, NULL, NULL);
    worst = fmax(worst, pose_diff(p1, q1, p2, q2));
    double ma, mp, Ia[3], Ip[3];
    phys_body_get_mass(a, ia, &ma, Ia);
    phys_body_get_mass(p, ip, &mp, Ip);
    worst = fmax(worst, fabs(ma - mp));
    for (int i = 0; i < 3; i++) worst = fmax(worst, fabs(Ia[i] - Ip[i]));
  }
  /* body b is where the frames put it */
  phys_body_get_state(a, phys_world_find_body(a, "b"), p1, q1, NULL, NULL);
  double direct = pose_diff(p1, q1, bp, bq);
  /* every geom's world pose, type and size */
  for (int g = 0; g < a->ngeoms; g++) {
    const phys_geom *ga = &a->geoms[g], *gpl = &p->geoms[g];
    CU_ASSERT_EQUAL(ga->type, gpl->type);
    for (int i = 0; i < 3; i++) {
      worst = fmax(worst, fabs(ga->shape.pos[i] - gpl->shape.pos[i]));
      worst = fmax(worst, fabs(ga->size[i] - gpl->size[i]));
    }
    for (int i = 0; i < 9; i++) worst = fmax(worst, fabs(ga->shape.rot[i] - gpl->shape.rot[i]));
  }
  /* the childclass of the inner frame sized the body's class-less geom: a 0.3 0.2 0.1 box */
  const phys_geom *box = geom_of(a, phys_world_find_body(a, "b"), 0);
  CU_ASSERT_PTR_NOT_NULL_FATAL(box);
  CU_ASSERT_EQUAL(box->type, PHYS_GEOM_BOX);
  CU_ASSERT(box->size[0] == 0.3 && box->size[1] == 0.2 && box->size[2] == 0.1);
  /* sites, world and body */
  const char *sites[] = {"ws", "bs"};
  for (int k = 0; k < 2; k++) {
    int sa = phys_world_find_site(a, sites[k]), sp2 = phys_world_find_site(p, sites[k]);
    CU_ASSERT_FATAL(sa >= 0 && sp2 >= 0);
    phys_site_get_pose(a, sa, p1, q1);
    phys_site_get_pose(p, sp2, p2, q2);
    worst = fmax(worst, pose_diff(p1, q1, p2, q2));
  }
  printf("\n  framed vs plain: worst pose/mass difference %.2e, body b vs hand-composed %.2e",
         worst, direct);
  CU_ASSERT(worst < 1e-12);
  CU_ASSERT(direct < 1e-12);
  /* and they move alike */
  for (int s = 0; s < 200; s++) {
    CU_ASSERT_EQUAL_FATAL(phys_world_step(a), PHYS_OK);
    CU_ASSERT_EQUAL_FATAL(phys_world_step(p), PHYS_OK);
  }
  phys_body_get_state(a, phys_world_find_body(a, "c"), p1, q1, NULL, NULL);
  phys_body_get_state(p, phys_world_find_body(p, "c"), p2, q2, NULL, NULL);
  printf("; after 200 steps %.2e", pose_diff(p1, q1, p2, q2));
  CU_ASSERT(pose_diff(p1, q1, p2, q2) < 1e-9);
  phys_world_destroy(a);
  phys_world_destroy(p);
}

/* a frame's childclass applies to what it holds, an element's own class wins, an inner frame
 * without childclass keeps the outer one, and outside the frame the class is the main one */
static void test_frame_childclass(void) {
  phys_world *w = must_load(
      "<mujoco><default><geom size='0.2'/><default class='fat'><geom size='0.4'/></default>"
      "<default class='thin'><geom size='0.1'/></default></default><worldbody>"
      "<frame childclass='fat'><geom/><geom class='thin' pos='2 0 0'/>"
      "<frame pos='4 0 0'><geom/><body pos='6 0 0'><freejoint/><geom/></body></frame></frame>"
      "<geom pos='8 0 0'/></worldbody></mujoco>");
  /* world geoms in document order, the body's geom when the body is added */
  double want[] = {0.4, 0.1, 0.4, 0.4, 0.2};
  CU_ASSERT_EQUAL_FATAL(w->ngeoms, 5);
  for (int g = 0; g < 5; g++) {
    CU_ASSERT_EQUAL(w->geoms[g].size[0], want[g]);
    if (w->geoms[g].size[0] != want[g])
      printf("\n  geom %d size %g, expected %g", g, w->geoms[g].size[0], want[g]);
  }
  CU_ASSERT(fabs(w->geoms[3].shape.pos[0] - 10.0) < 1e-15);
  phys_world_destroy(w);
}

static void test_frame_errors(void) {
  /* a bad attribute value names file, line and <frame> */
  expect_error("<mujoco><worldbody>\n<frame pos='1 2'/>\n</worldbody></mujoco>", PHYS_E_PARSE, 2,
               "frame", "pos");
  expect_error("<mujoco><worldbody>\n<frame>\n<frame bogus='1'/></frame></worldbody></mujoco>",
               PHYS_E_PARSE, 3, "frame", "bogus");
  expect_error("<mujoco><worldbody><body><freejoint/><geom size='1'/>\n<frame euler='1 2'>"
               "</frame></body></worldbody></mujoco>", PHYS_E_PARSE, 2, "frame", "euler");
  expect_error("<mujoco><worldbody>\n<frame childclass='nope'/></worldbody></mujoco>",
               PHYS_E_PARSE, 2, "frame", "nope");
  expect_error("<mujoco><worldbody>\n<frame quat='1 0 0 0' euler='0 0 0'/></worldbody></mujoco>",
               PHYS_E_PARSE, 2, "frame", NULL);
  /* a frame has no body: no joint, no inertial in it */
  expect_error("<mujoco><worldbody><body><geom size='1'/><frame>\n<joint/></frame></body>"
               "</worldbody></mujoco>", PHYS_E_PARSE, 2, "joint", "not allowed in <frame>");
  expect_error("<mujoco><worldbody><body><geom size='1'/><frame>\n<inertial pos='0 0 0' "
               "mass='1' diaginertia='1 1 1'/></frame></body></worldbody></mujoco>",
               PHYS_E_PARSE, 2, "inertial", "not allowed in <frame>");
  expect_error("<mujoco><worldbody><frame>\n<freejoint/></frame></worldbody></mujoco>",
               PHYS_E_PARSE, 2, "freejoint", "not allowed in <frame>");
  /* errors of what a frame holds keep their own element and line */
  expect_error("<mujoco><worldbody><frame pos='1 0 0'>\n<geom type='box' size='1'/></frame>"
               "</worldbody></mujoco>", PHYS_E_PARSE, 2, "geom", "size");
}

int register_tests(void) {
  CU_pSuite s = CU_add_suite("loader_mjcf_frame", NULL, NULL);
  if (!s) return -1;
  if (!CU_add_test(s, "nested frames compose like the plain scene", test_frames_compose) ||
      !CU_add_test(s, "frame childclass", test_frame_childclass) ||
      !CU_add_test(s, "frame errors name file and line", test_frame_errors))
    return -1;
  return 0;
}
