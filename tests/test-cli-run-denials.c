/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What `sbx run` prints for a run's denials (tools/sbx-cmd-run-denials.c),
 * at the unit layer: a run result holding the filesystem refusals a backend
 * would report (read, write, exec, list, one repeated), mapped by the core
 * as the spawn's denial sink maps them.  No backend reports them yet
 * without the view supervisor, so this is where the CLI's lines and its
 * --report=json object are pinned; tests/test-denials.c covers the same
 * printer end to end for network and command denials.
 */
#include <sbx/sbx.h>

#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <json-glib/json-glib.h>
#include <glib/gstdio.h>

#include "executor-test-util.h"
#include "sbx-backend-denials-private.h"
#include "sbx-run-result-private.h"
#include "sbx-cmd-run-denials.h"
#include "sbx-cmds.h"

typedef struct
{
  char       *tmp;
  char       *secret;    /* host read gated: a file */
  char       *hosts;     /* host write denied */
  char       *tool;      /* host read gated: an executable */
  char       *dir;       /* host read gated: a directory */
  SbxProfile *profile;
} Fx;

static void
fx_init (Fx *fx)
{
  g_autoptr(SbxProfileConfig) config = sbx_profile_config_new ();
  g_autoptr(GError) error = NULL;
  g_autofree char *ws = NULL;

  fx->tmp = etu_make_tmpdir ("sbx-test-cli-denials-XXXXXX");
  ws = etu_mkdir (fx->tmp, "ws");
  fx->dir = etu_mkdir (fx->tmp, "home");
  fx->secret = etu_write_file (fx->tmp, "home/config", "secret");
  fx->hosts = etu_write_file (fx->tmp, "hosts", "127.0.0.1 localhost\n");
  fx->tool = etu_write_file (fx->tmp, "tool", "#!/bin/sh\n");
  sbx_profile_config_set_workspace (config, ws, SBX_ACCESS_ALLOW, SBX_ACCESS_ALLOW);
  sbx_profile_config_set_host (config, SBX_ACCESS_GATED, SBX_ACCESS_DENY);
  fx->profile = sbx_profile_new (config, &error);
  g_assert_no_error (error);
}

static void
fx_clear (Fx *fx)
{
  etu_rm_rf (fx->tmp);
  g_free (fx->tmp);
  g_free (fx->secret);
  g_free (fx->hosts);
  g_free (fx->tool);
  g_free (fx->dir);
  sbx_profile_unref (fx->profile);
}

static void
report (SbxDenialLog *log,
        SbxProfile   *profile,
        guint32       operation,
        const char   *path)
{
  SbxBackendDenialV1 record = { sizeof record, operation, 3, path, "view-supervisor", "cat", NULL };
  g_autoptr(SbxDenial) denial = sbx_backend_denial_new (&record, profile);

  g_assert_nonnull (denial);
  sbx_denial_log_add (log, denial);
}

/* What sbx_run_print_denials() writes to stderr (captured in a file). */
static char *
print_captured (SbxRunResult *result)
{
  g_autofree char *path = NULL;
  g_autofree char *text = NULL;
  int fd = g_file_open_tmp ("sbx-test-cli-denials-XXXXXX", &path, NULL);
  int saved = dup (STDERR_FILENO);

  g_assert_cmpint (fd, >=, 0);
  g_assert_cmpint (saved, >=, 0);
  fflush (stderr);
  g_assert_cmpint (dup2 (fd, STDERR_FILENO), ==, STDERR_FILENO);
  sbx_run_print_denials (result, TRUE);
  fflush (stderr);
  g_assert_cmpint (dup2 (saved, STDERR_FILENO), ==, STDERR_FILENO);
  close (saved);
  close (fd);
  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  g_unlink (path);
  return g_steal_pointer (&text);
}

static void
test_print (void)
{
  Fx fx;
  g_autoptr(SbxDenialLog) log = sbx_denial_log_new ();
  g_autoptr(SbxRunResult) result = NULL;
  SbxExitV1 exit_status = { sizeof exit_status, SBX_EXIT_EXITED, 0, 0 };
  g_autofree char *err = NULL;
  g_auto(GStrv) lines = NULL;
  g_autofree char *read_line = NULL;
  g_autofree char *write_line = NULL;
  g_autofree char *exec_line = NULL;
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;
  JsonArray *denials;
  JsonObject *first;
  guint n_denied = 0;

  fx_init (&fx);
  report (log, fx.profile, SBX_ABI_DENIAL_READ, fx.secret);
  report (log, fx.profile, SBX_ABI_DENIAL_READ, fx.secret);   /* merged */
  report (log, fx.profile, SBX_ABI_DENIAL_WRITE, fx.hosts);
  report (log, fx.profile, SBX_ABI_DENIAL_EXEC, fx.tool);
  report (log, fx.profile, SBX_ABI_DENIAL_LIST, fx.dir);
  result = sbx_run_result_new (NULL, &exit_status, FALSE, SBX_LIFETIME_CONTAINMENT_UNSPECIFIED, 0);
  sbx_run_result_set_denials (result, log);
  err = print_captured (result);
  g_test_message ("%s", err);
  lines = g_strsplit (err, "\n", -1);
  g_assert_cmpuint (g_strv_length (lines), >=, 5);

  /* the two forms: a gated dimension names the grant, a denied one
   * says why none can; a repeat is one line with its count */
  read_line = g_strdup_printf ("sbx: denied read %s (host read is gated) [2 times]; --approve "
                               "filesystem.path.read.v1:%s would open it", fx.secret, fx.secret);
  write_line = g_strdup_printf ("sbx: denied write %s (the profile denies host write)", fx.hosts);
  exec_line = g_strdup_printf ("sbx: denied exec %s (host read is gated); --approve "
                               "filesystem.path.read.v1:%s would open it", fx.tool, fx.tool);
  g_assert_cmpstr (lines[0], ==, read_line);
  g_assert_cmpstr (lines[1], ==, write_line);
  g_assert_cmpstr (lines[2], ==, exec_line);
  g_assert_true (g_str_has_prefix (lines[3], "sbx: denied list "));
  g_assert_nonnull (strstr (lines[3], "--approve filesystem.host.read.v1:host:* would open it"));
  for (guint i = 0; lines[i] != NULL; i++)
    if (g_str_has_prefix (lines[i], "sbx: denied "))
      n_denied++;
  g_assert_cmpuint (n_denied, ==, 4);   /* each distinct denial once */

  /* --report=json: the same four, with the process inside */
  g_assert_true (json_parser_load_from_data (parser, lines[4], -1, &error));
  g_assert_no_error (error);
  denials = json_object_get_array_member (json_node_get_object (json_parser_get_root (parser)), "denials");
  g_assert_cmpuint (json_array_get_length (denials), ==, 4);
  first = json_array_get_object_element (denials, 0);
  g_assert_cmpstr (json_object_get_string_member (first, "operation"), ==, "read");
  g_assert_cmpstr (json_object_get_string_member (first, "target"), ==, fx.secret);
  g_assert_cmpstr (json_object_get_string_member (first, "mechanism"), ==, "view-supervisor");
  g_assert_cmpint (json_object_get_int_member (first, "count"), ==, 2);
  g_assert_cmpstr (json_object_get_string_member (first, "grant_class"), ==, "filesystem.path.read.v1");
  g_assert_cmpstr (json_object_get_string_member (first, "grant_target"), ==, fx.secret);
  g_assert_cmpstr (json_object_get_string_member (first, "reason"), ==, "host read is gated");
  g_assert_cmpint (json_object_get_int_member (first, "pid"), ==, 3);
  g_assert_cmpstr (json_object_get_string_member (first, "process"), ==, "cat");
  g_assert_false (json_object_has_member (json_array_get_object_element (denials, 1), "grant_class"));
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (denials, 2), "operation"), ==,
                   "exec");
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (denials, 3), "operation"), ==,
                   "list");
  g_assert_cmpint (json_object_get_int_member (json_node_get_object (json_parser_get_root (parser)),
                                               "denials_dropped"), ==, 0);
  fx_clear (&fx);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
  g_test_add_func ("/cli-run-denials/print", test_print);
  return g_test_run ();
}
