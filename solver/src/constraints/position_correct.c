/* position_correct.c - removing penetration at the position level (post-stabilisation).
 *
 * The velocity solve only forbids a penetration to deepen (e_n = 0); it never pushes bodies
 * apart, because a push-out velocity would stay in the bodies as kinetic energy. After the
 * positions are integrated, this pass moves the bodies of each island apart directly: a few
 * nonlinear Gauss-Seidel sweeps over the island's contacts, each contact's depth re-measured
 * from the current poses and corrected by the share `baumgarte` with the contact's effective
 * mass (Box2D v2's position solver, on our contact points). Velocities are not changed.
 *
 * Each contact's two surface points are attached to their bodies (as offsets in the body frame
 * of the step's start) and followed as the bodies move, so one sweep costs a few
 * matrix-vector products per contact. A normal that is the face normal of one side (a box's
 * face, a cylinder's cap, a plane) turns with that side's body, as the face does; other
 * normals (edges, curved surfaces, two faces resting on each other) keep their direction of
 * the step's start. Islands are independent and run in parallel. Inside a
 * small island the sweep order is the row order; in a big island the contacts come first in row
 * order, then the connects coloured so that connects of one colour move disjoint bodies, the
 * connects of a colour shared by the thread team. Either order depends only on the scene (an
 * island's size decides which), so results do not depend on threads. */
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <omp.h>
#include "constraints/problem.h"
#include "core/math3.h"
#include "solvers/team.h"

/* sweeps over an island's contacts per step */
#define POSITION_SWEEPS 4
/* penetration left alone (m): avoids re-correcting the micrometres a resting contact shows */
#define POSITION_SLOP 5e-6
/* a contact normal within this cosine of a side's face normal is that face's (the narrowphase
 * gives a face contact the face's axis to rounding) */
#define POSITION_FACE_COS (1.0 - 1e-9)
/* faces of both sides within this cosine of each other (about 2.6 degrees) rest on each other:
 * their normal keeps its direction */
#define POSITION_FACES_COS 0.999

/* islands with at least this many solver bodies are swept colour by colour (and by the whole
 * team when there is one); smaller ones row by row, one island per thread */
#define PHYS_POSITION_COLOUR_MIN_BODIES 48
/* colours of a big island's sweep; rows that find none left form one more group */
#define PHYS_POSITION_COLOURS 64

/* a big island's sweep order: rows[start[c], start[c + 1]) have colour c (c = COLOURS: the
 * contacts and the connects past the colours, swept first, by one thread) */
typedef struct island_colours {
  int *start;      /* PHYS_POSITION_COLOURS + 2 */
  int *rows;       /* row set indices */
} island_colours;

/* per-step working data: body rotations and contact anchors */
typedef struct corr_data {
  double *rot;     /* 9 per solver body: current rotation */
  double *anchor;  /* 6 per constraint: surface points on a and b in body frames (or world) */
  double *normal;  /* 3 per constraint: a contact's normal in the frame of `face_body` */
  int *face_body;  /* per constraint: the body whose face the contact normal is, -1: none or
                      a static side's (the normal keeps its world direction) */
} corr_data;

/* anchor of a surface point p (world, at the step's start) on body b: its offset in the body's
 * frame then; the world point itself for a static side */
static void make_anchor(const phys_world *w, int b, const double p[3], double out[3]) {
  if (b < 0) {
    v3_copy(out, p);
    return;
  }
  const double *saved = w->saved_state + 13 * b;
  double R0[9], d[3];
  q_to_m3(R0, saved + 3);
  v3_sub(d, p, saved);
  m3_tmulv(out, R0, d);
}

/* 1 for a geom with flat faces whose normal the pass turns with the face (boxes, cylinders'
 * caps, planes) */
static int has_faces(const phys_geom *g) {
  return g->type == PHYS_GEOM_BOX || g->type == PHYS_GEOM_CYLINDER || g->type == PHYS_GEOM_PLANE;
}

/* how closely the normal nl (in the frame of the body that owns geom g, or world for a static
 * geom) matches one of g's face normals: the largest |cos| over them, 0 for a geom without
 * faces (spheres, capsules, ellipsoids, meshes, SDFs) */
static double face_alignment(const phys_geom *g, const double nl[3]) {
  const double *r = g->lrot; /* column k: the geom's local axis k */
  int first_axis = 0;
  switch (g->type) {
  case PHYS_GEOM_BOX:
    break;
  case PHYS_GEOM_CYLINDER: /* the caps */
  case PHYS_GEOM_PLANE:
    first_axis = 2;
    break;
  default:
    return 0.0;
  }
  double best = 0.0;
  for (int k = first_axis; k < 3; k++) {
    double c = fabs(nl[0] * r[k] + nl[1] * r[3 + k] + nl[2] * r[6 + k]);
    if (c > best) best = c;
  }
  return best;
}

/* normal n (world, at the step's start) in the frame of body b then; n itself for a static side */
static void normal_in_body(const phys_world *w, int b, const double n[3], double out[3]) {
  if (b < 0) {
    v3_copy(out, n);
    return;
  }
  double R0[9];
  q_to_m3(R0, w->saved_state + 13 * b + 3);
  m3_tmulv(out, R0, n);
}

/* the body whose face contact c's normal is, with the normal in its frame (nl): the one side
 * whose face matches the normal; -1 when neither does, when both do (faces resting on each
 * other: either turn would push the stack sideways, and the pyramids drifted 35-90 % farther)
 * or when the matching face is a static side's, whose normal does not turn (nl is then not
 * written) */
static int normal_face_body(const phys_world *w, const phys_contact *c, double nl[3]) {
  const double *n = c->frame + 6;
  int faces_a = has_faces(&w->geoms[c->geom_a]);
  int faces_b = c->geom_b >= 0 && has_faces(&w->geoms[c->geom_b]);
  /* one side without faces: the other side's face, if it turns (the rule below with 0 for the
   * faceless side, without its frame) */
  if (!faces_a || !faces_b) {
    int side = faces_a ? c->body_a : (faces_b ? c->body_b : -1);
    if (side < 0) return -1;
    double ns[3];
    normal_in_body(w, side, n, ns);
    const phys_geom *g = &w->geoms[faces_a ? c->geom_a : c->geom_b];
    if (face_alignment(g, ns) < POSITION_FACE_COS) return -1;
    v3_copy(nl, ns);
    return side;
  }
  double na[3], nb[3];
  normal_in_body(w, c->body_a, n, na);
  normal_in_body(w, c->body_b, n, nb);
  double fa = face_alignment(&w->geoms[c->geom_a], na);
  double fb = face_alignment(&w->geoms[c->geom_b], nb);
  int a_face = fa >= POSITION_FACE_COS, b_face = fb >= POSITION_FACE_COS;
  if (a_face == b_face || fmin(fa, fb) >= POSITION_FACES_COS) return -1;
  int side = a_face ? c->body_a : c->body_b;
  if (side < 0) return -1;
  v3_copy(nl, a_face ? na : nb);
  return side;
}

/* current world point of an anchor; r receives its offset from the body's COM */
static inline void anchor_point(const phys_world *w, const phys_problem *s, const corr_data *cd,
                                int b, const double anchor[3], double out[3], double r[3]) {
  if (b < 0) {
    v3_copy(out, anchor);
    v3_zero(r);
    return;
  }
  m3_mulv(r, cd->rot + 9 * s->sb_of_body[b], anchor);
  v3_add(out, r, w->bodies[b].x);
}

/* inverse effective mass along n of one side (links do not move here: infinite mass) */
static inline double side_inverse_mass(const phys_world *w, const phys_problem *s, int b,
                                       const double r[3], const double n[3]) {
  if (b < 0 || w->bodies[b].artic >= 0) return 0.0;
  double rn[3], t[3];
  v3_cross(rn, r, n);
  m3_mulv(t, s->inertia + 18 * s->sb_of_body[b] + 9, rn);
  return w->bodies[b].inv_mass + v3_dot(rn, t);
}

/* move body b by the position impulse P (world) applied at offset r from its COM */
static void apply_position_impulse(phys_world *w, const phys_problem *s, corr_data *cd, int b,
                                   const double P[3], const double r[3]) {
  phys_body *body = &w->bodies[b];
  int sb = s->sb_of_body[b];
  double dth[3], rxp[3];
  v3_madd(body->x, body->x, body->inv_mass, P);
  v3_cross(rxp, r, P);
  m3_mulv(dth, s->inertia + 18 * sb + 9, rxp);
  if (v3_norm2(dth) < 1e-24) return; /* through the COM (spheres): no rotation */
  double dq[4] = {0.0, 0.5 * dth[0], 0.5 * dth[1], 0.5 * dth[2]}, t[4];
  q_mul(t, dq, body->q);
  for (int i = 0; i < 4; i++) body->q[i] += t[i];
  q_normalize(body->q);
  q_to_m3(cd->rot + 9 * sb, body->q);
}

/* 1 when connect constraint `con` is corrected here: a hard connect (not a weld's angular rows,
 * not soft) between free bodies or a free body and the world/a static body; connects on links
 * keep their Baumgarte error term in the velocity solve instead */
int phys__connect_position_corrected(const phys_world *w, const phys_con *con) {
  if (con->kind != PHYS_CON_CONNECT || con->ang) return 0;
  const phys_connect *cn = &w->connects[con->src];
  if (cn->soft || cn->weld) return 0;
  phys_id side[2] = {cn->body1, cn->body2};
  for (int k = 0; k < 2; k++)
    if (side[k] != PHYS_ID_NONE && w->bodies[side[k]].artic >= 0) return 0;
  return 1;
}

/* the current world point of a connect side's anchor (inertial frame, or world for a static
 * side); r receives its offset from the COM and the return value is the dynamic body or -1 */
static int connect_side_point(const phys_world *w, const phys_problem *s, const corr_data *cd,
                              phys_id id, const double anchor[3], double p[3], double r[3]) {
  if (id == PHYS_ID_NONE || w->bodies[id].is_static) {
    v3_copy(p, anchor);
    v3_zero(r);
    return -1;
  }
  m3_mulv(r, cd->rot + 9 * s->sb_of_body[id], anchor);
  v3_add(p, r, w->bodies[id].x);
  return id;
}

/* inverse of a 3x3 matrix by cofactors; 0 when it is (nearly) singular */
static int m3_inverse(double out[9], const double m[9]) {
  double c0 = m[4] * m[8] - m[5] * m[7], c1 = m[5] * m[6] - m[3] * m[8],
         c2 = m[3] * m[7] - m[4] * m[6];
  double det = m[0] * c0 + m[1] * c1 + m[2] * c2;
  if (!(fabs(det) > 1e-300)) return 0;
  double id = 1.0 / det;
  out[0] = c0 * id;
  out[1] = (m[2] * m[7] - m[1] * m[8]) * id;
  out[2] = (m[1] * m[5] - m[2] * m[4]) * id;
  out[3] = c1 * id;
  out[4] = (m[0] * m[8] - m[2] * m[6]) * id;
  out[5] = (m[2] * m[3] - m[0] * m[5]) * id;
  out[6] = c2 * id;
  out[7] = (m[1] * m[6] - m[0] * m[7]) * id;
  out[8] = (m[0] * m[4] - m[1] * m[3]) * id;
  return 1;
}

/* add the 3x3 inverse effective mass of a side at offset r: (1/m) I - [r] I^-1 [r] */
static void add_inverse_mass3(const phys_world *w, const phys_problem *s, int b, const double r[3],
                              double K[9]) {
  if (b < 0) return;
  const double *Ii = s->inertia + 18 * s->sb_of_body[b] + 9;
  double X[9] = {0, -r[2], r[1], r[2], 0, -r[0], -r[1], r[0], 0}, T[9], U[9];
  m3_mul(T, Ii, X);
  m3_mul(U, X, T);
  for (int i = 0; i < 9; i++) K[i] -= U[i];
  for (int i = 0; i < 3; i++) K[4 * i] += w->bodies[b].inv_mass;
}

/* one Gauss-Seidel correction of a hard connect between free bodies: a position impulse P with
 * K P = -xi C moves the anchors together; returns 1 when it moved something */
static int correct_connect(phys_world *w, const phys_problem *s, corr_data *cd, const phys_con *con,
                           double xi, double max_corr) {
  const phys_connect *cn = &w->connects[con->src];
  double p1[3], p2[3], r1[3], r2[3], C[3];
  int b1 = connect_side_point(w, s, cd, cn->body1, cn->anchor1, p1, r1);
  int b2 = connect_side_point(w, s, cd, cn->body2, cn->anchor2, p2, r2);
  v3_sub(C, p1, p2);
  double len = v3_norm(C);
  if (len <= POSITION_SLOP * 0.01) return 0;
  double K[9] = {0}, Ki[9], P[3], Cs[3];
  add_inverse_mass3(w, s, b1, r1, K);
  add_inverse_mass3(w, s, b2, r2, K);
  if (!m3_inverse(Ki, K)) return 0;
  v3_scale(Cs, C, len * xi > max_corr ? -max_corr / len : -xi);
  m3_mulv(P, Ki, Cs);
  if (b1 >= 0) apply_position_impulse(w, s, cd, b1, P, r1);
  v3_scale(P, P, -1.0);
  if (b2 >= 0) apply_position_impulse(w, s, cd, b2, P, r2);
  return 1;
}

/* anchors of row set ci's surface points (contacts) at the step's start; 1 when ci is corrected
 * by this pass (a contact, or a position-corrected connect) */
static int prepare_row(const phys_world *w, const phys_problem *s, corr_data *cd, int ci) {
  const phys_con *con = &s->con[ci];
  if (phys__connect_position_corrected(w, con)) return 1;
  if (con->kind != PHYS_CON_CONTACT || con->ang) return 0;
  const phys_contact *c = &w->contacts[con->src];
  const double *n = c->frame + 6;
  double pa[3], pb[3];
  v3_madd(pa, c->pos, 0.5 * c->dist, n);
  v3_madd(pb, c->pos, -0.5 * c->dist, n);
  make_anchor(w, c->body_a, pa, cd->anchor + 6 * ci);
  make_anchor(w, c->body_b, pb, cd->anchor + 6 * ci + 3);
  cd->face_body[ci] = normal_face_body(w, c, cd->normal + 3 * ci);
  return 1;
}

/* one Gauss-Seidel correction of row set ci; 1 when it moved something */
static int correct_row(phys_world *w, const phys_problem *s, corr_data *cd, int ci, double xi,
                       double max_corr) {
  const phys_con *con = &s->con[ci];
  if (phys__connect_position_corrected(w, con)) return correct_connect(w, s, cd, con, xi, max_corr);
  if (con->kind != PHYS_CON_CONTACT || con->ang) return 0;
  const phys_contact *c = &w->contacts[con->src];
  const double *n = c->frame + 6;
  double n_now[3]; /* a face's normal as the face has turned */
  int fb = cd->face_body[ci];
  if (fb >= 0) {
    m3_mulv(n_now, cd->rot + 9 * s->sb_of_body[fb], cd->normal + 3 * ci);
    n = n_now;
  }

  /* current depth of the contact from its followed surface points, along the normal */
  double pa[3], pb[3], ra[3], rb[3], d[3];
  anchor_point(w, s, cd, c->body_a, cd->anchor + 6 * ci, pa, ra);
  anchor_point(w, s, cd, c->body_b, cd->anchor + 6 * ci + 3, pb, rb);
  v3_sub(d, pa, pb);
  double depth = v3_dot(d, n);
  if (depth >= -POSITION_SLOP) return 0;

  /* correct a share of the depth, limited per sweep */
  double C = xi * (depth + POSITION_SLOP);
  if (C < -max_corr) C = -max_corr;
  double K = side_inverse_mass(w, s, c->body_a, ra, n) + side_inverse_mass(w, s, c->body_b, rb, n);
  if (!(K > 0.0)) return 0;
  double P[3];
  v3_scale(P, n, -C / K);
  if (c->body_a >= 0 && w->bodies[c->body_a].artic < 0)
    apply_position_impulse(w, s, cd, c->body_a, P, ra);
  v3_scale(P, P, -1.0);
  if (c->body_b >= 0 && w->bodies[c->body_b].artic < 0)
    apply_position_impulse(w, s, cd, c->body_b, P, rb);
  return 1;
}

/* sweeps over the contacts and free-body connects of a small island k, in row order */
static void correct_island(phys_world *w, const phys_problem *s, corr_data *cd, int k) {
  double xi = w->opt.baumgarte, max_corr = w->opt.max_correction;
  int c0 = s->isl_con_start[k], c1 = s->isl_con_start[k + 1];

  /* anchors of the contacts' surface points; quick exit when nothing is corrected here */
  int any = 0;
  for (int ci = c0; ci < c1; ci++) any |= prepare_row(w, s, cd, ci);
  if (!any) return;
  for (int sb = s->isl_body_start[k]; sb < s->isl_body_start[k + 1]; sb++)
    q_to_m3(cd->rot + 9 * sb, w->bodies[s->body_id[sb]].q);

  for (int sweep = 0; sweep < POSITION_SWEEPS; sweep++) {
    int corrected = 0;
    for (int ci = c0; ci < c1; ci++) corrected |= correct_row(w, s, cd, ci, xi, max_corr);
    if (!corrected) break;
  }
}

/* ---- big islands: coloured sweeps ---------------------------------------------------------- */

/* the dynamic free body a side moves, or -1 (static, world, or a link: links do not move here) */
static int moving_side(const phys_world *w, phys_id b) {
  return b >= 0 && !w->bodies[b].is_static && w->bodies[b].artic < 0 ? b : -1;
}

/* the two bodies row set ci moves (-1 for none) */
static void row_sides(const phys_world *w, const phys_problem *s, int ci, int side[2]) {
  const phys_con *con = &s->con[ci];
  if (con->kind == PHYS_CON_CONTACT) {
    side[0] = moving_side(w, w->contacts[con->src].body_a);
    side[1] = moving_side(w, w->contacts[con->src].body_b);
  } else {
    side[0] = moving_side(w, w->connects[con->src].body1);
    side[1] = moving_side(w, w->connects[con->src].body2);
  }
}

/* The sweep order of big island k: its contacts first, in row order, by one thread (a coloured
 * order spread corrections through a pile more slowly: with 4 sweeps the 1000-sphere pile kept
 * 6.5e-4 m of penetration instead of 5.6e-4 and moved 60 % more, and needed more solver
 * iterations); then its position-corrected connects by colour: greedy in row order, each takes
 * the lowest colour that none of its moving bodies has yet (PHYS_POSITION_COLOURS colours; the
 * rest join the contacts' group). Connects of one colour move disjoint bodies, so a team may
 * correct them at once with the same result as one after the other; joint_grid_32's 1953
 * connects need 4 sweeps every step, which made the position pass 60 % of its step. The order
 * depends only on the scene. */
static int colour_island(const phys_world *w, const phys_problem *s, phys_arena *ar, int k,
                         island_colours *ic) {
  int c0 = s->isl_con_start[k], c1 = s->isl_con_start[k + 1], n = c1 - c0;
  int b0 = s->isl_body_start[k], nb = s->isl_body_start[k + 1] - b0;
  uint64_t *used = ARENA_ZNEW(ar, uint64_t, nb);
  unsigned char *col = ARENA_NEW(ar, unsigned char, n);
  ic->start = ARENA_ZNEW(ar, int, PHYS_POSITION_COLOURS + 2);
  ic->rows = ARENA_NEW(ar, int, n);
  if ((nb && !used) || (n && (!col || !ic->rows)) || !ic->start) return -1;
  for (int i = 0; i < n; i++) {
    const phys_con *con = &s->con[c0 + i];
    int is_connect = phys__connect_position_corrected(w, con);
    col[i] = PHYS_POSITION_COLOURS + 1; /* not swept */
    if (con->kind == PHYS_CON_CONTACT && !con->ang) col[i] = PHYS_POSITION_COLOURS;
    if (!is_connect) continue;
    int side[2];
    row_sides(w, s, c0 + i, side);
    uint64_t taken = 0;
    for (int j = 0; j < 2; j++)
      if (side[j] >= 0) taken |= used[s->sb_of_body[side[j]] - b0];
    int c = taken == ~(uint64_t)0 ? PHYS_POSITION_COLOURS : __builtin_ctzll(~taken);
    col[i] = (unsigned char)c;
    if (c < PHYS_POSITION_COLOURS)
      for (int j = 0; j < 2; j++)
        if (side[j] >= 0) used[s->sb_of_body[side[j]] - b0] |= (uint64_t)1 << c;
  }
  /* rows grouped by colour, in row order within each */
  for (int i = 0; i < n; i++)
    if (col[i] <= PHYS_POSITION_COLOURS) ic->start[col[i] + 1]++;
  for (int c = 0; c <= PHYS_POSITION_COLOURS; c++) ic->start[c + 1] += ic->start[c];
  int *fill = ARENA_NEW(ar, int, PHYS_POSITION_COLOURS + 1);
  if (!fill) return -1;
  memcpy(fill, ic->start, (PHYS_POSITION_COLOURS + 1) * sizeof(int));
  for (int i = 0; i < n; i++)
    if (col[i] <= PHYS_POSITION_COLOURS) ic->rows[fill[col[i]]++] = c0 + i;
  return 0;
}

/* sweeps over big island k, colour by colour; `team` = 1 when every thread of the parallel
 * team calls it (each takes a slice of every colour; the last group goes to thread 0) */
static void correct_island_coloured(phys_world *w, const phys_problem *s, corr_data *cd, int k,
                                    const island_colours *ic, int *flags, int team) {
  double xi = w->opt.baumgarte, max_corr = w->opt.max_correction;
  int lo, hi, me = team ? omp_get_thread_num() : 0, nt = team ? omp_get_num_threads() : 1;
  int last = ic->start[PHYS_POSITION_COLOURS + 1];
  if (last == 0) return; /* nothing corrected here (same answer on every thread) */
  phys_slice(team, 0, last, &lo, &hi);
  for (int i = lo; i < hi; i++) prepare_row(w, s, cd, ic->rows[i]);
  phys_slice(team, s->isl_body_start[k], s->isl_body_start[k + 1], &lo, &hi);
  for (int sb = lo; sb < hi; sb++) q_to_m3(cd->rot + 9 * sb, w->bodies[s->body_id[sb]].q);
  phys_team_barrier(team);

  for (int sweep = 0; sweep < POSITION_SWEEPS; sweep++) {
    int corrected = 0;
    for (int g = 0; g <= PHYS_POSITION_COLOURS; g++) {
      /* the one-thread group (contacts, and connects past the colours) first, then colours */
      int c = g == 0 ? PHYS_POSITION_COLOURS : g - 1;
      int r0 = ic->start[c], r1 = ic->start[c + 1];
      if (r0 == r1) continue;
      if (c < PHYS_POSITION_COLOURS) phys_slice(team, r0, r1, &lo, &hi);
      else lo = r0, hi = me == 0 ? r1 : r0;
      for (int i = lo; i < hi; i++) corrected |= correct_row(w, s, cd, ic->rows[i], xi, max_corr);
      phys_team_barrier(team);
    }
    /* every thread stops after the same sweep: the team's flags, read after a barrier */
    flags[me] = corrected;
    phys_team_barrier(team);
    int any = 0;
    for (int t = 0; t < nt; t++) any |= flags[t];
    phys_team_barrier(team);
    if (!any) break;
  }
}

int phys__correct_positions(phys_world *w, const phys_problem *s) {
  phys_arena *ar = &w->arena;
  corr_data cd;
  int n = s->nislands, threads = w->step_threads;
  cd.rot = ARENA_NEW(ar, double, 9 * (size_t)s->nb);
  cd.anchor = ARENA_NEW(ar, double, 6 * (size_t)s->ncon);
  cd.normal = ARENA_NEW(ar, double, 3 * (size_t)s->ncon);
  cd.face_body = ARENA_NEW(ar, int, s->ncon);
  int *big = ARENA_NEW(ar, int, n), *small = ARENA_NEW(ar, int, n);
  int *cut = ARENA_NEW(ar, int, threads + 1), *flags = ARENA_ZNEW(ar, int, threads);
  island_colours *ic = ARENA_NEW(ar, island_colours, n);
  if ((s->nb && !cd.rot) || (s->ncon && (!cd.anchor || !cd.normal || !cd.face_body)) || (n && (!big || !small || !ic)) || !cut ||
      !flags)
    return -1; /* the step fails, restored */

  /* big islands with connects to correct are swept colour by colour (whatever the thread
   * count), the others in row order (a big island of contacts alone would sweep its contacts in
   * row order on one thread anyway) */
  int nbig = 0, nsmall = 0;
  for (int k = 0; k < n; k++) {
    int connects = 0;
    for (int ci = s->isl_con_start[k]; ci < s->isl_con_start[k + 1] && !connects; ci++)
      connects = phys__connect_position_corrected(w, &s->con[ci]);
    if (connects &&
        s->isl_body_start[k + 1] - s->isl_body_start[k] >= PHYS_POSITION_COLOUR_MIN_BODIES) {
      if (colour_island(w, s, ar, k, &ic[nbig])) return -1;
      big[nbig++] = k;
    } else {
      small[nsmall++] = k;
    }
  }
  if (threads == 1 || (nbig == 0 && nsmall <= 1)) {
    for (int i = 0; i < nbig; i++) correct_island_coloured(w, s, &cd, big[i], &ic[i], flags, 0);
    for (int i = 0; i < nsmall; i++) correct_island(w, s, &cd, small[i]);
    return 0;
  }
  phys__split_islands_by_cost(s, small, nsmall, threads, cut);
#pragma omp parallel num_threads(threads)
  {
    for (int i = 0; i < nbig; i++) correct_island_coloured(w, s, &cd, big[i], &ic[i], flags, 1);
    int t = omp_get_thread_num();
    for (int i = cut[t]; i < cut[t + 1]; i++) correct_island(w, s, &cd, small[i]);
  }
  return 0;
}
