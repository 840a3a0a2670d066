/* world_act.c - actuator controls from the wire (see world.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "world.h"

int world_check_actuator_control(const world_ctx *wc, const Physd__V1__SetActuatorControl *m,
                                 int **ids_out, size_t *n, perr *e) {
  *ids_out = NULL;
  *n = 0;
  size_t nt = m->n_ids + m->n_names;
  int na = phys_world_actuator_count(wc->w);
  if (m->n_ctrl != nt)
    return perr_set(e, PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT,
                    "SetActuatorControl: %zu ctrl values for %zu targets (ids then names)",
                    m->n_ctrl, nt);
  if (nt == 0) return 0;
  int *ids = malloc(nt * sizeof *ids);
  if (!ids) return perr_set(e, PHYSD__V1__ERROR_CODE__RESOURCE_EXHAUSTED, "out of memory");
  for (size_t i = 0; i < nt; i++) {
    int id;
    if (i < m->n_ids) {
      id = m->ids[i];
      if (id < 0 || id >= na) {
        free(ids);
        return perr_set(e, PHYSD__V1__ERROR_CODE__NOT_FOUND,
                        "actuator %d: no such actuator (the world has %d)", id, na);
      }
    } else {
      const char *name = m->names[i - m->n_ids];
      id = name && *name ? phys_world_find_actuator(wc->w, name) : -1;
      if (id < 0) {
        free(ids);
        return perr_set(e, PHYSD__V1__ERROR_CODE__NOT_FOUND, "actuator \"%s\": no such actuator",
                        name ? name : "");
      }
    }
    if (!isfinite(m->ctrl[i])) {
      free(ids);
      return perr_set(e, PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT,
                      "actuator %d: ctrl must be finite", id);
    }
    for (size_t k = 0; k < i; k++)
      if (ids[k] == id) {
        free(ids);
        return perr_set(e, PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT,
                        "actuator %d: given twice", id);
      }
    ids[i] = id;
  }
  *ids_out = ids;
  *n = nt;
  return 0;
}

void world_apply_actuator_control(world_ctx *wc, const Physd__V1__SetActuatorControl *m,
                                  const int *ids, size_t n) {
  for (size_t i = 0; i < n; i++) phys_actuator_set_ctrl(wc->w, ids[i], m->ctrl[i]);
}
