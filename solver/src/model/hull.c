/* hull.c - convex hull of a point set with qhull's reentrant API, and the hull's volume, centre
 * and inertia from tetrahedra. Hull vertices keep the order of the input points, so the same
 * input always gives the same hull (feature ids of contacts depend on it). */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <libqhull_r/qhull_ra.h>
#include "model/hull.h"
#include "core/alloc.h"
#include "core/math3.h"

void phys__hull_data_free(phys_hull_data *h) {
  phys__xfree(h->vert);
  phys__xfree(h->plane);
  phys__xfree(h->face);
  phys__xfree(h->face_vert);
  phys__xfree(h->vadj);
  phys__xfree(h->adj);
  memset(h, 0, sizeof *h);
}

/* Copies qhull's facets into `out`: compact vertex numbering in input order, one polygon per
 * (merged) facet with its loop oriented counter-clockwise around the outward normal. */
static int hull_extract(qhT *qh, int n, phys_hull_data *out, char *err, size_t errlen) {
  facetT *facet;
  vertexT *vertex, **vertexp;
  int *map = phys__xmalloc((size_t)n * sizeof(int));
  if (!map) return snprintf(err, errlen, "out of memory"), -1;
  for (int i = 0; i < n; i++) map[i] = -1;
  FORALLvertices {
    int id = qh_pointid(qh, vertex->point);
    if (id >= 0 && id < n) map[id] = 0;
  }
  int nv = 0;
  for (int i = 0; i < n; i++)
    if (map[i] == 0) map[i] = nv++;
  int nf = 0, nfv = 0;
  FORALLfacets {
    nf++;
    nfv += qh_setsize(qh, facet->vertices);
  }
  out->nvert = nv;
  out->nface = nf;
  out->nface_vert = nfv;
  out->vert = phys__xmalloc((size_t)(3 * nv) * sizeof(double));
  out->plane = phys__xmalloc((size_t)(4 * nf) * sizeof(double));
  out->face = phys__xmalloc((size_t)(2 * nf) * sizeof(int));
  out->face_vert = phys__xmalloc((size_t)nfv * sizeof(int));
  if (!out->vert || !out->plane || !out->face || !out->face_vert) {
    phys__xfree(map);
    return snprintf(err, errlen, "out of memory"), -1;
  }
  FORALLvertices {
    int id = qh_pointid(qh, vertex->point);
    if (id >= 0 && id < n)
      for (int k = 0; k < 3; k++) out->vert[3 * map[id] + k] = vertex->point[k];
  }
  int f = 0, at = 0;
  FORALLfacets {
    setT *loop = qh_facet3vertex(qh, facet);
    int start = at;
    FOREACHvertex_(loop) out->face_vert[at++] = map[qh_pointid(qh, vertex->point)];
    qh_settempfree(qh, &loop);
    double *pl = &out->plane[4 * f];
    for (int k = 0; k < 3; k++) pl[k] = facet->normal[k];
    pl[3] = -facet->offset;
    out->face[2 * f] = start;
    out->face[2 * f + 1] = at - start;
    /* orient the loop: Newell normal against the facet's outward normal */
    double nw[3] = {0, 0, 0};
    int cnt = at - start;
    for (int i = 0; i < cnt; i++) {
      const double *p = &out->vert[3 * out->face_vert[start + i]];
      const double *q = &out->vert[3 * out->face_vert[start + (i + 1) % cnt]];
      nw[0] += (p[1] - q[1]) * (p[2] + q[2]);
      nw[1] += (p[2] - q[2]) * (p[0] + q[0]);
      nw[2] += (p[0] - q[0]) * (p[1] + q[1]);
    }
    if (v3_dot(nw, pl) < 0.0)
      for (int i = 0, j = cnt - 1; i < j; i++, j--) {
        int t = out->face_vert[start + i];
        out->face_vert[start + i] = out->face_vert[start + j];
        out->face_vert[start + j] = t;
      }
    f++;
  }
  out->nface_vert = at;
  phys__xfree(map);
  /* vertex adjacency: each face loop edge u -> v makes v a neighbour of u (the opposite face
   * holds v -> u), so every vertex lists each of its edges once */
  out->vadj = phys__xcalloc((size_t)(2 * nv), sizeof(int));
  out->adj = phys__xmalloc((size_t)(at > 0 ? at : 1) * sizeof(int));
  if (!out->vadj || !out->adj) return snprintf(err, errlen, "out of memory"), -1;
  for (int i = 0; i < at; i++) out->vadj[2 * out->face_vert[i] + 1]++;
  for (int v = 0, start = 0; v < nv; v++) {
    out->vadj[2 * v] = start;
    start += out->vadj[2 * v + 1];
    out->vadj[2 * v + 1] = 0;
  }
  for (int fi = 0; fi < nf; fi++) {
    int s0 = out->face[2 * fi], cnt = out->face[2 * fi + 1];
    for (int i = 0; i < cnt; i++) {
      int u = out->face_vert[s0 + i], v = out->face_vert[s0 + (i + 1) % cnt];
      out->adj[out->vadj[2 * u] + out->vadj[2 * u + 1]++] = v;
    }
  }
  return 0;
}

int phys__hull_build(const double *pts, int n, phys_hull_data *out, char *err, size_t errlen) {
  memset(out, 0, sizeof *out);
  if (n < 4) return snprintf(err, errlen, "a hull needs at least 4 points, got %d", n), -1;
  for (int i = 0; i < 3 * n; i++)
    if (!isfinite(pts[i])) return snprintf(err, errlen, "vertex %d is not finite", i / 3), -1;
  coordT *copy = phys__xmalloc((size_t)(3 * n) * sizeof(coordT));
  if (!copy) return snprintf(err, errlen, "out of memory"), -1;
  for (int i = 0; i < 3 * n; i++) copy[i] = pts[i];
  /* qhull's messages go to a memory stream so that a failure can be reported */
  char *msg = NULL;
  size_t msglen = 0;
  FILE *errf = open_memstream(&msg, &msglen);
  qhT qh_storage;
  qhT *qh = &qh_storage;
  qh_zero(qh, errf);
  char cmd[] = "qhull Qs";
  int code = qh_new_qhull(qh, 3, n, copy, False, cmd, NULL, errf);
  int rc = 0;
  if (code) {
    if (errf) fflush(errf);
    const char *why = msg && strstr(msg, "flat") ? "the points are coplanar or collinear"
                    : "qhull could not build a hull";
    snprintf(err, errlen, "%s (qhull code %d)", why, code);
    rc = -1;
  } else {
    rc = hull_extract(qh, n, out, err, errlen);
  }
  int curlong, totlong;
  qh_freeqhull(qh, !qh_ALL);
  qh_memfreeshort(qh, &curlong, &totlong);
  if (errf) fclose(errf);
  free(msg);
  phys__xfree(copy);
  if (rc) phys__hull_data_free(out);
  else if (out->nface < 4) {
    phys__hull_data_free(out);
    snprintf(err, errlen, "the points are coplanar or collinear");
    rc = -1;
  }
  return rc;
}

void phys__hull_derive(phys_hull *h) {
  /* reference point: mean of the vertices (inside the convex hull) */
  double o[3] = {0, 0, 0};
  for (int i = 0; i < h->nvert; i++) v3_add(o, o, &h->vert[3 * i]);
  v3_scale(o, o, 1.0 / h->nvert);
  v3_copy(h->lo, &h->vert[0]);
  v3_copy(h->hi, &h->vert[0]);
  h->rbound = 0.0;
  for (int k = 0; k < 6; k++) h->ext[k] = 0;
  for (int i = 0; i < h->nvert; i++) {
    const double *v = &h->vert[3 * i];
    for (int k = 0; k < 3; k++) {
      if (v[k] < h->lo[k]) h->ext[2 * k] = i;
      if (v[k] > h->hi[k]) h->ext[2 * k + 1] = i;
      h->lo[k] = fmin(h->lo[k], v[k]);
      h->hi[k] = fmax(h->hi[k], v[k]);
    }
    h->rbound = fmax(h->rbound, v3_norm(v));
  }
  /* tetrahedra (o, v0, vi, vi+1): volume, first and second moments about o */
  double vol = 0.0, m1[3] = {0, 0, 0}, C[9] = {0};
  for (int f = 0; f < h->nface; f++) {
    const int *loop = &h->face_vert[h->face[2 * f]];
    int cnt = h->face[2 * f + 1];
    for (int i = 1; i + 1 < cnt; i++) {
      double a[3], b[3], c[3], bc[3], s[3];
      v3_sub(a, &h->vert[3 * loop[0]], o);
      v3_sub(b, &h->vert[3 * loop[i]], o);
      v3_sub(c, &h->vert[3 * loop[i + 1]], o);
      v3_cross(bc, b, c);
      double v = v3_dot(a, bc) / 6.0;
      v3_add(s, a, b);
      v3_add(s, s, c);
      vol += v;
      v3_madd(m1, m1, v / 4.0, s);
      for (int r = 0; r < 3; r++)
        for (int q = 0; q < 3; q++)
          C[3 * r + q] += v / 20.0 * (a[r] * a[q] + b[r] * b[q] + c[r] * c[q] + s[r] * s[q]);
    }
  }
  h->volume = vol;
  double com[3] = {0, 0, 0};
  if (vol > 0.0) v3_scale(com, m1, 1.0 / vol);
  v3_add(h->center, o, com);
  /* covariance about the centre, then the inertia tensor per unit mass */
  for (int r = 0; r < 3; r++)
    for (int q = 0; q < 3; q++) C[3 * r + q] -= vol * com[r] * com[q];
  double tr = C[0] + C[4] + C[8];
  for (int r = 0; r < 3; r++)
    for (int q = 0; q < 3; q++)
      h->unit_inertia[3 * r + q] = vol > 0.0 ? ((r == q ? tr : 0.0) - C[3 * r + q]) / vol : 0.0;
}

/* hulls with more vertices than this are searched by hill climbing */
#define HULL_SCAN_MAX 32

int phys__hull_support(const phys_hull *h, const double d[3]) {
  if (h->nvert > HULL_SCAN_MAX && h->adj) {
    int k = 0;
    for (int i = 1; i < 3; i++)
      if (fabs(d[i]) > fabs(d[k])) k = i;
    int cur = h->ext[2 * k + (d[k] > 0.0)];
    double cd = v3_dot(&h->vert[3 * cur], d);
    /* steepest ascent: move to the best neighbour until none is better */
    for (int next = cur;; cur = next) {
      const int *nb = &h->adj[h->vadj[2 * cur]];
      int cnt = h->vadj[2 * cur + 1];
      for (int j = 0; j < cnt; j++) {
        double x = v3_dot(&h->vert[3 * nb[j]], d);
        if (x > cd) {
          cd = x;
          next = nb[j];
        }
      }
      if (next == cur) return cur;
    }
  }
  int best = 0;
  double bd = v3_dot(&h->vert[0], d);
  for (int i = 1; i < h->nvert; i++) {
    double x = v3_dot(&h->vert[3 * i], d);
    if (x > bd) { bd = x; best = i; }
  }
  return best;
}
