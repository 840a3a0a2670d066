/* loader_mjcf_attr.c - MJCF loader: error messages, attribute access and number parsing,
 * orientation conventions (MuJoCo's quat/axisangle/euler/xyaxes/zaxis) and a small symmetric
 * eigen-solver for <inertial fullinertia>. See loader_mjcf_internal.h. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "io/loader_mjcf_internal.h"
#include "core/alloc.h"
#include "core/world_internal.h"
#include "core/math3.h"
#include "io/xml_doc.h"

/* Format an error with the file, the node's line and its element name. */
phys_status phys__mj_fail(mj_ctx *c, const xmlNode *node, phys_status code, const char *fmt, ...) {
  long line = node ? xmlGetLineNo(node) : 0;
  if (line < 0) line = 0;
  va_list ap;
  va_start(ap, fmt);
  phys__xml_doc_vmessage(c->err->message, sizeof c->err->message, phys__mj_file(c, node), line,
                   node ? phys__mj_name(node) : "mujoco", fmt, ap);
  va_end(ap);
  c->err->code = code;
  return code;
}

/* Included nodes carry their file's name in _private (loader_mjcf_include.c). */
const char *phys__mj_file(const mj_ctx *c, const xmlNode *node) {
  return node && node->_private ? (const char *)node->_private : c->file;
}

/* Element name as a C string (libxml2 stores UTF-8 bytes). */
const char *phys__mj_name(const xmlNode *node) { return (const char *)node->name; }

/* Linear search in a short NULL-terminated list of names. */
int phys__mj_in_list(const char *s, const char *const *list) {
  for (int i = 0; list[i]; i++)
    if (strcmp(s, list[i]) == 0) return 1;
  return 0;
}

/* Attribute value without copying: the text child of the attribute node. */
const char *phys__mj_attr(const xmlNode *node, const char *name) {
  for (const xmlAttr *a = node->properties; a; a = a->next) {
    if (a->ns || strcmp((const char *)a->name, name) != 0) continue;
    if (!a->children) return "";
    return (const char *)a->children->content;
  }
  return NULL;
}

/* Classify each attribute by the table; the first offending one decides the error. */
phys_status phys__mj_check_attrs(mj_ctx *c, const xmlNode *node, const char *const *table) {
  for (const xmlAttr *a = node->properties; a; a = a->next) {
    const char *an = (const char *)a->name;
    int kind = -1; /* 0 handled, 1 ignored, 2 unsupported, 3 ignored with a notice */
    for (int i = 0; table[i] && kind < 0; i++) {
      const char *t = table[i];
      int k = (t[0] == '~') ? 1 : (t[0] == '!') ? 2 : (t[0] == '?') ? 3 : 0;
      if (strcmp(an, t + (k ? 1 : 0)) == 0) kind = k;
    }
    if (a->ns) kind = -1;
    if (kind < 0)
      return phys__mj_fail(c, node, PHYS_E_PARSE, "unknown attribute '%s'", an);
    if (kind == 2)
      return phys__mj_fail(c, node, PHYS_E_UNSUPPORTED, "attribute '%s' not supported yet", an);
    if (kind == 3) {
      phys_status st = phys__mj_notice(c, node, an,
                                 "MuJoCo soft-constraint parameter ignored: physd's contacts and "
                                 "limits are hard constraints");
      if (st) return st;
    }
    /* an attribute whose value is not one plain text node holds entity references */
    if (a->children && (a->children->type != XML_TEXT_NODE || a->children->next))
      return phys__mj_fail(c, node, PHYS_E_PARSE, "attribute '%s': entity references not allowed", an);
  }
  return PHYS_OK;
}

/* Presence check for required attributes. */
phys_status phys__mj_require(mj_ctx *c, const xmlNode *node, const char *name) {
  if (phys__mj_attr(node, name)) return PHYS_OK;
  return phys__mj_fail(c, node, PHYS_E_PARSE, "missing required attribute '%s'", name);
}

/* Copy the token starting at s (up to whitespace) into buf for an error message. */
static void token_copy(char *buf, size_t cap, const char *s) {
  size_t n = 0;
  while (s[n] && !isspace((unsigned char)s[n]) && n + 1 < cap) n++;
  memcpy(buf, s, n);
  buf[n] = '\0';
}

/* Whitespace-separated reals: every token must be a complete finite number. */
phys_status phys__mj_reals(mj_ctx *c, const xmlNode *node, const char *name, double *out, int min,
                     int max, int *n) {
  const char *s = phys__mj_attr(node, name);
  *n = 0;
  if (!s) return PHYS_OK;
  int count = 0;
  for (;;) {
    while (isspace((unsigned char)*s)) s++;
    if (!*s) break;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || (*end && !isspace((unsigned char)*end)) || !isfinite(v)) {
      char tok[40];
      token_copy(tok, sizeof tok, s);
      return phys__mj_fail(c, node, PHYS_E_PARSE, "attribute '%s': bad number '%s'", name, tok);
    }
    if (count == max) {
      if (min == max)
        return phys__mj_fail(c, node, PHYS_E_PARSE, "attribute '%s': expected %d numbers", name, max);
      return phys__mj_fail(c, node, PHYS_E_PARSE, "attribute '%s': expected %d to %d numbers", name,
                     min, max);
    }
    out[count++] = v;
    s = end;
  }
  if (count < min) {
    if (min == max)
      return phys__mj_fail(c, node, PHYS_E_PARSE, "attribute '%s': expected %d numbers, got %d", name,
                     min, count);
    return phys__mj_fail(c, node, PHYS_E_PARSE, "attribute '%s': expected %d to %d numbers, got %d",
                   name, min, max, count);
  }
  *n = count;
  return PHYS_OK;
}

/* One decimal integer, surrounding whitespace allowed. */
phys_status phys__mj_int(mj_ctx *c, const xmlNode *node, const char *name, long lo, long hi, long *out,
                   int *found) {
  const char *s = phys__mj_attr(node, name);
  *found = 0;
  if (!s) return PHYS_OK;
  while (isspace((unsigned char)*s)) s++;
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  const char *rest = end;
  while (isspace((unsigned char)*rest)) rest++;
  if (end == s || *rest || errno == ERANGE) {
    char tok[40];
    token_copy(tok, sizeof tok, s);
    return phys__mj_fail(c, node, PHYS_E_PARSE, "attribute '%s': bad integer '%s'", name, tok);
  }
  if (v < lo || v > hi)
    return phys__mj_fail(c, node, PHYS_E_PARSE, "attribute '%s': %ld out of range [%ld, %ld]", name, v,
                   lo, hi);
  *out = v;
  *found = 1;
  return PHYS_OK;
}

/* MJCF booleans are the words true and false. */
phys_status phys__mj_bool(mj_ctx *c, const xmlNode *node, const char *name, int *out, int *found) {
  const char *s = phys__mj_attr(node, name);
  *found = 0;
  if (!s) return PHYS_OK;
  if (strcmp(s, "true") == 0) *out = 1;
  else if (strcmp(s, "false") == 0) *out = 0;
  else
    return phys__mj_fail(c, node, PHYS_E_PARSE, "attribute '%s': expected true or false, got '%s'",
                   name, s);
  *found = 1;
  return PHYS_OK;
}

/* Quaternion of a rotation by `angle` (radians) about the unit axis `u`. */
static void quat_axis_angle(double q[4], const double u[3], double angle) {
  double s = sin(0.5 * angle);
  q[0] = cos(0.5 * angle);
  q[1] = u[0] * s;
  q[2] = u[1] * s;
  q[3] = u[2] * s;
}

/* Smallest rotation from +z to v: axis z x v, angle acos(v_z); antiparallel turns about x. */
void phys__mj_quat_z_to(double q[4], const double v[3]) {
  double u[3] = {v[0], v[1], v[2]};
  v3_normalize(u);
  double axis[3] = {-u[1], u[0], 0.0};
  double s = v3_norm(axis);
  if (s < 1e-14) {
    q_identity(q);
    if (u[2] < 0.0) { q[0] = 0.0; q[1] = 1.0; }
    return;
  }
  v3_scale(axis, axis, 1.0 / s);
  quat_axis_angle(q, axis, atan2(s, u[2]));
}

/* Euler angles (already in radians) by the compiler's sequence: a lower-case axis rotates about
 * the moving frame (q = q * r), an upper-case axis about the fixed frame (q = r * q). */
static void quat_euler(double q[4], const double ang[3], const char seq[3]) {
  q_identity(q);
  for (int i = 0; i < 3; i++) {
    double u[3] = {0.0, 0.0, 0.0};
    char ax = (char)tolower((unsigned char)seq[i]);
    u[ax - 'x'] = 1.0;
    double r[4];
    quat_axis_angle(r, u, ang[i]);
    if (islower((unsigned char)seq[i])) q_mul(q, q, r);
    else q_mul(q, r, q);
  }
}

/* The five MJCF orientation forms; angles follow <compiler angle>. */
phys_status phys__mj_orientation(mj_ctx *c, const xmlNode *node, double q[4], int *found) {
  static const char *const forms[] = {"quat", "axisangle", "euler", "xyaxes", "zaxis", NULL};
  const char *which = NULL;
  *found = 0;
  for (int i = 0; forms[i]; i++) {
    if (!phys__mj_attr(node, forms[i])) continue;
    if (which)
      return phys__mj_fail(c, node, PHYS_E_PARSE, "both '%s' and '%s' given (one orientation only)",
                     which, forms[i]);
    which = forms[i];
  }
  if (!which) return PHYS_OK;
  double v[6], r[4];
  int n;
  double unit = c->degree ? M_PI / 180.0 : 1.0;
  phys_status st;
  /* quat: any nonzero 4-vector, normalised */
  if (strcmp(which, "quat") == 0) {
    if ((st = phys__mj_reals(c, node, which, v, 4, 4, &n))) return st;
    memcpy(r, v, sizeof r);
    if (q_normalize(r) < 1e-300)
      return phys__mj_fail(c, node, PHYS_E_PARSE, "attribute 'quat': zero quaternion");
  /* axisangle: axis (normalised) and angle */
  } else if (strcmp(which, "axisangle") == 0) {
    if ((st = phys__mj_reals(c, node, which, v, 4, 4, &n))) return st;
    if (v3_normalize(v) < 1e-300)
      return phys__mj_fail(c, node, PHYS_E_PARSE, "attribute 'axisangle': zero axis");
    quat_axis_angle(r, v, v[3] * unit);
  /* euler: three angles in the compiler's sequence */
  } else if (strcmp(which, "euler") == 0) {
    if ((st = phys__mj_reals(c, node, which, v, 3, 3, &n))) return st;
    for (int i = 0; i < 3; i++) v[i] *= unit;
    quat_euler(r, v, c->eulerseq);
  /* xyaxes: x axis, then y made orthogonal to it; z completes the frame */
  } else if (strcmp(which, "xyaxes") == 0) {
    if ((st = phys__mj_reals(c, node, which, v, 6, 6, &n))) return st;
    double *x = v, *y = v + 3, z[3], m[9];
    if (v3_normalize(x) < 1e-300)
      return phys__mj_fail(c, node, PHYS_E_PARSE, "attribute 'xyaxes': zero x axis");
    v3_madd(y, y, -v3_dot(x, y), x);
    if (v3_normalize(y) < 1e-12)
      return phys__mj_fail(c, node, PHYS_E_PARSE, "attribute 'xyaxes': y axis parallel to x");
    v3_cross(z, x, y);
    for (int i = 0; i < 3; i++) {
      m[3 * i] = x[i];
      m[3 * i + 1] = y[i];
      m[3 * i + 2] = z[i];
    }
    m3_to_q(r, m);
  /* zaxis: smallest rotation taking z to the given direction */
  } else {
    if ((st = phys__mj_reals(c, node, which, v, 3, 3, &n))) return st;
    if (v3_norm(v) < 1e-300)
      return phys__mj_fail(c, node, PHYS_E_PARSE, "attribute 'zaxis': zero vector");
    phys__mj_quat_z_to(r, v);
  }
  memcpy(q, r, sizeof r);
  *found = 1;
  return PHYS_OK;
}

/* principal moments and axes (as a quaternion) of a fullinertia (xx yy zz xy xz yz) */
void phys__mj_principal(const double full[6], double moments[3], double q[4]) {
  double a[9] = {full[0], full[3], full[4], full[3], full[1], full[5], full[4], full[5], full[2]};
  double v[9];
  phys__sym3_eigen(a, moments, v);
  m3_to_q(q, v);
}

/* One notice per key: the key is kept as the notice's prefix "key\n". */
static phys_status notice_add(mj_ctx *c, const xmlNode *node, const char *key, const char *body) {
  size_t klen = strlen(key);
  for (int i = 0; i < c->nnotice; i++)
    if (strncmp(c->notices[i], key, klen) == 0 && c->notices[i][klen] == '\n') return PHYS_OK;
  char msg[700];
  int n = snprintf(msg, sizeof msg, "%s\n%s:%ld: <%s>: %s", key, phys__mj_file(c, node),
                   node ? xmlGetLineNo(node) : 0L, node ? phys__mj_name(node) : "mujoco", body);
  if (n < 0 || PHYS_RESERVE(c->notices, c->capnotice, c->nnotice + 1))
    return phys__mj_fail(c, node, PHYS_E_NOMEM, "out of memory");
  char *copy = phys__xmalloc(strlen(msg) + 1);
  if (!copy) return phys__mj_fail(c, node, PHYS_E_NOMEM, "out of memory");
  strcpy(copy, msg);
  c->notices[c->nnotice++] = copy;
  return PHYS_OK;
}

phys_status phys__mj_notice(mj_ctx *c, const xmlNode *node, const char *key, const char *text) {
  char body[600];
  snprintf(body, sizeof body, "attribute '%s': %s", key, text);
  return notice_add(c, node, key, body);
}

phys_status phys__mj_note(mj_ctx *c, const xmlNode *node, const char *key, const char *fmt, ...) {
  char body[600];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(body, sizeof body, fmt, ap);
  va_end(ap);
  return notice_add(c, node, key, body);
}
