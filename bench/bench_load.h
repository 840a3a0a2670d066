/* bench_load.h - how the bench programs that link libphys (physbench, singlestep) turn a scene
 * argument into a world: a model file (MJCF or URDF, told apart by content) or a built-in scene
 * ("builtin:NAME"), with the command line's options put over the file's. */
#ifndef PHYS_BENCH_LOAD_H
#define PHYS_BENCH_LOAD_H

#include "phys/phys.h"

/* Puts the command line's options over `o` (the defaults before loading, then the file's). */
typedef void (*bench_apply_fn)(const void *ctx, phys_world_options *o);

/* Load or build `scene` into *out (the caller destroys it): `lo` (nullable: the defaults) says
 * how to read a file; `apply(ctx, ...)` is called on the defaults before loading (a built-in
 * scene is created with them) and on the loaded world's options after (the file's <option>
 * values are kept where the command line says nothing; the timestep is the file's). The
 * loader's notices and every error go to stderr prefixed with `prog`. Returns 0; 1 when the
 * file cannot be loaded or the options are rejected; 2 for an unknown built-in scene (a usage
 * error). */
int bench_load_world(const char *prog, const char *scene, const phys_load_options *lo,
                     bench_apply_fn apply, const void *ctx, phys_world **out);

#endif
