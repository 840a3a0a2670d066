/* loader_urdf_base.c - URDF loader: how the root link meets the world. The root is fixed to the
 * world (floating_base = 0, or a bare root link called "world") or free (floating_base = 1), and
 * a free root starts at the origin or at phys_load_options' base pose (has_base_pose, base_pos,
 * base_quat), which is validated here. The choice is stated in a notice. See docs/urdf.md.
 */
#include <math.h>
#include <string.h>
#include "io/loader_urdf_internal.h"

/* Tolerances: |q| outside 1 +- UNIT_TOL is normalised with a notice, below ZERO_TOL refused. */
#define UNIT_TOL 1e-9
#define ZERO_TOL 1e-9

phys_status phys__ur_base_check(ur_ctx *c) {
  phys_load_options *lo = &c->lo;
  if (!lo->has_base_pose) return PHYS_OK;
  for (int i = 0; i < 3; i++)
    if (!isfinite(lo->base_pos[i]))
      return phys__ur_fail(c, NULL, PHYS_E_INVALID, "phys_load_options.base_pos[%d] is not finite "
                           "(%g)", i, lo->base_pos[i]);
  double n2 = 0.0;
  for (int i = 0; i < 4; i++) {
    if (!isfinite(lo->base_quat[i]))
      return phys__ur_fail(c, NULL, PHYS_E_INVALID, "phys_load_options.base_quat[%d] is not "
                           "finite (%g)", i, lo->base_quat[i]);
    n2 += lo->base_quat[i] * lo->base_quat[i];
  }
  double n = sqrt(n2);
  if (!(n >= ZERO_TOL))
    return phys__ur_fail(c, NULL, PHYS_E_INVALID, "phys_load_options.base_quat (%g, %g, %g, %g) "
                         "is zero: not a rotation", lo->base_quat[0], lo->base_quat[1],
                         lo->base_quat[2], lo->base_quat[3]);
  if (fabs(n - 1.0) <= UNIT_TOL) return PHYS_OK;
  double q0[4];
  memcpy(q0, lo->base_quat, sizeof q0);
  for (int i = 0; i < 4; i++) lo->base_quat[i] /= n;
  return phys__ur_notice(c, NULL, "base-quat", "phys_load_options.base_quat (%g, %g, %g, %g) has "
                         "norm %g: normalised to (%g, %g, %g, %g)", q0[0], q0[1], q0[2], q0[3], n,
                         lo->base_quat[0], lo->base_quat[1], lo->base_quat[2], lo->base_quat[3]);
}

phys_status phys__ur_root_mode(ur_ctx *c, int root, ur_gkind *kind, double pos[3],
                               double quat[4]) {
  const ur_link *r = &c->links[root];
  int is_world = strcmp(r->name, "world") == 0 && r->mass == 0.0 && r->ngeom == 0;
  *kind = is_world || !c->lo.floating_base ? UR_G_STATIC : UR_G_FREE;
  pos[0] = pos[1] = pos[2] = 0.0;
  quat[0] = 1.0;
  quat[1] = quat[2] = quat[3] = 0.0;
  if (c->lo.has_base_pose && *kind == UR_G_STATIC)
    return phys__ur_fail(c, r->node, PHYS_E_INVALID, "root link '%s' is %s: a base pose "
                         "(phys_load_options.has_base_pose) applies to a floating base only",
                         r->name, is_world ? "the world frame ('world')"
                                           : "fixed to the world (floating_base = 0)");
  if (is_world)
    return phys__ur_notice(c, r->node, "base", "root link 'world' is the world frame: the robot "
                           "is fixed to it whatever phys_load_options.floating_base says");
  if (*kind == UR_G_STATIC)
    return phys__ur_notice(c, r->node, "base", "root link '%s' is fixed to the world at the "
                           "origin (phys_load_options.floating_base = 0)", r->name);
  if (!c->lo.has_base_pose)
    return phys__ur_notice(c, r->node, "base", "root link '%s' is free (a floating base, "
                           "phys_load_options.floating_base = 1), starting at the origin "
                           "(phys_load_options.has_base_pose = 0)", r->name);
  memcpy(pos, c->lo.base_pos, 3 * sizeof *pos);
  memcpy(quat, c->lo.base_quat, 4 * sizeof *quat);
  return phys__ur_notice(c, r->node, "base", "root link '%s' is free (a floating base, "
                         "phys_load_options.floating_base = 1), starting at (%g, %g, %g) with "
                         "orientation (%g, %g, %g, %g) (phys_load_options.base_pos, base_quat)",
                         r->name, pos[0], pos[1], pos[2], quat[0], quat[1], quat[2], quat[3]);
}
