/* sim_own.c - who drives the world's commands: the state kept per session, the ownership of
 * joint commands and actuator controls (a session owns what it commanded last), the release of
 * a departed or evicted session's commands, and the staleness watchdog of real-time mode.
 * Simulation thread only. */
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "sim_internal.h"
#include "textesc.h"

sess_state *sim_sess_get(sim *s, uint64_t session, int create) {
  for (int i = 0; i < s->nsess; i++)
    if (s->sess[i].session == session) return &s->sess[i];
  if (!create) return NULL;
  if (s->nsess == s->sess_cap) {
    int cap = s->sess_cap ? s->sess_cap * 2 : 16;
    sess_state *n = realloc(s->sess, (size_t)cap * sizeof *n);
    if (!n) return NULL;
    s->sess = n;
    s->sess_cap = cap;
  }
  sess_state *st = &s->sess[s->nsess++];
  memset(st, 0, sizeof *st);
  st->session = session;
  return st;
}

static void sess_drop(sim *s, uint64_t session) {
  for (int i = 0; i < s->nsess; i++)
    if (s->sess[i].session == session) {
      s->sess[i] = s->sess[--s->nsess];
      return;
    }
}

/* The staleness sim_watchdog (real time only). A session that owns joint commands (it set them
 * last) and has sent no joint command for watchdog_periods steps gets the watchdog action on
 * every joint it owns, once per episode: hold = a POSITION command at the joint's current q
 * with the gains of its last command (HOLD_KP / HOLD_KD where that kp was 0), zero = TORQUE 0.
 * The episode lasts until the session commands joints again; every step of it is flagged
 * stale_command on its frame, and Stats.stale_commands counts episodes (one per stale period
 * of a session, however many steps it lasts). */
/* The watchdog action (hold or zero, as configured) on every joint `session` owns; returns the
 * joints it changed. */
static int joints_policy(sim *s, uint64_t session) {
  int hold = s->cfg->watchdog_action == 0, n = 0;
  for (int id = 0; id < s->jown_cap; id++) {
    const joint_owner *o = &s->jown[id];
    if (o->session != session) continue;
    phys_joint_command c;
    memset(&c, 0, sizeof c);
    if (hold) {
      double qpos[7];
      if (phys_link_get_joint(s->wc.w, id, qpos, NULL, NULL, NULL) != PHYS_OK) continue;
      c.mode = PHYS_CMD_POSITION;
      c.q = qpos[0];
      c.kp = o->kp > 0.0 ? o->kp : HOLD_KP;
      c.kd = o->kp > 0.0 ? o->kd : HOLD_KD;
    } else {
      c.mode = PHYS_CMD_TORQUE;
    }
    if (phys_link_set_command(s->wc.w, id, &c) == PHYS_OK) n++;
  }
  return n;
}

static void watchdog_fire(sim *s, sess_state *st, uint64_t step) {
  int hold = s->cfg->watchdog_action == 0;
  int n = joints_policy(s, st->session);
  st->stale = 1;
  s->stats.stale_commands++; /* one per episode */
  log_warn("stale joint commands: watchdog action applied", "session=%llu action=%s joints=%d "
           "step=%llu last_command_step=%llu periods=%u",
           (unsigned long long)st->session, hold ? "hold" : "zero", n, (unsigned long long)step,
           (unsigned long long)st->last_cmd_step, s->cfg->watchdog_periods);
}

void sim_watchdog(sim *s) {
  s->flag_stale = 0;
  if (s->mode != PHYSD__V1__MODE__MODE_REALTIME || s->cfg->watchdog_periods == 0) return;
  uint64_t step = phys_world_step_index(s->wc.w);
  for (int i = 0; i < s->nsess; i++) {
    sess_state *st = &s->sess[i];
    if (st->owned == 0) continue;
    if (!st->stale) {
      if (step < st->last_cmd_step || step - st->last_cmd_step < s->cfg->watchdog_periods)
        continue;
      watchdog_fire(s, st, step);
    }
    s->flag_stale = 1;
  }
}



/* room in jown for every body id of the current world; 0 or -1 (out of memory) */
static int jown_reserve(sim *s) {
  int bound = phys_world_body_id_bound(s->wc.w);
  if (bound <= s->jown_cap) return 0;
  joint_owner *n = realloc(s->jown, (size_t)bound * sizeof *n);
  if (!n) return -1;
  memset(n + s->jown_cap, 0, (size_t)(bound - s->jown_cap) * sizeof *n);
  s->jown = n;
  s->jown_cap = bound;
  return 0;
}


/* The world was loaded, reset or restored: the engine's commands are those of the new state,
 * nobody owns them and no watchdog episode goes on; no client's last_cmd_seq describes them
 * (0 until its next command: a new command epoch, which the published snapshots carry). */
void sim_joints_forget(sim *s) {
  s->cmd_epoch++;
  if (s->jown) memset(s->jown, 0, (size_t)s->jown_cap * sizeof *s->jown);
  if (s->aown) memset(s->aown, 0, (size_t)s->aown_cap * sizeof *s->aown);
  for (int i = 0; i < s->nsess; i++) {
    s->sess[i].owned = 0;
    s->sess[i].owned_act = 0;
    s->sess[i].stale = 0;
    s->sess[i].last_cmd_seq = 0;
  }
}

/* Check a joint command of `session` completely (nothing changes on error). */
int sim_check_command(sim *s, uint64_t session, const Physd__V1__SetJointCommand *c, perr *e) {
  if (world_check_joint_command(&s->wc, c, e)) return -1;
  if (jown_reserve(s) != 0 || !sim_sess_get(s, session, 1))
    return perr_set(e, PHYSD__V1__ERROR_CODE__RESOURCE_EXHAUSTED, "out of memory");
  return 0;
}

/* Apply a command that passed sim_check_command (this is a step boundary): the engine commands,
 * joint ownership, the session's watchdog timer and its seq. */
void sim_apply_command(sim *s, uint64_t session, const Physd__V1__SetJointCommand *c) {
  perr e;
  if (world_apply_joint_command(&s->wc, c, &e)) {
    char shown[600];
    log_error("a checked joint command failed", "session=%llu error=\"%s\"",
              (unsigned long long)session, text_escape(shown, sizeof shown, e.msg));
  }
  for (size_t i = 0; i < c->n_joint_ids; i++) {
    joint_owner *o = &s->jown[c->joint_ids[i]];
    if (o->session != session) {
      sess_state *prev = o->session ? sim_sess_get(s, o->session, 0) : NULL;
      if (prev && --prev->owned == 0) prev->stale = 0;
      o->session = session;
      sim_sess_get(s, session, 0)->owned++;
    }
    o->kp = c->n_kp ? c->kp[i] : 0.0;
    o->kd = c->n_kd ? c->kd[i] : 0.0;
  }
  sess_state *ss = sim_sess_get(s, session, 0);
  ss->last_cmd_seq = c->seq;
  if (c->n_joint_ids > 0) {
    ss->last_cmd_step = phys_world_step_index(s->wc.w);
    if (ss->stale) {
      ss->stale = 0;
      log_info("joint commands resumed after the watchdog", "session=%llu step=%llu",
               (unsigned long long)session, (unsigned long long)ss->last_cmd_step);
    }
  }
}

/* A session is gone (or evicted from the barrier): the commands it set stop driving the world
 * at this step boundary. Its joints get the watchdog action (hold: a POSITION command at the
 * current q; zero: TORQUE 0); its motor and velocity actuators get control 0 and its position
 * actuators a target at their current length (the joint's or tendon's position: they stop where
 * they are instead of driving to 0); nobody owns them any more. Counted in Stats.released_commands and logged. */
void sim_release_commands(sim *s, sess_state *st, const char *why) {
  if (st->owned == 0 && st->owned_act == 0) return;
  int nj = joints_policy(s, st->session), na = 0;
  for (int id = 0; id < s->jown_cap; id++)
    if (s->jown[id].session == st->session) s->jown[id].session = 0;
  for (int i = 0; i < s->aown_cap; i++)
    if (s->aown[i] == st->session) {
      s->aown[i] = 0;
      double ctrl = 0.0, len;
      phys_actuator_desc d;
      if (phys_actuator_get_desc(s->wc.w, i, &d) == PHYS_OK && d.type == PHYS_ACT_POSITION &&
          phys_actuator_get_length(s->wc.w, i, &len) == PHYS_OK)
        ctrl = len; /* joint, tendon or site transmission alike */
      if (phys_actuator_set_ctrl(s->wc.w, i, ctrl) == PHYS_OK) na++;
    }
  st->owned = st->owned_act = 0;
  st->stale = 0;
  s->stats.released_commands++;
  log_warn("commands released", "session=%llu reason=%s action=%s joints=%d actuators=%d step=%llu",
           (unsigned long long)st->session, why, s->cfg->watchdog_action == 0 ? "hold" : "zero",
           nj, na, (unsigned long long)phys_world_step_index(s->wc.w));
}

/* Check actuator controls of `session` (nothing changes on error); *ids as
 * world_check_actuator_control. */
int sim_check_actuators(sim *s, uint64_t session, const Physd__V1__SetActuatorControl *m,
                           int **ids, size_t *n, perr *e) {
  if (world_check_actuator_control(&s->wc, m, ids, n, e)) return -1;
  int na = phys_world_actuator_count(s->wc.w);
  if (na > s->aown_cap) {
    uint64_t *p = realloc(s->aown, (size_t)na * sizeof *p);
    if (!p) goto nomem;
    memset(p + s->aown_cap, 0, (size_t)(na - s->aown_cap) * sizeof *p);
    s->aown = p;
    s->aown_cap = na;
  }
  if (!sim_sess_get(s, session, 1)) goto nomem;
  return 0;
nomem:
  free(*ids);
  *ids = NULL;
  return perr_set(e, PHYSD__V1__ERROR_CODE__RESOURCE_EXHAUSTED, "out of memory");
}

/* Apply checked actuator controls (a step boundary): engine controls, ownership and seq. Frees
 * ids. */
void sim_apply_actuators(sim *s, uint64_t session, const Physd__V1__SetActuatorControl *m,
                            int *ids, size_t n) {
  world_apply_actuator_control(&s->wc, m, ids, n);
  sess_state *ss = sim_sess_get(s, session, 0);
  for (size_t i = 0; i < n; i++) {
    uint64_t *o = &s->aown[ids[i]];
    if (*o == session) continue;
    sess_state *prev = *o ? sim_sess_get(s, *o, 0) : NULL;
    if (prev) prev->owned_act--;
    *o = session;
    ss->owned_act++;
  }
  ss->last_cmd_seq = m->seq;
  free(ids);
}


/* the session is gone: its barrier place, commands and state */
void sim_session_gone(sim *s, uint64_t session) {
  participant *p = sim_find_part(s, session);
  if (p) sim_remove_part(s, p); /* its pending Step needs no answer: the session is gone */
  sess_state *st = sim_sess_get(s, session, 0);
  if (st) sim_release_commands(s, st, "disconnected");
  sess_drop(s, session);
  sim_viewer_session_gone(s, session);
}
