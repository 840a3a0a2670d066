/* loader_mjcf_sensor.h - MJCF loader: <site> (in bodies, the world and defaults) and <sensor>
 * (loader_mjcf_sensor.c), called from hooks in loader_mjcf.c and loader_mjcf_body.c. */
#ifndef PHYS_LOADER_MJCF_SENSOR_H
#define PHYS_LOADER_MJCF_SENSOR_H

#include "io/loader_mjcf_internal.h"

/* <default><site>: pos and orientation on top of class k's site values. */
phys_status phys__mj_site_default(mj_ctx *c, const xmlNode *node, int k);

/* A <site> in a body being collected: (fpos, fq) is the frame of its MJCF body in the physd
 * body frame; kept until phys__mj_sites_flush() gives it the physd body. */
phys_status phys__mj_site_collect(mj_ctx *c, const xmlNode *node, int cls, const double fpos[3],
                            const double fq[4]);

/* Add the collected sites to physd body `body`. */
phys_status phys__mj_sites_flush(mj_ctx *c, phys_id body);

/* A <site> of <worldbody> (a world site), in class `cls`, in the frame (fpos, fq): the world's,
 * or that of the <frame> elements around it. */
phys_status phys__mj_site_world(mj_ctx *c, const xmlNode *node, int cls, const double fpos[3],
                                const double fq[4]);

/* <sensor>: after bodies, joints, sites and actuators exist. */
phys_status phys__mj_sensors(mj_ctx *c, const xmlNode *node);

/* Release what the site code kept on the context (safe to call more than once). */
void phys__mj_sensor_free(mj_ctx *c);

#endif
