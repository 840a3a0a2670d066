/* data_dir.h - where physd finds the data files it ships (the worlds of configs/worlds), for an
 * installed daemon as for one run from its build tree.
 *
 * The worlds folder is the default allowed root of LoadWorld (config.c) and the folder the
 * installed configs/physd.conf and systemd unit name. It is the first of
 *   1. DIR_OF_THE_BINARY/../share/physd/worlds (an installed physd, whatever its prefix, also a
 *      DESTDIR staging copy);
 *   2. PHYSD_WORLDS_INSTALL_DIR (the configured prefix's datadir/physd/worlds, from meson);
 *   3. PHYSD_WORLDS_SOURCE_DIR (the source tree's configs/worlds, for a build not installed)
 * that is a readable folder holding default.xml. The same order as the viewer page's folder
 * (viewer_http.c, which shares data_exe_dir). main.c logs the result and every place tried. */
#ifndef PHYSD_DATA_DIR_H
#define PHYSD_DATA_DIR_H

#include <stddef.h>

/* The folder of the running binary (from /proc/self/exe) into out[cap]; "" when it cannot be
 * read or does not fit. Thread-safe. */
void data_exe_dir(char *out, size_t cap);

/* The worlds folder, searched in the order above: 0 and its path in out[cap], or -1 and out ""
 * when none of the places holds default.xml. tried[tried_cap] receives every place looked at,
 * comma-separated, in order (truncated when it does not fit), for the log. Neither pointer may
 * be NULL. Thread-safe; call once at start. */
int data_find_worlds_dir(char *out, size_t cap, char *tried, size_t tried_cap);

#endif
