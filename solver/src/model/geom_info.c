/* geom_info.c - the read-only geometry query (phys_world_get_geom): a geom's shape and its pose
 * in its body's frame, for viewers and exporters. Geoms store their pose in their body's inertial
 * frame (moving bodies), in the body frame (mocap bodies) or in the world (static geoms); this
 * file turns each into the body frame that phys_body_get_state reports. */
#include <string.h>

#include "core/math3.h"
#include "core/world_internal.h"

int phys_world_geom_id_bound(const phys_world *w) { return w->ngeoms; }

phys_status phys_world_get_geom(const phys_world *w, phys_id id, phys_geom_info *out) {
  if (id < 0 || id >= w->ngeoms || !w->geoms[id].alive)
    return phys__fail((phys_world *)w, PHYS_E_NOT_FOUND, "geom %d: no such geom", id);
  const phys_geom *g = &w->geoms[id];
  phys_geom_info gi;
  memset(&gi, 0, sizeof gi);
  gi.type = g->type;
  memcpy(gi.size, g->size, sizeof gi.size);
  gi.body = g->body;
  gi.mesh = g->type == PHYS_GEOM_MESH ? g->mesh : -1;
  double rot[9], q[4];
  if (g->body == PHYS_ID_NONE || !phys__body_ok(w, g->body)) {
    /* a world geom: its stored pose is the world pose */
    gi.body = PHYS_ID_NONE;
    v3_copy(gi.pos, g->lpos);
    memcpy(rot, g->lrot, sizeof rot);
  } else {
    const phys_body *b = &w->bodies[g->body];
    if (b->mocap) {
      v3_copy(gi.pos, g->lpos);
      memcpy(rot, g->lrot, sizeof rot);
    } else if (g->is_static) {
      /* world pose: into the body frame with the inverse of the body's pose */
      double bp[3], bq[4], br[9], d[3];
      phys_body_get_state(w, g->body, bp, bq, NULL, NULL);
      q_to_m3(br, bq);
      v3_sub(d, g->lpos, bp);
      m3_tmulv(gi.pos, br, d);
      m3_tmul(rot, br, g->lrot);
    } else {
      /* inertial frame (ipos, iquat in the body frame) composed with the stored pose */
      double ir[9], off[3];
      q_to_m3(ir, b->iquat);
      m3_mulv(off, ir, g->lpos);
      v3_add(gi.pos, b->ipos, off);
      m3_mul(rot, ir, g->lrot);
    }
  }
  m3_to_q(q, rot);
  q_normalize(q);
  if (q[0] < 0) for (int k = 0; k < 4; k++) q[k] = -q[k];
  memcpy(gi.quat, q, sizeof q);
  *out = gi;
  return PHYS_OK;
}
