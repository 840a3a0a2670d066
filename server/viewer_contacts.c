/* viewer_contacts.c - the viewer's /contacts channel as bytes (see viewer_enc.h): the contacts of
 * a state snapshot as foxglove.SceneUpdate arrows, and that channel's JSON schema. Loop thread;
 * reentrant. */
#include <math.h>

#include "viewer_enc.h"

#define M_PER_N 0.01      /* arrow length per newton */
#define MIN_LEN 0.02      /* so that a light contact still shows */
#define MAX_LEN 1.0

/* the unit quaternion (w, x, y, z) that turns +x onto the unit vector d */
static void x_to(double q[4], const double d[3]) {
  if (d[0] < -1 + 1e-9) { /* opposite: half a turn about z */
    q[0] = q[1] = q[2] = 0;
    q[3] = 1;
    return;
  }
  double w = 1 + d[0], y = -d[2], z = d[1], n = sqrt(w * w + y * y + z * z);
  q[0] = w / n;
  q[1] = 0;
  q[2] = y / n;
  q[3] = z / n;
}

int venc_contacts(vbuf *b, const state_snap *s, uint64_t timestep_ns) {
  vb_reset(b);
  uint64_t t = s->sim_time_ns;
  vb_printf(b, "{\"deletions\":[],\"entities\":[{\"timestamp\":{\"sec\":%llu,\"nsec\":%llu},"
               "\"frame_id\":\"" VIEWER_WORLD_FRAME "\",\"id\":\"contacts\","
               "\"lifetime\":{\"sec\":0,\"nsec\":0},\"frame_locked\":false,\"arrows\":[",
            (unsigned long long)(t / 1000000000ull), (unsigned long long)(t % 1000000000ull));
  double dt = timestep_ns ? (double)timestep_ns * 1e-9 : 1.0;
  int n = s->has_contacts ? s->ncontacts : 0;
  for (int i = 0; i < n; i++) {
    const contact_snap *c = &s->contacts[i];
    double f[3] = {c->impulse[0] / dt, c->impulse[1] / dt, c->impulse[2] / dt};
    double mag = sqrt(f[0] * f[0] + f[1] * f[1] + f[2] * f[2]), d[3], q[4];
    for (int k = 0; k < 3; k++) d[k] = mag > 1e-12 ? f[k] / mag : c->normal[k];
    x_to(q, d);
    double len = fmin(MAX_LEN, fmax(MIN_LEN, mag * M_PER_N));
    vb_printf(b, "%s{\"pose\":{\"position\":{\"x\":%.17g,\"y\":%.17g,\"z\":%.17g},", i ? "," : "",
              c->pos[0], c->pos[1], c->pos[2]);
    vb_printf(b, "\"orientation\":{\"x\":%.17g,\"y\":%.17g,\"z\":%.17g,\"w\":%.17g}},", q[1], q[2],
              q[3], q[0]);
    vb_printf(b, "\"shaft_length\":%.6g,\"shaft_diameter\":%.6g,\"head_length\":%.6g,"
                 "\"head_diameter\":%.6g,\"color\":{\"r\":0.95,\"g\":0.15,\"b\":0.15,\"a\":1}}",
              0.75 * len, 0.01, 0.25 * len, 0.025);
  }
  vb_put(b, "]}]}", 4);
  return b->oom ? -1 : 0;
}

#define S_NUM "{\"type\":\"number\"}"
#define S_XYZ "{\"type\":\"object\",\"properties\":{\"x\":" S_NUM ",\"y\":" S_NUM ",\"z\":" S_NUM "}}"
#define S_XYZW                                                                               \
  "{\"type\":\"object\",\"properties\":{\"x\":" S_NUM ",\"y\":" S_NUM ",\"z\":" S_NUM         \
  ",\"w\":" S_NUM "}}"
#define S_T                                                                                  \
  "{\"type\":\"object\",\"properties\":{\"sec\":{\"type\":\"integer\"},\"nsec\":"           \
  "{\"type\":\"integer\"}}}"
const char venc_schema_contacts[] =
    "{\"title\":\"foxglove.SceneUpdate\",\"type\":\"object\",\"properties\":{"
    "\"deletions\":{\"type\":\"array\"},"
    "\"entities\":{\"type\":\"array\",\"items\":{\"title\":\"foxglove.SceneEntity\",\"type\":"
    "\"object\",\"properties\":{\"timestamp\":" S_T ",\"frame_id\":{\"type\":\"string\"},"
    "\"id\":{\"type\":\"string\"},\"lifetime\":" S_T ",\"frame_locked\":{\"type\":\"boolean\"},"
    "\"arrows\":{\"type\":\"array\",\"items\":{\"title\":\"foxglove.ArrowPrimitive\",\"type\":"
    "\"object\",\"properties\":{\"pose\":{\"type\":\"object\",\"properties\":{\"position\":" S_XYZ
    ",\"orientation\":" S_XYZW "}},\"shaft_length\":" S_NUM ",\"shaft_diameter\":" S_NUM
    ",\"head_length\":" S_NUM ",\"head_diameter\":" S_NUM ",\"color\":{\"type\":\"object\","
    "\"properties\":{\"r\":" S_NUM ",\"g\":" S_NUM ",\"b\":" S_NUM ",\"a\":" S_NUM "}}}}}}}}}}";
