/* scenes.h - built-in benchmark scenes of physbench, built through libphys's public API only.
 *
 * A scene is named like "sphere_drop" or "pile_spheres_512"; physbench accepts it as
 * "builtin:NAME". Every scene sets its own timestep (2 ms, or 1/240 s for the pyramid, like the
 * peer MJCF files) over the options it is given; everything else comes from those options.
 */
#ifndef PHYSBENCH_SCENES_H
#define PHYSBENCH_SCENES_H

#include <stddef.h>
#include "phys/phys.h"

/* Build the scene `name` into a new world created with `opt` (NULL: the defaults) and the
 * scene's timestep. Returns 0 and sets *out to a world the caller destroys, or a non-zero
 * phys_status (PHYS_E_NOT_FOUND for an unknown name) with *out NULL and a message in `err`
 * (nullable, `errlen` bytes). */
int phys_scene_build(const char *name, const phys_world_options *opt, phys_world **out,
                     char *err, size_t errlen);

/* Number of entries in the scene list, and the name pattern and one-line description of
 * entry `i` (NULL when out of range). Patterns ending in "_N" take a cube number N. */
int phys_scene_count(void);
const char *phys_scene_name(int i);
const char *phys_scene_description(int i);

#endif
