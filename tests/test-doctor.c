/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * `sbx doctor [--json]`, run as a program (SBX_TEST_SBX) with SBX_PLUGIN_PATH
 * pointing at build directories of mock plugins (SBX_TEST_MOCK_PLUGIN_DIR)
 * or of the real plugins (SBX_TEST_PLUGIN_DIRS).
 */
#include <glib.h>
#include <json-glib/json-glib.h>
#include <string.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct
{
  int   status;
  char *out;
  char *err;
} DoctorRun;

static void
doctor_run_clear (DoctorRun *run)
{
  g_clear_pointer (&run->out, g_free);
  g_clear_pointer (&run->err, g_free);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (DoctorRun, doctor_run_clear)

static char *
mock_path (const char *const *mocks)
{
  g_autoptr(GPtrArray) dirs = g_ptr_array_new_with_free_func (g_free);

  for (guint i = 0; mocks[i] != NULL; i++)
    g_ptr_array_add (dirs, g_build_filename (g_getenv ("SBX_TEST_MOCK_PLUGIN_DIR"), mocks[i], NULL));
  g_ptr_array_add (dirs, NULL);
  return g_strjoinv (":", (char **) dirs->pdata);
}

/* Runs `sbx doctor ARGS` with SBX_PLUGIN_PATH=@plugin_path (and SBX_BACKEND
 * when @backend is not NULL). */
static void
run_doctor_env (const char *plugin_path,
                const char *backend,
                const char *arg,
                const char *probe_log,
                DoctorRun  *run)
{
  const char *sbx = g_getenv ("SBX_TEST_SBX");
  const char *argv[] = { sbx, "doctor", arg, NULL };
  g_auto(GStrv) envp = g_get_environ ();
  g_autoptr(GError) error = NULL;
  int wait_status;

  g_assert_nonnull (sbx);
  envp = g_environ_setenv (envp, "SBX_PLUGIN_PATH", plugin_path, TRUE);
  envp = backend != NULL ? g_environ_setenv (envp, "SBX_BACKEND", backend, TRUE)
                         : g_environ_unsetenv (envp, "SBX_BACKEND");
  envp = probe_log != NULL ? g_environ_setenv (envp, "MOCK_PROBE_LOG", probe_log, TRUE)
                           : g_environ_unsetenv (envp, "MOCK_PROBE_LOG");
  g_assert_true (g_spawn_sync (NULL, (char **) argv, envp, G_SPAWN_DEFAULT, NULL, NULL,
                               &run->out, &run->err, &wait_status, &error));
  g_assert_no_error (error);
  g_assert_true (WIFEXITED (wait_status));
  run->status = WEXITSTATUS (wait_status);
}

static void
run_doctor (const char *plugin_path,
            const char *backend,
            const char *arg,
            DoctorRun  *run)
{
  run_doctor_env (plugin_path, backend, arg, NULL, run);
}

static JsonObject *
parse_object (JsonParser *parser,
              const char *text)
{
  g_autoptr(GError) error = NULL;

  g_assert_true (json_parser_load_from_data (parser, text, -1, &error));
  g_assert_no_error (error);
  return json_node_get_object (json_parser_get_root (parser));
}

static JsonObject *
find_named (JsonArray  *array,
            const char *name)
{
  for (guint i = 0; i < json_array_get_length (array); i++)
    {
      JsonObject *object = json_array_get_object_element (array, i);

      if (g_str_equal (json_object_get_string_member (object, "name"), name))
        return object;
    }
  return NULL;
}

static const char *const mixed_mocks[] = { "ok", "abi-too-new", "probe-short", "probe-fails", NULL };

/* A plugin that requires a host feature this library does not implement
 * (it advertises only what it implements) is refused, visibly; one that
 * requires rule fds and one that requires the egress feature (both
 * implemented) load.  Every known feature is implemented now, so the refused
 * one asks for a bit beyond them. */
static const char *const feature_mocks[] = { "ok", "requires-rule-fds", "egress",
                                             "requires-unknown-feature", NULL };

static void
test_doctor_unimplemented_feature (void)
{
  g_autofree char *path = mock_path (feature_mocks);
  g_auto(DoctorRun) run = { 0 };

  run_doctor (path, NULL, NULL, &run);
  g_assert_cmpint (run.status, ==, 0);
  g_assert_null (strstr (run.out, "  mock-requires-rule-fds: REFUSED\n"));
  g_assert_nonnull (strstr (run.out, "  mock-requires-rule-fds 0.1.0 (LGPL-2.1-or-later): loaded\n"));
  g_assert_null (strstr (run.out, "  mock-egress: REFUSED\n"));
  g_assert_nonnull (strstr (run.out, "  mock-requires-unknown-feature: REFUSED\n"));
  g_assert_nonnull (strstr (run.out, "that this library does not know"));
  g_assert_nonnull (strstr (run.out, "  mock-egress 0.1.0 (LGPL-2.1-or-later): loaded\n"));
  g_assert_nonnull (strstr (run.out, "Egress routes:\n  mock-egress (plugin mock-egress, priority 0)\n"));
  /* The positive control next to them loads and is selected. */
  g_assert_nonnull (strstr (run.out, "  backend:    mock-ok\n"));
}

/* A probe that fails is not cached (a later call probes again), so doctor
 * takes each backend's probe once and prints every section from it: the
 * failing mock is probed once by the selection preview and once for the
 * backends list and the two limit lines together (it was four times, once
 * per section).  Positive control: the failure is still printed, and the
 * log does record the probes. */
static void
test_doctor_probes_once (void)
{
  static const char *const mocks[] = { "ok", "probe-fails", NULL };
  g_autofree char *path = mock_path (mocks);
  g_autofree char *tmp = g_dir_make_tmp ("sbx-test-doctor-XXXXXX", NULL);
  g_autofree char *log_path = g_build_filename (tmp, "probes", NULL);
  g_autofree char *log = NULL;
  g_auto(DoctorRun) run = { 0 };

  run_doctor_env (path, NULL, NULL, log_path, &run);
  g_assert_cmpint (run.status, ==, 0);
  g_assert_nonnull (strstr (run.out, "    probe FAILED: plugin 'mock-probe-fails', extension 'mock-probe-fails': "));
  g_assert_true (g_file_get_contents (log_path, &log, NULL, NULL));
  g_assert_cmpstr (log, ==, "probe\nprobe\n");
  g_assert_cmpint (g_unlink (log_path), ==, 0);
  g_assert_cmpint (g_rmdir (tmp), ==, 0);
}

static void
test_doctor_text (void)
{
  g_autofree char *path = mock_path (mixed_mocks);
  g_auto(DoctorRun) run = { 0 };

  run_doctor (path, NULL, NULL, &run);
  g_assert_cmpint (run.status, ==, 0);
  g_assert_cmpstr (run.err, ==, "");
  g_assert_true (g_str_has_prefix (run.out, "sbx 0.1.0\n\nPlugin directories (in search order):\n"));
  /* Refused plugin, with why. */
  g_assert_nonnull (strstr (run.out, "  mock-abi-too-new: REFUSED\n"));
  g_assert_nonnull (strstr (run.out, "speaks plugin ABI version 2; this library speaks version 1"));
  /* Each backend's probe, in selection order, with entries and hints. */
  g_assert_nonnull (strstr (run.out, "Backends (in selection order):\n"
                                     "  mock-probe-short (plugin mock-probe-short, priority 100)\n"
                                     "    level:      full\n"
                                     "    guarantees: process-boundary, env-scrub\n"
                                     "      unenforced write-boundary: mock: no filesystem confinement. Hint: "));
  g_assert_nonnull (strstr (run.out, "    probe FAILED: plugin 'mock-probe-fails', extension 'mock-probe-fails': "
                                     "probe failed: mock mechanism /dev/mock is absent. Hint: "));
  g_assert_nonnull (strstr (run.out, "Egress routes:\n  (none loaded)\n"));
  g_assert_nonnull (strstr (run.out, "Reporters:\n  mock-ok-reporter (plugin mock-ok, priority 0)\n"));
  /* What the host gives a default Sandboxed profile. */
  g_assert_nonnull (strstr (run.out, "Default Sandboxed profile (requires write-boundary, read-boundary, "
                                     "env-scrub, network-boundary):\n  backend:    mock-ok\n  level:      full\n"));
  g_assert_nonnull (strstr (run.out, "    mock-probe-short: missing required guarantees: write-boundary, "
                                     "read-boundary, network-boundary (level full)\n"));
}

static void
test_doctor_json (void)
{
  g_autofree char *path = mock_path (mixed_mocks);
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_auto(DoctorRun) run = { 0 };
  JsonObject *root;
  JsonObject *object;
  JsonObject *sandboxed;
  JsonObject *report;
  JsonArray *rejected;

  run_doctor (path, NULL, "--json", &run);
  g_assert_cmpint (run.status, ==, 0);
  g_assert_true (g_str_has_suffix (run.out, "}\n"));
  g_assert_true (strchr (run.out, '\n') == run.out + strlen (run.out) - 1);  /* one line */
  root = parse_object (parser, run.out);
  g_assert_cmpint (json_object_get_int_member (root, "schema"), ==, 1);
  /* 4 mock directories plus the compiled-in plugin directory. */
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (root, "directories")), ==, 5);

  object = find_named (json_object_get_array_member (root, "plugins"), "mock-abi-too-new");
  g_assert_nonnull (object);
  g_assert_cmpstr (json_object_get_string_member (object, "state"), ==, "refused");
  g_assert_cmpstr (json_object_get_string_member (object, "error_code"), ==, "abi-mismatch");

  object = find_named (json_object_get_array_member (root, "backends"), "mock-probe-short");
  g_assert_nonnull (object);
  object = json_object_get_object_member (object, "probe");
  g_assert_true (json_object_get_boolean_member (object, "ok"));
  g_assert_cmpstr (json_object_get_string_member (object, "level"), ==, "full");
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (object, "guarantees")), ==, 2);
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (object, "entries")), ==, 1);

  sandboxed = json_object_get_object_member (root, "default_sandboxed");
  g_assert_true (json_object_get_boolean_member (sandboxed, "ok"));
  g_assert_true (json_object_get_null_member (sandboxed, "error"));
  report = json_object_get_object_member (sandboxed, "report");
  g_assert_cmpint (json_object_get_int_member (report, "schema"), ==, 1);
  g_assert_cmpstr (json_object_get_string_member (report, "backend"), ==, "mock-ok");
  g_assert_cmpstr (json_object_get_string_member (report, "level"), ==, "full");
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (report, "required")), ==, 4);
  rejected = json_object_get_array_member (report, "rejected");
  g_assert_cmpuint (json_array_get_length (rejected), ==, 3);
}

static void
test_doctor_no_backend (void)
{
  static const char *const mocks[] = { "probe-short", "init-fails", NULL };
  g_autofree char *path = mock_path (mocks);
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_auto(DoctorRun) text = { 0 };
  g_auto(DoctorRun) json = { 0 };
  JsonObject *sandboxed;

  run_doctor (path, NULL, NULL, &text);
  g_assert_cmpint (text.status, ==, 1);
  g_assert_nonnull (strstr (text.out, "  NO BACKEND can run it on this host: no backend can run this Sandboxed profile; "
                                      "mock-probe-short: missing required guarantees"));
  g_assert_nonnull (strstr (text.out, "  mock-init-fails: REFUSED\n"));
  g_assert_nonnull (strstr (text.out, "init failed with status 2 (unavailable)"));

  run_doctor (path, NULL, "--json", &json);
  g_assert_cmpint (json.status, ==, 1);
  sandboxed = json_object_get_object_member (parse_object (parser, json.out), "default_sandboxed");
  g_assert_false (json_object_get_boolean_member (sandboxed, "ok"));
  g_assert_nonnull (strstr (json_object_get_string_member (sandboxed, "error"), "no backend can run"));
  g_assert_true (json_object_get_null_member (json_object_get_object_member (sandboxed, "report"), "backend"));
}

static void
test_doctor_forced_backend (void)
{
  g_autofree char *path = mock_path (mixed_mocks);
  g_auto(DoctorRun) missing = { 0 };
  g_auto(DoctorRun) help = { 0 };

  run_doctor (path, "no-such-backend", NULL, &missing);
  g_assert_cmpint (missing.status, ==, 1);
  g_assert_nonnull (strstr (missing.out, "NO BACKEND can run it on this host: SBX_BACKEND=no-such-backend: "
                                         "no loaded plugin provides a backend of that name"));

  run_doctor (path, "help", NULL, &help);
  g_assert_cmpint (help.status, ==, 1);
  g_assert_nonnull (strstr (help.out, "SBX_BACKEND=help: candidates in priority order:\n"
                                      "  mock-probe-short (plugin mock-probe-short, priority 100): level full"));
}

/* The real plugins of this build pass the loader's validation. */
static void
test_doctor_real_plugins (void)
{
  const char *dirs = g_getenv ("SBX_TEST_PLUGIN_DIRS");
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_auto(DoctorRun) run = { 0 };
  JsonArray *plugins;
  g_auto(GStrv) expected = NULL;

  if (dirs == NULL || dirs[0] == '\0')
    {
      g_test_skip ("no plugin is enabled in this build");
      return;
    }
  expected = g_strsplit (dirs, ":", -1);
  run_doctor (dirs, NULL, "--json", &run);
  plugins = json_object_get_array_member (parse_object (parser, run.out), "plugins");
  g_assert_cmpuint (json_array_get_length (plugins), ==, g_strv_length (expected));
  for (guint i = 0; i < json_array_get_length (plugins); i++)
    {
      JsonObject *plugin = json_array_get_object_element (plugins, i);

      g_test_message ("plugin %s: %s", json_object_get_string_member (plugin, "name"),
                      json_object_get_string_member (plugin, "state"));
      g_assert_cmpstr (json_object_get_string_member (plugin, "state"), ==, "loaded");
    }
}

/* Which mechanism bounds processes and memory sandbox-wide, for root and for
 * an unprivileged user, as the Linux backend probes it: both said, in text
 * and JSON; the caller's own one agrees with what this host mounts. */
static void
test_doctor_resource_limits (void)
{
  const char *dirs = g_getenv ("SBX_TEST_PLUGIN_DIRS");
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_auto(DoctorRun) text = { 0 };
  g_auto(DoctorRun) json = { 0 };
  g_autofree char *mounts = NULL;
  JsonObject *limits, *root, *user;
  gboolean v1_both;

  if (dirs == NULL || strstr (dirs, "plugins/linux") == NULL)
    {
      g_test_skip ("the Linux backend is not built");
      return;
    }
  run_doctor (dirs, NULL, NULL, &text);
  g_assert_nonnull (strstr (text.out, "\nSandbox-wide limits (processes, memory):\n  root (linux-"));
  g_assert_nonnull (strstr (text.out, "\n  unprivileged user (linux-"));
  run_doctor (dirs, NULL, "--json", &json);
  limits = json_object_get_object_member (parse_object (parser, json.out), "resource_limits");
  root = json_object_get_object_member (limits, "root");
  user = json_object_get_object_member (limits, "user");
  g_assert_nonnull (root);
  g_assert_nonnull (user);
  g_test_message ("root: %s", json_object_get_string_member (root, "detail"));
  g_test_message ("user: %s", json_object_get_string_member (user, "detail"));

  g_assert_true (g_file_get_contents ("/proc/self/mounts", &mounts, NULL, NULL));
  v1_both = strstr (mounts, " cgroup rw") != NULL && strstr (mounts, ",pids") != NULL
            && strstr (mounts, ",memory") != NULL;
  if (v1_both && strstr (mounts, "cgroup2") != NULL
      && strstr (json_object_get_string_member (root, "detail"), "cgroup v2") == NULL)
    g_assert_true (g_str_has_prefix (json_object_get_string_member (root, "detail"), "cgroup v1"));
  if (g_str_has_prefix (json_object_get_string_member (user, "detail"), "none"))
    {
      g_assert_cmpstr (json_object_get_string_member (user, "status"), ==, "unenforced");
      g_assert_nonnull (strstr (json_object_get_string_member (user, "detail"), "rlimit fallback"));
      g_assert_nonnull (strstr (json_object_get_string_member (user, "detail"), "Hint:"));
    }
}

static void
test_doctor_usage (void)
{
  g_auto(DoctorRun) run = { 0 };
  g_auto(DoctorRun) help = { 0 };

  run_doctor ("/dev/null", NULL, "extra", &run);
  g_assert_cmpint (run.status, ==, 2);
  g_assert_true (g_str_has_prefix (run.err, "sbx: doctor takes no arguments"));

  run_doctor ("/dev/null", NULL, "--help", &help);
  g_assert_cmpint (help.status, ==, 0);
  g_assert_nonnull (strstr (help.out, "--json"));
}

/* `sbx doctor` lists the stale scratch of dead sets in $TMPDIR
 * (the scratch root of `sbx run`) and `--clean` removes it; a live set's
 * directory (its marker locked, here by this process) is neither listed nor
 * touched. */
static void
test_doctor_stale_scratch (void)
{
  g_autofree char *scratch = g_dir_make_tmp ("sbx-test-doctor-XXXXXX", NULL);
  g_autofree char *dead = g_build_filename (scratch, "sandbox-executors-DEAD01", NULL);
  g_autofree char *live = g_build_filename (scratch, "sandbox-executors-LIVE01", NULL);
  g_autofree char *dead_marker = g_build_filename (dead, ".sbx-live", NULL);
  g_autofree char *live_marker = g_build_filename (live, ".sbx-live", NULL);
  g_autofree char *old_tmpdir = g_strdup (g_getenv ("TMPDIR"));
  DoctorRun run = { 0 };
  int lock_fd;

  g_assert_nonnull (scratch);
  g_assert_cmpint (g_mkdir (dead, 0700), ==, 0);
  g_assert_cmpint (g_mkdir (live, 0700), ==, 0);
  g_assert_true (g_file_set_contents (dead_marker, "", 0, NULL));
  g_assert_true (g_file_set_contents (live_marker, "", 0, NULL));
  lock_fd = open (live_marker, O_RDONLY | O_CLOEXEC);
  g_assert_cmpint (lock_fd, >=, 0);
  g_assert_cmpint (flock (lock_fd, LOCK_EX), ==, 0);
  g_setenv ("TMPDIR", scratch, TRUE);

  run_doctor ("", NULL, NULL, &run);
  g_assert_nonnull (strstr (run.out, "stale scratch in "));
  g_assert_nonnull (strstr (run.out, dead));
  g_assert_null (strstr (run.out, live));
  g_assert_true (g_file_test (dead, G_FILE_TEST_IS_DIR));
  doctor_run_clear (&run);

  run_doctor ("", NULL, "--json", &run);
  g_assert_nonnull (strstr (run.out, "\"scratch\""));
  g_assert_nonnull (strstr (run.out, dead));
  doctor_run_clear (&run);

  run_doctor ("", NULL, "--clean", &run);
  g_assert_nonnull (strstr (run.out, dead));
  g_assert_nonnull (strstr (run.out, "removed"));
  g_assert_false (g_file_test (dead, G_FILE_TEST_EXISTS));
  g_assert_true (g_file_test (live_marker, G_FILE_TEST_IS_REGULAR));
  doctor_run_clear (&run);

  run_doctor ("", NULL, NULL, &run);
  g_assert_nonnull (strstr (run.out, "none"));
  doctor_run_clear (&run);

  close (lock_fd);
  if (old_tmpdir != NULL)
    g_setenv ("TMPDIR", old_tmpdir, TRUE);
  else
    g_unsetenv ("TMPDIR");
  g_assert_cmpint (g_unlink (live_marker), ==, 0);
  g_assert_cmpint (g_rmdir (live), ==, 0);
  g_assert_cmpint (g_rmdir (scratch), ==, 0);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  g_test_add_func ("/doctor/text", test_doctor_text);
  g_test_add_func ("/doctor/probes-once", test_doctor_probes_once);
  g_test_add_func ("/doctor/json", test_doctor_json);
  g_test_add_func ("/doctor/unimplemented-feature", test_doctor_unimplemented_feature);
  g_test_add_func ("/doctor/no-backend", test_doctor_no_backend);
  g_test_add_func ("/doctor/forced-backend", test_doctor_forced_backend);
  g_test_add_func ("/doctor/real-plugins", test_doctor_real_plugins);
  g_test_add_func ("/doctor/resource-limits", test_doctor_resource_limits);
  g_test_add_func ("/doctor/usage", test_doctor_usage);
  g_test_add_func ("/doctor/stale-scratch", test_doctor_stale_scratch);

  return g_test_run ();
}
