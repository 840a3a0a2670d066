/* xml_doc.h - reading model files and parsing them with libxml2, shared by the MJCF and URDF
 * loaders: the whole file into memory, then a document parsed with no network access and no
 * entity substitution, keeping the first error libxml2 reports (the later ones are
 * consequences) with its line. */
#ifndef PHYSD_XML_DOC_H
#define PHYSD_XML_DOC_H

#include <stdarg.h>
#include <stddef.h>
#include <libxml/parser.h>

/* Read the whole file at `path` into a phys__xmalloc'd buffer (*buf, *len; free with
 * phys__xfree). Returns 0 or an errno-style code (ENOMEM when out of memory); *in_read, when not
 * NULL, is set to 1 when the failure came from reading an opened file, else 0. */
int phys__xml_read_file(const char *path, char **buf, size_t *len, int *in_read);

/* Why phys__xml_doc_parse failed: no memory (for the parser, or libxml2 reported
 * XML_ERR_NO_MEMORY anywhere in the parse: nomem = 1, the document is NULL), or the first
 * libxml2 error (have = 0 and
 * line = 0 when libxml2 reported none). */
typedef struct xml_doc_error {
  int nomem;
  int have;
  int line;
  char msg[300];
} xml_doc_error;

/* Parse `len` (at most INT_MAX) bytes of XML named `name` (for libxml2's base URL). Returns the
 * document, or NULL with *e filled; a document libxml2 reported an error for is freed and NULL
 * is returned. The document may lack a root element. */
xmlDocPtr phys__xml_doc_parse(const char *buf, size_t len, const char *name, xml_doc_error *e);

/* A loader message "FILE:LINE: <ELEM>: REASON" into dst (cap bytes), REASON formatted from fmt
 * (at most 399 bytes of it). */
void phys__xml_doc_vmessage(char *dst, size_t cap, const char *file, long line, const char *elem,
                      const char *fmt, va_list ap);
void phys__xml_doc_message(char *dst, size_t cap, const char *file, long line, const char *elem,
                     const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/* The message for a parse failure: "FILE:LINE: <xml>: malformed XML: REASON". */
void phys__xml_doc_error_message(char *dst, size_t cap, const char *file, const xml_doc_error *e);

#endif
