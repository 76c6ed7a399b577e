/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The backend wrappers over a plugin's vtable: spec lifetime, spawn and
 * finish, the host table, and the contract a compile and a spawn must keep
 * (core/plugin/sbx-backend.c, sbx-plugin-host.c).
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

/* Backend wrappers                                                           */
/* ------------------------------------------------------------------------- */

typedef struct
{
  SbxBackendSpec *spec;
  gint            start;  /* (atomic) */
} SpecThreadData;

static gpointer
spec_ref_unref_thread (gpointer user_data)
{
  SpecThreadData *data = user_data;
  SbxBackendSpec *spec = data->spec;  /* one reference each, taken by the parent */

  while (!g_atomic_int_get (&data->start))
    ;
  for (guint i = 0; i < 1000; i++)
    sbx_backend_spec_unref (sbx_backend_spec_ref (spec));
  sbx_backend_spec_unref (spec);
  return NULL;
}

static void
test_spec_release_once (void)
{
  g_autoptr(SbxRegistry) registry = etu_registry ("ok", NULL);
  g_autoptr(SbxBackend) backend = NULL;
  g_autoptr(SbxCompileReport) report = sbx_compile_report_new ();
  g_autoptr(GError) error = NULL;
  SbxBackendSpec *spec;
  SpecThreadData data = { NULL, 0 };
  GThread *threads[N_THREADS];
  unsigned compiled_before = rtu_mock_ok_count ("compile");
  unsigned released_before = rtu_mock_ok_count ("release");
  SbxLevel level = SBX_LEVEL_NONE;
  SbxGuarantees guarantees = 0;
  g_autoptr(EtuPolicy) tp = NULL;

  backend = rtu_select_or_fail (registry, FALSE, DEFAULT_SANDBOXED_REQUIRED, NULL, NULL, &error);
  g_assert_no_error (error);
  tp = rtu_policy_new (DEFAULT_SANDBOXED_REQUIRED);
  spec = sbx_backend_compile (backend, etu_policy_get (tp), report, &level, &guarantees, &error);
  g_assert_no_error (error);
  g_assert_nonnull (spec);
  g_assert_true (sbx_backend_spec_get_backend (spec) == backend);
  g_assert_cmpuint (rtu_mock_ok_count ("compile") - compiled_before, ==, 1);
  g_assert_cmpint (level, ==, SBX_LEVEL_FULL);
  g_assert_cmpuint (guarantees, ==, SBX_GUARANTEES_ALL);
  g_assert_cmpstr (sbx_compile_report_get_backend (report), ==, "mock-ok");
  g_assert_cmpint (sbx_compile_report_get_level (report), ==, SBX_LEVEL_FULL);
  g_assert_cmpuint (sbx_compile_report_get_n_entries (report), ==, 1);

  data.spec = spec;
  for (guint i = 0; i < N_THREADS; i++)
    {
      sbx_backend_spec_ref (spec);
      threads[i] = g_thread_new ("spec", spec_ref_unref_thread, &data);
    }
  g_atomic_int_set (&data.start, 1);
  for (guint i = 0; i < N_THREADS; i++)
    g_thread_join (threads[i]);
  g_assert_cmpuint (rtu_mock_ok_count ("release") - released_before, ==, 0);
  sbx_backend_spec_unref (spec);
  g_assert_cmpuint (rtu_mock_ok_count ("release") - released_before, ==, 1);
}

static void
spawn_and_finish (SbxBackendSpec     *spec,
                  const char *const  *argv,
                  int                 send_signal,
                  SbxExitV1          *out_exit)
{
  g_autoptr(GError) error = NULL;
  const char *envp[] = { "PATH=/usr/bin:/bin", NULL };
  SbxSpawnRequestV1 request = { sizeof request, 0, "/", argv, envp, -1, -1, -1, 0 };
  SbxSpawnResultV1 result;
  int status;

  g_assert_true (sbx_backend_spawn (spec, &request, &result, &error));
  g_assert_no_error (error);
  g_assert_cmpint (result.pid, >, 0);
  g_assert_cmpint (result.pidfd, ==, -1);
  if (send_signal != 0)
    {
      g_assert_true (sbx_backend_signal (spec, result.child, send_signal, &error));
      g_assert_no_error (error);
    }
  g_assert_cmpint (waitpid ((pid_t) result.pid, &status, 0), ==, result.pid);
  g_assert_true (sbx_backend_finish (spec, result.child, status, out_exit, &error));
  g_assert_no_error (error);
}

static void
test_spawn_finish (void)
{
  g_autoptr(SbxRegistry) registry = etu_registry ("ok", NULL);
  g_autoptr(SbxBackend) backend = NULL;
  g_autoptr(SbxBackendSpec) spec = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *tmpdir = rtu_make_tmpdir ();
  g_autofree char *not_executable = g_build_filename (tmpdir, "data.txt", NULL);
  const char *exit3[] = { "sh", "-c", "exit 3", NULL };
  const char *sleeper[] = { "sleep", "100", NULL };
  const char *missing[] = { "no-such-command-sbx", NULL };
  const char *denied[] = { not_executable, NULL };
  const char *envp[] = { "PATH=/usr/bin:/bin", NULL };
  SbxSpawnRequestV1 request = { sizeof request, 0, "/", NULL, envp, -1, -1, -1, 0 };
  SbxSpawnResultV1 result;
  SbxExitV1 exit_info;
  guint fds_before;
  g_autoptr(EtuPolicy) tp = NULL;

  backend = rtu_select_or_fail (registry, FALSE, DEFAULT_SANDBOXED_REQUIRED, NULL, NULL, &error);
  g_assert_no_error (error);
  tp = rtu_policy_new (DEFAULT_SANDBOXED_REQUIRED);
  spec = sbx_backend_compile (backend, etu_policy_get (tp), NULL, NULL, NULL, &error);
  g_assert_no_error (error);
  fds_before = etu_count_fds ();

  spawn_and_finish (spec, exit3, 0, &exit_info);
  g_assert_cmpuint (exit_info.kind, ==, SBX_EXIT_EXITED);
  g_assert_cmpint (exit_info.code, ==, 3);

  spawn_and_finish (spec, sleeper, SIGTERM, &exit_info);
  g_assert_cmpuint (exit_info.kind, ==, SBX_EXIT_SIGNALED);
  g_assert_cmpint (exit_info.signo, ==, SIGTERM);

  request.argv = missing;
  g_assert_false (sbx_backend_spawn (spec, &request, &result, &error));
  g_assert_error (error, SBX_PLUGIN_ERROR, SBX_PLUGIN_ERROR_EXEC_NOT_FOUND);
  g_assert_nonnull (strstr (error->message, "plugin 'mock-ok', extension 'mock-ok': spawn failed: "));
  g_assert_nonnull (strstr (error->message, "no-such-command-sbx"));
  g_clear_error (&error);

  g_assert_true (g_file_set_contents (not_executable, "x", -1, NULL));
  g_assert_cmpint (g_chmod (not_executable, 0644), ==, 0);
  request.argv = denied;
  g_assert_false (sbx_backend_spawn (spec, &request, &result, &error));
  g_assert_error (error, SBX_PLUGIN_ERROR, SBX_PLUGIN_ERROR_EXEC_DENIED);
  g_clear_error (&error);

  g_assert_cmpuint (etu_count_fds (), ==, fds_before);
  etu_assert_no_children ();
  rtu_remove_tree (tmpdir);
}

static void
test_wrappers_unsupported (void)
{
  g_autoptr(SbxRegistry) registry = etu_registry ("prio", NULL);
  g_autoptr(SbxBackend) backend = sbx_registry_lookup_backend (registry, "mock-prio-mid");
  g_autoptr(SbxBackendSpec) spec = NULL;
  g_autoptr(GError) error = NULL;
  const char *argv[] = { "true", NULL };
  const char *envp[] = { NULL };
  SbxSpawnRequestV1 request = { sizeof request, 0, "/", argv, envp, -1, -1, -1, 0 };
  SbxSpawnResultV1 result;
  SbxExitV1 exit_info;
  g_autoptr(EtuPolicy) tp = NULL;

  tp = rtu_policy_new (SBX_GUARANTEE_ENV_SCRUB);
  spec = sbx_backend_compile (backend, etu_policy_get (tp), NULL, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_false (sbx_backend_spawn (spec, &request, &result, &error));
  g_assert_error (error, SBX_PLUGIN_ERROR, SBX_PLUGIN_ERROR_UNSUPPORTED);
  g_assert_cmpstr (error->message, ==,
                   "plugin 'mock-prio', extension 'mock-prio-mid': spawn failed: mock: this backend never spawns");
  g_clear_error (&error);
  g_assert_false (sbx_backend_signal (spec, NULL, SIGTERM, &error));
  g_assert_error (error, SBX_PLUGIN_ERROR, SBX_PLUGIN_ERROR_UNSUPPORTED);
  g_clear_error (&error);
  g_assert_false (sbx_backend_finish (spec, NULL, 0, &exit_info, &error));
  g_assert_error (error, SBX_PLUGIN_ERROR, SBX_PLUGIN_ERROR_UNSUPPORTED);
  g_assert_nonnull (strstr (error->message, "returned status 3 (unsupported) without a message"));
  g_assert_true (sbx_backend_supports_grant_class (backend, "filesystem.path.read.v1"));
}

/* ------------------------------------------------------------------------- */
/* Host table                                                                 */
/* ------------------------------------------------------------------------- */

static void
test_host_table (void)
{
  const SbxHostV1 *host = sbx_host_table ();
  g_autoptr(SbxCompileReport) report = sbx_compile_report_new ();
  g_autoptr(GError) error = NULL;
  SbxHostCall call;
  char *memory;

  g_assert_cmpuint (host->struct_size, ==, sizeof (SbxHostV1));
  g_assert_cmpuint (host->abi_version, ==, SBX_PLUGIN_ABI_VERSION);
  g_assert_cmpuint (host->features & ~SBX_HOST_FEATURES_KNOWN, ==, 0);
  g_assert_cmpstr (host->core_version, ==, SBX_VERSION_STRING);

  sbx_host_call_init (&call, "p", "e", "compile", report);
  host->set_error (&call, SBX_STATUS_INVALID, "first");
  host->set_error (&call, SBX_STATUS_FAILED, "second");
  host->report (&call, "write-boundary", SBX_ABI_REPORT_NARROWED, "d");
  host->report (&call, "odd", 77, "x");
  host->report (&call, NULL, SBX_ABI_REPORT_ENFORCED, "dropped");
  host->report (NULL, "ignored", SBX_ABI_REPORT_ENFORCED, NULL);
  host->set_error (NULL, SBX_STATUS_FAILED, "ignored");
  g_assert_false (sbx_host_call_fail (&call, SBX_STATUS_INVALID, &error));
  g_assert_error (error, SBX_PLUGIN_ERROR, SBX_PLUGIN_ERROR_INVALID);
  g_assert_cmpstr (error->message, ==, "plugin 'p', extension 'e': compile failed: first");
  g_assert_cmpuint (call.n_dropped, ==, 1);
  sbx_host_call_clear (&call);

  g_assert_cmpuint (sbx_compile_report_get_n_entries (report), ==, 2);
  g_assert_cmpint (sbx_compile_report_get_entry_status (report, 0), ==, SBX_REPORT_STATUS_NARROWED);
  /* An unknown status claims nothing: it becomes "unenforced", noted. */
  g_assert_cmpint (sbx_compile_report_get_entry_status (report, 1), ==, SBX_REPORT_STATUS_UNENFORCED);
  g_assert_cmpstr (sbx_compile_report_get_entry_detail (report, 1), ==, "x (the plugin reported unknown status 77)");

  memory = host->alloc (16);
  g_assert_nonnull (memory);
  memset (memory, 'x', 16);
  host->release (memory);
  host->release (NULL);
  host->log (SBX_LOG_DEBUG, "mock", "a debug line");
  host->log (SBX_LOG_INFO, "Bad Domain!", "an info line");
}

static void
test_status_mapping (void)
{
  static const struct
  {
    int32_t        status;
    SbxPluginError code;
  } rows[] = {
    { SBX_STATUS_FAILED, SBX_PLUGIN_ERROR_FAILED },
    { SBX_STATUS_UNAVAILABLE, SBX_PLUGIN_ERROR_UNAVAILABLE },
    { SBX_STATUS_UNSUPPORTED, SBX_PLUGIN_ERROR_UNSUPPORTED },
    { SBX_STATUS_INVALID, SBX_PLUGIN_ERROR_INVALID },
    { SBX_STATUS_NO_MEMORY, SBX_PLUGIN_ERROR_NO_MEMORY },
    { SBX_STATUS_EXEC_NOT_FOUND, SBX_PLUGIN_ERROR_EXEC_NOT_FOUND },
    { SBX_STATUS_EXEC_DENIED, SBX_PLUGIN_ERROR_EXEC_DENIED },
    { 42, SBX_PLUGIN_ERROR_FAILED },
    { -1, SBX_PLUGIN_ERROR_FAILED },
    { SBX_STATUS_OK, SBX_PLUGIN_ERROR_FAILED },
  };

  for (guint i = 0; i < G_N_ELEMENTS (rows); i++)
    {
      SbxHostCall call;
      g_autoptr(GError) error = NULL;

      g_assert_cmpint (sbx_plugin_error_from_status (rows[i].status), ==, rows[i].code);
      sbx_host_call_init (&call, "p", "e", "spawn", NULL);
      sbx_host_call_fail (&call, rows[i].status, &error);
      g_assert_error (error, SBX_PLUGIN_ERROR, (gint) rows[i].code);
      sbx_host_call_clear (&call);
    }
}

/* ------------------------------------------------------------------------- */


/* compile may narrow what probe found, never exceed it: a spec claiming a
 * guarantee or a level beyond the probe is released and refused, and an
 * honest compile of the same plugin (equal to the probe) still passes. */
static void
test_compile_claims_more_than_probe (void)
{
  g_autoptr(SbxRegistry) registry = etu_registry ("contract-breaker", NULL);
  static const struct { const char *backend; const char *needle; } rows[] = {
    { "mock-claims-more-guarantees", "guarantees beyond the probe: [write-boundary]" },
    { "mock-claims-more-level", "level full, probed degraded" },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (rows); i++)
    {
      g_autoptr(SbxBackend) backend = sbx_registry_lookup_backend (registry, rows[i].backend);
      g_autoptr(SbxCompileReport) report = sbx_compile_report_new ();
      g_autoptr(GError) error = NULL;
      unsigned released_before = rtu_mock_breaker_count ("release");
      SbxBackendSpec *spec;
      g_autoptr(EtuPolicy) tp = NULL;

      g_assert_nonnull (backend);
      tp = rtu_policy_new (SBX_GUARANTEE_ENV_SCRUB);
      spec = sbx_backend_compile (backend, etu_policy_get (tp), report, NULL, NULL, &error);
      g_assert_null (spec);
      g_assert_error (error, SBX_PLUGIN_ERROR, SBX_PLUGIN_ERROR_INVALID);
      g_assert_nonnull (strstr (error->message, "compile claims more than probe found"));
      g_assert_nonnull (strstr (error->message, rows[i].needle));
      g_assert_nonnull (strstr (error->message, rows[i].backend));
      /* The refused spec was handed back to the plugin exactly once. */
      g_assert_cmpuint (rtu_mock_breaker_count ("release") - released_before, ==, 1);
    }

  /* Positive control: the same probe, a compile equal to it. */
  {
    g_autoptr(SbxBackend) backend = sbx_registry_lookup_backend (registry, "mock-not-a-child");
    g_autoptr(GError) error = NULL;
    SbxLevel level = SBX_LEVEL_NONE;
    SbxGuarantees guarantees = 0;
    SbxBackendSpec *spec;
    g_autoptr(EtuPolicy) tp = NULL;

    tp = rtu_policy_new (SBX_GUARANTEE_ENV_SCRUB);
    spec = sbx_backend_compile (backend, etu_policy_get (tp), NULL, &level, &guarantees, &error);
    g_assert_no_error (error);
    g_assert_nonnull (spec);
    g_assert_cmpint (level, ==, SBX_LEVEL_DEGRADED);
    g_assert_cmpuint (guarantees, ==, SBX_GUARANTEE_ENV_SCRUB);
    sbx_backend_spec_unref (spec);
  }
}

/* A compile that claims a guarantee and reports it unenforced under the
 * guarantee's own feature name contradicts itself: the spec is released and
 * refused, naming the guarantee (the honest compile above passes). */
static void
test_compile_contradicts_itself (void)
{
  g_autoptr(SbxRegistry) registry = etu_registry ("contract-breaker", NULL);
  g_autoptr(SbxBackend) backend = sbx_registry_lookup_backend (registry, "mock-claims-unenforced");
  g_autoptr(SbxCompileReport) report = sbx_compile_report_new ();
  g_autoptr(GError) error = NULL;
  unsigned released_before = rtu_mock_breaker_count ("release");
  SbxBackendSpec *spec;
  g_autoptr(EtuPolicy) tp = NULL;

  g_assert_nonnull (backend);
  tp = rtu_policy_new (SBX_GUARANTEE_ENV_SCRUB);
  spec = sbx_backend_compile (backend, etu_policy_get (tp), report, NULL, NULL, &error);
  g_assert_null (spec);
  g_assert_error (error, SBX_PLUGIN_ERROR, SBX_PLUGIN_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "'mock-claims-unenforced': compile claims [env-scrub] "
                                            "and reports it unenforced"));
  g_assert_cmpuint (rtu_mock_breaker_count ("release") - released_before, ==, 1);
}

/* spawn must return a direct child of the host: a grandchild (double fork)
 * is refused, its tree is killed through signal() and the handle freed
 * through finish(); nothing is left running. */
static void
test_spawn_not_a_child (void)
{
  g_autoptr(SbxRegistry) registry = etu_registry ("contract-breaker", NULL);
  g_autoptr(SbxBackend) backend = sbx_registry_lookup_backend (registry, "mock-not-a-child");
  g_autoptr(GError) error = NULL;
  const char *argv[] = { "sleep", "30", NULL };
  const char *envp[] = { "PATH=/usr/bin:/bin", NULL };
  SbxSpawnRequestV1 request = { sizeof request, 0, "/", argv, envp, -1, -1, -1, 0 };
  SbxSpawnResultV1 result = { 0 };
  unsigned signals_before = rtu_mock_breaker_count ("signal");
  unsigned finishes_before = rtu_mock_breaker_count ("finish");
  SbxBackendSpec *spec;
  const char *at;
  gint64 pid;
  gint64 deadline;
  g_autoptr(EtuPolicy) tp = NULL;

  tp = rtu_policy_new (SBX_GUARANTEE_ENV_SCRUB);
  spec = sbx_backend_compile (backend, etu_policy_get (tp), NULL, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_false (sbx_backend_spawn (spec, &request, &result, &error));
  g_assert_error (error, SBX_PLUGIN_ERROR, SBX_PLUGIN_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "not a child of this process"));
  g_assert_cmpuint (rtu_mock_breaker_count ("signal") - signals_before, ==, 1);
  g_assert_cmpuint (rtu_mock_breaker_count ("finish") - finishes_before, ==, 1);

  /* The grandchild named in the message is gone (reaped by whoever
   * inherited it) within a bounded time. */
  at = strstr (error->message, "returned pid ");
  g_assert_nonnull (at);
  pid = g_ascii_strtoll (at + strlen ("returned pid "), NULL, 10);
  g_assert_cmpint (pid, >, 0);
  deadline = g_get_monotonic_time () + 5 * G_USEC_PER_SEC;
  while (kill ((pid_t) pid, 0) == 0 && g_get_monotonic_time () < deadline)
    g_usleep (10 * 1000);
  g_assert_cmpint (kill ((pid_t) pid, 0), ==, -1);
  g_assert_cmpint (errno, ==, ESRCH);
  sbx_backend_spec_unref (spec);
}

/* SBX_SPAWN_IGNORED_SIGNALS needs the backend's confirmation: one that
 * predates the flag (it started the command with the signals at their
 * defaults) has its tree killed and finished, and the spawn fails as
 * UNSUPPORTED.  The control: the same backend without the flag spawns. */
static void
test_spawn_unconfirmed_ignored_signals (void)
{
  g_autoptr(SbxRegistry) registry = etu_registry ("contract-breaker", NULL);
  g_autoptr(SbxBackend) backend = sbx_registry_lookup_backend (registry, "mock-ignores-flags");
  g_autoptr(GError) error = NULL;
  const char *argv[] = { "sleep", "30", NULL };
  const char *envp[] = { "PATH=/usr/bin:/bin", NULL };
  SbxSpawnRequestV1 request = { sizeof request, 0, "/", argv, envp, -1, -1, -1, 0 };
  SbxSpawnResultV1 result = { 0 };
  unsigned signals_before = rtu_mock_breaker_count ("signal");
  unsigned finishes_before = rtu_mock_breaker_count ("finish");
  SbxBackendSpec *spec;
  g_autoptr(EtuPolicy) tp = NULL;
  int status;

  tp = rtu_policy_new (SBX_GUARANTEE_ENV_SCRUB);
  spec = sbx_backend_compile (backend, etu_policy_get (tp), NULL, NULL, NULL, &error);
  g_assert_no_error (error);

  /* Control: no flag, a running child the test kills and finishes. */
  g_assert_true (sbx_backend_spawn (spec, &request, &result, &error));
  g_assert_no_error (error);
  g_assert_cmpint (kill ((pid_t) result.pid, SIGKILL), ==, 0);
  g_assert_cmpint (waitpid ((pid_t) result.pid, &status, 0), ==, (pid_t) result.pid);
  {
    SbxExitV1 exit_info = { .struct_size = sizeof exit_info };

    g_assert_true (sbx_backend_finish (spec, result.child, status, &exit_info, &error));
    g_assert_no_error (error);
  }
  signals_before = rtu_mock_breaker_count ("signal");
  finishes_before = rtu_mock_breaker_count ("finish");

  request.flags = SBX_SPAWN_IGNORED_SIGNALS;
  request.ignored_signals = UINT64_C (1) << (SIGHUP - 1);
  memset (&result, 0, sizeof result);
  g_assert_false (sbx_backend_spawn (spec, &request, &result, &error));
  g_assert_error (error, SBX_PLUGIN_ERROR, SBX_PLUGIN_ERROR_UNSUPPORTED);
  g_assert_nonnull (strstr (error->message, "SBX_SPAWN_IGNORED_SIGNALS"));
  g_assert_nonnull (strstr (error->message, "mock-ignores-flags"));
  g_assert_cmpuint (rtu_mock_breaker_count ("signal") - signals_before, ==, 1);
  g_assert_cmpuint (rtu_mock_breaker_count ("finish") - finishes_before, ==, 1);
  etu_assert_no_children ();
  sbx_backend_spec_unref (spec);
}

void
registry_tests_add_backend (void)
{
  g_test_add_func ("/registry/spec/release-once", test_spec_release_once);
  g_test_add_func ("/registry/spec/spawn-finish", test_spawn_finish);
  g_test_add_func ("/registry/spec/unsupported", test_wrappers_unsupported);
  g_test_add_func ("/registry/host/table", test_host_table);
  g_test_add_func ("/registry/host/status-mapping", test_status_mapping);
  g_test_add_func ("/registry/compile/claims-more-than-probe", test_compile_claims_more_than_probe);
  g_test_add_func ("/registry/compile/contradiction", test_compile_contradicts_itself);
  g_test_add_func ("/registry/spawn/not-a-child", test_spawn_not_a_child);
  g_test_add_func ("/registry/spawn/unconfirmed-ignored-signals", test_spawn_unconfirmed_ignored_signals);
}
