/* site.c - sites: frames fixed to bodies (or the world) that sensors and clients refer to.
 * Model data: added between steps, never in snapshots, part of the model hash. */
#include <math.h>
#include <string.h>
#include "model/sensor.h"
#include "core/alloc.h"
#include "core/math3.h"

static int name_ok(const char *name) { return !name || strlen(name) < 64; }

phys_status phys_world_add_site(phys_world *w, phys_id body, const double pos[3],
                                const double quat[4], const char *name, int *out) {
  if (body != PHYS_ID_NONE && !phys__body_ok(w, body))
    return phys__fail(w, PHYS_E_NOT_FOUND, "site: body %d: no such body", body);
  if (!pos || !v3_isfinite(pos))
    return phys__fail(w, PHYS_E_INVALID, "site: position missing or not finite");
  double q[4] = {1, 0, 0, 0};
  if (quat) {
    memcpy(q, quat, sizeof q);
    if (!(isfinite(q[0]) && isfinite(q[1]) && isfinite(q[2]) && isfinite(q[3])) ||
        !(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3] > 1e-20))
      return phys__fail(w, PHYS_E_INVALID, "site: quaternion is zero or not finite");
    q_normalize(q);
  }
  if (!name_ok(name)) return phys__fail(w, PHYS_E_INVALID, "site: name longer than 63 bytes");
  if (name && *name && phys_world_find_site(w, name) >= 0)
    return phys__fail(w, PHYS_E_INVALID, "site: duplicate name '%s'", name);
  if (PHYS_RESERVE(w->sites, w->sites_cap, w->nsites + 1))
    return phys__fail(w, PHYS_E_NOMEM, "out of memory");
  phys_site *s = &w->sites[w->nsites];
  memset(s, 0, sizeof *s);
  s->body = body;
  v3_copy(s->pos, pos);
  memcpy(s->quat, q, sizeof q);
  if (name) strcpy(s->name, name);
  if (out) *out = w->nsites;
  w->nsites++;
  return PHYS_OK;
}

int phys_world_site_count(const phys_world *w) { return w->nsites; }

int phys_world_find_site(const phys_world *w, const char *name) {
  if (!name || !*name) return -1;
  for (int i = 0; i < w->nsites; i++)
    if (strcmp(w->sites[i].name, name) == 0) return i;
  return -1;
}

const char *phys_site_get_name(const phys_world *w, int site) {
  return site >= 0 && site < w->nsites ? w->sites[site].name : NULL;
}

phys_status phys_site_get_info(const phys_world *w, int site, phys_id *body, double pos[3],
                               double quat[4]) {
  if (site < 0 || site >= w->nsites)
    return phys__fail((phys_world *)w, PHYS_E_NOT_FOUND, "site %d: no such site (%d)", site,
                      w->nsites);
  const phys_site *s = &w->sites[site];
  if (body) *body = s->body;
  if (pos) v3_copy(pos, s->pos);
  if (quat) memcpy(quat, s->quat, sizeof s->quat);
  return PHYS_OK;
}

void phys__body_frame(const phys_world *w, phys_id id, int com, double pos[3], double q[4]) {
  const phys_body *b = &w->bodies[id];
  if (com) {
    v3_copy(pos, b->x);
    memcpy(q, b->q, 4 * sizeof(double));
    return;
  }
  phys_body_get_state(w, id, pos, q, NULL, NULL);
}

int phys__site_frame(const phys_world *w, int i, double pos[3], double q[4]) {
  const phys_site *s = &w->sites[i];
  if (s->body == PHYS_ID_NONE) {
    v3_copy(pos, s->pos);
    memcpy(q, s->quat, sizeof s->quat);
    return 0;
  }
  if (!phys__body_ok(w, s->body)) return -1;
  double bp[3], bq[4], off[3];
  phys__body_frame(w, s->body, 0, bp, bq);
  q_rotate(off, bq, s->pos);
  v3_add(pos, bp, off);
  q_mul(q, bq, s->quat);
  q_normalize(q);
  return 0;
}

phys_status phys_site_get_pose(const phys_world *w, int site, double pos[3], double quat[4]) {
  if (site < 0 || site >= w->nsites)
    return phys__fail((phys_world *)w, PHYS_E_NOT_FOUND, "site %d: no such site (%d)", site,
                      w->nsites);
  double p[3], q[4];
  if (phys__site_frame(w, site, p, q))
    return phys__fail((phys_world *)w, PHYS_E_STATE, "site %d: its body %d has been removed",
                      site, w->sites[site].body);
  if (pos) v3_copy(pos, p);
  if (quat) memcpy(quat, q, sizeof q);
  return PHYS_OK;
}

uint64_t phys__site_hash(const phys_world *w, uint64_t h) {
  h = phys__fnv1a(h, &w->nsites, sizeof w->nsites);
  for (int i = 0; i < w->nsites; i++) {
    const phys_site *s = &w->sites[i];
    h = phys__fnv1a(h, &s->body, sizeof s->body);
    h = phys__fnv1a(h, s->pos, sizeof s->pos);
    h = phys__fnv1a(h, s->quat, sizeof s->quat);
  }
  return h;
}
