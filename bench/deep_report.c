/* deep_report.c - per geom-type pair accounting of deep contacts (deep_report.h). */
#include <stdio.h>
#include "deep_report.h"

const char *deep_report_type_name(int type) {
  static const char *const names[PHYS_GEOM_TYPE_COUNT] = {
      "plane", "sphere", "capsule", "box", "cylinder", "ellipsoid", "mesh", "sdf"};
  return type >= 0 && type < PHYS_GEOM_TYPE_COUNT ? names[type] : "?";
}

/* body b's name into out (64 bytes) */
static void body_name(const phys_world *w, phys_id b, char *out) {
  const char *n = b == PHYS_ID_NONE ? "(static)" : phys_body_get_name(w, b);
  if (n && *n) snprintf(out, 64, "%s", n);
  else snprintf(out, 64, "body %d", (int)b);
}

/* the type of geom g, or -1 */
static int geom_type(const phys_world *w, phys_id g) {
  phys_geom_info gi;
  if (phys_world_get_geom(w, g, &gi) != PHYS_OK) return -1;
  return (int)gi.type;
}

void deep_report_step(deep_report *r, const phys_world *w, long step) {
  int over_any = 0;
  /* the pairs that already counted this step (a step counts once per pair) */
  unsigned char seen[PHYS_GEOM_TYPE_COUNT][PHYS_GEOM_TYPE_COUNT] = {{0}};
  int n = phys_world_contact_count(w);
  for (int i = 0; i < n; i++) {
    phys_contact_info c;
    if (phys_world_get_contact(w, i, &c) != PHYS_OK) continue;
    int ta = geom_type(w, c.geom_a), tb = geom_type(w, c.geom_b);
    if (ta < 0 || tb < 0) continue;
    if (ta > tb) {
      int t = ta;
      ta = tb;
      tb = t;
    }
    deep_pair *p = &r->pair[ta][tb];
    double depth = -c.dist;
    p->contacts++;
    if (depth > p->max_depth) {
      p->max_depth = depth;
      p->worst_step = step;
      body_name(w, c.body_a, p->worst_a);
      body_name(w, c.body_b, p->worst_b);
    }
    if (depth > r->threshold) {
      p->contacts_over++;
      if (!seen[ta][tb]) p->steps_over++;
      seen[ta][tb] = 1;
      over_any = 1;
    }
  }
  r->steps++;
  if (over_any) r->steps_over++;
}
