/* sim_req_batch.c - protocol 1.9's StepBatch: the worlds of a batch (or the single world as a
 * batch of one) reset, driven and stepped together, and observed in one BatchFrame of flat
 * arrays. A row of the request table (requests.c); runs on the simulation thread at a step
 * boundary. The request is checked whole first: a refused one changes no world. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "requests.h"
#include "sim_internal.h"
#include "textesc.h"

#define INVALID PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT

/* what a StepBatch asks for, resolved by check_request (the arrays are the handler's) */
typedef struct batch_plan {
  int nworlds;              /* worlds loaded */
  int *idx;                 /* [k] the chosen worlds, in request order */
  int k;
  int *reset_kf;            /* [n_reset] keyframe index per reset, -1 = the loaded state */
  uint8_t *seen;            /* [nworlds] scratch for "given twice" */
  int nq, nv, nu, ns;       /* per-world values of the selector's arrays */
} batch_plan;

static void plan_free(batch_plan *p) {
  free(p->idx);
  free(p->reset_kf);
  free(p->seen);
}

/* `n` indices of `what` (a field name), each a world and none twice. 0 or -1. */
static int check_indices(batch_plan *p, const int32_t *v, size_t n, const char *what,
                         perr *e) {
  memset(p->seen, 0, (size_t)p->nworlds);
  for (size_t i = 0; i < n; i++) {
    if (v[i] < 0 || v[i] >= p->nworlds)
      return perr_set(e, INVALID, "StepBatch.%s[%zu] = %d: no such world (%d loaded)", what, i,
                      v[i], p->nworlds);
    if (p->seen[v[i]])
      return perr_set(e, INVALID, "StepBatch.%s[%zu] = %d: world given twice", what, i, v[i]);
    p->seen[v[i]] = 1;
  }
  return 0;
}

/* the joints' position and velocity counts in JointInfo order (s->links) */
static void joint_counts(sim *s, phys_world *w, int *nq, int *nv) {
  *nq = *nv = 0;
  for (int j = 0; j < s->links.n; j++) {
    int q = 0, v = 0;
    if (phys_link_get_joint(w, s->links.ids[j], NULL, NULL, &q, &v) != PHYS_OK) continue;
    *nq += q;
    *nv += v;
  }
}

/* Check the whole request and resolve it into *p. 0, or -1 with e set (p then freed). */
static int check_request(sim *s, const Physd__V1__StepBatch *m, batch_plan *p, perr *e) {
  memset(p, 0, sizeof *p);
  p->nworlds = s->wc.world_count;
  phys_world *w0 = world_at(&s->wc, 0);
  if (sim_check_lockstep(s, "StepBatch", e)) return -1;
  if (!m->no_step && sim_check_steps(s, m->n ? m->n : 1, e)) return -1;
  p->seen = calloc((size_t)p->nworlds, 1);
  p->k = m->n_worlds ? (int)m->n_worlds : p->nworlds;
  p->idx = malloc(sizeof *p->idx * (size_t)(p->k ? p->k : 1));
  p->reset_kf = malloc(sizeof *p->reset_kf * (m->n_reset ? m->n_reset : 1));
  if (!p->seen || !p->idx || !p->reset_kf) {
    plan_free(p);
    return perr_set(e, PHYSD__V1__ERROR_CODE__RESOURCE_EXHAUSTED, "out of memory");
  }
  int rc = 0;
  /* the chosen worlds */
  if (m->n_worlds > (size_t)p->nworlds)
    rc = perr_set(e, INVALID, "StepBatch.worlds has %zu entries, %d worlds are loaded",
                  m->n_worlds, p->nworlds);
  if (!rc && m->n_worlds) rc = check_indices(p, m->worlds, m->n_worlds, "worlds", e);
  for (int i = 0; !rc && i < p->k; i++) p->idx[i] = m->n_worlds ? m->worlds[i] : i;
  /* the controls: none, or every actuator of every chosen world, finite */
  p->nu = phys_world_actuator_count(w0);
  size_t want = (size_t)p->k * (size_t)p->nu;
  if (!rc && m->n_ctrl && m->n_ctrl != want)
    rc = perr_set(e, INVALID,
                  "StepBatch.ctrl has %zu values, want 0 or %zu (%d worlds x %d actuators)",
                  m->n_ctrl, want, p->k, p->nu);
  for (size_t i = 0; !rc && i < m->n_ctrl; i++)
    if (!isfinite(m->ctrl[i]))
      rc = perr_set(e, INVALID, "StepBatch.ctrl[%zu] is not finite", i);
  /* the resets and their keyframes */
  if (!rc && m->n_reset > (size_t)p->nworlds)
    rc = perr_set(e, INVALID, "StepBatch.reset has %zu entries, %d worlds are loaded",
                  m->n_reset, p->nworlds);
  if (!rc) rc = check_indices(p, m->reset, m->n_reset, "reset", e);
  if (!rc && m->n_reset_keyframe && m->n_reset_keyframe != m->n_reset)
    rc = perr_set(e, INVALID,
                  "StepBatch.reset_keyframe has %zu entries, want 0 or %zu (one per reset)",
                  m->n_reset_keyframe, m->n_reset);
  for (size_t i = 0; !rc && i < m->n_reset; i++) {
    const char *name = m->n_reset_keyframe ? m->reset_keyframe[i] : "";
    p->reset_kf[i] = *name ? phys_world_find_keyframe(w0, name) : -1;
    if (*name && p->reset_kf[i] < 0) {
      char shown[200];
      rc = perr_set(e, PHYSD__V1__ERROR_CODE__NOT_FOUND,
                    "StepBatch.reset_keyframe[%zu] \"%s\": no such keyframe "
                    "(ModelInfo.keyframes lists them)",
                    i, text_escape(shown, sizeof shown, name));
    }
  }
  /* the observation must fit in a frame */
  const Physd__V1__BatchSelector *sel = m->selector;
  if (!rc && sel) {
    int nq, nv;
    joint_counts(s, w0, &nq, &nv);
    p->nq = sel->qpos ? nq : 0;
    p->nv = sel->qvel ? nv : 0;
    p->ns = sel->sensors ? snap_sensor_values(w0) : 0;
  }
  if (!rc) {
    int nu_obs = sel && sel->actuator_force ? p->nu : 0;
    size_t per = 35 + 8 * ((size_t)p->nq + (size_t)p->nv + (size_t)nu_obs + (size_t)p->ns);
    size_t bound = (size_t)p->k * per + 800;
    if (bound > s->cfg->max_frame_bytes)
      rc = perr_set(e, PHYSD__V1__ERROR_CODE__RESOURCE_EXHAUSTED,
                    "a BatchFrame of up to %zu bytes would exceed max_frame_bytes %u; nothing "
                    "was done (observe fewer worlds or fields)",
                    bound, s->cfg->max_frame_bytes);
  }
  if (rc) plan_free(p);
  return rc;
}

/* Resets, in request order: the single world through world_reset (as Reset and
 * ResetToKeyframe), a batch's worlds from the loaded state. 0 or -1 (e set). */
static int apply_resets(sim *s, const Physd__V1__StepBatch *m, const batch_plan *p, perr *e) {
  if (!m->n_reset) return 0;
  if (!s->wc.batch) {
    int kf = p->reset_kf[0];
    if (kf >= 0 ? world_reset_to_keyframe(&s->wc, NULL, kf, 1, e) : world_reset(&s->wc, e))
      return -1;
    sim_joints_forget(s);
    sim_world_changed(s);
    return 0;
  }
  for (size_t i = 0; i < m->n_reset; i++)
    if (world_batch_reset(&s->wc, m->reset[i], p->reset_kf[i], e)) return -1;
  return 0;
}

/* The BatchFrame under construction: arrays sized for the plan, filled world by world (by the
 * batch step's after-callback while each world is in cache, or by the handler after the
 * steps: the single world, or a request that steps nothing). */
typedef struct batch_out {
  Physd__V1__BatchFrame f;
  int nu_obs; /* actuator forces per world, 0 when not asked */
} batch_out;

static void out_free(batch_out *o) {
  free(o->f.worlds);
  free(o->f.step);
  free(o->f.sim_time_ns);
  free(o->f.status);
  free(o->f.qpos);
  free(o->f.qvel);
  free(o->f.actuator_force);
  free(o->f.sensor_values);
}

/* the frame's arrays for the plan's k worlds; 0, or -1 out of memory (o then freed) */
static int out_alloc(batch_out *o, const Physd__V1__StepBatch *m, const batch_plan *p) {
  const Physd__V1__BatchSelector *sel = m->selector;
  size_t k = (size_t)p->k;
  Physd__V1__BatchFrame f = PHYSD__V1__BATCH_FRAME__INIT;
  o->f = f;
  o->nu_obs = sel && sel->actuator_force ? p->nu : 0;
  o->f.n_worlds = o->f.n_step = o->f.n_sim_time_ns = o->f.n_status = k;
  o->f.nq = (uint32_t)p->nq;
  o->f.nv = (uint32_t)p->nv;
  o->f.n_qpos = k * (size_t)p->nq;
  o->f.n_qvel = k * (size_t)p->nv;
  o->f.n_actuator_force = k * (size_t)o->nu_obs;
  o->f.n_sensor_values = k * (size_t)p->ns;
  o->f.worlds = malloc(sizeof(int32_t) * (k ? k : 1));
  o->f.step = malloc(sizeof(uint64_t) * (k ? k : 1));
  o->f.sim_time_ns = malloc(sizeof(uint64_t) * (k ? k : 1));
  o->f.status = malloc(sizeof(int32_t) * (k ? k : 1));
  o->f.qpos = malloc(sizeof(double) * (o->f.n_qpos ? o->f.n_qpos : 1));
  o->f.qvel = malloc(sizeof(double) * (o->f.n_qvel ? o->f.n_qvel : 1));
  size_t na = o->f.n_actuator_force, ns = o->f.n_sensor_values;
  o->f.actuator_force = malloc(sizeof(double) * (na ? na : 1));
  o->f.sensor_values = malloc(sizeof(double) * (ns ? ns : 1));
  if (o->f.worlds && o->f.step && o->f.sim_time_ns && o->f.status && o->f.qpos && o->f.qvel &&
      o->f.actuator_force && o->f.sensor_values)
    return 0;
  out_free(o);
  memset(o, 0, sizeof *o);
  return -1;
}

/* entry i (world wi = p->idx[i]) of the frame from world w: its step, time and selected state.
 * Touches only w and entry i's slots, so the worlds of a batch step can fill theirs
 * concurrently. */
static void out_fill(const sim *s, const batch_plan *p, batch_out *o, size_t i, phys_world *w) {
  Physd__V1__BatchFrame *f = &o->f;
  f->worlds[i] = p->idx[i];
  f->step[i] = phys_world_step_index(w);
  f->sim_time_ns[i] = f->step[i] * s->wc.timestep_ns;
  double *q = f->qpos + i * (size_t)p->nq, *v = f->qvel + i * (size_t)p->nv;
  for (int j = 0; (p->nq || p->nv) && j < s->links.n; j++) {
    double jq[7], jv[6];
    int nq = 0, nv = 0;
    if (phys_link_get_joint(w, s->links.ids[j], jq, jv, &nq, &nv) != PHYS_OK) continue;
    if (p->nq) memcpy(q, jq, sizeof(double) * (size_t)nq), q += nq;
    if (p->nv) memcpy(v, jv, sizeof(double) * (size_t)nv), v += nv;
  }
  for (int a = 0; a < o->nu_obs; a++)
    phys_actuator_get(w, a, &f->actuator_force[i * (size_t)o->nu_obs + (size_t)a], NULL);
  if (p->ns) snap_read_sensors(w, f->sensor_values + i * (size_t)p->ns, p->ns);
}

/* what the batch step's callbacks need: the controls to set before a world's first step, the
 * frame to fill after its last (run_steps installs each callback on that step only) */
typedef struct step_hooks_ctx {
  const sim *s;
  const batch_plan *p;
  const double *ctrl; /* [k * nu] or NULL: controls held */
  batch_out *out;
} step_hooks_ctx;

static void set_ctrl(phys_world *w, const batch_plan *p, const double *ctrl, size_t i) {
  for (int a = 0; a < p->nu; a++) phys_actuator_set_ctrl(w, a, ctrl[i * (size_t)p->nu + (size_t)a]);
}

static void hook_before(phys_world *w, int k, void *user) {
  const step_hooks_ctx *c = user;
  set_ctrl(w, c->p, c->ctrl, (size_t)k);
}

static void hook_after(phys_world *w, int k, phys_status st, void *user) {
  (void)st; /* failures are read from the batch after the step (run_steps) */
  const step_hooks_ctx *c = user;
  out_fill(c->s, c->p, c->out, (size_t)k, w);
}

/* n steps of the chosen worlds; status[i] (by world index) gets each world's first failure.
 * A batch sets the controls (ctrl, nullable) before each world's first step and fills `out`
 * after its last, world by world while it is in cache; the single world has them set and read
 * around its steps by the caller. Returns the steps done (fewer than n only when the server
 * stops). */
static uint32_t run_steps(sim *s, const batch_plan *p, uint32_t n, const double *ctrl,
                          batch_out *out, int32_t *status, char *msg, size_t msg_len) {
  uint32_t done = 0;
  if (!s->wc.batch) {
    phys_status st;
    done = sim_lockstep_run(s, n, &st);
    if (st != PHYS_OK) {
      status[0] = PHYSD__V1__ERROR_CODE__INTERNAL;
      snprintf(msg, msg_len, "world 0: %s", phys_world_last_error(s->wc.w));
      done = n; /* a failed step ends the run; the frame reports it */
    }
    return done;
  }
  for (; done < n; done++) {
    if (sim_stopping(s)) break;
    step_hooks_ctx c = {s, p, ctrl, out};
    phys_batch_hooks hk = {done == 0 && ctrl ? hook_before : NULL,
                           done + 1 == n ? hook_after : NULL, &c};
    uint64_t t0 = mono_now_ns();
    phys_status st = phys_batch_step_hooked(s->wc.batch, p->idx, p->k, &hk);
    sim_record_batch_step(s, t0, mono_now_ns());
    if (st == PHYS_OK) continue;
    for (int i = 0; i < p->k; i++) {
      int wi = p->idx[i];
      if (status[wi] || phys_batch_world_status(s->wc.batch, wi) == PHYS_OK) continue;
      status[wi] = PHYSD__V1__ERROR_CODE__INTERNAL;
      if (!*msg)
        snprintf(msg, msg_len, "world %d, step %u: %s", wi, done + 1,
                 phys_world_last_error(world_at(&s->wc, wi)));
    }
  }
  return done;
}

/* the frame's statuses and message, then posted for `to` */
static void reply_frame(sim *s, const reply_to *to, const batch_plan *p, batch_out *o,
                        const int32_t *status, const char *msg) {
  for (int i = 0; i < p->k; i++) o->f.status[i] = status[p->idx[i]];
  o->f.message = (char *)msg;
  Physd__V1__Envelope env = PHYSD__V1__ENVELOPE__INIT;
  env.msg_case = PHYSD__V1__ENVELOPE__MSG_BATCH_FRAME;
  env.batch_frame = &o->f;
  sim_reply_env(s, to, &env, 0, 0);
}

void sim_req_step_batch(sim *s, const reply_to *to, const Physd__V1__Envelope *env) {
  const Physd__V1__StepBatch *m = env->step_batch;
  perr e;
  batch_plan p;
  batch_out out;
  if (check_request(s, m, &p, &e)) {
    sim_reply_perr(s, to, &e);
    return;
  }
  int32_t *status = calloc((size_t)p.nworlds, sizeof *status);
  if (!status || out_alloc(&out, m, &p)) {
    free(status);
    plan_free(&p);
    sim_reply_error(s, to, PHYSD__V1__ERROR_CODE__RESOURCE_EXHAUSTED, "out of memory");
    return;
  }
  if (apply_resets(s, m, &p, &e)) {
    sim_reply_perr(s, to, &e);
    goto out;
  }
  /* controls, held until changed as SetActuatorControl's: a batch's are set by its step, world
   * by world, unless nothing steps */
  const double *ctrl = m->n_ctrl ? m->ctrl : NULL;
  int hooked = s->wc.batch && !m->no_step;
  for (size_t i = 0; ctrl && !hooked && i < (size_t)p.k; i++)
    set_ctrl(world_at(&s->wc, p.idx[i]), &p, ctrl, i);
  char msg[600] = "";
  uint32_t n = m->n ? m->n : 1;
  if (!m->no_step) {
    uint32_t done = run_steps(s, &p, n, ctrl, &out, status, msg, sizeof msg);
    if (done < n) {
      sim_reply_shutdown(s, to, "StepBatch", done, n);
      goto out;
    }
  }
  for (size_t i = 0; !hooked && i < (size_t)p.k; i++)
    out_fill(s, &p, &out, i, world_at(&s->wc, p.idx[i]));
  reply_frame(s, to, &p, &out, status, msg);
out:
  out_free(&out);
  free(status);
  plan_free(&p);
}
