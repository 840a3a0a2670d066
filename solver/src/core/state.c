/* state.c - snapshots of a world's state and its hashes: the state hash (over the same fields
 * as a snapshot) and the model hash that a snapshot carries.
 *
 * The state's fields are listed once, in state_table.c; a snapshot is a header followed by the
 * table's PHYS_STATE_SNAPSHOT fields in the table's layout (native endianness, values as stored,
 * no padding bytes). Header (48 bytes): {magic, version, model hash, body count, connect count,
 * warm-start record count, zero, payload bytes, checksum}. Snapshots are for the same build and
 * model: the version, the model hash, the counts and the payload size must match, and every
 * body must be alive or removed as it was when the snapshot was taken. A snapshot restores
 * everything a step or a sensor reads, so restoring one and stepping continues bit for bit as
 * the original did, and sensors read what they read when it was taken.
 *
 * Loading checks, in order, before it changes anything: magic, version, sizes, the checksum,
 * the model hash and counts, then every value by the table's rules (phys__state_validate:
 * finite, unit quaternions, flags 0/1, ids in range, ...) and that a tree's links sleep
 * together, so that a snapshot whose checksum was recomputed over bad values is refused too,
 * and last the alive flags against the world.
 *
 * The checksum is 64-bit FNV-1a (phys__fnv1a, the hash the library already uses for the state
 * and model hashes) over the header up to the checksum and then the payload. It guards against
 * accidental damage (truncation, a flipped bit, a word written over), not against tampering:
 * the value checks do that part. FNV-1a over CRC-32C: one hash function in the library instead
 * of two, and 64 bits, so a random change goes unnoticed with probability 2^-64 instead of
 * 2^-32; each step (h ^ byte) * odd prime is a bijection of h, so two inputs that differ in one
 * byte never collide. Its speed (a multiply per byte, about 1 GB/s) is ample for snapshots,
 * which are read once per Restore. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include "core/world_internal.h"
#include "core/state_table.h"
#include "core/alloc.h"
#include "model/sensor.h"

#define STATE_MAGIC 0x54535950u /* "PYST" */
/* 2: six impulses per equality (welds); 3: the field table (state_table.c): sleeping, sensor
 * records, command and actuator forces, no padding bytes; 4: the dof friction warm start;
 * 5: the header's checksum; 6: the tendon limits' warm start */
#define STATE_VERSION 6u

typedef struct state_header {
  uint32_t magic, version;
  uint64_t model_hash;
  int32_t nbodies, nconnects, nwarm, pad; /* pad: 0 */
  uint64_t payload;  /* bytes after the header */
  uint64_t checksum; /* FNV-1a of the header before this field, then of the payload */
} state_header;
_Static_assert(sizeof(state_header) == 48, "snapshot header: 48 bytes, no padding");

/* the checksum of a header (its bytes before `checksum`) and `payload` bytes at p */
static uint64_t state_checksum(const state_header *hd, const void *p, size_t payload) {
  uint64_t h = phys__fnv1a(PHYS_FNV_START, hd, offsetof(state_header, checksum));
  return phys__fnv1a(h, p, payload);
}

uint64_t phys_world_model_hash(const phys_world *w) {
  uint64_t h = PHYS_FNV_START;
  h = phys__fnv1a(h, &w->opt.timestep, sizeof w->opt.timestep);
  h = phys__fnv1a(h, w->opt.gravity, sizeof w->opt.gravity);
  h = phys__fnv1a(h, &w->nbodies, sizeof w->nbodies);
  for (int i = 0; i < w->nbodies; i++) {
    const phys_body *b = &w->bodies[i];
    h = phys__fnv1a(h, &b->is_static, sizeof b->is_static);
    if (b->mocap) h = phys__fnv1a(h, &b->mocap, sizeof b->mocap); /* older models keep their hash */
    h = phys__fnv1a(h, &b->mass, sizeof b->mass);
    h = phys__fnv1a(h, b->inertia, sizeof b->inertia);
    h = phys__fnv1a(h, &b->geom_count, sizeof b->geom_count);
  }
  h = phys__fnv1a(h, &w->ngeoms, sizeof w->ngeoms);
  for (int i = 0; i < w->ngeoms; i++) {
    const phys_geom *g = &w->geoms[i];
    h = phys__fnv1a(h, &g->type, sizeof g->type);
    h = phys__fnv1a(h, g->size, sizeof g->size);
    h = phys__fnv1a(h, g->lpos, sizeof g->lpos);
    h = phys__fnv1a(h, &g->friction, sizeof g->friction);
    if (g->margin != 0.0 || g->gap != 0.0) { /* only when set: older models keep their hash */
      h = phys__fnv1a(h, &g->margin, sizeof g->margin);
      h = phys__fnv1a(h, &g->gap, sizeof g->gap);
    }
    if (g->type == PHYS_GEOM_MESH) h = phys__fnv1a(h, &g->mesh, sizeof g->mesh);
    if (g->type == PHYS_GEOM_SDF) { /* its profile */
      h = phys__fnv1a(h, &g->sdf, sizeof g->sdf);
      const phys_sdf_desc *d = &w->sdfs[g->sdf].shape.desc;
      h = phys__fnv1a(h, &d->npoint, sizeof d->npoint);
      h = phys__fnv1a(h, &d->thickness, sizeof d->thickness);
      h = phys__fnv1a(h, d->point, sizeof d->point[0] * (size_t)d->npoint);
      if (d->kind == PHYS_SDF_THREAD) { /* only for threads: revolved profiles keep their hash */
        h = phys__fnv1a(h, &d->kind, sizeof d->kind);
        h = phys__fnv1a(h, &d->major_diameter, sizeof d->major_diameter);
        h = phys__fnv1a(h, &d->pitch, sizeof d->pitch);
        h = phys__fnv1a(h, &d->length, sizeof d->length);
      }
    }
  }
  /* mesh hulls: their vertices */
  h = phys__fnv1a(h, &w->nmesh_vert, sizeof w->nmesh_vert);
  if (w->nmesh_vert) h = phys__fnv1a(h, w->mesh_vert, 3 * sizeof(double) * (size_t)w->nmesh_vert);
  if (w->nmesh_tri) { /* non-convex meshes' triangles, only when any: older models keep their hash */
    h = phys__fnv1a(h, &w->nmesh_tri, sizeof w->nmesh_tri);
    h = phys__fnv1a(h, w->mesh_tri, 3 * sizeof(int) * (size_t)w->nmesh_tri);
    h = phys__fnv1a(h, w->mesh_tri_vert, 3 * sizeof(double) * (size_t)w->nmesh_tv);
  }
  h = phys__fnv1a(h, &w->nartics, sizeof w->nartics);
  for (int i = 0; i < w->nartics; i++) {
    const phys_artic *a = &w->artics[i];
    h = phys__fnv1a(h, &a->nlink, sizeof a->nlink);
    for (int l = 0; l < a->nlink; l++) h = phys__fnv1a(h, &a->tb[l].joint, sizeof a->tb[l].joint);
  }
  h = phys__fnv1a(h, &w->nactuators, sizeof w->nactuators);
  for (int i = 0; i < w->ntendons; i++) { /* only with tendons: older models keep their hash */
    const phys_tendon_desc *d = &w->tendons[i].desc;
    h = phys__fnv1a(h, &d->njoints, sizeof d->njoints);
    h = phys__fnv1a(h, d->joint, sizeof d->joint[0] * (size_t)d->njoints);
    h = phys__fnv1a(h, d->coef, sizeof d->coef[0] * (size_t)d->njoints);
    h = phys__fnv1a(h, &d->limited, sizeof d->limited);
    if (d->limited) h = phys__fnv1a(h, d->range, sizeof d->range);
    h = phys__fnv1a(h, &d->stiffness, sizeof d->stiffness);
    h = phys__fnv1a(h, &d->damping, sizeof d->damping);
    h = phys__fnv1a(h, &d->springlength, sizeof d->springlength);
    if (w->tendons[i].spatial) { /* only spatial ones: fixed tendons keep their hash */
      h = phys__fnv1a(h, &w->tendons[i].nsites, sizeof w->tendons[i].nsites);
      h = phys__fnv1a(h, w->tendons[i].site, sizeof(int) * (size_t)w->tendons[i].nsites);
    }
  }
  h = phys__site_hash(w, h);
  h = phys__fnv1a(h, &w->nconnects, sizeof w->nconnects);
  for (int i = 0; i < w->nconnects; i++) {
    const phys_connect *c = &w->connects[i];
    h = phys__fnv1a(h, &c->body1, sizeof c->body1);
    h = phys__fnv1a(h, &c->body2, sizeof c->body2);
    /* a mocap side's world anchor moves with it (state): its body-frame anchor is the model */
    int m1 = c->body1 != PHYS_ID_NONE && w->bodies[c->body1].mocap;
    h = phys__fnv1a(h, m1 ? c->mocap1 : c->anchor1, sizeof c->anchor1);
    h = phys__fnv1a(h, &c->weld, sizeof c->weld);
    h = phys__fnv1a(h, c->qrel, sizeof c->qrel);
    h = phys__fnv1a(h, &c->soft, sizeof c->soft);
    h = phys__fnv1a(h, c->stiffness, sizeof c->stiffness);
    h = phys__fnv1a(h, c->damping, sizeof c->damping);
  }
  h = phys__contact_filters_hash(w, h); /* contact exclusions and explicit pairs */
  return h;
}

/* ---- state hash ---------------------------------------------------------------------------- */

uint64_t phys_world_state_hash(const phys_world *w) {
  return phys__state_hash(w, PHYS_STATE_HASH, PHYS_FNV_START);
}

/* ---- snapshots ----------------------------------------------------------------------------- */

size_t phys_world_state_size(const phys_world *w) {
  return sizeof(state_header) + phys__state_size(w, PHYS_STATE_SNAPSHOT, w->nwarm);
}

phys_status phys_world_save_state(const phys_world *w, void *buf, size_t size, size_t *written) {
  size_t need = phys_world_state_size(w);
  if (written) *written = need;
  if (!buf || size < need)
    return phys__fail((phys_world *)w, PHYS_E_INVALID,
                      "save_state: buffer of %zu bytes, %zu needed", size, need);
  state_header hd;
  memset(&hd, 0, sizeof hd);
  hd.magic = STATE_MAGIC;
  hd.version = STATE_VERSION;
  hd.model_hash = phys_world_model_hash(w);
  hd.nbodies = w->nbodies;
  hd.nconnects = w->nconnects;
  hd.nwarm = w->nwarm;
  hd.payload = need - sizeof hd;
  phys__state_write(w, PHYS_STATE_SNAPSHOT, (char *)buf + sizeof hd);
  hd.checksum = state_checksum(&hd, (char *)buf + sizeof hd, hd.payload);
  memcpy(buf, &hd, sizeof hd);
  return PHYS_OK;
}

/* check a snapshot's header and checksum against the world; PHYS_OK or the failure */
static phys_status check_header(phys_world *w, const state_header *hd, const void *buf,
                                size_t size) {
  if (hd->magic != STATE_MAGIC)
    return phys__fail(w, PHYS_E_INVALID, "load_state: not a libphys snapshot (magic %08x)",
                      hd->magic);
  if (hd->version != STATE_VERSION)
    return phys__fail(w, PHYS_E_INVALID,
                      "load_state: snapshot format version %u, this build reads version %u",
                      hd->version, STATE_VERSION);
  if (hd->payload != size - sizeof *hd)
    return phys__fail(w, PHYS_E_INVALID,
                      "load_state: size mismatch: header says %llu payload bytes, %zu given",
                      (unsigned long long)hd->payload, size - sizeof *hd);
  uint64_t sum = state_checksum(hd, (const char *)buf + sizeof *hd, size - sizeof *hd);
  if (hd->checksum != sum)
    return phys__fail(w, PHYS_E_INVALID,
                      "load_state: checksum mismatch (stored %016llx, computed %016llx): the "
                      "snapshot is damaged", (unsigned long long)hd->checksum,
                      (unsigned long long)sum);
  if (hd->pad != 0)
    return phys__fail(w, PHYS_E_INVALID, "load_state: corrupt snapshot (reserved word %d)",
                      hd->pad);
  uint64_t mine = phys_world_model_hash(w);
  if (hd->model_hash != mine || hd->nbodies != w->nbodies || hd->nconnects != w->nconnects)
    return phys__fail(w, PHYS_E_STATE,
                      "load_state: model hash mismatch: snapshot of model %016llx (%d bodies, "
                      "%d connects), the world is %016llx (%d and %d)",
                      (unsigned long long)hd->model_hash, hd->nbodies, hd->nconnects,
                      (unsigned long long)mine, w->nbodies, w->nconnects);
  if (hd->nwarm < 0)
    return phys__fail(w, PHYS_E_INVALID, "load_state: corrupt snapshot (%d warm-start records)",
                      hd->nwarm);
  size_t need = phys__state_size(w, PHYS_STATE_SNAPSHOT, hd->nwarm);
  if (hd->payload != need)
    return phys__fail(w, PHYS_E_INVALID,
                      "load_state: size mismatch: payload of %llu bytes; this world's snapshot "
                      "with %d warm-start records has %zu", (unsigned long long)hd->payload,
                      hd->nwarm, need);
  return PHYS_OK;
}

/* 0 when the links of every tree in `payload` sleep together (the step's islands take a tree
 * whole: a tree with one link asleep and another awake crashed the next step, found by
 * fuzz_snapshot); else -1 with the tree and link in why */
static int check_tree_sleep(const phys_world *w, const char *payload, int nwarm, char *why,
                            size_t why_size) {
  size_t stride = 0;
  long off0 = phys__state_offset_stride(w, PHYS_STATE_SNAPSHOT, "body.asleep", nwarm, &stride);
  if (off0 < 0) return 0;
  for (int i = 0; i < w->nartics; i++) {
    const phys_artic *a = &w->artics[i];
    int first = 0;
    for (int l = 0; l < a->nlink; l++) {
      int v;
      memcpy(&v, payload + off0 + (size_t)a->body[l] * stride, sizeof v);
      if (l == 0) {
        first = v;
      } else if (v != first) {
        snprintf(why, why_size, "body.asleep of body %d = %d, but %d for body %d of the same "
                 "tree: a tree's links sleep together", a->body[l], v, first, a->body[0]);
        return -1;
      }
    }
  }
  return 0;
}

phys_status phys_world_load_state(phys_world *w, const void *buf, size_t size) {
  /* check everything and reserve before changing anything */
  state_header hd;
  if (!buf || size < sizeof hd)
    return phys__fail(w, PHYS_E_INVALID, "load_state: %zu bytes is not a snapshot", size);
  memcpy(&hd, buf, sizeof hd);
  phys_status st = check_header(w, &hd, buf, size);
  if (st) return st;
  const char *payload = (const char *)buf + sizeof hd;
  char why[256];
  if (phys__state_validate(w, PHYS_STATE_SNAPSHOT, payload, hd.nwarm, why, sizeof why))
    return phys__fail(w, PHYS_E_INVALID, "load_state: invalid value: %s", why);
  if (check_tree_sleep(w, payload, hd.nwarm, why, sizeof why))
    return phys__fail(w, PHYS_E_INVALID, "load_state: invalid value: %s", why);
  if (phys__state_check(w, PHYS_STATE_SNAPSHOT, payload, hd.nwarm, why, sizeof why))
    return phys__fail(w, PHYS_E_STATE, "load_state: %s (a body was removed or the snapshot is "
                      "of another world)", why);
  if (PHYS_RESERVE(w->warm, w->warm_cap, hd.nwarm))
    return phys__fail(w, PHYS_E_NOMEM, "load_state: out of memory");

  /* apply; the last step's contacts, islands and statistics belong to another state */
  phys__state_read(w, PHYS_STATE_SNAPSHOT, payload, hd.nwarm);
  w->ncontacts = 0;
  w->nislands = 0;
  memset(&w->stats, 0, sizeof w->stats);
  return PHYS_OK;
}
