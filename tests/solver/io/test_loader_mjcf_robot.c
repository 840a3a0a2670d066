/* test_loader_mjcf_robot.c - the MJCF features real robot files use: <include>, childclass and
 * nested defaults, autolimits, <contact> exclude/pair, geom priority, <keyframe>, <weld>,
 * compiler inertia bounds, option mappings, vendor attributes, and the error path (file:line)
 * of each. MuJoCo's sample models are loaded when /usr/share/mujoco/model is present. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "cunit_main.h"
#include "loader_util.h"
#include "phys/phys.h"
#include "core/world_internal.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* ---- helpers ------------------------------------------------------------------------------- */

/* A fresh temporary directory (name in dir). */
static int temp_dir(char dir[64]) {
  strcpy(dir, "/tmp/physd_mjinc_XXXXXX");
  return mkdtemp(dir) ? 0 : -1;
}

/* Write `text` to dir/name. */
static void write_file(const char *dir, const char *name, const char *text) {
  char path[256];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "w");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  fputs(text, f);
  fclose(f);
}

/* Remove the files and (emptied, listed after their files) folders of a temporary directory,
 * then the directory (names given). */
static void remove_files(const char *dir, const char *const *names) {
  char path[256];
  for (int i = 0; names[i]; i++) {
    snprintf(path, sizeof path, "%s/%s", dir, names[i]);
    remove(path);
  }
  rmdir(dir);
}

/* Load dir/name from a file. */
static phys_status load_path(const char *dir, const char *name, phys_world **w, phys_error *err) {
  char path[256];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  return phys_load_mjcf(path, NULL, w, err);
}

/* 1 if some notice contains both words. */
static int has_notice(const phys_world *w, const char *a, const char *b) {
  for (int i = 0; i < phys_world_notice_count(w); i++) {
    const char *n = phys_world_notice(w, i);
    if (strstr(n, a) && (!b || strstr(n, b))) return 1;
  }
  return 0;
}

/* Contacts of the last step between the geoms g1 and g2 (any order). */
static int contacts_between(const phys_world *w, int g1, int g2, double *mu) {
  int n = 0;
  for (int i = 0; i < phys_world_contact_count(w); i++) {
    phys_contact_info ci;
    phys_world_get_contact(w, i, &ci);
    if ((ci.geom_a == g1 && ci.geom_b == g2) || (ci.geom_a == g2 && ci.geom_b == g1)) {
      if (mu) *mu = w->contacts[i].mu;
      n++;
    }
  }
  return n;
}

/* ---- include ------------------------------------------------------------------------------- */

/* A model split over nested includes (relative paths, include inside <worldbody>) hashes like
 * the same model written inline; the included default applies (box mass 500 * 0.048 = 24). */
static void test_include_same_hash(void) {
  char dir[64];
  CU_ASSERT_EQUAL_FATAL(temp_dir(dir), 0);
  char sub[128];
  snprintf(sub, sizeof sub, "%s/parts", dir);
  CU_ASSERT_EQUAL_FATAL(mkdir(sub, 0700), 0);
  write_file(dir, "parts/defaults.xml",
             "<mujoco model=\"d\">\n<default><geom density=\"500\"/></default>\n"
             "<include file=\"body.xml\"/>\n</mujoco>\n");
  write_file(dir, "parts/body.xml",
             "<mujoco>\n<worldbody>\n<body name=\"b\" pos=\"0 0 1\">\n<freejoint/>\n"
             "<geom type=\"box\" size=\".1 .2 .3\"/>\n</body>\n</worldbody>\n</mujoco>\n");
  write_file(dir, "parts/ball.xml",
             "<mujoco><body name=\"c\" pos=\"1 0 1\"><freejoint/><geom size=\".1\"/></body>"
             "</mujoco>\n");
  write_file(dir, "main.xml",
             "<mujoco>\n<include file=\"parts/defaults.xml\"/>\n<worldbody>\n"
             "<geom type=\"plane\" size=\"1 1 1\"/>\n<include file=\"parts/ball.xml\"/>\n"
             "</worldbody>\n</mujoco>\n");
  const char *inline_xml =
    "<mujoco><default><geom density=\"500\"/></default>"
    "<worldbody><body name=\"b\" pos=\"0 0 1\"><freejoint/><geom type=\"box\" size=\".1 .2 .3\"/>"
    "</body></worldbody><worldbody><geom type=\"plane\" size=\"1 1 1\"/>"
    "<body name=\"c\" pos=\"1 0 1\"><freejoint/><geom size=\".1\"/></body></worldbody></mujoco>";
  phys_world *wf = NULL, *wi = must_load(inline_xml);
  phys_error err;
  phys_status st = load_path(dir, "main.xml", &wf, &err);
  if (st) printf("\n  %s\n", err.message);
  CU_ASSERT_EQUAL_FATAL(st, PHYS_OK);
  CU_ASSERT_EQUAL(phys_world_model_hash(wf), phys_world_model_hash(wi));
  CU_ASSERT_EQUAL(phys_world_body_count(wf), 2);
  double m = 0.0;
  phys_body_get_mass(wf, phys_world_find_body(wf, "b"), &m, NULL);
  CU_ASSERT_DOUBLE_EQUAL(m, 24.0, 1e-9);
  phys_world_destroy(wf);
  phys_world_destroy(wi);
  static const char *const names[] = {"parts/defaults.xml", "parts/body.xml", "parts/ball.xml",
                                      "main.xml", "parts", NULL};
  remove_files(dir, names);
}

/* Missing file, cycle, an error inside an included file, malformed included XML, a relative
 * include from a string: each names the right file and line. */
static void test_include_errors(void) {
  char dir[64], where[256];
  CU_ASSERT_EQUAL_FATAL(temp_dir(dir), 0);
  write_file(dir, "missing.xml", "<mujoco>\n\n<include file=\"nope.xml\"/>\n</mujoco>\n");
  write_file(dir, "a.xml", "<mujoco>\n<include file=\"b.xml\"/>\n</mujoco>\n");
  write_file(dir, "b.xml", "<mujoco>\n<worldbody/>\n<include file=\"a.xml\"/>\n</mujoco>\n");
  write_file(dir, "outer.xml", "<mujoco>\n<include file=\"bad.xml\"/>\n</mujoco>\n");
  write_file(dir, "bad.xml",
             "<mujoco>\n<worldbody>\n<geom size=\"1\" bogus=\"2\"/>\n</worldbody>\n</mujoco>\n");
  write_file(dir, "outer2.xml", "<mujoco>\n<include file=\"broken.xml\"/>\n</mujoco>\n");
  write_file(dir, "broken.xml", "<mujoco>\n<worldbody>\n</mujoco>\n");
  write_file(dir, "self.xml", "<mujoco>\n<include file=\"self.xml\"/>\n</mujoco>\n");
  struct { const char *file; phys_status code; const char *at; int line; const char *elem;
           const char *word; } cases[] = {
    {"missing.xml", PHYS_E_IO, "missing.xml", 3, "include", "nope.xml"},
    {"a.xml", PHYS_E_PARSE, "b.xml", 3, "include", "cycle"},
    {"self.xml", PHYS_E_PARSE, "self.xml", 2, "include", "cycle"},
    {"outer.xml", PHYS_E_PARSE, "bad.xml", 3, "geom", "bogus"},
    {"outer2.xml", PHYS_E_PARSE, "broken.xml", 3, "xml", "malformed"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    phys_world *w = NULL;
    phys_error err;
    phys_status st = load_path(dir, cases[i].file, &w, &err);
    snprintf(where, sizeof where, "%s/%s:%d: <%s>: ", dir, cases[i].at, cases[i].line,
             cases[i].elem);
    expect_error_at(st, &err, w, cases[i].code, where, cases[i].word);
  }
  static const char *const names[] = {"missing.xml", "a.xml", "b.xml", "outer.xml", "bad.xml",
                                      "outer2.xml", "broken.xml", "self.xml", NULL};
  remove_files(dir, names);
  expect_error("<mujoco>\n<include file=\"x.xml\"/>\n</mujoco>", PHYS_E_PARSE, 2, "include",
               "relative include");
  expect_error("<mujoco>\n<include/>\n</mujoco>", PHYS_E_PARSE, 2, "include", "file");
}

/* ---- defaults ------------------------------------------------------------------------------ */

/* childclass reaches welded descendants' geoms; an explicit class wins; a nested class inherits
 * its parent's values (condim 1 from main). Masses: 2 * 0.008 * 100 + 0.008 * 1000 = 9.6. */
static void test_childclass(void) {
  phys_world *w = must_load(
    "<mujoco><default><geom condim=\"1\"/>"
    "<default class=\"light\"><geom density=\"100\" friction=\"0.25\"/></default></default>"
    "<worldbody><body name=\"a\" childclass=\"light\"><freejoint/>"
    "<geom type=\"box\" size=\".1 .1 .1\"/>"
    "<body pos=\"0 0 .3\"><geom type=\"box\" size=\".1 .1 .1\"/></body>"
    "<body pos=\"0 0 -.3\"><geom class=\"main\" type=\"box\" size=\".1 .1 .1\" "
    "friction=\"0.5\"/></body></body></worldbody></mujoco>");
  double m = 0.0;
  phys_body_get_mass(w, phys_world_find_body(w, "a"), &m, NULL);
  CU_ASSERT_DOUBLE_EQUAL(m, 9.6, 1e-9);
  CU_ASSERT_EQUAL(w->ngeoms, 3);
  CU_ASSERT_DOUBLE_EQUAL(w->geoms[0].friction, 0.25, 0.0);
  CU_ASSERT_DOUBLE_EQUAL(w->geoms[1].friction, 0.25, 0.0);
  CU_ASSERT_DOUBLE_EQUAL(w->geoms[2].friction, 0.5, 0.0);
  for (int g = 0; g < 3; g++) CU_ASSERT_EQUAL(w->geoms[g].condim, 1);
  phys_world_destroy(w);
  /* joints: the childclass of an ancestor reaches a jointed descendant (damping 3); its own
   * class wins (damping 7) */
  w = must_load(
    "<mujoco><default><default class=\"light\"><joint damping=\"3\"/></default>"
    "<default class=\"heavy\"><joint damping=\"7\"/></default></default>"
    "<worldbody><body childclass=\"light\"><body name=\"r\"><joint/><geom size=\".1\"/>"
    "<body name=\"s\" pos=\"0 0 .3\"><joint class=\"heavy\"/><geom size=\".1\"/></body>"
    "</body></body></worldbody></mujoco>");
  const phys_body *r = &w->bodies[phys_world_find_body(w, "r")];
  const phys_body *sb = &w->bodies[phys_world_find_body(w, "s")];
  const phys_artic *a = &w->artics[r->artic];
  CU_ASSERT_DOUBLE_EQUAL(a->damping[a->vadr[r->link]], 3.0, 0.0);
  CU_ASSERT_DOUBLE_EQUAL(a->damping[a->vadr[sb->link]], 7.0, 0.0);
  phys_world_destroy(w);
}

/* ---- autolimits ---------------------------------------------------------------------------- */

/* A range without `limited` limits the hinge: a motor pushing 5 N m for 2 s stops at 30 deg. */
static void test_autolimits(void) {
  phys_world *w = must_load(
    "<mujoco><option gravity=\"0 0 0\" timestep=\"0.002\"/><worldbody>"
    "<body name=\"arm\"><joint name=\"j\" axis=\"0 0 1\" range=\"-30 30\"/>"
    "<geom type=\"capsule\" fromto=\"0 0 0 .5 0 0\" size=\".05\"/></body></worldbody>"
    "<actuator><motor joint=\"j\"/></actuator></mujoco>");
  phys_id arm = phys_world_find_body(w, "arm");
  int limited = 0;
  double range[2] = {0, 0};
  CU_ASSERT_EQUAL(phys_link_get_joint_info(w, arm, NULL, &limited, range), PHYS_OK);
  CU_ASSERT_EQUAL(limited, 1);
  CU_ASSERT_DOUBLE_EQUAL(range[1], M_PI / 6.0, 1e-12);
  CU_ASSERT_EQUAL(phys_actuator_set_ctrl(w, 0, 5.0), PHYS_OK);
  double qmax = -1.0;
  for (int s = 0; s < 1000; s++) {
    CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
    double q[7];
    phys_link_get_joint(w, arm, q, NULL, NULL, NULL);
    if (q[0] > qmax) qmax = q[0];
  }
  CU_ASSERT(qmax > M_PI / 6.0 - 1e-2);          /* it reached the limit */
  CU_ASSERT(qmax - M_PI / 6.0 < 1e-3);          /* and stayed there */
  printf("\n  autolimits: max angle %.9f rad, %.2e rad over the limit ", qmax, qmax - M_PI / 6.0);
  phys_world_destroy(w);
  /* autolimits="false": a range needs limited */
  expect_error("<mujoco><compiler autolimits=\"false\"/><worldbody><body>\n"
               "<joint range=\"-30 30\"/><geom size=\".1\"/></body></worldbody></mujoco>",
               PHYS_E_PARSE, 2, "joint", "autolimits");
  phys_world *w2 = must_load(
    "<mujoco><compiler autolimits=\"false\"/><worldbody><body name=\"a\">"
    "<joint range=\"-30 30\" limited=\"false\"/><geom size=\".1\"/></body></worldbody></mujoco>");
  CU_ASSERT_EQUAL(phys_link_get_joint_info(w2, phys_world_find_body(w2, "a"), NULL, &limited,
                                           NULL), PHYS_OK);
  CU_ASSERT_EQUAL(limited, 0);
  phys_world_destroy(w2);
}

/* ---- contact exclude and pair -------------------------------------------------------------- */

static const char *const pair_scene =
  "<mujoco><option gravity=\"0 0 0\"/><worldbody>"
  "<body name=\"a\"><freejoint/><geom name=\"ga\" size=\"0.1\"/></body>"
  "<body name=\"b\" pos=\"0.15 0 0\"><freejoint/><geom name=\"gb\" size=\"0.1\"/></body>"
  "<body name=\"c\" pos=\"1 0 0\"><freejoint/>"
  "<geom name=\"gc\" size=\"0.1\" contype=\"0\" conaffinity=\"0\"/></body>"
  "<body name=\"d\" pos=\"1.15 0 0\"><freejoint/>"
  "<geom name=\"gd\" size=\"0.1\" contype=\"0\" conaffinity=\"0\"/></body>"
  "</worldbody>%s</mujoco>";

/* Without filters: a-b touch, c-d (contype 0) do not. With <exclude a b> and <pair gc gd>: the
 * reverse, and the pair's friction (0.3) is the contact's. Both are in the model hash. */
static void test_exclude_and_pair(void) {
  char xml[2048];
  snprintf(xml, sizeof xml, pair_scene, "");
  phys_world *w0 = must_load(xml);
  CU_ASSERT_EQUAL_FATAL(phys_world_step(w0), PHYS_OK);
  CU_ASSERT(contacts_between(w0, 0, 1, NULL) > 0);
  CU_ASSERT_EQUAL(contacts_between(w0, 2, 3, NULL), 0);
  snprintf(xml, sizeof xml, pair_scene,
           "<contact><exclude body1=\"a\" body2=\"b\"/>"
           "<pair geom1=\"gc\" geom2=\"gd\" friction=\"0.3 0.005 0.0001\" condim=\"3\"/>"
           "</contact>");
  phys_world *w = must_load(xml);
  CU_ASSERT_NOT_EQUAL(phys_world_model_hash(w), phys_world_model_hash(w0));
  CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
  double mu = -1.0;
  CU_ASSERT_EQUAL(contacts_between(w, 0, 1, NULL), 0);
  CU_ASSERT(contacts_between(w, 2, 3, &mu) > 0);
  CU_ASSERT_DOUBLE_EQUAL(mu, 0.3, 0.0);
  /* the pair pushes c and d apart like any contact */
  for (int s = 0; s < 50; s++) CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
  double pc[3], pd[3];
  phys_body_get_state(w, phys_world_find_body(w, "c"), pc, NULL, NULL, NULL);
  phys_body_get_state(w, phys_world_find_body(w, "d"), pd, NULL, NULL, NULL);
  CU_ASSERT(pd[0] - pc[0] > 0.2 - 1e-3);
  phys_world_destroy(w);
  phys_world_destroy(w0);
  /* the API's rejections */
  w = must_load("<mujoco><worldbody><body name=\"a\"><freejoint/><geom size=\".1\"/></body>"
                "</worldbody></mujoco>");
  CU_ASSERT_EQUAL(phys_world_exclude_contact(w, 0, 0), PHYS_E_INVALID);
  CU_ASSERT_EQUAL(phys_world_exclude_contact(w, 0, 7), PHYS_E_NOT_FOUND);
  CU_ASSERT_EQUAL(phys_world_add_contact_pair(w, 0, 5, -1.0, 0), PHYS_E_NOT_FOUND);
  CU_ASSERT_EQUAL(phys_world_add_contact_pair(w, 0, 0, -1.0, 0), PHYS_E_INVALID);
  phys_world_destroy(w);
}

/* Geom priority: the higher-priority geom's friction wins (0.2 against 0.9). */
static void test_priority(void) {
  phys_world *w = must_load(
    "<mujoco><option gravity=\"0 0 0\"/><worldbody>"
    "<body><freejoint/><geom size=\"0.1\" friction=\"0.2\" priority=\"1\"/></body>"
    "<body pos=\"0.15 0 0\"><freejoint/><geom size=\"0.1\" friction=\"0.9\"/></body>"
    "</worldbody></mujoco>");
  CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
  double mu = -1.0;
  CU_ASSERT(contacts_between(w, 0, 1, &mu) > 0);
  CU_ASSERT_DOUBLE_EQUAL(mu, 0.2, 0.0);
  phys_world_destroy(w);
}

/* ---- keyframes ----------------------------------------------------------------------------- */

/* MuJoCo's qpos order (free 7, hinge 1, slide 1, ball 4): applying the key puts every joint where
 * it says (1e-12), converts the free joint's velocity (world linear, local angular), restores
 * the controls; the world starts at qpos0. */
static void test_keyframe(void) {
  double c3 = cos(0.3), s3 = sin(0.3), h = sqrt(0.5);
  char xml[4096];
  snprintf(xml, sizeof xml,
    "<mujoco><option gravity=\"0 0 0\"/><worldbody>"
    "<body name=\"free\" pos=\"0 0 1\"><freejoint/><geom size=\"0.1\"/></body>"
    "<body name=\"l1\" pos=\"0 3 0\"><joint name=\"h\" axis=\"0 0 1\"/>"
    "<geom type=\"capsule\" fromto=\"0 0 0 .3 0 0\" size=\".05\"/>"
    "<body name=\"l2\" pos=\".3 0 0\"><joint name=\"s\" type=\"slide\" axis=\"1 0 0\"/>"
    "<geom size=\".05\"/>"
    "<body name=\"l3\" pos=\".1 0 0\"><joint name=\"b\" type=\"ball\"/>"
    "<geom type=\"box\" size=\".05 .05 .05\"/></body></body></body></worldbody>"
    "<actuator><motor name=\"m\" joint=\"h\"/></actuator>\n"
    "<keyframe>\n<key name=\"pose\" qpos=\"1 2 3 %.17g 0 %.17g 0 0.5 0.25 %.17g %.17g 0 0\" "
    "qvel=\"1 0 0 0 0 2 0.4 0 0 0 0\" ctrl=\"0.75\"/>\n"
    "<key qpos=\"0 0 1 1 0 0 0 0 0 1 0 0 0\"/>\n</keyframe></mujoco>", h, h, c3, s3);
  phys_world *w = must_load(xml);
  phys_id fb = phys_world_find_body(w, "free"), l1 = phys_world_find_body(w, "l1"),
          l2 = phys_world_find_body(w, "l2"), l3 = phys_world_find_body(w, "l3");
  CU_ASSERT_EQUAL(phys_world_keyframe_count(w), 2);
  CU_ASSERT_EQUAL(phys_world_find_keyframe(w, "pose"), 0);
  CU_ASSERT_STRING_EQUAL(phys_world_keyframe_name(w, 1), "");
  /* qpos0 at load */
  double pos[3], quat[4], lin[3], ang[3], q[7], v[6];
  phys_body_get_state(w, fb, pos, NULL, NULL, NULL);
  CU_ASSERT_DOUBLE_EQUAL(pos[2], 1.0, 1e-15);
  phys_link_get_joint(w, l1, q, NULL, NULL, NULL);
  CU_ASSERT_DOUBLE_EQUAL(q[0], 0.0, 0.0);
  CU_ASSERT_DOUBLE_EQUAL(w->actuators[0].ctrl, 0.0, 0.0);
  /* apply the key */
  CU_ASSERT_EQUAL_FATAL(phys_world_apply_keyframe(w, 0), PHYS_OK);
  phys_body_get_state(w, fb, pos, quat, lin, ang);
  CU_ASSERT_DOUBLE_EQUAL(pos[0], 1.0, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(pos[1], 2.0, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(pos[2], 3.0, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(quat[0], h, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(quat[2], h, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(lin[0], 1.0, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(ang[0], 2.0, 1e-12); /* local z turned 90 deg about y is world x */
  CU_ASSERT_DOUBLE_EQUAL(ang[2], 0.0, 1e-12);
  phys_link_get_joint(w, l1, q, v, NULL, NULL);
  CU_ASSERT_DOUBLE_EQUAL(q[0], 0.5, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(v[0], 0.4, 1e-12);
  phys_link_get_joint(w, l2, q, NULL, NULL, NULL);
  CU_ASSERT_DOUBLE_EQUAL(q[0], 0.25, 1e-12);
  int nq = 0;
  phys_link_get_joint(w, l3, q, NULL, &nq, NULL);
  CU_ASSERT_EQUAL(nq, 4);
  CU_ASSERT_DOUBLE_EQUAL(q[0], c3, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(q[1], s3, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(w->actuators[0].ctrl, 0.75, 0.0);
  /* the link poses follow: l2's frame is 0.3 m from l1's along the turned x axis, + 0.25 */
  phys_body_get_state(w, l2, pos, NULL, NULL, NULL);
  CU_ASSERT_DOUBLE_EQUAL(pos[0], 0.55 * cos(0.5), 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(pos[1], 3.0 + 0.55 * sin(0.5), 1e-12);
  /* step, then the second key: back to zero, controls 0 */
  for (int s = 0; s < 10; s++) CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
  CU_ASSERT_EQUAL(phys_world_apply_keyframe(w, 1), PHYS_OK);
  phys_link_get_joint(w, l1, q, v, NULL, NULL);
  CU_ASSERT_DOUBLE_EQUAL(q[0], 0.0, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(v[0], 0.0, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(w->actuators[0].ctrl, 0.0, 0.0);
  CU_ASSERT_DOUBLE_EQUAL(phys_world_time(w), 0.0, 0.0);
  CU_ASSERT_EQUAL(phys_world_apply_keyframe(w, 2), PHYS_E_NOT_FOUND);
  /* keyframes through the API */
  int k = -1;
  CU_ASSERT_EQUAL(phys_world_add_keyframe(w, "later", &k), PHYS_OK);
  CU_ASSERT_EQUAL(k, 2);
  CU_ASSERT_EQUAL(phys_world_add_keyframe(w, "later", NULL), PHYS_E_INVALID);
  phys_world_destroy(w);
  /* wrong lengths name the key's line */
  expect_error("<mujoco><worldbody><body><joint/><geom size=\".1\"/></body></worldbody>"
               "<keyframe>\n\n<key qpos=\"1 2\"/></keyframe></mujoco>",
               PHYS_E_PARSE, 3, "key", "qpos");
  expect_error("<mujoco><worldbody><body><joint/><geom size=\".1\"/></body></worldbody>"
               "<keyframe>\n<key ctrl=\"1\"/></keyframe></mujoco>",
               PHYS_E_PARSE, 2, "key", "ctrl");
  expect_error("<mujoco><worldbody><body><joint/><geom size=\".1\"/></body></worldbody>"
               "<keyframe>\n<key act=\"1\"/></keyframe></mujoco>",
               PHYS_E_PARSE, 2, "key", "act");
  expect_error("<mujoco><worldbody><body><freejoint/><geom size=\".1\"/></body></worldbody>"
               "<keyframe>\n<key qpos=\"0 0 0 0 0 0 0\"/></keyframe></mujoco>",
               PHYS_E_PARSE, 2, "key", "quaternion");
  expect_error("<mujoco><worldbody/><keyframe>\n<bad/></keyframe></mujoco>",
               PHYS_E_PARSE, 2, "bad", "unknown element");
}

/* ---- weld ---------------------------------------------------------------------------------- */

/* A box welded to the world stays put under gravity (hard weld); with a solref it loads soft.
 * Needs the lead's phys_world_add_weld / phys_equality_set_soft (stubs returned
 * PHYS_E_UNSUPPORTED before they landed). */
static void test_weld(void) {
  phys_world *w = must_load(
    "<mujoco><worldbody><body name=\"a\" pos=\"0 0 1\"><freejoint/>"
    "<geom type=\"box\" size=\".1 .1 .1\"/></body></worldbody>"
    "<equality><weld body1=\"a\"/></equality></mujoco>");
  for (int s = 0; s < 200; s++) CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
  double pos[3];
  phys_body_get_state(w, phys_world_find_body(w, "a"), pos, NULL, NULL, NULL);
  CU_ASSERT(fabs(pos[2] - 1.0) < 1e-3);
  printf("\n  weld: drift after 200 steps %.3g m ", fabs(pos[2] - 1.0));
  phys_world_destroy(w);
  w = must_load(
    "<mujoco><default><equality solref=\"0.05 1\"/></default><worldbody>"
    "<body name=\"a\" pos=\"0 0 1\"><freejoint/><geom type=\"box\" size=\".1 .1 .1\"/></body>"
    "<body name=\"b\" pos=\"0.5 0 1\"><freejoint/><geom type=\"box\" size=\".1 .1 .1\"/></body>"
    "</worldbody><equality><weld body1=\"a\" body2=\"b\" relpose=\"0.5 0 0 1 0 0 0\"/>"
    "<weld body1=\"a\" solref=\"0.02 1\" torquescale=\"2\"/></equality></mujoco>");
  CU_ASSERT(has_notice(w, "torquescale", NULL));
  for (int s = 0; s < 100; s++) CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
  phys_world_destroy(w);
  expect_error("<mujoco><worldbody><body name=\"a\"><freejoint/><geom size=\".1\"/></body>"
               "</worldbody><equality>\n<weld body1=\"a\" body2=\"zz\"/></equality></mujoco>",
               PHYS_E_PARSE, 2, "weld", "zz");
  expect_error("<mujoco><worldbody><body name=\"a\"><freejoint/><geom size=\".1\"/></body>"
               "</worldbody><equality>\n<weld body1=\"a\" solref=\"-100 -10\"/></equality>"
               "</mujoco>", PHYS_E_UNSUPPORTED, 2, "weld", "solref");
}

/* ---- compiler, option, vendor attributes ----------------------------------------------------- */

/* boundmass/boundinertia raise a tiny body; balanceinertia fixes (1, 1, 3) into (1, 1, 2); without
 * it the triangle inequality is an error naming the body; settotalmass is unsupported. */
static void test_compiler_inertia(void) {
  phys_world *w = must_load(
    "<mujoco><compiler boundmass=\"0.5\" boundinertia=\"0.01\" balanceinertia=\"true\"/>"
    "<worldbody><body name=\"tiny\"><freejoint/><geom size=\".01\"/></body>"
    "<body name=\"bad\" pos=\"1 0 0\"><freejoint/><geom size=\".1\"/>"
    "<inertial pos=\"0 0 0\" mass=\"1\" diaginertia=\"1 1 3\"/></body></worldbody></mujoco>");
  double m, I[3];
  phys_body_get_mass(w, phys_world_find_body(w, "tiny"), &m, I);
  CU_ASSERT_DOUBLE_EQUAL(m, 0.5, 0.0);
  for (int i = 0; i < 3; i++) CU_ASSERT_DOUBLE_EQUAL(I[i], 0.01, 0.0);
  phys_body_get_mass(w, phys_world_find_body(w, "bad"), &m, I);
  double sum = I[0] + I[1] + I[2];
  CU_ASSERT_DOUBLE_EQUAL(sum, 4.0, 1e-12);
  phys_world_destroy(w);
  expect_error("<mujoco><worldbody><body name=\"bad\"><freejoint/><geom size=\".1\"/>\n"
               "<inertial pos=\"0 0 0\" mass=\"1\" diaginertia=\"1 1 3\"/></body></worldbody>"
               "</mujoco>", PHYS_E_PARSE, 2, "inertial", "'bad'");
  expect_error("<mujoco>\n<compiler settotalmass=\"10\"/></mujoco>", PHYS_E_UNSUPPORTED, 2,
               "compiler", "settotalmass");
}

/* Integrator and cone mappings, condim 4, vendor attributes and elements: loaded with one
 * notice each. */
static void test_notices(void) {
  phys_world *w = must_load(
    "<mujoco xmlns:foo=\"http://example.com/foo\">\n"
    "<compiler angle=\"radian\" meshdir=\"meshes\" inertiagrouprange=\"0 3\" fusestatic=\"true\"/>"
    "<option integrator=\"RK4\" cone=\"pyramidal\" noslip_iterations=\"3\" "
    "jacobian=\"sparse\" solver=\"Newton\"/>\n"
    "<size njmax=\"100\"/><visual/><statistic extent=\"2\"/>\n"
    "<worldbody>\n<geom size=\"1\" condim=\"6\" friction=\"0.7 0.02 0.003\" foo:color=\"red\"/>\n"
    "<foo:marker size=\"3\"/></worldbody></mujoco>");
  CU_ASSERT(has_notice(w, "integrator", "RK4"));
  CU_ASSERT(has_notice(w, "cone", "pyramidal"));
  CU_ASSERT(has_notice(w, "noslip_iterations", NULL));
  CU_ASSERT(has_notice(w, "fusestatic", NULL));
  CU_ASSERT(!has_notice(w, "condim", NULL)); /* condim 6 is simulated, nothing to say */
  CU_ASSERT(has_notice(w, "foo:color", NULL));
  CU_ASSERT(has_notice(w, "test.xml:6: <marker>", "foo:marker"));
  CU_ASSERT_EQUAL(w->geoms[0].condim, 6);
  CU_ASSERT_EQUAL(w->geoms[0].friction, 0.7);
  CU_ASSERT_EQUAL(w->geoms[0].friction_torsion, 0.02);
  CU_ASSERT_EQUAL(w->geoms[0].friction_rolling, 0.003);
  phys_world_destroy(w);
  expect_error("<mujoco>\n<option integrator=\"leapfrog\"/></mujoco>", PHYS_E_PARSE, 2, "option",
               "leapfrog");
  expect_error("<mujoco><worldbody><body name=\"a\"><freejoint/><geom size=\".1\"/></body>"
               "</worldbody><contact>\n<exclude body1=\"a\" body2=\"nope\"/></contact></mujoco>",
               PHYS_E_PARSE, 2, "exclude", "nope");
  expect_error("<mujoco><worldbody><geom name=\"g\" size=\".1\"/></worldbody><contact>\n"
               "<pair geom1=\"g\" geom2=\"h\"/></contact></mujoco>", PHYS_E_PARSE, 2, "pair",
               "'h'");
  expect_error("<mujoco><worldbody/><contact>\n<thing/></contact></mujoco>", PHYS_E_PARSE, 2,
               "thing", "unknown element");
  expect_error("<mujoco><worldbody><geom name=\"g\" size=\".1\"/><body><freejoint/>"
               "<geom name=\"g\" size=\".1\"/></body></worldbody><contact>\n"
               "<pair geom1=\"g\" geom2=\"g\"/></contact></mujoco>", PHYS_E_PARSE, 2, "pair",
               "not unique");
  expect_error("<mujoco><worldbody><geom name=\"g\" size=\".1\"/><body><freejoint/>"
               "<geom name=\"h\" size=\".1\"/></body></worldbody><contact>\n"
               "<pair geom1=\"g\" geom2=\"h\" condim=\"2\"/></contact></mujoco>",
               PHYS_E_PARSE, 2, "pair", "condim");
}

/* ---- MuJoCo's sample models ---------------------------------------------------------------- */

/* humanoid100 (include, ellipsoids, condim 4) simulates 500 steps with finite state; humanoid
 * and 22_humanoids load. Skipped without /usr/share/mujoco/model. */
static void test_mujoco_models(void) {
  const char *dir = "/usr/share/mujoco/model";
  if (access(dir, R_OK) != 0) {
    test_skip("%s absent", dir);
    return;
  }
  static const char *const files[] = {"humanoid100/humanoid100.xml", "humanoid/humanoid.xml",
                                      "humanoid/22_humanoids.xml", NULL};
  for (int i = 0; files[i]; i++) {
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, files[i]);
    if (access(path, R_OK) != 0) continue;
    phys_world *w = NULL;
    phys_error err;
    phys_status st = phys_load_mjcf(path, NULL, &w, &err);
    if (st) printf("\n  %s\n", err.message);
    CU_ASSERT_EQUAL_FATAL(st, PHYS_OK);
    if (i == 0) {
      CU_ASSERT(!has_notice(w, "condim", NULL)); /* its condim 4 cylinders are simulated */
      /* the steps run in a child process with an alarm, so that a hang in a stage fails this
       * test instead of stalling the suite */
      fflush(stdout);
      pid_t pid = fork();
      CU_ASSERT_FATAL(pid >= 0);
      if (pid == 0) {
        alarm(60);
        for (int s = 0; s < 500; s++)
          if (phys_world_step(w)) _exit(2);
        int bad = 0;
        for (int b = 0; b < phys_world_body_id_bound(w); b++) {
          double p[3], l[3];
          if (phys_body_get_state(w, b, p, NULL, l, NULL)) continue;
          for (int k = 0; k < 3; k++) bad += !isfinite(p[k]) || !isfinite(l[k]);
        }
        printf("\n  humanoid100: %d bodies, 500 steps, %d contacts at the end, %d non-finite ",
               phys_world_body_count(w), phys_world_contact_count(w), bad);
        fflush(stdout);
        _exit(bad ? 3 : 0);
      }
      int status = 0;
      waitpid(pid, &status, 0);
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        printf("\n  humanoid100 steps failed: %s %d ", WIFEXITED(status) ? "exit" : "signal",
               WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
      CU_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    phys_world_destroy(w);
  }
}

/* <general> actuators map onto motor, position and velocity: the physd description read back,
 * a general "position servo" settles on its target like <position>; other gain/bias forms and
 * activation dynamics are refused with their line */
static void test_general_actuators(void) {
  static const char head[] =
      "<mujoco><option gravity='0 0 0' timestep='0.002'/><worldbody><body name='b'>"
      "<joint name='j' axis='0 0 1' armature='0.1'/><geom size='0.1' mass='1'/></body>"
      "</worldbody><actuator>";
  char xml[1024];
  snprintf(xml, sizeof xml, "%s%s</actuator></mujoco>", head,
           "<general name='m' joint='j' gainprm='2.5' gear='2' forcerange='-5 5'/>"
           "<general name='p' joint='j' gainprm='40' biastype='affine' biasprm='0 -40 -3'/>"
           "<general name='v' joint='j' gainprm='7' biastype='affine' biasprm='0 0 -7'/>");
  phys_world *w = must_load(xml);
  if (!w) return;
  phys_actuator_desc d;
  CU_ASSERT_EQUAL(phys_actuator_get_desc(w, phys_world_find_actuator(w, "m"), &d), PHYS_OK);
  CU_ASSERT_EQUAL(d.type, PHYS_ACT_MOTOR);
  CU_ASSERT_DOUBLE_EQUAL(d.gear, 5.0, 1e-12);          /* gain folded into the gear */
  CU_ASSERT_DOUBLE_EQUAL(d.forcerange[1], 2.0, 1e-12); /* 5 / 2.5 */
  CU_ASSERT_EQUAL(phys_actuator_get_desc(w, phys_world_find_actuator(w, "p"), &d), PHYS_OK);
  CU_ASSERT_EQUAL(d.type, PHYS_ACT_POSITION);
  CU_ASSERT_DOUBLE_EQUAL(d.kp, 40.0, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(d.kv, 3.0, 1e-12);
  CU_ASSERT_EQUAL(phys_actuator_get_desc(w, phys_world_find_actuator(w, "v"), &d), PHYS_OK);
  CU_ASSERT_EQUAL(d.type, PHYS_ACT_VELOCITY);
  CU_ASSERT_DOUBLE_EQUAL(d.kv, 7.0, 1e-12);
  phys_world_destroy(w);

  /* the general position servo alone settles on its target */
  snprintf(xml, sizeof xml, "%s%s</actuator></mujoco>", head,
           "<general name='p' joint='j' gainprm='40' biastype='affine' biasprm='0 -40 -3'/>");
  w = must_load(xml);
  if (!w) return;
  CU_ASSERT_EQUAL(phys_actuator_set_ctrl(w, 0, 0.7), PHYS_OK);
  for (int i = 0; i < 3000; i++) CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
  double q[7];
  phys_link_get_joint(w, phys_world_find_body(w, "b"), q, NULL, NULL, NULL);
  printf("\n  general position servo: q %.6f (target 0.7)\n", q[0]);
  CU_ASSERT_DOUBLE_EQUAL(q[0], 0.7, 1e-4);
  phys_world_destroy(w);

  /* a <general> default class, the element overriding its gain */
  w = must_load("<mujoco><default><default class='servo'><general gainprm='40' "
                "biastype='affine' biasprm='0 -40 -3'/></default></default><worldbody>"
                "<body name='b'><joint name='j' axis='0 0 1'/><geom size='0.1' mass='1'/></body>"
                "</worldbody><actuator><general name='a' class='servo' joint='j'/>"
                "<general name='m' class='servo' joint='j' biastype='none' gainprm='3'/>"
                "</actuator></mujoco>");
  if (!w) return;
  CU_ASSERT_EQUAL(phys_actuator_get_desc(w, 0, &d), PHYS_OK);
  CU_ASSERT_EQUAL(d.type, PHYS_ACT_POSITION);
  CU_ASSERT_DOUBLE_EQUAL(d.kp, 40.0, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(d.kv, 3.0, 1e-12);
  CU_ASSERT_EQUAL(phys_actuator_get_desc(w, 1, &d), PHYS_OK);
  CU_ASSERT_EQUAL(d.type, PHYS_ACT_MOTOR);
  CU_ASSERT_DOUBLE_EQUAL(d.gear, 3.0, 1e-12);
  phys_world_destroy(w);

  /* what does not map */
  const char *bad[3] = {"<general joint='j' gainprm='5' biastype='affine' biasprm='1 -5 0'/>",
                        "<general joint='j' dyntype='filter'/>",
                        "<general joint='j' gaintype='user'/>"};
  const char *word[3] = {"bias", "dyntype", "gaintype"};
  for (int i = 0; i < 3; i++) {
    snprintf(xml, sizeof xml, "%s\n%s</actuator></mujoco>", head, bad[i]);
    expect_error(xml, PHYS_E_UNSUPPORTED, 2, "general", word[i]);
  }
}

int register_tests(void) {
  CU_pSuite s = CU_add_suite("loader_mjcf_robot", NULL, NULL);
  if (!s) return -1;
  struct { const char *name; void (*fn)(void); } tests[] = {
    {"include: same hash as inline", test_include_same_hash},
    {"include: errors name file and line", test_include_errors},
    {"childclass and nested defaults", test_childclass},
    {"autolimits: range limits a motor-driven hinge", test_autolimits},
    {"contact exclude and pair", test_exclude_and_pair},
    {"geom priority", test_priority},
    {"keyframes", test_keyframe},
    {"weld equality", test_weld},
    {"compiler inertia bounds and balance", test_compiler_inertia},
    {"notices: option mappings, condim 6 friction, vendor names", test_notices},
    {"MuJoCo sample models", test_mujoco_models},
    {"general actuators that map", test_general_actuators},
  };
  for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++)
    if (!CU_add_test(s, tests[i].name, tests[i].fn)) return -1;
  return 0;
}
