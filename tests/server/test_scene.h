/* test_scene.h - the small MJCF scenes the server and e2e tests load: TEST_SCENE (a ground
 * plane, a static wall body and three free bodies, box, sphere and capsule, that collide as
 * they fall) and test_scene_arm_boxes (frames whose size crosses a small max_frame_bytes). */
#ifndef PHYSD_TEST_SCENE_H
#define PHYSD_TEST_SCENE_H

#include <stdio.h>

static const char TEST_SCENE[] =
    "<mujoco model=\"t\">\n"
    "  <option timestep=\"0.002\"/>\n"
    "  <worldbody>\n"
    "    <geom type=\"plane\" size=\"5 5 0.1\"/>\n"
    "    <body name=\"wall\" pos=\"1 0 0.5\"><geom type=\"box\" size=\"0.1 1 0.5\"/></body>\n"
    "    <body name=\"a\" pos=\"0 0 0.3\" euler=\"5 10 0\"><freejoint/><geom type=\"box\" size=\"0.1 0.1 0.1\"/></body>\n"
    "    <body name=\"b\" pos=\"0.05 0 0.6\"><freejoint/><geom type=\"sphere\" size=\"0.1\"/></body>\n"
    "    <body name=\"c\" pos=\"0.6 0.1 0.4\" euler=\"80 0 20\"><freejoint/><geom type=\"capsule\" size=\"0.05 0.2\"/></body>\n"
    "  </worldbody>\n"
    "</mujoco>\n";

/* Write into buf (cap bytes; 4096 is enough) a hinged arm (body 0) and 24 free 0.2 m boxes
 * 0.4 m above the ground plane, model name `model`: body 0 alone and a frame without contacts
 * fit in 1024 bytes; every body, or the contacts of the landed boxes, do not. */
static inline void test_scene_arm_boxes(char *buf, size_t cap, const char *model) {
  size_t n = (size_t)snprintf(buf, cap,
                              "<mujoco model=\"%s\">\n  <option timestep=\"0.002\"/>\n"
                              "  <worldbody>\n    <geom type=\"plane\" size=\"5 5 0.1\"/>\n"
                              "    <body name=\"arm\" pos=\"0 0 1\"><joint name=\"h\" "
                              "type=\"hinge\" axis=\"0 1 0\"/><geom type=\"capsule\" "
                              "fromto=\"0 0 0 0.3 0 0\" size=\"0.03\"/></body>\n",
                              model);
  for (int i = 0; i < 24 && n < cap; i++)
    n += (size_t)snprintf(buf + n, cap - n,
                          "    <body name=\"b%d\" pos=\"%d %d 0.5\"><freejoint/><geom "
                          "type=\"box\" size=\"0.1 0.1 0.1\"/></body>\n",
                          i, -3 + i % 6, -2 + i / 6);
  if (n < cap) snprintf(buf + n, cap - n, "  </worldbody>\n</mujoco>\n");
}

#endif
