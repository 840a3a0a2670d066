/* test_load_urdf.c - LoadWorld with URDF (protocol 1.1 loader options):
 *  - by bytes (format sniffed from the <robot> root, or given) and by path (.urdf): the tree's
 *    joints in ModelInfo, the loader's notices on WorldLoaded (base mode, ignored extensions);
 *  - floating_base + ground_plane: the free root falls and comes to rest on the plane;
 *  - Reset parses the document again with the same options;
 *  - errors change nothing: a format that contradicts the document, a malformed robot, a
 *    package path or base_dir outside the allowed roots. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cunit_main.h"
#include "wire_client.h"

static wc_daemon D;
static wc_conn C;

/* a pendulum robot: a base with a hinged rod (root link first), a vendor extension */
static const char Robot[] =
    "<?xml version=\"1.0\"?>\n"
    "<robot name=\"pend\">\n"
    "  <link name=\"base\">\n"
    "    <inertial><mass value=\"2\"/><inertia ixx=\"0.02\" ixy=\"0\" ixz=\"0\" iyy=\"0.02\" "
    "iyz=\"0\" izz=\"0.02\"/></inertial>\n"
    "    <collision><geometry><box size=\"0.2 0.2 0.2\"/></geometry></collision>\n"
    "  </link>\n"
    "  <link name=\"rod\">\n"
    "    <inertial><origin xyz=\"0 0 -0.25\"/><mass value=\"1\"/><inertia ixx=\"0.021\" "
    "ixy=\"0\" ixz=\"0\" iyy=\"0.021\" iyz=\"0\" izz=\"0.0005\"/></inertial>\n"
    "  </link>\n"
    "  <joint name=\"hinge\" type=\"revolute\">\n"
    "    <parent link=\"base\"/><child link=\"rod\"/><origin xyz=\"0 0 -0.1\"/>"
    "<axis xyz=\"0 1 0\"/>\n"
    "    <limit lower=\"-1.5\" upper=\"1.5\" effort=\"10\" velocity=\"5\"/>\n"
    "  </joint>\n"
    "  <gazebo reference=\"rod\"><mu1>0.5</mu1></gazebo>\n"
    "</robot>\n";

static int setup(void) { return wc_suite_start(&D, &C, NULL, NULL); }

static int teardown(void) { return wc_suite_stop(&D, &C); }

static Physd__V1__Envelope *load(Physd__V1__LoadWorld *l) {
  Physd__V1__Envelope env;
  WC_ENV(env, LOAD_WORLD, load_world, l);
  return wc_call(&C, &env, 10000);
}

static int has_notice(const Physd__V1__WorldLoaded *wl, const char *needle) {
  for (size_t i = 0; i < wl->n_notices; i++)
    if (strstr(wl->notices[i], needle)) return 1;
  return 0;
}

static Physd__V1__Envelope *state(void) { return wc_req_state(&C); }

/* the lowest body's height after n steps */
static double min_z_after(uint32_t n) {
  if (!wc_take_ack(wc_req_step(&C, n))) return NAN;
  Physd__V1__Envelope *r = state();
  double z = INFINITY;
  if (r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_STATE)
    for (size_t i = 0; i < r->state->n_bodies; i++)
      if (r->state->bodies[i]->pos->z < z) z = r->state->bodies[i]->pos->z;
  wc_free(r);
  return z;
}

static void test_bytes(void) {
  Physd__V1__LoadWorld l = PHYSD__V1__LOAD_WORLD__INIT;
  l.source_case = PHYSD__V1__LOAD_WORLD__SOURCE_DATA;
  l.data.data = (uint8_t *)Robot;
  l.data.len = strlen(Robot);
  l.name = (char *)"pend.urdf";
  Physd__V1__Envelope *r = load(&l); /* FORMAT_AUTO: the <robot> root */
  CU_ASSERT_FATAL(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_WORLD_LOADED);
  CU_ASSERT_EQUAL(r->world_loaded->bodies, 2);
  printf("\n    %zu notices:", r->world_loaded->n_notices);
  for (size_t i = 0; i < r->world_loaded->n_notices; i++)
    printf("\n      %s", r->world_loaded->notices[i]);
  printf("\n");
  CU_ASSERT(r->world_loaded->n_notices >= 2);
  CU_ASSERT(has_notice(r->world_loaded, "gazebo"));
  wc_free(r);
  r = wc_req_empty(&C, PHYSD__V1__ENVELOPE__MSG_GET_MODEL_INFO);
  CU_ASSERT_FATAL(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_MODEL_INFO);
  CU_ASSERT_EQUAL_FATAL(r->model_info->n_joints, 1);
  CU_ASSERT_STRING_EQUAL(r->model_info->joints[0]->type, "hinge");
  CU_ASSERT_DOUBLE_EQUAL(r->model_info->joints[0]->range_hi, 1.5, 1e-12);
  CU_ASSERT(r->model_info->n_notices >= 2);
  wc_free(r);
  /* the fixed base stays where it is */
  double z = min_z_after(200); /* the rod's frame: at the hinge, 0.1 m below the base */
  CU_ASSERT_DOUBLE_EQUAL(z, -0.1, 1e-9);

  /* given explicitly it loads the same; MJCF on a robot is a parse error */
  l.format = PHYSD__V1__MODEL_FORMAT__FORMAT_URDF;
  r = load(&l);
  CU_ASSERT(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_WORLD_LOADED);
  wc_free(r);
  l.format = PHYSD__V1__MODEL_FORMAT__FORMAT_MJCF;
  CU_ASSERT_EQUAL(wc_take_error(load(&l)), PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT);
  /* a robot without a name: the loader's file:line: element: reason */
  static const char bad[] = "<robot><link name=\"a\"/></robot>";
  l.format = PHYSD__V1__MODEL_FORMAT__FORMAT_AUTO;
  l.data.data = (uint8_t *)bad;
  l.data.len = strlen(bad);
  r = load(&l);
  CU_ASSERT_EQUAL(wc_error_code(r), PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT);
  CU_ASSERT(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_ERROR &&
            strstr(r->error->message, "pend.urdf:1") != NULL);
  if (r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_ERROR) printf("    %s\n", r->error->message);
  wc_free(r);
  /* the world is still the robot */
  r = wc_req_empty(&C, PHYSD__V1__ENVELOPE__MSG_GET_MODEL_INFO);
  CU_ASSERT(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_MODEL_INFO && r->model_info->n_joints == 1);
  wc_free(r);
}

static void test_path_floating(void) {
  const char *path = wc_write_file(&D, "pend.urdf", Robot);
  char p[600];
  snprintf(p, sizeof p, "%s", path);
  Physd__V1__LoadWorld l = PHYSD__V1__LOAD_WORLD__INIT;
  l.source_case = PHYSD__V1__LOAD_WORLD__SOURCE_PATH;
  l.path = p;
  l.floating_base = 1;
  l.ground_plane = 1;
  Physd__V1__Envelope *r = load(&l);
  CU_ASSERT_FATAL(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_WORLD_LOADED);
  CU_ASSERT_EQUAL(r->world_loaded->bodies, 2);
  wc_free(r);
  r = wc_req_empty(&C, PHYSD__V1__ENVELOPE__MSG_GET_MODEL_INFO);
  CU_ASSERT_FATAL(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_MODEL_INFO);
  CU_ASSERT_EQUAL_FATAL(r->model_info->n_joints, 2); /* a free root and the hinge */
  CU_ASSERT_STRING_EQUAL(r->model_info->joints[0]->type, "free");
  wc_free(r);
  /* the robot starts at the origin, half in the ground: it is pushed out and rests on it */
  double z = min_z_after(1000); /* the lowest frame is the rod's, at the hinge */
  printf("\n    floating base on the ground plane: lowest body z %.4f m after 2 s\n", z);
  CU_ASSERT(fabs(z) < 0.01); /* the base box (half height 0.1) rests on z = 0: hinge at 0 */
  /* Reset parses it again the same way (floating, with the plane) */
  CU_ASSERT(wc_take_ack(wc_req_empty(&C, PHYSD__V1__ENVELOPE__MSG_RESET)));
  r = wc_req_empty(&C, PHYSD__V1__ENVELOPE__MSG_GET_MODEL_INFO);
  CU_ASSERT(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_MODEL_INFO &&
            r->model_info->n_joints == 2);
  wc_free(r);
  double z2 = min_z_after(1000);
  CU_ASSERT_DOUBLE_EQUAL(z2, z, 1e-9); /* deterministic */
}

static void test_bad_options(void) {
  Physd__V1__LoadWorld l = PHYSD__V1__LOAD_WORLD__INIT;
  l.source_case = PHYSD__V1__LOAD_WORLD__SOURCE_DATA;
  l.data.data = (uint8_t *)Robot;
  l.data.len = strlen(Robot);
  char *outside = (char *)"/etc";
  l.n_package_paths = 1;
  l.package_paths = &outside;
  Physd__V1__Envelope *r = load(&l);
  CU_ASSERT_EQUAL(wc_error_code(r), PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT);
  CU_ASSERT(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_ERROR &&
            strstr(r->error->message, "allowed roots") != NULL);
  wc_free(r);
  l.n_package_paths = 0;
  l.base_dir = (char *)"/nonexistent-dir-physd";
  CU_ASSERT_EQUAL(wc_take_error(load(&l)), PHYSD__V1__ERROR_CODE__NOT_FOUND);
  l.base_dir = (char *)"";
  l.format = (Physd__V1__ModelFormat)7;
  CU_ASSERT_EQUAL(wc_take_error(load(&l)), PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT);
  /* inside the root (the daemon's dir) they are accepted */
  l.format = PHYSD__V1__MODEL_FORMAT__FORMAT_AUTO;
  char *inside = D.dir;
  l.n_package_paths = 1;
  l.package_paths = &inside;
  l.base_dir = D.dir;
  r = load(&l);
  CU_ASSERT(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_WORLD_LOADED);
  wc_free(r);
}

int register_tests(void) {
  CU_pSuite s = CU_add_suite("server_urdf", setup, teardown);
  if (!s) return -1;
  if (!CU_add_test(s, "bytes", test_bytes) ||
      !CU_add_test(s, "path_floating", test_path_floating) ||
      !CU_add_test(s, "bad_options", test_bad_options))
    return -1;
  return 0;
}
