/* pgs_color.c - the colouring of an island's constraint graph for PGS: two sweep units (row
 * sets, a condim 4/6 contact's two records counting as one) that act on a common subsystem (a
 * free body, or a whole tree: every link of a tree shares its dofs) get different colours, so
 * the units of one colour change disjoint parts of the island's velocity and can be swept in
 * parallel between team barriers.
 *
 * Greedy in row order, as in Box2D v3's graph colouring (a bit mask of used colours per
 * body): each unit takes the lowest colour that none of its subsystems has yet. A unit that
 * finds all PHYS_PGS_MAX_COLORS taken goes to the overflow colour, swept serially last. The
 * colouring and the order within a colour (row order) depend only on the problem, so the sweep
 * is the same for the serial path and for any team size. */
#include "solvers/pgs.h"

/* OR of the colour masks of the subsystems that unit ci acts on (with set = 1, mark `color`
 * in each of them instead) */
static unsigned long long unit_masks(const phys_problem *s, int ci, unsigned long long *mask,
                                     int set, int color) {
  const phys_con *c = &s->con[ci];
  unsigned long long used = 0ULL, bit = set ? 1ULL << color : 0ULL;
  if (phys__con_on_dof(c)) {
    int key = s->tree[c->tree].root_sb;
    used |= mask[key];
    mask[key] |= bit;
    return used;
  }
  /* a condim 4/6 contact's angular record has pieces on the same bodies: one look suffices */
  for (int j = 0; j < c->np; j++) {
    int key = pgs_subsystem(s, s->piece[c->p0 + j].sb);
    used |= mask[key];
    mask[key] |= bit;
  }
  return used;
}

int phys__pgs_color(const phys_problem *s, int k, phys_arena *ar, unsigned long long *mask,
                    phys_pgs_island *isl) {
  int c0 = s->isl_con_start[k], c1 = s->isl_con_start[k + 1], n = c1 - c0;
  int *color = ARENA_NEW(ar, int, n > 0 ? n : 1);
  int *count = ARENA_ZNEW(ar, int, PHYS_PGS_MAX_COLORS + 2);
  isl->order = ARENA_NEW(ar, int, n > 0 ? n : 1);
  isl->color_start = ARENA_NEW(ar, int, PHYS_PGS_MAX_COLORS + 2);
  if (!color || !count || !isl->order || !isl->color_start) return -1;

  /* greedy: the lowest colour free on every subsystem of the unit */
  int nunits = 0, top = 0, overflow = 0;
  for (int ci = c0; ci < c1; ci++) {
    color[ci - c0] = -1;
    if (!pgs_unit_start(&s->con[ci])) continue;
    unsigned long long used = unit_masks(s, ci, mask, 0, 0);
    int col = PHYS_PGS_MAX_COLORS;
    if (~used) col = __builtin_ctzll(~used);
    if (col < PHYS_PGS_MAX_COLORS) {
      unit_masks(s, ci, mask, 1, col);
      if (col + 1 > top) top = col + 1;
    } else {
      overflow = 1;
    }
    color[ci - c0] = col;
    count[col]++;
    nunits++;
  }

  /* colours 0 .. top - 1, then the overflow colour; row order within each (a counting sort) */
  int ncolors = top + overflow, pos = 0;
  for (int col = 0; col < ncolors; col++) {
    int src = col < top ? col : PHYS_PGS_MAX_COLORS;
    isl->color_start[col] = pos;
    pos += count[src];
    count[src] = isl->color_start[col]; /* becomes the colour's write cursor */
  }
  isl->color_start[ncolors] = pos;
  for (int ci = c0; ci < c1; ci++) {
    int col = color[ci - c0];
    if (col >= 0) isl->order[count[col]++] = ci;
  }
  isl->nunits = nunits;
  isl->ncolors = ncolors;
  isl->overflow = overflow;
  return 0;
}
