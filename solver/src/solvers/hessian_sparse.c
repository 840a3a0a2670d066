/* hessian_sparse.c - the Newton Hessian H = A + beta sum J^T D J of a large island as a sparse
 * matrix, factorised by CHOLMOD (SuiteSparse; supernodal, its default fill-reducing ordering).
 *
 * Pattern: the island's dofs are grouped by subsystem (a free body's 6, a tree's nv); H has a
 * dense block per subsystem (A's and the row sets on it) and one per pair of subsystems that a
 * row set joins. It is stored as CHOLMOD's lower triangle, column-compressed: column j of
 * subsystem J holds J's rows from j down, then every neighbour I > J's rows in order. The
 * arrays live in the world arena (rebuilt each step, cheap); per Newton step only the values
 * are refilled and CHOLMOD refactorises numerically.
 *
 * The symbolic analysis (ordering, supernodes: the expensive part) is cached in the world
 * (w->sparse_cache) keyed by a hash of the pattern, and reused while an island's pattern is
 * unchanged; an entry that no island used in a step has its analysis freed at the end of its
 * prepare and is kept for the next new pattern (the entries themselves are counted heap, allocated
 * only while the number of sparse islands grows). Each
 * entry has its own cholmod_common and solve workspaces, so islands solved on different threads
 * never share CHOLMOD state. Exception to "no heap allocation in a step": CHOLMOD allocates
 * internally (the analysis when a pattern is new, its factor's numeric storage on the first
 * factorisation, its solve workspace on the first solve); those allocations stay in the cache
 * between steps and are not counted by phys_alloc_count. Without CHOLMOD at build time every
 * function reports "not available" and the solver keeps the dense path. */
#include <stdlib.h>
#include <string.h>
#include "solvers/hessian_sparse.h"
#include "core/alloc.h"

#ifdef PHYS_HAVE_CHOLMOD
#include <suitesparse/cholmod.h>
#include <omp.h>

/* Debian's CHOLMOD runs OpenMP loops with a fixed team of four (num_threads(4), on any
 * machine) wherever a matrix has more than 128 columns or a supernode more than 1024 entries:
 * every factorisation of a large island forks and joins such teams several times, and on a
 * 2-core machine the futex wake-ups cost more than the loops (a third of CANAL's main-thread
 * time on pyramid_wall_20 under perf; OMP_MAX_ACTIVE_LEVELS=0 cut its CPU time from 2.8 s to
 * 1.7 s). physd threads over islands itself, so CHOLMOD runs on the calling thread. Inside an
 * active physd team (islands solved in parallel) nested regions already get one thread; outside
 * one, the OpenMP active-level limit is set to 0 around the call and restored after. That limit
 * is process-wide in libgomp: an OpenMP region that another thread of the application opens
 * during a factorisation also runs on one thread (physd's own threads never do: one world is
 * stepped by one thread). */
static int cholmod_serial_begin(void) {
  if (omp_in_parallel()) return -1;
  int prev = omp_get_max_active_levels();
  if (prev > 0) omp_set_max_active_levels(0);
  return prev;
}

static void cholmod_serial_end(int prev) {
  if (prev > 0) omp_set_max_active_levels(prev);
}

/* one cached analysis */
typedef struct sparse_entry {
  uint64_t key;
  int used;                  /* by an island of the current step */
  cholmod_common cm;
  cholmod_factor *L;
  cholmod_dense *X, *Y, *E;  /* cholmod_solve2's result and workspaces */
} sparse_entry;

struct phys_sparse_cache {
  sparse_entry **e;
  int n, cap;
};

struct phys_sparse_hessian {
  sparse_entry *ent;
  cholmod_sparse A;          /* header over colp / rowi / val */
  int *colp, *rowi;
  double *val;
  int *sub_of_dof;           /* n: subsystem of each dof (subsystems ordered by offset) */
  int *sub_off, *sub_m;      /* per subsystem: first dof, dofs */
  int *sub_S;                /* per subsystem: dofs of its neighbours below the diagonal */
  int *rs_cum;               /* per row set: offset of its pair's block in the lower
                                subsystem's columns past the diagonal part, or -1 */
};

int phys__sparse_hessian_available(void) { return 1; }

/* release an entry's analysis and workspaces (CHOLMOD's memory); the entry stays for reuse */
static void entry_release(sparse_entry *e) {
  cholmod_free_factor(&e->L, &e->cm);
  cholmod_free_dense(&e->X, &e->cm);
  cholmod_free_dense(&e->Y, &e->cm);
  cholmod_free_dense(&e->E, &e->cm);
  e->key = 0;
}

static void entry_free(sparse_entry *e) {
  if (!e) return;
  entry_release(e);
  cholmod_finish(&e->cm);
  phys__xfree(e);
}

/* a pair of subsystems (hi > lo) joined by a row set */
typedef struct sub_pair {
  int lo, hi;
} sub_pair;

/* qsort / bsearch order of pairs: by lower, then upper subsystem */
static int pair_cmp(const void *a, const void *b) {
  const sub_pair *x = a, *y = b;
  if (x->lo != y->lo) return x->lo < y->lo ? -1 : 1;
  if (x->hi != y->hi) return x->hi < y->hi ? -1 : 1;
  return 0;
}

/* the subsystem of piece pi */
static int piece_sub(const phys_newton *nt, const struct phys_sparse_hessian *sp, int pi) {
  int off, m;
  phys__dense_sub_range(nt->s, nt->d, nt->s->piece[pi].sb, &off, &m);
  return sp->sub_of_dof[off];
}

/* the analysis for the pattern of sp (cached or new); NULL on failure */
static sparse_entry *entry_for(phys_world *w, struct phys_sparse_hessian *sp, int n) {
  uint64_t key = 1469598103934665603ull;
  key = phys__fnv1a(key, &n, sizeof n);
  key = phys__fnv1a(key, sp->colp, (size_t)(n + 1) * sizeof(int));
  key = phys__fnv1a(key, sp->rowi, (size_t)sp->colp[n] * sizeof(int));
  if (!w->sparse_cache) {
    w->sparse_cache = phys__xcalloc(1, sizeof(struct phys_sparse_cache));
    if (!w->sparse_cache) return NULL;
  }
  struct phys_sparse_cache *c = w->sparse_cache;
  sparse_entry *spare = NULL;
  for (int i = 0; i < c->n; i++) {
    if (c->e[i]->used) continue;
    if (c->e[i]->L && c->e[i]->key == key) {
      c->e[i]->used = 1;
      return c->e[i];
    }
    if (!c->e[i]->L && !spare) spare = c->e[i];
  }
  /* a new pattern: analyse it in a released entry, or in a new one (the cache only grows to
   * the most islands on the sparse path in a step, so warm steps allocate nothing of ours) */
  sparse_entry *e = spare;
  if (!e) {
    if (c->n == c->cap) {
      int cap = c->cap ? 2 * c->cap : 8;
      sparse_entry **ee = phys__xrealloc(c->e, (size_t)cap * sizeof *ee);
      if (!ee) return NULL;
      c->e = ee;
      c->cap = cap;
    }
    e = phys__xcalloc(1, sizeof *e);
    if (!e) return NULL;
    cholmod_start(&e->cm);
    e->cm.supernodal = CHOLMOD_SUPERNODAL;
    e->cm.print = 0;
    e->cm.error_handler = NULL;
    e->cm.quick_return_if_not_posdef = 1;
    c->e[c->n++] = e;
  }
  int prev = cholmod_serial_begin();
  e->L = cholmod_analyze(&sp->A, &e->cm);
  cholmod_serial_end(prev);
  if (!e->L) return NULL;
  e->key = key;
  e->used = 1;
  return e;
}

int phys__sparse_hessian_setup(phys_world *w, phys_newton *nt) {
  phys_arena *ar = &w->arena;
  const phys_problem *s = nt->s;
  const phys_dense *d = nt->d;
  int n = nt->n, b1 = s->isl_body_start[d->k + 1];
  struct phys_sparse_hessian *sp = ARENA_ZNEW(ar, struct phys_sparse_hessian, 1);
  if (!sp || n == 0) return -1;
  sp->sub_of_dof = ARENA_NEW(ar, int, n);
  int nsub = 0;
  for (int sb = d->b0; sb < b1; sb++) nsub += d->off[sb - d->b0] >= 0;
  sp->sub_off = ARENA_NEW(ar, int, nsub);
  sp->sub_m = ARENA_NEW(ar, int, nsub);
  sp->sub_S = ARENA_ZNEW(ar, int, nsub);
  sp->rs_cum = ARENA_NEW(ar, int, nt->nrow);
  sub_pair *pairs = ARENA_NEW(ar, sub_pair, nt->nrow + 1);
  if (!sp->sub_of_dof || !sp->sub_off || !sp->sub_m || !sp->sub_S || !sp->rs_cum || !pairs)
    return -1;
  /* subsystems in offset order (dense_build lays them out in solver-body order) */
  int k = 0;
  for (int sb = d->b0; sb < b1; sb++) {
    int off = d->off[sb - d->b0], m;
    if (off < 0) continue;
    phys__dense_sub_range(s, d, sb, &off, &m);
    sp->sub_off[k] = off;
    sp->sub_m[k] = m;
    for (int i = 0; i < m; i++) sp->sub_of_dof[off + i] = k;
    k++;
  }
  /* the pairs of subsystems row sets join */
  int npair = 0;
  for (int i = 0; i < nt->nrow; i++) {
    const phys_con *c = &s->con[nt->row[i].ci];
    sp->rs_cum[i] = -1;
    if (phys__con_on_dof(c) || c->np < 2) continue;
    int a = piece_sub(nt, sp, c->p0), b = piece_sub(nt, sp, c->p0 + 1);
    if (a == b) continue;
    pairs[npair].lo = a < b ? a : b;
    pairs[npair].hi = a < b ? b : a;
    npair++;
  }
  qsort(pairs, (size_t)npair, sizeof *pairs, pair_cmp);
  int nu = 0;
  for (int i = 0; i < npair; i++)
    if (nu == 0 || pair_cmp(&pairs[i], &pairs[nu - 1]) != 0) pairs[nu++] = pairs[i];
  /* each pair's offset past the diagonal part of its lower subsystem's columns */
  int *pcum = ARENA_NEW(ar, int, nu + 1);
  if (!pcum) return -1;
  for (int i = 0; i < nu; i++) {
    pcum[i] = sp->sub_S[pairs[i].lo];
    sp->sub_S[pairs[i].lo] += sp->sub_m[pairs[i].hi];
  }
  for (int i = 0; i < nt->nrow; i++) {
    const phys_con *c = &s->con[nt->row[i].ci];
    if (phys__con_on_dof(c) || c->np < 2) continue;
    int a = piece_sub(nt, sp, c->p0), b = piece_sub(nt, sp, c->p0 + 1);
    if (a == b) continue;
    sub_pair key = {a < b ? a : b, a < b ? b : a};
    sub_pair *hit = bsearch(&key, pairs, (size_t)nu, sizeof *pairs, pair_cmp);
    sp->rs_cum[i] = pcum[hit - pairs];
  }
  /* column pointers and row indices */
  sp->colp = ARENA_NEW(ar, int, n + 1);
  if (!sp->colp) return -1;
  size_t nnz = 0;
  for (int j = 0; j < n; j++) {
    int J = sp->sub_of_dof[j], jl = j - sp->sub_off[J];
    sp->colp[j] = (int)nnz;
    nnz += (size_t)(sp->sub_m[J] - jl + sp->sub_S[J]);
  }
  sp->colp[n] = (int)nnz;
  sp->rowi = ARENA_NEW(ar, int, nnz);
  sp->val = ARENA_ZNEW(ar, double, nnz);
  if (!sp->rowi || !sp->val) return -1;
  int pi = 0;
  for (int j = 0; j < n; j++) {
    int J = sp->sub_of_dof[j], pos = sp->colp[j];
    for (int r = j; r < sp->sub_off[J] + sp->sub_m[J]; r++) sp->rowi[pos++] = r;
    while (pi < nu && pairs[pi].lo < J) pi++;
    for (int q = pi; q < nu && pairs[q].lo == J; q++)
      for (int r = 0; r < sp->sub_m[pairs[q].hi]; r++)
        sp->rowi[pos++] = sp->sub_off[pairs[q].hi] + r;
  }
  cholmod_sparse *A = &sp->A;
  A->nrow = A->ncol = (size_t)n;
  A->nzmax = nnz;
  A->p = sp->colp;
  A->i = sp->rowi;
  A->x = sp->val;
  A->stype = -1;
  A->itype = CHOLMOD_INT;
  A->xtype = CHOLMOD_REAL;
  A->dtype = CHOLMOD_DOUBLE;
  A->sorted = 1;
  A->packed = 1;
  sp->ent = entry_for(w, sp, n);
  if (!sp->ent) return -1;
  nt->sp = sp;
  return 0;
}

void phys__sparse_hessian_end_step(phys_world *w) {
  struct phys_sparse_cache *c = w->sparse_cache;
  if (!c) return;
  for (int i = 0; i < c->n; i++) {
    if (!c->e[i]->used) entry_release(c->e[i]);
    c->e[i]->used = 0;
  }
}

void phys__sparse_hessian_free_all(phys_world *w) {
  struct phys_sparse_cache *c = w->sparse_cache;
  if (!c) return;
  for (int i = 0; i < c->n; i++) entry_free(c->e[i]);
  phys__xfree(c->e);
  phys__xfree(c);
  w->sparse_cache = NULL;
}

/* the value slot of H(row, col), row >= col, inside one subsystem's block */
static inline double *diag_slot(const struct phys_sparse_hessian *sp, int row, int col) {
  return sp->val + sp->colp[col] + (row - col);
}

/* H += Ga^T W Gb for pieces with rows ga (3 x ma over subsystem Ia) and gb (3 x mb over Ib),
 * W = beta D, into the lower triangle (Ia == Ib: entries i >= j; Ia > Ib: the whole block) */
static inline __attribute__((always_inline)) void
add_piece_pair(struct phys_sparse_hessian *sp, const double *ga, int Ia, int ma, const double *gb,
               int Ib, int mb, const double W[9], int cum) {
  double T[3 * 64];
  int ob = sp->sub_off[Ib], mJ = sp->sub_m[Ib];
  for (int j0 = 0; j0 < mb; j0 += 64) {
    int nj = mb - j0 < 64 ? mb - j0 : 64;
    for (int r = 0; r < 3; r++)
      for (int j = 0; j < nj; j++)
        T[r * 64 + j] = W[3 * r] * gb[j0 + j] + W[3 * r + 1] * gb[mb + j0 + j] +
                        W[3 * r + 2] * gb[2 * mb + j0 + j];
    for (int j = 0; j < nj; j++) {
      int col = ob + j0 + j, jl = j0 + j;
      double *colv = sp->val + sp->colp[col];
      for (int i = Ia == Ib ? jl : 0; i < ma; i++) {
        double add = ga[i] * T[j] + ga[ma + i] * T[64 + j] + ga[2 * ma + i] * T[128 + j];
        if (Ia == Ib) colv[i - jl] += add;
        else colv[(mJ - jl) + cum + i] += add;
      }
    }
  }
}

int phys__sparse_hessian_factor(phys_newton *nt) {
  struct phys_sparse_hessian *sp = nt->sp;
  const phys_problem *s = nt->s;
  const phys_dense *d = nt->d;
  int n = nt->n, b1 = s->isl_body_start[d->k + 1];
  memset(sp->val, 0, (size_t)sp->colp[n] * sizeof(double));
  /* A: a free body's diag(m I, I_w), a tree's A (lower triangles) */
  for (int sb = d->b0; sb < b1; sb++) {
    int t = s->sb_tree[sb], off = d->off[sb - d->b0];
    if (off < 0) continue;
    if (t < 0) {
      double m = nt->w->bodies[s->body_id[sb]].mass;
      const double *I = s->inertia + 18 * sb;
      for (int i = 0; i < 3; i++) {
        *diag_slot(sp, off + i, off + i) = m;
        for (int j = 0; j <= i; j++) *diag_slot(sp, off + 3 + i, off + 3 + j) = I[3 * i + j];
      }
    } else {
      int nv = s->tree[t].nv;
      const double *A = s->tree[t].A;
      for (int i = 0; i < nv; i++)
        for (int j = 0; j <= i; j++) *diag_slot(sp, off + i, off + j) = A[(size_t)i * nv + j];
    }
  }
  /* beta J^T D J per row set, piece pair by piece pair */
  for (int ri = 0; ri < nt->nrow; ri++) {
    const phys_newton_row *rw = &nt->row[ri];
    const phys_con *c = &s->con[rw->ci];
    const double *D = nt->D + 9 * ri;
    double W[9];
    int nz = 0;
    for (int q = 0; q < 9; q++) nz |= (W[q] = nt->beta * D[q]) != 0.0;
    if (!nz) continue;
    if (phys__con_on_dof(c) && c->nt) {
      /* a tendon limit: W coef_a coef_b inside its tree's block (lower triangle) */
      int off = d->off[s->tree[c->tree].root_sb - d->b0];
      for (int a = 0; a < c->nt; a++)
        for (int b = 0; b < c->nt; b++) {
          int row = off + c->tdof[a], col = off + c->tdof[b];
          if (row >= col) *diag_slot(sp, row, col) += W[8] * c->tcoef[a] * c->tcoef[b];
        }
      continue;
    }
    if (phys__con_on_dof(c)) {
      int dof = d->off[s->tree[c->tree].root_sb - d->b0] + c->dof;
      *diag_slot(sp, dof, dof) += W[8];
      continue;
    }
    for (int pa = 0; pa < c->np; pa++)
      for (int pb = 0; pb < c->np; pb++) {
        int ia = c->p0 + pa, ib = c->p0 + pb, oa, ma, ob, mb;
        phys__dense_sub_range(s, d, s->piece[ia].sb, &oa, &ma);
        phys__dense_sub_range(s, d, s->piece[ib].sb, &ob, &mb);
        int Ia = sp->sub_of_dof[oa], Ib = sp->sub_of_dof[ob];
        if (Ia < Ib) continue; /* its transpose is the (pb, pa) term */
        const double *ga = d->rows + d->row_adr[ia - d->p0];
        const double *gb = d->rows + d->row_adr[ib - d->p0];
        /* two free bodies: the same sums with the sizes constant, so the compiler unrolls them
         * (about a quarter of the assembly's instructions on pyramid_wall_20) */
        if (ma == 6 && mb == 6) add_piece_pair(sp, ga, Ia, 6, gb, Ib, 6, W, sp->rs_cum[ri]);
        else add_piece_pair(sp, ga, Ia, ma, gb, Ib, mb, W, sp->rs_cum[ri]);
      }
  }
  sparse_entry *e = sp->ent;
  int prev = cholmod_serial_begin();
  int ok = cholmod_factorize(&sp->A, e->L, &e->cm);
  cholmod_serial_end(prev);
  if (!ok || e->cm.status != CHOLMOD_OK || e->L->minor < (size_t)n) return -1;
  return 0;
}

int phys__sparse_hessian_solve(phys_newton *nt, const double *rhs, double *out) {
  struct phys_sparse_hessian *sp = nt->sp;
  sparse_entry *e = sp->ent;
  cholmod_dense B;
  memset(&B, 0, sizeof B);
  B.nrow = B.nzmax = B.d = (size_t)nt->n;
  B.ncol = 1;
  B.x = (void *)rhs;
  B.xtype = CHOLMOD_REAL;
  B.dtype = CHOLMOD_DOUBLE;
  int prev = cholmod_serial_begin();
  int ok = cholmod_solve2(CHOLMOD_A, e->L, &B, NULL, &e->X, NULL, &e->Y, &e->E, &e->cm);
  cholmod_serial_end(prev);
  if (!ok) return -1;
  memcpy(out, e->X->x, (size_t)nt->n * sizeof(double));
  return 0;
}

#else /* no CHOLMOD */

int phys__sparse_hessian_available(void) { return 0; }
int phys__sparse_hessian_setup(phys_world *w, phys_newton *nt) {
  (void)w;
  (void)nt;
  return -2;
}
void phys__sparse_hessian_end_step(phys_world *w) { (void)w; }
void phys__sparse_hessian_free_all(phys_world *w) { (void)w; }
int phys__sparse_hessian_factor(phys_newton *nt) {
  (void)nt;
  return -1;
}
int phys__sparse_hessian_solve(phys_newton *nt, const double *rhs, double *out) {
  (void)nt;
  (void)rhs;
  (void)out;
  return -1;
}
#endif
