/* test_loader_urdf.c - the URDF loader: a revolute pendulum's period, prismatic limits,
 * continuous joints, fixed-joint merging, fixed vs floating base, the ground plane, package://
 * and relative mesh paths, vendor-extension notices (anywhere, once per kind), <limit> without
 * bounds, Drake collision filter groups, the floating base pose, phys_load_model's choice by
 * content, the inertia checks and repairs (welded links; also the helper MJCF uses), and every
 * error path (code, file, line, element). Whole robot files: test_loader_urdf_robots.c.
 * Robots are written inline; files go to a temporary directory made by the suite. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cunit_main.h"
#include "scene_util.h"
#include "phys/phys.h"
#include "model/inertia_check.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* ---- helpers ------------------------------------------------------------------------------- */

static char tmpdir[64];

/* Load `xml` as "r.urdf" with options lo (NULL: defaults). */
static phys_status load(const char *xml, const phys_load_options *lo, phys_world **w,
                        phys_error *err) {
  return phys_load_urdf_string(xml, strlen(xml), "r.urdf", tmpdir, lo, NULL, w, err);
}

/* Load and assert success. */
static phys_world *load_ok(const char *xml, const phys_load_options *lo) {
  phys_world *w = NULL;
  phys_error err;
  phys_status st = load(xml, lo, &w, &err);
  if (st) printf("\n  unexpected error: %s\n", err.message);
  CU_ASSERT_EQUAL_FATAL(st, PHYS_OK);
  return w;
}

/* Write `text` to tmpdir/rel (directories made as needed). */
static void write_file(const char *rel, const char *text) {
  char path[256], dir[256];
  snprintf(path, sizeof path, "%s/%s", tmpdir, rel);
  for (char *p = strchr(path + strlen(tmpdir) + 1, '/'); p; p = strchr(p + 1, '/')) {
    snprintf(dir, sizeof dir, "%.*s", (int)(p - path), path);
    mkdir(dir, 0700);
  }
  FILE *f = fopen(path, "w");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  fputs(text, f);
  fclose(f);
}

/* Expect a failed load with `code` and a message holding "r.urdf:LINE: <ELEM>" and `word`. */
static void expect_error_lo(const char *xml, const phys_load_options *lo, phys_status code,
                            int line, const char *elem, const char *word) {
  phys_world *w = (phys_world *)&w; /* poisoned: must come back NULL */
  phys_error err;
  phys_status st = load(xml, lo, &w, &err);
  char where[64];
  snprintf(where, sizeof where, "r.urdf:%d: <%s>", line, elem);
  int ok = st == code && err.code == code && w == NULL && strstr(err.message, where) &&
           (!word || strstr(err.message, word));
  if (!ok) printf("\n  expected %d '%s' '%s', got %d: %s\n", code, where, word, st, err.message);
  CU_ASSERT(ok);
}
static void expect_error(const char *xml, phys_status code, int line, const char *elem,
                         const char *word) {
  expect_error_lo(xml, NULL, code, line, elem, word);
}

/* Length of a 3-vector. */
static double v3n(const double v[3]) { return sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]); }

/* Number of notices that contain `word`. */
static int notices_with(const phys_world *w, const char *word) {
  int n = 0;
  for (int i = 0; i < phys_world_notice_count(w); i++)
    if (strstr(phys_world_notice(w, i), word)) n++;
  return n;
}

/* Height of the body frame of the body called `name`. */
static double body_z(const phys_world *w, const char *name) {
  double p[3] = {NAN, NAN, NAN};
  phys_body_get_state(w, phys_world_find_body(w, name), p, NULL, NULL, NULL);
  return p[2];
}

/* A cube [-0.05, 0.05]^3 as ASCII STL. */
static const char cube_stl[] =
  "solid cube\n"
  "facet normal 0 0 -1\nouter loop\nvertex -0.05 -0.05 -0.05\nvertex 0.05 0.05 -0.05\n"
  "vertex 0.05 -0.05 -0.05\nendloop\nendfacet\n"
  "facet normal 0 0 -1\nouter loop\nvertex -0.05 -0.05 -0.05\nvertex -0.05 0.05 -0.05\n"
  "vertex 0.05 0.05 -0.05\nendloop\nendfacet\n"
  "facet normal 0 0 1\nouter loop\nvertex -0.05 -0.05 0.05\nvertex 0.05 -0.05 0.05\n"
  "vertex 0.05 0.05 0.05\nendloop\nendfacet\n"
  "facet normal 0 0 1\nouter loop\nvertex -0.05 -0.05 0.05\nvertex 0.05 0.05 0.05\n"
  "vertex -0.05 0.05 0.05\nendloop\nendfacet\n"
  "endsolid cube\n";

/* The standard inertial block: mass m at (0, 0, z), moments i. */
#define INERTIAL(m, z, i)                                                                      \
  "<inertial><origin xyz='0 0 " #z "'/><mass value='" #m "'/>"                                 \
  "<inertia ixx='" #i "' iyy='" #i "' izz='" #i "' ixy='0' ixz='0' iyz='0'/></inertial>"

/* ---- physics ------------------------------------------------------------------------------- */

/* a revolute pendulum hanging from a fixed base: period 2 pi sqrt(I_pivot / (m g L)) */
static const char pendulum[] =
  "<robot name='pendulum'>\n"
  "  <link name='base'><collision><geometry><box size='0.1 0.1 0.1'/></geometry></collision>"
  "</link>\n"
  "  <link name='arm'>" INERTIAL(1.0, -0.5, 0.001)
  "<collision><origin xyz='0 0 -0.5'/><geometry><sphere radius='0.05'/></geometry></collision>"
  "<visual><geometry><mesh filename='package://nowhere/missing.dae'/></geometry></visual>"
  "</link>\n"
  "  <joint name='swing' type='revolute'><parent link='base'/><child link='arm'/>"
  "<origin xyz='0 0 1'/><axis xyz='0 1 0'/>"
  "<limit lower='-3' upper='3' effort='10' velocity='5'/></joint>\n"
  "</robot>\n";

static void test_pendulum_period(void) {
  phys_world *w = load_ok(pendulum, NULL);
  CU_ASSERT_EQUAL(phys_world_body_count(w), 2);
  phys_id base = phys_world_find_body(w, "base"), arm = phys_world_find_body(w, "arm");
  CU_ASSERT_EQUAL(phys_body_is_static(w, base), 1);
  CU_ASSERT_EQUAL(phys_body_is_static(w, arm), 0);
  /* the base mode and the ignored effort/velocity limits are stated */
  CU_ASSERT_EQUAL(notices_with(w, "fixed to the world"), 1);
  CU_ASSERT_EQUAL(notices_with(w, "effort and velocity"), 1);
  phys_joint_type type;
  int limited;
  double range[2];
  CU_ASSERT_EQUAL(phys_link_get_joint_info(w, arm, &type, &limited, range), PHYS_OK);
  CU_ASSERT_EQUAL(type, PHYS_JOINT_TYPE_HINGE);
  CU_ASSERT_EQUAL(limited, 1);
  ASSERT_NEAR(range[0], -3.0, 1e-15);
  /* the arm's frame is the joint frame, at the pivot z = 1 */
  ASSERT_NEAR(body_z(w, "arm"), 1.0, 1e-12);
  CU_ASSERT_EQUAL(phys_link_set_joint(w, arm, 0.05, 0.0), PHYS_OK);
  double period = link_joint_period(w, arm, 4000);
  double expected = 2 * M_PI * sqrt((0.001 + 0.25) / (9.81 * 0.5)) * (1 + 0.05 * 0.05 / 16);
  printf("\n  URDF pendulum: period %.5f s (expected %.5f, %.3f %%)\n", period, expected,
         100 * fabs(period - expected) / expected);
  CU_ASSERT_DOUBLE_EQUAL(period, expected, 0.005 * expected);
  phys_world_destroy(w);
}

/* a prismatic joint falls onto its lower limit and stays there; a continuous joint spins */
static void test_prismatic_continuous(void) {
  static const char xml[] =
    "<robot name='slider'>\n"
    "  <link name='base'/>\n"
    "  <link name='cart'>" INERTIAL(2.0, 0, 0.01) "</link>\n"
    "  <link name='wheel'>" INERTIAL(1.0, 0, 0.01) "</link>\n"
    "  <joint name='slide' type='prismatic'><parent link='base'/><child link='cart'/>"
    "<axis xyz='0 0 1'/><limit lower='-0.1' upper='0.2' effort='1' velocity='1'/>"
    "<dynamics damping='0' friction='0'/></joint>\n"
    "  <joint name='spin' type='continuous'><parent link='cart'/><child link='wheel'/>"
    "<axis xyz='0 0 1'/></joint>\n"
    "</robot>\n";
  phys_world *w = load_ok(xml, NULL);
  phys_id cart = phys_world_find_body(w, "cart"), wheel = phys_world_find_body(w, "wheel");
  phys_joint_type type;
  int limited;
  double range[2], q[7], lowest = 1.0;
  CU_ASSERT_EQUAL(phys_link_get_joint_info(w, cart, &type, &limited, range), PHYS_OK);
  CU_ASSERT_EQUAL(type, PHYS_JOINT_TYPE_SLIDE);
  CU_ASSERT_EQUAL(limited, 1);
  CU_ASSERT_EQUAL(phys_link_get_joint_info(w, wheel, &type, &limited, range), PHYS_OK);
  CU_ASSERT_EQUAL(type, PHYS_JOINT_TYPE_HINGE);
  CU_ASSERT_EQUAL(limited, 0);
  CU_ASSERT_EQUAL(phys_link_set_joint(w, wheel, 0.0, 10.0), PHYS_OK);
  for (int i = 0; i < 500; i++) {
    CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
    phys_link_get_joint(w, cart, q, NULL, NULL, NULL);
    if (q[0] < lowest) lowest = q[0];
  }
  phys_link_get_joint(w, cart, q, NULL, NULL, NULL);
  printf("\n  prismatic: lowest %.6f, final %.6f (limit -0.1)\n", lowest, q[0]);
  CU_ASSERT(lowest > -0.1 - 2e-3);
  ASSERT_NEAR(q[0], -0.1, 1e-3);
  /* the wheel turned 10 rad/s for 1 s: past any angle limit */
  phys_link_get_joint(w, wheel, q, NULL, NULL, NULL);
  printf("  continuous: %.4f rad after 1 s at 10 rad/s\n", q[0]);
  ASSERT_NEAR(q[0], 10.0, 0.05);
  phys_world_destroy(w);
}

/* links welded by fixed joints become one body with the summed mass, COM and inertia */
static void test_fixed_merge(void) {
  static const char xml[] =
    "<robot name='merge'>\n"
    "  <link name='base'/>\n"
    "  <link name='arm'>" INERTIAL(1.0, 0, 0.01) "</link>\n"
    "  <link name='tip'>" INERTIAL(2.0, 0, 0.02)
    "<collision><geometry><sphere radius='0.05'/></geometry></collision></link>\n"
    "  <link name='tool0'/>\n"
    "  <joint name='j1' type='continuous'><parent link='base'/><child link='arm'/>"
    "<axis xyz='0 0 1'/></joint>\n"
    "  <joint name='weld' type='fixed'><parent link='arm'/><child link='tip'/>"
    "<origin xyz='0.3 0 0' rpy='0 0 1.5707963267948966'/></joint>\n"
    "  <joint name='weld2' type='fixed'><parent link='tip'/><child link='tool0'/>"
    "<origin xyz='0 0 0.1'/></joint>\n"
    "</robot>\n";
  phys_world *w = load_ok(xml, NULL);
  CU_ASSERT_EQUAL(phys_world_body_count(w), 2); /* base and arm (tip, tool0 merged) */
  CU_ASSERT_EQUAL(phys_world_find_body(w, "tip"), PHYS_ID_NONE);
  CU_ASSERT_EQUAL(phys_world_geom_count(w), 1);
  phys_id arm = phys_world_find_body(w, "arm");
  double m, I[3], p[3];
  CU_ASSERT_EQUAL(phys_body_get_mass(w, arm, &m, I), PHYS_OK);
  ASSERT_NEAR(m, 3.0, 1e-12);
  /* COM at x = 0.2; moments: 0.03 about x; 0.03 + 1*0.2^2 + 2*0.1^2 = 0.09 about y and z */
  double s[3] = {I[0], I[1], I[2]};
  for (int i = 0; i < 2; i++)
    for (int k = 0; k < 2 - i; k++)
      if (s[k] > s[k + 1]) {
        double t = s[k];
        s[k] = s[k + 1];
        s[k + 1] = t;
      }
  ASSERT_NEAR(s[0], 0.03, 1e-12);
  ASSERT_NEAR(s[1], 0.09, 1e-12);
  ASSERT_NEAR(s[2], 0.09, 1e-12);
  phys_body_get_state(w, arm, p, NULL, NULL, NULL);
  printf("\n  fixed merge: mass %.3f, moments %.4f %.4f %.4f\n", m, s[0], s[1], s[2]);
  phys_world_destroy(w);
}

/* the same robot with a fixed base stays put and with a floating base falls freely */
static void test_floating_vs_fixed(void) {
  static const char xml[] =
    "<robot name='two'>\n"
    "  <link name='body'>" INERTIAL(5.0, 0, 0.05)
    "<collision><origin xyz='0 0 0.5'/><geometry><box size='0.2 0.2 0.2'/></geometry>"
    "</collision></link>\n"
    "  <link name='leg'>" INERTIAL(1.0, -0.2, 0.01) "</link>\n"
    "  <joint name='hip' type='revolute'><parent link='body'/><child link='leg'/>"
    "<origin xyz='0 0 0.5'/><axis xyz='1 0 0'/>"
    "<limit lower='-1' upper='1' effort='1' velocity='1'/></joint>\n"
    "</robot>\n";
  /* fixed: the body is static, the leg hangs still */
  phys_world *w = load_ok(xml, NULL);
  CU_ASSERT_EQUAL(phys_body_is_static(w, phys_world_find_body(w, "body")), 1);
  for (int i = 0; i < 250; i++) CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
  ASSERT_NEAR(body_z(w, "leg"), 0.5, 1e-9);
  phys_world_destroy(w);
  /* floating: the tree's root is free and everything falls g t^2 / 2 */
  phys_load_options lo = phys_load_options_default();
  lo.floating_base = 1;
  w = load_ok(xml, &lo);
  CU_ASSERT_EQUAL(phys_body_is_static(w, phys_world_find_body(w, "body")), 0);
  CU_ASSERT_EQUAL(notices_with(w, "floating base"), 1);
  double z0 = body_z(w, "leg");
  for (int i = 0; i < 250; i++) CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
  double t = phys_world_time(w), drop = z0 - body_z(w, "leg");
  printf("\n  floating base: fell %.4f m in %.2f s (g t^2 / 2 = %.4f)\n", drop, t,
         0.5 * 9.81 * t * t);
  ASSERT_NEAR(drop, 0.5 * 9.81 * t * t, 0.01);
  phys_world_destroy(w);
  /* floating on the ground plane: the body's box (bottom 0.4 m up) lands and rests on it */
  lo.ground_plane = 1;
  static const char box[] =
    "<robot name='one'><link name='body'>" INERTIAL(5.0, 0.5, 0.05)
    "<collision><origin xyz='0 0 0.5'/><geometry><box size='0.2 0.2 0.2'/></geometry>"
    "</collision></link></robot>";
  w = load_ok(box, &lo);
  CU_ASSERT_EQUAL(phys_world_geom_count(w), 2);
  for (int i = 0; i < 750; i++) CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
  printf("  on the ground: link frame at z = %.4f (expected -0.4: the box is 0.4..0.6 up)\n",
         body_z(w, "body"));
  ASSERT_NEAR(body_z(w, "body"), -0.4, 0.005);
  phys_world_destroy(w);
}

/* origin rpy is roll about x, then pitch about y, then yaw about z, all fixed axes:
 * R = Rz(yaw) Ry(pitch) Rx(roll); the child link's frame takes it at joint position 0 */
static void test_rpy_convention(void) {
  static const char xml[] =
    "<robot name='r'><link name='a'/><link name='b'>" INERTIAL(1.0, 0, 0.01) "</link>"
    "<joint name='j' type='continuous'><parent link='a'/><child link='b'/>"
    "<origin xyz='0.1 0.2 0.3' rpy='0.3 0.2 0.1'/></joint></robot>";
  phys_world *w = load_ok(xml, NULL);
  double p[3], q[4];
  phys_body_get_state(w, phys_world_find_body(w, "b"), p, q, NULL, NULL);
  double r = 0.3, pi = 0.2, y = 0.1;
  double cr = cos(r), sr = sin(r), cp = cos(pi), sp = sin(pi), cy = cos(y), sy = sin(y);
  double R[9] = {cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr,
                 sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr,
                 -sp,     cp * sr,                cp * cr};
  double w0 = q[0], x = q[1], yy = q[2], z = q[3];
  double Q[9] = {1 - 2 * (yy * yy + z * z), 2 * (x * yy - w0 * z), 2 * (x * z + w0 * yy),
                 2 * (x * yy + w0 * z), 1 - 2 * (x * x + z * z), 2 * (yy * z - w0 * x),
                 2 * (x * z - w0 * yy), 2 * (yy * z + w0 * x), 1 - 2 * (x * x + yy * yy)};
  for (int i = 0; i < 9; i++) ASSERT_NEAR(Q[i], R[i], 1e-12);
  ASSERT_NEAR(p[0], 0.1, 1e-12);
  ASSERT_NEAR(p[1], 0.2, 1e-12);
  ASSERT_NEAR(p[2], 0.3, 1e-12);
  phys_world_destroy(w);
}

/* a fixed base whose box overlaps its first link's at the joint: no contact between them
 * (the exclusion added by the loader); the ground under the static base makes none either */
static void test_fixed_root_contacts(void) {
  static const char xml[] =
    "<robot name='overlap'>\n"
    "  <link name='base'><collision><geometry><box size='0.4 0.4 0.4'/></geometry></collision>"
    "</link>\n"
    "  <link name='link1'>" INERTIAL(1.0, 0, 0.01)
    "<collision><geometry><box size='0.2 0.2 0.2'/></geometry></collision></link>\n"
    "  <joint name='j' type='continuous'><parent link='base'/><child link='link1'/>"
    "<origin xyz='0 0 0.25'/><axis xyz='0 0 1'/></joint>\n"
    "</robot>\n";
  phys_load_options lo = phys_load_options_default();
  lo.ground_plane = 1;
  phys_world *w = load_ok(xml, &lo);
  for (int i = 0; i < 50; i++) CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
  CU_ASSERT_EQUAL(phys_world_contact_count(w), 0);
  ASSERT_NEAR(body_z(w, "link1"), 0.25, 1e-9);
  phys_world_destroy(w);
}

/* a root link called "world" is the world: the robot stays fixed even with floating_base */
static void test_world_root(void) {
  static const char xml[] =
    "<robot name='w'><link name='world'/><link name='base'>" INERTIAL(1.0, 0, 0.01) "</link>"
    "<link name='free'>" INERTIAL(1.0, 0, 0.01) "</link>"
    "<joint name='fix' type='fixed'><parent link='world'/><child link='base'/>"
    "<origin xyz='0 0 1'/></joint>"
    "<joint name='fl' type='floating'><parent link='world'/><child link='free'/>"
    "<origin xyz='1 0 2'/></joint></robot>";
  phys_load_options lo = phys_load_options_default();
  lo.floating_base = 1;
  phys_world *w = load_ok(xml, &lo);
  CU_ASSERT_EQUAL(notices_with(w, "world frame"), 1);
  CU_ASSERT_EQUAL(phys_body_is_static(w, phys_world_find_body(w, "world")), 1);
  CU_ASSERT_EQUAL(phys_body_is_static(w, phys_world_find_body(w, "free")), 0);
  ASSERT_NEAR(body_z(w, "free"), 2.0, 1e-12);
  for (int i = 0; i < 100; i++) CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
  CU_ASSERT(body_z(w, "free") < 2.0 - 0.1);
  phys_world_destroy(w);
}

/* ---- files and packages ------------------------------------------------------------------- */

static const char mesh_robot_fmt[] =
  "<robot name='m'><link name='body'>" INERTIAL(1.0, 0.5, 0.002)
  "<collision><origin xyz='0 0 0.5'/><geometry><mesh filename='%s'/></geometry></collision>"
  "<visual><geometry><mesh filename='package://missing/v.dae'/></geometry></visual>"
  "</link></robot>";

/* package://, relative and file:// names, unresolved packages and missing files */
static void test_package_paths(void) {
  char xml[1024], pkgroot[128], pkgself[128], abs[192];
  write_file("pkgs/mypkg/meshes/cube.stl", cube_stl);
  snprintf(pkgroot, sizeof pkgroot, "%s/pkgs", tmpdir);
  snprintf(pkgself, sizeof pkgself, "%s/pkgs/mypkg/", tmpdir);
  snprintf(xml, sizeof xml, mesh_robot_fmt, "package://mypkg/meshes/cube.stl");
  /* a directory holding the package, then the package directory itself */
  const char *paths1[] = {"/nonexistent", pkgroot};
  const char *paths2[] = {pkgself};
  phys_load_options lo = phys_load_options_default();
  lo.floating_base = 1;
  lo.ground_plane = 1;
  lo.package_paths = paths1;
  lo.npackage_paths = 2;
  phys_world *w = load_ok(xml, &lo);
  CU_ASSERT_EQUAL(phys_world_geom_count(w), 2);
  /* the hull (0.45 to 0.55 above the link frame) drops onto the ground */
  for (int i = 0; i < 750; i++) CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
  double p[3];
  phys_body_get_state(w, phys_world_find_body(w, "body"), p, NULL, NULL, NULL);
  printf("\n  STL cube via package://: body origin at z = %.4f after landing (expected -0.45)\n",
         p[2]);
  ASSERT_NEAR(p[2], -0.45, 0.005);
  phys_world_destroy(w);
  lo.package_paths = paths2;
  lo.npackage_paths = 1;
  w = load_ok(xml, &lo);
  phys_world_destroy(w);
  /* not found: the URI and the places searched are named */
  lo.package_paths = paths1;
  lo.npackage_paths = 1;
  expect_error_lo(xml, &lo, PHYS_E_IO, 1, "mesh", "package://mypkg/meshes/cube.stl");
  expect_error_lo(xml, &lo, PHYS_E_IO, 1, "mesh", "[/nonexistent]");
  /* relative to the URDF's directory (a file), and file:// */
  snprintf(xml, sizeof xml, mesh_robot_fmt, "meshes/cube.stl");
  write_file("pkgs/mypkg/robot.urdf", xml);
  char path[192];
  snprintf(path, sizeof path, "%s/pkgs/mypkg/robot.urdf", tmpdir);
  phys_error err;
  CU_ASSERT_EQUAL(phys_load_urdf(path, NULL, NULL, &w, &err), PHYS_OK);
  phys_world_destroy(w);
  snprintf(abs, sizeof abs, "file://%s/pkgs/mypkg/meshes/cube.stl", tmpdir);
  snprintf(xml, sizeof xml, mesh_robot_fmt, abs);
  w = load_ok(xml, NULL);
  phys_world_destroy(w);
  /* a missing file */
  snprintf(xml, sizeof xml, mesh_robot_fmt, "meshes/none.stl");
  expect_error(xml, PHYS_E_IO, 1, "mesh", "meshes/none.stl");
  /* a file that is not a mesh: the mesh reader's error, with the link */
  write_file("bad.stl", "solid x\nfacet oops\n");
  snprintf(xml, sizeof xml, mesh_robot_fmt, "bad.stl");
  expect_error(xml, PHYS_E_INVALID, 1, "collision", "link 'body'");
}

/* vendor extensions: one notice per kind; visual elements never matter */
static void test_vendor_notices(void) {
  static const char xml[] =
    "<robot name='v' xmlns:xacro='http://www.ros.org/wiki/xacro'>\n"
    "  <material name='red'><color rgba='1 0 0 1'/></material>\n"
    "  <material name='blue'><color rgba='0 0 1 1'/></material>\n"
    "  <xacro:property name='x' value='1'/>\n"
    "  <link name='base'><visual><geometry><mesh filename='nope.dae'/></geometry>"
    "<material name='red'/></visual><contact><lateral_friction value='1'/></contact>"
    "<contact/></link>\n"
    "  <gazebo reference='base'><mu1>0.5</mu1></gazebo>\n"
    "  <gazebo><plugin name='p' filename='x.so'/></gazebo>\n"
    "  <transmission name='t'><type>x</type></transmission>\n"
    "</robot>\n";
  phys_world *w = load_ok(xml, NULL);
  CU_ASSERT_EQUAL(notices_with(w, "<gazebo>"), 1);
  CU_ASSERT_EQUAL(notices_with(w, "<transmission>"), 1);
  CU_ASSERT_EQUAL(notices_with(w, "<material>"), 1);
  CU_ASSERT_EQUAL(notices_with(w, "<xacro:property>"), 1);
  CU_ASSERT_EQUAL(notices_with(w, "r.urdf:6: <gazebo>"), 1); /* the first one is named */
  CU_ASSERT_EQUAL(notices_with(w, "<contact>"), 1);
  CU_ASSERT_EQUAL(phys_world_notice_count(w), 6);             /* + the base mode */
  phys_world_destroy(w);
}

/* vendor content of published files anywhere in the tree: one notice per kind (not per
 * occurrence), never an error; what physd reads around it is still validated */
static void test_vendor_anywhere(void) {
  static const char fmt[] =
    "<robot name='v' xmlns:drake='http://drake.mit.edu'>\n"
    "  <frame name='tool' link='b' xyz='0 0 0.1' rpy='0 0 0'/>\n"
    "  <frame name='cam' link='b' xyz='0 0 0.2' rpy='0 0 0'/>\n"
    "  <self_collision_checking><geometry><sphere radius='1'/></geometry></self_collision_checking>\n"
    "  <mujoco><compiler discardvisual='false'/></mujoco>\n"
    "  <link name='a'><self_collision_checking/><self_collision_checking/></link>\n"
    "  <link name='b' drake:note='x'><inertial><origin xyz='0 0 0'/><mass value='1'/>"
    "<inertia ixx='0.01' iyy='0.01' izz='0.01' ixy='0' ixz='0' iyz='0'><drake:x/></inertia>"
    "</inertial>\n"
    "    <collision><geometry><box size='0.1 0.1 0.1'/></geometry><drake:proximity_properties>"
    "<drake:mu_dynamic value='0.5'/></drake:proximity_properties></collision>\n"
    "    <collision><geometry><mesh filename='cube.stl'><drake:declare_convex/></mesh></geometry>"
    "<drake:proximity_properties/></collision></link>\n"
    "  <joint name='j' type='continuous' drake:note='y'><parent link='a'/><child link='b'/>"
    "<dynamics damping='0.1' drake:joint_damping='0.1'/><drake:rotor_inertia value='1e-4'/>"
    "</joint>\n"
    "  <link name='c'/><link name='d'/>\n"
    "  <joint name='f1' type='fixed' dont_collapse='true'><parent link='b'/><child link='c'/>"
    "</joint>\n"
    "  <joint name='f2' type='fixed' dont_collapse='true'><parent link='b'/><child link='d'/>"
    "%s</joint>\n"
    "</robot>\n";
  char xml[4096];
  write_file("cube.stl", cube_stl);
  snprintf(xml, sizeof xml, fmt, "");
  phys_world *w = load_ok(xml, NULL);
  static const struct {
    const char *word;
    int line;
  } once[] = {
    {"<frame>", 2}, {"<self_collision_checking> ignored", 4}, /* robot and link: one kind */ {"<mujoco>", 5}, {"'drake:note'", 7},
    {"<drake:x>", 7}, {"<drake:proximity_properties>", 8}, {"<drake:declare_convex>", 9},
    {"'drake:joint_damping'", 10}, {"<drake:rotor_inertia>", 10}, {"'dont_collapse'", 12},
  };
  for (size_t i = 0; i < sizeof once / sizeof once[0]; i++) {
    char where[64];
    snprintf(where, sizeof where, "r.urdf:%d:", once[i].line);
    int n = 0;
    for (int k = 0; k < phys_world_notice_count(w); k++) {
      const char *t = phys_world_notice(w, k);
      n += strstr(t, once[i].word) && strstr(t, where) == t;
    }
    if (n != 1) printf("\n  %s on line %d: %d notices\n", once[i].word, once[i].line, n);
    CU_ASSERT_EQUAL(n, 1);
  }
  CU_ASSERT_EQUAL(notices_with(w, "<frame>"), 1);
  CU_ASSERT_EQUAL(notices_with(w, "<self_collision_checking>"), 1);
  CU_ASSERT_EQUAL(notices_with(w, "'dont_collapse'"), 1);
  CU_ASSERT_EQUAL(notices_with(w, "<drake:proximity_properties>"), 1);
  CU_ASSERT_EQUAL(phys_world_geom_count(w), 2); /* box and mesh: the vendor blocks add nothing */
  phys_world_destroy(w);
  /* known elements keep their checks: a bad child of a leaf, a bad number next to vendor content */
  snprintf(xml, sizeof xml, fmt, "<origin xyz='0 0'/>");
  expect_error(xml, PHYS_E_PARSE, 13, "origin", "3 numbers expected");
  snprintf(xml, sizeof xml, fmt, "<origin xyz='0 0 0'><rpy/></origin>");
  expect_error(xml, PHYS_E_PARSE, 13, "rpy", "unknown element in <origin>");
  snprintf(xml, sizeof xml, fmt, "<axis xyz='1 0 0'><x/></axis>");
  expect_error(xml, PHYS_E_PARSE, 13, "x", "unknown element in <axis>");
  /* dont_collapse is a joint attribute only */
  expect_error("<robot name='x'>\n<link name='a' dont_collapse='true'/>\n</robot>", PHYS_E_PARSE, 2,
               "link", "unknown attribute 'dont_collapse'");
}

/* <limit> with effort and velocity only: no position limit (a notice), and the joint moves
 * freely (the URDF default of 0 for both would lock it); one bound given: the other is 0 */
static void test_limit_without_bounds(void) {
  static const char fmt[] =
    "<robot name='x'>\n<link name='a'/>\n<link name='b'>" INERTIAL(1.0, 0, 0.001)
    "</link>\n<joint name='j' type='%s'><parent link='a'/><child link='b'/>"
    "<origin xyz='0 0 1' rpy='%s'/><axis xyz='%s'/>%s</joint>\n</robot>";
  char xml[1024];
  /* a horizontal pendulum (mass 0.5 m out along x) on a y hinge */
  static const char pend[] =
    "<robot name='x'>\n<link name='a'/>\n<link name='b'><inertial><origin xyz='0.5 0 0'/>"
    "<mass value='1'/><inertia ixx='0.001' iyy='0.001' izz='0.001' ixy='0' ixz='0' iyz='0'/>"
    "</inertial></link>\n<joint name='swing' type='revolute'><parent link='a'/><child link='b'/>"
    "<axis xyz='0 1 0'/><limit effort='10' velocity='5'/></joint>\n</robot>";
  phys_world *w = load_ok(pend, NULL);
  phys_id b = phys_world_find_body(w, "b");
  int limited = -1;
  CU_ASSERT_EQUAL(phys_link_get_joint_info(w, b, NULL, &limited, NULL), PHYS_OK);
  CU_ASSERT_EQUAL(limited, 0);
  CU_ASSERT_EQUAL(notices_with(w, "r.urdf:4: <limit>: joint 'swing': revolute <limit> without "
                                  "lower and upper: no position limit"), 1);
  double q[7], qmax = 0.0;
  for (int i = 0; i < 500; i++) {
    CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
    phys_link_get_joint(w, b, q, NULL, NULL, NULL);
    qmax = fmax(qmax, fabs(q[0]));
  }
  printf("\n  unlimited revolute: swung to |q| = %.4f rad (the far horizontal: pi)\n", qmax);
  ASSERT_NEAR(qmax, M_PI, 0.02); /* down through pi/2 and up to the other side */
  phys_world_destroy(w);
  /* a prismatic joint along z: falls freely for 0.5 s */
  snprintf(xml, sizeof xml, fmt, "prismatic", "0 0 0", "0 0 1", "<limit effort='5' velocity='1'/>");
  w = load_ok(xml, NULL);
  b = phys_world_find_body(w, "b");
  for (int i = 0; i < 250; i++) CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
  phys_link_get_joint(w, b, q, NULL, NULL, NULL);
  double t = phys_world_time(w);
  ASSERT_NEAR(q[0], -0.5 * 9.81 * t * t, 0.01);
  CU_ASSERT_EQUAL(notices_with(w, "prismatic <limit> without lower and upper"), 1);
  phys_world_destroy(w);
  /* one bound: the other is 0, as the specification says */
  snprintf(xml, sizeof xml, fmt, "revolute", "0 0 0", "0 1 0",
           "<limit lower='-1' effort='5' velocity='1'/>");
  w = load_ok(xml, NULL);
  double range[2];
  CU_ASSERT_EQUAL(phys_link_get_joint_info(w, phys_world_find_body(w, "b"), NULL, &limited, range),
                  PHYS_OK);
  CU_ASSERT_EQUAL(limited, 1);
  ASSERT_NEAR(range[0], -1.0, 1e-15);
  ASSERT_NEAR(range[1], 0.0, 1e-15);
  CU_ASSERT_EQUAL(notices_with(w, "<limit> without upper: upper = 0"), 1);
  phys_world_destroy(w);
  snprintf(xml, sizeof xml, fmt, "revolute", "0 0 0", "0 1 0",
           "<limit upper='-1' effort='5' velocity='1'/>");
  expect_error(xml, PHYS_E_PARSE, 4, "limit", "lower 0 must be below upper -1");
}

/* Contacts in the last step between the bodies called n1 and n2. */
static int contacts_between(const phys_world *w, const char *n1, const char *n2) {
  phys_id a = phys_world_find_body(w, n1), b = phys_world_find_body(w, n2);
  int n = 0;
  for (int k = 0; k < phys_world_contact_count(w); k++) {
    phys_contact_info ci;
    phys_world_get_contact(w, k, &ci);
    n += (ci.body_a == a && ci.body_b == b) || (ci.body_a == b && ci.body_b == a);
  }
  return n;
}

/* Drake collision filter groups: two sibling links whose boxes overlap touch without a group,
 * never with a group that ignores itself (or two groups that ignore each other); the groups'
 * errors name file, line and element */
static void test_filter_groups(void) {
  static const char fmt[] =
    "<robot name='f' xmlns:drake='http://drake.mit.edu'>\n"
    "  <link name='base'/>\n"
    "  <link name='l1'>" INERTIAL(1.0, 0, 0.01)
    "<collision><geometry><box size='0.2 0.2 0.2'/></geometry></collision></link>\n"
    "  <link name='l2'>" INERTIAL(1.0, 0, 0.01)
    "<collision><geometry><box size='0.2 0.2 0.2'/></geometry></collision></link>\n"
    "  <joint name='j1' type='continuous'><parent link='base'/><child link='l1'/>"
    "<origin xyz='0 0 1'/><axis xyz='0 0 1'/></joint>\n"
    "  <joint name='j2' type='continuous'><parent link='base'/><child link='l2'/>"
    "<origin xyz='0.15 0 1'/><axis xyz='0 0 1'/></joint>\n"
    "%s"
    "</robot>\n";
  static const struct {
    const char *groups;
    int excluded;
  } cases[] = {
    {"", 0},
    {"  <drake:collision_filter_group name='both'>\n"
     "    <drake:member link='l1'/>\n    <drake:member link='l2'/>\n"
     "    <drake:ignored_collision_filter_group name='both'/>\n"
     "  </drake:collision_filter_group>\n", 1},
    {"  <drake:collision_filter_group name='g1'><drake:member link='l1'/>"
     "<drake:ignored_collision_filter_group name='g2'/></drake:collision_filter_group>\n"
     "  <drake:collision_filter_group name='g2'><drake:member link='l2'/>"
     "</drake:collision_filter_group>\n", 1},
    {"  <drake:collision_filter_group name='g1'><drake:member link='l1'/>"
     "</drake:collision_filter_group>\n"
     "  <drake:collision_filter_group name='g2'><drake:member_group name='g1'/>"
     "<drake:member link='l2'/><drake:ignored_collision_filter_group name='g2'/>"
     "</drake:collision_filter_group>\n", 1},
    /* a group that ignores nothing, and one switched off */
    {"  <drake:collision_filter_group name='g'><drake:member link='l1'/>"
     "<drake:member link='l2'/></drake:collision_filter_group>\n", 0},
    {"  <drake:collision_filter_group name='g' ignore='true'><drake:member link='l1'/>"
     "<drake:member link='l2'/><drake:ignored_collision_filter_group name='g'/>"
     "</drake:collision_filter_group>\n", 0},
  };
  char xml[4096];
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    snprintf(xml, sizeof xml, fmt, cases[i].groups);
    phys_world *w = load_ok(xml, NULL);
    int n = 0;
    for (int k = 0; k < 100; k++) {
      CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
      n += contacts_between(w, "l1", "l2");
    }
    if (n != 0 && cases[i].excluded) printf("\n  case %zu: %d contacts\n", i, n);
    CU_ASSERT(cases[i].excluded ? n == 0 : n > 0);
    if (i == 5) {
      CU_ASSERT_EQUAL(notices_with(w, "has ignore=\"true\": not applied"), 1);
    }
    if (i == 1) {
      CU_ASSERT_EQUAL(notices_with(w, "r.urdf:7: <collision_filter_group>: 1 Drake collision "
                                      "filter group(s): contacts excluded for 1 link pairs"), 1);
    }
    phys_world_destroy(w);
  }
  static const struct {
    const char *groups;
    const char *elem, *word;
  } bad[] = {
    {"<drake:collision_filter_group name='g'><drake:member link='ghost'/>"
     "</drake:collision_filter_group>", "member", "group 'g': unknown link 'ghost'"},
    {"<drake:collision_filter_group name='g'><drake:ignored_collision_filter_group name='h'/>"
     "</drake:collision_filter_group>", "ignored_collision_filter_group",
     "unknown collision filter group 'h'"},
    {"<drake:collision_filter_group name='g'><drake:member_group name='h'/>"
     "</drake:collision_filter_group>", "member_group", "unknown collision filter group 'h'"},
    {"<drake:collision_filter_group name='g'/><drake:collision_filter_group name='g'/>",
     "collision_filter_group", "duplicate collision filter group 'g' (first on line 7)"},
    {"<drake:collision_filter_group><drake:member link='l1'/></drake:collision_filter_group>",
     "collision_filter_group", "missing required attribute 'name'"},
    {"<drake:collision_filter_group name='g'><drake:member/></drake:collision_filter_group>",
     "member", "missing required attribute 'link'"},
    {"<drake:collision_filter_group name='g'><member link='l1'/></drake:collision_filter_group>",
     "member", "unknown element in <drake:collision_filter_group>"},
    {"<drake:collision_filter_group name='g' ignore='maybe'/>", "collision_filter_group",
     "ignore must be true or false"},
    {"<drake:collision_filter_group name='g' size='2'/>", "collision_filter_group",
     "unknown attribute 'size'"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char g[512];
    snprintf(g, sizeof g, "%s\n", bad[i].groups);
    snprintf(xml, sizeof xml, fmt, g);
    expect_error(xml, PHYS_E_PARSE, 7, bad[i].elem, bad[i].word);
  }
}

/* phys_load_model reads the root element, not the file name */
static void test_load_model(void) {
  char upath[128], mpath[128], bpath[128];
  write_file("model_a.xml", "<?xml version='1.0'?>\n<!-- a robot -->\n<robot name='r'>"
                            "<link name='b'/></robot>\n");
  write_file("model_b.urdf", "<mujoco><worldbody><body pos='0 0 1'><freejoint/>"
                             "<geom size='0.1'/></body></worldbody></mujoco>\n");
  write_file("model_c.xml", "<?xml version='1.0'?>\n<sdf version='1.6'/>\n");
  snprintf(upath, sizeof upath, "%s/model_a.xml", tmpdir);
  snprintf(mpath, sizeof mpath, "%s/model_b.urdf", tmpdir);
  snprintf(bpath, sizeof bpath, "%s/model_c.xml", tmpdir);
  phys_world *w = NULL;
  phys_error err;
  CU_ASSERT_EQUAL(phys_load_model(upath, NULL, NULL, &w, &err), PHYS_OK);
  CU_ASSERT_NOT_EQUAL(phys_world_find_body(w, "b"), PHYS_ID_NONE);
  phys_world_destroy(w);
  phys_load_options lo = phys_load_options_default();
  lo.ground_plane = 1;
  CU_ASSERT_EQUAL(phys_load_model(mpath, &lo, NULL, &w, &err), PHYS_OK);
  CU_ASSERT_EQUAL(phys_world_geom_count(w), 2); /* the sphere and the ground plane */
  phys_world_destroy(w);
  w = (phys_world *)&w;
  CU_ASSERT_EQUAL(phys_load_model(bpath, NULL, NULL, &w, &err), PHYS_E_PARSE);
  CU_ASSERT_PTR_NULL(w);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "model_c.xml:2: <sdf>"));
  CU_ASSERT_EQUAL(phys_load_model("/nonexistent.urdf", NULL, NULL, &w, &err), PHYS_E_IO);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "/nonexistent.urdf:0: <file>"));
}

/* ---- inertia ------------------------------------------------------------------------------- */

/* a flat rod (izz = ixx + iyy + 10 %) is rejected naming the link, or repaired with a notice */
static void test_inertia_triangle(void) {
  static const char xml[] =
    "<robot name='i'>\n"
    "  <link name='base'/>\n"
    "  <link name='rod'><inertial><mass value='1'/>\n"
    "    <inertia ixx='0.01' iyy='0.02' izz='0.033' ixy='0' ixz='0' iyz='0'/></inertial></link>\n"
    "  <joint name='j' type='continuous'><parent link='base'/><child link='rod'/></joint>\n"
    "</robot>\n";
  expect_error(xml, PHYS_E_INVALID, 4, "inertia", "link 'rod'");
  expect_error(xml, PHYS_E_INVALID, 4, "inertia", "triangle inequality");
  phys_load_options lo = phys_load_options_default();
  lo.repair_inertia = 1;
  phys_world *w = load_ok(xml, &lo);
  CU_ASSERT_EQUAL(notices_with(w, "link 'rod'"), 1);
  double m, I[3];
  phys_body_get_mass(w, phys_world_find_body(w, "rod"), &m, I);
  printf("\n  repaired inertia: %g %g %g\n", I[0], I[1], I[2]);
  double lo3 = fmin(I[0], fmin(I[1], I[2])), hi3 = fmax(I[0], fmax(I[1], I[2]));
  ASSERT_NEAR(lo3, 0.013, 1e-12); /* raised to 0.033 - 0.02 */
  ASSERT_NEAR(hi3, 0.033, 1e-12);
  phys_world_destroy(w);
  /* a rotated full tensor: the principal moments are checked, not the diagonal */
  static const char rot[] =
    "<robot name='i'><link name='b'><inertial><mass value='2'/>"
    "<inertia ixx='0.015' iyy='0.015' izz='0.02' ixy='0.005' ixz='0' iyz='0'/></inertial>"
    "</link></robot>";
  phys_load_options fl = phys_load_options_default();
  fl.floating_base = 1;
  w = load_ok(rot, &fl);
  phys_body_get_mass(w, phys_world_find_body(w, "b"), &m, I);
  double sum = I[0] + I[1] + I[2];
  ASSERT_NEAR(sum, 0.05, 1e-12);
  ASSERT_NEAR(fmin(I[0], fmin(I[1], I[2])), 0.01, 1e-12);
  phys_world_destroy(w);
}

/* a link welded to its parent by a fixed joint with an unphysical inertia (zero moments, a
 * negative one, a triangle violation): refused with file, line and element; repaired with a
 * notice giving the old and new moments and the change, the merged body then holding the point
 * mass. A moving link's own non-positive inertia is never repaired. */
static void test_inertia_welded(void) {
  static const char fmt[] =
    "<robot name='w'>\n"
    "  <link name='base'/>\n"
    "  <link name='arm'>" INERTIAL(1.0, 0, 0.01) "</link>\n"
    "  <link name='tip'><inertial><origin xyz='0 0 0'/><mass value='0.5'/>\n"
    "    <inertia ixx='%s' iyy='%s' izz='%s' ixy='0' ixz='0' iyz='0'/></inertial></link>\n"
    "  <joint name='j' type='continuous'><parent link='base'/><child link='arm'/></joint>\n"
    "  <joint name='k' type='fixed'><parent link='arm'/><child link='tip'/>"
    "<origin xyz='0.4 0 0'/></joint>\n"
    "</robot>\n";
  static const struct {
    const char *ixx, *iyy, *izz, *what, *repaired;
  } cases[] = {
    {"0", "0", "0", "is not positive definite", "repaired to (0, 0, 0), largest change 0"},
    {"-0.001", "0.002", "0.002", "is not positive definite",
     "repaired to (0, 0.002, 0.002), largest change 0.001"},
    {"0.001", "0.001", "0.003", "violates the triangle inequality",
     "repaired to (0.002, 0.001, 0.003), largest change 0.001"},
  };
  char xml[2048];
  phys_load_options lo = phys_load_options_default();
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    snprintf(xml, sizeof xml, fmt, cases[i].ixx, cases[i].iyy, cases[i].izz);
    lo.repair_inertia = 0;
    expect_error_lo(xml, &lo, PHYS_E_INVALID, 5, "inertia",
                    "link 'tip' (welded to 'arm' by fixed joint 'k')");
    expect_error_lo(xml, &lo, PHYS_E_INVALID, 5, "inertia", cases[i].what);
    expect_error_lo(xml, &lo, PHYS_E_INVALID, 5, "inertia", "repair_inertia=1 repairs it");
    lo.repair_inertia = 1;
    phys_world *w = load_ok(xml, &lo);
    CU_ASSERT_EQUAL(notices_with(w, "r.urdf:5: <inertia>: link 'tip' (welded to 'arm' by fixed "
                                    "joint 'k')"), 1);
    CU_ASSERT_EQUAL(notices_with(w, cases[i].repaired), 1);
    /* the merged body: 1.5 kg, COM 0.4 / 3 out, the repaired tip's moments plus the offsets */
    double m, I[3];
    phys_body_get_mass(w, phys_world_find_body(w, "arm"), &m, I);
    ASSERT_NEAR(m, 1.5, 1e-15);
    double c = 0.5 * 0.4 / 1.5, off = 1.0 * c * c + 0.5 * (0.4 - c) * (0.4 - c);
    double sum = I[0] + I[1] + I[2], tip[3];
    sscanf(strstr(cases[i].repaired, "("), "(%lf, %lf, %lf)", &tip[0], &tip[1], &tip[2]);
    ASSERT_NEAR(sum, 0.03 + tip[0] + tip[1] + tip[2] + 2 * off, 1e-12);
    phys_world_destroy(w);
  }
  /* a moving link's own zero inertia is refused even with repair_inertia */
  static const char moving[] =
    "<robot name='m'>\n<link name='base'/>\n<link name='arm'><inertial><mass value='1'/>\n"
    "<inertia ixx='0' iyy='0' izz='0' ixy='0' ixz='0' iyz='0'/></inertial></link>\n"
    "<joint name='j' type='continuous'><parent link='base'/><child link='arm'/></joint>\n"
    "</robot>\n";
  lo.repair_inertia = 0;
  expect_error_lo(moving, &lo, PHYS_E_INVALID, 4, "inertia", "give real values");
  lo.repair_inertia = 1;
  expect_error_lo(moving, &lo, PHYS_E_INVALID, 4, "inertia",
                  "repairs it only on links welded to a parent");
  /* a fixed base's own inertia does not matter: repaired with a notice */
  static const char base[] =
    "<robot name='b'>\n<link name='base'><inertial><mass value='1'/>\n"
    "<inertia ixx='0' iyy='0' izz='0' ixy='0' ixz='0' iyz='0'/></inertial></link>\n</robot>\n";
  expect_error(base, PHYS_E_INVALID, 3, "inertia", "link 'base' (part of the fixed base)");
  phys_world *w = load_ok(base, &lo);
  CU_ASSERT_EQUAL(notices_with(w, "(part of the fixed base)"), 1);
  phys_world_destroy(w);
}

/* ---- base pose ----------------------------------------------------------------------------- */

/* the floating base starts at base_pos / base_quat (normalised with a notice); a pose for a fixed
 * base, a zero or non-finite quaternion, a non-finite position are refused */
static void test_base_pose(void) {
  static const char xml[] =
    "<robot name='p'>\n<link name='body'>" INERTIAL(2.0, 0, 0.01)
    "<collision><geometry><box size='0.2 0.2 0.2'/></geometry></collision></link>\n</robot>\n";
  phys_load_options lo = phys_load_options_default();
  CU_ASSERT_EQUAL(lo.has_base_pose, 0);
  ASSERT_NEAR(lo.base_quat[0], 1.0, 0.0);
  lo.floating_base = 1;
  lo.ground_plane = 1;
  lo.has_base_pose = 1;
  lo.base_pos[0] = 1.0;
  lo.base_pos[1] = -2.0;
  lo.base_pos[2] = 0.3;
  lo.base_quat[0] = 0.0; /* 180 deg about z, not unit */
  lo.base_quat[3] = 2.0;
  phys_world *w = load_ok(xml, &lo);
  double p[3], q[4];
  phys_body_get_state(w, phys_world_find_body(w, "body"), p, q, NULL, NULL);
  ASSERT_NEAR(p[0], 1.0, 1e-15);
  ASSERT_NEAR(p[1], -2.0, 1e-15);
  ASSERT_NEAR(p[2], 0.3, 1e-15);
  ASSERT_NEAR(fabs(q[3]), 1.0, 1e-15);
  CU_ASSERT_EQUAL(notices_with(w, "r.urdf:0: <robot>: phys_load_options.base_quat (0, 0, 0, 2) "
                                  "has norm 2: normalised to (0, 0, 0, 1)"), 1);
  CU_ASSERT_EQUAL(notices_with(w, "starting at (1, -2, 0.3)"), 1);
  /* it falls 0.2 m onto the ground and rests with its box on it: frame at z = 0.1 */
  for (int i = 0; i < 500; i++) CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
  phys_body_get_state(w, phys_world_find_body(w, "body"), p, NULL, NULL, NULL);
  ASSERT_NEAR(p[2], 0.1, 0.005);
  ASSERT_NEAR(p[0], 1.0, 1e-6);
  phys_world_destroy(w);
  /* refused */
  phys_load_options bad = lo;
  bad.floating_base = 0;
  expect_error_lo(xml, &bad, PHYS_E_INVALID, 2, "link",
                  "root link 'body' is fixed to the world (floating_base = 0): a base pose");
  bad = lo;
  memset(bad.base_quat, 0, sizeof bad.base_quat);
  expect_error_lo(xml, &bad, PHYS_E_INVALID, 0, "robot", "base_quat (0, 0, 0, 0) is zero");
  bad = lo;
  bad.base_quat[1] = NAN;
  expect_error_lo(xml, &bad, PHYS_E_INVALID, 0, "robot", "base_quat[1] is not finite");
  bad = lo;
  bad.base_pos[2] = INFINITY;
  expect_error_lo(xml, &bad, PHYS_E_INVALID, 0, "robot", "base_pos[2] is not finite");
  static const char world[] =
    "<robot name='p'>\n<link name='world'/>\n<link name='body'>" INERTIAL(2.0, 0, 0.01) "</link>\n"
    "<joint name='f' type='floating'><parent link='world'/><child link='body'/></joint>\n</robot>\n";
  expect_error_lo(world, &lo, PHYS_E_INVALID, 2, "link", "the world frame ('world')");
  /* an MJCF file through phys_load_model: a base pose would be lost, so it is refused */
  char path[128];
  write_file("pose.xml", "<mujoco><worldbody><body><freejoint/><geom size='0.1'/></body>"
                         "</worldbody></mujoco>\n");
  snprintf(path, sizeof path, "%s/pose.xml", tmpdir);
  phys_error err;
  w = (phys_world *)&w;
  CU_ASSERT_EQUAL(phys_load_model(path, &lo, NULL, &w, &err), PHYS_E_INVALID);
  CU_ASSERT_PTR_NULL(w);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "pose.xml:1: <mujoco>: phys_load_options.has_base_pose"));
}

/* the helper itself: verdicts, rounding tolerance, repair */
static void test_inertia_helper(void) {
  double a[3] = {1, 2, 3}, b[3] = {1, 2, 3.5}, c[3] = {1, 2, 3 * (1 + 1e-8)}, d[3] = {1, -1, 1};
  CU_ASSERT_EQUAL(phys__inertia_check(a), PHYS_INERTIA_OK);
  CU_ASSERT_EQUAL(phys__inertia_check(b), PHYS_INERTIA_TRIANGLE);
  CU_ASSERT_EQUAL(phys__inertia_check(c), PHYS_INERTIA_OK);
  CU_ASSERT(c[0] + c[1] >= c[2]);
  CU_ASSERT_EQUAL(phys__inertia_check(d), PHYS_INERTIA_NOT_POSITIVE);
  CU_ASSERT_EQUAL(phys__inertia_repair(b), 0);
  ASSERT_NEAR(b[0], 1.5, 1e-15);
  CU_ASSERT(b[0] + b[1] >= b[2]);
  CU_ASSERT_EQUAL(phys__inertia_repair(a), -1);
  double full[6] = {2, 2, 1, 1, 0, 0}, mom[3], q[4];
  phys__inertia_principal(full, mom, q);
  double s = mom[0] + mom[1] + mom[2], p = mom[0] * mom[1] * mom[2];
  ASSERT_NEAR(s, 5.0, 1e-12);
  ASSERT_NEAR(p, 3.0, 1e-12); /* eigenvalues 1, 1, 3 */
}

/* ---- errors -------------------------------------------------------------------------------- */

static void test_errors_structure(void) {
  /* malformed XML: libxml2's first error with its line */
  expect_error("<robot name='x'>\n<link name='a'>\n</robot>\n", PHYS_E_PARSE, 3, "xml",
               "malformed XML");
  expect_error("<mujoco/>", PHYS_E_PARSE, 1, "mujoco", "root element must be <robot>");
  expect_error("<robot name='x'/>", PHYS_E_PARSE, 1, "robot", "no <link>");
  expect_error("<robot><link name='a'/></robot>", PHYS_E_PARSE, 1, "robot", "'name'");
  expect_error("<robot name='x'>\n<joints/>\n</robot>", PHYS_E_PARSE, 2, "joints", "unknown element");
  expect_error("<robot name='x'>\n<link name='a'><sensor/></link>\n</robot>", PHYS_E_PARSE, 2,
               "sensor", "unknown element in <link>");
  expect_error("<robot name='x'>\n<link name='a' color='red'/>\n</robot>", PHYS_E_PARSE, 2,
               "link", "unknown attribute 'color'");
  /* names and the tree */
  expect_error("<robot name='x'>\n<link name='a'/>\n<link name='a'/>\n</robot>", PHYS_E_PARSE, 3,
               "link", "duplicate link name 'a'");
  static const char missing_parent[] =
    "<robot name='x'>\n<link name='a'/>\n<joint name='j' type='fixed'>\n"
    "<parent link='ghost'/><child link='a'/></joint>\n</robot>";
  expect_error(missing_parent, PHYS_E_PARSE, 4, "parent", "unknown parent link 'ghost'");
  static const char missing_child[] =
    "<robot name='x'>\n<link name='a'/>\n<joint name='j' type='fixed'>\n"
    "<parent link='a'/>\n<child link='ghost'/></joint>\n</robot>";
  expect_error(missing_child, PHYS_E_PARSE, 5, "child", "unknown child link 'ghost'");
  static const char cycle[] =
    "<robot name='x'>\n<link name='a'/>\n<link name='b'/>\n"
    "<joint name='ab' type='fixed'><parent link='a'/><child link='b'/></joint>\n"
    "<joint name='ba' type='fixed'><parent link='b'/><child link='a'/></joint>\n</robot>";
  expect_error(cycle, PHYS_E_PARSE, 4, "joint", "cycle");
  static const char cycle2[] =
    "<robot name='x'>\n<link name='r'/>\n<link name='a'/>\n<link name='b'/>\n"
    "<joint name='ab' type='fixed'><parent link='a'/><child link='b'/></joint>\n"
    "<joint name='ba' type='fixed'><parent link='b'/><child link='a'/></joint>\n</robot>";
  expect_error(cycle2, PHYS_E_PARSE, 3, "link", "link 'a' is on a cycle");
  static const char self[] =
    "<robot name='x'>\n<link name='a'/>\n"
    "<joint name='aa' type='fixed'><parent link='a'/><child link='a'/></joint>\n</robot>";
  expect_error(self, PHYS_E_PARSE, 3, "joint", "its own parent");
  static const char two_parents[] =
    "<robot name='x'>\n<link name='a'/>\n<link name='b'/>\n<link name='c'/>\n"
    "<joint name='ac' type='fixed'><parent link='a'/><child link='c'/></joint>\n"
    "<joint name='bc' type='fixed'><parent link='b'/><child link='c'/></joint>\n</robot>";
  expect_error(two_parents, PHYS_E_PARSE, 6, "joint", "link 'c' has two parents");
  static const char two_roots[] = "<robot name='x'>\n<link name='a'/>\n<link name='b'/>\n</robot>";
  expect_error(two_roots, PHYS_E_PARSE, 3, "link", "more than one root link");
  static const char dup_joint[] =
    "<robot name='x'>\n<link name='a'/>\n<link name='b'/>\n<link name='c'/>\n"
    "<joint name='j' type='fixed'><parent link='a'/><child link='b'/></joint>\n"
    "<joint name='j' type='fixed'><parent link='a'/><child link='c'/></joint>\n</robot>";
  expect_error(dup_joint, PHYS_E_PARSE, 6, "joint", "duplicate joint name 'j'");
}

static void test_errors_joints(void) {
  static const char fmt[] =
    "<robot name='x'>\n<link name='a'/>\n<link name='b'>" INERTIAL(1, 0, 0.01) "</link>\n"
    "<joint name='j' type='%s'><parent link='a'/><child link='b'/>%s</joint>\n</robot>";
  static const struct {
    const char *type, *extra;
    phys_status code;
    int line;
    const char *elem, *word;
  } cases[] = {
    {"hinge", "", PHYS_E_PARSE, 4, "joint", "unknown joint type 'hinge'"},
    {"planar", "", PHYS_E_UNSUPPORTED, 4, "joint", "joint 'j': planar"},
    {"revolute", "", PHYS_E_PARSE, 4, "joint", "needs <limit>"},
    {"prismatic", "<limit lower='1' upper='0' effort='1' velocity='1'/>", PHYS_E_PARSE, 4, "limit",
     "lower 1 must be below upper 0"},
    {"revolute", "<limit lower='0' upper='1'/>", PHYS_E_PARSE, 4, "limit", "'effort'"},
    {"continuous", "<axis xyz='0 0 0'/>", PHYS_E_PARSE, 4, "axis", "axis is zero"},
    {"continuous", "<axis xyz='0 0 1abc'/>", PHYS_E_PARSE, 4, "axis", "bad number in '0 0 1abc'"},
    {"continuous", "<origin xyz='0 0'/>", PHYS_E_PARSE, 4, "origin", "3 numbers expected, got 2"},
    {"continuous", "<origin rpy='0 nan 0'/>", PHYS_E_PARSE, 4, "origin", "non-finite"},
    {"continuous", "<mimic joint='k'/>", PHYS_E_UNSUPPORTED, 4, "mimic", "mimic"},
    {"continuous", "<dynamics damping='-1'/>", PHYS_E_PARSE, 4, "dynamics", ">= 0"},
    {"continuous", "<spring/>", PHYS_E_PARSE, 4, "spring", "unknown element in <joint>"},
  };
  char xml[1024];
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    snprintf(xml, sizeof xml, fmt, cases[i].type, cases[i].extra);
    expect_error(xml, cases[i].code, cases[i].line, cases[i].elem, cases[i].word);
  }
  /* floating below a moving link */
  static const char fl[] =
    "<robot name='x'>\n<link name='a'/>\n<link name='b'>" INERTIAL(1, 0, 0.01) "</link>\n"
    "<link name='c'>" INERTIAL(1, 0, 0.01) "</link>\n"
    "<joint name='j' type='continuous'><parent link='a'/><child link='b'/></joint>\n"
    "<joint name='k' type='floating'><parent link='b'/><child link='c'/></joint>\n</robot>";
  expect_error(fl, PHYS_E_UNSUPPORTED, 6, "joint", "joint 'k': a floating joint");
  /* dry friction: loads as the joint's frictionloss, without a notice; a negative one is
   * refused */
  snprintf(xml, sizeof xml, fmt, "continuous", "<dynamics damping='0.5' friction='0.2'/>");
  phys_world *w = load_ok(xml, NULL);
  CU_ASSERT_EQUAL(notices_with(w, "dry friction"), 0);
  double floss = 0.0;
  CU_ASSERT_EQUAL(phys_link_get_joint_frictionloss(w, phys_world_find_body(w, "b"), &floss), PHYS_OK);
  CU_ASSERT_EQUAL(floss, 0.2);
  phys_world_destroy(w);
  snprintf(xml, sizeof xml, fmt, "continuous", "<dynamics friction='-0.2'/>");
  expect_error(xml, PHYS_E_PARSE, 4, "dynamics", "friction must be >= 0");
}

static void test_errors_links(void) {
  static const char fmt[] =
    "<robot name='x'>\n<link name='a'/>\n<link name='b'>\n%s\n</link>\n"
    "<joint name='j' type='%s'><parent link='a'/><child link='b'/></joint>\n</robot>";
  static const struct {
    const char *link, *type;
    phys_status code;
    int line;
    const char *elem, *word;
  } cases[] = {
    /* collision geometry without mass on a moving link (the same welded to a massive link
     * loads: below) */
    {"<collision><geometry><sphere radius='0.1'/></geometry></collision>", "continuous",
     PHYS_E_INVALID, 3, "link", "link 'b' has collision geometry but no mass"},
    /* a moving massless leaf */
    {"", "continuous", PHYS_E_INVALID, 3, "link", "link 'b' moves but has no mass"},
    /* numbers and shapes */
    {"<inertial><mass value='-1'/><inertia ixx='1' iyy='1' izz='1' ixy='0' ixz='0' iyz='0'/>"
     "</inertial>", "continuous", PHYS_E_INVALID, 4, "mass", "negative mass"},
    {"<inertial><mass value='1x'/></inertial>", "continuous", PHYS_E_PARSE, 4, "mass",
     "bad number"},
    {"<inertial><mass value='1'/><inertia ixx='1' iyy='1' izz='1' ixy='0' ixz='0'/></inertial>",
     "continuous", PHYS_E_PARSE, 4, "inertia", "'iyz'"},
    {"<inertial><mass value='1'/><inertia ixx='1' iyy='1' izz='-1' ixy='0' ixz='0' iyz='0'/>"
     "</inertial>", "continuous", PHYS_E_INVALID, 4, "inertia", "not positive definite"},
    {"<collision><geometry><box size='1 1'/></geometry></collision>", "fixed", PHYS_E_PARSE, 4,
     "box", "3 numbers expected"},
    {"<collision><geometry><cylinder radius='0' length='1'/></geometry></collision>", "fixed",
     PHYS_E_PARSE, 4, "cylinder", "positive"},
    {"<collision><geometry/></collision>", "fixed", PHYS_E_PARSE, 4, "geometry", "no shape"},
    {"<collision><geometry><cone/></geometry></collision>", "fixed", PHYS_E_PARSE, 4, "cone",
     "unknown element in <geometry>"},
    {"<collision><geometry><mesh/></geometry></collision>", "fixed", PHYS_E_PARSE, 4, "mesh",
     "'filename'"},
    {"<collision><geometry><mesh filename='package://p'/></geometry></collision>", "fixed",
     PHYS_E_PARSE, 4, "mesh", "package://NAME/PATH"},
    {"<inertial/><inertial/>", "fixed", PHYS_E_PARSE, 4, "inertial", "more than one <inertial>"},
  };
  char xml[1024];
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    snprintf(xml, sizeof xml, fmt, cases[i].link, cases[i].type);
    expect_error(xml, cases[i].code, cases[i].line, cases[i].elem, cases[i].word);
  }
  static const char welded[] =
    "<robot name='x'>\n<link name='a'/>\n<link name='b'>" INERTIAL(1, 0, 0.01) "</link>\n"
    "<link name='c'><collision><geometry><sphere radius='0.1'/></geometry></collision></link>\n"
    "<joint name='j' type='continuous'><parent link='a'/><child link='b'/></joint>\n"
    "<joint name='k' type='fixed'><parent link='b'/><child link='c'/></joint>\n</robot>";
  phys_world *w = load_ok(welded, NULL);
  CU_ASSERT_EQUAL(phys_world_geom_count(w), 1);
  phys_world_destroy(w);
  /* NULL arguments */
  phys_error err;
  CU_ASSERT_EQUAL(phys_load_urdf_string(NULL, 0, NULL, NULL, NULL, NULL, &w, &err),
                  PHYS_E_INVALID);
  CU_ASSERT_EQUAL(phys_load_urdf(NULL, NULL, NULL, &w, &err), PHYS_E_INVALID);
  phys_load_options lo = phys_load_options_default();
  lo.npackage_paths = 2;
  CU_ASSERT_EQUAL(phys_load_urdf_string("<robot/>", 8, NULL, NULL, &lo, NULL, &w, &err),
                  PHYS_E_INVALID);
}

/* tests/data/urdf/arm2.urdf, a ROS-style arm on the ground: it falls over its limits onto the
 * ground and lies still; the base never touches its first link */
static void test_data_arm(void) {
  const char *dir = getenv("PHYS_TEST_DATA");
  char path[512];
  snprintf(path, sizeof path, "%s/urdf/arm2.urdf", dir ? dir : "tests/data");
  phys_load_options lo = phys_load_options_default();
  lo.ground_plane = 1;
  phys_world *w = NULL;
  phys_error err;
  phys_status st = phys_load_model(path, &lo, NULL, &w, &err);
  if (st) printf("\n  %s\n", err.message);
  CU_ASSERT_EQUAL_FATAL(st, PHYS_OK);
  CU_ASSERT_EQUAL(phys_world_body_count(w), 3); /* tool0 is welded to the forearm */
  CU_ASSERT_EQUAL(phys_world_notice_count(w), 5);
  phys_id base = phys_world_find_body(w, "base_link"), upper = phys_world_find_body(w, "upper_arm");
  phys_id fore = phys_world_find_body(w, "forearm");
  /* joints keep the file's names: a joint is found by name at the link it moves; the fixed
   * tool joint welds tool0 into the forearm and names no joint */
  CU_ASSERT_EQUAL(phys_world_find_joint(w, "shoulder"), upper);
  CU_ASSERT_EQUAL(phys_world_find_joint(w, "elbow"), fore);
  CU_ASSERT_STRING_EQUAL(phys_link_get_joint_name(w, fore), "elbow");
  CU_ASSERT_EQUAL(phys_world_find_joint(w, "tool_joint"), PHYS_ID_NONE);
  int base_touch = 0, ground_contacts = 0;
  for (int i = 0; i < 1500; i++) {
    CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
    if (phys_world_contact_count(w) > ground_contacts) ground_contacts = phys_world_contact_count(w);
    for (int k = 0; k < phys_world_contact_count(w); k++) {
      phys_contact_info ci;
      phys_world_get_contact(w, k, &ci);
      if ((ci.body_a == base && ci.body_b == upper) || (ci.body_a == upper && ci.body_b == base))
        base_touch++;
    }
  }
  double v[3], om[3], p[3];
  phys_body_get_state(w, fore, p, NULL, v, om);
  printf("\n  arm2.urdf after 3 s: forearm at (%.3f, %.3f, %.3f), speed %.2e, up to %d contacts, "
         "asleep %d\n", p[0], p[1], p[2], v3n(v), ground_contacts, phys_body_is_sleeping(w, fore));
  CU_ASSERT_EQUAL(base_touch, 0);
  CU_ASSERT(v3n(v) < 1e-2 && v3n(om) < 1e-1);
  CU_ASSERT(ground_contacts > 0); /* it came to rest on the ground (and may sleep there) */
  phys_world_destroy(w);
}

/* ---- suite --------------------------------------------------------------------------------- */

static int suite_init(void) {
  strcpy(tmpdir, "/tmp/physd_urdf_XXXXXX");
  return mkdtemp(tmpdir) ? 0 : -1;
}

static int suite_clean(void) {
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
  return system(cmd) == 0 ? 0 : -1;
}

int register_tests(void) {
  CU_pSuite s = CU_add_suite("loader_urdf", suite_init, suite_clean);
  if (!s) return -1;
  if (!CU_add_test(s, "revolute pendulum period", test_pendulum_period) ||
      !CU_add_test(s, "prismatic limit and continuous joint", test_prismatic_continuous) ||
      !CU_add_test(s, "fixed joints merge", test_fixed_merge) ||
      !CU_add_test(s, "origin rpy convention", test_rpy_convention) ||
      !CU_add_test(s, "floating vs fixed base, ground plane", test_floating_vs_fixed) ||
      !CU_add_test(s, "fixed root: no contacts with its first link", test_fixed_root_contacts) ||
      !CU_add_test(s, "root link 'world'", test_world_root) ||
      !CU_add_test(s, "package paths and mesh files", test_package_paths) ||
      !CU_add_test(s, "vendor extension notices", test_vendor_notices) ||
      !CU_add_test(s, "vendor content anywhere: one notice per kind", test_vendor_anywhere) ||
      !CU_add_test(s, "<limit> without lower and upper", test_limit_without_bounds) ||
      !CU_add_test(s, "Drake collision filter groups", test_filter_groups) ||
      !CU_add_test(s, "inertia of welded links", test_inertia_welded) ||
      !CU_add_test(s, "floating base pose", test_base_pose) ||
      !CU_add_test(s, "phys_load_model by content", test_load_model) ||
      !CU_add_test(s, "tests/data/urdf/arm2.urdf on the ground", test_data_arm) ||
      !CU_add_test(s, "inertia triangle inequality", test_inertia_triangle) ||
      !CU_add_test(s, "inertia helper", test_inertia_helper) ||
      !CU_add_test(s, "errors: document and tree", test_errors_structure) ||
      !CU_add_test(s, "errors: joints", test_errors_joints) ||
      !CU_add_test(s, "errors: links", test_errors_links))
    return -1;
  return 0;
}
