/* pour_task.h - paper 002's pouring task (configs/worlds/pour_N.xml, bench/gen_scenes.py) driven
 * and measured the same way by its benchmark (bench/pourbench.c) and its test
 * (tests/solver/solvers/test_pour.c): the keyframes pour_0, pour_1, ... are a control schedule
 * (each key's time and ctrl; linear between keys, held after the last); the figures are read
 * from the bodies named bottle, L_finger, R_finger and ball0, ball1, ... and the static SDF geom
 * (the cup). Uses libphys's public API only. */
#ifndef PHYS_BENCH_POUR_TASK_H
#define PHYS_BENCH_POUR_TASK_H

#include <stddef.h>
#include "phys/phys.h"

#define POUR_MAX_KEYS 32
#define POUR_MAX_ACTUATORS 64
#define POUR_MAX_BALLS 256

typedef struct pour_task {
  int nkeys, nact, nballs;
  double key_time[POUR_MAX_KEYS];                    /* s, increasing */
  double key_ctrl[POUR_MAX_KEYS][POUR_MAX_ACTUATORS];
  phys_id bottle, pad[2], ball[POUR_MAX_BALLS];
  phys_sdf_desc bottle_shape, cup_shape;             /* profiles of the bottle and the cup */
  double cup_pos[3], cup_quat[4];                    /* the cup's world pose */
  double grip0[2][3], grip0_quat[2][4];              /* the bottle in each pad's frame, as of
                                                        pour_task_mark_grip */
} pour_task;

/* What the balls and the grip are doing now. */
typedef struct pour_state {
  int in_cup;        /* balls inside the cup (below its rim, within its rim's radius) */
  int out_of_bottle; /* balls outside the bottle's revolved hull (above its top or past its
                        widest radius) */
  double grip_drift; /* m: the larger over the two pads of how far the bottle's origin moved in
                        the pad's frame since pour_task_mark_grip */
  double grip_turn;  /* rad: the larger over the pads of the bottle's rotation in its frame */
} pour_state;

/* Read the schedule and the named bodies of `w` into *t, then restore pour_0 (the start
 * state). 0, or -1 with the reason in why[0..n) (a missing body or key, keys out of order, too
 * many). The world must not have stepped yet. */
int pour_task_init(pour_task *t, phys_world *w, char *why, size_t n);

/* Set every actuator's control to the schedule's value at the world's time. 0 or -1. */
int pour_task_control(const pour_task *t, phys_world *w);

/* Remember the bottle's pose in each pad's frame (the reference of grip_drift). */
void pour_task_mark_grip(pour_task *t, const phys_world *w);

/* Measure the balls and the grip now (the grip against pour_task_mark_grip). */
pour_state pour_task_measure(const pour_task *t, const phys_world *w);

/* Time at which the schedule ends (the last key), s. */
double pour_task_end(const pour_task *t);

#endif
