/* sdf.c - the world's SDF profile registry (phys_world_add_sdf and its queries) and the
 * triangulated surface of a profile or a threaded rod for viewers (phys_world_get_sdf_surface). */
#include <math.h>
#include <string.h>
#include "core/world_internal.h"
#include "core/alloc.h"

const phys_sdf_shape *phys__sdf_shape(const phys_world *w, int sdf) {
  if (!w || sdf < 0 || sdf >= w->nsdfs) return NULL;
  return &w->sdfs[sdf].shape;
}

void phys__sdf_relink(phys_world *w) {
  for (int g = 0; g < w->ngeoms; g++)
    if (w->geoms[g].type == PHYS_GEOM_SDF) w->geoms[g].shape.sdf = &w->sdfs[w->geoms[g].sdf].shape;
}

phys_status phys_world_add_sdf(phys_world *w, const phys_sdf_desc *desc, const char *name,
                               int *out_sdf) {
  if (!w) return PHYS_E_INVALID;
  if (name && strlen(name) >= sizeof w->sdfs[0].name)
    return phys__fail(w, PHYS_E_INVALID, "sdf '%.40s...': name longer than 63 bytes", name);
  const char *who = name ? name : "(unnamed)";
  if (name && phys_world_find_sdf(w, name) >= 0)
    return phys__fail(w, PHYS_E_INVALID, "sdf '%s': the name is taken", who);
  char why[160];
  if (phys__sdf_check(desc, why, sizeof why))
    return phys__fail(w, PHYS_E_INVALID, "sdf '%s': %s", who, why);
  if (PHYS_RESERVE(w->sdfs, w->sdfs_cap, w->nsdfs + 1)) {
    phys__sdf_relink(w);
    return phys__fail(w, PHYS_E_NOMEM, "out of memory");
  }
  phys_sdf *s = &w->sdfs[w->nsdfs];
  memset(s, 0, sizeof *s);
  if (name) strcpy(s->name, name);
  s->shape.desc = *desc;
  /* unused points zeroed: the description compares and hashes whole */
  for (int i = desc->npoint; i < PHYS_SDF_MAX_POINTS; i++)
    s->shape.desc.point[i][0] = s->shape.desc.point[i][1] = 0.0;
  phys__sdf_derive(&s->shape);
  if (!(s->shape.volume > 0.0) || !isfinite(s->shape.volume)) {
    phys__sdf_relink(w);
    return phys__fail(w, PHYS_E_INVALID, "sdf '%s': the solid has no volume", who);
  }
  w->nsdfs++;
  phys__sdf_relink(w);
  if (out_sdf) *out_sdf = w->nsdfs - 1;
  return PHYS_OK;
}

int phys_world_find_sdf(const phys_world *w, const char *name) {
  if (!w || !name || !name[0]) return -1;
  for (int i = 0; i < w->nsdfs; i++)
    if (strcmp(w->sdfs[i].name, name) == 0) return i;
  return -1;
}

phys_status phys_world_get_sdf(const phys_world *w, int sdf, phys_sdf_desc *out) {
  const phys_sdf_shape *s = phys__sdf_shape(w, sdf);
  if (!s) return phys__fail((phys_world *)w, PHYS_E_NOT_FOUND, "sdf %d: no such profile", sdf);
  *out = s->desc;
  return PHYS_OK;
}

/* ---- surface ------------------------------------------------------------------------------ */

/* most outline points: per point two offsets and a join or cap arc */
#define ARC_STEPS 8
#define MAX_OUTLINE (2 * PHYS_SDF_MAX_POINTS * (ARC_STEPS + 2) + 8)

/* unit left normal of segment k */
static void seg_normal(const phys_sdf_desc *d, int k, double n[2]) {
  double dr = d->point[k + 1][0] - d->point[k][0], dz = d->point[k + 1][1] - d->point[k][1];
  double len = hypot(dr, dz);
  n[0] = -dz / len;
  n[1] = dr / len;
}

/* arc of radius t about c from angle a0 to a1 (the turn taken as given), excluding its start */
static int arc(double (*o)[2], int n, const double c[2], double t, double a0, double a1) {
  int steps = (int)ceil(fabs(a1 - a0) / (M_PI / ARC_STEPS));
  if (steps < 1) steps = 1;
  for (int i = 1; i <= steps; i++) {
    double a = a0 + (a1 - a0) * i / steps;
    o[n][0] = c[0] + t * cos(a);
    o[n][1] = c[1] + t * sin(a);
    n++;
  }
  return n;
}

/* signed turn from angle a to b in (-pi, pi] */
static double turn(double a, double b) {
  double x = b - a;
  while (x > M_PI) x -= 2.0 * M_PI;
  while (x <= -M_PI) x += 2.0 * M_PI;
  return x;
}

/* the closed outline of the thickened profile: the left offsets forward with arcs at the
 * joins, a round cap, the right offsets backward, the other cap; clockwise in (r, z) for a
 * profile going outwards; r below 0 is clamped to the axis */
static int outline(const phys_sdf_desc *d, double (*o)[2]) {
  double t = d->thickness;
  int ns = d->npoint - 1, n = 0;
  double nrm[PHYS_SDF_MAX_POINTS][2] = {{0.0, 1.0}}, ang[PHYS_SDF_MAX_POINTS] = {0.0};
  for (int k = 0; k < ns; k++) { /* ns >= 1 (a checked profile) */
    seg_normal(d, k, nrm[k]);
    ang[k] = atan2(nrm[k][1], nrm[k][0]);
  }
  /* left side forward */
  o[n][0] = d->point[0][0] + t * nrm[0][0];
  o[n][1] = d->point[0][1] + t * nrm[0][1];
  n++;
  for (int k = 0; k < ns; k++) {
    if (k > 0) n = arc(o, n, d->point[k], t, ang[k - 1], ang[k - 1] + turn(ang[k - 1], ang[k]));
    o[n][0] = d->point[k + 1][0] + t * nrm[k][0];
    o[n][1] = d->point[k + 1][1] + t * nrm[k][1];
    n++;
  }
  /* end cap: from the left normal through the segment's direction to the right normal */
  n = arc(o, n, d->point[ns], t, ang[ns - 1], ang[ns - 1] - M_PI);
  /* right side backward */
  for (int k = ns - 1; k >= 0; k--) {
    if (k < ns - 1) {
      double a0 = ang[k + 1] + M_PI, a1 = ang[k] + M_PI;
      n = arc(o, n, d->point[k + 1], t, a0, a0 + turn(a0, a1));
    }
    o[n][0] = d->point[k][0] - t * nrm[k][0];
    o[n][1] = d->point[k][1] - t * nrm[k][1];
    n++;
  }
  /* start cap back to the first point (left out: the loop closes on it) */
  n = arc(o, n, d->point[0], t, ang[0] + M_PI, ang[0]);
  n--;
  for (int i = 0; i < n; i++)
    if (o[i][0] < 0.0) o[i][0] = 0.0;
  return n;
}

/* rows of a thread's surface per pitch (its outline's corners fall between rows by at most
 * P/32: a corner is cut by at most 0.03 P) */
#define THREAD_ROWS_PER_PITCH 16

/* a threaded rod's surface: a grid over (z, azimuth) at radius f(z - P theta / (2 pi)) and a
 * fan closing each flat end, counter-clockwise from outside */
static void thread_surface(const phys_sdf_desc *d, int seg, double *vert, int vert_cap,
                           int *nvert, int *tri, int tri_cap, int *ntri) {
  int rows = (int)ceil(d->length / d->pitch * THREAD_ROWS_PER_PITCH);
  if (rows < 1) rows = 1;
  int nv = (rows + 1) * seg + 2, t = 0;
  *nvert = nv;
  *ntri = 2 * rows * seg + 2 * seg;
  for (int i = 0; i <= rows; i++)
    for (int j = 0; j < seg; j++) {
      int v = i * seg + j;
      if (v >= vert_cap) continue;
      double th = 2.0 * M_PI * j / seg, z = -0.5 * d->length + d->length * i / rows;
      double r = phys__sdf_thread_radius(d, z - d->pitch * th / (2.0 * M_PI));
      vert[3 * v] = r * cos(th);
      vert[3 * v + 1] = r * sin(th);
      vert[3 * v + 2] = z;
    }
  for (int e = 0; e < 2; e++) /* the ends' centres */
    if (nv - 2 + e < vert_cap) {
      vert[3 * (nv - 2 + e)] = vert[3 * (nv - 2 + e) + 1] = 0.0;
      vert[3 * (nv - 2 + e) + 2] = e ? 0.5 * d->length : -0.5 * d->length;
    }
#define PUT_TRI(a, b, c) do { if (t < tri_cap) { tri[3 * t] = (a); tri[3 * t + 1] = (b); tri[3 * t + 2] = (c); } t++; } while (0)
  for (int i = 0; i < rows; i++)
    for (int j = 0; j < seg; j++) {
      int j1 = (j + 1) % seg, a = i * seg + j, b = i * seg + j1, c = a + seg, e = b + seg;
      PUT_TRI(a, b, e);
      PUT_TRI(a, e, c);
    }
  for (int j = 0; j < seg; j++) {
    int j1 = (j + 1) % seg;
    PUT_TRI(nv - 2, j1, j);                                /* bottom, seen from below */
    PUT_TRI(nv - 1, rows * seg + j, rows * seg + j1);      /* top, seen from above */
  }
#undef PUT_TRI
}

phys_status phys_world_get_sdf_surface(const phys_world *w, int sdf, int segments, double *vert,
                                       int vert_cap, int *nvert, int *tri, int tri_cap,
                                       int *ntri) {
  const phys_sdf_shape *s = phys__sdf_shape(w, sdf);
  if (!s) return phys__fail((phys_world *)w, PHYS_E_NOT_FOUND, "sdf %d: no such profile", sdf);
  int seg = segments < 8 ? 8 : (segments > 256 ? 256 : segments);
  if (s->desc.kind == PHYS_SDF_THREAD) {
    thread_surface(&s->desc, seg, vert, vert_cap, nvert, tri, tri_cap, ntri);
    return PHYS_OK;
  }
  double o[MAX_OUTLINE][2];
  int no = outline(&s->desc, o);
  *nvert = no * seg;
  *ntri = 2 * no * seg;
  for (int i = 0; i < no; i++)
    for (int j = 0; j < seg; j++) {
      int v = i * seg + j;
      if (v >= vert_cap) continue;
      double th = 2.0 * M_PI * j / seg;
      vert[3 * v] = o[i][0] * cos(th);
      vert[3 * v + 1] = o[i][0] * sin(th);
      vert[3 * v + 2] = o[i][1];
    }
  /* two triangles per outline edge and angle step: (i, j) (i+1, j) (i, j+1) and (i+1, j)
   * (i+1, j+1) (i, j+1), counter-clockwise from outside for a clockwise outline (one going
   * inwards runs the other way: its triangles turn) */
  double area2 = 0.0;
  for (int i = 0; i < no; i++) {
    int i1 = (i + 1) % no;
    area2 += o[i][0] * o[i1][1] - o[i1][0] * o[i][1];
  }
  int ccw = area2 > 0.0;
  int t = 0;
  for (int i = 0; i < no; i++)
    for (int j = 0; j < seg; j++) {
      int i1 = (i + 1) % no, j1 = (j + 1) % seg;
      int a = i * seg + j, b = i1 * seg + j, c = i * seg + j1, e = i1 * seg + j1;
      if (ccw) {
        int x = b;
        b = c;
        c = x;
      }
      if (t < tri_cap) {
        tri[3 * t] = a; tri[3 * t + 1] = b; tri[3 * t + 2] = c;
      }
      t++;
      if (t < tri_cap) { /* (i+1, j) (i+1, j+1) (i, j+1), or turned with b and c */
        tri[3 * t] = b; tri[3 * t + 1] = e; tri[3 * t + 2] = c;
      }
      t++;
    }
  return PHYS_OK;
}
