/* http_metrics.c - the /metrics body: the Prometheus text exposition format 0.0.4, one HELP
 * and one TYPE line per metric family, from the simulation's published figures (metrics.h)
 * and the loop thread's counters (net_counters). One table lists the plain families. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>

#include "http.h"

/* an appender over a fixed buffer: once something does not fit, `len` is past `cap` */
typedef struct out {
  char *buf;
  size_t cap, len;
} out;

static void put(out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(out *o, const char *fmt, ...) {
  if (o->len >= o->cap) return;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(o->buf + o->len, o->cap - o->len, fmt, ap);
  va_end(ap);
  o->len += n > 0 ? (size_t)n : 0;
}

/* a sample value as Prometheus reads it (NaN and infinities by their names) */
static void put_value(out *o, double v) {
  if (isnan(v)) put(o, "NaN\n");
  else if (isinf(v)) put(o, v > 0 ? "+Inf\n" : "-Inf\n");
  else put(o, "%.17g\n", v);
}

/* the plain families: name, type, help, and where the value comes from */
typedef struct family {
  const char *name, *type, *help;
  double (*value)(const physd_metrics *m, const net_counters *nc);
} family;

#define M(expr) static double v_##expr(const physd_metrics *m, const net_counters *nc)
M(overruns) { (void)nc; return (double)m->overruns; }
M(iter_max) { (void)nc; return m->iterations_max; }
M(iter_mean) { (void)nc; return m->iterations_mean; }
M(residual) { (void)nc; return m->residual; }
M(contacts) { (void)nc; return m->contacts; }
M(islands) { (void)nc; return m->islands_awake; }
M(awake) { (void)nc; return m->bodies_awake; }
M(asleep) { (void)nc; return m->bodies_asleep; }
M(bodies) { (void)nc; return m->bodies; }
M(loaded) { (void)nc; return m->world_loaded; }
M(sessions) { (void)m; return (double)atomic_load(&nc->clients); }
M(subs) { (void)m; return (double)atomic_load(&nc->subscriptions); }
M(sent) { (void)m; return (double)atomic_load(&nc->frames_sent); }
M(dropped) { (void)m; return (double)atomic_load(&nc->frames_dropped); }
#undef M

static const family families[] = {
    {"physd_overruns_total", "counter", "Real-time steps that ended after their period (Stats.overruns).", v_overruns},
    {"physd_solver_iterations_max", "gauge", "Largest contact-solver iteration count over the islands of the last step.", v_iter_max},
    {"physd_solver_iterations_mean", "gauge", "Contact-solver iterations of the last step, mean over islands weighted by contacts.", v_iter_mean},
    {"physd_solver_residual", "gauge", "Contact-solver residual (paper 002 sec. 7 metric) of the last step, worst island.", v_residual},
    {"physd_contacts", "gauge", "Contact points solved in the last step.", v_contacts},
    {"physd_islands_awake", "gauge", "Awake islands solved in the last step (the engine does not count sleeping islands; see physd_bodies_asleep).", v_islands},
    {"physd_bodies_awake", "gauge", "Bodies awake in the last step.", v_awake},
    {"physd_bodies_asleep", "gauge", "Bodies asleep in the last step.", v_asleep},
    {"physd_bodies", "gauge", "Bodies of the world.", v_bodies},
    {"physd_world_loaded", "gauge", "1 when a world is loaded (what /readyz checks), else 0.", v_loaded},
    {"physd_sessions", "gauge", "Protocol connections past Hello (Stats.clients).", v_sessions},
    {"physd_subscriptions", "gauge", "Stream subscriptions (Stats.subscriptions).", v_subs},
    {"physd_stream_frames_sent_total", "counter", "Stream frames written to subscribers (Stats.stream_frames_sent).", v_sent},
    {"physd_stream_frames_dropped_total", "counter", "Stream frames dropped: slow readers or over max_frame_bytes (Stats.stream_frames_dropped).", v_dropped},
};

size_t http_metrics_format(char *buf, size_t cap, const physd_metrics *m, const net_counters *nc) {
  out o = {buf, cap, 0};
  /* the step-time histogram: cumulative buckets, then +Inf = count */
  put(&o, "# HELP physd_step_seconds Wall time of each simulation step since the daemon started.\n"
          "# TYPE physd_step_seconds histogram\n");
  uint64_t cum = 0;
  for (int i = 0; i < METRICS_BUCKETS; i++) {
    cum += m->bucket[i];
    put(&o, "physd_step_seconds_bucket{le=\"%g\"} %llu\n", metrics_bucket_le[i],
        (unsigned long long)cum);
  }
  put(&o, "physd_step_seconds_bucket{le=\"+Inf\"} %llu\n", (unsigned long long)m->steps);
  put(&o, "physd_step_seconds_sum ");
  put_value(&o, m->step_seconds_sum);
  put(&o, "physd_step_seconds_count %llu\n", (unsigned long long)m->steps);
  for (size_t i = 0; i < sizeof families / sizeof families[0]; i++) {
    const family *f = &families[i];
    put(&o, "# HELP %s %s\n# TYPE %s %s\n%s ", f->name, f->help, f->name, f->type, f->name);
    put_value(&o, f->value(m, nc));
  }
  return o.len < cap ? o.len : 0;
}
