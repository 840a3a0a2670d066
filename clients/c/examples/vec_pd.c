/* vec_pd.c - a PD policy over many worlds of one model in one physd, from C (libphysclient,
 * protocol 1.9): the C twin of clients/python/examples/vec_pd.py.
 *
 * Loads --worlds copies (default 256) of --world (default MuJoCo's humanoid, sent as bytes so
 * the daemon needs no allowed root for it) with world_count, then runs --steps env steps, one
 * physclient_step_batch per step for all worlds: every hinge or slide actuator's control is a
 * PD law pulling its joint back to its start position (kp --kp, kd --kd; the server clamps to
 * the ctrl range). An episode ends after --episode-steps env steps; its world is reset inside
 * the next step's request. Prints one JSON line (env steps, episodes, world steps per second of
 * wall time); exits 1 when a state is not finite or a request fails.
 *
 *     build/server/physd --socket /tmp/physd.sock &
 *     build/clients/c/examples/vec_pd --socket /tmp/physd.sock --worlds 256 --steps 200
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "physclient.h"

typedef struct opts {
  const char *socket, *world;
  int worlds, steps, episode_steps;
  double kp, kd;
} opts;

static int parse(int argc, char **argv, opts *o) {
  *o = (opts){NULL, "/usr/share/mujoco/model/humanoid/humanoid.xml", 256, 200, 100, 2.0, 0.1};
  for (int i = 1; i + 1 < argc; i += 2) {
    const char *k = argv[i], *v = argv[i + 1];
    if (!strcmp(k, "--socket")) o->socket = v;
    else if (!strcmp(k, "--world")) o->world = v;
    else if (!strcmp(k, "--worlds")) o->worlds = atoi(v);
    else if (!strcmp(k, "--steps")) o->steps = atoi(v);
    else if (!strcmp(k, "--episode-steps")) o->episode_steps = atoi(v);
    else if (!strcmp(k, "--kp")) o->kp = atof(v);
    else if (!strcmp(k, "--kd")) o->kd = atof(v);
    else return -1;
  }
  return argc % 2 == 1 && o->worlds >= 1 && o->steps >= 1 && o->episode_steps >= 1 ? 0 : -1;
}

static char *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = n >= 0 ? malloc((size_t)n + 1) : NULL;
  if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
    free(buf);
    buf = NULL;
  }
  fclose(f);
  *len = (size_t)n;
  return buf;
}

/* for each actuator, the qpos and qvel column of its joint when it has one value (else -1) */
static void actuator_columns(const physclient_model_info *mi, int *qc, int *vc) {
  for (size_t a = 0; a < mi->n_actuator_info; a++) {
    qc[a] = vc[a] = -1;
    int q = 0, v = 0;
    for (size_t j = 0; j < mi->n_joints; j++) {
      const physclient_joint_info *ji = &mi->joints[j];
      if (ji->id == mi->actuator_info[a].joint && ji->nq == 1) {
        qc[a] = q;
        vc[a] = v;
      }
      q += (int)ji->nq;
      v += (int)ji->nv;
    }
  }
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* the run, after the connection; 0 or 1 */
static int run(physclient *c, const opts *o, const char *doc, size_t len) {
  physclient_error err;
  physclient_load_options lo = {.name = "vec_pd", .world_count = (uint32_t)o->worlds};
  physclient_world_loaded wl;
  physclient_model_info *mi = NULL;
  if (physclient_load_world_bytes_opts(c, doc, len, &lo, &wl, NULL, &err) ||
      physclient_get_model_info(c, &mi, &err)) {
    fprintf(stderr, "vec_pd: %s\n", err.message);
    return 1;
  }
  size_t nw = (size_t)o->worlds, nu = mi->n_actuator_info;
  int *qc = calloc(nu + 1, sizeof *qc), *vc = calloc(nu + 1, sizeof *vc);
  double *q0 = calloc(nw * nu + 1, sizeof *q0), *ctrl = calloc(nw * nu + 1, sizeof *ctrl);
  int32_t *reset = calloc(nw, sizeof *reset), *episode = calloc(nw, sizeof *episode);
  physclient_batch_frame f = {0};
  int rc = 1;
  if (!qc || !vc || !q0 || !ctrl || !reset || !episode) goto out;
  actuator_columns(mi, qc, vc);
  /* every world as loaded, observed without a step: the PD targets */
  for (size_t w = 0; w < nw; w++) reset[w] = (int32_t)w;
  physclient_batch_request rq = {.reset = reset, .n_reset = nw, .no_step = true, .qpos = true,
                                 .qvel = true};
  if (physclient_step_batch(c, &rq, &f, &err)) goto fail;
  for (size_t w = 0; w < nw; w++)
    for (size_t a = 0; a < nu; a++)
      q0[w * nu + a] = qc[a] >= 0 ? f.qpos[w * f.nq + (size_t)qc[a]] : 0.0;
  long episodes = 0;
  size_t nreset = 0;
  double t0 = now_s();
  for (int s = 0; s < o->steps; s++) {
    for (size_t w = 0; w < nw; w++)
      for (size_t a = 0; a < nu; a++) {
        if (qc[a] < 0) continue;
        double q = f.qpos[w * f.nq + (size_t)qc[a]], qd = f.qvel[w * f.nv + (size_t)vc[a]];
        ctrl[w * nu + a] = o->kp * (q0[w * nu + a] - q) - o->kd * qd;
      }
    physclient_batch_request st = {.ctrl = ctrl, .n_ctrl = nw * nu, .reset = reset,
                                   .n_reset = nreset, .qpos = true, .qvel = true};
    if (physclient_step_batch(c, &st, &f, &err)) goto fail;
    /* episodes that end now are reset inside the next request */
    nreset = 0;
    for (size_t w = 0; w < nw; w++) {
      episode[w]++;
      if (episode[w] >= o->episode_steps || f.status[w]) {
        reset[nreset++] = (int32_t)w;
        episode[w] = 0;
        episodes++;
      }
    }
  }
  double wall = now_s() - t0;
  int finite = 1;
  for (size_t i = 0; i < nw * f.nq; i++) finite &= isfinite(f.qpos[i]) != 0;
  printf("{\"worlds\": %zu, \"env_steps\": %d, \"episodes_ended\": %ld, \"nq\": %u, \"nu\": %zu, "
         "\"wall_s\": %.3f, \"world_steps_per_s\": %.1f, \"finite\": %s}\n",
         nw, o->steps, episodes, f.nq, nu, wall, wall > 0 ? (double)nw * o->steps / wall : 0.0,
         finite ? "true" : "false");
  rc = finite ? 0 : 1;
  goto out;
fail:
  fprintf(stderr, "vec_pd: StepBatch: %s\n", err.message);
out:
  physclient_batch_frame_free(&f);
  physclient_model_info_free(mi);
  free(qc);
  free(vc);
  free(q0);
  free(ctrl);
  free(reset);
  free(episode);
  return rc;
}

int main(int argc, char **argv) {
  opts o;
  if (parse(argc, argv, &o)) {
    fprintf(stderr, "usage: vec_pd [--socket PATH] [--world FILE.xml] [--worlds N] [--steps N] "
                    "[--episode-steps N] [--kp X] [--kd X]\n");
    return 2;
  }
  size_t len;
  char *doc = read_file(o.world, &len);
  if (!doc) {
    fprintf(stderr, "vec_pd: cannot read %s\n", o.world);
    return 1;
  }
  physclient *c = NULL;
  physclient_error err;
  if (physclient_connect_unix(o.socket, "vec_pd", NULL, &c, &err)) {
    fprintf(stderr, "vec_pd: %s\n", err.message);
    free(doc);
    return 1;
  }
  physclient_set_timeout_ms(c, 120000);
  int rc = run(c, &o, doc, len);
  physclient_close(c);
  free(doc);
  return rc;
}
