/* hello_client.c - the smallest C controller of physd, built against INSTALLED files only.
 *
 * scripts/check-install.sh compiles it with `pkg-config --cflags --libs physclient` from a
 * staging install (meson install --destdir) and runs it against the staged physd: it connects
 * to the Unix socket, loads a world by path (the staged worlds/default.xml, inside the daemon's
 * default allowed root when that daemon found its installed worlds), steps it, and prints the
 * step, the simulated time and the first body's position. It is not built by meson: it checks
 * the installed headers, library and pkg-config file, not the source tree's.
 *
 *   usage: hello_client SOCKET WORLD.xml [STEPS]
 * Exit status: 0 the world stepped as asked; 1 a request failed or the state is wrong (said on
 * stderr); 2 usage. */
#include <physclient.h>

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  if (argc < 3 || argc > 4) {
    fprintf(stderr, "usage: hello_client SOCKET WORLD.xml [STEPS]\n");
    return 2;
  }
  unsigned steps = argc == 4 ? (unsigned)strtoul(argv[3], NULL, 10) : 100;
  if (steps == 0) {
    fprintf(stderr, "hello_client: STEPS must be a positive integer\n");
    return 2;
  }
  physclient *c = NULL;
  physclient_error err;
  if (physclient_connect_unix(argv[1], "hello_client", NULL, &c, &err) != PHYSCLIENT_OK) {
    fprintf(stderr, "hello_client: connect %s: %s\n", argv[1], err.message);
    return 1;
  }
  const physclient_welcome *w = physclient_welcome_info(c);
  printf("connected: %s, protocol %u.%u\n", w->server_version, (unsigned)w->major,
         (unsigned)w->minor);
  physclient_world_loaded loaded;
  int rc = 1;
  physclient_state st = {0};
  if (physclient_load_world_path(c, argv[2], PHYSCLIENT_FORMAT_AUTO, &loaded, &err) !=
      PHYSCLIENT_OK) {
    fprintf(stderr, "hello_client: load %s: %s\n", argv[2], err.message);
    goto done;
  }
  printf("loaded: %s, %u bodies\n", loaded.name, loaded.bodies);
  if (physclient_step(c, steps, &err) != PHYSCLIENT_OK) {
    fprintf(stderr, "hello_client: step: %s\n", err.message);
    goto done;
  }
  if (physclient_get_state(c, NULL, &st, &err) != PHYSCLIENT_OK) {
    fprintf(stderr, "hello_client: get state: %s\n", err.message);
    goto done;
  }
  if (st.step != steps || st.n_bodies == 0) {
    fprintf(stderr, "hello_client: expected step %u with bodies, got step %llu with %zu bodies\n",
            steps, (unsigned long long)st.step, st.n_bodies);
    goto done;
  }
  printf("state: step %llu, t = %.3f s, body %d at (%.4f, %.4f, %.4f)\n",
         (unsigned long long)st.step, (double)st.sim_time_ns * 1e-9, (int)st.bodies[0].id,
         st.bodies[0].pos.x, st.bodies[0].pos.y, st.bodies[0].pos.z);
  rc = 0;
done:
  physclient_state_free(&st);
  physclient_close(c);
  return rc;
}
