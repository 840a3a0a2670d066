/* epa.c - the expanding polytope algorithm: the penetration depth of two overlapping convex sets
 * a and b is the distance from the origin to the boundary of their Minkowski difference
 * D = a - b. A polytope inside D that encloses the origin (GJK's last simplex, grown to a
 * tetrahedron or a double pyramid when GJK stopped on a triangle or a segment through the origin)
 * is expanded at its face nearest the origin by D's support point along that face's normal,
 * until the support point lies within `tol` of the face: then the face's distance is the depth
 * and its normal the direction (the minimum-translation direction), exact to `tol` for polytopes
 * and curved sets alike (a curved set takes more vertices). Expanding removes the faces the new
 * point sees and fans new faces from it to their horizon.
 *
 * Capacity: 128 vertices, 256 faces on the stack; a run that fills them stops at its nearest
 * face (a depth short of the true one by at most that face's last gain). A start that does not
 * enclose the origin (touching sets, flat sets) or a degenerate face returns -1. */
#include <math.h>
#include <string.h>
#include "collision/epa.h"
#include "core/math3.h"

#define EPA_MAX_VERT 128
#define EPA_MAX_FACE 256
#define EPA_MAX_EDGE (3 * EPA_MAX_FACE)

/* a triangle of the polytope, counter-clockwise seen from outside: outward unit normal n and
 * its distance d = n . v0 from the origin */
typedef struct epa_face {
  int v[3];
  double n[3], d;
  int alive;
} epa_face;

typedef struct epa_poly {
  np_gjk_vert vert[EPA_MAX_VERT];
  int nv;
  epa_face face[EPA_MAX_FACE];
  int nf;
  np_gjk_support sa, sb;
  const void *a, *b;
  double eps; /* lengths below this are rounding (scaled to the sets' size) */
} epa_poly;

/* D's support point along u (a's along u minus b's along -u) */
static void epa_support(const epa_poly *P, const double u[3], np_gjk_vert *out) {
  double nu[3];
  v3_scale(nu, u, -1.0);
  P->sa(P->a, u, out->a);
  P->sb(P->b, nu, out->b);
  v3_sub(out->w, out->a, out->b);
}

/* adds vertex v (copied); its index, or -1 when full */
static int epa_add_vert(epa_poly *P, const np_gjk_vert *v) {
  if (P->nv >= EPA_MAX_VERT) return -1;
  P->vert[P->nv] = *v;
  return P->nv++;
}

/* adds face (i, j, k) as given (counter-clockwise from outside); -1 when degenerate or full */
static int epa_add_face(epa_poly *P, int i, int j, int k) {
  if (P->nf >= EPA_MAX_FACE) return -1;
  const double *p = P->vert[i].w, *q = P->vert[j].w, *r = P->vert[k].w;
  double e1[3], e2[3], n[3];
  v3_sub(e1, q, p);
  v3_sub(e2, r, p);
  v3_cross(n, e1, e2);
  double len = v3_norm(n);
  if (!(len > P->eps * P->eps)) return -1;
  epa_face *f = &P->face[P->nf++];
  f->v[0] = i;
  f->v[1] = j;
  f->v[2] = k;
  v3_scale(f->n, n, 1.0 / len);
  f->d = v3_dot(f->n, p);
  f->alive = 1;
  return 0;
}

/* adds face (i, j, k) turned so that the interior point c lies behind it */
static int epa_add_face_out(epa_poly *P, int i, int j, int k, const double c[3]) {
  if (epa_add_face(P, i, j, k)) return -1;
  epa_face *f = &P->face[P->nf - 1];
  if (v3_dot(f->n, c) > f->d) {
    f->v[1] = k;
    f->v[2] = j;
    v3_scale(f->n, f->n, -1.0);
    f->d = -f->d;
  }
  return 0;
}

/* 1 when the start polytope is convex (every vertex behind every face) and encloses the origin
 * (every face's distance above -eps) */
static int epa_start_ok(const epa_poly *P) {
  for (int f = 0; f < P->nf; f++) {
    const epa_face *F = &P->face[f];
    if (!(F->d > -P->eps)) return 0;
    for (int v = 0; v < P->nv; v++)
      if (v3_dot(F->n, P->vert[v].w) - F->d > P->eps) return 0;
  }
  return 1;
}

/* the start polytope from GJK's simplex: 0, or -1 when it cannot enclose the origin */
static int epa_start(epa_poly *P, const np_gjk_vert *s, int ns) {
  double c[3] = {0, 0, 0};
  if (ns == 4) {
    for (int i = 0; i < 4; i++) epa_add_vert(P, &s[i]);
  } else if (ns == 3) {
    /* a triangle through the origin: a double pyramid over it, apexes along its normals */
    double e1[3], e2[3], nm[3], nn[3];
    v3_sub(e1, s[1].w, s[0].w);
    v3_sub(e2, s[2].w, s[0].w);
    v3_cross(nm, e1, e2);
    if (!(v3_normalize(nm) > 0.0)) return -1;
    v3_scale(nn, nm, -1.0);
    np_gjk_vert up, down;
    epa_support(P, nm, &up);
    epa_support(P, nn, &down);
    if (!(v3_dot(nm, up.w) - v3_dot(nm, s[0].w) > P->eps) ||
        !(v3_dot(nn, down.w) - v3_dot(nn, s[0].w) > P->eps))
      return -1;
    for (int i = 0; i < 3; i++) epa_add_vert(P, &s[i]);
    epa_add_vert(P, &up);
    epa_add_vert(P, &down);
  } else if (ns == 2) {
    /* a segment through the origin: a double pyramid around it, its waist three support
     * points 120 degrees apart about the segment */
    double d[3], e[3] = {0, 0, 0}, u[3], v[3];
    v3_sub(d, s[1].w, s[0].w);
    if (!(v3_normalize(d) > 0.0)) return -1;
    int k = 0;
    for (int i = 1; i < 3; i++)
      if (fabs(d[i]) < fabs(d[k])) k = i;
    e[k] = 1.0;
    v3_cross(u, d, e);
    v3_normalize(u);
    v3_cross(v, d, u);
    epa_add_vert(P, &s[0]);
    epa_add_vert(P, &s[1]);
    for (int i = 0; i < 3; i++) {
      double ang = 2.0 * M_PI * i / 3.0, dir[3], off[3];
      v3_scale(dir, u, cos(ang));
      v3_madd(dir, dir, sin(ang), v);
      np_gjk_vert p;
      epa_support(P, dir, &p);
      v3_sub(off, p.w, s[0].w);
      v3_madd(off, off, -v3_dot(off, d), d);
      if (!(v3_norm(off) > P->eps)) return -1;
      epa_add_vert(P, &p);
    }
  } else {
    return -1; /* one point: the sets touch there */
  }
  for (int i = 0; i < P->nv; i++) v3_add(c, c, P->vert[i].w);
  v3_scale(c, c, 1.0 / P->nv);
  int ok = 0;
  if (P->nv == 4) {
    ok = epa_add_face_out(P, 0, 1, 2, c) | epa_add_face_out(P, 0, 3, 1, c) |
         epa_add_face_out(P, 0, 2, 3, c) | epa_add_face_out(P, 1, 3, 2, c);
  } else if (ns == 3) { /* ring 0 1 2, apexes 3 and 4 */
    for (int i = 0; i < 3; i++) {
      ok |= epa_add_face_out(P, i, (i + 1) % 3, 3, c);
      ok |= epa_add_face_out(P, i, (i + 1) % 3, 4, c);
    }
  } else { /* ring 2 3 4, apexes 0 and 1 */
    for (int i = 0; i < 3; i++) {
      ok |= epa_add_face_out(P, 2 + i, 2 + (i + 1) % 3, 0, c);
      ok |= epa_add_face_out(P, 2 + i, 2 + (i + 1) % 3, 1, c);
    }
  }
  return ok == 0 && epa_start_ok(P) ? 0 : -1;
}

/* drops the dead faces (keeps the order of the live ones) */
static void epa_compact(epa_poly *P) {
  int m = 0;
  for (int f = 0; f < P->nf; f++)
    if (P->face[f].alive) P->face[m++] = P->face[f];
  P->nf = m;
}

/* adds edge (i, j) of a removed face to the horizon, or cancels it against (j, i) of a removed
 * neighbour; -1 when the list is full */
static int epa_edge(int edges[][2], int *ne, int i, int j) {
  for (int e = 0; e < *ne; e++)
    if (edges[e][0] == j && edges[e][1] == i) {
      edges[e][0] = edges[*ne - 1][0];
      edges[e][1] = edges[*ne - 1][1];
      (*ne)--;
      return 0;
    }
  if (*ne >= EPA_MAX_EDGE) return -1;
  edges[*ne][0] = i;
  edges[*ne][1] = j;
  (*ne)++;
  return 0;
}

double phys__np_epa(np_gjk_support sa, const void *a, np_gjk_support sb, const void *b,
                    const np_gjk_vert *simplex, int nsimplex, double tol, double n[3]) {
  epa_poly P;
  P.nv = P.nf = 0;
  P.sa = sa;
  P.sb = sb;
  P.a = a;
  P.b = b;
  double scale = 0.0;
  for (int i = 0; i < nsimplex; i++)
    scale = fmax(scale, v3_norm(simplex[i].a) + v3_norm(simplex[i].b));
  P.eps = 1e-12 * (1.0 + scale);
  if (epa_start(&P, simplex, nsimplex)) return -1.0;

  static const int EPA_MAX_ITER = EPA_MAX_VERT;
  int edges[EPA_MAX_EDGE][2];
  int best = -1;
  for (int it = 0; it < EPA_MAX_ITER; it++) {
    /* the live face nearest the origin (the first among equals) */
    best = -1;
    for (int f = 0; f < P.nf; f++)
      if (P.face[f].alive && (best < 0 || P.face[f].d < P.face[best].d)) best = f;
    if (best < 0) return -1.0;
    const epa_face *F = &P.face[best];
    np_gjk_vert p;
    epa_support(&P, F->n, &p);
    if (v3_dot(F->n, p.w) - F->d <= tol) break;
    /* room for the point and its fan (compacting first when the faces run out) */
    if (P.nf > EPA_MAX_FACE - 32) epa_compact(&P);
    if (P.nv >= EPA_MAX_VERT || P.nf > EPA_MAX_FACE - 32) {
      best = -1; /* (compacting moved the faces) */
      break;
    }
    /* the faces p sees go; their edges not shared with another such face are the horizon */
    int ne = 0, full = 0;
    for (int f = 0; f < P.nf && !full; f++) {
      epa_face *G = &P.face[f];
      if (!G->alive || !(v3_dot(G->n, p.w) - G->d > P.eps)) continue;
      G->alive = 0;
      for (int k = 0; k < 3; k++) full |= epa_edge(edges, &ne, G->v[k], G->v[(k + 1) % 3]);
    }
    if (full || ne < 3 || P.nf + ne > EPA_MAX_FACE) return -1.0;
    int pi = epa_add_vert(&P, &p);
    for (int e = 0; e < ne; e++)
      if (epa_add_face(&P, edges[e][0], edges[e][1], pi)) return -1.0;
    best = -1;
  }
  if (best < 0) { /* stopped for room: the nearest face so far */
    for (int f = 0; f < P.nf; f++)
      if (P.face[f].alive && (best < 0 || P.face[f].d < P.face[best].d)) best = f;
    if (best < 0) return -1.0;
  }
  /* moving a against the face's normal takes the origin out of D */
  v3_scale(n, P.face[best].n, -1.0);
  return fmax(0.0, P.face[best].d);
}
