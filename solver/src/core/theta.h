/* theta.h - the theta-method's weights inside the engine (theta.c): the default test and the
 * list of solvers that take other weights, for messages. */
#ifndef PHYS_CORE_THETA_H
#define PHYS_CORE_THETA_H

#include <stddef.h>
#include "phys/phys_types.h"

/* 1 when `t` (non-NULL) is the default (1, 1, 1): physd's historical step. Pure. */
int phys__theta_is_default(const phys_theta_options *t);

/* The names of the solvers that take any weights ("sap, icf-lagged, icf-similar") into `buf`
 * (n bytes, truncated, always terminated when n > 0). Returns buf. Pure. */
char *phys__theta_solvers_text(char *buf, size_t n);

#endif
