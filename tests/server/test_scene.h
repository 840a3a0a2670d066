/* test_scene.h - the small MJCF scene the server tests load: a ground plane, a static wall
 * body and three free bodies (box, sphere, capsule) that collide as they fall. */
#ifndef PHYSD_TEST_SCENE_H
#define PHYSD_TEST_SCENE_H

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

#endif
