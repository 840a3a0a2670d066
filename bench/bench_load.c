/* bench_load.c - a scene argument into a world for the bench programs (see bench_load.h). */
#include <stdio.h>
#include <string.h>
#include "bench_load.h"
#include "scenes.h"

int bench_load_world(const char *prog, const char *scene, const phys_load_options *lo,
                     bench_apply_fn apply, const void *ctx, phys_world **out) {
  phys_world_options o = phys_world_options_default();
  apply(ctx, &o);
  *out = NULL;
  if (strncmp(scene, "builtin:", 8) == 0) {
    char msg[512];
    int st = phys_scene_build(scene + 8, &o, out, msg, sizeof msg);
    if (st != 0) {
      fprintf(stderr, "%s: %s\n", prog, msg);
      return st == PHYS_E_NOT_FOUND ? 2 : 1;
    }
  } else {
    phys_error err;
    memset(&err, 0, sizeof err);
    phys_load_options dflt = phys_load_options_default();
    if (phys_load_model(scene, lo ? lo : &dflt, &o, out, &err) != PHYS_OK) {
      fprintf(stderr, "%s: cannot load %s: %s\n", prog, scene, err.message);
      return 1;
    }
    /* what the loader accepted but cannot honour */
    for (int i = 0; i < phys_world_notice_count(*out); i++)
      fprintf(stderr, "%s: notice: %s\n", prog, phys_world_notice(*out, i));
  }
  /* the file's <option> overrides iterations: the command line wins, the timestep stays */
  o = phys_world_get_options(*out);
  apply(ctx, &o);
  if (phys_world_set_options(*out, &o) != PHYS_OK) {
    fprintf(stderr, "%s: %s: options rejected: %s\n", prog, scene, phys_world_last_error(*out));
    phys_world_destroy(*out);
    *out = NULL;
    return 1;
  }
  return 0;
}

