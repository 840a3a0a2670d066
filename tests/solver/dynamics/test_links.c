/* test_links.c - articulated links in the engine: pendulums (period, energy), an implicit spring
 * and damper, a hinged box landing on the ground, a chain in contact with a pile (determinism
 * across threads), and the add_link error paths. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cunit_main.h"
#include "scene_util.h"
#include "core/math3.h"

/* a link hanging from `parent` at its body origin, with a sphere of radius r and mass m at
 * `offset` (body frame) */
static phys_id add_bob(phys_world *w, phys_id parent, const double pos[3], phys_joint_type type,
                       const double axis[3], const double offset[3], double r, double m,
                       double qpos0) {
  phys_body_desc b = phys_body_desc_default();
  memcpy(b.pos, pos, sizeof b.pos);
  phys_geom_desc g = phys_geom_desc_default();
  g.size[0] = r;
  g.mass = m;
  g.contype = g.conaffinity = 0;
  memcpy(g.pos, offset, sizeof g.pos);
  phys_joint_desc j = phys_joint_desc_default();
  j.type = type;
  if (axis) memcpy(j.axis, axis, sizeof j.axis);
  j.qpos0 = qpos0;
  phys_id id = PHYS_ID_NONE;
  CU_ASSERT_EQUAL(phys_world_add_link(w, parent, &b, &j, &g, 1, &id), PHYS_OK);
  return id;
}

/* kinetic plus potential energy of bobs whose COM is at `offset` in their body frames */
static double bob_energy(const phys_world *w, const phys_id *ids, int n, const double off[3]) {
  double e = 0.0;
  for (int i = 0; i < n; i++) {
    double p[3], q[4], v[3], om[3], m, I[3], R[9], c[3];
    phys_body_get_state(w, ids[i], p, q, v, om);
    phys_body_get_mass(w, ids[i], &m, I);
    q_to_m3(R, q);
    m3_mulv(c, R, off);
    e += 0.5 * m * v3_dot(v, v) + 0.5 * I[0] * v3_dot(om, om) + m * 9.81 * (p[2] + c[2]);
  }
  return e;
}

/* small-angle hinge pendulum, l = 1 m, point-like bob: period within 0.5 % */
static void test_hinge_pendulum(void) {
  phys_world_options o = phys_world_options_default();
  o.timestep = 0.001;
  phys_world *w = make_world(&o);
  double pivot[3] = {0, 0, 2}, axis[3] = {0, 1, 0}, off[3] = {0, 0, -1};
  phys_id bob = add_bob(w, PHYS_ID_NONE, pivot, PHYS_JOINT_TYPE_HINGE, axis, off, 0.01, 1.0, 0.05);
  double period = link_joint_period(w, bob, 10000);
  double expected = 2 * M_PI * sqrt((1.0 + 0.4 * 1e-4) / 9.81);
  printf("\n  hinge pendulum: period %.5f s (expected %.5f)\n", period, expected);
  CU_ASSERT_DOUBLE_EQUAL(period, expected, 0.005 * expected);
  /* the bob stays on its circle: the joint holds exactly */
  double p[3];
  body_pos(w, bob, p);
  CU_ASSERT_DOUBLE_EQUAL(p[0], 0.0, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(p[2], 2.0, 1e-12);
  phys_world_destroy(w);
}

/* a slide joint with an implicit spring: period 2 pi sqrt(m / k) within 1 %; with a stiff
 * damper it settles without oscillating */
static void test_slide_spring(void) {
  phys_world_options o = phys_world_options_default();
  o.timestep = 0.001;
  memset(o.gravity, 0, sizeof o.gravity);
  phys_world *w = make_world(&o);
  phys_body_desc b = phys_body_desc_default();
  phys_geom_desc g = phys_geom_desc_default();
  g.size[0] = 0.05;
  g.mass = 2.0;
  phys_joint_desc j = phys_joint_desc_default();
  j.type = PHYS_JOINT_TYPE_SLIDE;
  j.axis[0] = 1.0;
  j.axis[2] = 0.0;
  j.stiffness = 200.0;
  j.qpos0 = 0.1;
  phys_id id;
  CU_ASSERT_EQUAL_FATAL(phys_world_add_link(w, PHYS_ID_NONE, &b, &j, &g, 1, &id), PHYS_OK);
  double period = link_joint_period(w, id, 5000), expected = 2 * M_PI * sqrt(2.0 / 200.0), q[7];
  printf("\n  slide spring: period %.5f s (expected %.5f)\n", period, expected);
  CU_ASSERT_DOUBLE_EQUAL(period, expected, 0.01 * expected);
  phys_world_destroy(w);

  /* overdamped at a stiffness the explicit integrator could not take: no overshoot */
  w = make_world(&o);
  j.stiffness = 1e6;
  j.damping = 1e5;
  CU_ASSERT_EQUAL_FATAL(phys_world_add_link(w, PHYS_ID_NONE, &b, &j, &g, 1, &id), PHYS_OK);
  double qmin = 1.0;
  for (int i = 0; i < 1000; i++) {
    CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
    phys_link_get_joint(w, id, q, NULL, NULL, NULL);
    if (q[0] < qmin) qmin = q[0];
  }
  CU_ASSERT_TRUE(qmin >= -1e-9);
  CU_ASSERT_TRUE(fabs(q[0]) < 1e-3);
  phys_world_destroy(w);
}

/* a frictionless double pendulum of point-like bobs released at 90 degrees: energy stays within
 * 1 % of the released potential energy over 10 s at 1 ms (measured 0.55 %: the step evaluates
 * the velocity-dependent forces at the mid-step velocity; at the start velocity it was 1.9 %) */
static void test_double_pendulum(void) {
  phys_world_options o = phys_world_options_default();
  o.timestep = 0.001;
  o.sleep_enabled = 0;
  phys_world *w = make_world(&o);
  double axis[3] = {0, 1, 0}, off[3] = {0, 0, -1}, p1[3] = {0, 0, 3}, p2[3] = {0, 0, -1};
  phys_id ids[2];
  ids[0] = add_bob(w, PHYS_ID_NONE, p1, PHYS_JOINT_TYPE_HINGE, axis, off, 0.01, 1.0, M_PI / 2);
  ids[1] = add_bob(w, ids[0], p2, PHYS_JOINT_TYPE_HINGE, axis, off, 0.01, 1.0, 0.0);
  double e0 = bob_energy(w, ids, 2, off), emax = 0.0, scale = 9.81 * (1.0 + 2.0);
  for (int i = 0; i < 10000; i++) {
    CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
    emax = fmax(emax, fabs(bob_energy(w, ids, 2, off) - e0));
  }
  printf("\n  double pendulum: energy error %.3g J of %.3g J (%.2f %%)\n", emax, scale,
         100 * emax / scale);
  CU_ASSERT_TRUE(emax < 0.01 * scale);
  phys_world_destroy(w);
}

/* a box on a hinge along one bottom edge, tilted up 30 degrees, falls onto the ground: it lands
 * flat, penetration < 1 mm, and stays (the contact acts through the tree); at rest the tree goes
 * to sleep with its joint velocity zero, the same command again keeps it asleep, and a changed
 * command wakes it and lifts it */
static void test_hinged_box_lands(void) {
  phys_world_options o = phys_world_options_default();
  phys_world *w = make_world(&o);
  add_ground(w, 0.8);
  phys_body_desc b = phys_body_desc_default();
  b.pos[2] = 0.1; /* body origin at the box centre, resting height */
  phys_geom_desc g = phys_geom_desc_default();
  g.type = PHYS_GEOM_BOX;
  g.size[0] = g.size[1] = g.size[2] = 0.1;
  phys_joint_desc j = phys_joint_desc_default();
  j.axis[0] = 0.0;
  j.axis[1] = 1.0;
  j.axis[2] = 0.0;
  j.pos[0] = 0.1; /* the bottom edge at +x */
  j.pos[2] = -0.1;
  j.qpos0 = 0.5; /* lifted about the edge */
  phys_id id;
  CU_ASSERT_EQUAL_FATAL(phys_world_add_link(w, PHYS_ID_NONE, &b, &j, &g, 1, &id), PHYS_OK);
  double pen = 0.0, q[7], qd[6];
  int contacts = 0, slept_at = -1;
  for (int i = 0; i < 1000; i++) {
    CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
    pen = fmax(pen, phys_world_stats(w)->penetration_max);
    if (phys_world_contact_count(w) > contacts) contacts = phys_world_contact_count(w);
    if (slept_at < 0 && phys_body_is_sleeping(w, id) == 1) slept_at = i;
  }
  phys_link_get_joint(w, id, q, qd, NULL, NULL);
  double p[3];
  body_pos(w, id, p);
  printf("\n  hinged box: angle %.2e rad, centre z %.5f, penetration %.2e m, %d contacts, asleep "
         "at step %d\n", q[0], p[2], pen, contacts, slept_at);
  CU_ASSERT_TRUE(fabs(q[0]) < 1e-2);
  CU_ASSERT_DOUBLE_EQUAL(p[2], 0.1, 1e-3);
  CU_ASSERT_TRUE(pen < 1e-3);
  CU_ASSERT_TRUE(contacts >= 2);
  CU_ASSERT_TRUE(slept_at > 0);
  CU_ASSERT_EQUAL(phys_body_is_sleeping(w, id), 1);
  CU_ASSERT_EQUAL(qd[0], 0.0);

  /* the unchanged (empty) command keeps it asleep; a torque that lifts it wakes it */
  phys_joint_command cmd = {0};
  CU_ASSERT_EQUAL(phys_link_set_command(w, id, &cmd), PHYS_OK);
  step_n(w, 10);
  CU_ASSERT_EQUAL(phys_body_is_sleeping(w, id), 1);
  cmd.mode = PHYS_CMD_TORQUE;
  cmd.tau = 50.0; /* about the +y edge: lifts the box (its weight makes 9.81 * 8 * 0.1 N m) */
  CU_ASSERT_EQUAL(phys_link_set_command(w, id, &cmd), PHYS_OK);
  CU_ASSERT_EQUAL(phys_body_is_sleeping(w, id), 0);
  step_n(w, 50);
  phys_link_get_joint(w, id, q, NULL, NULL, NULL);
  printf("  after the wake-up torque: angle %.3f rad\n", q[0]);
  CU_ASSERT_TRUE(q[0] > 0.05);
  phys_world_destroy(w);
}

/* a chain of 8 links (hinges and ball joints) swinging through 27 spheres on the ground: same
 * state with 1 and 2 threads */
static phys_world *chain_scene(int threads) {
  phys_world_options o = phys_world_options_default();
  o.threads = threads;
  o.adaptive_threads = 0; /* the team on every step: this test checks its results */
  o.sleep_enabled = 0;
  phys_world *w = make_world(&o);
  add_ground(w, 0.8);
  for (int k = 0; k < 3; k++)
    for (int j = 0; j < 3; j++)
      for (int i = 0; i < 3; i++) {
        double p[3] = {-0.22 + 0.22 * i, -0.22 + 0.22 * j, 0.1 + 0.2 * k};
        add_sphere(w, p, 0.1, 1.0, 0.8);
      }
  phys_id parent = PHYS_ID_NONE;
  for (int i = 0; i < 8; i++) {
    phys_body_desc b = phys_body_desc_default();
    b.pos[2] = i == 0 ? 1.4 : -0.15;
    phys_geom_desc g = phys_geom_desc_default();
    g.type = PHYS_GEOM_CAPSULE;
    g.size[0] = 0.04;
    g.size[1] = 0.05;
    g.pos[2] = -0.075;
    phys_joint_desc j = phys_joint_desc_default();
    j.type = i % 3 == 2 ? PHYS_JOINT_TYPE_BALL : PHYS_JOINT_TYPE_HINGE;
    j.axis[0] = 0.0;
    j.axis[1] = 1.0;
    j.axis[2] = 0.0;
    j.qpos0 = i == 0 ? -1.0 : 0.0;
    j.damping = 0.01;
    CU_ASSERT_EQUAL(phys_world_add_link(w, parent, &b, &j, &g, 1, &parent), PHYS_OK);
  }
  return w;
}

static void test_chain_threads(void) {
  phys_world *a = chain_scene(1), *b = chain_scene(2);
  int contacts_with_chain = 0;
  for (int i = 0; i < 600; i++) {
    phys_status sa = phys_world_step(a), sb2 = phys_world_step(b);
    if (sa != PHYS_OK) printf("\n  chain step %d: %s\n", i, phys_world_last_error(a));
    CU_ASSERT_EQUAL_FATAL(sa, PHYS_OK);
    CU_ASSERT_EQUAL_FATAL(sb2, PHYS_OK);
    for (int c = 0; c < phys_world_contact_count(a); c++) {
      phys_contact_info ci;
      phys_world_get_contact(a, c, &ci);
      if (ci.body_a >= 27 || ci.body_b >= 27) contacts_with_chain++;
    }
  }
  /* snapshot with links: restore and repeat gives the same state */
  size_t n = phys_world_state_size(a);
  char *buf = malloc(n);
  CU_ASSERT_EQUAL_FATAL(phys_world_save_state(a, buf, n, NULL), PHYS_OK);
  step_n(a, 100);
  uint64_t h1 = phys_world_state_hash(a);
  CU_ASSERT_EQUAL(phys_world_load_state(a, buf, n), PHYS_OK);
  step_n(a, 100);
  CU_ASSERT_EQUAL(phys_world_state_hash(a), h1);
  free(buf);
  step_n(b, 100);
  printf("\n  chain: %d link contacts over 600 steps, hash %016llx\n", contacts_with_chain,
         (unsigned long long)phys_world_state_hash(a));
  CU_ASSERT_TRUE(contacts_with_chain > 0);
  CU_ASSERT_EQUAL(phys_world_state_hash(a), phys_world_state_hash(b));
  phys_world_destroy(a);
  phys_world_destroy(b);
}

/* a hinge limit holds under a torque pushing into it: violation < 1e-3 rad, and the arm rests at
 * the stop; released the other way it swings freely until the lower stop */
static void test_joint_limit(void) {
  phys_world_options o = phys_world_options_default();
  o.sleep_enabled = 0;
  phys_world *w = make_world(&o);
  phys_body_desc b = phys_body_desc_default();
  b.pos[2] = 2.0;
  phys_geom_desc g = phys_geom_desc_default();
  g.size[0] = 0.05;
  g.mass = 1.0;
  g.pos[0] = 0.5;
  g.contype = g.conaffinity = 0;
  phys_joint_desc j = phys_joint_desc_default();
  j.axis[0] = 0.0;
  j.axis[1] = 1.0;
  j.axis[2] = 0.0;
  j.limited = 1;
  j.range[0] = -0.5;
  j.range[1] = 0.5;
  phys_id arm;
  CU_ASSERT_EQUAL_FATAL(phys_world_add_link(w, PHYS_ID_NONE, &b, &j, &g, 1, &arm), PHYS_OK);
  double q[7], qmax = -1.0, qmin = 1.0;
  /* gravity swings the arm (COM at +x) down, i.e. to positive angles about +y, into the upper
   * stop; a 20 N m motor torque pushes further */
  double tau[3] = {0.0, 20.0, 0.0};
  for (int i = 0; i < 1000; i++) {
    CU_ASSERT_EQUAL_FATAL(phys_body_apply_wrench(w, arm, NULL, tau), PHYS_OK);
    CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
    phys_link_get_joint(w, arm, q, NULL, NULL, NULL);
    qmax = fmax(qmax, q[0]);
  }
  printf("\n  joint limit: max angle %.6f rad (stop at 0.5)\n", qmax);
  phys_joint_type jt;
  int lim;
  double rg[2];
  CU_ASSERT_EQUAL(phys_link_get_joint_info(w, arm, &jt, &lim, rg), PHYS_OK);
  CU_ASSERT_EQUAL(jt, PHYS_JOINT_TYPE_HINGE);
  CU_ASSERT_EQUAL(lim, 1);
  CU_ASSERT_DOUBLE_EQUAL(rg[1], 0.5, 0.0);
  CU_ASSERT_TRUE(qmax < 0.5 + 1e-3);
  CU_ASSERT_DOUBLE_EQUAL(q[0], 0.5, 1e-3);
  /* a strong torque the other way: it travels to the lower stop and stays there */
  tau[1] = -60.0;
  for (int i = 0; i < 1000; i++) {
    CU_ASSERT_EQUAL_FATAL(phys_body_apply_wrench(w, arm, NULL, tau), PHYS_OK);
    CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
    phys_link_get_joint(w, arm, q, NULL, NULL, NULL);
    qmin = fmin(qmin, q[0]);
  }
  CU_ASSERT_TRUE(qmin > -0.5 - 1e-3);
  CU_ASSERT_DOUBLE_EQUAL(q[0], -0.5, 1e-3);
  /* limits on a ball joint and an empty range are rejected */
  j.type = PHYS_JOINT_TYPE_BALL;
  CU_ASSERT_EQUAL(phys_world_add_link(w, PHYS_ID_NONE, &b, &j, &g, 1, NULL), PHYS_E_INVALID);
  j.type = PHYS_JOINT_TYPE_HINGE;
  j.range[1] = -0.5;
  CU_ASSERT_EQUAL(phys_world_add_link(w, PHYS_ID_NONE, &b, &j, &g, 1, NULL), PHYS_E_INVALID);
  phys_world_destroy(w);
}

/* a slide link of 2 kg along x without gravity */
static phys_world *slider(phys_id *id) {
  phys_world_options o = phys_world_options_default();
  memset(o.gravity, 0, sizeof o.gravity);
  o.sleep_enabled = 0;
  phys_world *w = make_world(&o);
  phys_body_desc b = phys_body_desc_default();
  phys_geom_desc g = phys_geom_desc_default();
  g.size[0] = 0.05;
  g.mass = 2.0;
  phys_joint_desc j = phys_joint_desc_default();
  j.type = PHYS_JOINT_TYPE_SLIDE;
  j.axis[0] = 1.0;
  j.axis[2] = 0.0;
  CU_ASSERT_EQUAL(phys_world_add_link(w, PHYS_ID_NONE, &b, &j, &g, 1, id), PHYS_OK);
  return w;
}

/* joint commands: a position command settles within 1 % of its target, very stiff gains stay
 * stable (implicit), a saturated command applies exactly tau_max, a velocity command reaches its
 * speed, and bad commands are rejected */
static void test_joint_commands(void) {
  phys_id id;
  phys_world *w = slider(&id);
  phys_joint_command c = {PHYS_CMD_POSITION, 0.3, 0.0, 0.0, 1000.0, 60.0, 0.0};
  CU_ASSERT_EQUAL_FATAL(phys_link_set_command(w, id, &c), PHYS_OK);
  step_n(w, 1000);
  double q[7], v[6];
  phys_link_get_joint(w, id, q, v, NULL, NULL);
  printf("\n  position command: q = %.5f (target 0.3)\n", q[0]);
  CU_ASSERT_DOUBLE_EQUAL(q[0], 0.3, 0.003);
  phys_world_destroy(w);

  /* stiff: kp 1e8 on 2 kg at 2 ms (explicit Euler would need h < 2 sqrt(m/kp) = 0.28 ms) */
  w = slider(&id);
  c.kp = 1e8;
  c.kd = 1e5;
  CU_ASSERT_EQUAL_FATAL(phys_link_set_command(w, id, &c), PHYS_OK);
  double qmax = 0.0;
  for (int i = 0; i < 500; i++) {
    CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
    phys_link_get_joint(w, id, q, NULL, NULL, NULL);
    qmax = fmax(qmax, q[0]);
  }
  CU_ASSERT_DOUBLE_EQUAL(q[0], 0.3, 1e-6);
  CU_ASSERT_TRUE(qmax < 0.3 + 1e-6);
  phys_world_destroy(w);

  /* saturated at 5 N: the force is 5 N, the acceleration 2.5 m/s^2 */
  w = slider(&id);
  c.kp = 1000.0;
  c.kd = 0.0;
  c.tau_max = 5.0;
  CU_ASSERT_EQUAL_FATAL(phys_link_set_command(w, id, &c), PHYS_OK);
  step_n(w, 100);
  double f;
  phys_link_get_command_force(w, id, &f);
  phys_link_get_joint(w, id, q, v, NULL, NULL);
  CU_ASSERT_DOUBLE_EQUAL(f, 5.0, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(v[0], 2.5 * 0.2, 1e-9);
  phys_world_destroy(w);

  /* velocity mode */
  w = slider(&id);
  phys_joint_command cv = {PHYS_CMD_VELOCITY, 0.0, 0.7, 0.0, 0.0, 200.0, 0.0};
  CU_ASSERT_EQUAL_FATAL(phys_link_set_command(w, id, &cv), PHYS_OK);
  step_n(w, 500);
  phys_link_get_joint(w, id, q, v, NULL, NULL);
  CU_ASSERT_DOUBLE_EQUAL(v[0], 0.7, 1e-6);

  /* rejected: NaN, negative gain, unknown mode, a free body */
  phys_joint_command bad = c;
  bad.q = NAN;
  CU_ASSERT_EQUAL(phys_link_set_command(w, id, &bad), PHYS_E_INVALID);
  bad = c;
  bad.kp = -1.0;
  CU_ASSERT_EQUAL(phys_link_set_command(w, id, &bad), PHYS_E_INVALID);
  bad = c;
  bad.mode = (phys_command_mode)7;
  CU_ASSERT_EQUAL(phys_link_set_command(w, id, &bad), PHYS_E_INVALID);
  double p[3] = {3, 0, 0};
  phys_id ball = add_sphere(w, p, 0.1, 1.0, 1.0);
  CU_ASSERT_EQUAL(phys_link_set_command(w, ball, &c), PHYS_E_NOT_FOUND);
  phys_world_destroy(w);
}

/* actuators: a position actuator settles within 1 % of its target, a geared motor applies gear
 * times its control, a velocity actuator reaches its speed, force limits saturate, controls are
 * clamped, bad descriptions are refused */
static void test_actuators(void) {
  phys_id id;
  phys_world *w = slider(&id);
  phys_actuator_desc d = phys_actuator_desc_default();
  d.type = PHYS_ACT_POSITION;
  d.kp = 500.0;
  d.kv = 40.0;
  int pos;
  CU_ASSERT_EQUAL_FATAL(phys_world_add_actuator(w, id, &d, &pos), PHYS_OK);
  CU_ASSERT_EQUAL(phys_actuator_set_ctrl(w, pos, 0.25), PHYS_OK);
  step_n(w, 1500);
  double q[7], v[6], f;
  phys_link_get_joint(w, id, q, v, NULL, NULL);
  printf("\n  position actuator: q = %.5f (target 0.25)\n", q[0]);
  CU_ASSERT_DOUBLE_EQUAL(q[0], 0.25, 0.0025);
  phys_world_destroy(w);

  /* a motor with gear 3 at ctrl 2: 6 N on 2 kg = 3 m/s^2 */
  w = slider(&id);
  d = phys_actuator_desc_default();
  d.gear = 3.0;
  d.ctrllimited = 1;
  d.ctrlrange[0] = -2.0;
  d.ctrlrange[1] = 2.0;
  int mot;
  CU_ASSERT_EQUAL_FATAL(phys_world_add_actuator(w, id, &d, &mot), PHYS_OK);
  phys_actuator_desc back;
  CU_ASSERT_EQUAL(phys_actuator_get_desc(w, mot, &back), PHYS_OK);
  CU_ASSERT_EQUAL(back.gear, 3.0);
  CU_ASSERT_EQUAL(back.ctrllimited, 1);
  CU_ASSERT_EQUAL(back.ctrlrange[1], 2.0);
  CU_ASSERT_EQUAL(phys_actuator_get_desc(w, mot + 7, &back), PHYS_E_NOT_FOUND);
  CU_ASSERT_EQUAL(phys_actuator_get_desc(w, mot, NULL), PHYS_E_INVALID);
  CU_ASSERT_EQUAL(phys_actuator_set_ctrl(w, mot, 5.0), PHYS_OK); /* clamped to 2 */
  step_n(w, 100);
  phys_link_get_joint(w, id, q, v, NULL, NULL);
  CU_ASSERT_DOUBLE_EQUAL(v[0], 3.0 * 0.2, 1e-9);
  CU_ASSERT_EQUAL(phys_actuator_get(w, mot, &f, NULL), PHYS_OK);
  CU_ASSERT_DOUBLE_EQUAL(f, 2.0, 0.0);
  phys_world_destroy(w);

  /* velocity actuator, then its force limited to 1 N: 0.5 m/s^2 */
  w = slider(&id);
  d = phys_actuator_desc_default();
  d.type = PHYS_ACT_VELOCITY;
  d.kv = 100.0;
  int vel;
  CU_ASSERT_EQUAL_FATAL(phys_world_add_actuator(w, id, &d, &vel), PHYS_OK);
  phys_actuator_set_ctrl(w, vel, -0.4);
  step_n(w, 500);
  phys_link_get_joint(w, id, q, v, NULL, NULL);
  CU_ASSERT_DOUBLE_EQUAL(v[0], -0.4, 1e-6);
  phys_world_destroy(w);
  w = slider(&id);
  d.forcelimited = 1;
  d.forcerange[0] = -1.0;
  d.forcerange[1] = 1.0;
  CU_ASSERT_EQUAL_FATAL(phys_world_add_actuator(w, id, &d, &vel), PHYS_OK);
  phys_actuator_set_ctrl(w, vel, 10.0);
  step_n(w, 100);
  phys_link_get_joint(w, id, q, v, NULL, NULL);
  CU_ASSERT_DOUBLE_EQUAL(v[0], 0.5 * 0.2, 1e-9);
  phys_actuator_get(w, vel, &f, NULL);
  CU_ASSERT_DOUBLE_EQUAL(f, 1.0, 0.0);

  /* refused: zero gear, position without kp, a free body, NaN ctrl, unknown id */
  d = phys_actuator_desc_default();
  d.gear = 0.0;
  CU_ASSERT_EQUAL(phys_world_add_actuator(w, id, &d, NULL), PHYS_E_INVALID);
  d = phys_actuator_desc_default();
  d.type = PHYS_ACT_POSITION;
  CU_ASSERT_EQUAL(phys_world_add_actuator(w, id, &d, NULL), PHYS_E_INVALID);
  double p[3] = {3, 0, 0};
  phys_id ball = add_sphere(w, p, 0.1, 1.0, 1.0);
  d = phys_actuator_desc_default();
  CU_ASSERT_EQUAL(phys_world_add_actuator(w, ball, &d, NULL), PHYS_E_NOT_FOUND);
  CU_ASSERT_EQUAL(phys_actuator_set_ctrl(w, vel, NAN), PHYS_E_INVALID);
  CU_ASSERT_EQUAL(phys_actuator_set_ctrl(w, 99, 1.0), PHYS_E_NOT_FOUND);
  CU_ASSERT_EQUAL(phys_world_actuator_count(w), 1);
  phys_world_destroy(w);
}

/* a stiff, strongly damped servo whose force limit is hit on the way (kv h / I = 8 at 2 ms): it
 * settles on its target instead of chattering in a two-step cycle off it (before the fix: 4 %
 * off, alternating every step); the same through a joint command with tau_max */
static void test_saturated_servo(void) {
  static const char xml[] =
      "<mujoco><compiler angle='radian'/><option timestep='0.002' gravity='0 0 0'/>"
      "<worldbody><body name='hand' pos='0 0 1'>"
      "<joint name='j' axis='0 0 1' damping='0.5' armature='0.05'/>"
      "<geom type='box' size='0.03 0.07 0.02' mass='1' contype='0' conaffinity='0'/>"
      "</body></worldbody><actuator><position name='a' joint='j' kp='2000' kv='200' "
      "forcerange='-40 40'/></actuator></mujoco>";
  for (int api = 0; api < 2; api++) {
    phys_world *w = NULL;
    phys_error err;
    /* the command case loads the model without its actuator */
    size_t len = api ? (size_t)(strstr(xml, "<actuator>") - xml) : sizeof xml - 1;
    char doc[sizeof xml + 16];
    memcpy(doc, xml, len);
    strcpy(doc + len, api ? "</mujoco>" : "");
    CU_ASSERT_EQUAL_FATAL(phys_load_mjcf_string(doc, strlen(doc), "servo", NULL, &w, &err),
                          PHYS_OK);
    phys_id hand = phys_world_find_body(w, "hand");
    if (api) {
      /* a PD command with tau_max doing the actuator's job */
      phys_joint_command cmd = {PHYS_CMD_POSITION, 1.0, 0.0, 0.0, 2000.0, 200.0, 40.0};
      CU_ASSERT_EQUAL(phys_link_set_command(w, hand, &cmd), PHYS_OK);
    } else {
      CU_ASSERT_EQUAL(phys_actuator_set_ctrl(w, 0, 1.0), PHYS_OK);
    }
    double q[7], qd[6];
    int saturated = 0;
    for (int i = 0; i < 1000; i++) {
      CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
      double f = 0.0;
      if (api) phys_link_get_command_force(w, hand, &f);
      else phys_actuator_get(w, 0, &f, NULL);
      if (fabs(fabs(f) - 40.0) < 1e-9) saturated++;
    }
    phys_link_get_joint(w, hand, q, qd, NULL, NULL);
    printf("\n  saturated servo (%s): q %.6f qd %.2e after 2 s, %d steps at the limit", 
           api ? "command" : "actuator", q[0], qd[0], saturated);
    CU_ASSERT_TRUE(saturated >= 3);
    CU_ASSERT_TRUE(fabs(q[0] - 1.0) < 1e-6); /* a driven tree does not sleep off target */
    CU_ASSERT_TRUE(fabs(qd[0]) < 1e-6);
    phys_world_destroy(w);
  }
  printf("\n");
}

/* MuJoCo's humanoid (Debian's libmujoco-samples, installed by scripts/install-deps.sh): it loads,
 * falls, and lies still after 10 s without the state going non-finite */
static void test_mujoco_humanoid(void) {
  const char *path = "/usr/share/mujoco/model/humanoid/humanoid.xml";
  FILE *f = fopen(path, "r");
  if (!f) {
    test_skip("%s not installed", path);
    return;
  }
  fclose(f);
  phys_world *w = NULL;
  phys_error err;
  CU_ASSERT_EQUAL_FATAL(phys_load_mjcf(path, NULL, &w, &err), PHYS_OK);
  CU_ASSERT_EQUAL(phys_world_actuator_count(w), 21);
  double pen = 0.0;
  for (int i = 0; i < 2000; i++) {
    CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
    pen = fmax(pen, phys_world_stats(w)->penetration_max);
  }
  double vmax = 0.0, zmax = 0.0;
  for (phys_id b = 0; b < phys_world_body_id_bound(w); b++) {
    double p[3], v[3];
    if (phys_body_get_state(w, b, p, NULL, v, NULL) != PHYS_OK) continue;
    CU_ASSERT_TRUE(v3_isfinite(p) && v3_isfinite(v));
    vmax = fmax(vmax, v3_norm(v));
    if (phys_body_is_static(w, b) == 0) zmax = fmax(zmax, p[2]);
  }
  printf("\n  humanoid after 10 s: max speed %.2e m/s, highest body %.3f m, penetration %.2e m\n",
         vmax, zmax, pen);
  CU_ASSERT_TRUE(vmax < 0.05);
  CU_ASSERT_TRUE(zmax < 1.0); /* it fell from 1.5 m (and rests folded up, about 0.5 m) */
  CU_ASSERT_TRUE(pen < 1e-3);
  phys_world_destroy(w);
}

/* world point of `local` (body frame) on body id */
static void body_point(const phys_world *w, phys_id id, const double local[3], double out[3]) {
  double p[3], q[4], R[9];
  phys_body_get_state(w, id, p, q, NULL, NULL);
  q_to_m3(R, q);
  m3_mulv(out, R, local);
  v3_add(out, out, p);
}

/* configs/worlds/four_bar.xml: two trees closed by a connect keep the loop closed to 1e-4 m for
 * 10 s while gravity swings the linkage */
static void test_four_bar(void) {
  const char *dir = getenv("PHYS_WORLDS");
  if (!dir) {
    test_skip("PHYS_WORLDS not set");
    return;
  }
  char path[1024];
  snprintf(path, sizeof path, "%s/four_bar.xml", dir);
  phys_world *w = NULL;
  phys_error err;
  CU_ASSERT_EQUAL_FATAL(phys_load_mjcf(path, NULL, &w, &err), PHYS_OK);
  phys_world_options o = phys_world_get_options(w);
  o.baumgarte = 0.5; /* connects remove half their drift per step (default 0.3: 9e-5 m) */
  CU_ASSERT_EQUAL(phys_world_set_options(w, &o), PHYS_OK);
  phys_id coupler = phys_world_find_body(w, "coupler"), rocker = phys_world_find_body(w, "rocker");
  phys_id crank = phys_world_find_body(w, "crank");
  double tip_c[3] = {0.7, 0, 0.12}, tip_r[3] = {0, 0, 0.35}, a[3], b[3], err_max = 0.0;
  double q0[7], q[7], travel = 0.0;
  phys_link_get_joint(w, crank, q0, NULL, NULL, NULL);
  for (int i = 0; i < 10000; i++) {
    CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
    body_point(w, coupler, tip_c, a);
    body_point(w, rocker, tip_r, b);
    double d[3];
    v3_sub(d, a, b);
    err_max = fmax(err_max, v3_norm(d));
    phys_link_get_joint(w, crank, q, NULL, NULL, NULL);
    travel = fmax(travel, fabs(q[0] - q0[0]));
  }
  printf("\n  four-bar: loop closure error %.2e m over 10 s, crank travel %.2f rad\n", err_max,
         travel);
  CU_ASSERT_TRUE(err_max < 1e-4);
  CU_ASSERT_TRUE(travel > 0.1);
  phys_world_destroy(w);
}

/* bad links are rejected and change nothing */
static void test_link_errors(void) {
  phys_world *w = make_world(NULL);
  double p[3] = {0, 0, 1};
  phys_id freebody = add_sphere(w, p, 0.1, 1.0, 1.0);
  phys_body_desc b = phys_body_desc_default();
  phys_geom_desc g = phys_geom_desc_default();
  g.size[0] = 0.1;
  phys_joint_desc j = phys_joint_desc_default();
  int n0 = phys_world_body_count(w);
  CU_ASSERT_EQUAL(phys_world_add_link(w, freebody, &b, &j, &g, 1, NULL), PHYS_E_INVALID);
  CU_ASSERT_EQUAL(phys_world_add_link(w, 99, &b, &j, &g, 1, NULL), PHYS_E_NOT_FOUND);
  j.axis[2] = 0.0;
  CU_ASSERT_EQUAL(phys_world_add_link(w, PHYS_ID_NONE, &b, &j, &g, 1, NULL), PHYS_E_INVALID);
  j = phys_joint_desc_default();
  j.damping = -1.0;
  CU_ASSERT_EQUAL(phys_world_add_link(w, PHYS_ID_NONE, &b, &j, &g, 1, NULL), PHYS_E_INVALID);
  j = phys_joint_desc_default();
  j.type = (phys_joint_type)9;
  CU_ASSERT_EQUAL(phys_world_add_link(w, PHYS_ID_NONE, &b, &j, &g, 1, NULL), PHYS_E_INVALID);
  /* a free joint below the root */
  j = phys_joint_desc_default();
  phys_id root;
  CU_ASSERT_EQUAL_FATAL(phys_world_add_link(w, PHYS_ID_NONE, &b, &j, &g, 1, &root), PHYS_OK);
  n0 = phys_world_body_count(w);
  j.type = PHYS_JOINT_TYPE_FREE;
  CU_ASSERT_EQUAL(phys_world_add_link(w, root, &b, &j, &g, 1, NULL), PHYS_E_INVALID);
  /* a bad geom on a link */
  j = phys_joint_desc_default();
  g.size[0] = -1.0;
  CU_ASSERT_EQUAL(phys_world_add_link(w, root, &b, &j, &g, 1, NULL), PHYS_E_INVALID);
  CU_ASSERT_EQUAL(phys_world_body_count(w), n0);
  /* joint accessors on a free body, and a ball joint set as one value */
  CU_ASSERT_EQUAL(phys_link_get_joint(w, freebody, NULL, NULL, NULL, NULL), PHYS_E_NOT_FOUND);
  CU_ASSERT_EQUAL(phys_link_set_joint(w, root, NAN, 0.0), PHYS_E_INVALID);
  CU_ASSERT_EQUAL(phys_world_remove_body(w, root), PHYS_E_STATE);
  double v[3] = {1, 0, 0};
  CU_ASSERT_EQUAL(phys_body_set_state(w, root, NULL, NULL, v, NULL), PHYS_E_STATE);
  CU_ASSERT_EQUAL(phys_world_step(w), PHYS_OK);

  /* a massless link with nothing below it: the step refuses and keeps the state */
  phys_body_desc mb = phys_body_desc_default();
  mb.mass = 0.0;
  j = phys_joint_desc_default();
  phys_id massless;
  CU_ASSERT_EQUAL_FATAL(phys_world_add_link(w, PHYS_ID_NONE, &mb, &j, NULL, 0, &massless),
                        PHYS_OK);
  uint64_t h = phys_world_state_hash(w);
  CU_ASSERT_EQUAL(phys_world_step(w), PHYS_E_NUMERIC);
  CU_ASSERT_PTR_NOT_NULL(strstr(phys_world_last_error(w), "singular"));
  CU_ASSERT_EQUAL(phys_world_state_hash(w), h);
  phys_world_destroy(w);
}

/* a tree's root does not collide with the static body it hangs from (MuJoCo's parent filter),
 * even where their geoms overlap at the joint: a knee whose thigh is welded to the world swings
 * freely under its position actuator (before, the overlap at the joint was a contact that held
 * it); the world's own geoms and the tree's other links still collide with that body */
static void test_parent_static_filter(void) {
  static const char *doc =
    "<mujoco><compiler angle='radian'/><option timestep='0.002'/><worldbody>"
    "<geom name='floor' type='plane' size='2 2 0.1'/>"
    "<body name='thigh' pos='0 0 1'><geom type='capsule' fromto='0 0 0 0 0 -0.2' size='0.02'/>"
    "  <body name='calf' pos='0 0 -0.2'><joint name='knee' axis='0 1 0' damping='0.1'/>"
    "    <geom type='capsule' fromto='0 0 0 0 0 -0.2' size='0.015' mass='0.3'/>"
    "    <body name='foot' pos='0 0 -0.2'><joint name='ankle' axis='0 1 0'/>"
    "      <geom type='box' size='0.05 0.05 0.05' mass='0.2'/></body>"
    "  </body>"
    "</body></worldbody>"
    "<actuator><position name='knee' joint='knee' kp='40'/></actuator></mujoco>";
  phys_world *w = NULL;
  phys_error err;
  CU_ASSERT_EQUAL_FATAL(phys_load_mjcf_string(doc, strlen(doc), "knee", NULL, &w, &err), PHYS_OK);
  phys_id knee = phys_world_find_joint(w, "knee");
  CU_ASSERT_EQUAL_FATAL(phys_actuator_set_ctrl(w, 0, -1.5), PHYS_OK);
  int contacts = 0;
  double q[7];
  for (int i = 0; i < 50; i++) {
    CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
    contacts += phys_world_contact_count(w);
  }
  phys_link_get_joint(w, knee, q, NULL, NULL, NULL);
  printf("\n  knee after 0.1 s toward -1.5 rad: %.3f rad, %d contacts", q[0], contacts);
  CU_ASSERT_EQUAL(contacts, 0);
  CU_ASSERT(q[0] < -0.8);
  /* the foot (not the root) folds back into the thigh: that contact is kept */
  int foot_contacts = 0;
  CU_ASSERT_EQUAL(phys_actuator_set_ctrl(w, 0, -3.1), PHYS_OK);
  for (int i = 0; i < 500; i++) {
    CU_ASSERT_EQUAL_FATAL(phys_world_step(w), PHYS_OK);
    for (int c = 0; c < phys_world_contact_count(w); c++) {
      phys_contact_info ci;
      phys_world_get_contact(w, c, &ci);
      foot_contacts += ci.body_a == phys_world_find_body(w, "foot") ||
                       ci.body_b == phys_world_find_body(w, "foot");
    }
  }
  printf(", then %d foot contacts folded back", foot_contacts);
  CU_ASSERT(foot_contacts > 0);
  phys_world_destroy(w);
}

int register_tests(void) {
  CU_pSuite s = CU_add_suite("links", NULL, NULL);
  if (!s) return -1;
  if (!CU_add_test(s, "hinge pendulum period", test_hinge_pendulum) ||
      !CU_add_test(s, "slide joint spring and damper", test_slide_spring) ||
      !CU_add_test(s, "double pendulum energy", test_double_pendulum) ||
      !CU_add_test(s, "hinged box lands through the tree", test_hinged_box_lands) ||
      !CU_add_test(s, "chain in a pile: 1 and 2 threads", test_chain_threads) ||
      !CU_add_test(s, "joint limit holds against a motor", test_joint_limit) ||
      !CU_add_test(s, "joint commands", test_joint_commands) ||
      !CU_add_test(s, "actuators", test_actuators) ||
      !CU_add_test(s, "a saturated servo settles on target", test_saturated_servo) ||
      !CU_add_test(s, "MuJoCo's humanoid falls and lies still", test_mujoco_humanoid) ||
      !CU_add_test(s, "four-bar linkage keeps its loop closed", test_four_bar) ||
      !CU_add_test(s, "link errors", test_link_errors) ||
      !CU_add_test(s, "a root link and its static parent do not collide",
                   test_parent_static_filter))
    return -1;
  return 0;
}
