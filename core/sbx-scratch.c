/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "sbx-scratch-private.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gio/gio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int
compare_strings (gconstpointer a,
                 gconstpointer b)
{
  return strcmp (*(const char *const *) a, *(const char *const *) b);
}

gboolean
sbx_scratch_list (const char  *scratch_root,
                  const char  *except,
                  GStrv       *out_set_dirs,
                  GStrv       *out_entries,
                  GError     **error)
{
  g_autoptr(GPtrArray) sets = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) others = g_ptr_array_new_with_free_func (g_free);
  DIR *dir;
  struct dirent *de;
  int dfd;

  g_return_val_if_fail (scratch_root != NULL, FALSE);

  dfd = open (scratch_root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dfd < 0)
    {
      int errsv = errno;

      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errsv),
                   "Cannot open the scratch root %s: %s", scratch_root, g_strerror (errsv));
      return FALSE;
    }
  dir = fdopendir (dfd);
  if (dir == NULL)
    {
      int errsv = errno;

      close (dfd);
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errsv),
                   "Cannot list the scratch root %s: %s", scratch_root, g_strerror (errsv));
      return FALSE;
    }
  for (;;)
    {
      struct stat st;
      char *path;
      gboolean is_set;

      errno = 0;
      de = readdir (dir);
      if (de == NULL)
        {
          int errsv = errno;

          if (errsv == 0)
            break;
          closedir (dir);
          g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errsv),
                       "Cannot list the scratch root %s: %s", scratch_root, g_strerror (errsv));
          return FALSE;
        }
      if (g_str_equal (de->d_name, ".") || g_str_equal (de->d_name, ".."))
        continue;
      if (fstatat (dirfd (dir), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
        continue;   /* gone since readdir */
      is_set = g_str_has_prefix (de->d_name, SBX_SET_DIR_PREFIX) && S_ISDIR (st.st_mode);
      path = g_build_filename (scratch_root, de->d_name, NULL);
      if (is_set && except != NULL && g_str_equal (path, except))
        {
          g_free (path);
          continue;
        }
      if ((is_set && sets->len >= SBX_SCRATCH_MAX_SET_DIRS)
          || (!is_set && others->len >= SBX_SCRATCH_MAX_ENTRIES))
        {
          g_free (path);
          closedir (dir);
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_TOO_MANY_LINKS,
                       "The scratch root %s holds more than %u %s", scratch_root,
                       is_set ? SBX_SCRATCH_MAX_SET_DIRS : SBX_SCRATCH_MAX_ENTRIES,
                       is_set ? "executor-set directories (" SBX_SET_DIR_PREFIX "*). "
                                "Hint: `sbx doctor --clean` removes stale ones"
                              : "entries. Hint: use a scratch root of its own (TMPDIR)");
          return FALSE;
        }
      g_ptr_array_add (is_set ? sets : others, path);
    }
  closedir (dir);
  g_ptr_array_sort (sets, compare_strings);
  g_ptr_array_sort (others, compare_strings);
  g_ptr_array_add (sets, NULL);
  g_ptr_array_add (others, NULL);
  if (out_set_dirs != NULL)
    *out_set_dirs = (GStrv) g_ptr_array_steal (sets, NULL);
  if (out_entries != NULL)
    *out_entries = (GStrv) g_ptr_array_steal (others, NULL);
  return TRUE;
}

GStrv
sbx_scratch_list_set_dirs (const char  *scratch_root,
                           const char  *except,
                           GError     **error)
{
  GStrv set_dirs = NULL;

  if (!sbx_scratch_list (scratch_root, except, &set_dirs, NULL, error))
    return NULL;
  return set_dirs;
}
