/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The plugin registry: loading policy, descriptor validation, selection,
 * backend wrappers, compile reports and reporter sinks, against the mock
 * plugins of tests/plugins/ (each in its own build directory, found through
 * SBX_TEST_MOCK_PLUGIN_DIR).
 *
 * Process-global state (the default registry, SBX_PLUGIN_PATH, SBX_BACKEND,
 * a crashing plugin) is tested in subprocesses.  GLib 2.74 has no
 * g_test_trap_subprocess_with_envp(), so each child sets the variables it
 * needs itself before touching the default registry.
 *
 * These are the cases of one module, the plugin registry: one GTest
 * binary per concept, so it is over a thousand lines.
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

#include "sbx-registry-private.h"
#include "sbx-plugin-private.h"
#include "sbx-plugin-host-private.h"
#include "sbx-plugin-loader-private.h"
#include "sbx-compile-report-private.h"
#include "executor-test-util.h"
#include "registry-list-util.h"

/* Required guarantees of the embedded default profile: host read/write and
 * network denied, env scrubbed. */
#define DEFAULT_SANDBOXED_REQUIRED \
  (SBX_GUARANTEE_ENV_SCRUB | SBX_GUARANTEE_READ_BOUNDARY | SBX_GUARANTEE_WRITE_BOUNDARY | \
   SBX_GUARANTEE_NETWORK_BOUNDARY)

/* ------------------------------------------------------------------------- */
/* Helpers                                                                    */
/* ------------------------------------------------------------------------- */

static char *
mock_dir (const char *name)
{
  const char *base = g_getenv ("SBX_TEST_MOCK_PLUGIN_DIR");

  g_assert_nonnull (base);
  return g_build_filename (base, name, NULL);
}

static char *
mock_file (const char *name)
{
  g_autofree char *dir = mock_dir (name);
  g_autofree char *file = g_strdup_printf ("sbx-plugin-mock-%s.so", name);

  return g_build_filename (dir, file, NULL);
}

/* A registry of exactly the named mock directories (NULL-terminated). */
static SbxRegistry *
registry_for_mocks (const char *first,
                    ...)
{
  g_autoptr(GPtrArray) dirs = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GError) error = NULL;
  SbxRegistry *registry;
  va_list args;

  va_start (args, first);
  for (const char *name = first; name != NULL; name = va_arg (args, const char *))
    g_ptr_array_add (dirs, mock_dir (name));
  va_end (args);
  g_ptr_array_add (dirs, NULL);

  registry = sbx_registry_new_for_directories ((const char *const *) dirs->pdata, &error);
  g_assert_no_error (error);
  g_assert_nonnull (registry);
  return registry;
}

static int
find_plugin (SbxRegistry *registry,
             const char  *name)
{
  for (guint i = 0; i < registry_n_plugins (registry); i++)
    if (g_str_equal (sbx_plugin_info_get_name (registry_plugin (registry, i)), name))
      return (int) i;
  return -1;
}

static int
find_rejected (SbxCompileReport *report,
               const char       *name)
{
  for (guint i = 0; i < sbx_compile_report_get_n_rejected (report); i++)
    if (g_str_equal (sbx_compile_report_get_rejected_name (report, i), name))
      return (int) i;
  return -1;
}

/* How often mock-ok's code was called (its own counters, process-wide). */
static unsigned
mock_ok_count (const char *what)
{
  g_autofree char *path = mock_file ("ok");
  void *handle = dlopen (path, RTLD_NOW | RTLD_NOLOAD);
  unsigned (*count) (const char *);
  unsigned value;

  if (handle == NULL)
    return 0;  /* not loaded in this process: never called */
  count = (unsigned (*) (const char *)) dlsym (handle, "sbx_mock_ok_count");
  g_assert_nonnull (count);
  value = count (what);
  dlclose (handle);
  return value;
}

/* How often mock-contract-breaker's code was called (process-wide). */
static unsigned
mock_breaker_count (const char *what)
{
  g_autofree char *path = mock_file ("contract-breaker");
  void *handle = dlopen (path, RTLD_NOW | RTLD_NOLOAD);
  unsigned (*count) (const char *);
  unsigned value;

  if (handle == NULL)
    return 0;
  count = (unsigned (*) (const char *)) dlsym (handle, "sbx_mock_contract_breaker_count");
  g_assert_nonnull (count);
  value = count (what);
  dlclose (handle);
  return value;
}

static guint
count_open_fds (void)
{
  g_autoptr(GDir) dir = g_dir_open ("/proc/self/fd", 0, NULL);
  guint n = 0;

  g_assert_nonnull (dir);
  while (g_dir_read_name (dir) != NULL)
    n++;
  return n;
}

static void
assert_no_children (void)
{
  int status;

  g_assert_cmpint (waitpid (-1, &status, WNOHANG), ==, -1);
  g_assert_cmpint (errno, ==, ECHILD);
}

static SbxBackend *
select_or_fail (SbxRegistry       *registry,
                gboolean           unconfined,
                SbxGuarantees      required,
                const char        *forced,
                SbxCompileReport **out_report,
                GError           **error)
{
  g_autoptr(SbxCompileReport) report = sbx_compile_report_new ();
  SbxBackendSelection selection = { 0 };
  SbxBackend *backend;

  selection.unconfined = unconfined;
  selection.required_guarantees = required;
  /* "" (not NULL) so the test's own environment never decides. */
  selection.forced_backend = forced != NULL ? forced : "";
  backend = sbx_registry_select_backend (registry, &selection, report, error);
  sbx_compile_report_freeze (report);
  if (out_report != NULL)
    *out_report = g_steal_pointer (&report);
  return backend;
}

/* A minimal policy for compile (mock backends only look at the sizes). */
typedef struct
{
  SbxNetPolicyV1 net;
  SbxLimitsV1    limits;
  SbxPolicyV1    policy;
} TestPolicy;

static void
test_policy_init (TestPolicy    *tp,
                  SbxGuarantees  required)
{
  memset (tp, 0, sizeof *tp);
  tp->net.struct_size = sizeof tp->net;
  tp->net.mode = SBX_NET_MODE_DENY;
  tp->limits.struct_size = sizeof tp->limits;
  tp->policy.struct_size = sizeof tp->policy;
  tp->policy.required_guarantees = required;
  tp->policy.net = &tp->net;
  tp->policy.limits = &tp->limits;
  tp->policy.workspace = "/";
  tp->policy.home = "/";
  tp->policy.tmpdir = "/tmp";
  tp->policy.state_dir = "/tmp";
}

/* A fresh 0700 directory holding a copy of mock-ok's file with @mode. */
static char *
copy_mock_ok (const char *tmpdir,
              mode_t      mode)
{
  g_autofree char *source = mock_file ("ok");
  g_autofree char *target = g_build_filename (tmpdir, "sbx-plugin-mock-ok.so", NULL);
  g_autofree char *contents = NULL;
  g_autoptr(GError) error = NULL;
  gsize length;

  g_assert_true (g_file_get_contents (source, &contents, &length, &error));
  g_assert_no_error (error);
  g_assert_true (g_file_set_contents_full (target, contents, length, G_FILE_SET_CONTENTS_NONE, 0755, &error));
  g_assert_no_error (error);
  g_assert_cmpint (g_chmod (target, mode), ==, 0);
  return g_steal_pointer (&target);
}

static char *
make_tmpdir (void)
{
  g_autoptr(GError) error = NULL;
  char *dir = g_dir_make_tmp ("sbx-registry-XXXXXX", &error);

  g_assert_no_error (error);
  g_assert_cmpint (g_chmod (dir, 0755), ==, 0);
  return dir;
}

static void
remove_tree (const char *dir)
{
  g_assert_true (g_file_test (dir, G_FILE_TEST_IS_DIR));
  etu_rm_rf (dir);
  g_assert_false (g_file_test (dir, G_FILE_TEST_EXISTS));
}

/* ------------------------------------------------------------------------- */
/* Loading                                                                    */
/* ------------------------------------------------------------------------- */

static void
test_load_ok (void)
{
  g_autoptr(SbxRegistry) registry = NULL;
  unsigned init_before = mock_ok_count ("init");
  unsigned fini_before = mock_ok_count ("fini");
  gboolean seen[4] = { FALSE, };
  int index;

  registry = registry_for_mocks ("ok", NULL);
  g_assert_cmpuint (mock_ok_count ("init"), ==, init_before + 1);

  g_assert_cmpuint (registry_n_directories (registry), ==, 1);
  g_assert_null (sbx_directory_info_get_error (registry_directory (registry, 0)));
  g_assert_cmpuint (registry_n_plugins (registry), ==, 1);
  index = find_plugin (registry, "mock-ok");
  g_assert_cmpint (index, ==, 0);
  g_assert_cmpint (sbx_plugin_info_get_state (registry_plugin (registry, 0)), ==, SBX_PLUGIN_STATE_LOADED);
  g_assert_null (sbx_plugin_info_get_error (registry_plugin (registry, 0)));
  g_assert_cmpstr (sbx_plugin_info_get_version (registry_plugin (registry, 0)), ==, "0.1.0");
  g_assert_cmpstr (sbx_plugin_info_get_license (registry_plugin (registry, 0)), ==, "LGPL-2.1-or-later");
  g_assert_true (g_str_has_suffix (sbx_plugin_info_get_path (registry_plugin (registry, 0)), "/ok/sbx-plugin-mock-ok.so"));

  g_assert_cmpuint (registry_n_extensions (registry), ==, 2);
  for (guint i = 0; i < 2; i++)
    {
      g_assert_cmpstr (sbx_extension_info_get_plugin_name (registry_extension (registry, i)), ==, "mock-ok");
      seen[sbx_extension_info_get_kind (registry_extension (registry, i))] = TRUE;
      if (sbx_extension_info_get_kind (registry_extension (registry, i)) == SBX_EXTENSION_KIND_BACKEND)
        {
          g_assert_cmpstr (sbx_extension_info_get_name (registry_extension (registry, i)), ==, "mock-ok");
          g_assert_cmpint (sbx_extension_info_get_priority (registry_extension (registry, i)), ==, 10);
        }
    }
  g_assert_true (seen[SBX_EXTENSION_KIND_BACKEND] && seen[SBX_EXTENSION_KIND_REPORTER]);

  /* fini runs once, when the registry goes; the code stays mapped. */
  g_clear_object (&registry);
  g_assert_cmpuint (mock_ok_count ("fini"), ==, fini_before + 1);
}

typedef struct
{
  const char     *mock;
  SbxPluginError  code;
  const char     *message_part;
} RefusalCase;

static const RefusalCase refusal_cases[] = {
  { "abi-too-new", SBX_PLUGIN_ERROR_ABI_MISMATCH, "speaks plugin ABI version 2; this library speaks version 1" },
  { "size-too-small", SBX_PLUGIN_ERROR_INVALID_DESCRIPTOR, "descriptor struct_size 56 is smaller than the minimum 64" },
  { "requires-unknown-feature", SBX_PLUGIN_ERROR_MISSING_HOST_FEATURE,
    "requires host features 0x8000000000000000 that this library does not know" },
  /* Every defined feature is implemented now (rule fds since the grants
   * work, egress since the egress work): requires-rule-fds and egress load,
   * see test_host_features_default; test_host_features_implemented shows a
   * host without a bit refusing them. */
  { "init-fails", SBX_PLUGIN_ERROR_INIT_FAILED, "init failed with status 2 (unavailable)" },
  { "bad-name", SBX_PLUGIN_ERROR_INVALID_DESCRIPTOR, "holds a descriptor named 'something_else'" },
  { "unknown-kind", SBX_PLUGIN_ERROR_INVALID_DESCRIPTOR, "extension 'mock-unknown-kind-x' has unknown kind 9" },
  { "vtable-short", SBX_PLUGIN_ERROR_INVALID_DESCRIPTOR, "vtable of extension 'mock-vtable-short' is too small" },
  { "missing-symbol", SBX_PLUGIN_ERROR_LOAD_FAILED, "sbx_mock_symbol_that_does_not_exist" },
};

/* Every bad mock is refused with the right reason, in the listing and in the
 * selection report; mock-ok next to it (the positive control) still works. */
/* The other direction: a host that implements the required features loads
 * the same plugins, and their init sees the bits in host->features (each
 * mock's init fails unless its bit is advertised). */
static void
test_host_features_implemented (void)
{
  g_autofree char *rule_fds_dir = mock_dir ("requires-rule-fds");
  g_autofree char *egress_dir = mock_dir ("egress");
  g_autofree char *unknown_dir = mock_dir ("requires-unknown-feature");
  const char *dirs[] = { rule_fds_dir, egress_dir, unknown_dir, NULL };
  g_autoptr(GError) error = NULL;
  g_autoptr(SbxRegistry) registry = NULL;

  registry = sbx_registry_new_with_host_features (dirs, SBX_HOST_FEATURE_RULE_FDS | SBX_HOST_FEATURE_EGRESS_V1,
                                                  &error);
  g_assert_no_error (error);
  g_assert_cmpint (sbx_plugin_info_get_state (registry_plugin (registry, find_plugin (registry, "mock-requires-rule-fds"))), ==,
                   SBX_PLUGIN_STATE_LOADED);
  g_assert_cmpint (sbx_plugin_info_get_state (registry_plugin (registry, find_plugin (registry, "mock-egress"))), ==,
                   SBX_PLUGIN_STATE_LOADED);
  /* A bit no header defines is refused whatever the host implements. */
  g_assert_cmpint (sbx_plugin_info_get_state (registry_plugin (registry, find_plugin (registry, "mock-requires-unknown-feature"))),
                   ==, SBX_PLUGIN_STATE_REFUSED);
  g_assert_cmpuint (registry_n_extensions (registry), ==, 2);

  /* A host implementing only rule fds still refuses the egress plugin. */
  g_clear_object (&registry);
  registry = sbx_registry_new_with_host_features (dirs, SBX_HOST_FEATURE_RULE_FDS, &error);
  g_assert_no_error (error);
  g_assert_cmpint (sbx_plugin_info_get_state (registry_plugin (registry, find_plugin (registry, "mock-requires-rule-fds"))), ==,
                   SBX_PLUGIN_STATE_LOADED);
  g_assert_cmpint (sbx_plugin_info_get_state (registry_plugin (registry, find_plugin (registry, "mock-egress"))), ==,
                   SBX_PLUGIN_STATE_REFUSED);
  g_assert_error (sbx_plugin_info_get_error (registry_plugin (registry, find_plugin (registry, "mock-egress"))),
                  SBX_PLUGIN_ERROR, SBX_PLUGIN_ERROR_MISSING_HOST_FEATURE);
}

/* The default host table implements rule fds (the grants work), the proxy
 * listener, egress and the egress listeners (the egress work): plugins
 * requiring them load, and their init saw the bits (each fails otherwise). */
static void
test_host_features_default (void)
{
  g_autoptr(SbxRegistry) registry = registry_for_mocks ("requires-rule-fds", "egress", NULL);

  g_assert_cmpuint (sbx_host_table ()->features, ==,
                    SBX_HOST_FEATURE_RULE_FDS | SBX_HOST_FEATURE_PROXY_LISTEN_FD | SBX_HOST_FEATURE_EGRESS_V1 |
                    SBX_HOST_FEATURE_EGRESS_LISTENERS);
  g_assert_cmpint (sbx_plugin_info_get_state (registry_plugin (registry, find_plugin (registry, "mock-requires-rule-fds"))), ==,
                   SBX_PLUGIN_STATE_LOADED);
  g_assert_cmpint (sbx_plugin_info_get_state (registry_plugin (registry, find_plugin (registry, "mock-egress"))), ==,
                   SBX_PLUGIN_STATE_LOADED);
}

static void
test_load_refused (void)
{
  for (guint i = 0; i < G_N_ELEMENTS (refusal_cases); i++)
    {
      const RefusalCase *row = &refusal_cases[i];
      g_autofree char *plugin_name = g_strconcat ("mock-", row->mock, NULL);
      g_autoptr(SbxRegistry) registry = registry_for_mocks (row->mock, "ok", NULL);
      g_autoptr(SbxCompileReport) report = NULL;
      g_autoptr(SbxBackend) backend = NULL;
      g_autoptr(GError) error = NULL;
      const GError *refusal;
      int index = find_plugin (registry, plugin_name);
      int rejected;

      g_test_message ("mock %s", row->mock);
      g_assert_cmpint (index, >=, 0);
      g_assert_cmpint (sbx_plugin_info_get_state (registry_plugin (registry, index)), ==, SBX_PLUGIN_STATE_REFUSED);
      refusal = sbx_plugin_info_get_error (registry_plugin (registry, index));
      g_assert_error (refusal, SBX_PLUGIN_ERROR, (gint) row->code);
      g_assert_nonnull (strstr (refusal->message, row->message_part));
      /* None of its extensions is registered: only mock-ok's two. */
      g_assert_cmpuint (registry_n_extensions (registry), ==, 2);
      g_assert_cmpint (sbx_plugin_info_get_state (registry_plugin (registry, find_plugin (registry, "mock-ok"))), ==,
                       SBX_PLUGIN_STATE_LOADED);

      /* Selection: the refused plugin shows up as rejected, with its reason. */
      backend = select_or_fail (registry, FALSE, DEFAULT_SANDBOXED_REQUIRED, NULL, &report, &error);
      g_assert_no_error (error);
      g_assert_cmpstr (sbx_backend_get_name (backend), ==, "mock-ok");
      rejected = find_rejected (report, plugin_name);
      g_assert_cmpint (rejected, >=, 0);
      g_assert_true (g_str_has_prefix (sbx_compile_report_get_rejected_reason (report, rejected),
                                       "plugin refused at load: "));
      g_assert_nonnull (strstr (sbx_compile_report_get_rejected_reason (report, rejected), row->message_part));
    }
}

static void
test_load_refused_alone_fails_selection (void)
{
  g_autoptr(SbxRegistry) registry = registry_for_mocks ("abi-too-new", NULL);
  g_autoptr(SbxCompileReport) report = NULL;
  g_autoptr(SbxBackend) backend = NULL;
  g_autoptr(GError) error = NULL;

  backend = select_or_fail (registry, FALSE, DEFAULT_SANDBOXED_REQUIRED, NULL, &report, &error);
  g_assert_null (backend);
  g_assert_error (error, SBX_PLUGIN_ERROR, SBX_PLUGIN_ERROR_BACKEND_UNAVAILABLE);
  g_assert_nonnull (strstr (error->message, "no backend plugin is loaded"));
  g_assert_null (sbx_compile_report_get_backend (report));
  g_assert_cmpint (find_rejected (report, "mock-abi-too-new"), ==, 0);
}

static void
test_load_duplicate_extension (void)
{
  g_autoptr(SbxRegistry) registry = registry_for_mocks ("ok", "dup-extension", NULL);
  int index = find_plugin (registry, "mock-dup-extension");
  const GError *refusal;

  g_assert_cmpint (index, ==, 1);
  refusal = sbx_plugin_info_get_error (registry_plugin (registry, index));
  g_assert_error (refusal, SBX_PLUGIN_ERROR, SBX_PLUGIN_ERROR_INVALID_DESCRIPTOR);
  g_assert_nonnull (strstr (refusal->message, "extension 'mock-ok', which plugin 'mock-ok' already registered"));
  g_assert_cmpuint (registry_n_extensions (registry), ==, 2);   /* mock-ok's backend and reporter */
}

static void
test_load_duplicate_plugin_name (void)
{
  g_autofree char *tmpdir = make_tmpdir ();
  g_autofree char *copy = copy_mock_ok (tmpdir, 0644);
  g_autofree char *ok_dir = mock_dir ("ok");
  const char *dirs[] = { ok_dir, tmpdir, NULL };
  g_autoptr(SbxRegistry) registry = NULL;
  g_autoptr(GError) error = NULL;
  const GError *refusal;

  g_assert_nonnull (copy);
  registry = sbx_registry_new_for_directories (dirs, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (registry_n_plugins (registry), ==, 2);
  g_assert_cmpint (sbx_plugin_info_get_state (registry_plugin (registry, 0)), ==, SBX_PLUGIN_STATE_LOADED);
  g_assert_cmpint (sbx_plugin_info_get_state (registry_plugin (registry, 1)), ==, SBX_PLUGIN_STATE_REFUSED);
  refusal = sbx_plugin_info_get_error (registry_plugin (registry, 1));
  g_assert_error (refusal, SBX_PLUGIN_ERROR, SBX_PLUGIN_ERROR_LOAD_FAILED);
  g_assert_nonnull (strstr (refusal->message, "already loaded from"));
  g_assert_cmpuint (registry_n_extensions (registry), ==, 2);
  g_clear_object (&registry);
  remove_tree (tmpdir);
}

static void
test_load_missing_directory (void)
{
  const char *dirs[] = { "/nonexistent/sbx-plugins", NULL };
  const char *relative[] = { "relative/dir", NULL };
  g_autoptr(SbxRegistry) registry = NULL;
  g_autoptr(GError) error = NULL;

  /* Named explicitly: an error. */
  registry = sbx_registry_new_for_directories (dirs, &error);
  g_assert_null (registry);
  g_assert_error (error, SBX_PLUGIN_ERROR, SBX_PLUGIN_ERROR_LOAD_FAILED);
  g_assert_nonnull (strstr (error->message, "/nonexistent/sbx-plugins"));
  g_clear_error (&error);

  registry = sbx_registry_new_for_directories (relative, &error);
  g_assert_null (registry);
  g_assert_error (error, SBX_PLUGIN_ERROR, SBX_PLUGIN_ERROR_LOAD_FAILED);
  g_clear_error (&error);

  /* Tolerant (the default registry's mode): listed with the error. */
  registry = sbx_registry_new_tolerant (dirs);
  g_assert_cmpuint (registry_n_directories (registry), ==, 1);
  g_assert_error (sbx_directory_info_get_error (registry_directory (registry, 0)), SBX_PLUGIN_ERROR, SBX_PLUGIN_ERROR_LOAD_FAILED);
  g_assert_cmpuint (registry_n_plugins (registry), ==, 0);
}

static void
test_add_directory (void)
{
  g_autoptr(SbxRegistry) registry = registry_for_mocks ("ok", NULL);
  g_autofree char *prio = mock_dir ("prio");
  g_autoptr(GError) error = NULL;

  g_assert_true (sbx_registry_add_directory (registry, prio, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (registry_n_directories (registry), ==, 2);
  g_assert_cmpint (find_plugin (registry, "mock-prio"), ==, 1);
  g_assert_cmpuint (registry_n_extensions (registry), ==, 2 + 5);
  /* Adding it again: the second copy is refused by name, nothing breaks. */
  g_assert_true (sbx_registry_add_directory (registry, prio, &error));
  g_assert_cmpint (sbx_plugin_info_get_state (registry_plugin (registry, 2)), ==, SBX_PLUGIN_STATE_REFUSED);
  g_assert_cmpuint (registry_n_extensions (registry), ==, 2 + 5);
}

/* ------------------------------------------------------------------------- */
/* Permissions                                                                */
/* ------------------------------------------------------------------------- */

static void
test_permissions_file_writable (void)
{
  static const struct
  {
    mode_t      mode;
    const char *expect;  /* NULL: loads */
  } rows[] = {
    { 0644, NULL },
    { 0755, NULL },
    { 0666, "writable by group and others (mode 0666)" },
    { 0664, "writable by its group (mode 0664)" },
    { 0646, "writable by others (mode 0646)" },
    { 0777, "writable by group and others (mode 0777)" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (rows); i++)
    {
      g_autofree char *tmpdir = make_tmpdir ();
      g_autofree char *file = copy_mock_ok (tmpdir, rows[i].mode);
      const char *dirs[] = { tmpdir, NULL };
      g_autoptr(SbxRegistry) registry = NULL;
      g_autoptr(GError) error = NULL;
      const GError *refusal;

      g_test_message ("mode %04o", (unsigned) rows[i].mode);
      registry = sbx_registry_new_for_directories (dirs, &error);
      g_assert_no_error (error);
      g_assert_cmpuint (registry_n_plugins (registry), ==, 1);
      refusal = sbx_plugin_info_get_error (registry_plugin (registry, 0));
      if (rows[i].expect == NULL)
        {
          g_assert_no_error (refusal);
          g_assert_cmpint (sbx_plugin_info_get_state (registry_plugin (registry, 0)), ==, SBX_PLUGIN_STATE_LOADED);
        }
      else
        {
          g_assert_error (refusal, SBX_PLUGIN_ERROR, SBX_PLUGIN_ERROR_UNSAFE_PERMISSIONS);
          g_assert_nonnull (strstr (refusal->message, file));
          g_assert_nonnull (strstr (refusal->message, rows[i].expect));
          g_assert_cmpuint (registry_n_extensions (registry), ==, 0);
        }
      g_clear_object (&registry);
      remove_tree (tmpdir);
    }
}

static void
test_permissions_directory_writable (void)
{
  g_autofree char *tmpdir = make_tmpdir ();
  g_autofree char *file = copy_mock_ok (tmpdir, 0644);
  const char *dirs[] = { tmpdir, NULL };
  g_autoptr(SbxRegistry) registry = NULL;
  g_autoptr(GError) error = NULL;

  g_assert_nonnull (file);
  /* Positive control first. */
  registry = sbx_registry_new_for_directories (dirs, &error);
  g_assert_no_error (error);
  g_assert_cmpint (sbx_plugin_info_get_state (registry_plugin (registry, 0)), ==, SBX_PLUGIN_STATE_LOADED);
  g_clear_object (&registry);

  g_assert_cmpint (g_chmod (tmpdir, 0777), ==, 0);
  registry = sbx_registry_new_for_directories (dirs, &error);
  g_assert_null (registry);
  g_assert_error (error, SBX_PLUGIN_ERROR, SBX_PLUGIN_ERROR_UNSAFE_PERMISSIONS);
  g_assert_nonnull (strstr (error->message, tmpdir));
  g_assert_nonnull (strstr (error->message, "mode 0777"));
  g_clear_error (&error);

  /* Tolerant registry: the directory is listed as refused, nothing loaded. */
  registry = sbx_registry_new_tolerant (dirs);
  g_assert_error (sbx_directory_info_get_error (registry_directory (registry, 0)), SBX_PLUGIN_ERROR,
                  SBX_PLUGIN_ERROR_UNSAFE_PERMISSIONS);
  g_assert_cmpuint (registry_n_plugins (registry), ==, 0);
  g_clear_object (&registry);

  g_assert_cmpint (g_chmod (tmpdir, 0775), ==, 0);
  registry = sbx_registry_new_for_directories (dirs, &error);
  g_assert_null (registry);
  g_assert_error (error, SBX_PLUGIN_ERROR, SBX_PLUGIN_ERROR_UNSAFE_PERMISSIONS);
  g_assert_nonnull (strstr (error->message, "mode 0775"));
  remove_tree (tmpdir);
}

static void
test_permissions_symlink (void)
{
  g_autofree char *tmpdir = make_tmpdir ();
  g_autofree char *source = mock_file ("ok");
  g_autofree char *link = g_build_filename (tmpdir, "sbx-plugin-mock-ok.so", NULL);
  const char *dirs[] = { tmpdir, NULL };
  g_autoptr(SbxRegistry) registry = NULL;
  g_autoptr(GError) error = NULL;

  g_assert_cmpint (symlink (source, link), ==, 0);
  registry = sbx_registry_new_for_directories (dirs, &error);
  g_assert_no_error (error);
  g_assert_error (sbx_plugin_info_get_error (registry_plugin (registry, 0)), SBX_PLUGIN_ERROR,
                  SBX_PLUGIN_ERROR_UNSAFE_PERMISSIONS);
  g_assert_nonnull (strstr (sbx_plugin_info_get_error (registry_plugin (registry, 0))->message, "symbolic link"));
  g_clear_object (&registry);
  remove_tree (tmpdir);
}

static void
test_permissions_owner (void)
{
  g_autofree char *tmpdir = NULL;
  g_autofree char *file = NULL;
  const char *dirs[2] = { NULL, NULL };
  g_autoptr(SbxRegistry) registry = NULL;
  g_autoptr(GError) error = NULL;

  if (geteuid () != 0)
    {
      /* Only root can give a file away; the decision itself is covered for
       * every user by /registry/permissions/decision-table. */
      g_test_skip ("chown to another user needs root; covered by the decision table");
      return;
    }
  tmpdir = make_tmpdir ();
  file = copy_mock_ok (tmpdir, 0644);
  dirs[0] = tmpdir;
  g_assert_cmpint (chown (file, 65534, (gid_t) -1), ==, 0);
  registry = sbx_registry_new_for_directories (dirs, &error);
  g_assert_no_error (error);
  g_assert_error (sbx_plugin_info_get_error (registry_plugin (registry, 0)), SBX_PLUGIN_ERROR,
                  SBX_PLUGIN_ERROR_UNSAFE_PERMISSIONS);
  g_assert_nonnull (strstr (sbx_plugin_info_get_error (registry_plugin (registry, 0))->message, "owned by uid 65534"));
  g_clear_object (&registry);

  /* The directory too. */
  g_assert_cmpint (chown (file, 0, (gid_t) -1), ==, 0);
  g_assert_cmpint (chown (tmpdir, 65534, (gid_t) -1), ==, 0);
  registry = sbx_registry_new_for_directories (dirs, &error);
  g_assert_null (registry);
  g_assert_error (error, SBX_PLUGIN_ERROR, SBX_PLUGIN_ERROR_UNSAFE_PERMISSIONS);
  g_assert_nonnull (strstr (error->message, "owned by uid 65534"));
  g_assert_cmpint (chown (tmpdir, 0, (gid_t) -1), ==, 0);
  remove_tree (tmpdir);
}

#define NONE ((uid_t) -1)

/* When an owner that is no identity of this user namespace is possible:
 * only outside the initial namespace, and only when the overflow uid is
 * unmapped (else a file showing it belongs to a real user here). */
static void
test_overflow_unmapped (void)
{
  static const struct
  {
    const char *uid_map;
    uid_t       overflow;
    gboolean    expect;
  } rows[] = {
    { "         0          0 4294967295\n", 65534, FALSE },   /* the initial namespace */
    { "         0       1000          1\n", 65534, TRUE },    /* unshare -r, Flatpak-like */
    { "      1000       1000          1\n", 65534, TRUE },    /* the caller mapped to itself */
    { "         0     100000      65536\n", 65534, FALSE },   /* a container: 65534 is a real user */
    { "         0     100000      65534\n", 65534, TRUE },    /* the same, one short of it */
    { "         0     100000      65536\n", 70000, TRUE },    /* another overflowuid, unmapped */
    { "         0       1000          1\n     65534      65534          1\n", 65534, FALSE },
    { "", 65534, FALSE },                                      /* unreadable: never */
    { "garbage\n", 65534, FALSE },
  };

  for (guint i = 0; i < G_N_ELEMENTS (rows); i++)
    g_assert_cmpint (sbx_registry_overflow_unmapped (rows[i].uid_map, rows[i].overflow), ==, rows[i].expect);
}

/* The foreign owner is never offered for a directory other than the
 * compiled-in one (SBX_PLUGIN_PATH's are the caller's environment's), nor
 * on a writable mount: here, on the host, for a temporary directory. */
static void
test_foreign_owner_refused (void)
{
  g_autofree char *tmpdir = g_dir_make_tmp ("sbx-foreign-XXXXXX", NULL);
  int fd = open (tmpdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

  g_assert_cmpint (fd, >=, 0);
  g_autofree char *why_not = NULL;

  g_assert_cmpint (sbx_registry_foreign_owner (fd, tmpdir, &why_not), ==, (uid_t) -1);
  /* the compiled-in name on a descriptor of the initial namespace, writable */
  g_assert_cmpint (sbx_registry_foreign_owner (fd, SBX_PLUGINDIR, &why_not), ==, (uid_t) -1);
  g_assert_cmpint (sbx_registry_foreign_owner (fd, NULL, NULL), ==, (uid_t) -1);
  {
    g_autofree char *map = NULL;

    g_assert_true (g_file_get_contents ("/proc/self/uid_map", &map, NULL, NULL));
    if (sbx_registry_overflow_unmapped (map, 65534))
      /* run inside a user namespace that does not map root: the writable
       * mount is what is missing, and the refusal says so */
      g_assert_nonnull (strstr (why_not, "read-only"));
    else
      g_assert_null (why_not);   /* nothing to explain in the initial namespace */
  }
  close (fd);
  g_rmdir (tmpdir);
}

static void
test_permissions_decision_table (void)
{
  static const struct
  {
    mode_t      mode;
    uid_t       owner;
    uid_t       euid;
    uid_t       foreign;
    gboolean    directory;
    gboolean    ok;
    const char *part;
  } rows[] = {
    { S_IFREG | 0644, 0, 1000, NONE, FALSE, TRUE, NULL },
    { S_IFREG | 0644, 1000, 1000, NONE, FALSE, TRUE, NULL },
    { S_IFREG | 0644, 1001, 1000, NONE, FALSE, FALSE, "owned by uid 1001, not by root or the current user (uid 1000)" },
    { S_IFREG | 0644, 1000, 0, NONE, FALSE, FALSE, "owned by uid 1000" },
    { S_IFREG | 0664, 0, 1000, NONE, FALSE, FALSE, "mode 0664" },
    { S_IFREG | 0602, 0, 0, NONE, FALSE, FALSE, "writable by others (mode 0602)" },
    { S_IFREG | 04755, 0, 0, NONE, FALSE, TRUE, NULL },
    { S_IFDIR | 0755, 0, 0, NONE, FALSE, FALSE, "not a regular file" },
    { S_IFDIR | 0755, 0, 1000, NONE, TRUE, TRUE, NULL },
    { S_IFDIR | 01777, 0, 1000, NONE, TRUE, FALSE, "mode 1777" },
    { S_IFDIR | 0770, 1000, 1000, NONE, TRUE, FALSE, "writable by its group (mode 0770)" },
    { S_IFREG | 0755, 0, 1000, NONE, TRUE, FALSE, "not a directory" },
    /* the foreign owner (root's files seen from a namespace that does not
     * map root): accepted when the caller says so, and only that uid */
    { S_IFREG | 0644, 65534, 0, NONE, FALSE, FALSE, "owned by uid 65534" },
    { S_IFREG | 0644, 65534, 0, 65534, FALSE, TRUE, NULL },
    { S_IFDIR | 0755, 65534, 1000, 65534, TRUE, TRUE, NULL },
    { S_IFREG | 0644, 1001, 1000, 65534, FALSE, FALSE, "owned by uid 1001" },
    { S_IFREG | 0646, 65534, 1000, 65534, FALSE, FALSE, "writable by others (mode 0646)" },
    { S_IFDIR | 0775, 65534, 1000, 65534, TRUE, FALSE, "writable by its group (mode 0775)" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (rows); i++)
    {
      struct stat st = { 0 };
      g_autoptr(GError) error = NULL;
      gboolean ok;

      st.st_mode = rows[i].mode;
      st.st_uid = rows[i].owner;
      ok = sbx_registry_check_file_safety (&st, "/p/x", rows[i].directory, rows[i].euid, rows[i].foreign, NULL,
                                           &error);
      g_assert_cmpint (ok, ==, rows[i].ok);
      if (ok)
        g_assert_no_error (error);
      else
        {
          g_assert_nonnull (error);
          g_assert_nonnull (strstr (error->message, "/p/x"));
          g_assert_nonnull (strstr (error->message, rows[i].part));
        }
    }

  /* An owner refusal ends with the chown hint, or with the reason the
   * caller gives in its place (the owner is root, seen from a namespace). */
  {
    struct stat st = { 0 };
    g_autoptr(GError) error = NULL;

    st.st_mode = S_IFREG | 0644;
    st.st_uid = 65534;
    g_assert_false (sbx_registry_check_file_safety (&st, "/p/x", FALSE, 1000, NONE, NULL, &error));
    g_assert_true (g_str_has_suffix (error->message, "; refused. Hint: chown root /p/x"));
    g_clear_error (&error);
    g_assert_false (sbx_registry_check_file_safety (&st, "/p/x", FALSE, 1000, NONE, "only read-only", &error));
    g_assert_true (g_str_has_suffix (error->message, "(uid 1000); refused. only read-only"));
    g_assert_null (strstr (error->message, "chown"));
  }
}

/* ------------------------------------------------------------------------- */
/* SBX_PLUGIN_PATH and AT_SECURE                                              */
/* ------------------------------------------------------------------------- */

static void
test_path_default_directories (void)
{
  static const struct
  {
    const char *env;
    gboolean    secure;
    const char *expect;  /* joined with '|' */
  } rows[] = {
    { NULL, FALSE, "/lib/p" },
    { "", FALSE, "/lib/p" },
    { "/a:/b", FALSE, "/a|/b|/lib/p" },
    { "/a::/b:", FALSE, "/a|/b|/lib/p" },
    { "/a:/a:/lib/p", FALSE, "/a|/lib/p" },
    { "rel:/b", FALSE, "rel|/b|/lib/p" },  /* kept, then listed as an error */
    /* AT_SECURE: the environment is ignored entirely. */
    { "/a:/b", TRUE, "/lib/p" },
    { "/lib/p", TRUE, "/lib/p" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (rows); i++)
    {
      g_auto(GStrv) dirs = sbx_registry_compute_default_directories ("/lib/p", rows[i].env, rows[i].secure);
      g_autofree char *joined = g_strjoinv ("|", dirs);

      g_assert_cmpstr (joined, ==, rows[i].expect);
    }
}

static void
test_path_env_honoured (void)
{
  g_test_trap_subprocess ("/registry/path/env-honoured/subprocess/child", 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();
}

static void
child_path_env_honoured (void)
{
  g_autofree char *ok_dir = mock_dir ("ok");
  g_autofree char *env = g_strconcat ("/nonexistent/one:", ok_dir, NULL);
  SbxRegistry *registry;
  int index;

  g_setenv ("SBX_PLUGIN_PATH", env, TRUE);
  /* A normal test run is not AT_SECURE; a setuid copy of this binary would
   * be, and then compute_default_directories() drops the variable (tested
   * directly above: a real setuid run is impractical in CI). */
  g_assert_false (sbx_registry_is_secure_execution ());
  registry = sbx_registry_get_default ();
  g_assert_true (registry == sbx_registry_get_default ());
  g_assert_cmpuint (registry_n_directories (registry), >=, 3);
  g_assert_cmpstr (sbx_directory_info_get_path (registry_directory (registry, 0)), ==, "/nonexistent/one");
  g_assert_error (sbx_directory_info_get_error (registry_directory (registry, 0)), SBX_PLUGIN_ERROR, SBX_PLUGIN_ERROR_LOAD_FAILED);
  g_assert_cmpstr (sbx_directory_info_get_path (registry_directory (registry, 1)), ==, ok_dir);
  g_assert_no_error (sbx_directory_info_get_error (registry_directory (registry, 1)));
  g_assert_cmpstr (sbx_directory_info_get_path (registry_directory (registry, 2)), ==, SBX_PLUGINDIR);
  index = find_plugin (registry, "mock-ok");
  g_assert_cmpint (index, >=, 0);
  g_assert_cmpint (sbx_plugin_info_get_state (registry_plugin (registry, index)), ==, SBX_PLUGIN_STATE_LOADED);
}

static void
test_path_env_unset (void)
{
  g_test_trap_subprocess ("/registry/path/env-unset/subprocess/child", 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();
}

static void
child_path_env_unset (void)
{
  SbxRegistry *registry;

  g_unsetenv ("SBX_PLUGIN_PATH");
  registry = sbx_registry_get_default ();
  g_assert_cmpuint (registry_n_directories (registry), ==, 1);
  g_assert_cmpstr (sbx_directory_info_get_path (registry_directory (registry, 0)), ==, SBX_PLUGINDIR);
  g_assert_cmpint (find_plugin (registry, "mock-ok"), ==, -1);
}

/* ------------------------------------------------------------------------- */
/* Selection                                                                  */
/* ------------------------------------------------------------------------- */

static void
test_select_priority (void)
{
  g_autoptr(SbxRegistry) registry = registry_for_mocks ("prio", NULL);
  g_autoptr(SbxCompileReport) report = NULL;
  g_autoptr(SbxBackend) backend = NULL;
  g_autoptr(GError) error = NULL;

  backend = select_or_fail (registry, FALSE, DEFAULT_SANDBOXED_REQUIRED, NULL, &report, &error);
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
  g_assert_cmpint (find_rejected (report, "mock-prio-mid"), ==, -1);
}

static void
test_select_unconfined (void)
{
  g_autoptr(SbxRegistry) registry = registry_for_mocks ("prio", NULL);
  g_autoptr(SbxRegistry) only_ok = registry_for_mocks ("ok", NULL);
  g_autoptr(SbxCompileReport) report = NULL;
  g_autoptr(SbxBackend) backend = NULL;
  g_autoptr(GError) error = NULL;

  backend = select_or_fail (registry, TRUE, SBX_GUARANTEE_ENV_SCRUB, NULL, &report, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (sbx_backend_get_name (backend), ==, "mock-prio-unconfined");
  g_assert_true (sbx_backend_is_unconfined_only (backend));
  g_assert_cmpint (sbx_backend_get_probe_level (backend), ==, SBX_LEVEL_NONE);
  g_clear_pointer (&backend, sbx_backend_unref);
  g_clear_pointer (&report, sbx_compile_report_unref);

  /* A confining backend never runs an Unconfined profile. */
  backend = select_or_fail (only_ok, TRUE, SBX_GUARANTEE_ENV_SCRUB, NULL, &report, &error);
  g_assert_null (backend);
  g_assert_error (error, SBX_PLUGIN_ERROR, SBX_PLUGIN_ERROR_BACKEND_UNAVAILABLE);
  g_assert_cmpint (find_rejected (report, "mock-ok"), ==, 0);
  g_assert_true (g_str_has_prefix (sbx_compile_report_get_rejected_reason (report, 0),
                                   "not an unconfined-only backend"));
}

static void
test_select_veto (void)
{
  g_autoptr(SbxRegistry) registry = registry_for_mocks ("prio", NULL);
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

      backend = select_or_fail (registry, FALSE, DEFAULT_SANDBOXED_REQUIRED, rows[i].forced, &report, &error);
      g_assert_no_error (error);
      g_assert_cmpstr (sbx_backend_get_name (backend), ==, rows[i].expect);
      if (rows[i].vetoed != NULL)
        {
          int index = find_rejected (report, rows[i].vetoed);

          g_assert_cmpint (index, >=, 0);
          g_assert_cmpstr (sbx_compile_report_get_rejected_reason (report, index), ==, "vetoed by SBX_BACKEND");
        }
    }
}

static void
test_select_forced_failures (void)
{
  g_autoptr(SbxRegistry) registry = registry_for_mocks ("prio", "ok", NULL);
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

      backend = select_or_fail (registry, FALSE, DEFAULT_SANDBOXED_REQUIRED, rows[i].forced, &report, &error);
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
  g_autoptr(SbxRegistry) registry = registry_for_mocks ("ok", "probe-short", NULL);
  g_autoptr(SbxRegistry) alone = registry_for_mocks ("probe-short", NULL);
  g_autoptr(SbxCompileReport) report = NULL;
  g_autoptr(SbxBackend) backend = NULL;
  g_autoptr(GError) error = NULL;
  int index;

  backend = select_or_fail (registry, FALSE, DEFAULT_SANDBOXED_REQUIRED, NULL, &report, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (sbx_backend_get_name (backend), ==, "mock-ok");
  index = find_rejected (report, "mock-probe-short");
  g_assert_cmpint (index, ==, 0);
  g_assert_cmpstr (sbx_compile_report_get_rejected_reason (report, index), ==,
                   "missing required guarantees: write-boundary, read-boundary, network-boundary (level full)");
  g_clear_pointer (&backend, sbx_backend_unref);
  g_clear_pointer (&report, sbx_compile_report_unref);

  /* The same backend is fine for a profile that needs only what it has. */
  backend = select_or_fail (alone, FALSE, SBX_GUARANTEE_ENV_SCRUB, NULL, &report, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (sbx_backend_get_name (backend), ==, "mock-probe-short");
  g_clear_pointer (&backend, sbx_backend_unref);
  g_clear_pointer (&report, sbx_compile_report_unref);

  backend = select_or_fail (alone, FALSE, DEFAULT_SANDBOXED_REQUIRED, NULL, &report, &error);
  g_assert_null (backend);
  g_assert_error (error, SBX_PLUGIN_ERROR, SBX_PLUGIN_ERROR_BACKEND_UNAVAILABLE);
  g_assert_nonnull (strstr (error->message, "mock-probe-short: missing required guarantees"));
}

static void
test_select_probe_fails (void)
{
  g_autoptr(SbxRegistry) registry = registry_for_mocks ("probe-fails", "ok", NULL);
  g_autoptr(SbxCompileReport) report = NULL;
  g_autoptr(SbxCompileReport) probe = NULL;
  g_autoptr(SbxBackend) backend = NULL;
  g_autoptr(GError) error = NULL;
  const char *reason;

  backend = select_or_fail (registry, FALSE, DEFAULT_SANDBOXED_REQUIRED, NULL, &report, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (sbx_backend_get_name (backend), ==, "mock-ok");
  reason = sbx_compile_report_get_rejected_reason (report, find_rejected (report, "mock-probe-fails"));
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
  g_autoptr(SbxRegistry) registry = registry_for_mocks ("ok", NULL);
  g_autoptr(SbxBackend) handle = sbx_registry_lookup_backend (registry, "mock-ok");
  unsigned before = mock_ok_count ("probe");

  g_assert_cmpuint (sbx_backend_get_n_probe_calls (handle), ==, 0);
  /* Not probed yet: the accessors fail closed. */
  g_assert_cmpint (sbx_backend_get_probe_level (handle), ==, SBX_LEVEL_NONE);
  g_assert_cmpuint (sbx_backend_get_probe_guarantees (handle), ==, 0);
  g_assert_true (sbx_backend_is_unconfined_only (handle));
  for (guint i = 0; i < 5; i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(SbxBackend) backend = select_or_fail (registry, FALSE, DEFAULT_SANDBOXED_REQUIRED, NULL, NULL, &error);

      g_assert_no_error (error);
      g_assert_true (backend == handle);
    }
  g_assert_cmpuint (mock_ok_count ("probe") - before, ==, 1);
  g_assert_cmpuint (sbx_backend_get_n_probe_calls (handle), ==, 1);
  g_assert_cmpint (sbx_backend_get_probe_level (handle), ==, SBX_LEVEL_FULL);
  g_assert_cmpuint (sbx_backend_get_probe_guarantees (handle), ==, SBX_GUARANTEES_ALL);
  g_assert_false (sbx_backend_is_unconfined_only (handle));
}

static void
test_select_failed_probe_not_cached (void)
{
  g_autoptr(SbxRegistry) registry = registry_for_mocks ("probe-fails", NULL);
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

#define N_THREADS 8
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
      g_autoptr(SbxBackend) backend = select_or_fail (data->registry, FALSE, DEFAULT_SANDBOXED_REQUIRED,
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
  g_autofree char *prio = mock_dir ("prio");
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
  g_autoptr(SbxRegistry) registry = registry_for_mocks ("ok", "probe-short", NULL);
  g_autoptr(SbxBackend) ok = sbx_registry_lookup_backend (registry, "mock-ok");
  g_autoptr(SbxBackend) short_backend = sbx_registry_lookup_backend (registry, "mock-probe-short");
  unsigned before = mock_ok_count ("probe");
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
  g_assert_cmpuint (mock_ok_count ("probe") - before, ==, sbx_backend_get_n_probe_calls (ok));
  g_assert_cmpuint (registry_n_extensions (registry), ==, 2 + 1 + 5);
}

static void
test_select_help (void)
{
  g_autoptr(SbxRegistry) registry = registry_for_mocks ("ok", "probe-fails", NULL);
  g_autoptr(SbxCompileReport) report = NULL;
  g_autoptr(SbxBackend) backend = NULL;
  g_autoptr(GError) error = NULL;

  backend = select_or_fail (registry, FALSE, DEFAULT_SANDBOXED_REQUIRED, "help", &report, &error);
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
  g_autofree char *ok_dir = mock_dir ("ok");
  g_autofree char *short_dir = mock_dir ("probe-short");
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
  spawned_before = mock_ok_count ("spawn");

  backend = sbx_registry_select_backend (sbx_registry_get_default (), &selection, report, &error);
  if (backend != NULL)
    {
      g_autoptr(SbxBackendSpec) spec = NULL;
      const char *argv[] = { "touch", sentinel, NULL };
      const char *envp[] = { "PATH=/usr/bin:/bin", NULL };
      SbxSpawnRequestV1 request = { sizeof request, 0, "/", argv, envp, -1, -1, -1, 0 };
      SbxSpawnResultV1 result;
      SbxExitV1 exit_info;
      TestPolicy tp;
      int status;

      test_policy_init (&tp, DEFAULT_SANDBOXED_REQUIRED);
      spec = sbx_backend_compile (backend, &tp.policy, report, NULL, NULL, &error);
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
      g_assert_cmpuint (mock_ok_count ("spawn"), ==, spawned_before);
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
  g_autoptr(SbxRegistry) registry = registry_for_mocks ("probe-segfaults", "ok", NULL);
  g_autoptr(GError) error = NULL;
  struct rlimit no_core = { 0, 0 };

  setrlimit (RLIMIT_CORE, &no_core);
  /* The highest-priority candidate crashes: the process dies here. */
  (void) select_or_fail (registry, FALSE, DEFAULT_SANDBOXED_REQUIRED, NULL, NULL, &error);
  g_assert_not_reached ();
}

/* The same process survives loading it and probing something else; the
 * guard leaves the previous dispositions in place. */
static void
test_crash_guard_restores (void)
{
  g_autoptr(SbxRegistry) registry = registry_for_mocks ("probe-segfaults", "ok", NULL);
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
  g_autoptr(SbxRegistry) registry = registry_for_mocks ("ok", NULL);
  g_autoptr(SbxBackend) backend = NULL;
  g_autoptr(SbxCompileReport) report = sbx_compile_report_new ();
  g_autoptr(GError) error = NULL;
  SbxBackendSpec *spec;
  SpecThreadData data = { NULL, 0 };
  GThread *threads[N_THREADS];
  unsigned compiled_before = mock_ok_count ("compile");
  unsigned released_before = mock_ok_count ("release");
  SbxLevel level = SBX_LEVEL_NONE;
  SbxGuarantees guarantees = 0;
  TestPolicy tp;

  backend = select_or_fail (registry, FALSE, DEFAULT_SANDBOXED_REQUIRED, NULL, NULL, &error);
  g_assert_no_error (error);
  test_policy_init (&tp, DEFAULT_SANDBOXED_REQUIRED);
  spec = sbx_backend_compile (backend, &tp.policy, report, &level, &guarantees, &error);
  g_assert_no_error (error);
  g_assert_nonnull (spec);
  g_assert_true (sbx_backend_spec_get_backend (spec) == backend);
  g_assert_cmpuint (mock_ok_count ("compile") - compiled_before, ==, 1);
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
  g_assert_cmpuint (mock_ok_count ("release") - released_before, ==, 0);
  sbx_backend_spec_unref (spec);
  g_assert_cmpuint (mock_ok_count ("release") - released_before, ==, 1);
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
  g_autoptr(SbxRegistry) registry = registry_for_mocks ("ok", NULL);
  g_autoptr(SbxBackend) backend = NULL;
  g_autoptr(SbxBackendSpec) spec = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *tmpdir = make_tmpdir ();
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
  TestPolicy tp;

  backend = select_or_fail (registry, FALSE, DEFAULT_SANDBOXED_REQUIRED, NULL, NULL, &error);
  g_assert_no_error (error);
  test_policy_init (&tp, DEFAULT_SANDBOXED_REQUIRED);
  spec = sbx_backend_compile (backend, &tp.policy, NULL, NULL, NULL, &error);
  g_assert_no_error (error);
  fds_before = count_open_fds ();

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

  g_assert_cmpuint (count_open_fds (), ==, fds_before);
  assert_no_children ();
  remove_tree (tmpdir);
}

static void
test_wrappers_unsupported (void)
{
  g_autoptr(SbxRegistry) registry = registry_for_mocks ("prio", NULL);
  g_autoptr(SbxBackend) backend = sbx_registry_lookup_backend (registry, "mock-prio-mid");
  g_autoptr(SbxBackendSpec) spec = NULL;
  g_autoptr(GError) error = NULL;
  const char *argv[] = { "true", NULL };
  const char *envp[] = { NULL };
  SbxSpawnRequestV1 request = { sizeof request, 0, "/", argv, envp, -1, -1, -1, 0 };
  SbxSpawnResultV1 result;
  SbxExitV1 exit_info;
  TestPolicy tp;

  test_policy_init (&tp, SBX_GUARANTEE_ENV_SCRUB);
  spec = sbx_backend_compile (backend, &tp.policy, NULL, NULL, NULL, &error);
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
/* Compile report                                                             */
/* ------------------------------------------------------------------------- */

static void
test_report_json_shape (void)
{
  g_autoptr(SbxCompileReport) report = sbx_compile_report_new ();
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;
  g_autofree char *json = NULL;
  g_autofree char *text = NULL;
  g_autofree char *empty_json = NULL;
  g_autoptr(SbxCompileReport) empty = sbx_compile_report_new ();
  JsonObject *root;
  JsonArray *array;
  JsonObject *entry;

  sbx_compile_report_set_backend (report, "linux-userns");
  sbx_compile_report_set_level (report, SBX_LEVEL_FULL);
  sbx_compile_report_set_guarantees (report, SBX_GUARANTEE_WRITE_BOUNDARY | SBX_GUARANTEE_ENV_SCRUB);
  sbx_compile_report_set_required (report, SBX_GUARANTEE_ENV_SCRUB);
  g_assert_true (sbx_compile_report_add_entry (report, "write-boundary", SBX_REPORT_STATUS_ENFORCED, NULL));
  g_assert_true (sbx_compile_report_add_entry (report, "network", SBX_REPORT_STATUS_UNENFORCED,
                                               "open network. Hint: \"quotes\" \n and newline"));
  sbx_compile_report_add_rejected (report, "mock-x", "probe failed: nope");
  sbx_compile_report_add_root (report, "workspace", "/src/app", SBX_ACCESS_ALLOW, SBX_ACCESS_DENY);
  sbx_compile_report_freeze (report);
  g_assert_true (sbx_compile_report_is_frozen (report));
  g_assert_cmpuint (sbx_compile_report_get_n_roots (report), ==, 1);
  g_assert_cmpstr (sbx_compile_report_get_root_kind (report, 0), ==, "workspace");
  g_assert_cmpstr (sbx_compile_report_get_root_path (report, 0), ==, "/src/app");

  json = sbx_compile_report_to_json (report);
  g_assert_null (strchr (json, '\n'));
  g_assert_true (json_parser_load_from_data (parser, json, -1, &error));
  g_assert_no_error (error);
  root = json_node_get_object (json_parser_get_root (parser));
  g_assert_cmpuint (json_object_get_size (root), ==, 9);
  /* A report made here belongs to no executor and no run. */
  g_assert_cmpint (sbx_compile_report_get_scope (report), ==, SBX_REPORT_SCOPE_NONE);
  g_assert_cmpstr (json_object_get_string_member (root, "scope"), ==, "none");
  array = json_object_get_array_member (root, "roots");
  g_assert_cmpuint (json_array_get_length (array), ==, 1);
  entry = json_array_get_object_element (array, 0);
  g_assert_cmpuint (json_object_get_size (entry), ==, 4);
  g_assert_cmpstr (json_object_get_string_member (entry, "kind"), ==, "workspace");
  g_assert_cmpstr (json_object_get_string_member (entry, "path"), ==, "/src/app");
  g_assert_cmpstr (json_object_get_string_member (entry, "read"), ==, "allow");
  g_assert_cmpstr (json_object_get_string_member (entry, "write"), ==, "deny");
  g_assert_cmpint (json_object_get_int_member (root, "schema"), ==, 1);
  g_assert_cmpstr (json_object_get_string_member (root, "backend"), ==, "linux-userns");
  g_assert_cmpstr (json_object_get_string_member (root, "level"), ==, "full");
  array = json_object_get_array_member (root, "guarantees");
  g_assert_cmpuint (json_array_get_length (array), ==, 2);
  g_assert_cmpstr (json_array_get_string_element (array, 0), ==, "write-boundary");
  g_assert_cmpstr (json_array_get_string_element (array, 1), ==, "env-scrub");
  array = json_object_get_array_member (root, "required");
  g_assert_cmpuint (json_array_get_length (array), ==, 1);
  g_assert_cmpstr (json_array_get_string_element (array, 0), ==, "env-scrub");
  array = json_object_get_array_member (root, "entries");
  g_assert_cmpuint (json_array_get_length (array), ==, 2);
  entry = json_array_get_object_element (array, 0);
  g_assert_cmpuint (json_object_get_size (entry), ==, 3);
  g_assert_cmpstr (json_object_get_string_member (entry, "feature"), ==, "write-boundary");
  g_assert_cmpstr (json_object_get_string_member (entry, "status"), ==, "enforced");
  g_assert_true (json_object_get_null_member (entry, "detail"));
  entry = json_array_get_object_element (array, 1);
  g_assert_cmpstr (json_object_get_string_member (entry, "status"), ==, "unenforced");
  g_assert_cmpstr (json_object_get_string_member (entry, "detail"), ==, "open network. Hint: \"quotes\" \n and newline");
  array = json_object_get_array_member (root, "rejected");
  g_assert_cmpuint (json_array_get_length (array), ==, 1);
  entry = json_array_get_object_element (array, 0);
  g_assert_cmpstr (json_object_get_string_member (entry, "backend"), ==, "mock-x");
  g_assert_cmpstr (json_object_get_string_member (entry, "reason"), ==, "probe failed: nope");

  text = sbx_compile_report_to_text (report);
  g_assert_true (g_str_has_prefix (text, "report:     none "));
  g_assert_nonnull (strstr (text, "backend:    linux-userns\n"));
  g_assert_nonnull (strstr (text, "level:      full\n"));
  g_assert_nonnull (strstr (text, "guarantees: write-boundary, env-scrub\n"));
  g_assert_nonnull (strstr (text, "  enforced   write-boundary\n"));
  g_assert_nonnull (strstr (text, "  unenforced network: open network."));
  g_assert_nonnull (strstr (text, "rejected:\n  mock-x: probe failed: nope\n"));
  g_assert_nonnull (strstr (text, "roots:\n  workspace  /src/app (read allow, write deny)\n"));

  /* An empty report: backend null, empty arrays. */
  sbx_compile_report_freeze (empty);
  empty_json = sbx_compile_report_to_json (empty);
  g_assert_cmpstr (empty_json, ==,
                   "{\"schema\":1,\"scope\":\"none\",\"backend\":null,\"level\":\"none\",\"guarantees\":[],\"required\":[],"
                   "\"entries\":[],\"roots\":[],\"rejected\":[]}");
}

static void
test_report_statuses_and_caps (void)
{
  g_autoptr(SbxCompileReport) report = sbx_compile_report_new ();
  g_autoptr(GString) long_text = g_string_new (NULL);

  g_assert_cmpstr (sbx_report_status_to_string (SBX_REPORT_STATUS_ENFORCED), ==, "enforced");
  g_assert_cmpstr (sbx_report_status_to_string (SBX_REPORT_STATUS_NARROWED), ==, "narrowed");
  g_assert_cmpstr (sbx_report_status_to_string (SBX_REPORT_STATUS_UNENFORCED), ==, "unenforced");
  g_assert_cmpstr (sbx_report_status_to_string (SBX_REPORT_STATUS_WIDENED), ==, "widened");
  g_assert_cmpstr (sbx_report_status_to_string (SBX_REPORT_STATUS_VACUOUS), ==, "vacuous");
  g_assert_null (sbx_report_status_to_string ((SbxReportStatus) 0));
  g_assert_null (sbx_report_status_to_string ((SbxReportStatus) 6));

  for (guint i = 0; i < SBX_COMPILE_REPORT_MAX_ENTRIES; i++)
    g_assert_true (sbx_compile_report_add_entry (report, "f", SBX_REPORT_STATUS_ENFORCED, NULL));
  g_assert_false (sbx_compile_report_add_entry (report, "f", SBX_REPORT_STATUS_ENFORCED, NULL));
  g_assert_cmpuint (sbx_compile_report_get_n_entries (report), ==, SBX_COMPILE_REPORT_MAX_ENTRIES);

  g_clear_pointer (&report, sbx_compile_report_unref);
  report = sbx_compile_report_new ();
  for (guint i = 0; i < SBX_COMPILE_REPORT_MAX_TEXT; i++)
    g_string_append (long_text, "\xc3\xa9");  /* 2 bytes each */
  g_assert_true (sbx_compile_report_add_entry (report, "f", SBX_REPORT_STATUS_ENFORCED, long_text->str));
  g_assert_true (sbx_compile_report_add_entry (report, "g", SBX_REPORT_STATUS_ENFORCED, "bad \xff utf8"));
  g_assert_cmpuint (strlen (sbx_compile_report_get_entry_detail (report, 0)), ==, SBX_COMPILE_REPORT_MAX_TEXT);
  g_assert_true (g_utf8_validate (sbx_compile_report_get_entry_detail (report, 0), -1, NULL));
  g_assert_true (g_utf8_validate (sbx_compile_report_get_entry_detail (report, 1), -1, NULL));
  g_assert_true (G_TYPE_IS_BOXED (SBX_TYPE_COMPILE_REPORT));
}

static void
test_report_from_selection_json (void)
{
  g_autoptr(SbxRegistry) registry = registry_for_mocks ("ok", "probe-short", NULL);
  g_autoptr(SbxCompileReport) report = NULL;
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;
  g_autofree char *json = NULL;
  JsonObject *root;
  JsonObject *rejected;

  g_assert_true (sbx_registry_preview_selection (registry, SBX_ISOLATION_SANDBOXED, DEFAULT_SANDBOXED_REQUIRED,
                                                 &report, &error));
  g_assert_no_error (error);
  g_assert_true (sbx_compile_report_is_frozen (report));
  json = sbx_compile_report_to_json (report);
  g_assert_true (json_parser_load_from_data (parser, json, -1, &error));
  root = json_node_get_object (json_parser_get_root (parser));
  g_assert_cmpstr (json_object_get_string_member (root, "backend"), ==, "mock-ok");
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (root, "required")), ==, 4);
  rejected = json_array_get_object_element (json_object_get_array_member (root, "rejected"), 0);
  g_assert_cmpstr (json_object_get_string_member (rejected, "backend"), ==, "mock-probe-short");
  g_assert_true (g_str_has_prefix (json_object_get_string_member (rejected, "reason"), "missing required guarantees"));
}

/* ------------------------------------------------------------------------- */
/* Reporter sinks                                                             */
/* ------------------------------------------------------------------------- */

static void
test_reporter_sink (void)
{
  g_autoptr(SbxRegistry) registry = registry_for_mocks ("ok", NULL);
  g_autoptr(GError) error = NULL;
  g_autofree char *tmpdir = make_tmpdir ();
  g_autofree char *log = g_build_filename (tmpdir, "events.jsonl", NULL);
  g_autofree char *contents = NULL;
  g_auto(GStrv) lines = NULL;
  SbxReporterSink *sink;

  sink = sbx_registry_open_reporter (registry, "mock-ok-reporter", log, &error);
  g_assert_no_error (error);
  sbx_reporter_sink_emit (sink, "{\"schema\":1,\"event\":\"a\"}");
  sbx_reporter_sink_emit (sink, "{\"schema\":1,\"event\":\"b\"}");
  g_assert_cmpuint (sbx_reporter_sink_get_n_failures (sink), ==, 0);
  sbx_reporter_sink_close (sink);
  g_assert_true (g_file_get_contents (log, &contents, NULL, NULL));
  lines = g_strsplit (contents, "\n", -1);
  g_assert_cmpuint (g_strv_length (lines), ==, 3);
  g_assert_cmpstr (lines[0], ==, "{\"schema\":1,\"event\":\"a\"}");
  g_assert_cmpstr (lines[2], ==, "");

  /* A failing reporter: counted, and nothing propagates. */
  sink = sbx_registry_open_reporter (registry, "mock-ok-reporter", "fail", &error);
  g_assert_no_error (error);
  sbx_reporter_sink_emit (sink, "{\"schema\":1}");
  sbx_reporter_sink_emit (sink, "{\"schema\":1}");
  g_assert_cmpuint (sbx_reporter_sink_get_n_failures (sink), ==, 2);
  sbx_reporter_sink_close (sink);
  sbx_reporter_sink_close (NULL);

  g_assert_null (sbx_registry_open_reporter (registry, "mock-ok-reporter", NULL, &error));
  g_assert_error (error, SBX_PLUGIN_ERROR, SBX_PLUGIN_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "plugin 'mock-ok', extension 'mock-ok-reporter': open failed"));
  g_clear_error (&error);
  g_assert_null (sbx_registry_open_reporter (registry, "mock-ok", "x", &error));  /* a backend, not a reporter */
  g_assert_error (error, SBX_PLUGIN_ERROR, SBX_PLUGIN_ERROR_UNAVAILABLE);
  g_unlink (log);
  remove_tree (tmpdir);
}

/* ------------------------------------------------------------------------- */
/* Listing as JSON                                                            */
/* ------------------------------------------------------------------------- */

static void
test_registry_json (void)
{
  g_autoptr(SbxRegistry) registry = registry_for_mocks ("ok", "abi-too-new", "probe-fails", NULL);
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;
  g_autofree char *json = sbx_registry_to_json (registry);
  JsonObject *root;
  JsonArray *plugins;
  JsonArray *backends;
  JsonObject *object;
  JsonObject *probe;

  g_assert_nonnull (json);
  g_assert_true (json_parser_load_from_data (parser, json, -1, &error));
  g_assert_no_error (error);
  root = json_node_get_object (json_parser_get_root (parser));
  g_assert_cmpint (json_object_get_int_member (root, "schema"), ==, 1);
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (root, "directories")), ==, 3);

  plugins = json_object_get_array_member (root, "plugins");
  g_assert_cmpuint (json_array_get_length (plugins), ==, 3);
  object = json_array_get_object_element (plugins, 0);
  g_assert_cmpstr (json_object_get_string_member (object, "name"), ==, "mock-ok");
  g_assert_cmpstr (json_object_get_string_member (object, "state"), ==, "loaded");
  g_assert_true (json_object_get_null_member (object, "error"));
  object = json_array_get_object_element (plugins, 1);
  g_assert_cmpstr (json_object_get_string_member (object, "name"), ==, "mock-abi-too-new");
  g_assert_cmpstr (json_object_get_string_member (object, "state"), ==, "refused");
  g_assert_cmpstr (json_object_get_string_member (object, "error_code"), ==, "abi-mismatch");
  g_assert_nonnull (strstr (json_object_get_string_member (object, "error"), "ABI version 2"));

  backends = json_object_get_array_member (root, "backends");
  g_assert_cmpuint (json_array_get_length (backends), ==, 2);
  object = json_array_get_object_element (backends, 0);
  g_assert_cmpstr (json_object_get_string_member (object, "name"), ==, "mock-ok");
  g_assert_cmpint (json_object_get_int_member (object, "priority"), ==, 10);
  probe = json_object_get_object_member (object, "probe");
  g_assert_true (json_object_get_boolean_member (probe, "ok"));
  g_assert_cmpstr (json_object_get_string_member (probe, "level"), ==, "full");
  g_assert_false (json_object_get_boolean_member (probe, "unconfined_only"));
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (probe, "guarantees")), ==, 8);
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (probe, "entries")), ==, 1);
  object = json_array_get_object_element (backends, 1);
  probe = json_object_get_object_member (object, "probe");
  g_assert_false (json_object_get_boolean_member (probe, "ok"));
  g_assert_cmpstr (json_object_get_string_member (probe, "error_code"), ==, "unavailable");

  /* No egress: none of the listed mocks has an egress extension. */
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (root, "egress")), ==, 0);
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (root, "reporters")), ==, 1);
}

/* ------------------------------------------------------------------------- */
/* No leaks of fds or processes                                               */
/* ------------------------------------------------------------------------- */

static void
test_no_fd_leaks (void)
{
  static const char *const every_mock[] = {
    "ok", "abi-too-new", "size-too-small", "requires-unknown-feature", "init-fails", "probe-short",
    "probe-fails", "bad-name", "unknown-kind", "vtable-short", "dup-extension", "missing-symbol", "prio",
    "requires-rule-fds", "egress",
  };
  guint before;

  /* Warm up anything GLib opens lazily (type system, dl state). */
  g_object_unref (registry_for_mocks ("ok", NULL));
  before = count_open_fds ();
  for (guint i = 0; i < G_N_ELEMENTS (every_mock); i++)
    {
      g_autoptr(SbxRegistry) registry = registry_for_mocks (every_mock[i], NULL);
      g_autoptr(SbxCompileReport) report = NULL;
      g_autofree char *json = sbx_registry_to_json (registry);

      g_assert_nonnull (json);
      sbx_registry_preview_selection (registry, SBX_ISOLATION_SANDBOXED, DEFAULT_SANDBOXED_REQUIRED, &report, NULL);
    }
  g_assert_cmpuint (count_open_fds (), ==, before);
  assert_no_children ();
}

/* compile may narrow what probe found, never exceed it: a spec claiming a
 * guarantee or a level beyond the probe is released and refused, and an
 * honest compile of the same plugin (equal to the probe) still passes. */
static void
test_compile_claims_more_than_probe (void)
{
  g_autoptr(SbxRegistry) registry = registry_for_mocks ("contract-breaker", NULL);
  static const struct { const char *backend; const char *needle; } rows[] = {
    { "mock-claims-more-guarantees", "guarantees beyond the probe: [write-boundary]" },
    { "mock-claims-more-level", "level full, probed degraded" },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (rows); i++)
    {
      g_autoptr(SbxBackend) backend = sbx_registry_lookup_backend (registry, rows[i].backend);
      g_autoptr(SbxCompileReport) report = sbx_compile_report_new ();
      g_autoptr(GError) error = NULL;
      unsigned released_before = mock_breaker_count ("release");
      SbxBackendSpec *spec;
      TestPolicy tp;

      g_assert_nonnull (backend);
      test_policy_init (&tp, SBX_GUARANTEE_ENV_SCRUB);
      spec = sbx_backend_compile (backend, &tp.policy, report, NULL, NULL, &error);
      g_assert_null (spec);
      g_assert_error (error, SBX_PLUGIN_ERROR, SBX_PLUGIN_ERROR_INVALID);
      g_assert_nonnull (strstr (error->message, "compile claims more than probe found"));
      g_assert_nonnull (strstr (error->message, rows[i].needle));
      g_assert_nonnull (strstr (error->message, rows[i].backend));
      /* The refused spec was handed back to the plugin exactly once. */
      g_assert_cmpuint (mock_breaker_count ("release") - released_before, ==, 1);
    }

  /* Positive control: the same probe, a compile equal to it. */
  {
    g_autoptr(SbxBackend) backend = sbx_registry_lookup_backend (registry, "mock-not-a-child");
    g_autoptr(GError) error = NULL;
    SbxLevel level = SBX_LEVEL_NONE;
    SbxGuarantees guarantees = 0;
    SbxBackendSpec *spec;
    TestPolicy tp;

    test_policy_init (&tp, SBX_GUARANTEE_ENV_SCRUB);
    spec = sbx_backend_compile (backend, &tp.policy, NULL, &level, &guarantees, &error);
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
  g_autoptr(SbxRegistry) registry = registry_for_mocks ("contract-breaker", NULL);
  g_autoptr(SbxBackend) backend = sbx_registry_lookup_backend (registry, "mock-claims-unenforced");
  g_autoptr(SbxCompileReport) report = sbx_compile_report_new ();
  g_autoptr(GError) error = NULL;
  unsigned released_before = mock_breaker_count ("release");
  SbxBackendSpec *spec;
  TestPolicy tp;

  g_assert_nonnull (backend);
  test_policy_init (&tp, SBX_GUARANTEE_ENV_SCRUB);
  spec = sbx_backend_compile (backend, &tp.policy, report, NULL, NULL, &error);
  g_assert_null (spec);
  g_assert_error (error, SBX_PLUGIN_ERROR, SBX_PLUGIN_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "'mock-claims-unenforced': compile claims [env-scrub] "
                                            "and reports it unenforced"));
  g_assert_cmpuint (mock_breaker_count ("release") - released_before, ==, 1);
}

/* spawn must return a direct child of the host: a grandchild (double fork)
 * is refused, its tree is killed through signal() and the handle freed
 * through finish(); nothing is left running. */
static void
test_spawn_not_a_child (void)
{
  g_autoptr(SbxRegistry) registry = registry_for_mocks ("contract-breaker", NULL);
  g_autoptr(SbxBackend) backend = sbx_registry_lookup_backend (registry, "mock-not-a-child");
  g_autoptr(GError) error = NULL;
  const char *argv[] = { "sleep", "30", NULL };
  const char *envp[] = { "PATH=/usr/bin:/bin", NULL };
  SbxSpawnRequestV1 request = { sizeof request, 0, "/", argv, envp, -1, -1, -1, 0 };
  SbxSpawnResultV1 result = { 0 };
  unsigned signals_before = mock_breaker_count ("signal");
  unsigned finishes_before = mock_breaker_count ("finish");
  SbxBackendSpec *spec;
  const char *at;
  gint64 pid;
  gint64 deadline;
  TestPolicy tp;

  test_policy_init (&tp, SBX_GUARANTEE_ENV_SCRUB);
  spec = sbx_backend_compile (backend, &tp.policy, NULL, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_false (sbx_backend_spawn (spec, &request, &result, &error));
  g_assert_error (error, SBX_PLUGIN_ERROR, SBX_PLUGIN_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "not a child of this process"));
  g_assert_cmpuint (mock_breaker_count ("signal") - signals_before, ==, 1);
  g_assert_cmpuint (mock_breaker_count ("finish") - finishes_before, ==, 1);

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
  g_autoptr(SbxRegistry) registry = registry_for_mocks ("contract-breaker", NULL);
  g_autoptr(SbxBackend) backend = sbx_registry_lookup_backend (registry, "mock-ignores-flags");
  g_autoptr(GError) error = NULL;
  const char *argv[] = { "sleep", "30", NULL };
  const char *envp[] = { "PATH=/usr/bin:/bin", NULL };
  SbxSpawnRequestV1 request = { sizeof request, 0, "/", argv, envp, -1, -1, -1, 0 };
  SbxSpawnResultV1 result = { 0 };
  unsigned signals_before = mock_breaker_count ("signal");
  unsigned finishes_before = mock_breaker_count ("finish");
  SbxBackendSpec *spec;
  TestPolicy tp;
  int status;

  test_policy_init (&tp, SBX_GUARANTEE_ENV_SCRUB);
  spec = sbx_backend_compile (backend, &tp.policy, NULL, NULL, NULL, &error);
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
  signals_before = mock_breaker_count ("signal");
  finishes_before = mock_breaker_count ("finish");

  request.flags = SBX_SPAWN_IGNORED_SIGNALS;
  request.ignored_signals = UINT64_C (1) << (SIGHUP - 1);
  memset (&result, 0, sizeof result);
  g_assert_false (sbx_backend_spawn (spec, &request, &result, &error));
  g_assert_error (error, SBX_PLUGIN_ERROR, SBX_PLUGIN_ERROR_UNSUPPORTED);
  g_assert_nonnull (strstr (error->message, "SBX_SPAWN_IGNORED_SIGNALS"));
  g_assert_nonnull (strstr (error->message, "mock-ignores-flags"));
  g_assert_cmpuint (mock_breaker_count ("signal") - signals_before, ==, 1);
  g_assert_cmpuint (mock_breaker_count ("finish") - finishes_before, ==, 1);
  assert_no_children ();
  sbx_backend_spec_unref (spec);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  g_test_add_func ("/registry/load/ok", test_load_ok);
  g_test_add_func ("/registry/load/host-features-implemented", test_host_features_implemented);
  g_test_add_func ("/registry/load/host-features-default", test_host_features_default);
  g_test_add_func ("/registry/load/refused", test_load_refused);
  g_test_add_func ("/registry/load/refused-alone-fails-selection", test_load_refused_alone_fails_selection);
  g_test_add_func ("/registry/load/duplicate-extension", test_load_duplicate_extension);
  g_test_add_func ("/registry/load/duplicate-plugin-name", test_load_duplicate_plugin_name);
  g_test_add_func ("/registry/load/missing-directory", test_load_missing_directory);
  g_test_add_func ("/registry/load/add-directory", test_add_directory);
  g_test_add_func ("/registry/permissions/file-writable", test_permissions_file_writable);
  g_test_add_func ("/registry/permissions/directory-writable", test_permissions_directory_writable);
  g_test_add_func ("/registry/permissions/symlink", test_permissions_symlink);
  g_test_add_func ("/registry/permissions/owner", test_permissions_owner);
  g_test_add_func ("/registry/permissions/decision-table", test_permissions_decision_table);
  g_test_add_func ("/registry/permissions/overflow-unmapped", test_overflow_unmapped);
  g_test_add_func ("/registry/permissions/foreign-owner-refused", test_foreign_owner_refused);
  g_test_add_func ("/registry/path/default-directories", test_path_default_directories);
  g_test_add_func ("/registry/path/env-honoured", test_path_env_honoured);
  g_test_add_func ("/registry/path/env-honoured/subprocess/child", child_path_env_honoured);
  g_test_add_func ("/registry/path/env-unset", test_path_env_unset);
  g_test_add_func ("/registry/path/env-unset/subprocess/child", child_path_env_unset);
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
  g_test_add_func ("/registry/spec/release-once", test_spec_release_once);
  g_test_add_func ("/registry/spec/spawn-finish", test_spawn_finish);
  g_test_add_func ("/registry/spec/unsupported", test_wrappers_unsupported);
  g_test_add_func ("/registry/host/table", test_host_table);
  g_test_add_func ("/registry/host/status-mapping", test_status_mapping);
  g_test_add_func ("/registry/report/json-shape", test_report_json_shape);
  g_test_add_func ("/registry/report/statuses-and-caps", test_report_statuses_and_caps);
  g_test_add_func ("/registry/report/from-selection", test_report_from_selection_json);
  g_test_add_func ("/registry/reporter/sink", test_reporter_sink);
  g_test_add_func ("/registry/json", test_registry_json);
  g_test_add_func ("/registry/no-fd-leaks", test_no_fd_leaks);
  g_test_add_func ("/registry/compile/claims-more-than-probe", test_compile_claims_more_than_probe);
  g_test_add_func ("/registry/compile/contradiction", test_compile_contradicts_itself);
  g_test_add_func ("/registry/spawn/not-a-child", test_spawn_not_a_child);
  g_test_add_func ("/registry/spawn/unconfirmed-ignored-signals", test_spawn_unconfirmed_ignored_signals);

  return g_test_run ();
}
