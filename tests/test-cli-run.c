/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * `sbx run`, driven as a program: exit statuses, pass-through
 * of stdin/stdout/stderr (live), --max-output, --timeout, --report, refusals
 * with 125 and a message, and a Sandboxed profile on a host without a
 * sandboxing backend.
 */
#include <gio/gio.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "executor-test-util.h"
#include "executor-test-util.h"

typedef struct
{
  EtuTree tree;
  char   *unconfined_profile;
} Fixture;

static const char gated_json[] =
  "{ \"version\": 1,\n"
  "  \"workspace\": { \"root\": \".\", \"read\": \"allow\", \"write\": \"allow\" },\n"
  "  \"host\": { \"read\": \"allow\", \"write\": \"allow\" },\n"
  "  \"network\": \"allow\", \"command\": \"gated\",\n"
  "  \"home\": \"isolated\", \"isolation\": \"unconfined\", \"ack-unconfined\": true }\n";

static const char unconfined_json[] =
  "{ \"version\": 1,\n"
  "  \"workspace\": { \"root\": \".\", \"read\": \"allow\", \"write\": \"allow\" },\n"
  "  \"host\": { \"read\": \"allow\", \"write\": \"allow\" },\n"
  "  \"network\": \"allow\", \"command\": \"allow\",\n"
  "  \"home\": \"isolated\", \"isolation\": \"unconfined\", \"ack-unconfined\": true }\n";

static void
fixture_setup (Fixture       *fx,
               gconstpointer  data)
{
  etu_tree_init (&fx->tree);
  fx->unconfined_profile = etu_write_file (fx->tree.tmp, "unconfined.json", unconfined_json);
}

static void
fixture_teardown (Fixture       *fx,
                  gconstpointer  data)
{
  /* sbx run removed its scratch child from TMPDIR (the test's scratch). */
  g_autoptr(GDir) dir = g_dir_open (fx->tree.scratch, 0, NULL);

  g_assert_nonnull (dir);
  g_assert_null (g_dir_read_name (dir));
  g_assert_cmpuint (etu_count_children (), ==, 0);
  etu_tree_clear (&fx->tree);
  g_free (fx->unconfined_profile);
}

/* A launcher for sbx with the build's plugins, cwd = the workspace and
 * TMPDIR = the scratch directory. */
static GSubprocessLauncher *
launcher (Fixture        *fx,
          GSubprocessFlags flags,
          gboolean        with_plugins)
{
  GSubprocessLauncher *l = g_subprocess_launcher_new (flags);
  g_autofree char *path = NULL;

  if (with_plugins)
    path = g_strjoin (":", etu_plugin_dir ("unconfined"), etu_plugin_dir ("jsonl"), NULL);
  g_subprocess_launcher_setenv (l, "SBX_PLUGIN_PATH", with_plugins ? path : "/dev/null", TRUE);
  g_subprocess_launcher_setenv (l, "TMPDIR", fx->tree.scratch, TRUE);
  g_subprocess_launcher_unsetenv (l, "SBX_BACKEND");
  g_subprocess_launcher_set_cwd (l, fx->tree.ws);
  return l;
}

typedef struct
{
  int   status;
  char *out;
  char *err;
} Outcome;

static void
outcome_clear (Outcome *o)
{
  g_free (o->out);
  g_free (o->err);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Outcome, outcome_clear)

/* Runs `sbx run ARGS...` to completion. */
static void
run_sbx (Fixture    *fx,
         Outcome    *o,
         const char *stdin_text,
         gboolean    with_plugins,
         ...)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  g_autoptr(GSubprocessLauncher) l = NULL;
  g_autoptr(GSubprocess) proc = NULL;
  g_autoptr(GError) error = NULL;
  va_list args;

  g_ptr_array_add (argv, (gpointer) g_getenv ("SBX_TEST_SBX"));
  g_ptr_array_add (argv, (gpointer) "run");
  va_start (args, with_plugins);
  for (const char *arg = va_arg (args, const char *); arg != NULL; arg = va_arg (args, const char *))
    g_ptr_array_add (argv, (gpointer) arg);
  va_end (args);
  g_ptr_array_add (argv, NULL);

  l = launcher (fx, G_SUBPROCESS_FLAGS_STDIN_PIPE | G_SUBPROCESS_FLAGS_STDOUT_PIPE
                | G_SUBPROCESS_FLAGS_STDERR_PIPE, with_plugins);
  proc = g_subprocess_launcher_spawnv (l, (const char *const *) argv->pdata, &error);
  g_assert_no_error (error);
  g_subprocess_communicate_utf8 (proc, stdin_text, NULL, &o->out, &o->err, &error);
  g_assert_no_error (error);
  g_assert_true (g_subprocess_get_if_exited (proc));
  o->status = g_subprocess_get_exit_status (proc);
}

#define assert_contains(haystack, needle) \
  G_STMT_START { \
    if (strstr ((haystack), (needle)) == NULL) \
      g_error ("“%s” does not contain “%s”", (haystack), (needle)); \
  } G_STMT_END

static void
test_exit_statuses (Fixture       *fx,
                    gconstpointer  data)
{
  const char *p = fx->unconfined_profile;
  g_autofree char *not_exec = etu_write_file (fx->tree.ws, "not-exec", "#!/bin/sh\n");

  {
    g_auto(Outcome) o = { 0 };

    run_sbx (fx, &o, NULL, TRUE, "--profile", p, "--", "sh", "-c", "echo out; echo err >&2; exit 7", NULL);
    g_assert_cmpint (o.status, ==, 7);
    g_assert_cmpstr (o.out, ==, "out\n");
    g_assert_cmpstr (o.err, ==, "err\n");
  }
  {
    g_auto(Outcome) o = { 0 };

    /* Without "--" too; options after the command are the command's. */
    run_sbx (fx, &o, NULL, TRUE, "--profile", p, "echo", "-n", "--profile", NULL);
    g_assert_cmpint (o.status, ==, 0);
    g_assert_cmpstr (o.out, ==, "--profile");
  }
  {
    g_auto(Outcome) o = { 0 };

    run_sbx (fx, &o, NULL, TRUE, "--profile", p, "--", "sh", "-c", "kill -TERM $$", NULL);
    g_assert_cmpint (o.status, ==, 128 + SIGTERM);
  }
  {
    g_auto(Outcome) o = { 0 };

    run_sbx (fx, &o, NULL, TRUE, "--profile", p, "--", "sbx-no-such-command", NULL);
    g_assert_cmpint (o.status, ==, 127);
    assert_contains (o.err, "sbx: run: sbx-no-such-command: command not found");
  }
  {
    g_auto(Outcome) o = { 0 };

    run_sbx (fx, &o, NULL, TRUE, "--profile", p, "--", not_exec, NULL);
    g_assert_cmpint (o.status, ==, 126);
    assert_contains (o.err, "not executable");
  }
  {
    g_auto(Outcome) o = { 0 };

    run_sbx (fx, &o, "piped through\n", TRUE, "--profile", p, "--", "cat", NULL);
    g_assert_cmpint (o.status, ==, 0);
    g_assert_cmpstr (o.out, ==, "piped through\n");
  }
}

static void
test_refusals (Fixture       *fx,
               gconstpointer  data)
{
  const char *p = fx->unconfined_profile;
  g_autofree char *marker = g_build_filename (fx->tree.ws, "marker", NULL);
  /* Egress options that cannot be honoured: refused before anything runs
   * (the working cases are in tests/test-executor-egress.c, which has the
   * Linux and egress plugins); an upstream URL's password never appears. */
  static const char *const egress[][3] = {
    { "--allow-host", "example.com", "--allow-host example.com" },
    { "--allow-host", "[::1:443", "--allow-host [::1:443" },
    { "--allow-host", "example.com:443", "needs a sandboxed profile" },
    { "--upstream-proxy", "socks5://alice:s3cr3t@proxy.example:1080", "http or https" },
    { "--upstream-proxy", "http://alice:s3cr3t@proxy.example:8080", "needs a sandboxed profile" },
    { "--upstream-proxy", "env:SBX_TEST_NO_SUCH_VARIABLE", "SBX_TEST_NO_SUCH_VARIABLE is not set" },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (egress); i++)
    {
      g_auto(Outcome) o = { 0 };

      run_sbx (fx, &o, NULL, TRUE, "--profile", p, egress[i][0], egress[i][1], "--", "touch", marker, NULL);
      g_test_message ("%s %s: %s", egress[i][0], egress[i][1], o.err);
      g_assert_cmpint (o.status, ==, 125);
      assert_contains (o.err, egress[i][2]);
      g_assert_null (strstr (o.err, "s3cr3t"));
      g_assert_false (g_file_test (marker, G_FILE_TEST_EXISTS));
    }

  {
    g_auto(Outcome) o = { 0 };

    run_sbx (fx, &o, NULL, TRUE, "--profile", p, NULL);
    g_assert_cmpint (o.status, ==, 125);
    assert_contains (o.err, "no command");
  }
  {
    g_auto(Outcome) o = { 0 };

    run_sbx (fx, &o, NULL, TRUE, "--profile", p, "--max-output", "12Q", "--", "true", NULL);
    g_assert_cmpint (o.status, ==, 125);
    assert_contains (o.err, "--max-output");
  }
  {
    g_auto(Outcome) o = { 0 };

    run_sbx (fx, &o, NULL, TRUE, "--profile", p, "--timeout", "-1", "--", "true", NULL);
    g_assert_cmpint (o.status, ==, 125);
    assert_contains (o.err, "--timeout");
  }
  {
    g_auto(Outcome) o = { 0 };

    run_sbx (fx, &o, NULL, TRUE, "--profile", "/nonexistent/profile.json", "--", "true", NULL);
    g_assert_cmpint (o.status, ==, 125);
    assert_contains (o.err, "/nonexistent/profile.json");
  }
  {
    g_auto(Outcome) o = { 0 };

    run_sbx (fx, &o, NULL, TRUE, "--profile", p, "--network", "sometimes", "--", "true", NULL);
    g_assert_cmpint (o.status, ==, 125);
    assert_contains (o.err, "--network");
  }
  {
    g_auto(Outcome) o = { 0 };

    /* An Unconfined profile needs every root at allow: --read narrows. */
    run_sbx (fx, &o, NULL, TRUE, "--profile", p, "--read", fx->tree.scratch, "--", "touch", marker, NULL);
    g_assert_cmpint (o.status, ==, 125);
    g_assert_false (g_file_test (marker, G_FILE_TEST_EXISTS));
  }
  {
    g_auto(Outcome) o = { 0 };

    /* The positive control for the refusals: the same command runs. */
    run_sbx (fx, &o, NULL, TRUE, "--profile", p, "--write", fx->tree.tmp, "--network", "allow",
             "--", "touch", marker, NULL);
    g_assert_cmpint (o.status, ==, 0);
    g_assert_true (g_file_test (marker, G_FILE_TEST_EXISTS));
  }
}

/* The default profile is Sandboxed: on a host without a sandboxing backend
 * sbx refuses (125), names why, and runs nothing. */
static void
test_sandboxed_without_backend (Fixture       *fx,
                                gconstpointer  data)
{
  g_autofree char *marker = g_build_filename (fx->tree.ws, "marker", NULL);

  for (guint with_plugins = 0; with_plugins < 2; with_plugins++)
    {
      g_auto(Outcome) o = { 0 };

      run_sbx (fx, &o, NULL, with_plugins, "--", "touch", marker, NULL);
      g_assert_cmpint (o.status, ==, 125);
      assert_contains (o.err, "no sandboxing backend");
      g_assert_false (g_file_test (marker, G_FILE_TEST_EXISTS));
    }
}

static void
test_max_output (Fixture       *fx,
                 gconstpointer  data)
{
  const char *p = fx->unconfined_profile;
  gint64 start = g_get_monotonic_time ();

  {
    g_auto(Outcome) o = { 0 };

    run_sbx (fx, &o, NULL, TRUE, "--profile", p, "--max-output", "1K", "--", "yes", NULL);
    g_assert_cmpint (o.status, ==, 128 + SIGKILL);
    g_assert_cmpuint (strlen (o.out), ==, 1024);
    assert_contains (o.err, "output limit of 1024 bytes");
    /* on a line of its own, whatever the last byte passed on was */
    assert_contains (o.err, "\nsbx: run: output limit of 1024 bytes");
    g_assert_cmpint (g_get_monotonic_time () - start, <, 2 * G_USEC_PER_SEC);
  }
  {
    g_auto(Outcome) o = { 0 };

    /* Under the limit nothing changes. */
    run_sbx (fx, &o, NULL, TRUE, "--profile", p, "--max-output", "100", "--", "echo", "small", NULL);
    g_assert_cmpint (o.status, ==, 0);
    g_assert_cmpstr (o.out, ==, "small\n");
    g_assert_cmpstr (o.err, ==, "");
  }
}

static void
test_timeout (Fixture       *fx,
              gconstpointer  data)
{
  g_auto(Outcome) o = { 0 };
  gint64 start = g_get_monotonic_time ();

  run_sbx (fx, &o, NULL, TRUE, "--profile", fx->unconfined_profile, "--timeout", "0.2",
           "--", "sh", "-c", "sleep 100 & sleep 100", NULL);
  g_assert_cmpint (o.status, ==, 124);
  assert_contains (o.err, "timed out");
  g_assert_cmpint (g_get_monotonic_time () - start, <, 2 * G_USEC_PER_SEC);
}

static void
test_report (Fixture       *fx,
             gconstpointer  data)
{
  {
    g_auto(Outcome) o = { 0 };

    run_sbx (fx, &o, NULL, TRUE, "--profile", fx->unconfined_profile, "--report", "--", "true", NULL);
    g_assert_cmpint (o.status, ==, 0);
    assert_contains (o.err, "unconfined");
    assert_contains (o.err, "none");
  }
  {
    g_auto(Outcome) o = { 0 };
    g_autoptr(JsonParser) parser = json_parser_new ();
    g_autoptr(GError) error = NULL;
    g_auto(GStrv) lines = NULL;
    JsonObject *report;

    run_sbx (fx, &o, NULL, TRUE, "--profile", fx->unconfined_profile, "--report=json",
             "--", "sh", "-c", "echo after >&2", NULL);
    g_assert_cmpint (o.status, ==, 0);
    /* The report comes first, as one JSON object on its own line. */
    lines = g_strsplit (o.err, "\n", 2);
    g_assert_true (json_parser_load_from_data (parser, lines[0], -1, &error));
    g_assert_no_error (error);
    report = json_node_get_object (json_parser_get_root (parser));
    g_assert_cmpstr (json_object_get_string_member (report, "level"), ==, "none");
    g_assert_cmpstr (json_object_get_string_member (report, "backend"), ==, "unconfined");
    g_assert_true (json_object_has_member (report, "guarantees"));
    g_assert_true (json_object_has_member (report, "entries"));
    g_assert_cmpstr (lines[1], ==, "after\n");
  }
}

/* Output streams through live, and a signal to sbx kills the tree. */
static void
test_stream_and_signal (Fixture       *fx,
                        gconstpointer  data)
{
  g_autoptr(GSubprocessLauncher) l = launcher (fx, G_SUBPROCESS_FLAGS_STDOUT_PIPE
                                               | G_SUBPROCESS_FLAGS_STDERR_PIPE, TRUE);
  g_autoptr(GSubprocess) proc = NULL;
  g_autoptr(GDataInputStream) lines = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *first = NULL;
  g_autofree char *pid_file = g_build_filename (fx->tree.ws, "bg.pid", NULL);
  g_autofree char *pid_text = NULL;
  g_autofree char *script = g_strdup_printf ("sleep 100 & echo $! > '%s'; echo first; sleep 100",
                                             pid_file);
  gint64 start = g_get_monotonic_time ();

  proc = g_subprocess_launcher_spawn (l, &error, g_getenv ("SBX_TEST_SBX"), "run",
                                      "--profile", fx->unconfined_profile, "--",
                                      "sh", "-c", script, NULL);
  g_assert_no_error (error);
  lines = g_data_input_stream_new (g_subprocess_get_stdout_pipe (proc));
  first = g_data_input_stream_read_line (lines, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (first, ==, "first");
  g_assert_cmpint (g_get_monotonic_time () - start, <, 5 * G_USEC_PER_SEC);
  pid_text = etu_wait_for_line (pid_file, 5000);
  g_assert_nonnull (pid_text);
  g_assert_false (etu_pid_is_dead (atoi (pid_text)));

  g_subprocess_send_signal (proc, SIGTERM);
  g_assert_true (g_subprocess_wait (proc, NULL, &error));
  g_assert_true (g_subprocess_get_if_exited (proc));
  g_assert_cmpint (g_subprocess_get_exit_status (proc), ==, 128 + SIGTERM);
  g_assert_true (etu_pid_is_dead (atoi (pid_text)));
}

/* A Gated command: refused (125, saying how to approve) without a grant;
 * --approve command.start.v1 runs it once and the report lists the grant;
 * --approve of something the profile does not gate is refused; --ask
 * refuses without a terminal and asks on one. */
static void
test_grants (Fixture       *fx,
             gconstpointer  data)
{
  g_autofree char *p = etu_write_file (fx->tree.tmp, "gated.json", gated_json);
  g_autofree char *marker = g_build_filename (fx->tree.ws, "marker", NULL);

  {
    g_auto(Outcome) o = { 0 };

    run_sbx (fx, &o, NULL, TRUE, "--profile", p, "--", "touch", marker, NULL);
    g_assert_cmpint (o.status, ==, 125);
    assert_contains (o.err, "--approve command.start.v1");
    assert_contains (o.err, "--ask");
    g_assert_false (g_file_test (marker, G_FILE_TEST_EXISTS));
  }
  {
    g_auto(Outcome) o = { 0 };

    run_sbx (fx, &o, NULL, TRUE, "--profile", p, "--approve", "filesystem.host.read.v1:host:*", "--",
             "touch", marker, NULL);
    g_assert_cmpint (o.status, ==, 125);
    assert_contains (o.err, "already allows");
    g_assert_false (g_file_test (marker, G_FILE_TEST_EXISTS));
  }
  {
    g_auto(Outcome) o = { 0 };

    run_sbx (fx, &o, NULL, TRUE, "--profile", p, "--ask", "--", "touch", marker, NULL);
    g_assert_cmpint (o.status, ==, 125);
    assert_contains (o.err, "--ask needs a terminal");
    g_assert_false (g_file_test (marker, G_FILE_TEST_EXISTS));
  }
  {
    g_auto(Outcome) o = { 0 };

    run_sbx (fx, &o, NULL, TRUE, "--profile", p, "--approve", "command.start.v1", "--report", "--",
             "touch", marker, NULL);
    g_assert_cmpint (o.status, ==, 0);
    g_assert_true (g_file_test (marker, G_FILE_TEST_EXISTS));
    assert_contains (o.err, "Grants spent:\n  command.start.v1 touch ");
    assert_contains (o.err, "authorized this start");
  }
  g_assert_cmpint (g_unlink (marker), ==, 0);
  /* --ask on a terminal: "n" refuses (the run then needs the grant), "y"
   * approves. */
  for (int answer = 0; answer < 2; answer++)
    {
      g_autoptr(GSubprocessLauncher) l = launcher (fx, G_SUBPROCESS_FLAGS_STDERR_PIPE, TRUE);
      g_autoptr(GSubprocess) proc = NULL;
      g_autoptr(GError) error = NULL;
      g_autofree char *err = NULL;
      const char *argv[] = { g_getenv ("SBX_TEST_SBX"), "run", "--profile", p, "--ask", "--", "touch",
                             marker, NULL };
      int master = posix_openpt (O_RDWR | O_NOCTTY | O_CLOEXEC);
      int slave;

      g_assert_cmpint (master, >=, 0);
      g_assert_cmpint (grantpt (master), ==, 0);
      g_assert_cmpint (unlockpt (master), ==, 0);
      slave = open (ptsname (master), O_RDWR | O_NOCTTY | O_CLOEXEC);
      g_assert_cmpint (slave, >=, 0);
      g_assert_cmpint (write (master, answer ? "y\n" : "n\n", 2), ==, 2);
      g_subprocess_launcher_take_stdin_fd (l, slave);
      proc = g_subprocess_launcher_spawnv (l, argv, &error);
      g_assert_no_error (error);
      g_subprocess_communicate_utf8 (proc, NULL, NULL, NULL, &err, &error);
      g_assert_no_error (error);
      close (master);
      assert_contains (err, "approve command.start.v1");
      g_assert_cmpint (g_subprocess_get_exit_status (proc), ==, answer ? 0 : 125);
      g_assert_cmpint (g_file_test (marker, G_FILE_TEST_EXISTS), ==, answer);
    }
}

/* The unconfined backend honours the caller's ignored signals too: the
 * command's SigIgn under sbx equals a plain child's (the control), with
 * SIGINT ignored around sbx and without. */
static char *
sig_ign_of (Fixture    *fx,
            const char *trap,
            gboolean    through_sbx)
{
  g_autoptr(GSubprocessLauncher) l = launcher (fx, G_SUBPROCESS_FLAGS_STDOUT_PIPE, TRUE);
  g_autoptr(GSubprocess) proc = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *script = g_strdup_printf ("%s exec %s grep SigIgn /proc/self/status", trap,
                                             through_sbx ? "\"$0\" run --profile \"$1\" --" : "");
  const char *argv[] = { "/bin/sh", "-c", script, g_getenv ("SBX_TEST_SBX"), fx->unconfined_profile, NULL };
  char *out = NULL;

  proc = g_subprocess_launcher_spawnv (l, argv, &error);
  g_assert_no_error (error);
  g_assert_true (g_subprocess_communicate_utf8 (proc, NULL, NULL, &out, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpint (g_subprocess_get_exit_status (proc), ==, 0);
  return out;
}

static void
test_ignored_signals (Fixture       *fx,
                      gconstpointer  data)
{
  g_autofree char *plain_trap = sig_ign_of (fx, "trap '' INT;", FALSE);
  g_autofree char *sbx_trap = sig_ign_of (fx, "trap '' INT;", TRUE);
  g_autofree char *plain = sig_ign_of (fx, "", FALSE);
  g_autofree char *sbx = sig_ign_of (fx, "", TRUE);

  g_assert_true (g_str_has_prefix (plain_trap, "SigIgn:"));
  g_assert_true (g_ascii_strtoull (plain_trap + strlen ("SigIgn:"), NULL, 16) & (1u << (SIGINT - 1)));
  g_assert_cmpstr (sbx_trap, ==, plain_trap);
  g_assert_cmpstr (sbx, ==, plain);
}

/* --allow-host of a target sbx never reaches (a cloud metadata address, in
 * any form) is refused when the option is parsed: 125, the target and the
 * reason named, nothing run. */
static void
test_allow_host_metadata (Fixture       *fx,
                          gconstpointer  data)
{
  static const char *const never[] = {
    "169.254.169.254:80", "[::ffff:169.254.169.254]:80", "[fd00:ec2::254]:443", "2852039166:80",
  };
  g_autofree char *marker = g_build_filename (fx->tree.ws, "marker", NULL);

  for (gsize i = 0; i < G_N_ELEMENTS (never); i++)
    {
      g_auto(Outcome) o = { 0 };
      g_autofree char *named = g_strdup_printf ("--allow-host %s: ", never[i]);

      run_sbx (fx, &o, NULL, TRUE, "--allow-host", never[i], "--", "touch", marker, NULL);
      g_assert_cmpint (o.status, ==, 125);
      assert_contains (o.err, named);
      assert_contains (o.err, "cloud metadata address");
      assert_contains (o.err, "never reachable");
      g_assert_false (g_file_test (marker, G_FILE_TEST_EXISTS));
    }
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

#define ADD(path, fn) g_test_add (path, Fixture, NULL, fixture_setup, fn, fixture_teardown)
  ADD ("/cli/run/exit-statuses", test_exit_statuses);
  ADD ("/cli/run/refusals", test_refusals);
  ADD ("/cli/run/grants", test_grants);
  ADD ("/cli/run/sandboxed-without-backend", test_sandboxed_without_backend);
  ADD ("/cli/run/max-output", test_max_output);
  ADD ("/cli/run/timeout", test_timeout);
  ADD ("/cli/run/report", test_report);
  ADD ("/cli/run/stream-and-signal", test_stream_and_signal);
  ADD ("/cli/run/ignored-signals", test_ignored_signals);
  ADD ("/cli/run/allow-host-metadata", test_allow_host_metadata);
#undef ADD

  return g_test_run ();
}
