/* last_status.h - the status code of a world's last recorded error, for the loaders: they build
 * a world through the public API and report a failed call with phys_world_last_error(), and
 * this tells them whether that call ran out of memory (PHYS_E_NOMEM must reach the caller as
 * such, not as a parse error of the document). Internal to libphys. */
#ifndef PHYS_CORE_LAST_STATUS_H
#define PHYS_CORE_LAST_STATUS_H

#include "phys/phys.h"

/* PHYS_E_NOMEM when the last error recorded on `w` (by the call that just failed) was an
 * allocation failure, else `fallback`. `w` not NULL; reads only. */
phys_status phys__last_status_or(const phys_world *w, phys_status fallback);

#endif
