/* xml_doc.c - reading model files and parsing them with libxml2 (see xml_doc.h). */
#include "io/xml_doc.h"
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "core/alloc.h"

int phys__xml_read_file(const char *path, char **buf, size_t *len, int *in_read) {
  if (in_read) *in_read = 0;
  *buf = NULL;
  *len = 0;
  FILE *f = fopen(path, "rb");
  if (!f) return errno ? errno : EIO;
  char *b = NULL;
  size_t n = 0, cap = 0;
  int e = 0;
  for (;;) {
    if (n == cap) {
      size_t ncap = cap ? 2 * cap : 65536;
      char *nb = phys__xrealloc(b, ncap);
      if (!nb) {
        e = ENOMEM;
        break;
      }
      b = nb;
      cap = ncap;
    }
    size_t got = fread(b + n, 1, cap - n, f);
    n += got;
    if (got == 0) {
      if (ferror(f)) {
        e = errno ? errno : EIO;
        if (in_read) *in_read = 1;
      }
      break;
    }
  }
  fclose(f);
  if (e) {
    phys__xfree(b);
    return e;
  }
  *buf = b;
  *len = n;
  return 0;
}

/* libxml2 structured-error callback; userData is the parser context. */
static void first_error_cb(void *user, xmlErrorPtr err) {
  xmlParserCtxtPtr pc = user;
  xml_doc_error *f = pc ? pc->_private : NULL;
  if (!f || f->have || !err || err->level < XML_ERR_ERROR) return;
  f->have = 1;
  f->line = err->line;
  if (err->code == XML_ERR_NO_MEMORY) f->nomem = 1;
  snprintf(f->msg, sizeof f->msg, "%s", err->message ? err->message : "error");
  size_t n = strlen(f->msg);
  while (n && (f->msg[n - 1] == '\n' || f->msg[n - 1] == ' ')) f->msg[--n] = '\0';
}

/* libxml2 generic-error callback that drops the text (the failure is read from the last
 * error instead). */
static void quiet_cb(void *ctx, const char *msg, ...) {
  (void)ctx;
  (void)msg;
}

xmlDocPtr phys__xml_doc_parse(const char *buf, size_t len, const char *name, xml_doc_error *e) {
  memset(e, 0, sizeof *e);
  /* libxml2 reports some failures (a parser context or a buffer it cannot allocate) through
   * its generic handler, which prints to stderr, not through the parser's: silenced for this
   * parse (the handler is per thread) and read back from the thread's last error */
  xmlGenericErrorFunc old_fn = xmlGenericError;
  void *old_ctx = xmlGenericErrorContext;
  xmlSetGenericErrorFunc(NULL, quiet_cb);
  xmlResetLastError();
  xmlParserCtxtPtr pc = xmlNewParserCtxt();
  if (!pc) {
    xmlSetGenericErrorFunc(old_ctx, old_fn);
    e->nomem = 1;
    return NULL;
  }
  pc->_private = e;
  pc->sax->serror = first_error_cb;
  xmlDocPtr doc = xmlCtxtReadMemory(pc, buf, (int)len, name, NULL,
                                    XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING |
                                    XML_PARSE_BIG_LINES);
  const xmlError *last = xmlGetLastError();
  if (last && last->code == XML_ERR_NO_MEMORY) e->nomem = 1;
  xmlSetGenericErrorFunc(old_ctx, old_fn);
  xmlFreeParserCtxt(pc);
  if (doc && (e->have || e->nomem)) {
    xmlFreeDoc(doc);
    doc = NULL;
  }
  return doc;
}

void phys__xml_doc_vmessage(char *dst, size_t cap, const char *file, long line, const char *elem,
                      const char *fmt, va_list ap) {
  char reason[400];
  vsnprintf(reason, sizeof reason, fmt, ap);
  snprintf(dst, cap, "%s:%ld: <%s>: %s", file, line, elem, reason);
}

void phys__xml_doc_message(char *dst, size_t cap, const char *file, long line, const char *elem,
                     const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  phys__xml_doc_vmessage(dst, cap, file, line, elem, fmt, ap);
  va_end(ap);
}

void phys__xml_doc_error_message(char *dst, size_t cap, const char *file, const xml_doc_error *e) {
  phys__xml_doc_message(dst, cap, file, e->line, "xml", "malformed XML: %s",
                  e->have ? e->msg : "cannot parse");
}
