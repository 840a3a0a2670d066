/* sensor.h - sites (site.c) and sensors (sensor.c): model records and the step's hook.
 *
 * A site is a frame fixed to a body's body frame (or to the world). A sensor names a type and
 * an object (and a reference frame for frame sensors) and is read on demand from the current
 * state; the sensors that need step data (accelerometer, force, torque, contact force, touch)
 * read the per-body records that phys__sensor_record() leaves at the end of every step in
 * phys_body (acc, cfrc, cnormal, ext: no allocation in the step). */
#ifndef PHYS_SENSOR_H
#define PHYS_SENSOR_H

#include "core/world_internal.h"

typedef struct phys_site {
  phys_id body;        /* PHYS_ID_NONE: the world */
  double pos[3];       /* in the body frame (world frame for the world) */
  double quat[4];      /* unit */
  char name[64];
} phys_site;

typedef struct phys_sensor {
  phys_sensor_desc desc;
  int dim;
  char name[64];
} phys_sensor;

/* site.c: world pose (position, unit quaternion) of site i; 0, or -1 when its body is gone */
int phys__site_frame(const phys_world *w, int i, double pos[3], double q[4]);

/* site.c: world pose of live body b's body frame (com = 0) or inertial frame (com = 1) */
void phys__body_frame(const phys_world *w, phys_id b, int com, double pos[3], double q[4]);

/* site.c: continue the model hash with the sites */
uint64_t phys__site_hash(const phys_world *w, uint64_t h);

/* sensor.c: at the end of a step (after the solve and integration, before sleeping zeroes the
 * velocities of bodies that fall asleep; the state before the step in w->saved_state): record
 * every body's acceleration, contact and external wrenches of the step; nothing while the world
 * has no sensors (a sensor added later reads step data from the next step on) */
void phys__sensor_record(phys_world *w);

#endif
