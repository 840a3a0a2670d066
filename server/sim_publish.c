/* sim_publish.c - what the simulation thread shows to the other threads: the clock (read by any
 * thread through sim_clock_get) and the state snapshot published through the triple buffer
 * for the stream subscriptions, after steps and after changes of the world. */
#include <stdint.h>

#include "log.h"
#include "sim_internal.h"

void sim_fill_clock(const sim_clock *c, Physd__V1__Clock *out) {
  physd__v1__clock__init(out);
  out->step = c->step;
  out->sim_time_ns = c->sim_time_ns;
  out->timestep_ns = c->timestep_ns;
  out->mode = (Physd__V1__Mode)c->mode;
  out->paused = c->paused;
  out->real_time_factor = c->rtf;
}

void sim_update_clock(sim *s) {
  pthread_mutex_lock(&s->clk_mu);
  s->clk.step = phys_world_step_index(s->wc.w);
  s->clk.sim_time_ns = world_sim_time_ns(&s->wc);
  s->clk.timestep_ns = s->wc.timestep_ns;
  s->clk.mode = s->mode;
  s->clk.paused = s->paused;
  s->clk.rtf = s->rtf;
  s->clk.worlds = s->wc.world_count;
  pthread_mutex_unlock(&s->clk_mu);
}


/* the wall time a step publication must wait after the last one: half the shortest period in
 * max-speed mode, 1 / viewer_max_fps in every mode while a viewer is the only subscriber */
static uint64_t wall_gap(const sim *s) {
  uint64_t gap = s->mode == PHYSD__V1__MODE__MODE_MAX_SPEED ? atomic_load(&s->nc->publish_wall_ns) : 0;
  uint64_t viewer_gap = atomic_load(&s->nc->publish_wall_viewer_ns);
  return viewer_gap > gap ? viewer_gap : gap;
}

static void publish_now(sim *s, uint64_t wall_ns, int step);

/* Publish the world as it is now (after a step: wall = end of the step) for the stream
 * subscriptions. After a step (`step` 1) this happens only when someone can use it: a
 * subscription exists, sim time reached a multiple of the publish period and the last
 * publication is at least wall_gap() old (a publication held back by that gap only is marked
 * deferred); the clock is updated either way. World changes (`step` 0) always publish: the
 * loop thread checks Subscribe requests against the newest snapshot. */
void sim_publish(sim *s, uint64_t wall_ns, int step) {
  if (step) {
    if (atomic_load(&s->nc->subscriptions) == 0) {
      s->pub_deferred = 0;
      sim_update_clock(s);
      return;
    }
    uint64_t period = atomic_load(&s->nc->publish_period_ns);
    if (period > 0) {
      uint64_t bucket = world_sim_time_ns(&s->wc) / period;
      if (bucket == s->pub_bucket) {
        sim_update_clock(s);
        return;
      }
      if (wall_ns - s->pub_wall_ns < wall_gap(s)) {
        s->pub_deferred = 1;
        sim_update_clock(s);
        return;
      }
      s->pub_bucket = bucket;
      s->pub_wall_ns = wall_ns;
    }
  }
  publish_now(s, wall_ns, step);
}

uint64_t sim_deferred_due(const sim *s) { return s->pub_wall_ns + wall_gap(s); }

void sim_publish_deferred(sim *s) {
  uint64_t now = mono_now_ns();
  uint64_t period = atomic_load(&s->nc->publish_period_ns);
  s->pub_bucket = period ? world_sim_time_ns(&s->wc) / period : s->pub_bucket;
  s->pub_wall_ns = now;
  publish_now(s, now, 1);
}

static void publish_now(sim *s, uint64_t wall_ns, int step) {
  s->pub_deferred = 0;
  state_snap *b = tribuf_back(&s->tb);
  int want = 0;
  if (atomic_load(&s->nc->contacts_wanted) > 0) want |= SNAP_CONTACTS;
  if (atomic_load(&s->nc->joints_wanted) > 0) want |= SNAP_JOINTS;
  if (atomic_load(&s->nc->actuators_wanted) > 0) want |= SNAP_ACTUATORS;
  if (atomic_load(&s->nc->sensors_wanted) > 0) want |= SNAP_SENSORS;
  if (snap_fill(b, s->wc.w, &s->links, want, MAX_CONTACTS) != 0) {
    log_error("out of memory publishing the state", NULL);
    return;
  }
  b->seq = ++s->pub_seq;
  b->world_gen = s->wc.gen;
  b->cmd_epoch = s->cmd_epoch;
  b->step = phys_world_step_index(s->wc.w);
  b->sim_time_ns = world_sim_time_ns(&s->wc);
  b->wall_mono_ns = wall_ns;
  b->overrun = s->flag_overrun;
  b->stale_command = s->flag_stale;
  tribuf_publish(&s->tb);
  /* a world change: the viewer's scene channel gets the geometry as it is now (captured here,
   * where the world may be read; never after a step) */
  if (!step && s->cfg->viewer_port) {
    scene_snap *sc = scene_snap_capture(s->wc.w, s->wc.gen);
    if (sc) scene_slot_put(&s->scene, sc);
    else log_error("out of memory capturing the scene for the viewer", NULL);
  }
  sim_update_clock(s);
  uv_async_send(s->wake); /* the loop reads the snapshot even while it polls for replies */
}

/* the world changed outside a step: new generation published, rate history dropped */
void sim_metrics_publish(sim *s, int world_changed) {
  if (world_changed) {
    s->met.world_loaded = s->wc.doc != NULL;
    s->met.bodies = phys_world_body_count(s->wc.w);
  }
  pthread_mutex_lock(&s->met_mu);
  s->met_pub = s->met;
  pthread_mutex_unlock(&s->met_mu);
}

void sim_metrics_get(sim *s, physd_metrics *out) {
  pthread_mutex_lock(&s->met_mu);
  *out = s->met_pub;
  pthread_mutex_unlock(&s->met_mu);
}

void sim_world_changed(sim *s) {
  s->pub_bucket = UINT64_MAX;
  sim_metrics_publish(s, 1);
  if (link_index_build(&s->links, s->wc.w)) log_error("out of memory indexing the links", NULL);
  s->flag_overrun = s->flag_stale = 0;
  stats_reset_rate(&s->stats);
  s->next_deadline_ns = mono_now_ns();
  sim_publish(s, mono_now_ns(), 0);
}
