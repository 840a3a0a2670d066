/* keyframe.c - named snapshots of a world's state (MuJoCo's <keyframe><key>).
 *
 * A keyframe is a state blob from phys_world_save_state plus the actuators' controls at the time
 * of the capture; applying it is phys_world_load_state plus phys_actuator_set_ctrl for each
 * actuator. Keyframes belong to the world (model data): they are not part of the state blob and
 * do not enter the model hash.
 */
#include <stdio.h>
#include <string.h>
#include "core/world_internal.h"
#include "core/alloc.h"

phys_status phys_world_add_keyframe(phys_world *w, const char *name, int *out) {
  if (!w) return PHYS_E_INVALID;
  if (name && strlen(name) >= sizeof w->keyframes[0].name)
    return phys__fail(w, PHYS_E_INVALID, "add_keyframe: name longer than %zu bytes",
                      sizeof w->keyframes[0].name - 1);
  if (name && *name && phys_world_find_keyframe(w, name) >= 0)
    return phys__fail(w, PHYS_E_INVALID, "add_keyframe: duplicate name '%s'", name);
  size_t size = phys_world_state_size(w);
  unsigned char *blob = phys__xmalloc(size ? size : 1);
  double *ctrl = phys__xmalloc(w->nactuators ? (size_t)w->nactuators * sizeof(double) : 1);
  if (!blob || !ctrl || PHYS_RESERVE(w->keyframes, w->keyframes_cap, w->nkeyframes + 1)) {
    phys__xfree(blob);
    phys__xfree(ctrl);
    return phys__fail(w, PHYS_E_NOMEM, "add_keyframe: out of memory");
  }
  phys_status st = phys_world_save_state(w, blob, size, NULL);
  if (st) {
    phys__xfree(blob);
    phys__xfree(ctrl);
    return st;
  }
  for (int i = 0; i < w->nactuators; i++) ctrl[i] = w->actuators[i].ctrl;
  phys_keyframe *k = &w->keyframes[w->nkeyframes];
  memset(k, 0, sizeof *k);
  if (name) snprintf(k->name, sizeof k->name, "%s", name);
  k->state = blob;
  k->size = size;
  k->ctrl = ctrl;
  k->nctrl = w->nactuators;
  if (out) *out = w->nkeyframes;
  w->nkeyframes++;
  return PHYS_OK;
}

int phys_world_keyframe_count(const phys_world *w) { return w ? w->nkeyframes : 0; }

const char *phys_world_keyframe_name(const phys_world *w, int i) {
  if (!w || i < 0 || i >= w->nkeyframes) return NULL;
  return w->keyframes[i].name;
}

int phys_world_find_keyframe(const phys_world *w, const char *name) {
  if (!w || !name || !*name) return -1;
  for (int i = 0; i < w->nkeyframes; i++)
    if (strcmp(w->keyframes[i].name, name) == 0) return i;
  return -1;
}

phys_status phys_world_apply_keyframe(phys_world *w, int i) {
  if (!w) return PHYS_E_INVALID;
  if (i < 0 || i >= w->nkeyframes)
    return phys__fail(w, PHYS_E_NOT_FOUND, "apply_keyframe: no keyframe %d (%d keyframes)", i,
                      w->nkeyframes);
  const phys_keyframe *k = &w->keyframes[i];
  if (k->nctrl != w->nactuators)
    return phys__fail(w, PHYS_E_STATE,
                      "apply_keyframe: keyframe %d has %d controls, the world %d actuators", i,
                      k->nctrl, w->nactuators);
  phys_status st = phys_world_load_state(w, k->state, k->size);
  if (st) return st;
  for (int a = 0; a < k->nctrl; a++) w->actuators[a].ctrl = k->ctrl[a];
  return PHYS_OK;
}

void phys__keyframes_free(phys_world *w) {
  for (int i = 0; i < w->nkeyframes; i++) {
    phys__xfree(w->keyframes[i].state);
    phys__xfree(w->keyframes[i].ctrl);
  }
  phys__xfree(w->keyframes);
}
