/* viewer_http.c - the viewer port's plain HTTP side: the bundled browser page (web/index.html,
 * web/viewer.js) and Debian's three.js (libjs-three), served by libwebsockets' file mounts on
 * the same port as the Foxglove WebSocket (docs/viewer.md, "The page").
 *
 * Where the files are is decided once, at start, and logged: the page's folder is the first of
 *   1. viewer_web_dir (--viewer-web-dir DIR), when set: it must hold index.html, else the start
 *      fails naming it;
 *   2. DIR_OF_THE_BINARY/web (a relocated bundle: physd and web/ side by side);
 *   3. DIR_OF_THE_BINARY/../share/physd/web (an installed physd, whatever its prefix);
 *   4. PHYSD_WEB_INSTALL_DIR (the configured prefix's datadir/physd/web, from meson);
 *   5. PHYSD_WEB_SOURCE_DIR (the source tree's web/, for a build that was not installed)
 * that holds index.html. three.js is served under /three/ from the page's folder's three/ when
 * it has one, else from /usr/share/javascript/three (Debian's libjs-three). A missing page or
 * three.js does not stop the viewer (Foxglove does not need them): it is logged as an error
 * naming every place tried, and the page's URLs answer 404. Loop thread only. */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "data_dir.h"
#include "log.h"
#include "viewer_internal.h"

#ifndef PHYSD_WEB_INSTALL_DIR
#define PHYSD_WEB_INSTALL_DIR "/usr/local/share/physd/web"
#endif
#ifndef PHYSD_WEB_SOURCE_DIR
#define PHYSD_WEB_SOURCE_DIR ""
#endif
#define DEBIAN_THREE_DIR "/usr/share/javascript/three"

/* 1 when dir/name is a readable file */
static int has_file(const char *dir, const char *name) {
  char p[PATH_MAX + 64];
  if (snprintf(p, sizeof p, "%s/%s", dir, name) >= (int)sizeof p) return 0;
  return access(p, R_OK) == 0;
}

/* copy src into dst[cap]: 0, or -1 (dst untouched) when it does not fit */
static int copy_path(char *dst, size_t cap, const char *src) {
  size_t n = strlen(src);
  if (n >= cap) return -1;
  memcpy(dst, src, n + 1);
  return 0;
}

int viewer_http_find(viewer *v, const char *web_dir_cfg) {
  v->web_dir[0] = v->three_dir[0] = 0;
  if (web_dir_cfg && web_dir_cfg[0]) {
    if (!has_file(web_dir_cfg, "index.html")) {
      log_error("viewer_web_dir has no readable index.html", "viewer_web_dir=%s", web_dir_cfg);
      return -1;
    }
    copy_path(v->web_dir, sizeof v->web_dir, web_dir_cfg); /* fits: both are PATH_MAX */
  } else {
    char exe[PATH_MAX], c[4][PATH_MAX + 32];
    data_exe_dir(exe, sizeof exe);
    snprintf(c[0], sizeof c[0], "%s/web", exe);
    snprintf(c[1], sizeof c[1], "%s/../share/physd/web", exe);
    snprintf(c[2], sizeof c[2], "%s", PHYSD_WEB_INSTALL_DIR);
    snprintf(c[3], sizeof c[3], "%s", PHYSD_WEB_SOURCE_DIR);
    for (int i = 0; i < 4 && !v->web_dir[0]; i++)
      if ((i > 1 || exe[0]) && c[i][0] && has_file(c[i], "index.html"))
        copy_path(v->web_dir, sizeof v->web_dir, c[i]); /* one too long is passed over */
    if (!v->web_dir[0])
      log_error("viewer page not found: the page is not served (set viewer_web_dir)",
                "tried=\"%s, %s, %s, %s\"", exe[0] ? c[0] : "-", exe[0] ? c[1] : "-", c[2],
                c[3][0] ? c[3] : "-");
  }
  if (v->web_dir[0]) {
    char own[PATH_MAX + 8];
    snprintf(own, sizeof own, "%s/three", v->web_dir);
    int found = has_file(own, "three.min.js") && copy_path(v->three_dir, sizeof v->three_dir, own) == 0;
    if (!found && has_file(DEBIAN_THREE_DIR, "three.min.js"))
      found = copy_path(v->three_dir, sizeof v->three_dir, DEBIAN_THREE_DIR) == 0;
    if (!found)
      log_error("three.js not found: the page cannot draw (install Debian's libjs-three)",
                "tried=\"%s, %s\"", own, DEBIAN_THREE_DIR);
  }
  return 0;
}

const struct lws_http_mount *viewer_http_mounts(viewer *v) {
  if (!v->web_dir[0]) return NULL;
  memset(v->mounts, 0, sizeof v->mounts);
  struct lws_http_mount *page = &v->mounts[0], *three = &v->mounts[1];
  page->mountpoint = "/";
  page->mountpoint_len = 1;
  page->origin = v->web_dir;
  page->def = "index.html";
  page->origin_protocol = LWSMPRO_FILE;
  if (v->three_dir[0]) {
    three->mountpoint = "/three";
    three->mountpoint_len = 6;
    three->origin = v->three_dir;
    three->origin_protocol = LWSMPRO_FILE;
    page->mount_next = three;
  }
  log_info("viewer page", "web_dir=%s three_dir=%s", v->web_dir,
           v->three_dir[0] ? v->three_dir : "-");
  return page;
}
