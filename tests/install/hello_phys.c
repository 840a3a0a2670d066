/* hello_phys.c - the smallest program on libphys, built against INSTALLED files only.
 *
 * scripts/check-install.sh compiles it with `pkg-config --cflags --libs phys` from a staging
 * install and runs it: it loads an MJCF world (the staged worlds/default.xml), steps it and
 * prints the library's version, the time and the first body's height. Not built by meson.
 *
 *   usage: hello_phys WORLD.xml [STEPS]
 * Exit status: 0 the world stepped as asked; 1 an engine call failed (said on stderr); 2 usage. */
#include <phys/phys.h>

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  if (argc < 2 || argc > 3) {
    fprintf(stderr, "usage: hello_phys WORLD.xml [STEPS]\n");
    return 2;
  }
  long steps = argc == 3 ? strtol(argv[2], NULL, 10) : 100;
  if (steps <= 0) {
    fprintf(stderr, "hello_phys: STEPS must be a positive integer\n");
    return 2;
  }
  phys_world *w = NULL;
  phys_error err;
  if (phys_load_mjcf(argv[1], NULL, &w, &err) != PHYS_OK) {
    fprintf(stderr, "hello_phys: %s\n", err.message);
    return 1;
  }
  for (long i = 0; i < steps; i++) {
    if (phys_world_step(w) != PHYS_OK) {
      fprintf(stderr, "hello_phys: step %ld: %s\n", i, phys_world_last_error(w));
      phys_world_destroy(w);
      return 1;
    }
  }
  double pos[3], quat[4], linvel[3], angvel[3];
  int rc = 0;
  if (phys_world_body_count(w) < 1 ||
      phys_body_get_state(w, 0, pos, quat, linvel, angvel) != PHYS_OK) {
    fprintf(stderr, "hello_phys: no body 0 to read\n");
    rc = 1;
  } else {
    printf("libphys %s: %d bodies, t = %.3f s, body 0 at z = %.4f\n", phys_version(),
           phys_world_body_count(w), phys_world_time(w), pos[2]);
  }
  phys_world_destroy(w);
  return rc;
}
