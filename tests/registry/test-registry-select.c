/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Backend selection: priority, vetoes, probes and their cache, threads,
 * SBX_BACKEND in a subprocess and a plugin that crashes in probe
 * (core/plugin/sbx-registry.c).
 */
#include <sbx/sbx.h>

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib/gstdio.h>
#include <json-glib/json-glib.h>

#include "sbx-plugin-host-private.h"
#include "sbx-plugin-loader-private.h"
#include "executor-test-util.h"
#include "registry-list-util.h"
#include "registry-test-util.h"

/* Selection                                                                  */
/* ------------------------------------------------------------------------- */

static void
test_select_priority (void)
{
  g_autoptr(SbxRegistry) registry = etu_registry ("prio", NULL);
  g_autoptr(SbxCompileReport) report = NULL;
  g_autoptr(SbxBackend) backend = NULL;
  g_autoptr(GError) error = NULL;

  backend = rtu_select_or_fail (registry, FALSE, DEFAULT_SANDBOXED_REQUIRED, NULL, &report, &error);
  g_assert_no_error (error);
  /* Declared low, high, unconfined, mid, none; tried unconfined(100),
   * none(40), high(30): high is the first that fits. */
  g_assert_cmpstr (sbx_backend_get_name (backend), ==, "mock-prio-high");
  g_assert_cmpstr (sbx_backend_get_plugin_name (backend), ==, "mock-prio");
  g_assert_cmpint (sbx_backend_get_priority (backend), ==, 30);
  g_assert_cmpstr (sbx_compile_report_get_backend (report), ==, "mock-prio-high");
  g_assert_cmpint (sbx_compile_report_get_level (report), ==, SBX_LEVEL_FULL);
  g_assert_cmpuint (sbx_compile_report_get_required (report), ==, DEFAULT_SANDBOXED_REQUIRED);
  g_assert_cmpuint (sbx_compile_report_get_n_rejected (report), ==, 2);
  g_assert_cmpstr (sbx_compile_report_get_rejected_name (report, 0), ==, "mock-prio-unconfined");
  g_assert_cmpstr (sbx_compile_report_get_rejected_reason (report, 0), ==,
                   "unconfined-only backend: never used for a Sandboxed profile");
  g_assert_cmpstr (sbx_compile_report_get_rejected_name (report, 1), ==, "mock-prio-none");
  g_assert_cmpstr (sbx_compile_report_get_rejected_reason (report, 1), ==,
                   "level none on this host; a Sandboxed profile needs degraded or full");
  /* Lower priorities were never tried. */
  g_assert_cmpint (rtu_find_rejected (report, "mock-prio-mid"), ==, -1);
}

static void
test_select_unconfined (void)
{
  g_autoptr(SbxRegistry) registry = etu_registry ("prio", NULL);
  g_autoptr(SbxRegistry) only_ok = etu_registry ("ok", NULL);
  g_autoptr(SbxCompileReport) report = NULL;
  g_autoptr(SbxBackend) backend = NULL;
  g_autoptr(GError) error = NULL;

  backend = rtu_select_or_fail (registry, TRUE, SBX_GUARANTEE_ENV_SCRUB, NULL, &report, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (sbx_backend_get_name (backend), ==, "mock-prio-unconfined");
  g_assert_true (sbx_backend_is_unconfined_only (backend));
  g_assert_cmpint (sbx_backend_get_probe_level (backend), ==, SBX_LEVEL_NONE);
  g_clear_pointer (&backend, sbx_backend_unref);
  g_clear_pointer (&report, sbx_compile_report_unref);

  /* A confining backend never runs an Unconfined profile. */
  backend = rtu_select_or_fail (only_ok, TRUE, SBX_GUARANTEE_ENV_SCRUB, NULL, &report, &error);
  g_assert_null (backend);
  g_assert_error (error, SBX_PLUGIN_ERROR, SBX_PLUGIN_ERROR_BACKEND_UNAVAILABLE);
  g_assert_cmpint (rtu_find_rejected (report, "mock-ok"), ==, 0);
  g_assert_true (g_str_has_prefix (sbx_compile_report_get_rejected_reason (report, 0),
                                   "not an unconfined-only backend"));
}

static void
test_select_veto (void)
{
  g_autoptr(SbxRegistry) registry = etu_registry ("prio", NULL);
  static const struct
  {
    const char *forced;
    const char *expect;
    const char *vetoed;  /* (nullable) must be rejected as vetoed */
  } rows[] = {
    { "", "mock-prio-high", NULL },
    { "-mock-prio-high", "mock-prio-mid", "mock-prio-high" },
    { "-mock-prio-high, !mock-prio-mid", "mock-prio-low", "mock-prio-mid" },
    { "mock-prio-low", "mock-prio-low", NULL },
    { "-mock-prio-unconfined,mock-prio-mid", "mock-prio-mid", NULL },
    { "-no-such-backend", "mock-prio-high", NULL },
  };

  for (guint i = 0; i < G_N_ELEMENTS (rows); i++)
    {
      g_autoptr(SbxCompileReport) report = NULL;
      g_autoptr(SbxBackend) backend = NULL;
      g_autoptr(GError) error = NULL;

      backend = rtu_select_or_fail (registry, FALSE, DEFAULT_SANDBOXED_REQUIRED, rows[i].forced, &report, &error);
      g_assert_no_error (error);
      g_assert_cmpstr (sbx_backend_get_name (backend), ==, rows[i].expect);
      if (rows[i].vetoed != NULL)
        {
          int index = rtu_find_rejected (report, rows[i].vetoed);

          g_assert_cmpint (index, >=, 0);
          g_assert_cmpstr (sbx_compile_report_get_rejected_reason (report, index), ==, "vetoed by SBX_BACKEND");
        }
    }
}

static void
test_select_forced_failures (void)
{
  g_autoptr(SbxRegistry) registry = etu_registry ("prio", "ok", NULL);
  static const struct
  {
    const char *forced;
    const char *part;
  } rows[] = {
    { "no-such-backend", "SBX_BACKEND=no-such-backend: no loaded plugin provides a backend of that name" },
    { "mock-prio-none", "level none on this host" },
    { "mock-prio-unconfined", "unconfined-only backend" },
    { "mock-prio-low,mock-ok", "selects more than one backend" },
    { "Bad_Name", "is not a backend name" },
    { "-", "is not a backend name to veto" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (rows); i++)
    {
      g_autoptr(SbxCompileReport) report = NULL;
      g_autoptr(SbxBackend) backend = NULL;
      g_autoptr(GError) error = NULL;

      backend = rtu_select_or_fail (registry, FALSE, DEFAULT_SANDBOXED_REQUIRED, rows[i].forced, &report, &error);
      g_assert_null (backend);
      g_assert_error (error, SBX_PLUGIN_ERROR, SBX_PLUGIN_ERROR_BACKEND_UNAVAILABLE);
      g_assert_nonnull (strstr (error->message, rows[i].part));
      /* Never a fallback, although mock-ok and mock-prio-high would fit. */
      g_assert_null (sbx_compile_report_get_backend (report));
    }
}

static void
test_select_probe_short (void)
{
  g_autoptr(SbxRegistry) registry = etu_registry ("ok", "probe-short", NULL);
  g_autoptr(SbxRegistry) alone = etu_registry ("probe-short", NULL);
  g_autoptr(SbxCompileReport) report = NULL;
  g_autoptr(SbxBackend) backend = NULL;
  g_autoptr(GError) error = NULL;
  int index;

  backend = rtu_select_or_fail (registry, FALSE, DEFAULT_SANDBOXED_REQUIRED, NULL, &report, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (sbx_backend_get_name (backend), ==, "mock-ok");
  index = rtu_find_rejected (report, "mock-probe-short");
  g_assert_cmpint (index, ==, 0);
  g_assert_cmpstr (sbx_compile_report_get_rejected_reason (report, index), ==,
                   "missing required guarantees: write-boundary, read-boundary, network-boundary (level full)");
  g_clear_pointer (&backend, sbx_backend_unref);
  g_clear_pointer (&report, sbx_compile_report_unref);

  /* The same backend is fine for a profile that needs only what it has. */
  backend = rtu_select_or_fail (alone, FALSE, SBX_GUARANTEE_ENV_SCRUB, NULL, &report, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (sbx_backend_get_name (backend), ==, "mock-probe-short");
  g_clear_pointer (&backend, sbx_backend_unref);
  g_clear_pointer (&report, sbx_compile_report_unref);

  backend = rtu_select_or_fail (alone, FALSE, DEFAULT_SANDBOXED_REQUIRED, NULL, &report, &error);
  g_assert_null (backend);
  g_assert_error (error, SBX_PLUGIN_ERROR, SBX_PLUGIN_ERROR_BACKEND_UNAVAILABLE);
  g_assert_nonnull (strstr (error->message, "mock-probe-short: missing required guarantees"));
}

static void
test_select_probe_fails (void)
{
  g_autoptr(SbxRegistry) registry = etu_registry ("probe-fails", "ok", NULL);
  g_autoptr(SbxCompileReport) report = NULL;
  g_autoptr(SbxCompileReport) probe = NULL;
  g_autoptr(SbxBackend) backend = NULL;
  g_autoptr(GError) error = NULL;
  const char *reason;

  backend = rtu_select_or_fail (registry, FALSE, DEFAULT_SANDBOXED_REQUIRED, NULL, &report, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (sbx_backend_get_name (backend), ==, "mock-ok");
  reason = sbx_compile_report_get_rejected_reason (report, rtu_find_rejected (report, "mock-probe-fails"));
  /* The first set_error message wins; the plugin and extension are named. */
  g_assert_cmpstr (reason, ==,
                   "plugin 'mock-probe-fails', extension 'mock-probe-fails': probe failed: "
                   "mock mechanism /dev/mock is absent. Hint: load the mock kernel module");

  probe = sbx_registry_probe_backend (registry, "mock-probe-fails", NULL, &error);
  g_assert_null (probe);
  g_assert_error (error, SBX_PLUGIN_ERROR, SBX_PLUGIN_ERROR_UNAVAILABLE);
  g_clear_error (&error);

  probe = sbx_registry_probe_backend (registry, "mock-ok", NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (sbx_compile_report_get_n_entries (probe), ==, 1);
  g_assert_cmpstr (sbx_compile_report_get_entry_feature (probe, 0), ==, "mock-confinement");
  g_assert_cmpint (sbx_compile_report_get_entry_status (probe, 0), ==, SBX_REPORT_STATUS_UNENFORCED);
  g_assert_nonnull (strstr (sbx_compile_report_get_entry_detail (probe, 0), "Hint: "));
}

static void
test_select_probe_cache (void)
{
  g_autoptr(SbxRegistry) registry = etu_registry ("ok", NULL);
  g_autoptr(SbxBackend) handle = sbx_registry_lookup_backend (registry, "mock-ok");
  unsigned before = rtu_mock_ok_count ("probe");

  g_assert_cmpuint (sbx_backend_get_n_probe_calls (handle), ==, 0);
  /* Not probed yet: the accessors fail closed. */
  g_assert_cmpint (sbx_backend_get_probe_level (handle), ==, SBX_LEVEL_NONE);
  g_assert_cmpuint (sbx_backend_get_probe_guarantees (handle), ==, 0);
  g_assert_true (sbx_backend_is_unconfined_only (handle));
  for (guint i = 0; i < 5; i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(SbxBackend) backend = rtu_select_or_fail (registry, FALSE, DEFAULT_SANDBOXED_REQUIRED, NULL, NULL, &error);

      g_assert_no_error (error);
      g_assert_true (backend == handle);
    }
  g_assert_cmpuint (rtu_mock_ok_count ("probe") - before, ==, 1);
  g_assert_cmpuint (sbx_backend_get_n_probe_calls (handle), ==, 1);
  g_assert_cmpint (sbx_backend_get_probe_level (handle), ==, SBX_LEVEL_FULL);
  g_assert_cmpuint (sbx_backend_get_probe_guarantees (handle), ==, SBX_GUARANTEES_ALL);
  g_assert_false (sbx_backend_is_unconfined_only (handle));
}

static void
test_select_failed_probe_not_cached (void)
{
  g_autoptr(SbxRegistry) registry = etu_registry ("probe-fails", NULL);
  g_autoptr(SbxBackend) handle = sbx_registry_lookup_backend (registry, "mock-probe-fails");

  for (guint i = 0; i < 3; i++)
    {
      g_autoptr(GError) error = NULL;

      g_assert_false (sbx_backend_probe (handle, NULL, &error));
      g_assert_error (error, SBX_PLUGIN_ERROR, SBX_PLUGIN_ERROR_UNAVAILABLE);
    }
  /* A failure is not cached: each attempt asks the plugin again. */
  g_assert_cmpuint (sbx_backend_get_n_probe_calls (handle), ==, 3);
}

typedef struct
{
  SbxRegistry *registry;
  gint         start;     /* (atomic) */
  guint        n_ok;
  gboolean     wrong;
} ThreadData;

#define N_ROUNDS  50

static gpointer
select_thread (gpointer user_data)
{
  ThreadData *data = user_data;
  guint n_ok = 0;

  while (!g_atomic_int_get (&data->start))
    ;
  for (guint i = 0; i < N_ROUNDS; i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(SbxCompileReport) report = NULL;
      g_autoptr(SbxBackend) backend = rtu_select_or_fail (data->registry, FALSE, DEFAULT_SANDBOXED_REQUIRED,
                                                          NULL, &report, &error);

      if (backend != NULL &&
          (g_str_equal (sbx_backend_get_name (backend), "mock-ok") ||
           g_str_equal (sbx_backend_get_name (backend), "mock-prio-high")))
        n_ok++;
      g_free (sbx_compile_report_to_json (report));
    }
  return GUINT_TO_POINTER (n_ok);
}

static gpointer
add_directory_thread (gpointer user_data)
{
  ThreadData *data = user_data;
  g_autofree char *prio = rtu_mock_dir ("prio");
  g_autoptr(GError) error = NULL;

  while (!g_atomic_int_get (&data->start))
    ;
  g_usleep (1000);
  if (!sbx_registry_add_directory (data->registry, prio, &error))
    data->wrong = TRUE;
  return NULL;
}

/* LOCKING: 8 threads select concurrently on a fresh registry (so they race
 * on the first probe) while a ninth adds a plugin directory. */
static void
test_select_threads (void)
{
  g_autoptr(SbxRegistry) registry = etu_registry ("ok", "probe-short", NULL);
  g_autoptr(SbxBackend) ok = sbx_registry_lookup_backend (registry, "mock-ok");
  g_autoptr(SbxBackend) short_backend = sbx_registry_lookup_backend (registry, "mock-probe-short");
  unsigned before = rtu_mock_ok_count ("probe");
  GThread *threads[N_THREADS];
  GThread *adder;
  ThreadData data = { registry, 0, 0, FALSE };
  guint total = 0;

  for (guint i = 0; i < N_THREADS; i++)
    threads[i] = g_thread_new ("select", select_thread, &data);
  adder = g_thread_new ("add", add_directory_thread, &data);
  g_atomic_int_set (&data.start, 1);
  for (guint i = 0; i < N_THREADS; i++)
    total += GPOINTER_TO_UINT (g_thread_join (threads[i]));
  g_thread_join (adder);

  g_assert_false (data.wrong);
  g_assert_cmpuint (total, ==, N_THREADS * N_ROUNDS);
  /* The probe cache held under contention: each plugin probed once. */
  g_assert_cmpuint (sbx_backend_get_n_probe_calls (short_backend), ==, 1);
  g_assert_cmpuint (sbx_backend_get_n_probe_calls (ok), <=, 1);
  g_assert_cmpuint (rtu_mock_ok_count ("probe") - before, ==, sbx_backend_get_n_probe_calls (ok));
  g_assert_cmpuint (registry_n_extensions (registry), ==, 2 + 1 + 5);
}

static void
test_select_help (void)
{
  g_autoptr(SbxRegistry) registry = etu_registry ("ok", "probe-fails", NULL);
  g_autoptr(SbxCompileReport) report = NULL;
  g_autoptr(SbxBackend) backend = NULL;
  g_autoptr(GError) error = NULL;

  backend = rtu_select_or_fail (registry, FALSE, DEFAULT_SANDBOXED_REQUIRED, "help", &report, &error);
  g_assert_null (backend);
  g_assert_error (error, SBX_PLUGIN_ERROR, SBX_PLUGIN_ERROR_BACKEND_UNAVAILABLE);
  g_assert_true (g_str_has_prefix (error->message, "SBX_BACKEND=help: candidates in priority order:\n"
                                                   "  mock-probe-fails (plugin mock-probe-fails, priority 50): plugin 'mock-probe-fails', "
                                                   "extension 'mock-probe-fails': probe failed: "));
  g_assert_nonnull (strstr (error->message, "\n  mock-ok (plugin mock-ok, priority 10): level full, guarantees ["
                                            "process-boundary, write-boundary, read-boundary, env-scrub, "
                                            "network-boundary, address-network, resource-limits, target-network]\n"));
  g_assert_nonnull (strstr (error->message, "No backend was selected."));
  g_assert_cmpuint (sbx_compile_report_get_n_rejected (report), ==, 2);
  g_assert_cmpstr (sbx_compile_report_get_rejected_reason (report, 1), ==, "SBX_BACKEND=help: listed, not selected");
}

/* ------------------------------------------------------------------------- */
/* Forced backend in a subprocess (the default registry, SBX_BACKEND)          */
/* ------------------------------------------------------------------------- */

/* Named after the test process, which the subprocess child knows as its
 * parent. */
static char *
sentinel_path_for (pid_t test_pid)
{
  g_autofree char *name = g_strdup_printf ("sbx-registry-sentinel-%d", (int) test_pid);

  return g_build_filename (g_get_tmp_dir (), name, NULL);
}

/* The child's whole life: default registry, select, and only if that worked
 * compile and spawn `touch SENTINEL`. */
static void
child_select_and_touch (const char *forced,
                        gboolean    expect_selected)
{
  g_autofree char *ok_dir = rtu_mock_dir ("ok");
  g_autofree char *short_dir = rtu_mock_dir ("probe-short");
  g_autofree char *dirs = g_strjoin (":", ok_dir, short_dir, NULL);
  g_autofree char *sentinel = sentinel_path_for (getppid ());
  g_autoptr(SbxCompileReport) report = sbx_compile_report_new ();
  g_autoptr(SbxBackend) backend = NULL;
  g_autoptr(GError) error = NULL;
  SbxBackendSelection selection = { FALSE, DEFAULT_SANDBOXED_REQUIRED, NULL };
  unsigned spawned_before;

  g_setenv ("SBX_PLUGIN_PATH", dirs, TRUE);
  g_setenv ("SBX_BACKEND", forced, TRUE);
  g_assert_false (g_file_test (sentinel, G_FILE_TEST_EXISTS));
  spawned_before = rtu_mock_ok_count ("spawn");

  backend = sbx_registry_select_backend (sbx_registry_get_default (), &selection, report, &error);
  if (backend != NULL)
    {
      g_autoptr(SbxBackendSpec) spec = NULL;
      const char *argv[] = { "touch", sentinel, NULL };
      const char *envp[] = { "PATH=/usr/bin:/bin", NULL };
      SbxSpawnRequestV1 request = { sizeof request, 0, "/", argv, envp, -1, -1, -1, 0 };
      SbxSpawnResultV1 result;
      SbxExitV1 exit_info;
      g_autoptr(EtuPolicy) tp = NULL;
      int status;

      tp = rtu_policy_new (DEFAULT_SANDBOXED_REQUIRED);
      spec = sbx_backend_compile (backend, etu_policy_get (tp), report, NULL, NULL, &error);
      g_assert_no_error (error);
      g_assert_true (sbx_backend_spawn (spec, &request, &result, &error));
      g_assert_cmpint (waitpid ((pid_t) result.pid, &status, 0), ==, result.pid);
      g_assert_true (sbx_backend_finish (spec, result.child, status, &exit_info, &error));
      g_assert_cmpint (exit_info.code, ==, 0);
    }

  if (expect_selected)
    {
      g_assert_no_error (error);
      g_assert_true (g_file_test (sentinel, G_FILE_TEST_EXISTS));
      g_unlink (sentinel);
    }
  else
    {
      g_assert_null (backend);
      g_assert_error (error, SBX_PLUGIN_ERROR, SBX_PLUGIN_ERROR_BACKEND_UNAVAILABLE);
      g_assert_null (sbx_compile_report_get_backend (report));
      /* Nothing was spawned. */
      g_assert_false (g_file_test (sentinel, G_FILE_TEST_EXISTS));
      g_assert_cmpuint (rtu_mock_ok_count ("spawn"), ==, spawned_before);
    }
}

static void
child_forced_backend_missing (void)
{
  child_select_and_touch ("no-such-backend", FALSE);
}

static void
child_forced_backend_rejected (void)
{
  child_select_and_touch ("mock-probe-short", FALSE);
}

static void
child_forced_backend_vetoed (void)
{
  child_select_and_touch ("-mock-ok", FALSE);
}

static void
child_forced_backend_selected (void)
{
  child_select_and_touch ("mock-ok", TRUE);
}

static void
test_forced_backend (gconstpointer data)
{
  const char *child = data;
  g_autofree char *sentinel = sentinel_path_for (getpid ());
  g_autofree char *path = g_strconcat ("/registry/forced-backend/", child, "/subprocess/child", NULL);

  g_test_trap_subprocess (path, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();
  /* The parent's own check of the sentinel effect. */
  g_assert_false (g_file_test (sentinel, G_FILE_TEST_EXISTS));
}

/* ------------------------------------------------------------------------- */
/* A plugin that crashes in probe                                             */
/* ------------------------------------------------------------------------- */

static void
test_probe_segfaults (void)
{
  g_test_trap_subprocess ("/registry/probe-segfaults/subprocess/child", 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_failed ();
  g_test_trap_assert_stderr ("*sbx: plugin 'mock-probe-segfaults' crashed in probe (extension 'mock-probe-segfaults', signal 11)*");
}

static void
child_probe_segfaults (void)
{
  g_autoptr(SbxRegistry) registry = etu_registry ("probe-segfaults", "ok", NULL);
  g_autoptr(GError) error = NULL;
  struct rlimit no_core = { 0, 0 };

  setrlimit (RLIMIT_CORE, &no_core);
  /* The highest-priority candidate crashes: the process dies here. */
  (void) rtu_select_or_fail (registry, FALSE, DEFAULT_SANDBOXED_REQUIRED, NULL, NULL, &error);
  g_assert_not_reached ();
}

/* The same process survives loading it and probing something else; the
 * guard leaves the previous dispositions in place. */
static void
test_crash_guard_restores (void)
{
  g_autoptr(SbxRegistry) registry = etu_registry ("probe-segfaults", "ok", NULL);
  g_autoptr(SbxCompileReport) report = NULL;
  g_autoptr(GError) error = NULL;
  struct sigaction before, after;

  g_assert_cmpint (sigaction (SIGSEGV, NULL, &before), ==, 0);
  report = sbx_registry_probe_backend (registry, "mock-ok", NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (sigaction (SIGSEGV, NULL, &after), ==, 0);
  g_assert_true (before.sa_handler == after.sa_handler);
}

/* ------------------------------------------------------------------------- */

void
registry_tests_add_select (void)
{
  g_test_add_func ("/registry/select/priority", test_select_priority);
  g_test_add_func ("/registry/select/unconfined", test_select_unconfined);
  g_test_add_func ("/registry/select/veto", test_select_veto);
  g_test_add_func ("/registry/select/forced-failures", test_select_forced_failures);
  g_test_add_func ("/registry/select/probe-short", test_select_probe_short);
  g_test_add_func ("/registry/select/probe-fails", test_select_probe_fails);
  g_test_add_func ("/registry/select/probe-cache", test_select_probe_cache);
  g_test_add_func ("/registry/select/failed-probe-not-cached", test_select_failed_probe_not_cached);
  g_test_add_func ("/registry/select/threads", test_select_threads);
  g_test_add_func ("/registry/select/help", test_select_help);
  g_test_add_data_func ("/registry/forced-backend/missing", "missing", test_forced_backend);
  g_test_add_func ("/registry/forced-backend/missing/subprocess/child", child_forced_backend_missing);
  g_test_add_data_func ("/registry/forced-backend/rejected", "rejected", test_forced_backend);
  g_test_add_func ("/registry/forced-backend/rejected/subprocess/child", child_forced_backend_rejected);
  g_test_add_data_func ("/registry/forced-backend/vetoed", "vetoed", test_forced_backend);
  g_test_add_func ("/registry/forced-backend/vetoed/subprocess/child", child_forced_backend_vetoed);
  g_test_add_data_func ("/registry/forced-backend/selected", "selected", test_forced_backend);
  g_test_add_func ("/registry/forced-backend/selected/subprocess/child", child_forced_backend_selected);
  g_test_add_func ("/registry/probe-segfaults", test_probe_segfaults);
  g_test_add_func ("/registry/probe-segfaults/subprocess/child", child_probe_segfaults);
  g_test_add_func ("/registry/probe-segfaults/guard-restores", test_crash_guard_restores);
}
