/* viewer_enc.c - the viewer's JSON messages and schemas (see viewer_enc.h). Numbers are printed
 * with 17 significant digits, so a pose read back is the double the engine holds. */
#include "viewer_enc.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int vb_reserve(vbuf *b, size_t extra) {
  if (b->oom) return -1;
  if (b->len + extra + 1 <= b->cap) return 0;
  size_t cap = b->cap ? b->cap : 4096;
  while (cap < b->len + extra + 1) cap *= 2;
  char *p = realloc(b->p, cap);
  if (!p) {
    b->oom = 1;
    return -1;
  }
  b->p = p;
  b->cap = cap;
  return 0;
}

void vb_reset(vbuf *b) {
  b->len = 0;
  b->oom = 0;
}

void vb_free(vbuf *b) {
  free(b->p);
  memset(b, 0, sizeof *b);
}

void vb_put(vbuf *b, const char *s, size_t n) {
  if (vb_reserve(b, n)) return;
  memcpy(b->p + b->len, s, n);
  b->len += n;
  b->p[b->len] = 0;
}

void vb_printf(vbuf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char small[256];
  int n = vsnprintf(small, sizeof small, fmt, ap);
  va_end(ap);
  if (n < 0) {
    b->oom = 1;
    return;
  }
  if ((size_t)n < sizeof small) {
    vb_put(b, small, (size_t)n);
    return;
  }
  if (vb_reserve(b, (size_t)n)) return;
  va_start(ap, fmt);
  vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
  va_end(ap);
  b->len += (size_t)n;
}

static void put_time(vbuf *b, uint64_t t_ns) {
  vb_printf(b, "{\"sec\":%llu,\"nsec\":%llu}", (unsigned long long)(t_ns / 1000000000ull),
            (unsigned long long)(t_ns % 1000000000ull));
}

/* a pose; q is (w, x, y, z) as libphys gives it, Foxglove's order is x, y, z, w */
static void put_pose(vbuf *b, const double p[3], const double q[4]) {
  vb_printf(b, "{\"position\":{\"x\":%.17g,\"y\":%.17g,\"z\":%.17g},", p[0], p[1], p[2]);
  vb_printf(b, "\"orientation\":{\"x\":%.17g,\"y\":%.17g,\"z\":%.17g,\"w\":%.17g}}", q[1], q[2],
            q[3], q[0]);
}

int venc_transforms(vbuf *b, const state_snap *s) {
  vb_reset(b);
  vb_put(b, "{\"transforms\":[", 15);
  for (int i = 0; i < s->nbodies; i++) {
    const body_snap *bs = &s->bodies[i];
    if (i) vb_put(b, ",", 1);
    vb_put(b, "{\"timestamp\":", 13);
    put_time(b, s->sim_time_ns);
    vb_printf(b, ",\"parent_frame_id\":\"" VIEWER_WORLD_FRAME "\",\"child_frame_id\":\"body/%d\",",
              (int)bs->id);
    vb_printf(b, "\"translation\":{\"x\":%.17g,\"y\":%.17g,\"z\":%.17g},", bs->pos[0], bs->pos[1],
              bs->pos[2]);
    vb_printf(b, "\"rotation\":{\"x\":%.17g,\"y\":%.17g,\"z\":%.17g,\"w\":%.17g}}", bs->quat[1],
              bs->quat[2], bs->quat[3], bs->quat[0]);
  }
  vb_put(b, "]}", 2);
  return b->oom ? -1 : 0;
}

/* rotate v by the unit quaternion q (w, x, y, z) */
static void qrot(double r[3], const double q[4], const double v[3]) {
  double w = q[0], x = q[1], y = q[2], z = q[3];
  double tx = 2 * (y * v[2] - z * v[1]), ty = 2 * (z * v[0] - x * v[2]), tz = 2 * (x * v[1] - y * v[0]);
  r[0] = v[0] + w * tx + (y * tz - z * ty);
  r[1] = v[1] + w * ty + (z * tx - x * tz);
  r[2] = v[2] + w * tz + (x * ty - y * tx);
}

/* one primitive {"pose":..,"size":{..},...,"color":..} */
static void put_prim(vbuf *b, const double p[3], const double q[4], double sx, double sy,
                     double sz, const char *color, int cylinder) {
  vb_put(b, "{\"pose\":", 8);
  put_pose(b, p, q);
  vb_printf(b, ",\"size\":{\"x\":%.17g,\"y\":%.17g,\"z\":%.17g},", sx, sy, sz);
  if (cylinder) vb_put(b, "\"bottom_scale\":1,\"top_scale\":1,", 31);
  vb_printf(b, "\"color\":%s}", color);
}

/* a mesh geom's hull: one foxglove.TriangleListPrimitive (its triangles' corners in order) */
static void put_triangles(vbuf *b, const scene_snap *sc, int i, const char *color) {
  const phys_geom_info *g = &sc->geoms[i];
  vb_put(b, "{\"pose\":", 8);
  put_pose(b, g->pos, g->quat);
  vb_put(b, ",\"points\":[", 11);
  const double *p;
  int nt = scene_snap_triangles(sc, i, &p);
  for (int k = 0; k < 3 * nt; k++)
    vb_printf(b, "%s{\"x\":%.17g,\"y\":%.17g,\"z\":%.17g}", k ? "," : "", p[3 * k],
              p[3 * k + 1], p[3 * k + 2]);
  vb_printf(b, "],\"color\":%s,\"colors\":[],\"indices\":[]}", color);
}

/* the primitives of the geoms of one entity, by kind: append to the right array */
enum { K_SPHERE, K_CUBE, K_CYL, K_TRI, NK };
static const char *const kind_key[NK] = {"spheres", "cubes", "cylinders", "triangles"};

static void put_entity_kind(vbuf *b, const scene_snap *sc, int lo, int hi, int kind,
                            const char *color, int *skipped) {
  vb_printf(b, "\"%s\":[", kind_key[kind]);
  int first = 1;
#define SEP() do { if (!first) vb_put(b, ",", 1); first = 0; } while (0)
  for (int i = lo; i < hi; i++) {
    const phys_geom_info *g = &sc->geoms[i];
    const double *s = g->size;
    switch (g->type) {
    case PHYS_GEOM_SPHERE:
      if (kind == K_SPHERE) { SEP(); put_prim(b, g->pos, g->quat, 2 * s[0], 2 * s[0], 2 * s[0], color, 0); }
      break;
    case PHYS_GEOM_ELLIPSOID:
      if (kind == K_SPHERE) { SEP(); put_prim(b, g->pos, g->quat, 2 * s[0], 2 * s[1], 2 * s[2], color, 0); }
      break;
    case PHYS_GEOM_BOX:
      if (kind == K_CUBE) { SEP(); put_prim(b, g->pos, g->quat, 2 * s[0], 2 * s[1], 2 * s[2], color, 0); }
      break;
    case PHYS_GEOM_PLANE:
      if (kind == K_CUBE) {
        /* the half-space below the local xy plane, drawn as a thin slab under it */
        double hx = s[0] > 0 ? s[0] : 10.0, hy = s[1] > 0 ? s[1] : 10.0, d[3] = {0, 0, -0.0005}, p[3];
        qrot(p, g->quat, d);
        for (int k = 0; k < 3; k++) p[k] += g->pos[k];
        SEP();
        put_prim(b, p, g->quat, 2 * hx, 2 * hy, 0.001, "{\"r\":0.55,\"g\":0.6,\"b\":0.65,\"a\":1}", 0);
      }
      break;
    case PHYS_GEOM_CYLINDER:
      if (kind == K_CYL) { SEP(); put_prim(b, g->pos, g->quat, 2 * s[0], 2 * s[0], 2 * s[1], color, 1); }
      break;
    case PHYS_GEOM_CAPSULE:
      if (kind == K_CYL) { SEP(); put_prim(b, g->pos, g->quat, 2 * s[0], 2 * s[0], 2 * s[1], color, 1); }
      if (kind == K_SPHERE)
        for (int e = -1; e <= 1; e += 2) {
          double d[3] = {0, 0, e * s[1]}, p[3];
          qrot(p, g->quat, d);
          for (int k = 0; k < 3; k++) p[k] += g->pos[k];
          SEP();
          put_prim(b, p, g->quat, 2 * s[0], 2 * s[0], 2 * s[0], color, 0);
        }
      break;
    case PHYS_GEOM_MESH:
    case PHYS_GEOM_SDF: { /* a hull, or an SDF's surface of revolution */
      const double *tri;
      if (kind == K_TRI && scene_snap_triangles(sc, i, &tri) > 0) {
        SEP();
        put_triangles(b, sc, i, color);
      } else if (kind == K_TRI && skipped) {
        (*skipped)++; /* its hull could not be read */
      }
      break;
    }
    default:
      if (kind == K_SPHERE && skipped) (*skipped)++;
      break;
    }
  }
#undef SEP
  vb_put(b, "]", 1);
}

static const char *const palette[] = {
    "{\"r\":0.89,\"g\":0.47,\"b\":0.20,\"a\":1}", "{\"r\":0.25,\"g\":0.55,\"b\":0.85,\"a\":1}",
    "{\"r\":0.35,\"g\":0.70,\"b\":0.35,\"a\":1}", "{\"r\":0.80,\"g\":0.30,\"b\":0.55,\"a\":1}",
    "{\"r\":0.90,\"g\":0.75,\"b\":0.25,\"a\":1}", "{\"r\":0.45,\"g\":0.40,\"b\":0.80,\"a\":1}",
};

int venc_scene(vbuf *b, const scene_snap *sc, uint64_t t_ns, int *skipped) {
  vb_reset(b);
  if (skipped) *skipped = 0;
  vb_put(b, "{\"deletions\":[{\"timestamp\":", 27);
  put_time(b, t_ns);
  vb_put(b, ",\"type\":1,\"id\":\"\"}],\"entities\":[", 32);
  /* geoms come in id order and a body's geoms have consecutive ids: one entity per run */
  int first = 1;
  for (int lo = 0; lo < sc->n;) {
    int hi = lo + 1;
    while (hi < sc->n && sc->geoms[hi].body == sc->geoms[lo].body) hi++;
    phys_id body = sc->geoms[lo].body;
    char frame[32];
    if (body == PHYS_ID_NONE) snprintf(frame, sizeof frame, VIEWER_WORLD_FRAME);
    else snprintf(frame, sizeof frame, "body/%d", (int)body);
    if (!first) vb_put(b, ",", 1);
    first = 0;
    vb_put(b, "{\"timestamp\":", 13);
    put_time(b, t_ns);
    vb_printf(b, ",\"frame_id\":\"%s\",\"id\":\"%s\",\"lifetime\":{\"sec\":0,\"nsec\":0},"
                 "\"frame_locked\":true,", frame, frame);
    const char *color = body == PHYS_ID_NONE ? "{\"r\":0.6,\"g\":0.6,\"b\":0.6,\"a\":1}"
                                             : palette[(unsigned)body % (sizeof palette / sizeof *palette)];
    for (int k = 0; k < NK; k++) {
      if (k) vb_put(b, ",", 1);
      put_entity_kind(b, sc, lo, hi, k, color, k == K_SPHERE || k == K_TRI ? skipped : NULL);
    }
    vb_put(b, "}", 1);
    lo = hi;
  }
  vb_put(b, "]}", 2);
  return b->oom ? -1 : 0;
}

/* ---- JSON schemas: the fields above, named and typed as Foxglove's schemas name them ---- */

#define S_TIME "{\"type\":\"object\",\"properties\":{\"sec\":{\"type\":\"integer\",\"minimum\":0},\"nsec\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":999999999}}}"
#define S_VEC3 "{\"type\":\"object\",\"properties\":{\"x\":{\"type\":\"number\"},\"y\":{\"type\":\"number\"},\"z\":{\"type\":\"number\"}}}"
#define S_QUAT "{\"type\":\"object\",\"properties\":{\"x\":{\"type\":\"number\"},\"y\":{\"type\":\"number\"},\"z\":{\"type\":\"number\"},\"w\":{\"type\":\"number\"}}}"
#define S_COLOR "{\"type\":\"object\",\"properties\":{\"r\":{\"type\":\"number\"},\"g\":{\"type\":\"number\"},\"b\":{\"type\":\"number\"},\"a\":{\"type\":\"number\"}}}"
#define S_POSE "{\"type\":\"object\",\"properties\":{\"position\":" S_VEC3 ",\"orientation\":" S_QUAT "}}"
#define S_PRIM(extra) "{\"type\":\"array\",\"items\":{\"type\":\"object\",\"properties\":{\"pose\":" S_POSE ",\"size\":" S_VEC3 extra ",\"color\":" S_COLOR "}}}"

const char venc_schema_transforms[] =
    "{\"title\":\"foxglove.FrameTransforms\",\"type\":\"object\",\"properties\":{\"transforms\":"
    "{\"type\":\"array\",\"items\":{\"title\":\"foxglove.FrameTransform\",\"type\":\"object\","
    "\"properties\":{\"timestamp\":" S_TIME ",\"parent_frame_id\":{\"type\":\"string\"},"
    "\"child_frame_id\":{\"type\":\"string\"},\"translation\":" S_VEC3 ",\"rotation\":" S_QUAT
    "}}}}}";

const char venc_schema_scene[] =
    "{\"title\":\"foxglove.SceneUpdate\",\"type\":\"object\",\"properties\":{"
    "\"deletions\":{\"type\":\"array\",\"items\":{\"title\":\"foxglove.SceneEntityDeletion\","
    "\"type\":\"object\",\"properties\":{\"timestamp\":" S_TIME ",\"type\":{\"type\":\"integer\","
    "\"description\":\"0 MATCHING_ID, 1 ALL\"},\"id\":{\"type\":\"string\"}}}},"
    "\"entities\":{\"type\":\"array\",\"items\":{\"title\":\"foxglove.SceneEntity\",\"type\":"
    "\"object\",\"properties\":{\"timestamp\":" S_TIME ",\"frame_id\":{\"type\":\"string\"},"
    "\"id\":{\"type\":\"string\"},\"lifetime\":" S_TIME ",\"frame_locked\":{\"type\":\"boolean\"},"
    "\"spheres\":" S_PRIM("") ",\"cubes\":" S_PRIM("") ",\"cylinders\":"
    S_PRIM(",\"bottom_scale\":{\"type\":\"number\"},\"top_scale\":{\"type\":\"number\"}")
    ",\"triangles\":{\"type\":\"array\",\"items\":{\"title\":\"foxglove.TriangleListPrimitive\","
    "\"type\":\"object\",\"properties\":{\"pose\":" S_POSE ",\"points\":{\"type\":\"array\","
    "\"items\":" S_VEC3 "},\"color\":" S_COLOR ",\"colors\":{\"type\":\"array\",\"items\":"
    S_COLOR "},\"indices\":{\"type\":\"array\",\"items\":{\"type\":\"integer\"}}}}}}}}}}";
