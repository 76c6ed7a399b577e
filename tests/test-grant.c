/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Grants: the token format and its parser, every binding, replay (also two
 * concurrent consumers), expiry at the exact millisecond boundaries with an
 * injected clock, the issue matrix, batches, and command.start.v1 end to
 * end on the unconfined backend (a Gated command refused without a grant,
 * run with one, refused on replay).  The filesystem classes' identity
 * binding runs on the mock-ok test double (it compiles and spawns
 * unconfined, and records the grant rules of the spec it was given).
 *
 * These are the cases of one module, grants (sbx-grant.c,
 * sbx-grant-binding.c, sbx-executor-grants.c): one GTest binary per
 * concept, so it is over a thousand lines.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/fs.h>
#include <glib/gstdio.h>

#include "sbx-executor-private.h"
#include "sbx-grant-private.h"
#include "executor-test-util.h"
#include "executor-test-util.h"

#define TRUE_ARGV ((const char *const[]) { "true", NULL })

typedef struct
{
  EtuTree         tree;
  SbxRegistry    *registry;
  SbxExecutorSet *set;
  SbxExecutor    *executor;
  gint64          now_ms;      /* the injected clock; 0: wall clock */
} Fixture;

static gint64
fixture_clock (gpointer data)
{
  Fixture *fx = data;

  return fx->now_ms;
}

static void
close_set (Fixture *fx)
{
  g_autoptr(GError) error = NULL;

  g_clear_object (&fx->executor);
  if (fx->set != NULL)
    {
      g_assert_true (sbx_executor_set_close (fx->set, NULL, &error));
      g_assert_no_error (error);
      g_clear_object (&fx->set);
    }
}

static SbxExecutor *
make_executor_ttl (Fixture    *fx,
                   SbxProfile *profile,
                   GTimeSpan   ttl)
{
  g_autoptr(SbxExecutorSetOptions) options = etu_options (fx->tree.scratch, 4, fx->registry);
  g_autoptr(GError) error = NULL;

  close_set (fx);
  if (ttl > 0)
    sbx_executor_set_options_set_grant_ttl (options, ttl);
  fx->set = sbx_executor_set_new (profile, options, &error);
  g_assert_no_error (error);
  fx->executor = sbx_executor_set_for_key (fx->set, "test", &error);
  g_assert_no_error (error);
  if (fx->now_ms != 0)
    sbx_executor_set_grant_clock (fx->executor, fixture_clock, fx);
  return fx->executor;
}

static SbxExecutor *
make_executor (Fixture    *fx,
               SbxProfile *profile)
{
  return make_executor_ttl (fx, profile, 0);
}

static void
fixture_setup (Fixture       *fx,
               gconstpointer  data)
{
  g_autoptr(SbxProfile) profile = NULL;

  etu_tree_init (&fx->tree);
  fx->registry = etu_registry ("unconfined", "ok", NULL);
  profile = etu_profile_unconfined (fx->tree.ws, SBX_ACCESS_GATED);
  make_executor (fx, profile);
}

static void
fixture_teardown (Fixture       *fx,
                  gconstpointer  data)
{
  close_set (fx);
  g_clear_object (&fx->registry);
  etu_tree_clear (&fx->tree);
  g_assert_cmpuint (etu_count_children (), ==, 0);
}

static char *
issue (Fixture    *fx,
       const char *execution_id,
       const char *command,
       GError    **error)
{
  /* run_with() runs the shell command line, so the grant binds its vector. */
  g_autofree char *bound = sbx_grant_command_for_argv (SBX_SH_ARGV (command));

  return sbx_executor_issue_grant (fx->executor, execution_id, bound, fx->tree.ws,
                                   SBX_GRANT_CLASS_COMMAND_START, NULL, NULL, error);
}

static SbxRunResult *
run_with (Fixture    *fx,
          const char *execution_id,
          const char *command,
          const char *token,
          GError    **error)
{
  const char *grants[] = { token, NULL };

  return etu_run_with_grants (fx->executor, fx->tree.ws, SBX_SH_ARGV (command), execution_id, token != NULL ? grants : NULL, NULL, NULL, error);
}

/* ------------------------------------------------------------------------- */
/* Tokens                                                                     */
/* ------------------------------------------------------------------------- */

static void
fill_payload (SbxGrantPayload *p)
{
  p->execution_id = g_strdup ("exec:1 with ünïcode");
  p->command = g_strdup ("echo \"hi\"\n\tdone");
  p->cwd = g_strdup ("/tmp");
  p->profile_fingerprint = g_strdup ("profile-v1:abc");
  p->route_fingerprint = g_strdup (SBX_GRANT_ROUTE_DIRECT);
  p->guarantee_bits = 0xff;
  p->grant_class = g_strdup (SBX_GRANT_CLASS_FILESYSTEM_PATH_READ);
  p->target = g_strdup ("/tmp/x");
  p->binding = g_new0 (SbxGrantBinding, 1);
  p->binding->canonical_path = g_strdup ("/tmp/x");
  p->binding->existing_path = g_strdup ("/tmp");
  p->binding->identity = g_strdup ("1:2:40000");
  p->expiry_ms = 1700000000123;
  for (guint i = 0; i < SBX_GRANT_NONCE_SIZE; i++)
    p->nonce[i] = (guint8) (i * 17);
}

static void
test_token_roundtrip (void)
{
  guint8 key[SBX_GRANT_KEY_SIZE] = { 1, 2, 3 };
  g_auto(SbxGrantPayload) p = { 0 };
  g_auto(SbxGrantPayload) q = { 0 };
  g_autoptr(GError) error = NULL;
  g_autofree char *token = NULL;
  g_autofree char *a = NULL;
  g_autofree char *b = NULL;

  fill_payload (&p);
  token = sbx_grant_token_mint (key, &p);
  g_assert_true (g_str_has_prefix (token, "sbx1."));
  g_assert_true (sbx_grant_token_open (key, token, &q, &error));
  g_assert_no_error (error);
  a = sbx_grant_payload_serialize (&p);
  b = sbx_grant_payload_serialize (&q);
  g_assert_cmpstr (a, ==, b);
  g_assert_true (sbx_grant_binding_equal (p.binding, q.binding));
  g_assert_cmpmem (p.nonce, sizeof p.nonce, q.nonce, sizeof q.nonce);
}

/* Garbage, truncated, re-encoded and bit-flipped tokens: MALFORMED or
 * BAD_MAC, never accepted. */
static void
test_token_refused (void)
{
  guint8 key[SBX_GRANT_KEY_SIZE] = { 9 };
  guint8 other_key[SBX_GRANT_KEY_SIZE] = { 10 };
  g_auto(SbxGrantPayload) p = { 0 };
  g_autofree char *token = NULL;
  char **parts;
  static const char *const garbage[] = {
    "", ".", "..", "...", "sbx1", "sbx1.", "sbx1..", "sbx1.a.b", "lrsx1.e30.AAAA",
    "SBX1.e30.AAAA", " sbx1.e30.AAAA", "sbx1.e30.AAAA.", "sbx1.e30", "sbx1.e30=.AAAA",
    "sbx1.e3 0.AAAA", "sbx1.*.AAAA",
  };
  struct { const char *name; char *token; int code; } rows[16];
  guint n = 0;

  fill_payload (&p);
  token = sbx_grant_token_mint (key, &p);
  parts = g_strsplit (token, ".", -1);
  g_assert_cmpuint (g_strv_length (parts), ==, 3);

  for (guint i = 0; i < G_N_ELEMENTS (garbage); i++)
    {
      g_auto(SbxGrantPayload) out = { 0 };
      g_autoptr(GError) error = NULL;

      g_assert_false (sbx_grant_token_open (key, garbage[i], &out, &error));
      g_assert_error (error, SBX_GRANT_ERROR, SBX_GRANT_ERROR_MALFORMED);
    }

  rows[n].name = "truncated by one";
  rows[n].token = g_strndup (token, strlen (token) - 1);
  rows[n++].code = SBX_GRANT_ERROR_MALFORMED;
  rows[n].name = "MAC truncated to 31 bytes";
  rows[n].token = g_strndup (token, strlen (token) - 2);
  rows[n++].code = SBX_GRANT_ERROR_MALFORMED;
  rows[n].name = "padding added";
  rows[n].token = g_strconcat (token, "=", NULL);
  rows[n++].code = SBX_GRANT_ERROR_MALFORMED;
  rows[n].name = "standard alphabet";
  rows[n].token = g_strdelimit (g_strdup (token), "-", '+');
  rows[n++].code = strchr (token, '-') != NULL ? SBX_GRANT_ERROR_MALFORMED : -1;
  rows[n].name = "another executor's key";
  rows[n].token = sbx_grant_token_mint (other_key, &p);
  rows[n++].code = SBX_GRANT_ERROR_BAD_MAC;
  rows[n].name = "payload of another token";
  {
    g_auto(SbxGrantPayload) p2 = { 0 };
    g_autofree char *t2 = NULL;
    g_auto(GStrv) parts2 = NULL;

    fill_payload (&p2);
    p2.expiry_ms++;
    t2 = sbx_grant_token_mint (key, &p2);
    parts2 = g_strsplit (t2, ".", -1);
    rows[n].token = g_strjoin (".", parts[0], parts2[1], parts[2], NULL);
  }
  rows[n++].code = SBX_GRANT_ERROR_BAD_MAC;
  rows[n].name = "prefix lrsx1";
  rows[n].token = g_strjoin (".", "lrsx1", parts[1], parts[2], NULL);
  rows[n++].code = SBX_GRANT_ERROR_MALFORMED;

  for (guint r = 0; r < n; r++)
    {
      g_auto(SbxGrantPayload) out = { 0 };
      g_autoptr(GError) error = NULL;

      if (rows[r].code < 0)
        {
          g_free (rows[r].token);
          continue;   /* this token has no '-' to re-encode */
        }
      g_test_message ("row: %s", rows[r].name);
      g_assert_false (sbx_grant_token_open (key, rows[r].token, &out, &error));
      g_assert_error (error, SBX_GRANT_ERROR, rows[r].code);
      g_free (rows[r].token);
    }

  /* Every single-bit flip of every character. */
  for (gsize i = 0; token[i] != '\0'; i++)
    for (int bit = 0; bit < 8; bit++)
      {
        g_autofree char *flipped = g_strdup (token);
        g_auto(SbxGrantPayload) out = { 0 };
        g_autoptr(GError) error = NULL;

        flipped[i] ^= (char) (1 << bit);
        if (flipped[i] == '\0')
          continue;
        g_assert_false (sbx_grant_token_open (key, flipped, &out, &error));
        g_assert_true (g_error_matches (error, SBX_GRANT_ERROR, SBX_GRANT_ERROR_MALFORMED)
                       || g_error_matches (error, SBX_GRANT_ERROR, SBX_GRANT_ERROR_BAD_MAC));
      }
  g_strfreev (parts);
}

/* A validly MAC'ed payload that is not in canonical form is still refused. */
static void
test_token_noncanonical_payload (void)
{
  static const char *const payloads[] = {
    "{}",
    "[]",
    "{\"ExecutionID\":\"a\"}",
    /* white space */
    "{ \"ExecutionID\":\"e\",\"Command\":\"c\",\"WorkingDirectory\":\"/\",\"ProfileFingerprint\":\"p\","
    "\"RouteFingerprint\":\"direct:v1\",\"GuaranteeBits\":0,\"Class\":\"command.start.v1\",\"Target\":\"c\","
    "\"PathBinding\":null,\"ExpiryUnixMilli\":1,\"Nonce\":[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0]}",
    /* a nonce byte out of range */
    "{\"ExecutionID\":\"e\",\"Command\":\"c\",\"WorkingDirectory\":\"/\",\"ProfileFingerprint\":\"p\","
    "\"RouteFingerprint\":\"direct:v1\",\"GuaranteeBits\":0,\"Class\":\"command.start.v1\",\"Target\":\"c\","
    "\"PathBinding\":null,\"ExpiryUnixMilli\":1,\"Nonce\":[256,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0]}",
    /* members reordered */
    "{\"Command\":\"c\",\"ExecutionID\":\"e\",\"WorkingDirectory\":\"/\",\"ProfileFingerprint\":\"p\","
    "\"RouteFingerprint\":\"direct:v1\",\"GuaranteeBits\":0,\"Class\":\"command.start.v1\",\"Target\":\"c\","
    "\"PathBinding\":null,\"ExpiryUnixMilli\":1,\"Nonce\":[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0]}",
    /* an embedded NUL in a string */
    "{\"ExecutionID\":\"e\\u0000x\",\"Command\":\"c\",\"WorkingDirectory\":\"/\",\"ProfileFingerprint\":\"p\","
    "\"RouteFingerprint\":\"direct:v1\",\"GuaranteeBits\":0,\"Class\":\"command.start.v1\",\"Target\":\"c\","
    "\"PathBinding\":null,\"ExpiryUnixMilli\":1,\"Nonce\":[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0]}",
  };
  const char *good =
    "{\"ExecutionID\":\"e\",\"Command\":\"c\",\"WorkingDirectory\":\"/\",\"ProfileFingerprint\":\"p\","
    "\"RouteFingerprint\":\"direct:v1\",\"GuaranteeBits\":0,\"Class\":\"command.start.v1\",\"Target\":\"c\","
    "\"PathBinding\":null,\"ExpiryUnixMilli\":1,\"Nonce\":[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0]}";
  g_auto(SbxGrantPayload) ok = { 0 };
  g_autoptr(GError) error = NULL;

  /* Positive control: the canonical spelling parses. */
  g_assert_true (sbx_grant_payload_parse (good, strlen (good), &ok, &error));
  g_assert_no_error (error);
  for (guint i = 0; i < G_N_ELEMENTS (payloads); i++)
    {
      g_auto(SbxGrantPayload) out = { 0 };
      g_autoptr(GError) e = NULL;

      g_assert_false (sbx_grant_payload_parse (payloads[i], strlen (payloads[i]), &out, &e));
      g_assert_error (e, SBX_GRANT_ERROR, SBX_GRANT_ERROR_MALFORMED);
    }
}

static void
test_text_and_argv (void)
{
  static const char *const argv1[] = { "sh", "-c", "echo hi", NULL };
  static const char *const argv2[] = { "sh", "-c", "echo", "hi", NULL };
  static const char *const argv3[] = { "a'b", "", "x=1", NULL };
  static const char *const empty[] = { NULL };
  g_autofree char *c1 = sbx_grant_command_for_argv (argv1);
  g_autofree char *c2 = sbx_grant_command_for_argv (argv2);
  g_autofree char *c3 = sbx_grant_command_for_argv (argv3);

  g_assert_cmpstr (c1, ==, "sh -c 'echo hi'");
  g_assert_cmpstr (c2, ==, "sh -c echo hi");
  g_assert_cmpstr (c3, ==, "'a'\\''b' '' x=1");
  g_assert_null (sbx_grant_command_for_argv (empty));

  g_assert_true (sbx_grant_text_valid ("a"));
  g_assert_true (sbx_grant_text_valid ("exec:with:colons"));
  g_assert_false (sbx_grant_text_valid (""));
  g_assert_false (sbx_grant_text_valid (" a"));
  g_assert_false (sbx_grant_text_valid ("a\n"));
  g_assert_false (sbx_grant_text_valid ("a\xc2\xa0"));     /* U+00A0 is white space */
  g_assert_false (sbx_grant_text_valid ("\xff"));
}

/* ------------------------------------------------------------------------- */
/* command.start.v1 end to end                                                */
/* ------------------------------------------------------------------------- */

static void
test_command_start (Fixture       *fx,
                    gconstpointer  data)
{
  g_autofree char *marker = g_build_filename (fx->tree.ws, "marker", NULL);
  g_autofree char *command = g_strdup_printf ("echo ran >> '%s'", marker);
  g_autofree char *token = NULL;
  g_autofree char *contents = NULL;
  g_autoptr(SbxRunResult) result = NULL;
  g_autoptr(GError) error = NULL;
  const char *const *spent;

  /* Gated without a grant: refused, nothing ran. */
  result = sbx_executor_run (fx->executor, fx->tree.ws, SBX_SH_ARGV (command), NULL, NULL, &error);
  g_assert_null (result);
  g_assert_error (error, SBX_GRANT_ERROR, SBX_GRANT_ERROR_REQUIRED);
  g_clear_error (&error);
  result = run_with (fx, "exec-1", command, NULL, &error);
  g_assert_error (error, SBX_GRANT_ERROR, SBX_GRANT_ERROR_REQUIRED);
  g_clear_error (&error);
  g_assert_false (g_file_test (marker, G_FILE_TEST_EXISTS));

  /* With the grant: runs once. */
  token = issue (fx, "exec-1", command, &error);
  g_assert_no_error (error);
  g_assert_nonnull (token);
  result = run_with (fx, "exec-1", command, token, &error);
  g_assert_no_error (error);
  g_assert_cmpint (sbx_run_result_get_exit_status (result), ==, 0);
  spent = sbx_run_result_get_grants_spent (result);
  g_assert_cmpuint (g_strv_length ((char **) spent), ==, 1);
  g_assert_true (g_str_has_prefix (spent[0], "command.start.v1 "));
  g_assert_nonnull (strstr (spent[0], "authorized this start"));
  g_assert_null (strstr (spent[0], token));
  g_clear_pointer (&result, sbx_run_result_unref);

  /* Replay: refused, nothing ran again. */
  result = run_with (fx, "exec-1", command, token, &error);
  g_assert_null (result);
  g_assert_error (error, SBX_GRANT_ERROR, SBX_GRANT_ERROR_REPLAY);
  g_assert_true (g_file_get_contents (marker, &contents, NULL, NULL));
  g_assert_cmpstr (contents, ==, "ran\n");
}

static void
test_command_start_async_and_argv (Fixture       *fx,
                                   gconstpointer  data)
{
  g_autofree char *marker = g_build_filename (fx->tree.ws, "argv-marker", NULL);
  const char *argv[] = { "/bin/sh", "-c", "echo \"$1\" >> \"$2\"", "sh", "it's me", marker, NULL };
  g_autofree char *command = sbx_grant_command_for_argv (argv);
  g_autofree char *token = NULL;
  g_autofree char *contents = NULL;
  g_autoptr(GAsyncResult) async_result = NULL;
  g_autoptr(SbxRunResult) result = NULL;
  g_autoptr(GError) error = NULL;
  const char *grants[2] = { NULL, NULL };
  const char *other_argv[] = { "/bin/sh", "-c", "echo \"$1\" >> \"$2\"", "sh", "it's you", marker, NULL };

  token = sbx_executor_issue_grant (fx->executor, "exec:with:colons", command, fx->tree.ws,
                                    SBX_GRANT_CLASS_COMMAND_START, NULL, NULL, &error);
  g_assert_no_error (error);
  grants[0] = token;

  /* The grant binds the exact vector. */
  result = etu_run_with_grants (fx->executor, fx->tree.ws, other_argv, "exec:with:colons", grants, NULL, NULL, &error);
  g_assert_error (error, SBX_GRANT_ERROR, SBX_GRANT_ERROR_WRONG_COMMAND);
  g_clear_error (&error);

  etu_run_with_grants_async (fx->executor, fx->tree.ws, argv, "exec:with:colons", grants, NULL, NULL, etu_store_result, &async_result);
  result = sbx_executor_run_finish (fx->executor, etu_wait_async (&async_result),
                                    &error);
  g_assert_no_error (error);
  g_assert_cmpint (sbx_run_result_get_exit_status (result), ==, 0);
  g_clear_pointer (&result, sbx_run_result_unref);
  g_clear_object (&async_result);
  g_assert_true (g_file_get_contents (marker, &contents, NULL, NULL));
  g_assert_cmpstr (contents, ==, "it's me\n");

  etu_run_with_grants_async (fx->executor, fx->tree.ws, argv, "exec:with:colons", grants, NULL, NULL, etu_store_result, &async_result);
  result = sbx_executor_run_finish (fx->executor, etu_wait_async (&async_result),
                                    &error);
  g_assert_null (result);
  g_assert_error (error, SBX_GRANT_ERROR, SBX_GRANT_ERROR_REPLAY);
  g_clear_error (&error);
  g_clear_object (&async_result);

  /* The shell form's async twin. */
  g_free (token);
  token = issue (fx, "e2", "true", &error);
  g_assert_no_error (error);
  grants[0] = token;
  etu_run_with_grants_async (fx->executor, fx->tree.ws, SBX_SH_ARGV ("true"), "e2", grants, NULL, NULL, etu_store_result, &async_result);
  result = sbx_executor_run_finish (fx->executor, etu_wait_async (&async_result),
                                    &error);
  g_assert_no_error (error);
  g_assert_true (sbx_run_result_get_successful (result));
}

/* The token never reaches the child: not its argv, not its environment, not
 * any /proc cmdline or environ it can read. */
static void
test_token_not_in_child (Fixture       *fx,
                         gconstpointer  data)
{
  const char *command = "cat /proc/self/cmdline /proc/self/environ; "
                        "for f in /proc/[0-9]*/cmdline /proc/[0-9]*/environ; do cat \"$f\"; done "
                        "2>/dev/null; echo END";
  g_autofree char *token = NULL;
  g_auto(GStrv) parts = NULL;
  g_autoptr(SbxRunResult) result = NULL;
  g_autoptr(GError) error = NULL;
  GBytes *output;
  gsize len;
  const char *data_out;

  token = issue (fx, "exec-proc", command, &error);
  g_assert_no_error (error);
  parts = g_strsplit (token, ".", -1);
  result = run_with (fx, "exec-proc", command, token, &error);
  g_assert_no_error (error);
  output = sbx_run_result_get_output (result);
  data_out = g_bytes_get_data (output, &len);
  /* Positive control: the child did read its own cmdline (the command). */
  /* (memmem: cmdline and environ hold NUL bytes) */
  g_assert_nonnull (memmem (data_out, len, "/proc/self/cmdline", strlen ("/proc/self/cmdline")));
  g_assert_nonnull (memmem (data_out, len, "HOME=", 5));
  g_assert_nonnull (memmem (data_out, len, "END", 3));
  g_assert_null (memmem (data_out, len, parts[1], strlen (parts[1])));
  g_assert_null (memmem (data_out, len, parts[2], strlen (parts[2])));
}

/* ------------------------------------------------------------------------- */
/* Bindings                                                                   */
/* ------------------------------------------------------------------------- */

typedef enum
{
  DRIFT_EXECUTION,
  DRIFT_COMMAND,
  DRIFT_CWD,
  DRIFT_PROFILE,
  DRIFT_ROUTE,
  DRIFT_GUARANTEES,
  DRIFT_TARGET,
  DRIFT_CLASS,
  DRIFT_BINDING,
  DRIFT_NONE,
} Drift;

/* A token minted for one value is refused for another, with the right code.
 * Drifts the run itself cannot express (profile, route, guarantees) are
 * minted with the executor's own key (white box), so only that one field
 * differs. */
static void
test_bindings (Fixture       *fx,
               gconstpointer  data)
{
  static const struct { const char *name; Drift drift; int code; } rows[] = {
    { "execution ID", DRIFT_EXECUTION, SBX_GRANT_ERROR_WRONG_EXECUTION },
    { "command", DRIFT_COMMAND, SBX_GRANT_ERROR_WRONG_COMMAND },
    { "working directory", DRIFT_CWD, SBX_GRANT_ERROR_WRONG_WORKING_DIRECTORY },
    { "profile fingerprint", DRIFT_PROFILE, SBX_GRANT_ERROR_PROFILE_MISMATCH },
    { "route fingerprint", DRIFT_ROUTE, SBX_GRANT_ERROR_ROUTE_MISMATCH },
    { "guarantee bits", DRIFT_GUARANTEES, SBX_GRANT_ERROR_GUARANTEE_MISMATCH },
    { "command.start target", DRIFT_TARGET, SBX_GRANT_ERROR_WRONG_COMMAND },
    { "unknown class", DRIFT_CLASS, SBX_GRANT_ERROR_UNSUPPORTED },
    { "binding on a command grant", DRIFT_BINDING, SBX_GRANT_ERROR_MALFORMED },
    { "none (positive control)", DRIFT_NONE, -1 },
  };
  g_autofree char *sub = g_build_filename (fx->tree.ws, "sub", NULL);
  g_autofree char *canonical_ws = NULL;
  guint8 key[SBX_GRANT_KEY_SIZE];

  g_assert_cmpint (g_mkdir (sub, 0700), ==, 0);
  canonical_ws = g_canonicalize_filename (fx->tree.ws, NULL);
  g_assert_true (sbx_executor_peek_grant_key (fx->executor, key));

  for (guint r = 0; r < G_N_ELEMENTS (rows); r++)
    {
      g_auto(SbxGrantPayload) p = { 0 };
      g_autofree char *token = NULL;
      g_autoptr(SbxRunResult) result = NULL;
      g_autoptr(GError) error = NULL;
      const char *exec_id = "exec";
      const char *command = "true";
      const char *cwd = fx->tree.ws;
      const char *grants[2] = { NULL, NULL };

      g_test_message ("binding: %s", rows[r].name);
      p.execution_id = g_strdup ("exec");
      p.command = g_strdup ("true");
      p.cwd = g_strdup (canonical_ws);
      p.profile_fingerprint = g_strdup (sbx_profile_get_fingerprint (
                                          sbx_executor_set_get_profile (fx->set)));
      p.route_fingerprint = g_strdup (SBX_GRANT_ROUTE_DIRECT);
      p.guarantee_bits = sbx_executor_get_guarantees (fx->executor);
      p.grant_class = g_strdup (SBX_GRANT_CLASS_COMMAND_START);
      p.target = g_strdup ("true");
      p.expiry_ms = g_get_real_time () / 1000 + 60000;
      switch (rows[r].drift)
        {
        case DRIFT_EXECUTION: exec_id = "exec-other"; break;
        case DRIFT_COMMAND: command = "true "; command = "/bin/true"; break;
        case DRIFT_CWD: cwd = sub; break;
        case DRIFT_PROFILE: g_free (p.profile_fingerprint); p.profile_fingerprint = g_strdup ("x"); break;
        case DRIFT_ROUTE: g_free (p.route_fingerprint); p.route_fingerprint = g_strdup ("route-v1:00"); break;
        case DRIFT_GUARANTEES: p.guarantee_bits ^= SBX_GUARANTEE_READ_BOUNDARY; break;
        case DRIFT_TARGET: g_free (p.target); p.target = g_strdup ("false"); break;
        case DRIFT_CLASS: g_free (p.grant_class); p.grant_class = g_strdup ("command.start.v2"); break;
        case DRIFT_BINDING:
          p.binding = g_new0 (SbxGrantBinding, 1);
          p.binding->canonical_path = g_strdup ("/");
          p.binding->existing_path = g_strdup ("/");
          p.binding->identity = g_strdup ("0:0:0");
          break;
        case DRIFT_NONE:
        default:
          break;
        }
      token = sbx_grant_token_mint (key, &p);
      grants[0] = token;
      result = etu_run_with_grants (fx->executor, cwd, ((const char *const[]) { command, NULL }), exec_id, grants, NULL, NULL, &error);
      if (rows[r].code < 0)
        {
          g_assert_no_error (error);
          g_assert_true (sbx_run_result_get_successful (result));
        }
      else
        {
          g_assert_null (result);
          g_assert_error (error, SBX_GRANT_ERROR, rows[r].code);
          /* The refused token was not consumed: the right run spends it.
           * (Only for drifts in the run's arguments; a drifted payload
           * is refused for every run.) */
          if (rows[r].drift <= DRIFT_CWD)
            {
              g_clear_error (&error);
              result = etu_run_with_grants (fx->executor, fx->tree.ws, TRUE_ARGV, "exec", grants, NULL, NULL, &error);
              g_assert_no_error (error);
              g_assert_true (sbx_run_result_get_successful (result));
            }
        }
    }
  explicit_bzero (key, sizeof key);
}

/* A token from another executor (same set, same profile) fails its MAC. */
static void
test_other_executor (Fixture       *fx,
                     gconstpointer  data)
{
  g_autoptr(SbxExecutor) other = NULL;
  g_autofree char *token = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(SbxRunResult) result = NULL;
  const char *grants[2] = { NULL, NULL };

  other = sbx_executor_set_for_key (fx->set, "other", &error);
  g_assert_no_error (error);
  token = sbx_executor_issue_grant (other, "e", "true", fx->tree.ws, SBX_GRANT_CLASS_COMMAND_START,
                                    "true", NULL, &error);
  g_assert_no_error (error);
  result = run_with (fx, "e", "true", token, &error);
  g_assert_null (result);
  g_assert_error (error, SBX_GRANT_ERROR, SBX_GRANT_ERROR_BAD_MAC);
  g_clear_error (&error);
  /* Positive control: on its own executor it runs. */
  grants[0] = token;
  result = etu_run_with_grants (other, fx->tree.ws, TRUE_ARGV, "e", grants, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (sbx_run_result_get_successful (result));
}

/* ------------------------------------------------------------------------- */
/* Expiry and replay with the injected clock (§5.8)                           */
/* ------------------------------------------------------------------------- */

static GDateTime *
ms_to_datetime (gint64 ms)
{
  g_autoptr(GDateTime) base = g_date_time_new_from_unix_utc (ms / 1000);

  return g_date_time_add (base, (ms % 1000) * 1000);
}

static char *
issue_at (Fixture    *fx,
          const char *command,
          gint64      expiry_ms,
          GError    **error)
{
  g_autoptr(GDateTime) expiry = ms_to_datetime (expiry_ms);
  g_autofree char *bound = sbx_grant_command_for_argv (SBX_SH_ARGV (command));

  return sbx_executor_issue_grant (fx->executor, "e", bound, fx->tree.ws,
                                   SBX_GRANT_CLASS_COMMAND_START, NULL, expiry, error);
}

static void
test_expiry (Fixture       *fx,
             gconstpointer  data)
{
  g_autoptr(SbxProfile) profile = etu_profile_unconfined (fx->tree.ws, SBX_ACCESS_GATED);
  const gint64 t0 = 1800000000000;      /* ms */
  const gint64 ttl_ms = 2 * 3600 * 1000;
  g_autofree char *token = NULL;
  g_autoptr(SbxRunResult) result = NULL;
  g_autoptr(GError) error = NULL;

  fx->now_ms = t0;
  make_executor_ttl (fx, profile, ttl_ms * 1000);

  /* Issue: now < expiry <= now + TTL. */
  g_assert_null (issue_at (fx, "true", t0, &error));
  g_assert_error (error, SBX_GRANT_ERROR, SBX_GRANT_ERROR_EXPIRED);
  g_clear_error (&error);
  g_assert_null (issue_at (fx, "true", t0 - 1, &error));
  g_assert_error (error, SBX_GRANT_ERROR, SBX_GRANT_ERROR_EXPIRED);
  g_clear_error (&error);
  g_assert_null (issue_at (fx, "true", t0 + ttl_ms + 1, &error));
  g_assert_error (error, SBX_GRANT_ERROR, SBX_GRANT_ERROR_EXPIRED);
  g_clear_error (&error);
  g_assert_null (issue_at (fx, "true", t0 + 3 * 3600 * 1000, &error));
  g_assert_error (error, SBX_GRANT_ERROR, SBX_GRANT_ERROR_EXPIRED);
  g_clear_error (&error);
  g_free (issue_at (fx, "true", t0 + ttl_ms, &error));
  g_assert_no_error (error);
  g_free (issue_at (fx, "true", t0 + 3600 * 1000, &error));
  g_assert_no_error (error);
  g_free (issue_at (fx, "true", t0 + 1, &error));
  g_assert_no_error (error);

  /* A NULL expiry is now + TTL: valid at that ms, expired one ms later. */
  token = issue (fx, "e", "true", &error);
  g_assert_no_error (error);
  fx->now_ms = t0 + ttl_ms + 1;
  result = run_with (fx, "e", "true", token, &error);
  g_assert_error (error, SBX_GRANT_ERROR, SBX_GRANT_ERROR_EXPIRED);
  g_clear_error (&error);
  fx->now_ms = t0 + ttl_ms;
  result = run_with (fx, "e", "true", token, &error);
  g_assert_no_error (error);
  g_clear_pointer (&result, sbx_run_result_unref);
  g_clear_pointer (&token, g_free);

  /* Use at exactly the expiry ms is valid; replay at that ms is REPLAY; one
   * ms later it is EXPIRED and the replay registry is empty (a fresh
   * executor, so no earlier token is still live). */
  fx->now_ms = t0;
  make_executor_ttl (fx, profile, ttl_ms * 1000);
  token = issue_at (fx, "true", t0 + 1000, &error);
  g_assert_no_error (error);
  fx->now_ms = t0 + 1000;
  result = run_with (fx, "e", "true", token, &error);
  g_assert_no_error (error);
  g_clear_pointer (&result, sbx_run_result_unref);
  result = run_with (fx, "e", "true", token, &error);
  g_assert_error (error, SBX_GRANT_ERROR, SBX_GRANT_ERROR_REPLAY);
  g_clear_error (&error);
  fx->now_ms = t0 + 1001;
  result = run_with (fx, "e", "true", token, &error);
  g_assert_error (error, SBX_GRANT_ERROR, SBX_GRANT_ERROR_EXPIRED);
  g_clear_error (&error);
  g_assert_cmpuint (sbx_executor_get_n_replay (fx->executor), ==, 0);
}

/* The replay registry is bounded by live tokens: 256 spent tokens shrink to
 * 1 once they expired and one fresh token is spent. */
static void
test_replay_bounded (Fixture       *fx,
                     gconstpointer  data)
{
  g_autoptr(SbxProfile) profile = etu_profile_unconfined (fx->tree.ws, SBX_ACCESS_GATED);
  const gint64 t0 = 1800000000000;
  g_autofree char *fresh = NULL;
  g_autoptr(SbxRunResult) result = NULL;
  g_autoptr(GError) error = NULL;
  g_auto(SbxGrantPayload) p = { 0 };
  g_autofree char *canonical_ws = g_canonicalize_filename (fx->tree.ws, NULL);
  guint8 key[SBX_GRANT_KEY_SIZE];

  fx->now_ms = t0;
  make_executor (fx, profile);
  g_assert_true (sbx_executor_peek_grant_key (fx->executor, key));
  p.execution_id = g_strdup ("e");
  /* run_with() runs the shell command line: the token binds its vector. */
  p.command = sbx_grant_command_for_argv (SBX_SH_ARGV ("true"));
  p.cwd = g_strdup (canonical_ws);
  p.profile_fingerprint = g_strdup (sbx_profile_get_fingerprint (profile));
  p.route_fingerprint = g_strdup (SBX_GRANT_ROUTE_DIRECT);
  p.guarantee_bits = sbx_executor_get_guarantees (fx->executor);
  p.grant_class = g_strdup (SBX_GRANT_CLASS_COMMAND_START);
  p.target = g_strdup (p.command);
  p.expiry_ms = t0 + 10;
  for (guint i = 0; i < 256; i++)
    {
      g_autofree char *token = NULL;

      p.nonce[0] = (guint8) i;
      token = sbx_grant_token_mint (key, &p);
      result = run_with (fx, "e", "true", token, &error);
      g_assert_no_error (error);
      g_clear_pointer (&result, sbx_run_result_unref);
    }
  g_assert_cmpuint (sbx_executor_get_n_replay (fx->executor), ==, 256);
  fx->now_ms = t0 + 11;
  fresh = issue (fx, "e", "true", &error);
  g_assert_no_error (error);
  result = run_with (fx, "e", "true", fresh, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (sbx_executor_get_n_replay (fx->executor), ==, 1);
  explicit_bzero (key, sizeof key);
}

/* Two concurrent consumers of one token: exactly one runs, the other gets
 * REPLAY. */
typedef struct
{
  Fixture    *fx;
  const char *token;
  gint       *start;
  GError     *error;
  gboolean    ran;
} Racer;

static gpointer
racer_thread (gpointer data)
{
  Racer *r = data;
  SbxRunResult *result;

  while (!g_atomic_int_get (r->start))
    ;
  result = run_with (r->fx, "race", "true", r->token, &r->error);
  r->ran = result != NULL;
  g_clear_pointer (&result, sbx_run_result_unref);
  return NULL;
}

static void
test_concurrent_consumers (Fixture       *fx,
                           gconstpointer  data)
{
  for (guint round = 0; round < 20; round++)
    {
      g_autofree char *token = NULL;
      g_autoptr(GError) error = NULL;
      gint start = 0;
      Racer racers[2];
      GThread *threads[2];
      guint n_ran = 0;

      token = issue (fx, "race", "true", &error);
      g_assert_no_error (error);
      for (guint i = 0; i < 2; i++)
        {
          racers[i] = (Racer) { fx, token, &start, NULL, FALSE };
          threads[i] = g_thread_new ("racer", racer_thread, &racers[i]);
        }
      g_atomic_int_set (&start, 1);
      for (guint i = 0; i < 2; i++)
        {
          g_thread_join (threads[i]);
          if (racers[i].ran)
            {
              n_ran++;
              g_assert_no_error (racers[i].error);
            }
          else
            {
              g_assert_error (racers[i].error, SBX_GRANT_ERROR, SBX_GRANT_ERROR_REPLAY);
              g_clear_error (&racers[i].error);
            }
        }
      g_assert_cmpuint (n_ran, ==, 1);
    }
}

/* ------------------------------------------------------------------------- */
/* Issue matrix                                                               */
/* ------------------------------------------------------------------------- */

static SbxProfile *
gated_profile (const char *workspace,
               const char *root,
               SbxAccess   everything,
               SbxAccess   command)
{
  g_autoptr(SbxProfileConfig) config = sbx_profile_config_new ();
  g_autoptr(GError) error = NULL;
  SbxProfile *profile;

  sbx_profile_config_set_workspace (config, workspace, everything, everything);
  sbx_profile_config_set_host (config, everything, everything);
  sbx_profile_config_set_network (config, everything);
  sbx_profile_config_set_command (config, command);
  sbx_profile_config_set_home (config, SBX_HOME_ISOLATED);
  sbx_profile_config_set_isolation (config, SBX_ISOLATION_SANDBOXED);
  if (root != NULL)
    sbx_profile_config_add_root (config, root, everything, everything);
  profile = sbx_profile_new (config, &error);
  g_assert_no_error (error);
  return profile;
}

static SbxProfile *
gated_sandboxed_profile (const char *workspace,
                         const char *root,
                         SbxAccess   everything)
{
  return gated_profile (workspace, root, everything, everything);
}

static void
test_issue_matrix (Fixture       *fx,
                   gconstpointer  data)
{
  g_autofree char *root = g_build_filename (fx->tree.tmp, "root", NULL);
  g_autofree char *file = g_build_filename (fx->tree.tmp, "root", "file", NULL);
  g_autofree char *rel = g_strdup ("relative/path");
  struct
  {
    SbxAccess   access;
    const char *grant_class;
    const char *target;
    int         code;    /* -1: mints */
  } rows[] = {
    { SBX_ACCESS_GATED, SBX_GRANT_CLASS_COMMAND_START, NULL, -1 },
    { SBX_ACCESS_GATED, SBX_GRANT_CLASS_FILESYSTEM_PATH_READ, file, -1 },
    { SBX_ACCESS_GATED, SBX_GRANT_CLASS_FILESYSTEM_PATH_WRITE, file, -1 },
    { SBX_ACCESS_GATED, SBX_GRANT_CLASS_FILESYSTEM_TREE_READ, root, -1 },
    { SBX_ACCESS_GATED, SBX_GRANT_CLASS_FILESYSTEM_TREE_WRITE, root, -1 },
    { SBX_ACCESS_GATED, SBX_GRANT_CLASS_FILESYSTEM_HOST_READ, "host:*", -1 },
    { SBX_ACCESS_GATED, SBX_GRANT_CLASS_FILESYSTEM_HOST_WRITE, "host:*", -1 },
    { SBX_ACCESS_GATED, SBX_GRANT_CLASS_NETWORK_BROAD, "tcp:*:443", -1 },
    { SBX_ACCESS_GATED, SBX_GRANT_CLASS_NETWORK_PROXY_TARGET, "tcp:example.com:443",
      SBX_GRANT_ERROR_UNSUPPORTED },
    { SBX_ACCESS_GATED, "filesystem.path.execute.v1", file, SBX_GRANT_ERROR_UNSUPPORTED },
    { SBX_ACCESS_GATED, SBX_GRANT_CLASS_FILESYSTEM_PATH_READ, rel, SBX_GRANT_ERROR_MALFORMED },
    { SBX_ACCESS_GATED, SBX_GRANT_CLASS_NETWORK_BROAD, "tcp:*:0", SBX_GRANT_ERROR_MALFORMED },
    { SBX_ACCESS_GATED, SBX_GRANT_CLASS_NETWORK_BROAD, "tcp:*:0443", SBX_GRANT_ERROR_MALFORMED },
    { SBX_ACCESS_GATED, SBX_GRANT_CLASS_NETWORK_BROAD, "tcp:*:65536", SBX_GRANT_ERROR_MALFORMED },
    { SBX_ACCESS_GATED, SBX_GRANT_CLASS_FILESYSTEM_HOST_READ, "/", SBX_GRANT_ERROR_MALFORMED },
    { SBX_ACCESS_GATED, SBX_GRANT_CLASS_COMMAND_START, "other", SBX_GRANT_ERROR_WRONG_COMMAND },
    /* Tree grants only on configured roots. */
    { SBX_ACCESS_GATED, SBX_GRANT_CLASS_FILESYSTEM_TREE_READ, fx->tree.scratch, SBX_GRANT_ERROR_DENIED },
    /* Deny is never grantable, Allow has nothing to grant. */
    { SBX_ACCESS_DENY, SBX_GRANT_CLASS_COMMAND_START, NULL, SBX_GRANT_ERROR_DENIED },
    { SBX_ACCESS_DENY, SBX_GRANT_CLASS_FILESYSTEM_PATH_READ, file, SBX_GRANT_ERROR_DENIED },
    { SBX_ACCESS_DENY, SBX_GRANT_CLASS_FILESYSTEM_TREE_WRITE, root, SBX_GRANT_ERROR_DENIED },
    { SBX_ACCESS_DENY, SBX_GRANT_CLASS_FILESYSTEM_HOST_READ, "host:*", SBX_GRANT_ERROR_DENIED },
    { SBX_ACCESS_DENY, SBX_GRANT_CLASS_NETWORK_BROAD, "tcp:*:443", SBX_GRANT_ERROR_DENIED },
    { SBX_ACCESS_ALLOW, SBX_GRANT_CLASS_COMMAND_START, NULL, SBX_GRANT_ERROR_UNSUPPORTED },
    { SBX_ACCESS_ALLOW, SBX_GRANT_CLASS_FILESYSTEM_PATH_READ, file, SBX_GRANT_ERROR_UNSUPPORTED },
    { SBX_ACCESS_ALLOW, SBX_GRANT_CLASS_NETWORK_BROAD, "tcp:*:443", SBX_GRANT_ERROR_UNSUPPORTED },
  };
  g_autoptr(SbxRegistry) ok_registry = etu_registry ("ok", NULL);

  g_assert_cmpint (g_mkdir (root, 0700), ==, 0);
  g_assert_true (g_file_set_contents (file, "secret", -1, NULL));
  g_set_object (&fx->registry, ok_registry);

  for (guint r = 0; r < G_N_ELEMENTS (rows); r++)
    {
      g_autoptr(SbxProfile) profile = gated_sandboxed_profile (fx->tree.ws, root, rows[r].access);
      g_autoptr(GError) error = NULL;
      g_autofree char *token = NULL;

      g_test_message ("row %u: %s %s", r, rows[r].grant_class, rows[r].target);
      make_executor (fx, profile);
      token = sbx_executor_issue_grant (fx->executor, "e", "true", fx->tree.ws, rows[r].grant_class,
                                        rows[r].target, NULL, &error);
      if (rows[r].code < 0)
        {
          g_assert_no_error (error);
          g_assert_nonnull (token);
        }
      else
        {
          g_assert_null (token);
          g_assert_error (error, SBX_GRANT_ERROR, rows[r].code);
        }
    }

  /* The set's private directory is Deny whatever the profile says of the
   * host: another executor's HOME is never grantable. */
  {
    g_autoptr(SbxProfile) profile = gated_sandboxed_profile (fx->tree.ws, root, SBX_ACCESS_GATED);
    g_autoptr(GError) error = NULL;
    g_autoptr(SbxExecutor) other = NULL;
    g_autofree char *private_file = NULL;
    g_autofree char *token = NULL;
    SbxExecutor *executor = make_executor (fx, profile);

    other = sbx_executor_set_for_key (fx->set, "other", &error);
    g_assert_no_error (error);
    private_file = g_build_filename (sbx_executor_get_home (other), "private", NULL);
    g_assert_true (g_file_set_contents (private_file, "x", -1, NULL));
    g_assert_null (sbx_executor_issue_grant (executor, "e", "true", fx->tree.ws,
                                             SBX_GRANT_CLASS_FILESYSTEM_PATH_READ, private_file, NULL,
                                             &error));
    g_assert_error (error, SBX_GRANT_ERROR, SBX_GRANT_ERROR_DENIED);
    g_clear_error (&error);
    /* Positive control: the same shape outside the set's directory mints. */
    token = sbx_executor_issue_grant (executor, "e", "true", fx->tree.ws,
                                      SBX_GRANT_CLASS_FILESYSTEM_PATH_READ, file, NULL, &error);
    g_assert_no_error (error);
    g_assert_nonnull (token);
  }

  /* Text, cwd, and a closed executor. */
  {
    g_autoptr(SbxProfile) profile = gated_sandboxed_profile (fx->tree.ws, root, SBX_ACCESS_GATED);
    g_autoptr(GError) error = NULL;
    g_autofree char *missing = g_build_filename (fx->tree.tmp, "missing", NULL);
    SbxExecutor *executor = make_executor (fx, profile);

    g_assert_null (sbx_executor_issue_grant (executor, " e", "true", fx->tree.ws,
                                             SBX_GRANT_CLASS_COMMAND_START, NULL, NULL, &error));
    g_assert_error (error, SBX_GRANT_ERROR, SBX_GRANT_ERROR_MALFORMED);
    g_clear_error (&error);
    g_assert_null (sbx_executor_issue_grant (executor, "e", "", fx->tree.ws,
                                             SBX_GRANT_CLASS_COMMAND_START, NULL, NULL, &error));
    g_assert_error (error, SBX_GRANT_ERROR, SBX_GRANT_ERROR_MALFORMED);
    g_clear_error (&error);
    g_assert_null (sbx_executor_issue_grant (executor, "e", "true", missing,
                                             SBX_GRANT_CLASS_COMMAND_START, NULL, NULL, &error));
    g_assert_error (error, SBX_GRANT_ERROR, SBX_GRANT_ERROR_MALFORMED);
    g_clear_error (&error);
    g_assert_true (sbx_executor_set_close (fx->set, NULL, &error));
    g_assert_null (sbx_executor_issue_grant (executor, "e", "true", fx->tree.ws,
                                             SBX_GRANT_CLASS_COMMAND_START, NULL, NULL, &error));
    g_assert_error (error, SBX_EXECUTOR_ERROR, SBX_EXECUTOR_ERROR_CLOSED);
  }
}

/* A backend that refuses a class: UNSUPPORTED at issue, before the target
 * is looked at (a target that does not exist would otherwise be refused
 * for that); the same class mints once the backend enforces it. */
static void
test_backend_refuses_class (Fixture       *fx,
                            gconstpointer  data)
{
  g_autoptr(SbxRegistry) ok_registry = etu_registry ("ok", NULL);
  g_autoptr(SbxProfile) profile = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *token = NULL;
  g_autofree char *missing = g_build_filename (fx->tree.ws, "no-such-file", NULL);

  g_set_object (&fx->registry, ok_registry);
  profile = gated_sandboxed_profile (fx->tree.ws, NULL, SBX_ACCESS_GATED);
  make_executor (fx, profile);
  g_setenv ("SBX_MOCK_OK_REFUSE_CLASS", SBX_GRANT_CLASS_NETWORK_BROAD, TRUE);
  token = sbx_executor_issue_grant (fx->executor, "e", "true", fx->tree.ws,
                                    SBX_GRANT_CLASS_NETWORK_BROAD, "tcp:*:443", NULL, &error);
  g_assert_null (token);
  g_assert_error (error, SBX_GRANT_ERROR, SBX_GRANT_ERROR_UNSUPPORTED);
  g_assert_nonnull (strstr (error->message, "cannot enforce"));
  g_clear_error (&error);
  /* before the target: a path class the backend refuses, on a missing path */
  g_setenv ("SBX_MOCK_OK_REFUSE_CLASS", SBX_GRANT_CLASS_FILESYSTEM_PATH_READ, TRUE);
  token = sbx_executor_issue_grant (fx->executor, "e", "true", fx->tree.ws,
                                    SBX_GRANT_CLASS_FILESYSTEM_PATH_READ, missing, NULL, &error);
  g_unsetenv ("SBX_MOCK_OK_REFUSE_CLASS");
  g_assert_null (token);
  g_assert_error (error, SBX_GRANT_ERROR, SBX_GRANT_ERROR_UNSUPPORTED);
  g_assert_nonnull (strstr (error->message, "cannot enforce"));
  g_clear_error (&error);
  /* Positive control: the same class mints when the backend enforces it. */
  token = sbx_executor_issue_grant (fx->executor, "e", "true", fx->tree.ws,
                                    SBX_GRANT_CLASS_NETWORK_BROAD, "tcp:*:443", NULL, &error);
  g_assert_no_error (error);
  g_assert_nonnull (token);
}

/* [valid, garbage]: MALFORMED, the valid one is not consumed and a retry
 * spends it.  The same token twice in one call is REPLAY. */
static void
test_batch (Fixture       *fx,
            gconstpointer  data)
{
  g_autofree char *token = NULL;
  g_autoptr(SbxRunResult) result = NULL;
  g_autoptr(GError) error = NULL;
  const char *bad[] = { NULL, "invalid", NULL };
  const char *twice[] = { NULL, NULL, NULL };
  const char *good[] = { NULL, NULL };

  token = issue (fx, "e", "true", &error);
  g_assert_no_error (error);
  bad[0] = twice[0] = twice[1] = good[0] = token;
  result = etu_run_with_grants (fx->executor, fx->tree.ws, SBX_SH_ARGV ("true"), "e", bad, NULL, NULL, &error);
  g_assert_error (error, SBX_GRANT_ERROR, SBX_GRANT_ERROR_MALFORMED);
  g_clear_error (&error);
  result = etu_run_with_grants (fx->executor, fx->tree.ws, SBX_SH_ARGV ("true"), "e", twice, NULL, NULL, &error);
  g_assert_error (error, SBX_GRANT_ERROR, SBX_GRANT_ERROR_REPLAY);
  g_clear_error (&error);
  result = etu_run_with_grants (fx->executor, fx->tree.ws, SBX_SH_ARGV ("true"), "e", good, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (sbx_run_result_get_successful (result));
}

/* Key wiped on close; the executor refuses every grant run afterwards. */
static void
test_close_wipes_key (Fixture       *fx,
                      gconstpointer  data)
{
  guint8 key[SBX_GRANT_KEY_SIZE];
  guint8 zero[SBX_GRANT_KEY_SIZE] = { 0 };
  g_autofree char *token = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(SbxRunResult) result = NULL;

  token = issue (fx, "e", "true", &error);
  g_assert_no_error (error);
  g_assert_true (sbx_executor_peek_grant_key (fx->executor, key));
  g_assert_true (memcmp (key, zero, sizeof key) != 0);
  g_assert_true (sbx_executor_set_close (fx->set, NULL, &error));
  g_assert_false (sbx_executor_peek_grant_key (fx->executor, key));
  g_assert_cmpmem (key, sizeof key, zero, sizeof zero);
  result = run_with (fx, "e", "true", token, &error);
  g_assert_null (result);
  g_assert_error (error, SBX_EXECUTOR_ERROR, SBX_EXECUTOR_ERROR_CLOSED);
}

/* ------------------------------------------------------------------------- */
/* Filesystem identity binding (core, on the mock-ok double)                  */
/* ------------------------------------------------------------------------- */

static const char *
mock_last_grants (void)
{
  g_autofree char *path = g_build_filename (etu_plugin_dir ("ok"), "sbx-plugin-mock-ok.so", NULL);
  void *handle = dlopen (path, RTLD_NOW | RTLD_NOLOAD);
  const char *(*fn) (void);
  const char *value;

  g_assert_nonnull (handle);
  fn = (const char *(*) (void)) dlsym (handle, "sbx_mock_ok_last_grants");
  g_assert_nonnull (fn);
  value = fn ();
  dlclose (handle);
  return value;
}

static unsigned
mock_ok_count (const char *what)
{
  g_autofree char *path = g_build_filename (etu_plugin_dir ("ok"), "sbx-plugin-mock-ok.so", NULL);
  void *handle = dlopen (path, RTLD_NOW | RTLD_NOLOAD);
  unsigned (*fn) (const char *);
  unsigned value;

  g_assert_nonnull (handle);
  fn = (unsigned (*) (const char *)) dlsym (handle, "sbx_mock_ok_count");
  g_assert_nonnull (fn);
  value = fn (what);
  dlclose (handle);
  return value;
}

typedef enum
{
  SWAP_NONE,
  SWAP_SYMLINK,        /* the target replaced by a symlink to another file */
  SWAP_RENAME,         /* another file renamed over the target */
  SWAP_EXCHANGE,       /* RENAME_EXCHANGE with another file */
  SWAP_ANCESTOR_LINK,  /* the parent directory replaced by a symlink */
  SWAP_RECREATE,       /* deleted and recreated under the same name */
} Swap;

static void
test_fs_binding (Fixture       *fx,
                 gconstpointer  data)
{
  static const struct { const char *name; Swap swap; int code; } rows[] = {
    { "unchanged (positive control)", SWAP_NONE, -1 },
    { "symlink swap", SWAP_SYMLINK, SBX_GRANT_ERROR_TARGET_CHANGED },
    { "rename over", SWAP_RENAME, SBX_GRANT_ERROR_TARGET_CHANGED },
    { "RENAME_EXCHANGE", SWAP_EXCHANGE, SBX_GRANT_ERROR_TARGET_CHANGED },
    { "ancestor symlink", SWAP_ANCESTOR_LINK, SBX_GRANT_ERROR_TARGET_CHANGED },
    { "delete and recreate", SWAP_RECREATE, SBX_GRANT_ERROR_TARGET_CHANGED },
  };
  g_autoptr(SbxRegistry) ok_registry = etu_registry ("ok", NULL);

  g_set_object (&fx->registry, ok_registry);
  for (guint r = 0; r < G_N_ELEMENTS (rows); r++)
    {
      g_autofree char *root = g_strdup_printf ("%s/root%u", fx->tree.tmp, r);
      g_autofree char *dir = g_build_filename (root, "dir", NULL);
      g_autofree char *file = g_build_filename (dir, "file", NULL);
      g_autofree char *other = g_build_filename (dir, "other", NULL);
      g_autofree char *moved = g_strdup_printf ("%s/moved%u", fx->tree.tmp, r);
      g_autoptr(SbxProfile) profile = NULL;
      g_autoptr(GError) error = NULL;
      g_autofree char *token = NULL;
      g_autoptr(SbxRunResult) result = NULL;
      const char *grants[2] = { NULL, NULL };
      unsigned compiles, releases;

      g_test_message ("swap: %s", rows[r].name);
      g_assert_cmpint (g_mkdir_with_parents (dir, 0700), ==, 0);
      g_assert_true (g_file_set_contents (file, "approved", -1, NULL));
      g_assert_true (g_file_set_contents (other, "not approved", -1, NULL));
      profile = gated_profile (fx->tree.ws, root, SBX_ACCESS_GATED, SBX_ACCESS_ALLOW);
      make_executor (fx, profile);
      token = sbx_executor_issue_grant (fx->executor, "e", "true", fx->tree.ws,
                                        SBX_GRANT_CLASS_FILESYSTEM_PATH_READ, file, NULL, &error);
      g_assert_no_error (error);
      g_assert_cmpuint (sbx_executor_get_n_retained (fx->executor), ==, 1);

      switch (rows[r].swap)
        {
        case SWAP_SYMLINK:
          g_assert_cmpint (unlink (file), ==, 0);
          g_assert_cmpint (symlink (other, file), ==, 0);
          break;
        case SWAP_RENAME:
          g_assert_cmpint (rename (other, file), ==, 0);
          break;
        case SWAP_EXCHANGE:
          g_assert_cmpint (syscall (SYS_renameat2, AT_FDCWD, other, AT_FDCWD, file, RENAME_EXCHANGE), ==, 0);
          break;
        case SWAP_ANCESTOR_LINK:
          {
            g_autofree char *copy = g_build_filename (moved, "file", NULL);

            g_assert_cmpint (rename (dir, moved), ==, 0);
            g_assert_cmpint (g_mkdir (dir, 0700), ==, 0);
            g_assert_cmpint (rmdir (dir), ==, 0);
            g_assert_cmpint (symlink (moved, dir), ==, 0);
            g_assert_true (g_file_test (copy, G_FILE_TEST_EXISTS));
          }
          break;
        case SWAP_RECREATE:
          g_assert_cmpint (unlink (file), ==, 0);
          g_assert_true (g_file_set_contents (file, "approved", -1, NULL));
          break;
        case SWAP_NONE:
        default:
          break;
        }

      grants[0] = token;
      compiles = mock_ok_count ("compile");
      releases = mock_ok_count ("release");
      result = etu_run_with_grants (fx->executor, fx->tree.ws, TRUE_ARGV, "e", grants, NULL, NULL, &error);
      if (rows[r].code < 0)
        {
          g_autofree char *expected = g_strdup_printf ("%s allow=%u deny=0 exact=1 fd=same;", file,
                                                       SBX_FS_READ | SBX_FS_EXEC);

          g_assert_no_error (error);
          /* One transient spec, compiled for this spawn and released once
           * the spawn is over (the executor's own spec lives on). */
          g_assert_cmpuint (mock_ok_count ("compile"), ==, compiles + 1);
          g_assert_cmpuint (mock_ok_count ("release"), ==, releases + 1);
          g_assert_true (sbx_run_result_get_successful (result));
          /* The spawn's spec got the grant as an exact rule on the pinned fd. */
          g_assert_true (g_str_has_prefix (mock_last_grants (), expected));
          g_assert_cmpuint (sbx_executor_get_n_retained (fx->executor), ==, 0);
          g_clear_pointer (&result, sbx_run_result_unref);
          result = etu_run_with_grants (fx->executor, fx->tree.ws, TRUE_ARGV, "e", grants, NULL, NULL, &error);
          g_assert_error (error, SBX_GRANT_ERROR, SBX_GRANT_ERROR_REPLAY);
        }
      else
        {
          g_assert_null (result);
          g_assert_error (error, SBX_GRANT_ERROR, rows[r].code);
          /* Refused before anything was compiled. */
          g_assert_cmpuint (mock_ok_count ("compile"), ==, compiles);
        }
    }
}

/* Exact grants need a single-link regular file, tree grants a directory. */
static void
test_fs_shapes (Fixture       *fx,
                gconstpointer  data)
{
  g_autofree char *root = g_build_filename (fx->tree.tmp, "shapes", NULL);
  g_autofree char *file = g_build_filename (root, "file", NULL);
  g_autofree char *link2 = g_build_filename (root, "link2", NULL);
  g_autofree char *single = g_build_filename (root, "single", NULL);
  g_autofree char *missing = g_build_filename (root, "missing", NULL);
  g_autoptr(SbxRegistry) ok_registry = etu_registry ("ok", NULL);
  g_autoptr(SbxProfile) profile = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *token = NULL;
  g_autoptr(SbxRunResult) result = NULL;
  const char *grants[2] = { NULL, NULL };
  g_autofree char *expected = NULL;

  g_set_object (&fx->registry, ok_registry);
  g_assert_cmpint (g_mkdir (root, 0700), ==, 0);
  g_assert_true (g_file_set_contents (file, "x", -1, NULL));
  g_assert_true (g_file_set_contents (single, "x", -1, NULL));
  g_assert_cmpint (link (file, link2), ==, 0);
  profile = gated_profile (fx->tree.ws, root, SBX_ACCESS_GATED, SBX_ACCESS_ALLOW);
  make_executor (fx, profile);

  g_assert_null (sbx_executor_issue_grant (fx->executor, "e", "true", fx->tree.ws,
                                           SBX_GRANT_CLASS_FILESYSTEM_PATH_WRITE, file, NULL, &error));
  g_assert_error (error, SBX_GRANT_ERROR, SBX_GRANT_ERROR_UNSUPPORTED);
  g_clear_error (&error);
  g_assert_null (sbx_executor_issue_grant (fx->executor, "e", "true", fx->tree.ws,
                                           SBX_GRANT_CLASS_FILESYSTEM_PATH_READ, root, NULL, &error));
  g_assert_error (error, SBX_GRANT_ERROR, SBX_GRANT_ERROR_UNSUPPORTED);
  g_clear_error (&error);
  g_assert_null (sbx_executor_issue_grant (fx->executor, "e", "true", fx->tree.ws,
                                           SBX_GRANT_CLASS_FILESYSTEM_PATH_READ, missing, NULL, &error));
  g_assert_error (error, SBX_GRANT_ERROR, SBX_GRANT_ERROR_UNSUPPORTED);
  g_clear_error (&error);
  g_assert_null (sbx_executor_issue_grant (fx->executor, "e", "true", fx->tree.ws,
                                           SBX_GRANT_CLASS_FILESYSTEM_TREE_WRITE, single, NULL, &error));
  g_assert_error (error, SBX_GRANT_ERROR, SBX_GRANT_ERROR_DENIED);   /* not a configured root */
  g_clear_error (&error);
  g_assert_cmpuint (sbx_executor_get_n_retained (fx->executor), ==, 0);

  /* Positive controls: a single-link file, and the root as a tree. */
  token = sbx_executor_issue_grant (fx->executor, "e", "true", fx->tree.ws,
                                    SBX_GRANT_CLASS_FILESYSTEM_PATH_WRITE, single, NULL, &error);
  g_assert_no_error (error);
  g_free (token);
  token = sbx_executor_issue_grant (fx->executor, "e", "true", fx->tree.ws,
                                    SBX_GRANT_CLASS_FILESYSTEM_TREE_WRITE, root, NULL, &error);
  g_assert_no_error (error);
  grants[0] = token;
  result = etu_run_with_grants (fx->executor, fx->tree.ws, TRUE_ARGV, "e", grants, NULL, NULL, &error);
  g_assert_no_error (error);
  expected = g_strdup_printf ("%s allow=%u deny=0 exact=0 fd=same;", root, SBX_FS_WRITE);
  g_assert_true (g_str_has_prefix (mock_last_grants (), expected));
}

/* Host and network deltas in the transient policy. */
static void
test_host_and_network_delta (Fixture       *fx,
                             gconstpointer  data)
{
  g_autoptr(SbxRegistry) ok_registry = etu_registry ("ok", NULL);
  g_autoptr(SbxProfile) profile = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *t1 = NULL;
  g_autofree char *t2 = NULL;
  g_autofree char *t3 = NULL;
  g_autoptr(SbxRunResult) result = NULL;
  const char *grants[4] = { NULL, NULL, NULL, NULL };
  const char *last;

  g_set_object (&fx->registry, ok_registry);
  profile = gated_sandboxed_profile (fx->tree.ws, NULL, SBX_ACCESS_GATED);
  make_executor (fx, profile);
  t1 = sbx_executor_issue_grant (fx->executor, "e", "true", fx->tree.ws,
                                 SBX_GRANT_CLASS_FILESYSTEM_HOST_READ, "host:*", NULL, &error);
  g_assert_no_error (error);
  t2 = sbx_executor_issue_grant (fx->executor, "e", "true", fx->tree.ws,
                                 SBX_GRANT_CLASS_NETWORK_BROAD, "tcp:*:443", NULL, &error);
  g_assert_no_error (error);
  t3 = sbx_executor_issue_grant (fx->executor, "e", "true", fx->tree.ws,
                                 SBX_GRANT_CLASS_COMMAND_START, NULL, NULL, &error);
  g_assert_no_error (error);
  grants[0] = t1;
  grants[1] = t2;
  result = etu_run_with_grants (fx->executor, fx->tree.ws, TRUE_ARGV, "e", grants, NULL, NULL, &error);
  /* The command is gated too: without its start grant nothing runs, and
   * nothing is consumed. */
  g_assert_error (error, SBX_GRANT_ERROR, SBX_GRANT_ERROR_REQUIRED);
  g_clear_error (&error);
  grants[2] = t3;
  result = etu_run_with_grants (fx->executor, fx->tree.ws, TRUE_ARGV, "e", grants, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (g_strv_length ((char **) sbx_run_result_get_grants_spent (result)), ==, 3);
  last = mock_last_grants ();
  g_assert_nonnull (strstr (last, "/ allow=3 deny=0 exact=0 fd=none;"));
  g_assert_nonnull (strstr (last, "net=2 dns=1 ports=443"));
  g_clear_pointer (&result, sbx_run_result_unref);

  /* A backend that still claims a network guarantee for a spawn with a
   * broad grant is refused, and the token is not spent. */
  g_clear_pointer (&t2, g_free);
  g_clear_pointer (&t3, g_free);
  t2 = sbx_executor_issue_grant (fx->executor, "e", "true", fx->tree.ws,
                                 SBX_GRANT_CLASS_NETWORK_BROAD, "tcp:*:443", NULL, &error);
  g_assert_no_error (error);
  t3 = sbx_executor_issue_grant (fx->executor, "e", "true", fx->tree.ws,
                                 SBX_GRANT_CLASS_COMMAND_START, NULL, NULL, &error);
  g_assert_no_error (error);
  grants[0] = t2;
  grants[1] = t3;
  grants[2] = NULL;
  g_setenv ("SBX_MOCK_OK_CLAIM_PORTS_NETWORK", "1", TRUE);
  result = etu_run_with_grants (fx->executor, fx->tree.ws, TRUE_ARGV, "e", grants, NULL, NULL,
                                &error);
  g_unsetenv ("SBX_MOCK_OK_CLAIM_PORTS_NETWORK");
  g_assert_null (result);
  g_assert_error (error, SBX_GRANT_ERROR, SBX_GRANT_ERROR_GUARANTEE_MISMATCH);
  g_assert_nonnull (strstr (error->message, "network-boundary"));
  g_clear_error (&error);
  result = etu_run_with_grants (fx->executor, fx->tree.ws, TRUE_ARGV, "e", grants, NULL, NULL,
                                &error);
  g_assert_no_error (error);
  g_assert_nonnull (strstr (sbx_run_result_get_grants_spent (result)[0], "no network-boundary"));
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
  etu_warm_up ();

  g_test_add_func ("/grant/token/roundtrip", test_token_roundtrip);
  g_test_add_func ("/grant/token/refused", test_token_refused);
  g_test_add_func ("/grant/token/noncanonical-payload", test_token_noncanonical_payload);
  g_test_add_func ("/grant/text-and-argv", test_text_and_argv);
#define ADD(path, fn) g_test_add (path, Fixture, NULL, fixture_setup, fn, fixture_teardown)
  ADD ("/grant/command-start/end-to-end", test_command_start);
  ADD ("/grant/command-start/async-and-argv", test_command_start_async_and_argv);
  ADD ("/grant/token-not-in-child", test_token_not_in_child);
  ADD ("/grant/bindings", test_bindings);
  ADD ("/grant/other-executor", test_other_executor);
  ADD ("/grant/expiry", test_expiry);
  ADD ("/grant/replay/bounded", test_replay_bounded);
  ADD ("/grant/replay/concurrent", test_concurrent_consumers);
  ADD ("/grant/issue/matrix", test_issue_matrix);
  ADD ("/grant/issue/backend-refuses-class", test_backend_refuses_class);
  ADD ("/grant/batch", test_batch);
  ADD ("/grant/close-wipes-key", test_close_wipes_key);
  ADD ("/grant/fs/binding", test_fs_binding);
  ADD ("/grant/fs/shapes", test_fs_shapes);
  ADD ("/grant/host-and-network-delta", test_host_and_network_delta);
#undef ADD
  return g_test_run ();
}
