/* world.c - loading, reset, snapshots, model info and checked entity operations (world.h). */
#define _GNU_SOURCE
#include "world.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#define WORLD_MAX_DOC (64u << 20)  /* largest scene document read from a file */
#define WORLD_MAX_GEOMS 64         /* geoms per AddBody */
#define SNAP_MAGIC "PSNP"
#define SNAP_VERSION 1u
#define SNAP_HEADER 48             /* magic 4, version 4, model hash 8, state size 8, engine 16, pad 8 */

int perr_set(perr *e, int code, const char *fmt, ...) {
  e->code = code;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(e->msg, sizeof e->msg, fmt, ap);
  va_end(ap);
  return -1;
}

/* engine status -> protocol error code */
static int code_of(phys_status st) {
  switch (st) {
  case PHYS_E_NOT_FOUND: return PHYSD__V1__ERROR_CODE__NOT_FOUND;
  case PHYS_E_STATE: return PHYSD__V1__ERROR_CODE__INCORRECT_STATE;
  case PHYS_E_NOMEM: return PHYSD__V1__ERROR_CODE__RESOURCE_EXHAUSTED;
  case PHYS_E_UNSUPPORTED: return PHYSD__V1__ERROR_CODE__UNSUPPORTED;
  case PHYS_E_IO: return PHYSD__V1__ERROR_CODE__NOT_FOUND;
  case PHYS_E_NUMERIC: return PHYSD__V1__ERROR_CODE__INTERNAL;
  default: return PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT;
  }
}

static int fail_world(world_ctx *wc, phys_status st, perr *e) {
  return perr_set(e, code_of(st), "%s", phys_world_last_error(wc->w));
}

/* Make `nw` the current world: the old one goes. Takes ownership of nw and doc. */
static void install(world_ctx *wc, phys_world *nw, char *doc, size_t len, const char *name) {
  phys_world_destroy(wc->w);
  if (doc != wc->doc) free(wc->doc);
  wc->w = nw;
  wc->doc = doc;
  wc->doc_len = len;
  if (name != wc->name) snprintf(wc->name, sizeof wc->name, "%s", name ? name : "");
  phys_world_options o = phys_world_get_options(nw);
  wc->timestep_ns = (uint64_t)llround(o.timestep * 1e9);
  if (wc->timestep_ns == 0) wc->timestep_ns = 1;
  wc->gen++;
}

/* the options a document is parsed with: the daemon's threads and default solver */
static phys_world_options base_options(const world_ctx *wc) {
  phys_world_options o = phys_world_options_default();
  o.threads = wc->threads;
  solver_choice_apply(&wc->solver_default, &o);
  return o;
}

/* Apply a solver choice to a freshly parsed world (before it is installed); `fresh` (a new
 * request's choice, not the remembered one of a Reset): its options must be ones the solver in
 * force reads. 0 or -1. */
static int apply_over(phys_world *nw, const solver_choice *over, int fresh, perr *e) {
  phys_world_options o = phys_world_get_options(nw);
  if (fresh && solver_choice_check_applies(over, over->has_kind ? over->kind : o.solver, e))
    return -1;
  solver_choice_apply(over, &o);
  if (phys_world_set_options(nw, &o) != PHYS_OK)
    return perr_set(e, PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT, "%s", phys_world_last_error(nw));
  return 0;
}

int world_init_empty(world_ctx *wc, int threads, const solver_choice *solver_default, perr *e) {
  memset(wc, 0, sizeof *wc);
  wc->world_count = 1;
  wc->threads = threads;
  if (solver_default) wc->solver_default = *solver_default;
  phys_world_options o = base_options(wc);
  phys_world *nw = NULL;
  phys_error err;
  if (phys_world_create(&o, &nw, &err) != PHYS_OK)
    return perr_set(e, code_of(err.code), "%s", err.message);
  install(wc, nw, NULL, 0, "empty");
  return 0;
}

void world_free(world_ctx *wc) {
  world_batch_install(wc, NULL, NULL, 0);
  phys_world_destroy(wc->w);
  wc->w = NULL;
  free(wc->doc);
  wc->doc = NULL;
  load_opts_free(&wc->lopts);
}

/* Install `nw` with a batch of `count` copies of it (count <= 1: a single world). On error
 * (the batch could not be made) nw is destroyed and the context is unchanged. 0 or -1. */
static int install_batch(world_ctx *wc, phys_world *nw, int count, char *doc, size_t len,
                         const char *name, perr *e) {
  phys_batch *b = NULL;
  void *state0 = NULL;
  size_t slen = 0;
  if (count > 1 && world_batch_make(wc, nw, count, &b, &state0, &slen, e)) {
    phys_world_destroy(nw);
    return -1;
  }
  install(wc, nw, doc, len, name);
  world_batch_install(wc, b, state0, slen);
  return 0;
}

/* Parse a document into a new world (with `count` copies of it, 1.9) and install it; the doc
 * and the options (moved) become the world's. On error both are released and the world is
 * unchanged. */
static int load_doc(world_ctx *wc, char *doc, size_t len, const char *name, load_opts *lo,
                    const solver_choice *over, int count, perr *e) {
  phys_world_options o = base_options(wc);
  phys_world *nw = NULL;
  phys_error err;
  phys_status st = world_parse(lo, doc, len, name, &o, &nw, &err);
  if (st != PHYS_OK || apply_over(nw, over, 1, e)) {
    if (st != PHYS_OK) perr_set(e, code_of(st), "%s", err.message);
    phys_world_destroy(nw);
    free(doc);
    load_opts_free(lo);
    return -1;
  }
  if (install_batch(wc, nw, count, doc, len, name, e)) {
    free(doc);
    load_opts_free(lo);
    return -1;
  }
  wc->solver_over = *over;
  load_opts_free(&wc->lopts);
  wc->lopts = *lo;
  memset(lo, 0, sizeof *lo);
  return 0;
}

static int read_file(const char *path, char **out, size_t *len, perr *e) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return perr_set(e, errno == ENOENT ? PHYSD__V1__ERROR_CODE__NOT_FOUND
                                       : PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT,
                    "%s: %s", path, strerror(errno));
  struct stat sb;
  if (fstat(fd, &sb) || !S_ISREG(sb.st_mode) || (uint64_t)sb.st_size > WORLD_MAX_DOC) {
    close(fd);
    return perr_set(e, PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT,
                    "%s: not a regular file of at most %u bytes", path, WORLD_MAX_DOC);
  }
  char *buf = malloc((size_t)sb.st_size + 1);
  if (!buf) {
    close(fd);
    return perr_set(e, PHYSD__V1__ERROR_CODE__RESOURCE_EXHAUSTED, "out of memory");
  }
  size_t have = 0;
  while (have < (size_t)sb.st_size) {
    ssize_t r = read(fd, buf + have, (size_t)sb.st_size - have);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    have += (size_t)r;
  }
  close(fd);
  buf[have] = 0;
  *out = buf;
  *len = have;
  return 0;
}

/* the directory of a file path (a copy in `dir`) */
static void dir_of(const char *path, char *dir, size_t n) {
  snprintf(dir, n, "%s", path);
  char *slash = strrchr(dir, '/');
  if (slash == dir) slash[1] = 0;
  else if (slash) *slash = 0;
  else snprintf(dir, n, ".");
}

/* the solver choice of a LoadWorld (`m` nullable: none) */
static int over_of(const Physd__V1__LoadWorld *m, solver_choice *c, perr *e) {
  if (!m) {
    memset(c, 0, sizeof *c);
    return 0;
  }
  return solver_choice_from_request(c, m->solver, m->has_max_iterations, m->max_iterations,
                                    m->has_tolerance, m->tolerance, e) ||
                 solver_choice_add_options(c, m->solver_options, m->n_solver_options, e)
             ? -1
             : 0;
}

/* read a file, work out its format and options, and load it */
static int load_file(world_ctx *wc, const char *real, const char *name,
                     const Physd__V1__LoadWorld *m, char *const *roots, int nroots, perr *e) {
  solver_choice over;
  if (over_of(m, &over, e)) return -1;
  char *doc = NULL;
  size_t len = 0;
  if (read_file(real, &doc, &len, e)) return -1;
  char dir[PATH_MAX];
  dir_of(real, dir, sizeof dir);
  load_opts lo;
  if (load_opts_from_msg(&lo, m, real, doc, len, dir, roots, nroots, e)) {
    free(doc);
    return -1;
  }
  return load_doc(wc, doc, len, name, &lo, &over, m ? (int)m->world_count : 1, e);
}

int world_load_trusted(world_ctx *wc, const char *path, perr *e) {
  char real[PATH_MAX];
  if (!realpath(path, real)) snprintf(real, sizeof real, "%s", path);
  return load_file(wc, real, path, NULL, NULL, 0, e);
}

int world_load_path(world_ctx *wc, const char *path, const Physd__V1__LoadWorld *m,
                    char *const *roots, int nroots, perr *e) {
  /* the resolved path must be inside an allowed root (also resolved) */
  char real[PATH_MAX];
  if (world_path_allowed(path, roots, nroots, "", real, e)) return -1;
  return load_file(wc, real, path, m, roots, nroots, e);
}

int world_load_bytes(world_ctx *wc, const uint8_t *data, size_t len, const char *name,
                     const Physd__V1__LoadWorld *m, char *const *roots, int nroots, perr *e) {
  if (len > WORLD_MAX_DOC)
    return perr_set(e, PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT, "document too large");
  solver_choice over;
  if (over_of(m, &over, e)) return -1;
  char *doc = malloc(len + 1);
  if (!doc) return perr_set(e, PHYSD__V1__ERROR_CODE__RESOURCE_EXHAUSTED, "out of memory");
  if (len) memcpy(doc, data, len); /* empty bytes arrive as data NULL (fuzz_frames) */
  doc[len] = 0;
  load_opts lo;
  if (load_opts_from_msg(&lo, m, NULL, doc, len, NULL, roots, nroots, e)) {
    free(doc);
    return -1;
  }
  return load_doc(wc, doc, len, name && *name ? name : "(data)", &lo, &over,
                  m ? (int)m->world_count : 1, e);
}

int world_reset(world_ctx *wc, perr *e) {
  if (!wc->doc) {
    phys_world_options o = base_options(wc);
    solver_choice_apply(&wc->solver_over, &o);
    phys_world *nw = NULL;
    phys_error err;
    if (phys_world_create(&o, &nw, &err) != PHYS_OK)
      return perr_set(e, code_of(err.code), "%s", err.message);
    return install_batch(wc, nw, wc->world_count, NULL, 0, wc->name, e);
  }
  phys_world_options o = base_options(wc);
  phys_world *nw = NULL;
  phys_error err;
  phys_status st = world_parse(&wc->lopts, wc->doc, wc->doc_len, wc->name, &o, &nw, &err);
  if (st != PHYS_OK) return perr_set(e, code_of(st), "%s", err.message);
  if (apply_over(nw, &wc->solver_over, 0, e)) {
    phys_world_destroy(nw);
    return -1;
  }
  return install_batch(wc, nw, wc->world_count, wc->doc, wc->doc_len, wc->name, e);
}

/* ---- snapshots ---------------------------------------------------------------------------- */

uint8_t *world_snapshot(world_ctx *wc, size_t *len, perr *e) {
  size_t n = phys_world_state_size(wc->w);
  uint8_t *buf = malloc(SNAP_HEADER + n);
  if (!buf) {
    perr_set(e, PHYSD__V1__ERROR_CODE__RESOURCE_EXHAUSTED, "out of memory");
    return NULL;
  }
  memset(buf, 0, SNAP_HEADER);
  uint32_t ver = SNAP_VERSION;
  uint64_t hash = phys_world_model_hash(wc->w), size = n;
  memcpy(buf, SNAP_MAGIC, 4);
  memcpy(buf + 4, &ver, 4);
  memcpy(buf + 8, &hash, 8);
  memcpy(buf + 16, &size, 8);
  strncpy((char *)buf + 24, phys_version(), 15);
  phys_status st = phys_world_save_state(wc->w, buf + SNAP_HEADER, n, NULL);
  if (st != PHYS_OK) {
    free(buf);
    fail_world(wc, st, e);
    return NULL;
  }
  *len = SNAP_HEADER + n;
  return buf;
}

int world_restore(world_ctx *wc, const uint8_t *data, size_t len, perr *e) {
  if (!data || len < SNAP_HEADER || memcmp(data, SNAP_MAGIC, 4) != 0)
    return perr_set(e, PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT, "not a physd snapshot");
  uint32_t ver;
  uint64_t hash, size;
  memcpy(&ver, data + 4, 4);
  memcpy(&hash, data + 8, 8);
  memcpy(&size, data + 16, 8);
  /* every header byte is checked exactly (the engine state carries its own checksum): the
   * engine name zero-padded as Snapshot writes it, the last 8 bytes zero */
  char engine[16] = {0}, mine_engine[16] = {0};
  memcpy(engine, data + 24, 15);
  strncpy(mine_engine, phys_version(), 15);
  if (ver != SNAP_VERSION || memcmp(data + 24, mine_engine, 16) != 0)
    return perr_set(e, PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT,
                    "version mismatch: snapshot format %u of engine %s; this server writes %u "
                    "of %s", ver, engine, SNAP_VERSION, phys_version());
  static const uint8_t zero8[8];
  if (memcmp(data + 40, zero8, 8) != 0)
    return perr_set(e, PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT,
                    "corrupt snapshot header (reserved bytes 40..47 not zero)");
  uint64_t mine = phys_world_model_hash(wc->w);
  if (hash != mine)
    return perr_set(e, PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT,
                    "model hash mismatch: snapshot of another model (hash %016llx, world "
                    "%016llx)",
                    (unsigned long long)hash, (unsigned long long)mine);
  if (size != len - SNAP_HEADER)
    return perr_set(e, PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT,
                    "size mismatch: header says %llu state bytes, %zu given (truncated "
                    "snapshot)", (unsigned long long)size, len - SNAP_HEADER);
  phys_status st = phys_world_load_state(wc->w, data + SNAP_HEADER, (size_t)size);
  if (st != PHYS_OK) return fail_world(wc, st, e);
  wc->gen++;
  return 0;
}

/* ---- joints ------------------------------------------------------------------------------ */

const char *world_joint_type_name(phys_joint_type t) {
  switch (t) {
  case PHYS_JOINT_TYPE_HINGE: return "hinge";
  case PHYS_JOINT_TYPE_SLIDE: return "slide";
  case PHYS_JOINT_TYPE_BALL: return "ball";
  case PHYS_JOINT_TYPE_FREE: return "free";
  case PHYS_JOINT_TYPE_FIXED: return "fixed";
  }
  return "unknown";
}

static int model_has_joints(const world_ctx *wc) {
  int bound = phys_world_body_id_bound(wc->w);
  for (int id = 0; id < bound; id++)
    if (phys_link_get_joint_info(wc->w, id, NULL, NULL, NULL) == PHYS_OK) return 1;
  return 0;
}

/* one value array of a command: empty, or one value per joint id, all finite (and >= 0 for
 * gains) */
static int check_values(const char *what, const double *v, size_t n, size_t nids, int gain,
                        perr *e) {
  if (n != 0 && n != nids)
    return perr_set(e, PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT,
                    "%s has %zu values for %zu joint ids (give none or one per joint)", what, n,
                    nids);
  for (size_t i = 0; i < n; i++) {
    if (!isfinite(v[i]))
      return perr_set(e, PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT, "%s[%zu] is not finite", what,
                      i);
    if (gain && v[i] < 0.0)
      return perr_set(e, PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT, "%s[%zu] = %g is negative",
                      what, i, v[i]);
  }
  return 0;
}

int world_check_joint_command(const world_ctx *wc, const Physd__V1__SetJointCommand *c,
                              perr *e) {
  if ((int)c->mode < 0 || (int)c->mode > PHYSD__V1__COMMAND_MODE__CMD_PD)
    return perr_set(e, PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT, "unknown command mode %d",
                    (int)c->mode);
  size_t n = c->n_joint_ids;
  if (check_values("q", c->q, c->n_q, n, 0, e) || check_values("qd", c->qd, c->n_qd, n, 0, e) ||
      check_values("tau", c->tau, c->n_tau, n, 0, e) ||
      check_values("kp", c->kp, c->n_kp, n, 1, e) || check_values("kd", c->kd, c->n_kd, n, 1, e))
    return -1;
  if (n == 0) return 0;
  int bound = phys_world_body_id_bound(wc->w);
  for (size_t i = 0; i < n; i++) {
    int32_t id = c->joint_ids[i];
    phys_joint_type type;
    if (phys_link_get_joint_info(wc->w, id, &type, NULL, NULL) != PHYS_OK) {
      if (!model_has_joints(wc))
        return perr_set(e, PHYSD__V1__ERROR_CODE__NOT_FOUND, "joint %d: the model has no joints",
                        id);
      return perr_set(e, PHYSD__V1__ERROR_CODE__NOT_FOUND,
                      "joint %d: no such joint (joint ids are the body ids of links)", id);
    }
    if (type != PHYS_JOINT_TYPE_HINGE && type != PHYS_JOINT_TYPE_SLIDE)
      return perr_set(e, PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT,
                      "joint %d: a %s joint takes no commands (hinge and slide only)", id,
                      world_joint_type_name(type));
  }
  /* every id is a link, so below the bound: a byte per id finds repeats */
  if (n > 1) {
    uint8_t *seen = calloc((size_t)bound, 1);
    if (!seen) return perr_set(e, PHYSD__V1__ERROR_CODE__RESOURCE_EXHAUSTED, "out of memory");
    for (size_t i = 0; i < n; i++) {
      if (seen[c->joint_ids[i]]++) {
        free(seen);
        return perr_set(e, PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT,
                        "joint %d is given more than once", c->joint_ids[i]);
      }
    }
    free(seen);
  }
  return 0;
}

static phys_command_mode mode_of(Physd__V1__CommandMode m) {
  switch (m) {
  case PHYSD__V1__COMMAND_MODE__CMD_POSITION: return PHYS_CMD_POSITION;
  case PHYSD__V1__COMMAND_MODE__CMD_VELOCITY: return PHYS_CMD_VELOCITY;
  case PHYSD__V1__COMMAND_MODE__CMD_PD: return PHYS_CMD_PD;
  default: return PHYS_CMD_TORQUE;
  }
}

void world_joint_command_of(const Physd__V1__SetJointCommand *c, size_t i,
                            phys_joint_command *out) {
  memset(out, 0, sizeof *out);
  out->mode = mode_of(c->mode);
  out->q = c->n_q ? c->q[i] : 0.0;
  out->qd = c->n_qd ? c->qd[i] : 0.0;
  out->tau = c->n_tau ? c->tau[i] : 0.0;
  out->kp = c->n_kp ? c->kp[i] : 0.0;
  out->kd = c->n_kd ? c->kd[i] : 0.0;
  out->tau_max = 0.0; /* not on the wire: unlimited */
}

int world_apply_joint_command(world_ctx *wc, const Physd__V1__SetJointCommand *c, perr *e) {
  if (world_check_joint_command(wc, c, e)) return -1;
  for (size_t i = 0; i < c->n_joint_ids; i++) {
    phys_joint_command jc;
    world_joint_command_of(c, i, &jc);
    phys_status st = phys_link_set_command(wc->w, c->joint_ids[i], &jc);
    /* cannot fail after the check; if the engine disagrees, say so (earlier joints are set) */
    if (st != PHYS_OK)
      return perr_set(e, PHYSD__V1__ERROR_CODE__INTERNAL, "joint %d: %s", c->joint_ids[i],
                      phys_world_last_error(wc->w));
  }
  return 0;
}

/* ---- model info --------------------------------------------------------------------------- */

int world_model_info(const world_ctx *wc, Physd__V1__ModelInfo *mi, perr *e) {
  physd__v1__model_info__init(mi);
  int bound = phys_world_body_id_bound(wc->w);
  /* one block: the pointer array, then the messages */
  size_t cap = (size_t)(bound ? bound : 1);
  Physd__V1__BodyInfo **ptrs = calloc(cap, sizeof(*ptrs) + sizeof(Physd__V1__BodyInfo));
  Physd__V1__BodyInfo *infos = ptrs ? (Physd__V1__BodyInfo *)(ptrs + cap) : NULL;
  Physd__V1__Vec3 *g = calloc(1, sizeof *g);
  if (!ptrs || !g) {
    free(ptrs);
    free(g);
    return perr_set(e, PHYSD__V1__ERROR_CODE__RESOURCE_EXHAUSTED, "out of memory");
  }
  /* joints: one per link, id = the link's body id; names and types point to static or
   * world-owned strings */
  Physd__V1__JointInfo **jptrs = calloc(cap, sizeof(*jptrs) + sizeof(Physd__V1__JointInfo));
  Physd__V1__JointInfo *jinfos = jptrs ? (Physd__V1__JointInfo *)(jptrs + cap) : NULL;
  if (!jptrs) {
    free(ptrs);
    free(g);
    return perr_set(e, PHYSD__V1__ERROR_CODE__RESOURCE_EXHAUSTED, "out of memory");
  }
  size_t nj = 0;
  for (int id = 0; id < bound; id++) {
    phys_joint_type type;
    int limited;
    double range[2];
    if (phys_link_get_joint_info(wc->w, id, &type, &limited, range) != PHYS_OK) continue;
    Physd__V1__JointInfo *j = &jinfos[nj];
    physd__v1__joint_info__init(j);
    j->id = id;
    const char *jname = phys_link_get_joint_name(wc->w, id);
    j->name = (char *)(jname ? jname : "");
    j->link = (char *)phys_body_get_name(wc->w, id);
    j->type = (char *)world_joint_type_name(type);
    j->body = id;
    int nq = 0, nv = 0;
    double q[7], v[6];
    phys_link_get_joint(wc->w, id, q, v, &nq, &nv);
    j->nq = (uint32_t)nq;
    j->nv = (uint32_t)nv;
    j->range_lo = limited ? range[0] : 0.0;
    j->range_hi = limited ? range[1] : 0.0;
    jptrs[nj++] = j;
  }
  mi->n_joints = nj;
  mi->joints = jptrs;
  /* actuators by index: their names (world-owned, "" when unnamed) */
  int na = phys_world_actuator_count(wc->w);
  if (na > 0) {
    char **names = calloc((size_t)na, sizeof *names);
    if (!names) {
      free(ptrs);
      free(g);
      free(jptrs);
      return perr_set(e, PHYSD__V1__ERROR_CODE__RESOURCE_EXHAUSTED, "out of memory");
    }
    for (int i = 0; i < na; i++) names[i] = (char *)phys_actuator_get_name(wc->w, i);
    mi->n_actuators = (size_t)na;
    mi->actuators = names;
  }
  if (world_model_info_extras(wc, mi)) {
    world_model_info_free(mi);
    free(ptrs);
    free(g);
    return perr_set(e, PHYSD__V1__ERROR_CODE__RESOURCE_EXHAUSTED, "out of memory");
  }
  size_t n = 0;
  for (int id = 0; id < bound; id++) {
    double mass;
    if (phys_body_get_mass(wc->w, id, &mass, NULL) != PHYS_OK) continue;
    Physd__V1__BodyInfo *b = &infos[n];
    physd__v1__body_info__init(b);
    b->id = id;
    b->name = (char *)phys_body_get_name(wc->w, id); /* owned by the world, valid while packing */
    b->mass = mass;
    b->is_static = phys_body_is_static(wc->w, id) == 1;
    b->is_mocap = phys_body_is_mocap(wc->w, id) == 1;
    ptrs[n++] = b;
  }
  phys_world_options o = phys_world_get_options(wc->w);
  physd__v1__vec3__init(g);
  g->x = o.gravity[0];
  g->y = o.gravity[1];
  g->z = o.gravity[2];
  mi->name = (char *)wc->name;
  mi->n_bodies = n;
  mi->bodies = ptrs;
  mi->timestep = o.timestep;
  mi->gravity = g;
  mi->model_hash = phys_world_model_hash(wc->w);
  return 0;
}

void world_model_info_free(Physd__V1__ModelInfo *mi) {
  world_model_info_extras_free(mi);
  free(mi->joints);
  mi->joints = NULL;
  free(mi->actuators);
  mi->actuators = NULL;
  mi->n_actuators = 0;
  free(mi->bodies);
  free(mi->gravity);
  mi->bodies = NULL;
  mi->gravity = NULL;
}

/* ---- entities ----------------------------------------------------------------------------- */

static int finite3(const Physd__V1__Vec3 *v) {
  return !v || (isfinite(v->x) && isfinite(v->y) && isfinite(v->z));
}

static void get3(const Physd__V1__Vec3 *v, double out[3]) {
  out[0] = v ? v->x : 0.0;
  out[1] = v ? v->y : 0.0;
  out[2] = v ? v->z : 0.0;
}

/* unset = identity; returns -1 for a non-finite or zero quaternion */
static int get_quat(const Physd__V1__Quat *q, double out[4]) {
  if (!q) {
    out[0] = 1.0;
    out[1] = out[2] = out[3] = 0.0;
    return 0;
  }
  out[0] = q->w;
  out[1] = q->x;
  out[2] = q->y;
  out[3] = q->z;
  double n2 = 0.0;
  for (int i = 0; i < 4; i++) {
    if (!isfinite(out[i])) return -1;
    n2 += out[i] * out[i];
  }
  return (n2 > 1e-20 && isfinite(n2)) ? 0 : -1;
}

static double geom_volume(const phys_geom_desc *g) {
  const double pi = 3.14159265358979323846;
  switch (g->type) {
  case PHYS_GEOM_SPHERE: return 4.0 / 3.0 * pi * g->size[0] * g->size[0] * g->size[0];
  case PHYS_GEOM_CAPSULE:
    return pi * g->size[0] * g->size[0] * 2.0 * g->size[1] +
           4.0 / 3.0 * pi * g->size[0] * g->size[0] * g->size[0];
  case PHYS_GEOM_CYLINDER: return pi * g->size[0] * g->size[0] * 2.0 * g->size[1];
  case PHYS_GEOM_BOX: return 8.0 * g->size[0] * g->size[1] * g->size[2];
  default: return 0.0;
  }
}

#define INVALID PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT

static int convert_geom(const Physd__V1__GeomSpec *s, int i, phys_geom_desc *g, perr *e) {
  *g = phys_geom_desc_default();
  static const struct { phys_geom_type t; size_t nsize; } map[] = {
      {PHYS_GEOM_SPHERE, 1}, {PHYS_GEOM_CAPSULE, 2}, {PHYS_GEOM_BOX, 3}, {PHYS_GEOM_CYLINDER, 2}};
  if ((int)s->type < 0 || (int)s->type > 3)
    return perr_set(e, INVALID,
                    "geom %d: type %d cannot be added (AddBody takes sphere, capsule, box and "
                    "cylinder)",
                    i, (int)s->type);
  g->type = map[s->type].t;
  if (s->n_size < map[s->type].nsize || s->n_size > 3)
    return perr_set(e, INVALID, "geom %d: needs %zu size values, got %zu", i, map[s->type].nsize,
                    s->n_size);
  for (size_t k = 0; k < map[s->type].nsize; k++) {
    if (!isfinite(s->size[k]) || !(s->size[k] > 0.0))
      return perr_set(e, INVALID, "geom %d: size[%zu] must be finite and > 0", i, k);
    g->size[k] = s->size[k];
  }
  if (!finite3(s->pos)) return perr_set(e, INVALID, "geom %d: position is not finite", i);
  get3(s->pos, g->pos);
  if (get_quat(s->quat, g->quat))
    return perr_set(e, INVALID, "geom %d: quaternion is zero or not finite", i);
  double mu = (!s->has_friction && s->friction == 0.0) ? 1.0 : s->friction;
  if (!isfinite(mu) || mu < 0.0)
    return perr_set(e, INVALID, "geom %d: friction must be finite and >= 0", i);
  g->friction = mu;
  if (!isfinite(s->density) || s->density < 0.0)
    return perr_set(e, INVALID, "geom %d: density must be finite and >= 0", i);
  g->density = s->density == 0.0 ? 1000.0 : s->density;
  g->mass = -1.0;
  int condim = s->condim == 0 ? 3 : s->condim;
  if (condim != 1 && condim != 3)
    return perr_set(e, INVALID, "geom %d: condim must be 1 or 3, got %d", i, s->condim);
  g->condim = condim;
  return 0;
}

int world_add_body(world_ctx *wc, const Physd__V1__AddBody *req, int32_t *id, perr *e) {
  const char *name = req->name ? req->name : "";
  if (strlen(name) > 63) return perr_set(e, INVALID, "body name longer than 63 bytes");
  if (*name && phys_world_find_body(wc->w, name) != PHYS_ID_NONE)
    return perr_set(e, INVALID, "a body named '%s' exists already", name);
  if (req->n_geoms < 1 || req->n_geoms > WORLD_MAX_GEOMS)
    return perr_set(e, INVALID, "a body needs 1 to %d geoms, got %zu", WORLD_MAX_GEOMS,
                    req->n_geoms);
  if (!finite3(req->pos) || !finite3(req->linvel) || !finite3(req->angvel))
    return perr_set(e, INVALID, "body position or velocity is not finite");
  if (!isfinite(req->mass) || req->mass < 0.0)
    return perr_set(e, INVALID, "mass must be finite and >= 0 (0: from the geoms' density)");

  phys_body_desc d = phys_body_desc_default();
  get3(req->pos, d.pos);
  get3(req->linvel, d.linvel);
  get3(req->angvel, d.angvel);
  if (get_quat(req->quat, d.quat)) return perr_set(e, INVALID, "body quaternion is zero or not finite");
  d.mass = -1.0;

  phys_geom_desc geoms[WORLD_MAX_GEOMS];
  double vol = 0.0;
  for (size_t i = 0; i < req->n_geoms; i++) {
    if (!req->geoms[i]) return perr_set(e, INVALID, "geom %zu missing", i);
    if (convert_geom(req->geoms[i], (int)i, &geoms[i], e)) return -1;
    vol += geom_volume(&geoms[i]);
  }
  /* a given mass is shared by the geoms in proportion to their volumes */
  if (req->mass > 0.0) {
    if (!(vol > 0.0) || !isfinite(vol)) return perr_set(e, INVALID, "geoms have no volume");
    for (size_t i = 0; i < req->n_geoms; i++) geoms[i].mass = req->mass * geom_volume(&geoms[i]) / vol;
  }
  phys_id nid;
  phys_status st = phys_world_add_body(wc->w, &d, geoms, (int)req->n_geoms, &nid);
  if (st != PHYS_OK) return fail_world(wc, st, e);
  if (*name) phys_body_set_name(wc->w, nid, name); /* length checked above: cannot fail */
  wc->gen++;
  *id = nid;
  return 0;
}

int world_remove_body(world_ctx *wc, int32_t id, perr *e) {
  phys_status st = phys_world_remove_body(wc->w, id);
  if (st != PHYS_OK) return fail_world(wc, st, e);
  wc->gen++;
  return 0;
}

int world_set_body_state(world_ctx *wc, const Physd__V1__SetBodyState *req, perr *e) {
  if (!finite3(req->pos) || !finite3(req->linvel) || !finite3(req->angvel))
    return perr_set(e, INVALID, "body %d: state is not finite", req->id);
  double p[3], q[4], v[3], w[3];
  if (req->quat && get_quat(req->quat, q))
    return perr_set(e, INVALID, "body %d: quaternion is zero or not finite", req->id);
  get3(req->pos, p);
  get3(req->linvel, v);
  get3(req->angvel, w);
  phys_status st = phys_body_set_state(wc->w, req->id, req->pos ? p : NULL, req->quat ? q : NULL,
                                       req->linvel ? v : NULL, req->angvel ? w : NULL);
  if (st != PHYS_OK) return fail_world(wc, st, e);
  wc->gen++;
  return 0;
}

int world_check_wrench(const world_ctx *wc, const Physd__V1__ApplyWrench *req, perr *e) {
  if (!finite3(req->force) || !finite3(req->torque))
    return perr_set(e, INVALID, "body %d: wrench is not finite", req->body);
  double mass;
  if (phys_body_get_mass(wc->w, req->body, &mass, NULL) != PHYS_OK)
    return perr_set(e, PHYSD__V1__ERROR_CODE__NOT_FOUND, "body %d: no such body", req->body);
  if (mass == 0.0)
    return perr_set(e, PHYSD__V1__ERROR_CODE__INCORRECT_STATE, "body %d: is static", req->body);
  return 0;
}

int world_apply_wrench(world_ctx *wc, const Physd__V1__ApplyWrench *req, perr *e) {
  if (world_check_wrench(wc, req, e)) return -1;
  double f[3], t[3];
  get3(req->force, f);
  get3(req->torque, t);
  phys_status st = phys_body_apply_wrench(wc->w, req->body, f, t);
  if (st != PHYS_OK) return fail_world(wc, st, e);
  return 0;
}

uint64_t world_sim_time_ns(const world_ctx *wc) {
  return phys_world_step_index(wc->w) * wc->timestep_ns;
}
