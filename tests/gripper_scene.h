/* gripper_scene.h - a two-finger gripper (hinge links under a fixed palm, position servos,
 * sensors) with its right finger leaning on box_b, and two more boxes on the ground: the scene
 * of the failed-step tests of the library (solver/core/test_failed_step.c) and of the daemon
 * (server/test_failed_step.c). The boxes come after the gripper in body-id order. Set
 * actuator 1 (servo_r) to -0.1 and step 200 times for the finger to rest on box_b. */
#ifndef PHYS_TEST_GRIPPER_SCENE_H
#define PHYS_TEST_GRIPPER_SCENE_H

static const char GRIPPER_SCENE[] =
    "<mujoco model='gripper_boxes'>"
    "  <option timestep='0.002'/>"
    "  <worldbody>"
    "    <geom type='plane' size='5 5 0.1'/>"
    "    <body name='palm' pos='0 0 0.5'>"
    "      <geom type='box' size='0.15 0.05 0.02' contype='0' conaffinity='0'/>"
    "      <body name='finger_l' pos='-0.12 0 0'>"
    "        <joint name='jl' type='hinge' axis='0 1 0' range='-0.5 0.5' limited='true'/>"
    "        <geom type='capsule' fromto='0 0 0 0 0 -0.45' size='0.02' mass='0.2'/>"
    "        <site name='tip_l' pos='0 0 -0.45'/>"
    "      </body>"
    "      <body name='finger_r' pos='0.12 0 0'>"
    "        <joint name='jr' type='hinge' axis='0 1 0' range='-0.5 0.5' limited='true'/>"
    "        <geom type='capsule' fromto='0 0 0 0 0 -0.45' size='0.02' mass='0.2'/>"
    "      </body>"
    "    </body>"
    "    <body name='box_a' pos='-0.4 0 0.05'><freejoint/>"
    "      <geom type='box' size='0.05 0.05 0.05' mass='0.5'/></body>"
    "    <body name='box_b' pos='0.175 0 0.06'><freejoint/>"
    "      <geom type='box' size='0.03 0.05 0.06' mass='0.3'/></body>"
    "    <body name='box_c' pos='0.5 0.2 0.05'><freejoint/>"
    "      <geom type='box' size='0.05 0.05 0.05' mass='0.5'/></body>"
    "  </worldbody>"
    "  <actuator><position name='servo_l' joint='jl' kp='30'/>"
    "    <position name='servo_r' joint='jr' kp='30'/></actuator>"
    "  <sensor><touch site='tip_l'/><force site='tip_l'/><torque site='tip_l'/>"
    "    <jointpos joint='jr'/><actuatorfrc actuator='servo_r'/>"
    "    <actuatorfrc actuator='servo_l'/></sensor>"
    "</mujoco>";

#endif
