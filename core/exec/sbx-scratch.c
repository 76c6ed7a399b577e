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

#include "sbx-executor-set.h"

/* SBX_EXECUTOR_SET_ERROR_SCRATCH with a formatted message; FALSE. */
static gboolean
scratch_fail (GError    **error,
              const char *format,
              ...) G_GNUC_PRINTF (2, 3);

static gboolean
scratch_fail (GError    **error,
              const char *format,
              ...)
{
  va_list args;

  va_start (args, format);
  g_propagate_error (error, g_error_new_valist (SBX_EXECUTOR_SET_ERROR,
                                                SBX_EXECUTOR_SET_ERROR_SCRATCH, format, args));
  va_end (args);
  return FALSE;
}

static int
compare_strings (gconstpointer a,
                 gconstpointer b)
{
  return strcmp (*(const char *const *) a, *(const char *const *) b);
}

/* Opens @scratch_root for listing, never through a symbolic link: NULL
 * with @error naming the root on failure. */
static DIR *
scratch_open_root (const char  *scratch_root,
                   GError     **error)
{
  DIR *dir;
  int fd = open (scratch_root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

  if (fd < 0)
    {
      int errsv = errno;

      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errsv),
                   "Cannot open the scratch root %s: %s", scratch_root, g_strerror (errsv));
      return NULL;
    }
  dir = fdopendir (fd);
  if (dir == NULL)
    {
      int errsv = errno;

      close (fd);
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errsv),
                   "Cannot list the scratch root %s: %s", scratch_root, g_strerror (errsv));
      return NULL;
    }
  return dir;
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

  g_return_val_if_fail (scratch_root != NULL, FALSE);

  dir = scratch_open_root (scratch_root, error);
  if (dir == NULL)
    return FALSE;
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
      /* Only a name with the set prefix needs its type: every other entry
       * goes to @out_entries whatever it is (its rules are optional, so one
       * gone since readdir costs nothing), and a crowded temporary directory
       * must not cost a stat per entry.  The type comes from readdir where
       * the file system reports it. */
      is_set = g_str_has_prefix (de->d_name, SBX_SET_DIR_PREFIX);
      if (is_set && de->d_type == DT_UNKNOWN)
        {
          if (fstatat (dirfd (dir), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
            continue;   /* gone since readdir */
          is_set = S_ISDIR (st.st_mode);
        }
      else if (is_set)
        is_set = de->d_type == DT_DIR;
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

  g_return_val_if_fail (scratch_root != NULL, NULL);

  dir = scratch_open_root (scratch_root, error);
  if (dir == NULL)
    return NULL;
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

/* ------------------------------------------------------------------------- */
/* Removing a tree                                                            */
/* ------------------------------------------------------------------------- */

/* Empties the directory @dfd (consumed), never following symlinks.  @path is
 * for messages only. */
static gboolean
remove_dir_contents (int          dfd,
                     const char  *path,
                     GError     **error)
{
  DIR *dir;
  struct dirent *entry;
  gboolean ok = TRUE;

  /* A child may have left a directory without write or search permission. */
  fchmod (dfd, 0700);
  dir = fdopendir (dfd);
  if (dir == NULL)
    {
      int errsv = errno;

      close (dfd);
      return scratch_fail (error,
                           "Cannot list %s: %s", path, g_strerror (errsv));
    }

  while ((entry = readdir (dir)) != NULL)
    {
      const char *name = entry->d_name;
      g_autofree char *child_path = NULL;

      if (g_str_equal (name, ".") || g_str_equal (name, ".."))
        continue;
      if (unlinkat (dirfd (dir), name, 0) == 0 || errno == ENOENT)
        continue;
      if (errno == EISDIR || errno == EPERM)
        {
          int child;

          /* A directory without read or search permission cannot be opened
           * to be emptied: make it ours first (never through a symlink). */
          if (fchmodat (dirfd (dir), name, 0700, AT_SYMLINK_NOFOLLOW) != 0)
            {
              /* not fatal here: the openat below fails and names the entry */
            }
          child = openat (dirfd (dir), name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

          child_path = g_build_filename (path, name, NULL);
          if (child >= 0)
            {
              if (!remove_dir_contents (child, child_path, ok ? error : NULL))
                ok = FALSE;
              if (unlinkat (dirfd (dir), name, AT_REMOVEDIR) == 0 || errno == ENOENT)
                continue;
            }
        }
      if (ok)
        {
          int errsv = errno;

          if (child_path == NULL)
            child_path = g_build_filename (path, name, NULL);
          scratch_fail (error,
                        "Cannot remove %s: %s", child_path, g_strerror (errsv));
        }
      ok = FALSE;
    }
  closedir (dir);
  return ok;
}

gboolean
sbx_remove_tree_at (int          parent_fd,
                    const char  *name,
                    const char  *path,
                    GError     **error)
{
  int dfd;

  dfd = openat (parent_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dfd < 0)
    {
      int errsv = errno;

      if (errsv == ENOENT)
        return TRUE;
      return scratch_fail (error,
                           "Cannot open %s for removal: %s", path, g_strerror (errsv));
    }
  if (!remove_dir_contents (dfd, path, error))
    return FALSE;
  if (unlinkat (parent_fd, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
    {
      int errsv = errno;

      return scratch_fail (error,
                           "Cannot remove %s: %s", path, g_strerror (errsv));
    }
  return TRUE;
}

gboolean
sbx_remove_tree (const char  *path,
                 GError     **error)
{
  int dfd;

  dfd = open (path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dfd < 0)
    {
      int errsv = errno;

      if (errsv == ENOENT)
        return TRUE;
      return scratch_fail (error,
                           "Cannot open %s for removal: %s", path, g_strerror (errsv));
    }
  if (!remove_dir_contents (dfd, path, error))
    return FALSE;
  if (rmdir (path) < 0 && errno != ENOENT)
    {
      int errsv = errno;

      return scratch_fail (error,
                           "Cannot remove %s: %s", path, g_strerror (errsv));
    }
  return TRUE;
}

/* ------------------------------------------------------------------------- */
/* A set's own directory                                                      */
/* ------------------------------------------------------------------------- */

/* The scratch root of a set whose options name none: $XDG_RUNTIME_DIR/sbx
 * (created 0700; an existing one must be the caller's own directory, not a
 * link, with no access for anyone else), else the temporary directory. */
char *
sbx_scratch_default_root (GError **error)
{
  const char *runtime = g_getenv ("XDG_RUNTIME_DIR");
  g_autofree char *dir = NULL;
  struct stat st;

  if (runtime == NULL || runtime[0] != '/' || !g_file_test (runtime, G_FILE_TEST_IS_DIR))
    return g_strdup (g_get_tmp_dir ());
  dir = g_build_filename (runtime, "sbx", NULL);
  if (mkdir (dir, 0700) < 0 && errno != EEXIST)
    {
      int errsv = errno;

      g_debug ("cannot create %s (%s); using %s", dir, g_strerror (errsv), g_get_tmp_dir ());
      return g_strdup (g_get_tmp_dir ());
    }
  if (lstat (dir, &st) < 0 || !S_ISDIR (st.st_mode) || st.st_uid != geteuid ()
      || (st.st_mode & 077) != 0)
    {
      g_set_error (error, SBX_EXECUTOR_SET_ERROR, SBX_EXECUTOR_SET_ERROR_INVALID_OPTIONS,
                   "The default scratch root “%s” is not a directory of this user with "
                   "mode 0700 (a link or someone else's directory is never used)", dir);
      return NULL;
    }
  return g_steal_pointer (&dir);
}

gboolean
sbx_scratch_create_set_dir (const char  *scratch_root,
                            char       **out_dir,
                            int         *out_live_fd,
                            GError     **error)
{
  g_autoptr(GError) local_error = NULL;
  g_autofree char *template = NULL;
  g_autofree char *marker = NULL;
  int live_fd;

  /* Dead sets' directories (a supervisor killed with SIGKILL) are reaped
   * here, once per set, before ours exists.  Someone else's leftovers never
   * make this set fail. */
  {
    g_auto(GStrv) reaped = sbx_scratch_reap (scratch_root, TRUE, &local_error);

    if (reaped == NULL)
      {
        g_debug ("reaping stale scratch in %s: %s", scratch_root, local_error->message);
        g_clear_error (&local_error);
      }
  }

  template = g_build_filename (scratch_root, SBX_SET_DIR_PREFIX "XXXXXX", NULL);
  if (g_mkdtemp_full (template, 0700) == NULL)
    {
      int errsv = errno;

      return scratch_fail (error, "Cannot create the executor set's directory in %s: %s",
                           scratch_root, g_strerror (errsv));
    }
  if (chmod (template, 0700) < 0)
    {
      int errsv = errno;

      rmdir (template);
      return scratch_fail (error, "Cannot secure the executor set's directory %s: %s",
                           template, g_strerror (errsv));
    }

  /* The liveness marker: locked for exactly the set's lifetime, so another
   * process tells a live set from a dead one by the lock alone. */
  marker = g_build_filename (template, SBX_SET_LIVE_MARKER, NULL);
  live_fd = open (marker, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (live_fd < 0 || flock (live_fd, LOCK_EX | LOCK_NB) < 0)
    {
      int errsv = errno;

      if (live_fd >= 0)
        close (live_fd);
      sbx_remove_tree (template, NULL);
      return scratch_fail (error, "Cannot mark the executor set's directory %s as live: %s",
                           template, g_strerror (errsv));
    }
  *out_dir = g_steal_pointer (&template);
  *out_live_fd = live_fd;
  return TRUE;
}
