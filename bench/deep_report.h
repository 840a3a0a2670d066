/* deep_report.h - where a run's deep contacts are (issue 15): physbench --deep-report MM.
 *
 * After each timed step the world's contacts (phys_world_get_contact, their signed distance
 * before the solve) are grouped by the pair of geom types they join (box-box, cylinder-plane,
 * ...): per pair the steps with a contact deeper than the threshold, those contacts, the
 * deepest penetration and the step and bodies where it was. The goal of issue 15 is no contact
 * deeper than 1 mm at the file's time step; this says which geometry pairs stand in its way. */
#ifndef PHYSD_BENCH_DEEP_REPORT_H
#define PHYSD_BENCH_DEEP_REPORT_H

#include "phys/phys.h"

/* one pair of geom types (type_a <= type_b) */
typedef struct deep_pair {
  long steps_over;           /* steps with at least one contact of this pair over the threshold */
  long contacts_over;        /* such contacts, over all steps */
  long contacts;             /* contacts of this pair, over all steps */
  double max_depth;          /* deepest penetration (m, >= 0) */
  long worst_step;           /* its timed step (0-based), when max_depth > 0 */
  char worst_a[64], worst_b[64]; /* its bodies: names, "body ID" when unnamed, "(static)" */
} deep_pair;

/* The report of one run. Zero it, then set threshold (m); no allocation. */
typedef struct deep_report {
  double threshold;          /* penetration (m) counted as deep */
  long steps, steps_over;    /* steps seen; steps with any contact over the threshold */
  deep_pair pair[PHYS_GEOM_TYPE_COUNT][PHYS_GEOM_TYPE_COUNT]; /* [min type][max type] */
} deep_report;

/* Add the contacts of the step just taken (timed step `step`, 0-based) of w to r. */
void deep_report_step(deep_report *r, const phys_world *w, long step);

/* The short name of a geom type ("box", "cylinder", ...; "?" out of range). Static string. */
const char *deep_report_type_name(int type);

#endif
