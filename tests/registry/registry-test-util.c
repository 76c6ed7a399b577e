/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The registry tests' shared fixtures (registry-test-util.h). */
#include "registry-test-util.h"

#include <dlfcn.h>
#include <errno.h>
#include <sys/wait.h>

#include <glib/gstdio.h>

#include "executor-test-util.h"
#include "registry-list-util.h"

char *
rtu_mock_dir (const char *name)
{
  const char *base = g_getenv ("SBX_TEST_MOCK_PLUGIN_DIR");

  g_assert_nonnull (base);
  return g_build_filename (base, name, NULL);
}

char *
rtu_mock_file (const char *name)
{
  g_autofree char *dir = rtu_mock_dir (name);
  g_autofree char *file = g_strdup_printf ("sbx-plugin-mock-%s.so", name);

  return g_build_filename (dir, file, NULL);
}

int
rtu_find_plugin (SbxRegistry *registry,
                 const char  *name)
{
  for (guint i = 0; i < registry_n_plugins (registry); i++)
    if (g_str_equal (sbx_plugin_info_get_name (registry_plugin (registry, i)), name))
      return (int) i;
  return -1;
}

int
rtu_find_rejected (SbxCompileReport *report,
                   const char       *name)
{
  for (guint i = 0; i < sbx_compile_report_get_n_rejected (report); i++)
    if (g_str_equal (sbx_compile_report_get_rejected_name (report, i), name))
      return (int) i;
  return -1;
}

/* How often a mock's code was called: its own counters, process-wide,
 * read through @symbol; 0 when the mock is not loaded in this process
 * (never called). */
static unsigned
mock_count (const char *mock,
            const char *symbol,
            const char *what)
{
  g_autofree char *path = rtu_mock_file (mock);
  void *handle = dlopen (path, RTLD_NOW | RTLD_NOLOAD);
  unsigned (*count) (const char *);
  unsigned value;

  if (handle == NULL)
    return 0;
  count = (unsigned (*) (const char *)) dlsym (handle, symbol);
  g_assert_nonnull (count);
  value = count (what);
  dlclose (handle);
  return value;
}

unsigned
rtu_mock_ok_count (const char *what)
{
  return mock_count ("ok", "sbx_mock_ok_count", what);
}

unsigned
rtu_mock_breaker_count (const char *what)
{
  return mock_count ("contract-breaker", "sbx_mock_contract_breaker_count", what);
}

SbxBackend *
rtu_select_or_fail (SbxRegistry       *registry,
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


EtuPolicy *
rtu_policy_new (SbxGuarantees required)
{
  EtuPolicy *tp = etu_policy_new ("/");

  tp->net.mode = SBX_NET_MODE_DENY;
  tp->policy.required_guarantees = required;
  tp->policy.workspace = "/";
  tp->policy.home = "/";
  tp->policy.tmpdir = "/tmp";
  tp->policy.state_dir = "/tmp";
  return tp;
}

/* A fresh 0700 directory holding a copy of mock-ok's file with @mode. */
char *
rtu_copy_mock_ok (const char *tmpdir,
                  mode_t      mode)
{
  g_autofree char *source = rtu_mock_file ("ok");
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

char *
rtu_make_tmpdir (void)
{
  g_autoptr(GError) error = NULL;
  char *dir = g_dir_make_tmp ("sbx-registry-XXXXXX", &error);

  g_assert_no_error (error);
  g_assert_cmpint (g_chmod (dir, 0755), ==, 0);
  return dir;
}

void
rtu_remove_tree (const char *dir)
{
  g_assert_true (g_file_test (dir, G_FILE_TEST_IS_DIR));
  etu_rm_rf (dir);
  g_assert_false (g_file_test (dir, G_FILE_TEST_EXISTS));
}
