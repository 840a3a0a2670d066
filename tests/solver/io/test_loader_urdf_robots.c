/* test_loader_urdf_robots.c - the URDF loader on robot files written the way people publish
 * them (tests/data/urdf: xacro-expanded look, Gazebo and transmission blocks, package://
 * meshes, Drake extensions): a Drake-style arm (vendor content skipped with one notice per
 * kind, collision filter groups honoured: the excluded links make no contact over a window,
 * and do without the groups), a legged_gym-style quadruped (dont_collapse, a <limit> without
 * bounds, the base pose: placed on the ground it stands under joint PD within a height band;
 * without it its feet start 0.6 m inside the floor) and an ANYmal-style quadruped whose welded
 * links have unphysical inertias (refused with file, line and element; repaired with notices,
 * then the merged masses are the sums and it stands as well). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cunit_main.h"
#include "scene_util.h"
#include "phys/phys.h"

/* ---- helpers ------------------------------------------------------------------------------- */

/* Path of tests/data/urdf/REL into buf. */
static const char *data_path(char *buf, size_t cap, const char *rel) {
  const char *dir = getenv("PHYS_TEST_DATA");
  snprintf(buf, cap, "%s/urdf/%s", dir ? dir : "tests/data", rel);
  return buf;
}

/* The whole file at `path` (malloc'd, NUL-terminated), or NULL. */
static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = malloc((size_t)n + 1);
  if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
    free(s);
    s = NULL;
  }
  if (s) s[n] = '\0';
  fclose(f);
  return s;
}

/* Number of notices that contain `word`. */
static int notices_with(const phys_world *w, const char *word) {
  int n = 0;
  for (int i = 0; i < phys_world_notice_count(w); i++)
    if (strstr(phys_world_notice(w, i), word)) n++;
  return n;
}

/* Load the file tests/data/urdf/REL with lo; assert success. */
static phys_world *load_file_ok(const char *rel, const phys_load_options *lo) {
  char path[512];
  phys_world *w = NULL;
  phys_error err;
  phys_status st = phys_load_urdf(data_path(path, sizeof path, rel), lo, NULL, &w, &err);
  if (st) printf("\n  unexpected error: %s\n", err.message);
  CU_ASSERT_EQUAL_FATAL(st, PHYS_OK);
  return w;
}

/* 1-based line of the first occurrence of `needle` after the first occurrence of `after`. */
static int line_of(const char *text, const char *after, const char *needle) {
  const char *a = strstr(text, after);
  const char *p = a ? strstr(a, needle) : NULL;
  if (!p) return -1;
  int line = 1;
  for (const char *q = text; q < p; q++) line += *q == '\n';
  return line;
}

/* Contacts in the last step between bodies a and b. */
static int contacts_between(const phys_world *w, phys_id a, phys_id b) {
  int n = 0;
  for (int k = 0; k < phys_world_contact_count(w); k++) {
    phys_contact_info ci;
    phys_world_get_contact(w, k, &ci);
    n += (ci.body_a == a && ci.body_b == b) || (ci.body_a == b && ci.body_b == a);
  }
  return n;
}

/* Hold every hinge joint of the world at its current angle with a PD command (kp, kd), as a
 * standing controller does. Returns the number of joints commanded. */
static int hold_joints(phys_world *w, double kp, double kd) {
  int n = 0;
  for (phys_id id = 0; id < phys_world_body_id_bound(w); id++) {
    phys_joint_type type;
    double q[7];
    if (phys_link_get_joint_info(w, id, &type, NULL, NULL) || type != PHYS_JOINT_TYPE_HINGE)
      continue;
    phys_link_get_joint(w, id, q, NULL, NULL, NULL);
    phys_joint_command cmd = {.mode = PHYS_CMD_POSITION, .q = q[0], .kp = kp, .kd = kd};
    CU_ASSERT_EQUAL(phys_link_set_command(w, id, &cmd), PHYS_OK);
    n++;
  }
  return n;
}

/* Step n times; track the base's lowest and highest frame height. */
static void step_track(phys_world *w, phys_id base, int n, double *zmin, double *zmax) {
  *zmin = INFINITY;
  *zmax = -INFINITY;
  for (int i = 0; i < n; i++) {
    CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
    double p[3];
    phys_body_get_state(w, base, p, NULL, NULL, NULL);
    *zmin = fmin(*zmin, p[2]);
    *zmax = fmax(*zmax, p[2]);
  }
}

/* ---- the Drake-style arm ------------------------------------------------------------------- */

static const char arm_rel[] = "iiwa_like_description/urdf/iiwa_like.urdf";

/* Options of the arm: its collision mesh is package://iiwa_like_description/... */
static phys_load_options arm_options(const char **pkg) {
  static char dir[512];
  const char *d = getenv("PHYS_TEST_DATA");
  snprintf(dir, sizeof dir, "%s/urdf", d ? d : "tests/data");
  pkg[0] = dir;
  phys_load_options lo = phys_load_options_default();
  lo.package_paths = pkg;
  lo.npackage_paths = 1;
  return lo;
}

/* every vendor kind is stated once, however often it occurs */
static void test_arm_vendor_notices(void) {
  const char *pkg[1];
  phys_load_options lo = arm_options(pkg);
  phys_world *w = load_file_ok(arm_rel, &lo);
  CU_ASSERT_EQUAL(phys_world_body_count(w), 8); /* link_0 .. link_7; link_ee is welded */
  static const char *const once[] = {
    "<drake:proximity_properties>", "<drake:declare_convex>", "<drake:rotor_inertia>",
    "<drake:gear_ratio>", "'drake:joint_damping'", "<frame>", "<self_collision_checking>",
    "<transmission>", "<gazebo>", "robot-level <material>", "collision filter group(s)", NULL};
  for (int i = 0; once[i]; i++) {
    int n = notices_with(w, once[i]);
    if (n != 1) printf("\n  '%s': %d notices\n", once[i], n);
    CU_ASSERT_EQUAL(n, 1);
  }
  /* the first occurrence is the one named (line of the first <drake:proximity_properties>) */
  char path[512], where[600];
  char *text = slurp(data_path(path, sizeof path, arm_rel));
  CU_ASSERT_PTR_NOT_NULL_FATAL(text);
  snprintf(where, sizeof where, "iiwa_like.urdf:%d: <proximity_properties>",
           line_of(text, "<robot", "<drake:proximity_properties>"));
  CU_ASSERT_EQUAL(notices_with(w, where), 1);
  free(text);
  phys_world_destroy(w);
}

/* Count arm link 5 / link 7 contacts over `steps` steps of the document `xml`. */
static int arm_contacts_5_7(const char *xml, int steps, int *total) {
  const char *pkg[1];
  phys_load_options lo = arm_options(pkg);
  char path[512];
  data_path(path, sizeof path, "iiwa_like_description/urdf");
  phys_world *w = NULL;
  phys_error err;
  phys_status st = phys_load_urdf_string(xml, strlen(xml), "iiwa_like.urdf", path, &lo, NULL, &w,
                                         &err);
  if (st) printf("\n  %s\n", err.message);
  CU_ASSERT_EQUAL_FATAL(st, PHYS_OK);
  phys_id l5 = phys_world_find_body(w, "iiwa_link_5"), l7 = phys_world_find_body(w, "iiwa_link_7");
  CU_ASSERT_FATAL(l5 != PHYS_ID_NONE && l7 != PHYS_ID_NONE);
  int n = 0;
  *total = 0;
  for (int i = 0; i < steps; i++) {
    CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
    n += contacts_between(w, l5, l7);
    *total += phys_world_contact_count(w);
  }
  phys_world_destroy(w);
  return n;
}

/* The file's text with every <drake:collision_filter_group> block cut out (malloc'd). */
static char *strip_filter_groups(const char *text) {
  char *s = strdup(text);
  static const char open[] = "<drake:collision_filter_group", close[] = "</drake:collision_filter_group>";
  for (char *p; (p = strstr(s, open));) {
    char *e = strstr(p, close);
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    e += strlen(close);
    memmove(p, e, strlen(e) + 1);
  }
  return s;
}

/* the flange (link 7) reaches over link 5: the filter groups keep them apart for the whole
 * window; the same file without the groups has them in contact from the first step */
static void test_arm_filter_groups(void) {
  char path[512];
  char *text = slurp(data_path(path, sizeof path, arm_rel));
  CU_ASSERT_PTR_NOT_NULL_FATAL(text);
  int total_with, total_without;
  int with = arm_contacts_5_7(text, 300, &total_with);
  char *bare = strip_filter_groups(text);
  CU_ASSERT_PTR_NULL(strstr(bare, "collision_filter_group"));
  int without = arm_contacts_5_7(bare, 300, &total_without);
  printf("\n  link 5 / link 7 contacts over 300 steps: %d with the filter groups (of %d in all), "
         "%d without (of %d)\n", with, total_with, without, total_without);
  CU_ASSERT_EQUAL(with, 0);
  CU_ASSERT(without > 0);
  free(bare);
  free(text);
}

/* ---- the legged_gym-style quadruped -------------------------------------------------------- */

/* at the origin (no base pose) the feet start 0.6 m inside the floor; placed with base_pos and
 * base_quat it stands on the ground under joint PD, its base height within a band for 2 s; the
 * lidar's <limit> without bounds leaves it unlimited */
static void test_quadruped_base_pose(void) {
  phys_load_options lo = phys_load_options_default();
  lo.floating_base = 1;
  lo.ground_plane = 1;
  phys_world *w = load_file_ok("quadruped_lg.urdf", &lo);
  double p[3], q[4];
  phys_body_get_state(w, phys_world_find_body(w, "FL_calf"), p, NULL, NULL, NULL);
  printf("\n  without a base pose: base at the origin, FL calf frame at z = %.3f (foot -0.3 "
         "below it)\n", p[2]);
  ASSERT_NEAR(p[2], -0.3, 1e-12);
  CU_ASSERT_EQUAL(notices_with(w, "starting at the origin"), 1);
  CU_ASSERT_EQUAL(notices_with(w, "'dont_collapse'"), 1); /* four feet, one notice */
  CU_ASSERT_EQUAL(notices_with(w, "<gazebo>"), 1);
  CU_ASSERT_EQUAL(notices_with(w, "<transmission>"), 1);
  /* the lidar spins freely: no range, and it turns past any would-be limit */
  phys_id lidar = phys_world_find_body(w, "lidar");
  int limited = -1;
  CU_ASSERT_EQUAL(phys_link_get_joint_info(w, lidar, NULL, &limited, NULL), PHYS_OK);
  CU_ASSERT_EQUAL(limited, 0);
  CU_ASSERT_EQUAL(notices_with(w, "joint 'lidar_joint': revolute <limit> without lower and upper: "
                                  "no position limit"), 1);
  phys_world_destroy(w);

  /* placed: feet 2 cm above the ground (spheres' bottoms 0.62 m below the base), turned 90 deg */
  lo.has_base_pose = 1;
  lo.base_pos[2] = 0.64;
  lo.base_quat[0] = cos(M_PI / 4);
  lo.base_quat[3] = sin(M_PI / 4);
  w = load_file_ok("quadruped_lg.urdf", &lo);
  phys_id base = phys_world_find_body(w, "base");
  phys_body_get_state(w, base, p, q, NULL, NULL);
  ASSERT_NEAR(p[2], 0.64, 1e-12);
  ASSERT_NEAR(q[0], cos(M_PI / 4), 1e-12);
  ASSERT_NEAR(q[3], sin(M_PI / 4), 1e-12);
  phys_body_get_state(w, phys_world_find_body(w, "FL_calf"), p, NULL, NULL, NULL);
  ASSERT_NEAR(p[0], -(0.1 + 0.08), 1e-12); /* the hip's y offset turned onto -x */
  ASSERT_NEAR(p[1], 0.2, 1e-12);
  CU_ASSERT_EQUAL(hold_joints(w, 100.0, 2.0), 13); /* 12 leg joints and the lidar */
  double zmin, zmax;
  step_track(w, base, 250, &zmin, &zmax); /* it drops 2 cm and lands */
  CU_ASSERT(zmin < 0.625);
  step_track(w, base, 1000, &zmin, &zmax); /* then stands for 2 s */
  phys_body_get_state(w, base, p, q, NULL, NULL);
  double yaw = 2 * atan2(q[3], q[0]);
  printf("  placed at z = 0.64, yaw 90 deg: after landing, base height in [%.5f, %.5f] for 2 s, "
         "at (%.4f, %.4f, %.4f), yaw %.4f rad, %d contacts\n", zmin, zmax, p[0], p[1], p[2], yaw,
         phys_world_contact_count(w));
  CU_ASSERT(zmin > 0.58 && zmax < 0.625);
  CU_ASSERT(fabs(p[0]) < 0.02 && fabs(p[1]) < 0.02);
  ASSERT_NEAR(yaw, M_PI / 2, 0.02);
  CU_ASSERT(phys_world_contact_count(w) >= 4); /* on its four feet */
  phys_world_destroy(w);
}

/* ---- the ANYmal-style quadruped ------------------------------------------------------------ */

/* welded links with unphysical inertias: refused naming the first one's <inertia> (file, line);
 * with repair_inertia each is repaired with a notice giving old and new moments and the change,
 * the merged bodies carry the summed masses, and the robot stands on the ground */
static void test_anymal_inertia_repair(void) {
  char path[512];
  data_path(path, sizeof path, "anymal_like.urdf");
  char *text = slurp(path);
  CU_ASSERT_PTR_NOT_NULL_FATAL(text);
  phys_load_options lo = phys_load_options_default();
  lo.floating_base = 1;
  phys_world *w = (phys_world *)&w;
  phys_error err;
  CU_ASSERT_EQUAL(phys_load_urdf(path, &lo, NULL, &w, &err), PHYS_E_INVALID);
  CU_ASSERT_PTR_NULL(w);
  char where[600];
  snprintf(where, sizeof where, "%s:%d: <inertia>: link 'imu_link' (welded to 'base' by fixed "
           "joint 'imu_joint')", path, line_of(text, "<link name=\"imu_link\">", "<inertia "));
  printf("\n  without repair_inertia: %s\n", err.message);
  if (!strstr(err.message, where)) printf("  expected: %s\n", where);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.message, where));
  CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "triangle inequality"));
  free(text);

  lo.repair_inertia = 1;
  lo.ground_plane = 1;
  lo.has_base_pose = 1;
  lo.base_pos[2] = 0.585; /* feet (r 0.031) 0.55 m below the base frame */
  w = load_file_ok("anymal_like.urdf", &lo);
  CU_ASSERT_EQUAL(notices_with(w, "repaired to"), 9); /* the IMU, 4 drives, 4 feet */
  CU_ASSERT_EQUAL(notices_with(w, "link 'imu_link' (welded to 'base' by fixed joint "
                                  "'imu_joint'): principal inertia (1e-05, 1e-05, 3e-05) violates "
                                  "the triangle inequality"), 1);
  CU_ASSERT_EQUAL(notices_with(w, "repaired to (2e-05, 1e-05, 3e-05), largest change 1e-05"), 1);
  CU_ASSERT_EQUAL(notices_with(w, "link 'LF_KFE_drive' (welded to 'LF_THIGH' by fixed joint "
                                  "'LF_THIGH_LF_KFE_drive'): principal inertia (-1.2e-09, 0.0004, "
                                  "0.0004) is not positive definite; repaired to (0, 0.0004, "
                                  "0.0004), largest change 1.2e-09"), 1);
  CU_ASSERT_EQUAL(notices_with(w, "link 'RH_FOOT' (welded to 'RH_SHANK'"), 1);
  /* merged masses: shank + foot, thigh + drive, base + base_inertia + IMU */
  double m, I[3];
  phys_body_get_mass(w, phys_world_find_body(w, "LF_SHANK"), &m, I);
  ASSERT_NEAR(m, 0.43, 1e-12);
  phys_body_get_mass(w, phys_world_find_body(w, "LF_THIGH"), &m, I);
  ASSERT_NEAR(m, 2.13, 1e-12);
  phys_body_get_mass(w, phys_world_find_body(w, "base"), &m, I);
  ASSERT_NEAR(m, 16.05, 1e-12);
  /* the shank's point-mass foot 0.17 m below its COM (0.33 kg at -0.13, 0.1 kg at -0.3):
   * I_xx = 0.0014 + 0.33 d1^2 + 0.1 d2^2 about the merged COM */
  double zc = (0.33 * -0.13 + 0.1 * -0.3) / 0.43, d1 = -0.13 - zc, d2 = -0.3 - zc;
  double ixx = 0.0014 + 0.33 * d1 * d1 + 0.1 * d2 * d2;
  phys_body_get_mass(w, phys_world_find_body(w, "LF_SHANK"), &m, I);
  ASSERT_NEAR(fmax(I[0], fmax(I[1], I[2])), ixx, 1e-12);
  /* it stands */
  phys_id base = phys_world_find_body(w, "base");
  CU_ASSERT_EQUAL(hold_joints(w, 200.0, 4.0), 12);
  double zmin, zmax, p[3];
  step_track(w, base, 1000, &zmin, &zmax);
  phys_body_get_state(w, base, p, NULL, NULL, NULL);
  printf("  repaired, placed at z = 0.585: base height in [%.4f, %.4f], at (%.4f, %.4f, %.4f)\n",
         zmin, zmax, p[0], p[1], p[2]);
  CU_ASSERT(zmin > 0.545 && zmax < 0.59);
  CU_ASSERT(fabs(p[0]) < 0.02 && fabs(p[1]) < 0.02);
  phys_world_destroy(w);
}

/* ---- suite --------------------------------------------------------------------------------- */

int register_tests(void) {
  CU_pSuite s = CU_add_suite("loader_urdf_robots", NULL, NULL);
  if (!s) return -1;
  if (!CU_add_test(s, "Drake-style arm: vendor notices once per kind", test_arm_vendor_notices) ||
      !CU_add_test(s, "Drake-style arm: collision filter groups", test_arm_filter_groups) ||
      !CU_add_test(s, "legged_gym-style quadruped: base pose, stands", test_quadruped_base_pose) ||
      !CU_add_test(s, "ANYmal-style quadruped: inertia repair", test_anymal_inertia_repair))
    return -1;
  return 0;
}
