/* world_info.c - the protocol 1.1 to 1.3 parts of ModelInfo: actuators in detail, sensors, the
 * loader's notices, the solver in force and the keyframes, and (world_geom_info.c) 1.8's
 * geometry (see world.h). Strings point into the world (valid while packing). */
#include <stdlib.h>

#include "world.h"

int world_model_info_extras(const world_ctx *wc, Physd__V1__ModelInfo *mi) {
  /* actuators: id, name, the joint they drive and their control range */
  int na = phys_world_actuator_count(wc->w);
  if (na > 0) {
    Physd__V1__ActuatorInfo **pp = calloc((size_t)na, sizeof *pp + sizeof **pp);
    if (!pp) return -1;
    Physd__V1__ActuatorInfo *ai = (Physd__V1__ActuatorInfo *)(pp + na);
    for (int i = 0; i < na; i++) {
      physd__v1__actuator_info__init(&ai[i]);
      ai[i].id = i;
      ai[i].name = (char *)phys_actuator_get_name(wc->w, i);
      phys_id body = PHYS_ID_NONE;
      phys_actuator_get(wc->w, i, NULL, &body);
      ai[i].joint = body;
      phys_actuator_desc d;
      if (phys_actuator_get_desc(wc->w, i, &d) == PHYS_OK && d.ctrllimited) {
        ai[i].ctrl_limited = 1;
        ai[i].ctrl_lo = d.ctrlrange[0];
        ai[i].ctrl_hi = d.ctrlrange[1];
      }
      pp[i] = &ai[i];
    }
    mi->n_actuator_info = (size_t)na;
    mi->actuator_info = pp;
  }
  /* sensors: names and dims */
  int ns = world_sensor_count(wc->w);
  if (ns > 0) {
    char **names = calloc((size_t)ns, sizeof *names);
    Physd__V1__SensorInfo **pp = calloc((size_t)ns, sizeof *pp + sizeof **pp);
    if (!names || !pp) {
      free(names);
      free(pp);
      world_model_info_extras_free(mi);
      return -1;
    }
    Physd__V1__SensorInfo *si = (Physd__V1__SensorInfo *)(pp + ns);
    for (int i = 0; i < ns; i++) {
      physd__v1__sensor_info__init(&si[i]);
      si[i].id = i;
      si[i].name = (char *)world_sensor_name(wc->w, i);
      int dim = world_sensor_dim(wc->w, i);
      si[i].dim = dim > 0 ? (uint32_t)dim : 0;
      names[i] = si[i].name;
      pp[i] = &si[i];
    }
    mi->n_sensors = (size_t)ns;
    mi->sensors = names;
    mi->n_sensor_info = (size_t)ns;
    mi->sensor_info = pp;
  }
  /* notices */
  int nn = phys_world_notice_count(wc->w);
  if (nn > 0) {
    char **notes = calloc((size_t)nn, sizeof *notes);
    if (!notes) {
      world_model_info_extras_free(mi);
      return -1;
    }
    for (int i = 0; i < nn; i++) {
      const char *t = phys_world_notice(wc->w, i);
      notes[i] = (char *)(t ? t : "");
    }
    mi->n_notices = (size_t)nn;
    mi->notices = notes;
  }
  /* 1.3: keyframe names by index */
  int nk = phys_world_keyframe_count(wc->w);
  if (nk > 0) {
    char **keys = calloc((size_t)nk, sizeof *keys);
    if (!keys) {
      world_model_info_extras_free(mi);
      return -1;
    }
    for (int i = 0; i < nk; i++) {
      const char *k = phys_world_keyframe_name(wc->w, i);
      keys[i] = (char *)(k ? k : "");
    }
    mi->n_keyframes = (size_t)nk;
    mi->keyframes = keys;
  }
  /* 1.2: the solver in force */
  solver_in_use *su = malloc(sizeof *su); /* freed as mi->solver (its first member) */
  if (!su) {
    world_model_info_extras_free(mi);
    return -1;
  }
  world_solver_in_use(wc, su);
  mi->solver = &su->msg;
  /* 1.8: the geoms and the meshes they use */
  if (world_model_info_geoms(wc, mi)) {
    world_model_info_extras_free(mi);
    return -1;
  }
  return 0;
}

void world_model_info_extras_free(Physd__V1__ModelInfo *mi) {
  free(mi->actuator_info);
  mi->actuator_info = NULL;
  mi->n_actuator_info = 0;
  free(mi->sensors);
  mi->sensors = NULL;
  mi->n_sensors = 0;
  free(mi->sensor_info);
  mi->sensor_info = NULL;
  mi->n_sensor_info = 0;
  free(mi->notices);
  mi->notices = NULL;
  mi->n_notices = 0;
  free(mi->solver);
  mi->solver = NULL;
  free(mi->keyframes);
  mi->keyframes = NULL;
  mi->n_keyframes = 0;
  world_model_info_geoms_free(mi);
}
