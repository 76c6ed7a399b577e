/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "sbx-scratch-private.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gio/gio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sbx-executor-private.h"

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
      if (!is_set && others->len >= SBX_SCRATCH_MAX_ENTRIES)
        {
          /* Left out of the snapshot: narrower (hidden), never wider. */
          g_free (path);
          continue;
        }
      if (is_set && sets->len >= SBX_SCRATCH_MAX_SET_DIRS)
        {
          g_free (path);
          closedir (dir);
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_TOO_MANY_LINKS,
                       "The scratch root %s holds more than %u executor-set directories "
                       "(" SBX_SET_DIR_PREFIX "*). Hint: `sbx doctor --clean` removes stale ones",
                       scratch_root, SBX_SCRATCH_MAX_SET_DIRS);
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

/* Whether the set directory @dfd is dead: its marker exists, is ours, and
 * nobody holds its lock.  On TRUE, *out_lock_fd holds the lock (the caller
 * closes it after removing the directory). */
static gboolean
set_dir_is_dead (int    dfd,
                 uid_t  uid,
                 int   *out_lock_fd)
{
  struct stat st;
  int lfd;

  lfd = openat (dfd, SBX_SET_LIVE_MARKER, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (lfd < 0)
    return FALSE;   /* no marker: being created, or unknown; never touched */
  if (fstat (lfd, &st) != 0 || !S_ISREG (st.st_mode) || st.st_uid != uid
      || flock (lfd, LOCK_EX | LOCK_NB) != 0)
    {
      close (lfd);
      return FALSE;   /* not a marker of ours, or its set is alive */
    }
  *out_lock_fd = lfd;
  return TRUE;
}

GStrv
sbx_scratch_reap (const char  *scratch_root,
                  gboolean     remove,
                  GError     **error)
{
  g_autoptr(GPtrArray) found = g_ptr_array_new_with_free_func (g_free);
  uid_t uid = geteuid ();
  DIR *dir;
  struct dirent *de;
  int sfd;

  g_return_val_if_fail (scratch_root != NULL, NULL);

  sfd = open (scratch_root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (sfd < 0)
    {
      int errsv = errno;

      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errsv),
                   "Cannot open the scratch root %s: %s", scratch_root, g_strerror (errsv));
      return NULL;
    }
  dir = fdopendir (sfd);
  if (dir == NULL)
    {
      int errsv = errno;

      close (sfd);
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errsv),
                   "Cannot list the scratch root %s: %s", scratch_root, g_strerror (errsv));
      return NULL;
    }
  while (found->len < SBX_SCRATCH_MAX_REAP && (de = readdir (dir)) != NULL)
    {
      g_autofree char *path = NULL;
      struct stat st, dst;
      int dfd, lock_fd = -1;

      if (!g_str_has_prefix (de->d_name, SBX_SET_DIR_PREFIX))
        continue;
      if (fstatat (dirfd (dir), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || st.st_uid != uid)
        continue;   /* gone, or another user's: never crossed into */
      path = g_build_filename (scratch_root, de->d_name, NULL);
      if (S_ISLNK (st.st_mode))
        {
          /* Planted in place of a set directory: removed as a link. */
          if (remove && unlinkat (dirfd (dir), de->d_name, 0) != 0 && errno != ENOENT)
            {
              int errsv = errno;

              closedir (dir);
              g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errsv),
                           "Cannot remove the stale link %s: %s", path, g_strerror (errsv));
              return NULL;
            }
          g_ptr_array_add (found, g_steal_pointer (&path));
          continue;
        }
      if (!S_ISDIR (st.st_mode))
        continue;
      dfd = openat (dirfd (dir), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (dfd < 0)
        continue;
      if (fstat (dfd, &dst) != 0 || dst.st_dev != st.st_dev || dst.st_ino != st.st_ino
          || dst.st_uid != uid || !set_dir_is_dead (dfd, uid, &lock_fd))
        {
          close (dfd);
          continue;
        }
      close (dfd);
      if (remove)
        {
          g_autoptr(GError) remove_error = NULL;

          /* Removed while we hold its marker's lock: a concurrent reaper
           * sees it locked and leaves it alone. */
          if (!sbx_remove_tree_at (dirfd (dir), de->d_name, path, &remove_error))
            {
              close (lock_fd);
              closedir (dir);
              g_propagate_error (error, g_steal_pointer (&remove_error));
              return NULL;
            }
        }
      close (lock_fd);
      g_ptr_array_add (found, g_steal_pointer (&path));
    }
  closedir (dir);
  g_ptr_array_sort (found, compare_strings);
  g_ptr_array_add (found, NULL);
  return (GStrv) g_ptr_array_steal (found, NULL);
}
