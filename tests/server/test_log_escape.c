/* test_log_escape.c - client text never forges a log line or puts raw control bytes in a
 * reply: text_escape itself (linked from server/textesc.c), then the real daemon fed a hostile
 * Hello.client_name and LoadWorld.name. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../server/textesc.h"
#include "cunit_main.h"
#include "wire_client.h"

/* ---- text_escape ---------------------------------------------------------------------- */

static void test_escape_quote_backslash(void) {
  char out[64];
  CU_ASSERT_STRING_EQUAL(text_escape(out, sizeof out, "a\"b\\c"), "a\\\"b\\\\c");
  CU_ASSERT_STRING_EQUAL(text_escape_ex(out, sizeof out, "a\"b\\c", TEXT_ESC_KEEP_QUOTES),
                         "a\"b\\\\c");
  CU_ASSERT_STRING_EQUAL(text_escape(out, sizeof out, NULL), "");
  CU_ASSERT_STRING_EQUAL(text_escape(out, sizeof out, "plain name_1"), "plain name_1");
}

static void test_escape_controls(void) {
  char out[128];
  CU_ASSERT_STRING_EQUAL(text_escape(out, sizeof out, "x\ny\tz\r"), "x\\ny\\tz\\r");
  CU_ASSERT_STRING_EQUAL(text_escape(out, sizeof out, "\x01\x1f\x7f"), "\\x01\\x1f\\x7f");
  /* the forged line stays on one line, its quotes escaped */
  text_escape(out, sizeof out, "a\" \nts=1 level=error msg=\"FORGED LINE\"");
  CU_ASSERT_STRING_EQUAL(out, "a\\\" \\nts=1 level=error msg=\\\"FORGED LINE\\\"");
  CU_ASSERT(strchr(out, '\n') == NULL);
}

/* a NUL ends a C string; the bytes a protobuf string holds after it never reach the escaper,
 * and a NUL inside the limit is shown only as the end */
static void test_escape_nul(void) {
  char out[32];
  const char with_nul[] = "ab\0cd";
  CU_ASSERT_STRING_EQUAL(text_escape(out, sizeof out, with_nul), "ab");
  CU_ASSERT_STRING_EQUAL(text_escape(out, sizeof out, ""), "");
}

static void test_escape_invalid_utf8(void) {
  char out[64];
  CU_ASSERT_STRING_EQUAL(text_escape(out, sizeof out, "a\xff" "b"), "a\\xffb");
  CU_ASSERT_STRING_EQUAL(text_escape(out, sizeof out, "\xc3"), "\\xc3");        /* truncated */
  CU_ASSERT_STRING_EQUAL(text_escape(out, sizeof out, "\xc0\xaf"), "\\xc0\\xaf"); /* overlong */
  CU_ASSERT_STRING_EQUAL(text_escape(out, sizeof out, "\xed\xa0\x80"),
                         "\\xed\\xa0\\x80"); /* surrogate */
  CU_ASSERT_STRING_EQUAL(text_escape(out, sizeof out, "\xf4\x90\x80\x80"),
                         "\\xf4\\x90\\x80\\x80"); /* above U+10FFFF */
  CU_ASSERT(!text_utf8_valid("a\xff"));
  CU_ASSERT(!text_utf8_valid("\xe2\x82"));
  CU_ASSERT(text_utf8_valid("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"));
  CU_ASSERT(text_utf8_valid(NULL));
}

static void test_escape_utf8_kept(void) {
  char out[64];
  const char *s = "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"; /* café € 😀 */
  CU_ASSERT_STRING_EQUAL(text_escape(out, sizeof out, s), s);
}

static void test_escape_long(void) {
  char big[5000];
  memset(big, 'a', sizeof big - 1);
  big[sizeof big - 1] = 0;
  char out[32];
  text_escape(out, sizeof out, big);
  CU_ASSERT_EQUAL(strlen(out), sizeof out - 1);
  CU_ASSERT(strcmp(out + strlen(out) - 3, "...") == 0);
  /* escapes and multi-byte characters are never split by the cut */
  for (int i = 0; i < 24; i++) {
    char in[64], o[16];
    memset(in, '\n', sizeof in - 1);
    in[sizeof in - 1] = 0;
    memcpy(in + (i % 5), "\xe2\x82\xac", 3);
    text_escape(o, sizeof o, in);
    size_t n = strlen(o);
    if (n < 3 || n >= sizeof o) {
      CU_FAIL("escaped text shorter than its marker or longer than its buffer");
      continue;
    }
    CU_ASSERT(strcmp(o + n - 3, "...") == 0);
    o[n - 3] = 0;
    CU_ASSERT(text_utf8_valid(o));
    CU_ASSERT(n - 3 == 0 || o[n - 4] != '\\');
  }
  /* exactly fitting input gets no marker */
  char fit[8];
  CU_ASSERT_STRING_EQUAL(text_escape(fit, sizeof fit, "1234567"), "1234567");
  CU_ASSERT_STRING_EQUAL(text_escape(fit, sizeof fit, "12345678"), "1234...");
}

/* ---- the daemon ----------------------------------------------------------------------- */

/* lines of the log holding `needle` */
static int log_count(const wc_daemon *d, const char *needle) {
  FILE *f = fopen(d->log, "r");
  if (!f) return -1;
  char line[4096];
  int n = 0;
  while (fgets(line, sizeof line, f))
    if (strstr(line, needle)) n++;
  fclose(f);
  return n;
}

static int has_raw_control(const char *s) {
  for (; *s; s++)
    if ((unsigned char)*s < 0x20 || *s == 0x7f) return 1;
  return 0;
}

#define FORGED "evil\" \nts=2025-01-01T00:00:00.000Z level=error msg=\"FORGED LINE\""

static void test_hostile_client_name(void) {
  wc_daemon d;
  CU_ASSERT_FATAL(wc_daemon_start(&d, NULL) == 0);
  wc_conn c;
  CU_ASSERT_FATAL(wc_connect_unix(&c, d.sock, 1) == 0);
  Physd__V1__Hello h = PHYSD__V1__HELLO__INIT;
  h.major = 1;
  h.client_name = (char *)FORGED;
  Physd__V1__Envelope env;
  WC_ENV(env, HELLO, hello, &h);
  Physd__V1__Envelope *w = wc_call(&c, &env, 5000);
  CU_ASSERT(w && w->msg_case == PHYSD__V1__ENVELOPE__MSG_WELCOME);
  wc_free(w);

  /* exactly one line names the client, with the text escaped; no forged line exists */
  CU_ASSERT_EQUAL(log_count(&d, "client connected"), 1);
  CU_ASSERT_EQUAL(log_count(&d, "FORGED LINE"), 1);
  CU_ASSERT(wc_daemon_log_has(&d, "client=\"evil\\\" \\nts=2025-01-01T00:00:00.000Z "
                                  "level=error msg=\\\"FORGED LINE\\\"\" minor=0"));
  CU_ASSERT_EQUAL(log_count(&d, "level=error"), 1); /* the escaped text only */
  CU_ASSERT_EQUAL(log_count(&d, "ts=2025-01-01"), 1);

  /* an error reply naming the client's world name carries no raw control bytes */
  Physd__V1__LoadWorld l = PHYSD__V1__LOAD_WORLD__INIT;
  l.source_case = PHYSD__V1__LOAD_WORLD__SOURCE_DATA;
  l.data.data = (uint8_t *)"<mujoco><worldbody><bogus";
  l.data.len = strlen((const char *)l.data.data);
  l.name = (char *)"bad\nname\t\x01";
  WC_ENV(env, LOAD_WORLD, load_world, &l);
  Physd__V1__Envelope *r = wc_call(&c, &env, 10000);
  CU_ASSERT_EQUAL(wc_error_code(r), PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT);
  if (wc_error_code(r) >= 0) {
    CU_ASSERT(!has_raw_control(r->error->message));
    CU_ASSERT(strstr(r->error->message, "bad\\nname\\t\\x01") != NULL);
  }
  wc_free(r);
  CU_ASSERT_EQUAL(log_count(&d, "load refused"), 1);

  /* LoadWorld.name that is not UTF-8: refused before anything is read, the world is kept */
  r = wc_req_state(&c);
  CU_ASSERT_FATAL(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_STATE);
  size_t bodies = r->state->n_bodies;
  wc_free(r);
  l.data.data = (uint8_t *)"<mujoco><worldbody><body><freejoint/><geom type=\"sphere\" "
                           "size=\"0.1\"/></body><body><freejoint/><geom type=\"sphere\" "
                           "size=\"0.1\"/></body></worldbody></mujoco>";
  l.data.len = strlen((const char *)l.data.data);
  l.name = (char *)"bad\xff";
  WC_ENV(env, LOAD_WORLD, load_world, &l);
  r = wc_call(&c, &env, 10000);
  CU_ASSERT_EQUAL(wc_error_code(r), PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT);
  if (wc_error_code(r) >= 0) CU_ASSERT(strstr(r->error->message, "UTF-8") != NULL);
  wc_free(r);
  r = wc_req_state(&c);
  CU_ASSERT(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_STATE &&
            r->state->n_bodies == bodies);
  wc_free(r);
  /* the same document under a valid name loads */
  l.name = (char *)"two balls";
  WC_ENV(env, LOAD_WORLD, load_world, &l);
  r = wc_call(&c, &env, 10000);
  CU_ASSERT(r && r->msg_case == PHYSD__V1__ENVELOPE__MSG_WORLD_LOADED);
  wc_free(r);
  wc_close(&c);

  /* Hello.client_name that is not UTF-8: INVALID_ARGUMENT, no session, the connection closed */
  CU_ASSERT_FATAL(wc_connect_unix(&c, d.sock, 1) == 0);
  h.client_name = (char *)"x\xc3(";
  WC_ENV(env, HELLO, hello, &h);
  r = wc_call(&c, &env, 5000);
  CU_ASSERT_EQUAL(wc_error_code(r), PHYSD__V1__ERROR_CODE__INVALID_ARGUMENT);
  if (wc_error_code(r) >= 0) CU_ASSERT(strstr(r->error->message, "UTF-8") != NULL);
  wc_free(r);
  CU_ASSERT(wc_wait_closed(&c, 5000));
  wc_close(&c);
  CU_ASSERT_EQUAL(log_count(&d, "client connected"), 1);

  CU_ASSERT_EQUAL(wc_daemon_stop(&d), 0);
}

int register_tests(void) {
  CU_pSuite s = CU_add_suite("server_log_escape", NULL, NULL);
  if (!s) return -1;
  if (!CU_add_test(s, "escape_quote_backslash", test_escape_quote_backslash) ||
      !CU_add_test(s, "escape_controls", test_escape_controls) ||
      !CU_add_test(s, "escape_nul", test_escape_nul) ||
      !CU_add_test(s, "escape_invalid_utf8", test_escape_invalid_utf8) ||
      !CU_add_test(s, "escape_utf8_kept", test_escape_utf8_kept) ||
      !CU_add_test(s, "escape_long", test_escape_long) ||
      !CU_add_test(s, "hostile_client_name", test_hostile_client_name))
    return -1;
  return 0;
}
