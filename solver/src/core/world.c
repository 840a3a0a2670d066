/* world.c - world lifetime, options, errors and read-only queries. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "core/world_internal.h"
#include "core/last_status.h"
#include "core/alloc.h"
#include "core/blas_threads.h"
#include "core/math3.h"
#include "solvers/gradient.h"
#include "solvers/hessian_sparse.h"
#include "solvers/solver.h"

phys_world_options phys_world_options_default(void) {
  phys_world_options o;
  memset(&o, 0, sizeof o);
  o.timestep = 0.002;
  v3_set(o.gravity, 0.0, 0.0, -9.81);
  o.threads = 1;
  o.adaptive_threads = 1;
  o.max_iterations = 100;
  o.tolerance = 1e-5;
  o.solver = PHYS_SOLVER_SUBADMM;
  phys__solver_options_default(&o); /* the table's defaults (solvers/solver_options.c) */
  o.baumgarte = 0.3;
  o.max_correction = 0.02;
  o.contact_margin = 1e-3;
  o.sleep_enabled = 1;
  o.sleep_speed = 0.02;
  o.sleep_time = 0.5;
  return o;
}

phys_geom_desc phys_geom_desc_default(void) {
  phys_geom_desc g;
  memset(&g, 0, sizeof g);
  g.type = PHYS_GEOM_SPHERE;
  g.size[0] = 1.0;
  q_identity(g.quat);
  g.friction = 1.0;
  g.friction_torsion = 0.005; /* MuJoCo's defaults */
  g.friction_rolling = 0.0001;
  g.density = 1000.0;
  g.mass = -1.0;
  g.condim = 3;
  g.contype = 1;
  g.conaffinity = 1;
  g.mesh = -1;
  g.sdf = -1;
  g.contact_dissipation = -1.0; /* not given */
  return g;
}

phys_body_desc phys_body_desc_default(void) {
  phys_body_desc b;
  memset(&b, 0, sizeof b);
  q_identity(b.quat);
  q_identity(b.inertia_quat);
  b.mass = -1.0;
  return b;
}

phys_status phys__error(phys_error *err, phys_status code, const char *fmt, ...) {
  if (err) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    err->code = code;
  }
  return code;
}

phys_status phys__fail(phys_world *w, phys_status code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(w->error, sizeof w->error, fmt, ap);
  va_end(ap);
  w->error_code = code;
  return code;
}

phys_status phys__last_status_or(const phys_world *w, phys_status fallback) {
  return w->error_code == PHYS_E_NOMEM ? PHYS_E_NOMEM : fallback;
}

phys_status phys_world_options_validate(const phys_world_options *o, phys_error *err) {
  if (!o) return phys__error(err, PHYS_E_INVALID, "options: NULL");
  if (!(isfinite(o->timestep) && o->timestep > 0.0 && o->timestep <= 1.0))
    return phys__error(err, PHYS_E_INVALID, "timestep must be in (0, 1] s, got %g", o->timestep);
  if (!v3_isfinite(o->gravity)) return phys__error(err, PHYS_E_INVALID, "gravity must be finite");
  if (o->threads < 1 || o->threads > 1024)
    return phys__error(err, PHYS_E_INVALID, "threads must be in [1, 1024], got %d", o->threads);
  if (o->adaptive_threads != 0 && o->adaptive_threads != 1)
    return phys__error(err, PHYS_E_INVALID, "adaptive_threads must be 0 or 1, got %d",
                       o->adaptive_threads);
  if (phys_solver_name((int)o->solver) == NULL) {
    phys_error e;
    phys_solver_find(NULL, NULL, &e); /* the list of known names */
    return phys__error(err, PHYS_E_INVALID, "solver: unknown kind %d (%s)", (int)o->solver,
                       e.message);
  }
  if (o->max_iterations < 1)
    return phys__error(err, PHYS_E_INVALID, "max_iterations must be >= 1, got %d",
                       o->max_iterations);
  if (!(isfinite(o->tolerance) && o->tolerance >= 0.0))
    return phys__error(err, PHYS_E_INVALID, "tolerance must be finite and >= 0, got %g",
                       o->tolerance);
  if (o->residual_trace != 0 && o->residual_trace != 1)
    return phys__error(err, PHYS_E_INVALID, "residual_trace must be 0 or 1, got %d",
                       o->residual_trace);
  if (o->gradients != 0 && o->gradients != 1)
    return phys__error(err, PHYS_E_INVALID, "gradients must be 0 or 1, got %d", o->gradients);
  if (o->gradients && !phys__solver_def(o->solver)->gradients)
    return phys__error(err, PHYS_E_INVALID,
                       "gradients: solver %s cannot give gradients through contact; sap, "
                       "icf-lagged and icf-similar can (they keep the factor of a convex "
                       "problem)", phys_solver_name((int)o->solver));
  /* each solver option against its row of the table, then the rules between options */
  phys_status st = phys__solver_options_validate(o, err);
  if (st) return st;
  if (!(o->baumgarte > 0.0 && o->baumgarte <= 1.0))
    return phys__error(err, PHYS_E_INVALID, "baumgarte must be in (0, 1], got %g", o->baumgarte);
  if (!(isfinite(o->max_correction) && o->max_correction > 0.0))
    return phys__error(err, PHYS_E_INVALID, "max_correction must be finite and > 0, got %g",
                       o->max_correction);
  if (!(isfinite(o->contact_margin) && o->contact_margin >= 0.0))
    return phys__error(err, PHYS_E_INVALID, "contact_margin must be finite and >= 0");
  if (!(isfinite(o->sleep_speed) && o->sleep_speed >= 0.0 && isfinite(o->sleep_time) &&
        o->sleep_time >= 0.0))
    return phys__error(err, PHYS_E_INVALID, "sleep_speed and sleep_time must be finite and >= 0");
  return PHYS_OK;
}

phys_status phys_world_create(const phys_world_options *opt, phys_world **out, phys_error *err) {
  if (!out) return phys__error(err, PHYS_E_INVALID, "out: NULL");
  *out = NULL;
  phys_world_options o = opt ? *opt : phys_world_options_default();
  phys_status st = phys_world_options_validate(&o, err);
  if (st) return st;
  phys_world *w = phys__xcalloc(1, sizeof *w);
  if (!w) return phys__error(err, PHYS_E_NOMEM, "out of memory");
  phys__blas_threads_once(); /* the BLAS under a step runs on the stepping thread */
  w->opt = o;
  phys__threads_reset(w);
  *out = w;
  return PHYS_OK;
}

void phys_world_destroy(phys_world *w) {
  if (!w) return;
  if (w->batch) {
    phys__fail(w, PHYS_E_STATE, "destroy: this world belongs to a batch; phys_batch_destroy "
                                "releases it");
    return;
  }
  phys__xfree(w->bodies);
  phys__xfree(w->geoms);
  phys__xfree(w->connects);
  for (int i = 0; i < w->nartics; i++) phys__artic_free(&w->artics[i]);
  phys__xfree(w->artics);
  phys__xfree(w->actuators);
  phys__xfree(w->tendons);
  phys__contact_filters_free(w);
  phys__keyframes_free(w);
  phys__xfree(w->meshes);
  phys__xfree(w->mesh_vert);
  phys__xfree(w->mesh_plane);
  phys__xfree(w->mesh_face);
  phys__xfree(w->mesh_face_vert);
  phys__xfree(w->mesh_vadj);
  phys__xfree(w->mesh_adj);
  phys__xfree(w->mesh_tri_vert);
  phys__xfree(w->mesh_tri);
  phys__xfree(w->mesh_edge_own);
  phys__xfree(w->mesh_node);
  phys__xfree(w->sdfs);
  phys__xfree(w->sites);
  phys__xfree(w->sensors);
  for (int i = 0; i < w->nnotices; i++) phys__xfree(w->notices[i]);
  phys__xfree(w->notices);
  phys__xfree(w->contacts);
  phys__xfree(w->contacts_spare);
  phys__xfree(w->warm);
  phys__xfree(w->saved_state);
  phys__xfree(w->redo_motion);
  phys__sparse_hessian_free_all(w);
  phys__xfree(w->pairs);
  phys__xfree(w->trace_off);
  phys__xfree(w->trace_cnt);
  phys__xfree(w->trace_rows);
  phys__xfree(w->trace_val);
  phys__grad_free(w);
  for (int i = 0; i < PHYS_SWEEP_SLICES; i++) phys__xfree(w->sweep_pairs[i]);
  phys__arena_free(&w->arena);
  phys__xfree(w);
}

const char *phys_world_last_error(const phys_world *w) { return w->error; }

phys_world_options phys_world_get_options(const phys_world *w) { return w->opt; }

phys_status phys_world_set_options(phys_world *w, const phys_world_options *opt) {
  phys_error e;
  phys_status st = phys_world_options_validate(opt, &e);
  if (st) return phys__fail(w, st, "%s", e.message);
  int retune = opt->threads != w->opt.threads || opt->adaptive_threads != w->opt.adaptive_threads;
  w->opt = *opt;
  if (retune) phys__threads_reset(w);
  w->trace_valid = 0; /* the trace described the last step under the old options */
  w->grad_valid = 0;  /* and so did the gradients */
  return PHYS_OK;
}

int phys__body_ok(const phys_world *w, phys_id id) {
  return id >= 0 && id < w->nbodies && w->bodies[id].alive;
}

int phys_world_body_count(const phys_world *w) { return w->nalive; }
int phys_world_body_id_bound(const phys_world *w) { return w->nbodies; }

int phys_world_geom_count(const phys_world *w) {
  int n = 0;
  for (int i = 0; i < w->ngeoms; i++) n += w->geoms[i].alive;
  return n;
}

double phys_world_time(const phys_world *w) { return w->time; }
uint64_t phys_world_step_index(const phys_world *w) { return w->step_index; }
const phys_step_stats *phys_world_stats(const phys_world *w) { return &w->stats; }
int phys_world_contact_count(const phys_world *w) { return w->ncontacts; }
int phys_world_island_count(const phys_world *w) { return w->nislands; }

int phys_body_island(const phys_world *w, phys_id body) {
  if (!phys__body_ok(w, body)) return -1;
  return w->bodies[body].island;
}

phys_status phys_world_get_contact(const phys_world *w, int index, phys_contact_info *out) {
  if (index < 0 || index >= w->ncontacts || !out)
    return phys__fail((phys_world *)w, PHYS_E_NOT_FOUND, "contact %d: no such contact (%d)",
                      index, w->ncontacts);
  const phys_contact *c = &w->contacts[index];
  out->geom_a = c->geom_a;
  out->geom_b = c->geom_b;
  out->body_a = w->geoms[c->geom_a].body;
  out->body_b = w->geoms[c->geom_b].body;
  v3_copy(out->pos, c->pos);
  v3_copy(out->normal, c->frame + 6);
  out->dist = c->dist;
  m3_tmulv(out->impulse, c->frame, c->lambda);
  return PHYS_OK;
}

uint64_t phys__fnv1a(uint64_t h, const void *data, size_t n) {
  const unsigned char *p = data;
  for (size_t i = 0; i < n; i++) {
    h ^= p[i];
    h *= 1099511628211ull;
  }
  return h;
}

int phys__add_notice(phys_world *w, const char *text) {
  if (PHYS_RESERVE(w->notices, w->notices_cap, w->nnotices + 1)) return -1;
  size_t n = strlen(text) + 1;
  char *copy = phys__xmalloc(n);
  if (!copy) return -1;
  memcpy(copy, text, n);
  w->notices[w->nnotices++] = copy;
  return 0;
}

int phys_world_notice_count(const phys_world *w) { return w->nnotices; }

const char *phys_world_notice(const phys_world *w, int i) {
  return i >= 0 && i < w->nnotices ? w->notices[i] : NULL;
}

const char *phys_version(void) { return "0.1.0"; }
