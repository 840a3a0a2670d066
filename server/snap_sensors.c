/* snap_sensors.c - the daemon's one place that reads sensors (see statebuf.h, world.h). */
#include "statebuf.h"
#include "world.h"

int world_sensor_count(const phys_world *w) { return phys_world_sensor_count(w); }

const char *world_sensor_name(const phys_world *w, int id) {
  const char *n = phys_sensor_get_name(w, id);
  return n ? n : "";
}

int world_sensor_dim(const phys_world *w, int id) { return phys_sensor_dim(w, id); }

int snap_sensor_values(const phys_world *w) {
  int n = 0, ns = phys_world_sensor_count(w);
  for (int i = 0; i < ns; i++) {
    int d = phys_sensor_dim(w, i);
    if (d > 0) n += d;
  }
  return n;
}

int snap_read_sensors(const phys_world *w, double *out, int cap) {
  int n = 0, ns = phys_world_sensor_count(w);
  for (int i = 0; i < ns; i++) {
    int d = phys_sensor_dim(w, i);
    if (d <= 0 || n + d > cap) continue;
    /* a sensor whose object was removed reads as NaN rather than shifting the others */
    if (phys_sensor_read(w, i, out + n) != PHYS_OK)
      for (int k = 0; k < d; k++) out[n + k] = __builtin_nan("");
    n += d;
  }
  return n;
}
