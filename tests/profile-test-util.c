/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "profile-test-util.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A new directory under the (isolated) temp dir, with symlinks resolved so
 * expected canonical paths can be built from it. */
char *
ptu_make_tmpdir (const char *template_name)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp (template_name, &error);
  char *resolved;
  char *copy;

  g_assert_no_error (error);
  resolved = realpath (dir, NULL);
  g_assert_nonnull (resolved);
  copy = g_strdup (resolved);
  free (resolved);
  return copy;
}

char *
ptu_mkdir (const char *base,
           const char *relative)
{
  char *path = g_build_filename (base, relative, NULL);

  g_assert_cmpint (g_mkdir_with_parents (path, 0755), ==, 0);
  return path;
}

char *
ptu_write_file (const char *base,
                const char *relative,
                const char *contents)
{
  g_autoptr(GError) error = NULL;
  char *path = g_build_filename (base, relative, NULL);

  g_file_set_contents (path, contents, -1, &error);
  g_assert_no_error (error);
  return path;
}

char *
ptu_symlink (const char *base,
             const char *relative,
             const char *target)
{
  char *path = g_build_filename (base, relative, NULL);

  g_assert_cmpint (symlink (target, path), ==, 0);
  return path;
}

void
ptu_rm_rf (const char *path)
{
  struct stat st;

  if (lstat (path, &st) != 0)
    return;
  if (S_ISDIR (st.st_mode))
    {
      g_autoptr(GDir) dir = NULL;
      const char *name;

      /* Make it readable, writable and searchable first (tests may chmod). */
      chmod (path, 0700);
      dir = g_dir_open (path, 0, NULL);
      if (dir != NULL)
        while ((name = g_dir_read_name (dir)) != NULL)
          {
            g_autofree char *child = g_build_filename (path, name, NULL);

            ptu_rm_rf (child);
          }
      g_assert_cmpint (rmdir (path), ==, 0);
    }
  else
    g_assert_cmpint (unlink (path), ==, 0);
}
