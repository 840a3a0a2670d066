/* path_roots.h - the loaders' check that a file they are about to read lies inside the
 * directories the caller allows (phys_load_options.allowed_roots): a daemon serving clients
 * must not let a model's <include> or mesh name reach files outside its allowed roots. */
#ifndef PHYS_IO_PATH_ROOTS_H
#define PHYS_IO_PATH_ROOTS_H

/* 0 when `path` may be read: nroots is 0 (no restriction), or its real path (symbolic links and
 * ".." resolved) lies inside the real path of one of roots[0 .. nroots). -1 when it cannot be
 * resolved (errno set: it does not exist, ...), -2 when it lies outside every root. Reads the
 * file system only; thread-safe. */
int phys__path_inside(const char *path, const char *const *roots, int nroots);

#endif
