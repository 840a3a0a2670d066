/* mesh_io.c - mesh files: binary STL, ASCII STL and Wavefront OBJ. Their vertices for hull
 * meshes (phys_mesh_read_file), and their triangles too for non-convex meshes
 * (phys_mesh_read_triangles: OBJ `f` lines, STL facets with equal vertices merged). */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "core/world_internal.h"

/* a growable vertex list */
typedef struct vlist {
  double *v;
  int n, cap;
} vlist;

static int vlist_push(vlist *l, const double x[3]) {
  if (l->n == l->cap) {
    int cap = l->cap ? 2 * l->cap : 64;
    if (cap > (1 << 26)) return -1;
    double *nv = realloc(l->v, (size_t)cap * 3 * sizeof(double));
    if (!nv) return -1;
    l->v = nv;
    l->cap = cap;
  }
  memcpy(&l->v[3 * l->n], x, 3 * sizeof(double));
  l->n++;
  return 0;
}

/* a growable index list (OBJ faces) */
typedef struct ilist {
  int *v;
  int n, cap;
} ilist;

static int ilist_push(ilist *l, int x) {
  if (l->n == l->cap) {
    int cap = l->cap ? 2 * l->cap : 64;
    if (cap > (1 << 28)) return -1;
    int *nv = realloc(l->v, (size_t)cap * sizeof(int));
    if (!nv) return -1;
    l->v = nv;
    l->cap = cap;
  }
  l->v[l->n++] = x;
  return 0;
}

/* whole file into memory (NUL-terminated); NULL with errno set on failure */
static char *read_all(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap + 1);
  while (buf) {
    size_t got = fread(buf + n, 1, cap - n, f);
    n += got;
    if (n < cap) break;
    cap *= 2;
    char *nb = realloc(buf, cap + 1);
    if (!nb) { free(buf); buf = NULL; break; }
    buf = nb;
  }
  int bad = ferror(f);
  fclose(f);
  if (!buf) { errno = ENOMEM; return NULL; }
  if (bad) { free(buf); errno = EIO; return NULL; }
  buf[n] = '\0';
  *len = n;
  return buf;
}

static float get_f32(const unsigned char *p) {
  uint32_t u = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

/* binary STL: 80-byte header, triangle count, 50 bytes per triangle (normal, 3 vertices, attr) */
static phys_status read_stl_binary(const char *path, const unsigned char *d, size_t len,
                                   vlist *out, phys_error *err) {
  uint32_t ntri = (uint32_t)d[80] | (uint32_t)d[81] << 8 | (uint32_t)d[82] << 16 |
                  (uint32_t)d[83] << 24;
  if (ntri == 0) return phys__error(err, PHYS_E_INVALID, "%s: binary STL with no triangles", path);
  if ((uint64_t)len != 84 + 50 * (uint64_t)ntri)
    return phys__error(err, PHYS_E_INVALID,
                       "%s: truncated binary STL: %u triangles need %llu bytes, the file has %zu",
                       path, ntri, (unsigned long long)(84 + 50 * (uint64_t)ntri), len);
  for (uint32_t t = 0; t < ntri; t++)
    for (int k = 0; k < 3; k++) {
      const unsigned char *p = d + 84 + 50 * (size_t)t + 12 + 12 * k;
      double x[3] = {get_f32(p), get_f32(p + 4), get_f32(p + 8)};
      if (vlist_push(out, x)) return phys__error(err, PHYS_E_NOMEM, "%s: out of memory", path);
    }
  return PHYS_OK;
}

/* the next whitespace-separated token starting at *s (line counted), or NULL at the end */
static const char *next_token(const char **s, int *line, size_t *tlen) {
  const char *p = *s;
  while (*p && isspace((unsigned char)*p)) {
    if (*p == '\n') (*line)++;
    p++;
  }
  if (!*p) return *s = p, NULL;
  const char *start = p;
  while (*p && !isspace((unsigned char)*p)) p++;
  *tlen = (size_t)(p - start);
  *s = p;
  return start;
}

/* parses 3 numbers after a keyword; returns 0 or -1 */
static int parse3(const char **s, int *line, double x[3]) {
  for (int k = 0; k < 3; k++) {
    size_t tl;
    const char *t = next_token(s, line, &tl);
    if (!t) return -1;
    char *end;
    x[k] = strtod(t, &end);
    if (end != t + tl || !isfinite(x[k])) return -1;
  }
  return 0;
}

/* ASCII STL: "vertex x y z" lines inside facets, ended by "endsolid" */
static phys_status read_stl_ascii(const char *path, const char *text, vlist *out,
                                  phys_error *err) {
  const char *s = text;
  int line = 1, ended = 0;
  size_t tl;
  const char *t;
  while ((t = next_token(&s, &line, &tl))) {
    if (tl == 6 && strncmp(t, "vertex", 6) == 0) {
      double x[3];
      if (parse3(&s, &line, x))
        return phys__error(err, PHYS_E_INVALID, "%s:%d: vertex needs 3 finite numbers", path, line);
      if (vlist_push(out, x)) return phys__error(err, PHYS_E_NOMEM, "%s: out of memory", path);
    } else if (tl == 8 && strncmp(t, "endsolid", 8) == 0) {
      ended = 1;
      break;
    }
  }
  if (out->n == 0) return phys__error(err, PHYS_E_INVALID, "%s: ASCII STL with no vertices", path);
  if (!ended || out->n % 3)
    return phys__error(err, PHYS_E_INVALID, "%s:%d: truncated ASCII STL (no endsolid or a partial facet)",
                       path, line);
  return PHYS_OK;
}

/* one OBJ "f" line (p after "f"): its corners' vertex indices (1-based, or negative from the
 * last vertex so far; "/vt/vn" tails skipped), fanned into triangles pushed to tris */
static phys_status obj_face(const char *path, int line, const char *p, const char *eol, int nv,
                            ilist *tris, phys_error *err) {
  int first = -1, prev = -1, corners = 0;
  while (p < eol) {
    while (p < eol && (*p == ' ' || *p == '\t' || *p == '\r')) p++;
    if (p >= eol) break;
    char *end;
    long i = strtol(p, &end, 10);
    if (end == p)
      return phys__error(err, PHYS_E_INVALID, "%s:%d: 'f' corner is not a vertex index", path, line);
    long idx = i < 0 ? nv + i : i - 1;
    if (i == 0 || idx < 0 || idx >= nv)
      return phys__error(err, PHYS_E_INVALID, "%s:%d: 'f' index %ld outside the %d vertices so far",
                         path, line, i, nv);
    p = end;
    while (p < eol && *p != ' ' && *p != '\t' && *p != '\r') p++; /* /vt/vn */
    if (corners == 0) first = (int)idx;
    else if (corners >= 2 && (ilist_push(tris, first) || ilist_push(tris, prev) ||
                              ilist_push(tris, (int)idx)))
      return phys__error(err, PHYS_E_NOMEM, "%s: out of memory", path);
    prev = (int)idx;
    corners++;
  }
  if (corners < 3)
    return phys__error(err, PHYS_E_INVALID, "%s:%d: 'f' needs 3 or more corners", path, line);
  return PHYS_OK;
}

/* OBJ: "v x y z [w]" lines, and "f" lines into tris when it is non-NULL; everything else
 * (normals, texture coordinates, groups) is skipped */
static phys_status read_obj(const char *path, const char *text, vlist *out, ilist *tris,
                            phys_error *err) {
  int line = 1;
  for (const char *p = text; *p; line++) {
    const char *eol = strchr(p, '\n');
    if (!eol) eol = p + strlen(p);
    while (p < eol && (*p == ' ' || *p == '\t')) p++;
    if (eol - p >= 2 && p[0] == 'v' && (p[1] == ' ' || p[1] == '\t')) {
      double x[3];
      const char *s = p + 2;
      int l2 = line;
      char *end;
      for (int k = 0; k < 3; k++) {
        x[k] = strtod(s, &end);
        if (end == s || end > eol || !isfinite(x[k]))
          return phys__error(err, PHYS_E_INVALID, "%s:%d: 'v' needs 3 finite numbers", path, l2);
        s = end;
      }
      if (vlist_push(out, x)) return phys__error(err, PHYS_E_NOMEM, "%s: out of memory", path);
    } else if (tris && eol - p >= 2 && p[0] == 'f' && (p[1] == ' ' || p[1] == '\t')) {
      phys_status st = obj_face(path, line, p + 2, eol, out->n, tris, err);
      if (st) return st;
    }
    p = *eol ? eol + 1 : eol;
  }
  if (out->n == 0) return phys__error(err, PHYS_E_INVALID, "%s: OBJ file with no 'v' vertices", path);
  if (tris && tris->n == 0)
    return phys__error(err, PHYS_E_INVALID, "%s: OBJ file with no 'f' faces", path);
  return PHYS_OK;
}

static int has_ext(const char *path, const char *ext) {
  size_t n = strlen(path), e = strlen(ext);
  return n >= e && strcasecmp(path + n - e, ext) == 0;
}

/* vertices of a mesh file (scaled) into *vertices, and OBJ faces into tris when non-NULL */
static phys_status read_mesh(const char *path, const double scale[3], double **vertices,
                             int *nvert, ilist *tris, phys_error *err) {
  if (!path || !vertices || !nvert)
    return phys__error(err, PHYS_E_INVALID, "mesh file: NULL argument");
  double sc[3] = {1.0, 1.0, 1.0};
  if (scale) {
    for (int k = 0; k < 3; k++) {
      if (!isfinite(scale[k]) || scale[k] == 0.0)
        return phys__error(err, PHYS_E_INVALID, "%s: scale must be finite and non-zero", path);
      sc[k] = scale[k];
    }
  }
  size_t len = 0;
  char *data = read_all(path, &len);
  if (!data) return phys__error(err, PHYS_E_IO, "%s: cannot read: %s", path, strerror(errno));
  vlist l = {0};
  phys_status st;
  if (len == 0) {
    st = phys__error(err, PHYS_E_INVALID, "%s: empty mesh file", path);
  } else if (has_ext(path, ".obj")) {
    st = read_obj(path, data, &l, tris, err);
  } else {
    /* STL: binary when the size matches its triangle count, ASCII when it starts with "solid" */
    int binary = 0;
    if (len >= 84) {
      const unsigned char *d = (const unsigned char *)data;
      uint64_t ntri = (uint64_t)d[80] | (uint64_t)d[81] << 8 | (uint64_t)d[82] << 16 |
                      (uint64_t)d[83] << 24;
      binary = (uint64_t)len == 84 + 50 * ntri;
    }
    const char *p = data;
    while (*p && isspace((unsigned char)*p)) p++;
    int ascii = !binary && strncmp(p, "solid", 5) == 0 && strlen(data) == len;
    if (binary || (!ascii && len >= 84))
      st = read_stl_binary(path, (const unsigned char *)data, len, &l, err);
    else if (ascii)
      st = read_stl_ascii(path, data, &l, err);
    else
      st = phys__error(err, PHYS_E_INVALID, "%s: not an STL file (%zu bytes, truncated?)", path, len);
  }
  free(data);
  if (st == PHYS_OK) {
    for (int i = 0; i < l.n; i++)
      for (int k = 0; k < 3; k++) l.v[3 * i + k] *= sc[k];
    *vertices = l.v;
    *nvert = l.n;
  } else {
    free(l.v);
  }
  return st;
}

phys_status phys_mesh_read_file(const char *path, const double scale[3], double **vertices,
                                int *nvert, phys_error *err) {
  return read_mesh(path, scale, vertices, nvert, NULL, err);
}

/* a vertex with its index, ordered by coordinates then index (for merging equal ones) */
typedef struct vkey {
  double x[3];
  int i;
} vkey;

static int vkey_cmp(const void *pa, const void *pb) {
  const vkey *a = pa, *b = pb;
  for (int k = 0; k < 3; k++)
    if (a->x[k] != b->x[k]) return a->x[k] < b->x[k] ? -1 : 1;
  return (a->i > b->i) - (a->i < b->i);
}

/* STL's 3 vertices per facet: equal vertices merged (first occurrence's order kept), the
 * facets as triangles of the merged ones; 0 or -1 when out of memory */
static int weld_facets(double **v, int *nv, int **tri, int *ntri) {
  int n = *nv;
  vkey *k = malloc((size_t)(n > 0 ? n : 1) * sizeof *k);
  int *rep = malloc((size_t)(n > 0 ? n : 1) * sizeof *rep);
  int *t = malloc((size_t)(n > 0 ? n : 1) * sizeof *t);
  if (!k || !rep || !t) {
    free(k);
    free(rep);
    free(t);
    return -1;
  }
  for (int i = 0; i < n; i++) {
    memcpy(k[i].x, *v + 3 * i, sizeof k[i].x);
    k[i].i = i;
  }
  qsort(k, (size_t)n, sizeof *k, vkey_cmp);
  for (int i = 0; i < n; i++)
    rep[k[i].i] = i > 0 && memcmp(k[i].x, k[i - 1].x, sizeof k[i].x) == 0 ? rep[k[i - 1].i] : k[i].i;
  /* new index of each kept vertex, in first-occurrence order; t holds them for a moment */
  int m = 0;
  for (int i = 0; i < n; i++)
    if (rep[i] == i) {
      memmove(*v + 3 * m, *v + 3 * i, 3 * sizeof(double));
      t[i] = m++;
    }
  for (int i = 0; i < n; i++) rep[i] = t[rep[i]];
  memcpy(t, rep, (size_t)n * sizeof *t);
  free(k);
  free(rep);
  *nv = m;
  *tri = t;
  *ntri = n / 3;
  return 0;
}

phys_status phys_mesh_read_triangles(const char *path, const double scale[3], double **vertices,
                                     int *nvert, int **triangles, int *ntri, phys_error *err) {
  if (!path || !vertices || !nvert || !triangles || !ntri)
    return phys__error(err, PHYS_E_INVALID, "mesh file: NULL argument");
  ilist faces = {0};
  int obj = has_ext(path, ".obj");
  phys_status st = read_mesh(path, scale, vertices, nvert, obj ? &faces : NULL, err);
  if (st) {
    free(faces.v);
    return st;
  }
  if (obj) {
    *triangles = faces.v;
    *ntri = faces.n / 3;
  } else if (weld_facets(vertices, nvert, triangles, ntri)) {
    free(*vertices);
    *vertices = NULL;
    return phys__error(err, PHYS_E_NOMEM, "%s: out of memory", path);
  }
  /* a mirroring scale turns the winding: swap two corners to keep the triangles outward */
  int neg = 0;
  for (int k = 0; scale && k < 3; k++) neg ^= scale[k] < 0.0;
  for (int t = 0; neg && t < *ntri; t++) {
    int x = (*triangles)[3 * t + 1];
    (*triangles)[3 * t + 1] = (*triangles)[3 * t + 2];
    (*triangles)[3 * t + 2] = x;
  }
  return PHYS_OK;
}
