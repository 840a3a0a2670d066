/* loader_mjcf_include.c - MJCF loader: <include file="..."/>.
 *
 * Before any pass runs, every <include> element (anywhere in the tree) is replaced by the
 * children of the included file's <mujoco> root, as MuJoCo does. Relative paths are relative to
 * the including file's directory; includes nest; a file that includes itself (directly or through
 * others) is an error. The copied nodes keep their line numbers, and their `_private` field points
 * to the name of the file they came from (owned by the context), so phys__mj_fail() names the right
 * file and line for anything inside an included file.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libxml/parser.h>
#include "io/loader_mjcf_internal.h"
#include "io/path_roots.h"
#include "core/alloc.h"
#include "io/xml_doc.h"

/* deepest chain of nested includes */
#define MJ_MAX_INCLUDE_DEPTH 32

/* Keep a copy of `s` in the context (freed with it); NULL when out of memory. */
static const char *keep_string(mj_ctx *c, const char *s) {
  if (PHYS_RESERVE(c->files, c->capfile, c->nfile + 1)) return NULL;
  char *copy = phys__xmalloc(strlen(s) + 1);
  if (!copy) return NULL;
  strcpy(copy, s);
  c->files[c->nfile++] = copy;
  return copy;
}

/* Set the file of `node` and of everything below it. */
static void mark_file(xmlNode *node, const char *file) {
  for (; node; node = node->next) {
    node->_private = (void *)file;
    if (node->type == XML_ELEMENT_NODE) mark_file(node->children, file);
  }
}

static phys_status expand(mj_ctx *c, xmlDoc *doc, xmlNode *parent, const char *file, int depth);

/* Replace the <include> element `inc` (in `doc`, written in `file`) by the included children. */
static phys_status include_one(mj_ctx *c, xmlDoc *doc, xmlNode *inc, const char *file,
                               int depth) {
  static const char *const attrs[] = {"file", NULL};
  phys_status st;
  if ((st = phys__mj_check_attrs(c, inc, attrs)) || (st = phys__mj_require(c, inc, "file"))) return st;
  if (inc->children) {
    for (const xmlNode *ch = inc->children; ch; ch = ch->next)
      if (ch->type == XML_ELEMENT_NODE)
        return phys__mj_fail(c, inc, PHYS_E_PARSE, "<include> cannot have child elements");
  }
  const char *rel = phys__mj_attr(inc, "file");
  if (!*rel) return phys__mj_fail(c, inc, PHYS_E_PARSE, "attribute 'file' is empty");
  if (depth >= MJ_MAX_INCLUDE_DEPTH)
    return phys__mj_fail(c, inc, PHYS_E_PARSE, "includes nested deeper than %d", MJ_MAX_INCLUDE_DEPTH);

  /* the path: absolute, or relative to the including file's directory */
  char path[PATH_MAX];
  if (rel[0] == '/') {
    if (snprintf(path, sizeof path, "%s", rel) >= (int)sizeof path)
      return phys__mj_fail(c, inc, PHYS_E_PARSE, "include path too long");
  } else {
    /* the main document's includes resolve against its directory (c->dir), an included
     * file's against that file's own */
    if (depth == 0 && !c->dir)
      return phys__mj_fail(c, inc, PHYS_E_PARSE,
                     "relative include '%s' in a document loaded from a string without a base "
                     "directory (load the file by path, or give its directory)",
                     rel);
    const char *slash = strrchr(file, '/');
    int n = depth == 0 ? snprintf(path, sizeof path, "%s%s", c->dir, rel)
                       : snprintf(path, sizeof path, "%.*s%s", slash ? (int)(slash - file) + 1 : 0,
                                  file, rel);
    if (n >= (int)sizeof path) return phys__mj_fail(c, inc, PHYS_E_PARSE, "include path too long");
  }
  int inside = phys__path_inside(path, c->roots, c->nroots);
  if (inside == -2)
    return phys__mj_fail(c, inc, PHYS_E_IO, "included file '%s' is outside the allowed roots",
                         path);

  /* cycles: the same real file already on the chain of includes */
  char real[PATH_MAX];
  if (!realpath(path, real))
    return phys__mj_fail(c, inc, PHYS_E_IO, "cannot read included file '%s': %s", path,
                   strerror(errno));
  for (int i = 0; i < c->ninc; i++)
    if (strcmp(c->inc_stack[i], real) == 0)
      return phys__mj_fail(c, inc, PHYS_E_PARSE, "include cycle: '%s' is already being included",
                     path);
  if (c->ninc >= MJ_MAX_INCLUDE_DEPTH + 1)
    return phys__mj_fail(c, inc, PHYS_E_PARSE, "includes nested too deep");

  /* read and parse it (same parser settings as the main document) */
  char *buf = NULL;
  size_t len = 0;
  int in_read;
  int e = phys__xml_read_file(path, &buf, &len, &in_read);
  if (in_read) e = EIO;
  if (e) return phys__mj_fail(c, inc, e == ENOMEM ? PHYS_E_NOMEM : PHYS_E_IO,
                        "cannot read included file '%s': %s", path, strerror(e));
  const char *name = keep_string(c, path);
  if (!name || len > INT_MAX) {
    phys__xfree(buf);
    return phys__mj_fail(c, inc, name ? PHYS_E_IO : PHYS_E_NOMEM, "cannot load included file '%s'",
                   path);
  }
  xml_doc_error xerr;
  xmlDocPtr idoc = phys__xml_doc_parse(buf, len, name, &xerr);
  phys__xfree(buf);
  if (xerr.nomem) return phys__mj_fail(c, inc, PHYS_E_NOMEM, "out of memory");
  xmlNode *iroot = idoc ? xmlDocGetRootElement(idoc) : NULL;
  if (!iroot) {
    phys__xml_doc_error_message(c->err->message, sizeof c->err->message, name, &xerr);
    c->err->code = st = PHYS_E_PARSE;
  } else if (strcmp(phys__mj_name(iroot), "mujoco") != 0) {
    phys__xml_doc_message(c->err->message, sizeof c->err->message, name, xmlGetLineNo(iroot),
                    phys__mj_name(iroot), "root element of an included file must be <mujoco>");
    c->err->code = st = PHYS_E_PARSE;
  } else {
    /* its own includes first (relative to its directory), then copy its children in */
    mark_file(iroot, name);
    st = phys__mj_check_attrs(c, iroot, (const char *const[]){"~model", NULL});
    c->inc_stack[c->ninc++] = real;
    if (!st) st = expand(c, idoc, iroot, name, depth + 1);
    c->ninc--;
    for (xmlNode *ch = iroot->children; ch && !st; ch = ch->next) {
      if (ch->type == XML_ENTITY_REF_NODE) {
        st = phys__mj_fail(c, iroot, PHYS_E_PARSE, "entity references not allowed");
        break;
      }
      if (ch->type != XML_ELEMENT_NODE) continue;
      xmlNode *copy = xmlDocCopyNode(ch, doc, 1);
      if (!copy) {
        st = phys__mj_fail(c, inc, PHYS_E_NOMEM, "out of memory");
        break;
      }
      mark_file(copy, name);
      /* xmlDocCopyNode keeps element lines; keep them for text-free copies too */
      if (!xmlAddPrevSibling(inc, copy)) {
        xmlFreeNode(copy);
        st = phys__mj_fail(c, inc, PHYS_E_NOMEM, "out of memory");
      }
    }
  }
  xmlFreeDoc(idoc);
  if (st) return st;
  xmlUnlinkNode(inc);
  xmlFreeNode(inc);
  return PHYS_OK;
}

/* Expand the includes among the descendants of `parent`, in document order. */
static phys_status expand(mj_ctx *c, xmlDoc *doc, xmlNode *parent, const char *file, int depth) {
  xmlNode *ch = parent->children;
  while (ch) {
    xmlNode *next = ch->next;
    if (ch->type == XML_ELEMENT_NODE) {
      phys_status st = strcmp(phys__mj_name(ch), "include") == 0
                           ? include_one(c, doc, ch, file, depth)
                           : expand(c, doc, ch, file, depth);
      if (st) return st;
    }
    ch = next;
  }
  return PHYS_OK;
}

/* Drop the namespaced (vendor) attributes of `node`, one notice per qualified name. */
static phys_status strip_vendor_attrs(mj_ctx *c, xmlNode *node) {
  char key[200];
  xmlAttr *a = node->properties;
  while (a) {
    xmlAttr *an = a->next;
    if (a->ns && a->ns->prefix) {
      snprintf(key, sizeof key, "%s:%s", (const char *)a->ns->prefix, (const char *)a->name);
      phys_status st = phys__mj_note(c, node, key, "vendor attribute '%s' skipped", key);
      if (st) return st;
      xmlRemoveProp(a);
    }
    a = an;
  }
  return PHYS_OK;
}

/* Drop vendor extensions below `parent`: elements and attributes with a namespace prefix
 * (xmlns:foo), one notice per qualified name. */
static phys_status strip_vendor(mj_ctx *c, xmlNode *parent) {
  phys_status st;
  char key[200];
  xmlNode *ch = parent->children;
  while (ch) {
    xmlNode *next = ch->next;
    if (ch->type == XML_ELEMENT_NODE) {
      if (ch->ns && ch->ns->prefix) {
        snprintf(key, sizeof key, "%s:%s", (const char *)ch->ns->prefix, phys__mj_name(ch));
        if ((st = phys__mj_note(c, ch, key, "vendor element <%s> skipped", key))) return st;
        xmlUnlinkNode(ch);
        xmlFreeNode(ch);
      } else if ((st = strip_vendor_attrs(c, ch)) || (st = strip_vendor(c, ch))) {
        return st;
      }
    }
    ch = next;
  }
  return PHYS_OK;
}

phys_status phys__mj_expand_includes(mj_ctx *c, xmlDoc *doc, xmlNode *root) {
  char real[PATH_MAX];
  c->ninc = 0;
  if (c->from_file && realpath(c->file, real)) c->inc_stack[c->ninc++] = real;
  phys_status st = expand(c, doc, root, c->file, 0);
  c->ninc = 0;
  if (!st) st = strip_vendor_attrs(c, root);
  return st ? st : strip_vendor(c, root);
}
