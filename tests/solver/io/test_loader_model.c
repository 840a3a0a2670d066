/* test_loader_model.c - loading a robot laid out as MuJoCo Menagerie publishes them
 * (tests/data/menagerie_bot: scene.xml includes bot.xml, meshes under meshdir assets/, default
 * classes, position actuators, a keyframe) by path and from memory:
 *  - phys_load_model by path: the include, meshdir and the meshes resolve beside the file; joint
 *    names are the file's; the keyframe is there;
 *  - phys_load_model_string with a base directory loads the same model (same model hash); without
 *    one it is refused with a message that says what to do;
 *  - allowed roots: the model's directory lets it load; a root elsewhere refuses it naming the
 *    file; an include that climbs out of the root is refused;
 *  - the ground-plane option adds a plane to an MJCF model too. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cunit_main.h"
#include "phys/phys.h"

/* the data directory and the files in it (room for a file name after any directory) */
static char dir[PATH_MAX], scene[PATH_MAX + 64];

/* the data directory, or SKIP-worthy failure */
static int find_data(void) {
  const char *data = getenv("PHYS_TEST_DATA");
  if (!data) return -1;
  snprintf(dir, sizeof dir, "%s/menagerie_bot", data);
  snprintf(scene, sizeof scene, "%s/scene.xml", dir);
  return access(scene, R_OK);
}

/* the whole file (malloc'd) */
static char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = malloc((size_t)n + 1);
  *len = fread(buf, 1, (size_t)n, f);
  buf[*len] = 0;
  fclose(f);
  return buf;
}

static void test_by_path(void) {
  CU_ASSERT_EQUAL_FATAL(find_data(), 0);
  phys_world *w = NULL;
  phys_error err;
  phys_status st = phys_load_model(scene, NULL, NULL, &w, &err);
  if (st) printf("\n  %s", err.message);
  CU_ASSERT_EQUAL_FATAL(st, PHYS_OK);
  CU_ASSERT_EQUAL(phys_world_body_count(w), 5); /* trunk, 2 x (thigh, calf) */
  CU_ASSERT(phys_world_find_mesh(w, "trunk") >= 0);
  CU_ASSERT(phys_world_find_mesh(w, "shin_mesh") >= 0);
  CU_ASSERT_EQUAL(phys_world_find_joint(w, "FR_knee_joint"), phys_world_find_body(w, "FR_calf"));
  CU_ASSERT_EQUAL(phys_world_find_joint(w, "RR_hip_joint"), phys_world_find_body(w, "RR_thigh"));
  CU_ASSERT_EQUAL(phys_world_keyframe_count(w), 1);
  CU_ASSERT_EQUAL(phys_world_find_keyframe(w, "home"), 0);
  CU_ASSERT_EQUAL(phys_world_actuator_count(w), 4);
  for (int i = 0; i < phys_world_notice_count(w); i++) printf("\n  notice: %s", phys_world_notice(w, i));
  phys_world_destroy(w);
}

static void test_from_memory(void) {
  CU_ASSERT_EQUAL_FATAL(find_data(), 0);
  size_t len = 0;
  char *doc = slurp(scene, &len);
  CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
  phys_world *a = NULL, *b = NULL;
  phys_error err;
  CU_ASSERT_EQUAL_FATAL(phys_load_model(scene, NULL, NULL, &a, &err), PHYS_OK);
  phys_status st = phys_load_model_string(doc, len, "scene.xml", dir, NULL, NULL, &b, &err);
  if (st) printf("\n  %s", err.message);
  CU_ASSERT_EQUAL_FATAL(st, PHYS_OK);
  CU_ASSERT_EQUAL(phys_world_model_hash(a), phys_world_model_hash(b));
  phys_world_destroy(b);
  b = NULL;
  /* no base directory: the relative include is refused, saying what to do */
  st = phys_load_model_string(doc, len, "scene.xml", NULL, NULL, NULL, &b, &err);
  CU_ASSERT_EQUAL(st, PHYS_E_PARSE);
  CU_ASSERT_PTR_NULL(b);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "scene.xml:"));
  CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "without a base directory"));
  printf("\n  without a base directory: %s", err.message);
  phys_world_destroy(a);
  free(doc);
}

static void test_allowed_roots(void) {
  CU_ASSERT_EQUAL_FATAL(find_data(), 0);
  phys_world *w = NULL;
  phys_error err;
  phys_load_options lo = phys_load_options_default();
  const char *inside[1] = {dir}, *elsewhere[1] = {"/usr/share"};
  lo.allowed_roots = inside;
  lo.nallowed_roots = 1;
  CU_ASSERT_EQUAL(phys_load_model(scene, &lo, NULL, &w, &err), PHYS_OK);
  phys_world_destroy(w);
  w = NULL;
  /* every file beside the document must be inside: here the include is not */
  lo.allowed_roots = elsewhere;
  CU_ASSERT_EQUAL(phys_load_model(scene, &lo, NULL, &w, &err), PHYS_E_IO);
  CU_ASSERT_PTR_NULL(w);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "outside the allowed roots"));
  CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "bot.xml"));
  /* an include that climbs out of the allowed directory */
  char assets[PATH_MAX + 64];
  snprintf(assets, sizeof assets, "%s/assets", dir);
  const char *only_assets[1] = {assets};
  lo.allowed_roots = only_assets;
  static const char climb[] = "<mujoco><include file='../bot.xml'/></mujoco>";
  CU_ASSERT_EQUAL(phys_load_model_string(climb, sizeof climb - 1, "climb.xml", assets, &lo, NULL,
                                         &w, &err), PHYS_E_IO);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "outside the allowed roots"));
  printf("\n  %s", err.message);
}

static void test_ground_plane(void) {
  CU_ASSERT_EQUAL_FATAL(find_data(), 0);
  char bot[PATH_MAX + 64];
  snprintf(bot, sizeof bot, "%s/bot.xml", dir);
  phys_world *a = NULL, *b = NULL;
  phys_error err;
  phys_load_options lo = phys_load_options_default();
  CU_ASSERT_EQUAL_FATAL(phys_load_model(bot, &lo, NULL, &a, &err), PHYS_OK);
  lo.ground_plane = 1;
  CU_ASSERT_EQUAL_FATAL(phys_load_model(bot, &lo, NULL, &b, &err), PHYS_OK);
  CU_ASSERT_EQUAL(phys_world_geom_count(b), phys_world_geom_count(a) + 1);
  /* with the ground the robot's feet stop on it instead of falling for ever */
  for (int i = 0; i < 500; i++) CU_ASSERT_EQUAL_FATAL(phys_world_step(b), PHYS_OK);
  double x[3];
  phys_body_get_state(b, phys_world_find_body(b, "trunk"), x, NULL, NULL, NULL);
  printf("\n  trunk height after 1 s on the ground: %.3f m", x[2]);
  CU_ASSERT(x[2] > 0.05 && x[2] < 0.4);
  phys_world_destroy(a);
  phys_world_destroy(b);
}

int register_tests(void) {
  CU_pSuite s = CU_add_suite("loader_model", NULL, NULL);
  if (!s) return -1;
  if (!CU_add_test(s, "a menagerie-style scene by path", test_by_path) ||
      !CU_add_test(s, "the same from memory with a base directory", test_from_memory) ||
      !CU_add_test(s, "allowed roots bound includes and meshes", test_allowed_roots) ||
      !CU_add_test(s, "the ground plane option on an MJCF model", test_ground_plane))
    return -1;
  return 0;
}
