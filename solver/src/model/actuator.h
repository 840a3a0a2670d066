/* actuator.h - the step's view of actuators (actuator.c). */
#ifndef PHYS_ACTUATOR_H
#define PHYS_ACTUATOR_H

#include "core/world_internal.h"

/* Terms of actuator i on its joint at position q and velocity qd: implicit gains on the joint
 * (kp_joint acts on the new position, kd_joint on the new velocity) and the explicit rest of the
 * generalised force. m_dof is the joint's inertia with its passive implicit terms (for the
 * saturation test), h the time step. Records the force estimate. */
void phys__actuator_terms(phys_world *w, int i, double q, double qd, double m_dof, double h,
                          double *kp_joint, double *kd_joint, double *tau_joint);

/* After the solve: the actuator's force at the new velocity qd_new (q the position before the
 * step, h the time step). */
void phys__actuator_finish(phys_world *w, int i, double q, double qd_new, double h);

/* Tendon actuator i at tendon length L and velocity Ld (start of step, explicit): records its
 * force f (clamped to forcerange) and returns gear f, the tendon force (joint d receives
 * coef_d gear f). */
double phys__actuator_tendon_force(phys_world *w, int i, double L, double Ld);

/* Site actuator i (start of step, explicit): records its force f (length 0, velocity gear .
 * [v; w] in site axes, clamped to forcerange) and returns its world wrench: force f R
 * gear[0..2] and torque f R gear[3..5] acting at the site's world point p. */
void phys__actuator_site_wrench(phys_world *w, int i, double f[3], double t[3], double p[3]);

#endif
