/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Loading, descriptor validation, the loader's permission checks and
 * SBX_PLUGIN_PATH (core/plugin/sbx-plugin-loader.c), and no fd or process
 * left behind by any mock.
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

/* ------------------------------------------------------------------------- */
/* Loading                                                                    */
/* ------------------------------------------------------------------------- */

static void
test_load_ok (void)
{
  g_autoptr(SbxRegistry) registry = NULL;
  unsigned init_before = rtu_mock_ok_count ("init");
  unsigned fini_before = rtu_mock_ok_count ("fini");
  gboolean seen[4] = { FALSE, };
  int index;

  registry = etu_registry ("ok", NULL);
  g_assert_cmpuint (rtu_mock_ok_count ("init"), ==, init_before + 1);

  g_assert_cmpuint (registry_n_directories (registry), ==, 1);
  g_assert_null (sbx_directory_info_get_error (registry_directory (registry, 0)));
  g_assert_cmpuint (registry_n_plugins (registry), ==, 1);
  index = rtu_find_plugin (registry, "mock-ok");
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
  g_assert_cmpuint (rtu_mock_ok_count ("fini"), ==, fini_before + 1);
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
  g_autofree char *rule_fds_dir = rtu_mock_dir ("requires-rule-fds");
  g_autofree char *egress_dir = rtu_mock_dir ("egress");
  g_autofree char *unknown_dir = rtu_mock_dir ("requires-unknown-feature");
  const char *dirs[] = { rule_fds_dir, egress_dir, unknown_dir, NULL };
  g_autoptr(GError) error = NULL;
  g_autoptr(SbxRegistry) registry = NULL;

  registry = sbx_registry_new_with_host_features (dirs, SBX_HOST_FEATURE_RULE_FDS | SBX_HOST_FEATURE_EGRESS_V1,
                                                  &error);
  g_assert_no_error (error);
  g_assert_cmpint (sbx_plugin_info_get_state (registry_plugin (registry, rtu_find_plugin (registry, "mock-requires-rule-fds"))), ==,
                   SBX_PLUGIN_STATE_LOADED);
  g_assert_cmpint (sbx_plugin_info_get_state (registry_plugin (registry, rtu_find_plugin (registry, "mock-egress"))), ==,
                   SBX_PLUGIN_STATE_LOADED);
  /* A bit no header defines is refused whatever the host implements. */
  g_assert_cmpint (sbx_plugin_info_get_state (registry_plugin (registry, rtu_find_plugin (registry, "mock-requires-unknown-feature"))),
                   ==, SBX_PLUGIN_STATE_REFUSED);
  g_assert_cmpuint (registry_n_extensions (registry), ==, 2);

  /* A host implementing only rule fds still refuses the egress plugin. */
  g_clear_object (&registry);
  registry = sbx_registry_new_with_host_features (dirs, SBX_HOST_FEATURE_RULE_FDS, &error);
  g_assert_no_error (error);
  g_assert_cmpint (sbx_plugin_info_get_state (registry_plugin (registry, rtu_find_plugin (registry, "mock-requires-rule-fds"))), ==,
                   SBX_PLUGIN_STATE_LOADED);
  g_assert_cmpint (sbx_plugin_info_get_state (registry_plugin (registry, rtu_find_plugin (registry, "mock-egress"))), ==,
                   SBX_PLUGIN_STATE_REFUSED);
  g_assert_error (sbx_plugin_info_get_error (registry_plugin (registry, rtu_find_plugin (registry, "mock-egress"))),
                  SBX_PLUGIN_ERROR, SBX_PLUGIN_ERROR_MISSING_HOST_FEATURE);
}

/* The default host table implements rule fds (the grants work), the proxy
 * listener, egress and the egress listeners (the egress work): plugins
 * requiring them load, and their init saw the bits (each fails otherwise). */
static void
test_host_features_default (void)
{
  g_autoptr(SbxRegistry) registry = etu_registry ("requires-rule-fds", "egress", NULL);

  g_assert_cmpuint (sbx_host_table ()->features, ==,
                    SBX_HOST_FEATURE_RULE_FDS | SBX_HOST_FEATURE_PROXY_LISTEN_FD | SBX_HOST_FEATURE_EGRESS_V1 |
                    SBX_HOST_FEATURE_EGRESS_LISTENERS);
  g_assert_cmpint (sbx_plugin_info_get_state (registry_plugin (registry, rtu_find_plugin (registry, "mock-requires-rule-fds"))), ==,
                   SBX_PLUGIN_STATE_LOADED);
  g_assert_cmpint (sbx_plugin_info_get_state (registry_plugin (registry, rtu_find_plugin (registry, "mock-egress"))), ==,
                   SBX_PLUGIN_STATE_LOADED);
}

static void
test_load_refused (void)
{
  for (guint i = 0; i < G_N_ELEMENTS (refusal_cases); i++)
    {
      const RefusalCase *row = &refusal_cases[i];
      g_autofree char *plugin_name = g_strconcat ("mock-", row->mock, NULL);
      g_autoptr(SbxRegistry) registry = etu_registry (row->mock, "ok", NULL);
      g_autoptr(SbxCompileReport) report = NULL;
      g_autoptr(SbxBackend) backend = NULL;
      g_autoptr(GError) error = NULL;
      const GError *refusal;
      int index = rtu_find_plugin (registry, plugin_name);
      int rejected;

      g_test_message ("mock %s", row->mock);
      g_assert_cmpint (index, >=, 0);
      g_assert_cmpint (sbx_plugin_info_get_state (registry_plugin (registry, index)), ==, SBX_PLUGIN_STATE_REFUSED);
      refusal = sbx_plugin_info_get_error (registry_plugin (registry, index));
      g_assert_error (refusal, SBX_PLUGIN_ERROR, (gint) row->code);
      g_assert_nonnull (strstr (refusal->message, row->message_part));
      /* None of its extensions is registered: only mock-ok's two. */
      g_assert_cmpuint (registry_n_extensions (registry), ==, 2);
      g_assert_cmpint (sbx_plugin_info_get_state (registry_plugin (registry, rtu_find_plugin (registry, "mock-ok"))), ==,
                       SBX_PLUGIN_STATE_LOADED);

      /* Selection: the refused plugin shows up as rejected, with its reason. */
      backend = rtu_select_or_fail (registry, FALSE, DEFAULT_SANDBOXED_REQUIRED, NULL, &report, &error);
      g_assert_no_error (error);
      g_assert_cmpstr (sbx_backend_get_name (backend), ==, "mock-ok");
      rejected = rtu_find_rejected (report, plugin_name);
      g_assert_cmpint (rejected, >=, 0);
      g_assert_true (g_str_has_prefix (sbx_compile_report_get_rejected_reason (report, rejected),
                                       "plugin refused at load: "));
      g_assert_nonnull (strstr (sbx_compile_report_get_rejected_reason (report, rejected), row->message_part));
    }
}

static void
test_load_refused_alone_fails_selection (void)
{
  g_autoptr(SbxRegistry) registry = etu_registry ("abi-too-new", NULL);
  g_autoptr(SbxCompileReport) report = NULL;
  g_autoptr(SbxBackend) backend = NULL;
  g_autoptr(GError) error = NULL;

  backend = rtu_select_or_fail (registry, FALSE, DEFAULT_SANDBOXED_REQUIRED, NULL, &report, &error);
  g_assert_null (backend);
  g_assert_error (error, SBX_PLUGIN_ERROR, SBX_PLUGIN_ERROR_BACKEND_UNAVAILABLE);
  g_assert_nonnull (strstr (error->message, "no backend plugin is loaded"));
  g_assert_null (sbx_compile_report_get_backend (report));
  g_assert_cmpint (rtu_find_rejected (report, "mock-abi-too-new"), ==, 0);
}

static void
test_load_duplicate_extension (void)
{
  g_autoptr(SbxRegistry) registry = etu_registry ("ok", "dup-extension", NULL);
  int index = rtu_find_plugin (registry, "mock-dup-extension");
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
  g_autofree char *tmpdir = rtu_make_tmpdir ();
  g_autofree char *copy = rtu_copy_mock_ok (tmpdir, 0644);
  g_autofree char *ok_dir = rtu_mock_dir ("ok");
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
  rtu_remove_tree (tmpdir);
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
  g_autoptr(SbxRegistry) registry = etu_registry ("ok", NULL);
  g_autofree char *prio = rtu_mock_dir ("prio");
  g_autoptr(GError) error = NULL;

  g_assert_true (sbx_registry_add_directory (registry, prio, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (registry_n_directories (registry), ==, 2);
  g_assert_cmpint (rtu_find_plugin (registry, "mock-prio"), ==, 1);
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
      g_autofree char *tmpdir = rtu_make_tmpdir ();
      g_autofree char *file = rtu_copy_mock_ok (tmpdir, rows[i].mode);
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
      rtu_remove_tree (tmpdir);
    }
}

static void
test_permissions_directory_writable (void)
{
  g_autofree char *tmpdir = rtu_make_tmpdir ();
  g_autofree char *file = rtu_copy_mock_ok (tmpdir, 0644);
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
  rtu_remove_tree (tmpdir);
}

static void
test_permissions_symlink (void)
{
  g_autofree char *tmpdir = rtu_make_tmpdir ();
  g_autofree char *source = rtu_mock_file ("ok");
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
  rtu_remove_tree (tmpdir);
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
  tmpdir = rtu_make_tmpdir ();
  file = rtu_copy_mock_ok (tmpdir, 0644);
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
  rtu_remove_tree (tmpdir);
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
  g_autofree char *ok_dir = rtu_mock_dir ("ok");
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
  index = rtu_find_plugin (registry, "mock-ok");
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
  g_assert_cmpint (rtu_find_plugin (registry, "mock-ok"), ==, -1);
}

/* ------------------------------------------------------------------------- */

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
  g_object_unref (etu_registry ("ok", NULL));
  before = etu_count_fds ();
  for (guint i = 0; i < G_N_ELEMENTS (every_mock); i++)
    {
      g_autoptr(SbxRegistry) registry = etu_registry (every_mock[i], NULL);
      g_autoptr(SbxCompileReport) report = NULL;
      g_autofree char *json = sbx_registry_to_json (registry);

      g_assert_nonnull (json);
      sbx_registry_preview_selection (registry, SBX_ISOLATION_SANDBOXED, DEFAULT_SANDBOXED_REQUIRED, &report, NULL);
    }
  g_assert_cmpuint (etu_count_fds (), ==, before);
  etu_assert_no_children ();
}

void
registry_tests_add_loader (void)
{
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
  g_test_add_func ("/registry/no-fd-leaks", test_no_fd_leaks);
}
