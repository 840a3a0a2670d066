/* world_clone.c - phys_world_clone: a deep copy of a world (model, state, warm starts, keyframes,
 * notices) that steps bit for bit as the original would.
 *
 * The clone starts as a copy of the world's struct; then every owned array is replaced by a copy
 * of the original's (at the original's capacity, so the growth rules of the adding functions
 * hold in the clone too), and every per-step scratch buffer by nothing (it grows again during
 * the clone's warm-up). A pointer field missed here would be shared with the original and freed
 * twice: the batch tests destroy both under AddressSanitizer, which reports it.
 *
 * Model data is copied, not shared: N clones of a humanoid hold N copies of its bodies, geoms
 * and mesh hulls (docs/engine.md, Batches of worlds, says what that costs).
 */
#include <string.h>
#include "core/world_internal.h"
#include "core/alloc.h"
#include "model/sensor.h"

/* Copy `n` elements of `size` bytes from src into a new array of `cap` >= n elements (NULL when
 * cap is 0 or src is NULL). *failed is set on allocation failure and then nothing more is
 * allocated; *dst always ends up owned or NULL. */
static void dup_array(void **dst, const void *src, size_t n, size_t cap, size_t size,
                      int *failed) {
  *dst = NULL;
  if (*failed || !src || cap == 0) return;
  void *p = phys__xmalloc(cap * size);
  if (!p) {
    *failed = 1;
    return;
  }
  memcpy(p, src, n * size);
  *dst = p;
}

/* the array field f of src (count n, capacity cap) into w */
#define DUP(f, n, cap) \
  dup_array((void **)&w->f, src->f, (size_t)(n), (size_t)(cap), sizeof *src->f, &failed)

/* articulation a (a struct copy of the original's, whose arrays are still the original's): its
 * own copies of the arrays, sized as artic.c allocates them (links, nq + 1, nv + 1) */
static void clone_artic(phys_artic *w, const phys_artic *src, int *fail) {
  size_t nl = (size_t)src->nlink, nq = (size_t)src->t.nq + 1, nv = (size_t)src->t.nv + 1;
  int failed = *fail;
  DUP(body, nl, nl);
  DUP(tb, nl, nl);
  DUP(qadr, nl, nl);
  DUP(vadr, nl, nl);
  DUP(vnum, nl, nl);
  DUP(dof_parent, nv, nv);
  DUP(dof_body, nv, nv);
  DUP(ltdl_row, nv, nv);
  DUP(ltdl_i, src->ltdl_row ? (size_t)src->ltdl_row[src->t.nv] : 0, nv * (nv - 1) / 2 + 1);
  DUP(qpos, nq, nq);
  DUP(qvel, nv, nv);
  DUP(damping, nv, nv);
  DUP(stiffness, nv, nv);
  DUP(springref, nv, nv);
  DUP(armature, nv, nv);
  DUP(limited, nv, nv);
  DUP(range, 2 * nv, 2 * nv);
  DUP(limit_lambda, 2 * nv, 2 * nv);
  DUP(frictionloss, nv, nv);
  DUP(friction_lambda, nv, nv);
  DUP(cmd, nv, nv);
  DUP(cmd_force, nv, nv);
  DUP(xrot, 9 * nl, 9 * nl);
  DUP(xpos, 3 * nl, 3 * nl);
  DUP(S, 6 * nv, 6 * nv);
  if (!failed) phys__artic_reindex(w);
  *fail = failed;
}

/* the keyframes' blobs and controls, the notices' strings (arrays of owners) */
static void clone_owners(phys_world *w, const phys_world *src, int *fail) {
  int failed = *fail;
  for (int i = 0; i < w->nkeyframes; i++) {
    phys_keyframe *k = &w->keyframes[i];
    const phys_keyframe *sk = &src->keyframes[i];
    dup_array((void **)&k->state, sk->state, sk->size, sk->size ? sk->size : 1, 1, &failed);
    size_t nc = (size_t)sk->nctrl;
    dup_array((void **)&k->ctrl, sk->ctrl, nc, nc ? nc : 1, sizeof(double), &failed);
  }
  for (int i = 0; i < w->nnotices; i++) {
    size_t n = strlen(src->notices[i]) + 1;
    dup_array((void **)&w->notices[i], src->notices[i], n, n, 1, &failed);
  }
  *fail = failed;
}

phys_status phys_world_clone(const phys_world *src, phys_world **out, phys_error *err) {
  if (!out) return phys__error(err, PHYS_E_INVALID, "clone: out is NULL");
  *out = NULL;
  if (!src) return phys__error(err, PHYS_E_INVALID, "clone: the world to clone is NULL");
  phys_world *w = phys__xcalloc(1, sizeof *w);
  if (!w) return phys__error(err, PHYS_E_NOMEM, "clone: out of memory");
  *w = *src;
  int failed = 0;

  /* model and state arrays */
  DUP(bodies, src->nbodies, src->bodies_cap);
  DUP(geoms, src->ngeoms, src->geoms_cap);
  DUP(connects, src->nconnects, src->connects_cap);
  DUP(artics, src->nartics, src->artics_cap);
  DUP(actuators, src->nactuators, src->actuators_cap);
  DUP(tendons, src->ntendons, src->tendons_cap);
  DUP(sites, src->nsites, src->sites_cap);
  DUP(sensors, src->nsensors, src->sensors_cap);
  DUP(meshes, src->nmeshes, src->meshes_cap);
  DUP(mesh_vert, 3 * src->nmesh_vert, src->mesh_vert_cap);
  DUP(mesh_plane, 4 * src->nmesh_face, src->mesh_plane_cap);
  DUP(mesh_face, 2 * src->nmesh_face, src->mesh_face_cap);
  DUP(mesh_face_vert, src->nmesh_fv, src->mesh_fv_cap);
  DUP(mesh_vadj, 2 * src->nmesh_vert, src->mesh_vadj_cap);
  DUP(mesh_adj, src->nmesh_fv, src->mesh_adj_cap);
  DUP(mesh_tri_vert, 3 * src->nmesh_tv, src->mesh_tv_cap);
  DUP(mesh_tri, 3 * src->nmesh_tri, src->mesh_tri_cap);
  DUP(mesh_edge_own, src->nmesh_tri, src->mesh_eo_cap);
  DUP(mesh_node, src->nmesh_node, src->mesh_node_cap);
  DUP(sdfs, src->nsdfs, src->sdfs_cap);
  DUP(excludes, src->nexcludes, src->excludes_cap);
  DUP(cpairs, src->ncpairs, src->cpairs_cap);
  DUP(keyframes, src->nkeyframes, src->keyframes_cap);
  DUP(notices, src->nnotices, src->notices_cap);
  DUP(contacts, src->ncontacts, src->contacts_cap);
  DUP(warm, src->nwarm, src->warm_cap);
  /* an array of owners that was not copied owns nothing (phys_world_destroy walks the count) */
  if (!w->artics) w->nartics = 0;
  if (!w->keyframes) w->nkeyframes = 0;
  if (!w->notices) w->nnotices = 0;
  for (int i = 0; i < w->nartics; i++) clone_artic(&w->artics[i], &src->artics[i], &failed);
  clone_owners(w, src, &failed);

  /* per-step scratch: nothing, grown again during the clone's warm-up */
  memset(&w->arena, 0, sizeof w->arena);
  w->sparse_cache = NULL;
  w->contacts_spare = NULL;
  w->ncontacts_spare = w->contacts_spare_cap = 0;
  w->saved_state = NULL;
  w->saved_cap = 0;
  w->redo_motion = NULL;
  w->redo_motion_cap = w->redo_pass = 0;
  w->pairs = NULL;
  w->npairs = w->pairs_cap = 0;
  for (int i = 0; i < PHYS_SWEEP_SLICES; i++) {
    w->sweep_pairs[i] = NULL;
    w->sweep_npairs[i] = w->sweep_cap[i] = 0;
  }
  w->trace_valid = w->trace_nislands = 0;
  w->trace_off = w->trace_cnt = w->trace_rows = NULL;
  w->trace_val = NULL;
  w->trace_off_cap = w->trace_cnt_cap = w->trace_rows_cap = w->trace_val_cap = 0;
  w->grad_valid = w->grad_nislands = 0; /* the gradients describe the original's last step */
  w->grad_isl = NULL;
  w->grad_dof = NULL;
  w->grad_contact = NULL;
  w->grad_val = NULL;
  w->grad_isl_cap = w->grad_dof_cap = w->grad_contact_cap = w->grad_val_cap = 0;
  w->batch = NULL;
  phys__threads_reset(w);

  if (failed) {
    /* every pointer is the clone's own or NULL: destroying it frees only its own */
    phys_world_destroy(w);
    return phys__error(err, PHYS_E_NOMEM, "clone: out of memory");
  }
  phys__mesh_relink(w);
  phys__sdf_relink(w);
  *out = w;
  return PHYS_OK;
}
