/* loader_mjcf_nonconvex.c - MJCF loader: physd's mark for meshes that collide as their
 * triangles (phys_world_add_trimesh) instead of their convex hull, which MuJoCo always uses:
 *   <custom><text name="physd:nonconvex" data="bowl channel"/></custom>
 * names the <mesh> assets (by name, or by file name without directories and extension as
 * MuJoCo names them), separated by spaces. MuJoCo loads the same file with those meshes as
 * hulls. The section is read before <asset>, which asks here for each mesh; a name no mesh has
 * is a load error at the <text> element. */
#include <string.h>
#include "io/loader_mjcf_internal.h"
#include "core/alloc.h"

phys_status phys__mj_nonconvex_text(mj_ctx *c, const xmlNode *node, const char *data) {
  if (c->nonconvex_node)
    return phys__mj_fail(c, node, PHYS_E_PARSE,
                         "physd:nonconvex: given twice (the first at line %ld): list every "
                         "mesh in one", (long)xmlGetLineNo(c->nonconvex_node));
  c->nonconvex_node = node;
  for (const char *p = data;;) {
    p += strspn(p, " \t\r\n");
    size_t n = strcspn(p, " \t\r\n");
    if (!n) break;
    if (PHYS_RESERVE(c->nonconvex, c->capnonconvex, c->nnonconvex + 1))
      return phys__mj_fail(c, node, PHYS_E_NOMEM, "out of memory");
    c->nonconvex[c->nnonconvex++] = (mj_nonconvex){p, (int)n, 0};
    p += n;
  }
  if (!c->nnonconvex)
    return phys__mj_fail(c, node, PHYS_E_PARSE, "physd:nonconvex: attribute 'data' names no mesh");
  return PHYS_OK;
}

int phys__mj_nonconvex_take(mj_ctx *c, const char *mesh) {
  int hit = 0;
  size_t len = strlen(mesh);
  for (int i = 0; i < c->nnonconvex; i++)
    if ((size_t)c->nonconvex[i].len == len && strncmp(c->nonconvex[i].name, mesh, len) == 0) {
      c->nonconvex[i].used = 1;
      hit = 1;
    }
  return hit;
}

phys_status phys__mj_nonconvex_check(mj_ctx *c) {
  for (int i = 0; i < c->nnonconvex; i++)
    if (!c->nonconvex[i].used)
      return phys__mj_fail(c, c->nonconvex_node, PHYS_E_PARSE,
                           "physd:nonconvex: no mesh named '%.*s' (a <mesh> is named by its "
                           "'name', else by its file name without directories and extension)",
                           c->nonconvex[i].len, c->nonconvex[i].name);
  return PHYS_OK;
}
