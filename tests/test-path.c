/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <gio/gio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sbx-path-private.h"
#include "executor-test-util.h"

static void
test_clean (void)
{
  static const struct { const char *in; const char *out; } rows[] = {
    { "", "." }, { ".", "." }, { "/", "/" }, { "//", "/" }, { "/a/", "/a" }, { "/a//b", "/a/b" },
    { "/a/./b", "/a/b" }, { "/a/../b", "/b" }, { "/..", "/" }, { "/../a", "/a" }, { "a/..", "." },
    { "../a", "../a" }, { "a/../..", ".." }, { "a/b/../../../c", "../c" }, { "/a/b/c/..", "/a/b" },
    { "/a/..b/.c", "/a/..b/.c" }, { "abc", "abc" }, { "./a/", "a" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (rows); i++)
    {
      g_autofree char *clean = sbx_path_clean (rows[i].in);

      g_assert_cmpstr (clean, ==, rows[i].out);
    }
}

static void
test_is_clean_absolute (void)
{
  static const char *const good[] = { "/", "/a", "/a/b", "/a/..b", "/a/b.", "/...", "/a b/c" };
  static const char *const bad[] = { "", "a", "a/b", "//", "/a/", "/a//b", "/a/./b", "/a/../b", "/.", "/..", "/a/.", "./a" };

  for (guint i = 0; i < G_N_ELEMENTS (good); i++)
    {
      g_autofree char *clean = sbx_path_clean (good[i]);

      g_assert_true (sbx_path_is_clean_absolute (good[i]));
      g_assert_cmpstr (clean, ==, good[i]);
    }
  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    g_assert_false (sbx_path_is_clean_absolute (bad[i]));
  g_assert_false (sbx_path_is_clean_absolute (NULL));
}

static void
test_within (void)
{
  g_assert_true (sbx_path_within ("/srv/app", "/srv/app"));
  g_assert_true (sbx_path_within ("/srv/app/x", "/srv/app"));
  g_assert_false (sbx_path_within ("/srv/app2", "/srv/app"));
  g_assert_false (sbx_path_within ("/srv", "/srv/app"));
  g_assert_false (sbx_path_within ("/SRV/app", "/srv/app"));
  g_assert_true (sbx_path_within ("/anything", "/"));
  g_assert_true (sbx_path_within ("/", "/"));
}

static void
test_canonical_root (void)
{
  g_autofree char *tmp = etu_make_tmpdir ("sbx-test-path-XXXXXX");
  g_autofree char *dir = etu_mkdir (tmp, "d/e");
  g_autofree char *file = etu_write_file (tmp, "f", "");
  g_autofree char *dangling = etu_symlink (tmp, "dangling", "nowhere");
  g_autofree char *loop = etu_symlink (tmp, "loop", "loop");
  g_autofree char *spelled = g_strconcat (tmp, "//l/./", NULL);
  g_autofree char *via_dotdot = g_strconcat (tmp, "/d/e/../e", NULL);
  g_autofree char *under_file = g_strconcat (file, "/x", NULL);
  g_autofree char *missing = g_strconcat (tmp, "/missing", NULL);
  g_autofree char *got = NULL;
  g_autoptr(GError) error = NULL;

  g_free (etu_symlink (tmp, "l", "d/e"));
  got = sbx_path_canonical_root (spelled, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (got, ==, dir);
  g_clear_pointer (&got, g_free);
  got = sbx_path_canonical_root (via_dotdot, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (got, ==, dir);
  g_clear_pointer (&got, g_free);

  g_assert_null (sbx_path_canonical_root ("", &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT);
  g_assert_cmpstr (error->message, ==, "path is empty");
  g_clear_error (&error);
  g_assert_null (sbx_path_canonical_root ("rel/x", &error));
  g_assert_cmpstr (error->message, ==, "path is not absolute");
  g_clear_error (&error);
  g_assert_null (sbx_path_canonical_root (missing, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND);
  g_assert_true (g_str_has_prefix (error->message, "resolve symlinks: "));
  g_clear_error (&error);
  g_assert_null (sbx_path_canonical_root (file, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_DIRECTORY);
  g_assert_cmpstr (error->message, ==, "path is not a directory");
  g_clear_error (&error);
  g_assert_null (sbx_path_canonical_root (dangling, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND);
  g_clear_error (&error);
  g_assert_null (sbx_path_canonical_root (loop, &error));
  g_assert_nonnull (error);
  g_clear_error (&error);
  g_assert_null (sbx_path_canonical_root (under_file, &error));
  g_assert_nonnull (error);
  g_clear_error (&error);

  etu_rm_rf (tmp);
}

static void
test_canonical_path (void)
{
  g_autofree char *tmp = etu_make_tmpdir ("sbx-test-path-XXXXXX");
  g_autofree char *dir = etu_mkdir (tmp, "d/e");
  g_autofree char *file = etu_write_file (tmp, "d/f", "");
  g_autofree char *link = etu_symlink (tmp, "l", "d");
  g_autofree char *dangling = etu_symlink (tmp, "d/dangling", "nowhere");
  g_autoptr(GError) error = NULL;
  struct { const char *in; const char *out; } rows[] = {
    { "/l/e", "/d/e" },                 /* existing, through a symlink */
    { "/l/e/new", "/d/e/new" },         /* missing leaf */
    { "/l/new1/new2", "/d/new1/new2" }, /* several missing components */
    { "/l/./new/../f", "/d/f" },        /* cleaned first */
    { "/l/f", "/d/f" },                 /* an existing file */
  };

  for (guint i = 0; i < G_N_ELEMENTS (rows); i++)
    {
      g_autofree char *in = g_strconcat (tmp, rows[i].in, NULL);
      g_autofree char *out = g_strconcat (tmp, rows[i].out, NULL);
      g_autofree char *got = sbx_path_canonical_path (in, &error);

      g_assert_no_error (error);
      g_assert_cmpstr (got, ==, out);
    }
  {
    g_autofree char *got = sbx_path_canonical_path ("/", &error);

    g_assert_no_error (error);
    g_assert_cmpstr (got, ==, "/");
  }
  {
    g_autofree char *got = sbx_path_canonical_path ("/sbx-no-such-dir/x", &error);

    g_assert_no_error (error);
    g_assert_cmpstr (got, ==, "/sbx-no-such-dir/x");
  }
  /* Stricter than upstream: a dangling link is not a missing leaf. */
  {
    g_autofree char *in = g_strconcat (tmp, "/l/dangling/x", NULL);

    g_assert_null (sbx_path_canonical_path (in, &error));
    g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND);
    g_assert_cmpstr (error->message, ==, "resolve symlinks: dangling symbolic link");
    g_clear_error (&error);
    g_assert_null (sbx_path_canonical_path (dangling, &error));
    g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND);
    g_clear_error (&error);
  }
  /* A file in the middle is not a missing directory. */
  {
    g_autofree char *in = g_strconcat (file, "/x", NULL);

    g_assert_null (sbx_path_canonical_path (in, &error));
    g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_DIRECTORY);
    g_clear_error (&error);
  }
  g_assert_null (sbx_path_canonical_path ("relative", &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);

  (void) dir;
  (void) link;
  etu_rm_rf (tmp);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
  g_test_add_func ("/path/clean", test_clean);
  g_test_add_func ("/path/is-clean-absolute", test_is_clean_absolute);
  g_test_add_func ("/path/within", test_within);
  g_test_add_func ("/path/canonical-root", test_canonical_root);
  g_test_add_func ("/path/canonical-path", test_canonical_path);
  return g_test_run ();
}
