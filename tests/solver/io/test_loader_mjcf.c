/* test_loader_mjcf.c - the MJCF loader: mass from density, options, default classes, orientation
 * conventions, fromto, welded bodies, connect, and error messages (code, file, line, element).
 * Scenes are written inline; PHYS_PEER_MODELS (optional) names a directory of *.xml to load. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cunit_main.h"
#include "loader_util.h"
#include "scene_util.h"
#include "phys/phys.h"
#include "core/world_internal.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* ---- helpers ------------------------------------------------------------------------------- */

/* Write `xml` to a new temporary file; `path` receives its name. Returns 0 on success. */
static int write_temp(const char *xml, char path[64]) {
  strcpy(path, "/tmp/physd_mjcf_XXXXXX");
  int fd = mkstemp(path);
  if (fd < 0) return -1;
  size_t n = strlen(xml);
  int ok = write(fd, xml, n) == (ssize_t)n;
  close(fd);
  return ok ? 0 : -1;
}

/* Mass of the body called `name` (NAN if missing). */
static double body_mass(const phys_world *w, const char *name) {
  double m = NAN;
  phys_id id = phys_world_find_body(w, name);
  if (id == PHYS_ID_NONE || phys_body_get_mass(w, id, &m, NULL)) return NAN;
  return m;
}

/* Quaternion of the body called `name`. */
static void body_quat(const phys_world *w, const char *name, double q[4]) {
  q[0] = q[1] = q[2] = q[3] = NAN;
  phys_id id = phys_world_find_body(w, name);
  if (id != PHYS_ID_NONE) phys_body_get_state(w, id, NULL, q, NULL, NULL);
}

/* Relative closeness for masses. */
static int rel_close(double a, double b, double tol) { return fabs(a - b) <= tol * fabs(b); }

/* ---- mass, options, defaults --------------------------------------------------------------- */

/* A sphere with MuJoCo's default density 1000 gets 4/3 pi r^3 * 1000. */
static void test_sphere_default_density(void) {
  const char *xml = "<mujoco><worldbody>\n"
                    "<body name=\"ball\" pos=\"0 0 1\"><freejoint/><geom size=\"0.3\"/></body>\n"
                    "</worldbody></mujoco>";
  phys_world *w = NULL;
  phys_error err;
  CU_ASSERT_EQUAL_FATAL(load(xml, &w, &err), PHYS_OK);
  CU_ASSERT_TRUE(rel_close(body_mass(w, "ball"), 4.0 / 3.0 * M_PI * 0.027 * 1000.0, 1e-9));
  CU_ASSERT_EQUAL(phys_world_body_count(w), 1);
  double pos[3];
  phys_body_get_state(w, phys_world_find_body(w, "ball"), pos, NULL, NULL, NULL);
  ASSERT_NEAR(pos[2], 1.0, 1e-12);
  phys_world_destroy(w);
}

/* <option> values reach the world; a caller's options are the base. */
static void test_options(void) {
  const char *xml = "<mujoco>\n"
                    "<option timestep=\"0.005\" gravity=\"0 1 -3\" iterations=\"37\"\n"
                    " solver=\"CG\" jacobian=\"sparse\" cone=\"pyramidal\" tolerance=\"1e-8\"/>\n"
                    "<size nconmax=\"10\"/><visual><map znear=\"0.01\"/></visual>\n"
                    "<worldbody/></mujoco>";
  phys_world *w = NULL;
  phys_error err;
  CU_ASSERT_EQUAL_FATAL(load(xml, &w, &err), PHYS_OK);
  phys_world_options o = phys_world_get_options(w);
  ASSERT_NEAR(o.timestep, 0.005, 0.0);
  ASSERT_NEAR(o.gravity[1], 1.0, 0.0);
  ASSERT_NEAR(o.gravity[2], -3.0, 0.0);
  CU_ASSERT_EQUAL(o.max_iterations, 37);
  phys_world_destroy(w);

  /* caller's options: threads kept, file values override */
  phys_world_options base = phys_world_options_default();
  base.threads = 3;
  base.timestep = 0.01;
  base.max_iterations = 5;
  CU_ASSERT_EQUAL_FATAL(phys_load_mjcf_string(xml, strlen(xml), NULL, &base, &w, &err), PHYS_OK);
  o = phys_world_get_options(w);
  CU_ASSERT_EQUAL(o.threads, 3);
  ASSERT_NEAR(o.timestep, 0.005, 0.0);
  CU_ASSERT_EQUAL(o.max_iterations, 37);
  phys_world_destroy(w);

  /* no <option>: the caller's values stay */
  const char *bare = "<mujoco><worldbody/></mujoco>";
  CU_ASSERT_EQUAL_FATAL(phys_load_mjcf_string(bare, strlen(bare), NULL, &base, &w, &err),
                        PHYS_OK);
  o = phys_world_get_options(w);
  ASSERT_NEAR(o.timestep, 0.01, 0.0);
  CU_ASSERT_EQUAL(o.max_iterations, 5);
  phys_world_destroy(w);
}

/* Default classes: nested inheritance, class on geoms, childclass on bodies. */
static void test_default_classes(void) {
  const char *xml =
      "<mujoco>\n"
      "<default>\n"
      "  <geom friction=\"0.7\" condim=\"1\" density=\"500\"/>\n"
      "  <default class=\"a\">\n"
      "    <geom friction=\"0.3 0.01 0.001\" size=\"0.2\"/>\n"
      "    <default class=\"b\"><geom condim=\"3\" contype=\"2\" conaffinity=\"4\"/></default>\n"
      "  </default>\n"
      "</default>\n"
      "<worldbody>\n"
      "  <geom name=\"g0\" type=\"box\" size=\"1 1 1\"/>\n"
      "  <body name=\"p\" childclass=\"b\"><freejoint/><geom/>\n"
      "    <body name=\"q\" pos=\"1 0 0\"><geom class=\"a\" density=\"250\"/></body>\n"
      "  </body>\n"
      "</worldbody></mujoco>";
  phys_world *w = NULL;
  phys_error err;
  CU_ASSERT_EQUAL_FATAL(load(xml, &w, &err), PHYS_OK);
  CU_ASSERT_EQUAL_FATAL(w->ngeoms, 3);
  /* world geom: main class */
  ASSERT_NEAR(w->geoms[0].friction, 0.7, 0.0);
  CU_ASSERT_EQUAL(w->geoms[0].condim, 1);
  /* geom in childclass b: friction from a, condim and bits from b */
  ASSERT_NEAR(w->geoms[1].friction, 0.3, 0.0);
  CU_ASSERT_EQUAL(w->geoms[1].condim, 3);
  CU_ASSERT_EQUAL(w->geoms[1].contype, 2u);
  CU_ASSERT_EQUAL(w->geoms[1].conaffinity, 4u);
  /* explicit class a in the welded child: condim from main */
  CU_ASSERT_EQUAL(w->geoms[2].condim, 1);
  CU_ASSERT_EQUAL(w->geoms[2].contype, 1u);
  /* masses: density 500 (main) for the first, 250 for the second, both r = 0.2 */
  double v = 4.0 / 3.0 * M_PI * 0.008;
  CU_ASSERT_TRUE(rel_close(body_mass(w, "p"), 500.0 * v + 250.0 * v, 1e-9));
  phys_world_destroy(w);
}

/* ---- orientation and geometry -------------------------------------------------------------- */

/* The same euler angles in degrees and radians give the same pose; all forms agree. */
static void test_euler_degree_radian(void) {
  char xml[1024];
  const char *fmt = "<mujoco><compiler angle=\"%s\" %s/><worldbody>\n"
                    "<body name=\"b\" euler=\"%s\"><freejoint/><geom size=\"0.1\"/></body>\n"
                    "</worldbody></mujoco>";
  phys_world *w = NULL;
  phys_error err;
  double qd[4], qr[4];
  snprintf(xml, sizeof xml, fmt, "degree", "", "30 45 60");
  CU_ASSERT_EQUAL_FATAL(load(xml, &w, &err), PHYS_OK);
  body_quat(w, "b", qd);
  phys_world_destroy(w);
  snprintf(xml, sizeof xml, fmt, "radian", "", "0.52359877559829887 0.78539816339744828 "
                                               "1.0471975511965976");
  CU_ASSERT_EQUAL_FATAL(load(xml, &w, &err), PHYS_OK);
  body_quat(w, "b", qr);
  phys_world_destroy(w);
  for (int i = 0; i < 4; i++) ASSERT_NEAR(qd[i], qr[i], 1e-12);
  /* intrinsic xyz = qx * qy * qz: compare with the explicit product */
  double a = M_PI / 12, b = M_PI / 8, c = M_PI / 6;
  double qx[4] = {cos(a), sin(a), 0, 0}, qy[4] = {cos(b), 0, sin(b), 0};
  double qz[4] = {cos(c), 0, 0, sin(c)};
  double t[4] = {qx[0] * qy[0], qx[1] * qy[0], qx[0] * qy[2], qx[1] * qy[2]}; /* qx*qy */
  double e[4] = {t[0] * qz[0] - t[3] * qz[3], t[1] * qz[0] + t[2] * qz[3],
                 t[2] * qz[0] - t[1] * qz[3], t[0] * qz[3] + t[3] * qz[0]};
  for (int i = 0; i < 4; i++) ASSERT_NEAR(qd[i], e[i], 1e-12);
  /* extrinsic XYZ equals intrinsic zyx with the angles reversed */
  double q1[4], q2[4];
  snprintf(xml, sizeof xml, fmt, "degree", "eulerseq=\"XYZ\"", "10 20 30");
  CU_ASSERT_EQUAL_FATAL(load(xml, &w, &err), PHYS_OK);
  body_quat(w, "b", q1);
  phys_world_destroy(w);
  snprintf(xml, sizeof xml, fmt, "degree", "eulerseq=\"zyx\"", "30 20 10");
  CU_ASSERT_EQUAL_FATAL(load(xml, &w, &err), PHYS_OK);
  body_quat(w, "b", q2);
  phys_world_destroy(w);
  for (int i = 0; i < 4; i++) ASSERT_NEAR(q1[i], q2[i], 1e-12);
}

/* quat, axisangle, xyaxes and zaxis/euler forms of a 90 degree turn about z agree. */
static void test_orientation_forms(void) {
  const char *forms[] = {"quat=\"2 0 0 2\"", "axisangle=\"0 0 3 90\"", "euler=\"0 0 90\"",
                         "xyaxes=\"0 1 0 -2 0 0\""};
  double h = sqrt(0.5);
  for (int k = 0; k < 4; k++) {
    char xml[512];
    snprintf(xml, sizeof xml,
             "<mujoco><worldbody><body name=\"b\" %s><freejoint/><geom size=\"0.1\"/></body>"
             "</worldbody></mujoco>", forms[k]);
    phys_world *w = NULL;
    phys_error err;
    CU_ASSERT_EQUAL_FATAL(load(xml, &w, &err), PHYS_OK);
    double q[4];
    body_quat(w, "b", q);
    if (q[0] < 0) for (int i = 0; i < 4; i++) q[i] = -q[i];
    ASSERT_NEAR(q[0], h, 1e-12);
    ASSERT_NEAR(q[1], 0.0, 1e-12);
    ASSERT_NEAR(q[2], 0.0, 1e-12);
    ASSERT_NEAR(q[3], h, 1e-12);
    phys_world_destroy(w);
  }
}

/* fromto: capsule mass, and the placement and half-length of a static cylinder. */
static void test_fromto(void) {
  const char *xml =
      "<mujoco><worldbody>\n"
      "<geom type=\"cylinder\" fromto=\"1 0 0 1 0 2\" size=\"0.1\"/>\n"
      "<geom type=\"capsule\" fromto=\"0 0 0 0 0 -1\" size=\"0.1\"/>\n"
      "<body name=\"c\"><freejoint/>"
      "<geom type=\"capsule\" fromto=\"0 0 0 0.6 0 0.8\" size=\"0.05\"/></body>\n"
      "</worldbody></mujoco>";
  phys_world *w = NULL;
  phys_error err;
  CU_ASSERT_EQUAL_FATAL(load(xml, &w, &err), PHYS_OK);
  double r = 0.05, hl = 0.5;
  double m = 1000.0 * (M_PI * r * r * 2.0 * hl + 4.0 / 3.0 * M_PI * r * r * r);
  CU_ASSERT_TRUE(rel_close(body_mass(w, "c"), m, 1e-9));
  /* static cylinder: centre (1, 0, 1), axis +z, half-length 1 */
  const phys_geom *g = &w->geoms[0];
  ASSERT_NEAR(g->shape.pos[0], 1.0, 1e-12);
  ASSERT_NEAR(g->shape.pos[2], 1.0, 1e-12);
  ASSERT_NEAR(g->shape.size[1], 1.0, 1e-12);
  ASSERT_NEAR(g->shape.rot[8], 1.0, 1e-12);
  /* downward capsule: axis -z */
  g = &w->geoms[1];
  ASSERT_NEAR(g->shape.pos[2], -0.5, 1e-12);
  ASSERT_NEAR(g->shape.rot[8], -1.0, 1e-12);
  ASSERT_NEAR(g->shape.size[1], 0.5, 1e-12);
  /* tilted capsule: its local z axis (column 2) is (0.6, 0, 0.8) in the world */
  g = &w->geoms[2];
  ASSERT_NEAR(g->shape.rot[2], 0.6, 1e-12);
  ASSERT_NEAR(g->shape.rot[5], 0.0, 1e-12);
  ASSERT_NEAR(g->shape.rot[8], 0.8, 1e-12);
  ASSERT_NEAR(g->shape.pos[0], 0.3, 1e-12);
  ASSERT_NEAR(g->shape.pos[2], 0.4, 1e-12);
  phys_world_destroy(w);
}

/* ---- bodies ---------------------------------------------------------------------------------- */

/* A child body without joint is welded: its geoms add to the parent's mass. */
static void test_welded_child(void) {
  const char *xml =
      "<mujoco><worldbody>\n"
      "<body name=\"p\" pos=\"0 0 2\" euler=\"0 90 0\"><freejoint/><geom size=\"0.1\"/>\n"
      "  <body name=\"k\" pos=\"0 0 1\"><geom size=\"0.2\" mass=\"3\"/>\n"
      "    <body pos=\"1 0 0\"><geom type=\"box\" size=\"0.1 0.1 0.1\" density=\"10\"/></body>\n"
      "  </body>\n"
      "</body>\n"
      "</worldbody></mujoco>";
  phys_world *w = NULL;
  phys_error err;
  CU_ASSERT_EQUAL_FATAL(load(xml, &w, &err), PHYS_OK);
  CU_ASSERT_EQUAL(phys_world_body_count(w), 1);
  CU_ASSERT_EQUAL(phys_world_geom_count(w), 3);
  double m = 4.0 / 3.0 * M_PI * 0.001 * 1000.0 + 3.0 + 10.0 * 0.008;
  CU_ASSERT_TRUE(rel_close(body_mass(w, "p"), m, 1e-9));
  /* the child's geom sits at body pos + R_y(90) (0, 0, 1) = (1, 0, 2) */
  const phys_geom *g = &w->geoms[1];
  ASSERT_NEAR(g->shape.pos[0], 1.0, 1e-12);
  ASSERT_NEAR(g->shape.pos[1], 0.0, 1e-12);
  ASSERT_NEAR(g->shape.pos[2], 2.0, 1e-12);
  /* the grandchild: (1, 0, 1) in p's frame -> R_y(90) (1, 0, 1) + (0, 0, 2) = (1, 0, 1) */
  g = &w->geoms[2];
  ASSERT_NEAR(g->shape.pos[0], 1.0, 1e-12);
  ASSERT_NEAR(g->shape.pos[2], 1.0, 1e-12);
  phys_world_destroy(w);
}

/* Static bodies (no joint), connect to them, to the world and to a welded child. */
static void test_static_and_connect(void) {
  const char *xml =
      "<mujoco><default><geom contype=\"0\" conaffinity=\"0\"/></default><worldbody>\n"
      "<body name=\"top\" pos=\"0 0 5\"><geom size=\"0.2\"/></body>\n"
      "<body name=\"a\" pos=\"0 0 4\"><freejoint/><geom size=\"0.2\"/>\n"
      "  <body name=\"a_tip\" pos=\"0 0 -0.5\"/></body>\n"
      "<body name=\"b\" pos=\"0 0 3\"><joint type=\"free\"/><geom size=\"0.2\"/></body>\n"
      "</worldbody><equality>\n"
      "<connect body1=\"top\" body2=\"a\" anchor=\"0 0 -0.5\"/>\n"
      "<connect body1=\"a_tip\" body2=\"b\" anchor=\"0 0 0\"/>\n"
      "<connect body1=\"world\" body2=\"b\" anchor=\"0 0 2\"/>\n"
      "<connect body1=\"b\" anchor=\"0 0 -1\"/>\n"
      "</equality></mujoco>";
  phys_world *w = NULL;
  phys_error err;
  CU_ASSERT_EQUAL_FATAL(load(xml, &w, &err), PHYS_OK);
  CU_ASSERT_EQUAL(phys_world_body_count(w), 3);
  phys_id top = phys_world_find_body(w, "top");
  CU_ASSERT_NOT_EQUAL_FATAL(top, PHYS_ID_NONE);
  CU_ASSERT_EQUAL(w->bodies[top].is_static, 1);
  CU_ASSERT_EQUAL_FATAL(w->nconnects, 4);
  /* the welded child's anchor becomes (0, 0, -0.5) in a's frame */
  phys_id a = phys_world_find_body(w, "a");
  CU_ASSERT_EQUAL(w->connects[1].body1, a);
  /* body1 = world: swapped to b with the anchor in b's frame, so (0, 0, -1) */
  phys_id b = phys_world_find_body(w, "b");
  CU_ASSERT_EQUAL(w->connects[2].body1, b);
  CU_ASSERT_EQUAL(w->connects[2].body2, PHYS_ID_NONE);
  CU_ASSERT_EQUAL(w->connects[3].body2, PHYS_ID_NONE);
  phys_world_destroy(w);
}

/* <inertial> with fullinertia: principal moments are the eigenvalues. */
static void test_inertial(void) {
  const char *xml =
      "<mujoco><worldbody>\n"
      "<body name=\"f\"><freejoint/><geom size=\"0.1\"/>"
      "<inertial pos=\"0 0 0\" mass=\"2\" fullinertia=\"4 4 3 1 0 0\"/></body>\n"
      "<body name=\"d\"><freejoint/><geom size=\"0.1\"/>"
      "<inertial pos=\"0 0 0.1\" mass=\"5\" diaginertia=\"1 2 2.5\" euler=\"0 0 30\"/></body>\n"
      "</worldbody></mujoco>";
  phys_world *w = NULL;
  phys_error err;
  CU_ASSERT_EQUAL_FATAL(load(xml, &w, &err), PHYS_OK);
  double m, I[3];
  phys_body_get_mass(w, phys_world_find_body(w, "f"), &m, I);
  ASSERT_NEAR(m, 2.0, 0.0);
  /* eigenvalues of [[4 1 0] [1 4 0] [0 0 3]]: 5, 3, 3 */
  double lo = fmin(I[0], fmin(I[1], I[2])), hi = fmax(I[0], fmax(I[1], I[2]));
  ASSERT_NEAR(hi, 5.0, 1e-12);
  ASSERT_NEAR(lo, 3.0, 1e-12);
  ASSERT_NEAR(I[0] + I[1] + I[2], 11.0, 1e-12);
  /* the principal axes rebuild the matrix: R diag(I) R^T */
  const phys_body *fb = &w->bodies[phys_world_find_body(w, "f")];
  const double full[9] = {4, 1, 0, 1, 4, 0, 0, 0, 3};
  double qw = fb->iquat[0], qx = fb->iquat[1], qy = fb->iquat[2], qz = fb->iquat[3];
  double R[9] = {1 - 2 * (qy * qy + qz * qz), 2 * (qx * qy - qw * qz), 2 * (qx * qz + qw * qy),
                 2 * (qx * qy + qw * qz), 1 - 2 * (qx * qx + qz * qz), 2 * (qy * qz - qw * qx),
                 2 * (qx * qz - qw * qy), 2 * (qy * qz + qw * qx), 1 - 2 * (qx * qx + qy * qy)};
  for (int r = 0; r < 3; r++)
    for (int c = 0; c < 3; c++) {
      double v = 0.0;
      for (int k = 0; k < 3; k++) v += R[3 * r + k] * fb->inertia[k] * R[3 * c + k];
      ASSERT_NEAR(v, full[3 * r + c], 1e-12);
    }
  phys_body_get_mass(w, phys_world_find_body(w, "d"), &m, I);
  ASSERT_NEAR(m, 5.0, 0.0);
  ASSERT_NEAR(I[0] + I[1] + I[2], 5.5, 1e-12);
  phys_world_destroy(w);
}

/* Loading from a file works and messages carry its path. */
static void test_file(void) {
  char path[64];
  const char *good = "<mujoco><worldbody><body name=\"x\"><freejoint/><geom size=\"1\"/></body>"
                     "</worldbody></mujoco>";
  CU_ASSERT_EQUAL_FATAL(write_temp(good, path), 0);
  phys_world *w = NULL;
  phys_error err;
  CU_ASSERT_EQUAL(phys_load_mjcf(path, NULL, &w, &err), PHYS_OK);
  CU_ASSERT_PTR_NOT_NULL(w);
  CU_ASSERT_EQUAL(phys_world_body_count(w), 1);
  phys_world_destroy(w);
  unlink(path);
  /* an error names the file and the line */
  const char *bad = "<mujoco>\n<worldbody>\n<geom size=\"1.0abc\"/>\n</worldbody></mujoco>";
  CU_ASSERT_EQUAL_FATAL(write_temp(bad, path), 0);
  w = (phys_world *)&w;
  CU_ASSERT_EQUAL(phys_load_mjcf(path, NULL, &w, &err), PHYS_E_PARSE);
  CU_ASSERT_PTR_NULL(w);
  char where[128];
  snprintf(where, sizeof where, "%s:3: <geom>: ", path);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.message, where));
  unlink(path);
}

/* A missing file is an I/O error. */
static void test_missing_file(void) {
  phys_world *w = (phys_world *)&w;
  phys_error err;
  CU_ASSERT_EQUAL(phys_load_mjcf("/nonexistent/physd/scene.xml", NULL, &w, &err), PHYS_E_IO);
  CU_ASSERT_EQUAL(err.code, PHYS_E_IO);
  CU_ASSERT_PTR_NULL(w);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "/nonexistent/physd/scene.xml"));
  /* NULL err is allowed */
  CU_ASSERT_EQUAL(phys_load_mjcf("/nonexistent/physd/scene.xml", NULL, &w, NULL), PHYS_E_IO);
}

/* ---- errors ---------------------------------------------------------------------------------- */

/* Each error class: code, file, line, element. */
static void test_errors(void) {
  /* malformed XML: the mismatched end tag on line 4 */
  expect_error("<mujoco>\n<worldbody>\n<body>\n</worldbody>\n</mujoco>", PHYS_E_PARSE, 4, "xml",
               "malformed");
  /* unknown element */
  expect_error("<mujoco>\n<worldbody>\n<blob/>\n</worldbody></mujoco>", PHYS_E_PARSE, 3, "blob",
               "unknown element");
  expect_error("<mujoco>\n<nonsense/>\n</mujoco>", PHYS_E_PARSE, 2, "nonsense", NULL);
  /* joint features not supported yet: limits, two joints on one body, unknown type;
   * a negative frictionloss */
  expect_error("<mujoco><worldbody>\n<body>\n<joint type=\"hinge\" frictionloss=\"-1\"/>"
               "<geom size=\"1\"/></body>\n</worldbody></mujoco>",
               PHYS_E_PARSE, 3, "joint", "frictionloss -1 must be >= 0");
  expect_error("<mujoco><worldbody>\n<body>\n<joint type=\"hinge\" limited=\"true\"/>"
               "<geom size=\"1\"/></body>\n</worldbody></mujoco>",
               PHYS_E_PARSE, 3, "joint", "range");
  expect_error("<mujoco><worldbody>\n<body>\n<joint type=\"ball\" range=\"0 30\"/>"
               "<geom size=\"1\"/></body>\n</worldbody></mujoco>",
               PHYS_E_UNSUPPORTED, 3, "joint", "ball");
  expect_error("<mujoco><worldbody>\n<body>\n<joint/>\n<freejoint/><geom size=\"1\"/>"
               "</body>\n</worldbody></mujoco>", PHYS_E_PARSE, 4, "freejoint", "only joint");
  expect_error("<mujoco><worldbody>\n<body>\n<joint type=\"screw\"/><geom size=\"1\"/></body>"
               "\n</worldbody></mujoco>", PHYS_E_PARSE, 3, "joint", "screw");
  expect_error("<mujoco><worldbody>\n<body>\n<joint axis=\"0 0 0\"/><geom size=\"1\"/></body>"
               "\n</worldbody></mujoco>", PHYS_E_PARSE, 3, "joint", "axis");
  /* negative mass */
  expect_error("<mujoco><worldbody>\n<body><freejoint/>\n<geom size=\"1\" mass=\"-2\"/></body>\n"
               "</worldbody></mujoco>", PHYS_E_PARSE, 3, "geom", "negative mass");
  expect_error("<mujoco><worldbody>\n<body><freejoint/>\n<geom size=\"1\"/>\n"
               "<inertial pos=\"0 0 0\" mass=\"-1\" diaginertia=\"1 1 1\"/></body>\n"
               "</worldbody></mujoco>", PHYS_E_PARSE, 4, "inertial", "negative mass");
  /* bad number */
  expect_error("<mujoco><worldbody>\n<body pos=\"0 0 1.0abc\"><freejoint/><geom size=\"1\"/>"
               "</body></worldbody></mujoco>", PHYS_E_PARSE, 2, "body", "'1.0abc'");
  expect_error("<mujoco>\n<option timestep=\"1.0abc\"/></mujoco>", PHYS_E_PARSE, 2, "option",
               "1.0abc");
  expect_error("<mujoco><worldbody>\n<geom size=\"1 2 3 4\"/></worldbody></mujoco>",
               PHYS_E_PARSE, 2, "geom", "size");
  /* missing required attribute */
  expect_error("<mujoco><worldbody><body name=\"a\"><freejoint/><geom size=\"1\"/></body>"
               "</worldbody><equality>\n\n<connect anchor=\"0 0 0\"/></equality></mujoco>",
               PHYS_E_PARSE, 3, "connect", "body1");
  expect_error("<mujoco><worldbody>\n<geom type=\"box\"/></worldbody></mujoco>", PHYS_E_PARSE,
               2, "geom", "size");
  /* unknown body in connect */
  expect_error("<mujoco><worldbody><body name=\"a\"><freejoint/><geom size=\"1\"/></body>"
               "</worldbody><equality>\n<connect body1=\"a\" body2=\"nosuch\" anchor=\"0 0 0\"/>"
               "</equality></mujoco>", PHYS_E_PARSE, 2, "connect", "nosuch");
  /* free joint on a nested body */
  expect_error("<mujoco><worldbody>\n<body><freejoint/><geom size=\"1\"/>\n<body>\n<freejoint/>"
               "<geom size=\"1\"/></body></body></worldbody></mujoco>", PHYS_E_PARSE, 4,
               "freejoint", "free joint");
  /* unsupported sections, elements, attributes, values */
  expect_error("<mujoco>\n<extension/>\n</mujoco>", PHYS_E_UNSUPPORTED, 2, "extension", NULL);
  expect_error("<mujoco>\n<tendon>\n<spatial><pulley/></spatial></tendon>\n</mujoco>",
               PHYS_E_UNSUPPORTED, 3, "pulley", "pulleys");
  expect_error("<mujoco>\n<include file=\"x.xml\"/>\n</mujoco>", PHYS_E_PARSE, 2,
               "include", "relative include");
  expect_error("<mujoco><worldbody>\n<geom size=\"1\" margin=\"-0.02\"/></worldbody></mujoco>",
               PHYS_E_PARSE, 2, "geom", "negative margin");
  expect_error("<mujoco><worldbody><geom name=\"f\" type=\"plane\" size=\"1 1 1\"/><body>"
               "<freejoint/><geom name=\"s\" size=\"0.1\"/></body></worldbody><contact>\n"
               "<pair geom1=\"f\" geom2=\"s\" gap=\"-1\"/></contact></mujoco>",
               PHYS_E_PARSE, 2, "pair", "negative gap");
  expect_error("<mujoco><worldbody>\n<geom size=\"1\" shellinertia=\"true\"/></worldbody></mujoco>",
               PHYS_E_UNSUPPORTED, 2, "geom", "shellinertia");
  /* actuators: unknown joint, unsupported kinds and transmissions */
  expect_error("<mujoco><worldbody><body><joint name=\"j\"/><geom size=\"1\"/></body></worldbody>"
               "<actuator>\n<motor joint=\"nope\"/></actuator></mujoco>",
               PHYS_E_PARSE, 2, "motor", "unknown joint");
  expect_error("<mujoco><worldbody><body><joint name=\"j\"/><geom size=\"1\"/></body></worldbody>"
               "<actuator>\n<muscle joint=\"j\"/></actuator></mujoco>",
               PHYS_E_UNSUPPORTED, 2, "muscle", NULL);
  expect_error("<mujoco><worldbody><body><joint name=\"j\"/><geom size=\"1\"/></body></worldbody>"
               "<actuator>\n<motor joint=\"j\" tendon=\"t\"/></actuator></mujoco>",
               PHYS_E_PARSE, 2, "motor", "not several");
  expect_error("<mujoco><worldbody><body><joint name=\"j\"/><geom size=\"1\"/></body></worldbody>"
               "<actuator>\n<motor site=\"s\" refsite=\"s\"/></actuator></mujoco>",
               PHYS_E_UNSUPPORTED, 2, "motor", "refsite");
  expect_error("<mujoco><worldbody>\n<geom size=\"1\" bogus=\"1\"/></worldbody></mujoco>",
               PHYS_E_PARSE, 2, "geom", "bogus");
  expect_error("<mujoco><worldbody>\n<geom type=\"hfield\" size=\"1 1 1\"/></worldbody>"
               "</mujoco>", PHYS_E_UNSUPPORTED, 2, "geom", "hfield");
  expect_error("<mujoco><worldbody>\n<geom type=\"ellipsoid\" size=\"1 1\"/></worldbody>"
               "</mujoco>", PHYS_E_PARSE, 2, "geom", "size");
  expect_error("<mujoco><worldbody><body name=\"a\"><freejoint/><geom size=\"1\"/></body>"
               "</worldbody><equality>\n<weld body1=\"a\" active=\"false\"/></equality>"
               "</mujoco>", PHYS_E_UNSUPPORTED, 2, "weld", "inactive");
  expect_error("<mujoco><default>\n<joint frictionloss=\"1\"/></default><worldbody>\n<body>\n"
               "<joint type=\"free\"/></body></worldbody></mujoco>",
               PHYS_E_UNSUPPORTED, 4, "joint", "frictionloss");
  /* unknown class, duplicate name, world rejection */
  expect_error("<mujoco><worldbody>\n<geom class=\"nope\" size=\"1\"/></worldbody></mujoco>",
               PHYS_E_PARSE, 2, "geom", "nope");
  expect_error("<mujoco><worldbody>\n<body name=\"a\"><geom size=\"1\"/></body>\n"
               "<body name=\"a\"><geom size=\"1\"/></body></worldbody></mujoco>", PHYS_E_PARSE,
               3, "body", "duplicate");
  expect_error("<mujoco><worldbody>\n<body name=\"empty\"><freejoint/></body>\n"
               "</worldbody></mujoco>", PHYS_E_INVALID, 2, "body", "mass");
  expect_error("<mujoco><worldbody>\n<body><freejoint/><geom type=\"plane\" size=\"1 1 1\"/>"
               "</body></worldbody></mujoco>", PHYS_E_PARSE, 2, "geom", "plane");
  expect_error("<mujoco>\n<compiler angle=\"grad\"/></mujoco>", PHYS_E_PARSE, 2, "compiler",
               "angle");
  expect_error("<mujoco>\n<compiler inertiafromgeom=\"false\"/><worldbody>\n<body><freejoint/>"
               "<geom size=\"1\"/></body></worldbody></mujoco>", PHYS_E_PARSE, 3, "body",
               "inertial");
  /* root element */
  expect_error("\n<model/>", PHYS_E_PARSE, 2, "model", "mujoco");
}

/* ---- peer models -- */

/* Every *.xml in $PHYS_PEER_MODELS loads (SKIP when the variable is not set). */
static void test_peer_models(void) {
  const char *dir = getenv("PHYS_PEER_MODELS");
  if (!dir || !*dir) {
    test_skip("PHYS_PEER_MODELS not set");
    return;
  }
  DIR *d = opendir(dir);
  CU_ASSERT_PTR_NOT_NULL_FATAL(d);
  struct dirent *e;
  int loaded = 0;
  while ((e = readdir(d))) {
    size_t n = strlen(e->d_name);
    if (n < 5 || strcmp(e->d_name + n - 4, ".xml") != 0) continue;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    phys_world *w = NULL;
    phys_error err;
    phys_status st = phys_load_mjcf(path, NULL, &w, &err);
    CU_ASSERT_EQUAL(st, PHYS_OK);
    if (st) {
      printf("\n  %s: %s", e->d_name, err.message);
      continue;
    }
    CU_ASSERT_TRUE(phys_world_body_count(w) > 0);
    printf("\n  %s: %d bodies, %d geoms, %d connects", e->d_name, phys_world_body_count(w),
           phys_world_geom_count(w), w->nconnects);
    loaded++;
    phys_world_destroy(w);
  }
  closedir(d);
  printf("\n  %d peer models loaded ", loaded);
}

/* ---- registration -- */

/* Hinges, slides and ball joints make trees: a pendulum hanging from a static body swings with
 * the small-angle period, a welded child between two hinges is merged, defaults and degrees
 * reach the joints, and a free root with a jointed child becomes a tree root. */
static void test_joints(void) {
  const char *xml =
      "<mujoco><option timestep=\"0.001\"/>\n"
      "<default><joint damping=\"0\" axis=\"0 1 0\"/></default>\n"
      "<worldbody>\n"
      "<body name=\"support\" pos=\"0 0 2\"><geom type=\"box\" size=\"0.1 0.1 0.1\"/>\n"
      "  <body name=\"arm\"><joint name=\"j1\" type=\"hinge\" range=\"-30 30\"/>\n"
      "    <geom size=\"0.01\" pos=\"0 0 -1\" mass=\"1\" contype=\"0\" conaffinity=\"0\"/>\n"
      "  </body>\n"
      "</body>\n"
      "<body name=\"root\" pos=\"5 0 1\"><freejoint/><geom size=\"0.1\"/>\n"
      "  <body name=\"weld\" pos=\"0 0 -0.2\"><geom size=\"0.05\"/>\n"
      "    <body name=\"tip\" pos=\"0 0 -0.2\"><joint type=\"slide\" axis=\"0 0 1\" "
      "stiffness=\"100\" springref=\"0\"/><geom size=\"0.05\"/></body>\n"
      "  </body>\n"
      "</body>\n"
      "</worldbody></mujoco>";
  phys_world *w = NULL;
  phys_error err;
  CU_ASSERT_EQUAL_FATAL(phys_load_mjcf_string(xml, strlen(xml), "joints.xml", NULL, &w, &err),
                        PHYS_OK);
  phys_id arm = phys_world_find_body(w, "arm"), tip = phys_world_find_body(w, "tip");
  phys_id root = phys_world_find_body(w, "root");
  CU_ASSERT_TRUE(arm >= 0 && tip >= 0 && root >= 0);
  /* the welded body is merged into the root, the tip is a link with one dof */
  CU_ASSERT_EQUAL(phys_world_find_body(w, "weld"), PHYS_ID_NONE);
  int nq = 0, nv = 0;
  CU_ASSERT_EQUAL(phys_link_get_joint(w, tip, NULL, NULL, &nq, &nv), PHYS_OK);
  CU_ASSERT_EQUAL(nv, 1);
  CU_ASSERT_EQUAL(phys_link_get_joint(w, root, NULL, NULL, &nq, &nv), PHYS_OK);
  CU_ASSERT_EQUAL(nq, 7);
  CU_ASSERT_EQUAL(nv, 6);
  /* swing the arm by 0.05 rad and time it: l = 1 m */
  CU_ASSERT_EQUAL(phys_link_set_joint(w, arm, 0.05, 0.0), PHYS_OK);
  double period = link_joint_period(w, arm, 6000), expected = 2 * M_PI * sqrt(1.0 / 9.81), q[7];
  CU_ASSERT_DOUBLE_EQUAL(period, expected, 0.005 * expected);
  /* the range is in degrees: thrown at 5 rad/s (enough to swing over the top) the arm is stopped
   * at 30 degrees */
  CU_ASSERT_EQUAL(phys_link_set_joint(w, arm, 0.0, 5.0), PHYS_OK);
  double qmax = 0.0;
  for (int i = 0; i < 500; i++) {
    CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
    phys_link_get_joint(w, arm, q, NULL, NULL, NULL);
    qmax = fmax(qmax, q[0]);
  }
  CU_ASSERT_TRUE(qmax < 30.0 * M_PI / 180.0 + 1e-3);
  CU_ASSERT_TRUE(qmax > 30.0 * M_PI / 180.0 - 1e-2);
  phys_world_destroy(w);
}

/* a body with two hinges becomes two links (the first massless): both joints move it, and a
 * universal-joint pendulum released about x and y swings with the small-angle period */
static void test_two_joints_on_a_body(void) {
  const char *xml =
      "<mujoco><option timestep=\"0.001\"/><worldbody>\n"
      "<body name=\"bob\" pos=\"0 0 2\">\n"
      "  <joint name=\"jx\" type=\"hinge\" axis=\"1 0 0\"/>\n"
      "  <joint name=\"jy\" type=\"hinge\" axis=\"0 1 0\"/>\n"
      "  <geom size=\"0.01\" pos=\"0 0 -1\" mass=\"1\" contype=\"0\" conaffinity=\"0\"/>\n"
      "</body></worldbody></mujoco>";
  phys_world *w = NULL;
  phys_error err;
  CU_ASSERT_EQUAL_FATAL(phys_load_mjcf_string(xml, strlen(xml), "two.xml", NULL, &w, &err),
                        PHYS_OK);
  phys_id jx = phys_world_find_body(w, "jx"), bob = phys_world_find_body(w, "bob");
  CU_ASSERT_TRUE(jx >= 0 && bob >= 0 && jx != bob);
  double m = -1.0;
  phys_body_get_mass(w, jx, &m, NULL);
  CU_ASSERT_EQUAL(m, 0.0);
  CU_ASSERT_EQUAL(phys_link_set_joint(w, jx, 0.03, 0.0), PHYS_OK);
  CU_ASSERT_EQUAL(phys_link_set_joint(w, bob, 0.04, 0.0), PHYS_OK);
  double prev = 0.04, q[7], first = -1, last = -1, qx[7], qxmax = 0.0;
  int crossings = 0;
  for (int i = 0; i < 5000; i++) {
    CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
    phys_link_get_joint(w, bob, q, NULL, NULL, NULL);
    phys_link_get_joint(w, jx, qx, NULL, NULL, NULL);
    qxmax = fmax(qxmax, fabs(qx[0]));
    if (prev > 0 && q[0] <= 0) {
      double t = phys_world_time(w) - 0.001 * q[0] / (q[0] - prev);
      if (first < 0) first = t;
      last = t;
      crossings++;
    }
    prev = q[0];
  }
  double period = (last - first) / (crossings - 1), expected = 2 * M_PI * sqrt(1.0 / 9.81);
  CU_ASSERT_DOUBLE_EQUAL(period, expected, 0.01 * expected);
  CU_ASSERT_DOUBLE_EQUAL(qxmax, 0.03, 0.003);
  phys_world_destroy(w);

  /* a two-joint child overlapping its MJCF parent does not collide with it (the massless joint
   * frame in between does not hide the parent from the parent-child filter) */
  const char *hip =
      "<mujoco><worldbody>\n"
      "<body name=\"pelvis\" pos=\"0 0 2\"><joint type=\"slide\" axis=\"0 0 1\"/>"
      "<geom size=\"0.1\"/>\n"
      "  <body name=\"thigh\" pos=\"0 0 -0.1\"><joint axis=\"1 0 0\"/><joint axis=\"0 1 0\"/>"
      "<geom size=\"0.08\"/></body>\n"
      "</body></worldbody></mujoco>";
  CU_ASSERT_EQUAL_FATAL(phys_load_mjcf_string(hip, strlen(hip), "hip.xml", NULL, &w, &err),
                        PHYS_OK);
  CU_ASSERT_EQUAL(phys_world_step(w), PHYS_OK);
  CU_ASSERT_EQUAL(phys_world_contact_count(w), 0);
  phys_world_destroy(w);
}

/* <actuator>: a motor whose control range comes from a default class, a position actuator that
 * drives its joint to the control, and MuJoCo soft-constraint attributes accepted with one
 * notice each */
static void test_actuators_and_notices(void) {
  const char *xml =
      "<mujoco><option timestep=\"0.002\" gravity=\"0 0 0\"/>\n"
      "<default><motor ctrlrange=\"-1 1\" ctrllimited=\"true\"/>"
      "<geom solimp=\".9 .99 .003\" solref=\".015 1\"/></default>\n"
      "<worldbody>\n"
      "<body name=\"a\"><joint name=\"ja\" axis=\"0 0 1\" solimplimit=\"0 .99 .01\"/>"
      "<geom type=\"box\" size=\"0.2 0.05 0.05\" pos=\"0.2 0 0\" mass=\"1\"/></body>\n"
      "<body name=\"b\" pos=\"2 0 0\"><joint name=\"jb\" axis=\"0 0 1\"/>"
      "<geom type=\"box\" size=\"0.2 0.05 0.05\" pos=\"0.2 0 0\" mass=\"1\"/></body>\n"
      "</worldbody>\n<actuator>\n"
      "<motor name=\"m\" joint=\"ja\" gear=\"10\"/>\n"
      "<position name=\"p\" joint=\"jb\" kp=\"50\" kv=\"5\"/>\n"
      "</actuator></mujoco>";
  phys_world *w = NULL;
  phys_error err;
  CU_ASSERT_EQUAL_FATAL(phys_load_mjcf_string(xml, strlen(xml), "act.xml", NULL, &w, &err),
                        PHYS_OK);
  CU_ASSERT_EQUAL(phys_world_actuator_count(w), 2);
  int m = phys_world_find_actuator(w, "m"), p = phys_world_find_actuator(w, "p");
  CU_ASSERT_TRUE(m == 0 && p == 1);
  /* the notices: solimp, solref (default geom), solimplimit (joint), each once */
  CU_ASSERT_EQUAL(phys_world_notice_count(w), 3);
  for (int i = 0; i < phys_world_notice_count(w); i++)
    CU_ASSERT_PTR_NOT_NULL(strstr(phys_world_notice(w, i), "act.xml:"));
  /* the motor's control is clamped to 1 by the class: torque 10 N m */
  CU_ASSERT_EQUAL(phys_actuator_set_ctrl(w, m, 3.0), PHYS_OK);
  CU_ASSERT_EQUAL(phys_actuator_set_ctrl(w, p, 0.5), PHYS_OK);
  for (int i = 0; i < 3000; i++) CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
  double f, q[7];
  phys_actuator_get(w, m, &f, NULL);
  CU_ASSERT_DOUBLE_EQUAL(f, 1.0, 0.0);
  phys_link_get_joint(w, phys_world_find_body(w, "b"), q, NULL, NULL, NULL);
  CU_ASSERT_DOUBLE_EQUAL(q[0], 0.5, 0.005);
  phys_world_destroy(w);
}

/* MuJoCo's geom margin and gap: a box rests margin - gap above the floor (the larger of each
 * geom's), from a default class or the geom, or an explicit <pair>'s own margin and gap in place
 * of the geoms'; over the last 0.5 s of a 1.5 s window */
static void test_margin_gap(void) {
  phys_world *w = must_load(
      "<mujoco><option timestep='0.002'/><default><default class='m'><geom margin='0.01'/>"
      "</default></default><worldbody><geom name='floor' type='plane' size='2 2 0.1'/>"
      "<body name='a' pos='0 0 0.3'><freejoint/><geom class='m' type='box' size='0.1 0.1 0.1'/></body>"
      "<body name='b' pos='1 0 0.3'><freejoint/><geom type='box' size='0.1 0.1 0.1' margin='0.01' "
      "gap='0.004'/></body>"
      "<body name='c' pos='-1 0 0.3'><freejoint/><geom type='box' size='0.1 0.1 0.1'/></body>"
      "<body name='d' pos='0 1 0.3'><freejoint/><geom name='dg' type='box' size='0.1 0.1 0.1' "
      "margin='0.01'/></body>"
      "</worldbody><contact><pair geom1='floor' geom2='dg' margin='0.03' gap='0.005'/></contact>"
      "</mujoco>");
  const char *names[4] = {"a", "b", "c", "d"};
  const double want[4] = {0.11, 0.106, 0.1, 0.125};
  double worst[4] = {0, 0, 0, 0};
  for (int i = 0; i < 750; i++) {
    CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
    if (i < 500) continue;
    for (int k = 0; k < 4; k++) {
      double x[3];
      phys_body_get_state(w, phys_world_find_body(w, names[k]), x, NULL, NULL, NULL);
      worst[k] = fmax(worst[k], fabs(x[2] - want[k]));
    }
  }
  printf("\n  rest height error: margin %.1e, margin - gap %.1e, none %.1e, pair %.1e m", worst[0],
         worst[1], worst[2], worst[3]);
  for (int k = 0; k < 4; k++) CU_ASSERT(worst[k] < 1e-3);
  /* the setter's errors: no such pair, a non-finite or negative value */
  CU_ASSERT_EQUAL(phys_world_set_contact_pair_margin(w, 1, 2, 0.1, 0.0), PHYS_E_NOT_FOUND);
  CU_ASSERT_EQUAL(phys_world_set_contact_pair_margin(w, 0, 4, NAN, 0.0), PHYS_E_INVALID);
  CU_ASSERT_EQUAL(phys_world_set_contact_pair_margin(w, 4, 0, 0.01, -1.0), PHYS_E_INVALID);
  phys_world_destroy(w);
}

/* MuJoCo's joint ref: the pose as written is at q = ref and the joint starts there; q = 0 turns
 * (hinge, about its anchor) or moves (slide) the link back by ref; keyframes default to ref */
static void test_joint_ref(void) {
  phys_world *w = must_load(
      "<mujoco><compiler angle='degree'/><option gravity='0 0 0'/><worldbody>"
      "<body name='arm' pos='0 0 1'><joint name='h' type='hinge' axis='0 1 0' pos='0.1 0 0' "
      "ref='30'/><geom type='capsule' fromto='0 0 0 0.3 0 0' size='0.02'/></body>"
      "<body name='cart' pos='2 0 1' euler='0 0 90'><joint name='s' type='slide' axis='1 0 0' "
      "ref='0.2'/><geom type='box' size='0.1 0.1 0.1'/></body>"
      "</worldbody></mujoco>");
  phys_id arm = phys_world_find_joint(w, "h"), cart = phys_world_find_joint(w, "s");
  double q[7], p[3], qt[4];
  phys_link_get_joint(w, arm, q, NULL, NULL, NULL);
  CU_ASSERT(fabs(q[0] - M_PI / 6) < 1e-12);
  phys_body_get_state(w, arm, p, qt, NULL, NULL);
  CU_ASSERT(fabs(p[0]) < 1e-12 && fabs(p[2] - 1.0) < 1e-12 && fabs(qt[0] - 1.0) < 1e-12);
  /* q = 0: turned by -30 degrees about y through the anchor (0.1, 0, 1) */
  CU_ASSERT_EQUAL(phys_link_set_joint(w, arm, 0.0, 0.0), PHYS_OK);
  phys_body_get_state(w, arm, p, qt, NULL, NULL);
  double a = -M_PI / 6, ex = 0.1 - 0.1 * cos(a), ez = 1.0 + 0.1 * sin(a);
  printf("\n  hinge at q = 0: origin (%.6f, %.6f), expected (%.6f, %.6f)", p[0], p[2], ex, ez);
  CU_ASSERT(fabs(p[0] - ex) < 1e-12 && fabs(p[2] - ez) < 1e-12);
  CU_ASSERT(fabs(qt[0] - cos(a / 2)) < 1e-12 && fabs(qt[2] - sin(a / 2)) < 1e-12);
  /* the slide: its axis is the body's x, turned to the world's y */
  phys_link_get_joint(w, cart, q, NULL, NULL, NULL);
  CU_ASSERT(fabs(q[0] - 0.2) < 1e-12);
  CU_ASSERT_EQUAL(phys_link_set_joint(w, cart, 0.0, 0.0), PHYS_OK);
  phys_body_get_state(w, cart, p, NULL, NULL, NULL);
  CU_ASSERT(fabs(p[0] - 2.0) < 1e-12 && fabs(p[1] + 0.2) < 1e-12);
  phys_world_destroy(w);
  /* ref on a ball joint is an error */
  phys_error err;
  w = NULL;
  phys_status st = load("<mujoco><worldbody><body>\n<joint type='ball' ref='1'/><geom size='1'/>"
                        "</body></worldbody></mujoco>", &w, &err);
  expect_error_at(st, &err, w, PHYS_E_PARSE, "test.xml:2: <joint>: ", "hinge and slide");
}

int register_tests(void) {
  CU_pSuite s = CU_add_suite("loader_mjcf", NULL, NULL);
  if (!s) return -1;
  struct { const char *name; void (*fn)(void); } tests[] = {
    {"sphere mass from default density", test_sphere_default_density},
    {"option values reach the world", test_options},
    {"default classes and childclass", test_default_classes},
    {"euler degree vs radian, eulerseq", test_euler_degree_radian},
    {"orientation forms agree", test_orientation_forms},
    {"fromto pose, size and mass", test_fromto},
    {"welded child merges mass", test_welded_child},
    {"static bodies and connect", test_static_and_connect},
    {"inertial diag and full", test_inertial},
    {"load from file", test_file},
    {"missing file is PHYS_E_IO", test_missing_file},
    {"error messages: code, file, line, element", test_errors},
    {"hinge, slide and free-root trees", test_joints},
    {"two joints on one body", test_two_joints_on_a_body},
    {"actuators and notices", test_actuators_and_notices},
    {"geom margin and gap", test_margin_gap},
    {"joint ref", test_joint_ref},
  };
  for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++)
    if (!CU_add_test(s, tests[i].name, tests[i].fn)) return -1;
  /* its own suite: the meson test loader_mjcf_peer runs it alone (SKIP without the models),
   * loader_mjcf the rest */
  CU_pSuite peer = CU_add_suite("loader_mjcf_peer", NULL, NULL);
  if (!peer || !CU_add_test(peer, "peer models (PHYS_PEER_MODELS)", test_peer_models)) return -1;
  return 0;
}
