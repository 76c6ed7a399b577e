/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Applying a stage's changes to the host (docs/staging.md):
 *  - per file atomic: a new object is made beside its target under a
 *    temporary name (".sbx-stage-XXXXXX") and renamed into place;
 *  - every host path is reached beneath its root with openat2
 *    (RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS): a symlink on the way, staged
 *    or the host's, fails that change instead of leading out, and a staged
 *    symlink is made as a link, never followed;
 *  - names come from readdir of the stage, so none holds '/' or is "..";
 *  - modes are kept without set-user-ID and set-group-ID bits (never from
 *    inside); a refused object (device node, FIFO, socket) is never made;
 *  - a conflict (the host changed the path after the run began) keeps the
 *    host's version; the rest is applied and the conflicts reported.
 * When every change was applied the stage is removed whole.
 */
#include "sbx-changes-private.h"

#include "sbx-stage-private.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define TEMP_PREFIX ".sbx-stage-"

static gboolean
fail_errno (GError    **error,
            int         errsv,
            const char *what,
            const char *path)
{
  g_set_error (error, SBX_CHANGES_ERROR, SBX_CHANGES_ERROR_FAILED, "%s %s: %s", what, path,
               g_strerror (errsv));
  return FALSE;
}

/* A temporary name beside a target (O_EXCL or symlinkat refuse a taken one). */
static char *
temp_name (void)
{
  return g_strdup_printf (TEMP_PREFIX "%08x%08x", g_random_int (), g_random_int ());
}

static gboolean
copy_file (int          src,
           int          dst)
{
  char buf[65536];

  for (;;)
    {
      ssize_t n = copy_file_range (src, NULL, dst, NULL, 1 << 30, 0);

      if (n == 0)
        return TRUE;
      if (n > 0)
        continue;
      if (errno != EXDEV && errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP)
        return FALSE;
      break;
    }
  for (;;)
    {
      ssize_t n = read (src, buf, sizeof buf);

      if (n == 0)
        return TRUE;
      if (n < 0 || write (dst, buf, (size_t) n) != n)
        return FALSE;
    }
}

/* Removes the host tree @name in @dirfd, keeping (and counting in
 * @kept) every non-directory the host changed after the run began, and
 * every directory that then is not empty. */
static gboolean
remove_host_tree (SbxChanges *self,
                  int         dirfd,
                  const char *name,
                  guint      *kept)
{
  struct stat st;
  int fd;
  if (fstatat (dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return errno == ENOENT;
  if (!S_ISDIR (st.st_mode))
    {
      if (sbx_changes_changed_since (self, &st))
        {
          (*kept)++;
          return TRUE;
        }
      return unlinkat (dirfd, name, 0) == 0 || errno == ENOENT;
    }
  fd = sbx_changes_open_beneath (dirfd, name, O_RDONLY | O_DIRECTORY);
  if (fd < 0)
    return FALSE;
  {
    g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
    int copy = fcntl (fd, F_DUPFD_CLOEXEC, 3);
    DIR *dir = copy >= 0 ? fdopendir (copy) : NULL;
    struct dirent *de;
    gboolean ok = TRUE;

    if (dir == NULL)
      {
        if (copy >= 0)
          close (copy);
        close (fd);
        return FALSE;
      }
    while ((de = readdir (dir)) != NULL)
      if (strcmp (de->d_name, ".") != 0 && strcmp (de->d_name, "..") != 0)
        g_ptr_array_add (names, g_strdup (de->d_name));
    closedir (dir);
    for (guint i = 0; i < names->len; i++)
      ok = remove_host_tree (self, fd, names->pdata[i], kept) && ok;
    close (fd);
    if (!ok)
      return FALSE;
  }
  if (unlinkat (dirfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
    return errno == ENOTEMPTY && *kept > 0;
  return TRUE;
}

/* Makes the staged object @c (in the upper directory @ufd, name @name)
 * in the host directory @hfd under a temporary name, then renames it over
 * @name.  Directories are made in place (mkdir is atomic). */
static gboolean
place (SbxChanges *self,
       SbxChange  *c,
       int         ufd,
       int         hfd,
       const char *name,
       GError    **error)
{
  g_autofree char *tmp = temp_name ();
  mode_t mode = c->upper_mode & 01777;   /* never set-user-ID or set-group-ID */
  struct stat hst;
  guint kept = 0;

  /* What the host has there goes first when it is in the way: a directory
   * cannot be renamed over, nor a file over a directory. */
  if (fstatat (hfd, name, &hst, AT_SYMLINK_NOFOLLOW) == 0
      && (S_ISDIR (hst.st_mode) != S_ISDIR (c->upper_mode)))
    {
      if (!remove_host_tree (self, hfd, name, &kept) || kept > 0)
        {
          c->conflict = TRUE;
          return TRUE;
        }
    }
  if (S_ISDIR (c->upper_mode))
    {
      int dfd;

      if (mkdirat (hfd, name, 0700) < 0 && errno != EEXIST)
        return fail_errno (error, errno, "Cannot create", c->path);
      dfd = sbx_changes_open_beneath (hfd, name, O_RDONLY | O_DIRECTORY);
      if (dfd < 0 || fchmod (dfd, mode) < 0)
        {
          int errsv = errno;

          if (dfd >= 0)
            close (dfd);
          return fail_errno (error, errsv, "Cannot set the mode of", c->path);
        }
      close (dfd);
      return TRUE;
    }
  if (S_ISLNK (c->upper_mode))
    {
      char target[4097];
      ssize_t n = readlinkat (ufd, name, target, sizeof target - 1);

      if (n < 0)
        return fail_errno (error, errno, "Cannot read the staged link", c->path);
      target[n] = '\0';
      if (symlinkat (target, hfd, tmp) < 0)
        return fail_errno (error, errno, "Cannot create a link beside", c->path);
    }
  else
    {
      int src = sbx_changes_open_beneath (ufd, name, O_RDONLY);
      int dst;
      struct stat ust;
      struct timespec times[2];

      if (src < 0 || fstat (src, &ust) < 0 || !S_ISREG (ust.st_mode))
        {
          int errsv = src < 0 ? errno : EINVAL;

          if (src >= 0)
            close (src);
          return fail_errno (error, errsv, "Cannot read the staged file", c->path);
        }
      dst = openat (hfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
      if (dst < 0)
        {
          int errsv = errno;

          close (src);
          return fail_errno (error, errsv, "Cannot create a file beside", c->path);
        }
      times[0] = ust.st_atim;
      times[1] = ust.st_mtim;
      if (!copy_file (src, dst) || fchmod (dst, mode) < 0 || futimens (dst, times) < 0)
        {
          int errsv = errno;

          close (src);
          close (dst);
          unlinkat (hfd, tmp, 0);
          return fail_errno (error, errsv, "Cannot write", c->path);
        }
      close (src);
      if (close (dst) < 0)
        {
          int errsv = errno;

          unlinkat (hfd, tmp, 0);
          return fail_errno (error, errsv, "Cannot write", c->path);
        }
    }
  if (renameat (hfd, tmp, hfd, name) < 0)
    {
      int errsv = errno;

      unlinkat (hfd, tmp, 0);
      return fail_errno (error, errsv, "Cannot rename into place", c->path);
    }
  return TRUE;
}

/* @uroot, @hroot: the change's upper layer and host root, opened once per apply. */
static gboolean
apply_one (SbxChanges *self,
           SbxChange  *c,
           int         uroot,
           int         hroot,
           GError    **error)
{
  g_autofree char *dir = g_path_get_dirname (c->rel);
  g_autofree char *name = g_path_get_basename (c->rel);
  const char *reldir = strcmp (dir, ".") == 0 ? "" : dir;
  int ufd, hfd;
  gboolean ok = TRUE;
  guint kept = 0;

  ufd = uroot >= 0 ? sbx_changes_open_beneath (uroot, reldir, O_RDONLY | O_DIRECTORY) : -1;
  hfd = hroot >= 0 ? sbx_changes_open_beneath (hroot, reldir, O_RDONLY | O_DIRECTORY) : -1;
  if (ufd < 0 || hfd < 0)
    ok = fail_errno (error, errno, "Cannot reach (without following a symbolic link) the directory of",
                     c->path);
  else if (c->kind == SBX_CHANGE_DELETED)
    {
      if (!remove_host_tree (self, hfd, name, &kept))
        ok = fail_errno (error, errno, "Cannot remove", c->path);
      else if (kept > 0)
        c->conflict = TRUE;
    }
  else
    ok = place (self, c, ufd, hfd, name, error);
  if (ufd >= 0)
    close (ufd);
  if (hfd >= 0)
    close (hfd);
  return ok;
}

static gboolean
is_selected (SbxChange         *c,
             const char *const *paths,
             GPtrArray         *changes)
{
  if (paths == NULL)
    return TRUE;
  for (guint i = 0; paths[i] != NULL; i++)
    {
      gsize len = strlen (paths[i]);

      if (strcmp (c->path, paths[i]) == 0
          || (strncmp (c->path, paths[i], len) == 0 && c->path[len] == '/'))
        return TRUE;
      /* A directory the run made, on the way to a chosen path. */
      len = strlen (c->path);
      if (S_ISDIR (c->upper_mode) && c->kind != SBX_CHANGE_DELETED
          && strncmp (paths[i], c->path, len) == 0 && paths[i][len] == '/')
        return TRUE;
    }
  return FALSE;
}

/**
 * sbx_changes_apply:
 * @self: a change set
 * @paths: (nullable) (array zero-terminated=1) (element-type filename):
 *   host paths to apply (each with what lies below it), or %NULL for all
 * @progress: (nullable) (scope call) (closure progress_data): called
 *   after each change with the number done and the total
 * @progress_data: data for @progress
 * @cancellable: (nullable): checked between changes
 * @error: return location for an error
 *
 * Writes the chosen changes into the host (see [class@Sbx.Changes]).  A
 * conflict or a refused object is kept as it is on the host; the others
 * are applied, and then the call fails with
 * %SBX_CHANGES_ERROR_CONFLICT naming them.  When nothing is left to apply,
 * the stage is removed.
 *
 * Returns: %TRUE when every chosen change was applied
 *
 * Since: 0.2
 */
gboolean
sbx_changes_apply (SbxChanges             *self,
                   const char *const      *paths,
                   GFileProgressCallback   progress,
                   gpointer                progress_data,
                   GCancellable           *cancellable,
                   GError                **error)
{
  g_autoptr(GString) kept = g_string_new (NULL);
  g_autoptr(GString) failed = g_string_new (NULL);
  g_autoptr(GArray) fds = g_array_new (FALSE, FALSE, sizeof (int));
  guint n_kept = 0, n_failed = 0, n_chosen = 0, done = 0;
  gboolean cancelled = FALSE;

  g_return_val_if_fail (SBX_IS_CHANGES (self), FALSE);

  for (guint i = 0; paths != NULL && paths[i] != NULL; i++)
    {
      gboolean found = FALSE;

      for (guint k = 0; k < self->changes->len && !found; k++)
        {
          const char *p = ((SbxChange *) g_ptr_array_index (self->changes, k))->path;
          gsize len = strlen (paths[i]);

          found = strncmp (p, paths[i], len) == 0 && (p[len] == '\0' || p[len] == '/');
        }
      if (!found)
        {
          g_set_error (error, SBX_CHANGES_ERROR, SBX_CHANGES_ERROR_INVALID,
                       "%s is not among the changes of stage %s", paths[i], self->id);
          return FALSE;
        }
    }
  for (guint i = 0; i < self->changes->len; i++)
    n_chosen += is_selected (g_ptr_array_index (self->changes, i), paths, self->changes) ? 1 : 0;
  /* Per root: its upper layer, then its host directory (-1 when missing:
   * each of its changes then fails, naming it). */
  for (guint r = 0; r < self->n_roots; r++)
    {
      int ufd = open (self->uppers[r], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      int hfd = open (self->roots[r], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

      g_array_append_val (fds, ufd);
      g_array_append_val (fds, hfd);
    }
  for (guint i = 0; i < self->changes->len; i++)
    {
      SbxChange *c = g_ptr_array_index (self->changes, i);

      if (!is_selected (c, paths, self->changes))
        continue;
      if (g_cancellable_set_error_if_cancelled (cancellable, error))
        {
          cancelled = TRUE;
          break;
        }
      /* One change that cannot be applied (a symlink on its way, a full
       * disk) is reported with the others; the rest go on. */
      if (c->kind != SBX_CHANGE_REFUSED && !c->conflict)
        {
          g_autoptr(GError) one_error = NULL;

          if (!apply_one (self, c, g_array_index (fds, int, 2 * c->root),
                          g_array_index (fds, int, 2 * c->root + 1), &one_error))
            {
              n_failed++;
              g_string_append_printf (failed, "%s%s", n_failed > 1 ? "; " : "", one_error->message);
            }
        }
      if (c->kind == SBX_CHANGE_REFUSED || c->conflict)
        {
          n_kept++;
          g_string_append_printf (kept, "%s%s (%s)", n_kept > 1 ? ", " : "", c->path,
                                  c->conflict ? "changed on the host after the run began"
                                  : "a device node, FIFO or socket");
        }
      done++;
      if (progress != NULL)
        progress (done, n_chosen, progress_data);
    }
  for (guint k = 0; k < fds->len; k++)
    if (g_array_index (fds, int, k) >= 0)
      close (g_array_index (fds, int, k));
  if (cancelled)
    return FALSE;
  /* Everything chosen was everything, and all of it applied: nothing is
   * left (no need to compare the whole stage with the host again). */
  if (paths == NULL && n_kept == 0 && n_failed == 0)
    g_ptr_array_set_size (self->changes, 0);
  else if (!sbx_changes_scan (self, error))
    return FALSE;
  if (self->changes->len == 0)
    {
      g_autoptr(GError) local_error = NULL;

      if (!sbx_stage_remove_tree (self->dir, &local_error))
        {
          g_set_error (error, SBX_CHANGES_ERROR, SBX_CHANGES_ERROR_FAILED,
                       "Applied, but cannot remove stage %s: %s", self->id, local_error->message);
          return FALSE;
        }
    }
  if (n_failed > 0)
    {
      g_set_error (error, SBX_CHANGES_ERROR, SBX_CHANGES_ERROR_FAILED,
                   "Stage %s: %u change%s could not be applied: %s%s%s", self->id, n_failed,
                   n_failed > 1 ? "s" : "", failed->str, n_kept > 0 ? "; kept the host's version of " : "",
                   kept->str);
      return FALSE;
    }
  if (n_kept > 0)
    {
      g_set_error (error, SBX_CHANGES_ERROR, SBX_CHANGES_ERROR_CONFLICT,
                   "Stage %s: kept the host's version of %u path%s: %s; the other changes were applied",
                   self->id, n_kept, n_kept > 1 ? "s" : "", kept->str);
      return FALSE;
    }
  return TRUE;
}

typedef struct
{
  char                **paths;
  GFileProgressCallback progress;
  gpointer              progress_data;
  GMainContext         *context;
} ApplyData;

typedef struct
{
  ApplyData *data;
  goffset    done;
  goffset    total;
} ProgressCall;

static void
apply_data_free (gpointer p)
{
  ApplyData *data = p;

  g_strfreev (data->paths);
  g_main_context_unref (data->context);
  g_free (data);
}

static gboolean
progress_in_context (gpointer p)
{
  ProgressCall *call = p;

  call->data->progress (call->done, call->total, call->data->progress_data);
  return G_SOURCE_REMOVE;
}

/* Progress reaches the caller on its own main context, as GIO's does. */
static void
progress_from_thread (goffset  done,
                      goffset  total,
                      gpointer p)
{
  ProgressCall *call = g_new (ProgressCall, 1);

  call->data = p;
  call->done = done;
  call->total = total;
  g_main_context_invoke_full (call->data->context, G_PRIORITY_DEFAULT, progress_in_context, call, g_free);
}

static void
apply_thread (GTask        *task,
              gpointer      source,
              gpointer      task_data,
              GCancellable *cancellable)
{
  ApplyData *data = task_data;
  GError *error = NULL;

  if (sbx_changes_apply (source, (const char *const *) data->paths,
                         data->progress != NULL ? progress_from_thread : NULL, data, cancellable, &error))
    g_task_return_boolean (task, TRUE);
  else
    g_task_return_error (task, error);
}

/**
 * sbx_changes_apply_async:
 * @self: a change set
 * @paths: (nullable) (array zero-terminated=1) (element-type filename): as
 *   for [method@Sbx.Changes.apply]; copied
 * @progress: (nullable) (scope notified) (closure progress_data): called on
 *   the caller's thread-default main context after each change
 * @progress_data: data for @progress, valid until @callback runs
 * @cancellable: (nullable): checked between changes
 * @callback: (scope async): called when done
 * @user_data: data for @callback
 *
 * Asynchronous twin of [method@Sbx.Changes.apply], on a worker thread.
 *
 * Since: 0.2
 */
void
sbx_changes_apply_async (SbxChanges             *self,
                         const char *const      *paths,
                         GFileProgressCallback   progress,
                         gpointer                progress_data,
                         GCancellable           *cancellable,
                         GAsyncReadyCallback     callback,
                         gpointer                user_data)
{
  g_autoptr(GTask) task = g_task_new (self, cancellable, callback, user_data);
  ApplyData *data = g_new0 (ApplyData, 1);

  data->paths = g_strdupv ((char **) paths);
  data->progress = progress;
  data->progress_data = progress_data;
  data->context = g_main_context_ref_thread_default ();
  g_task_set_source_tag (task, sbx_changes_apply_async);
  g_task_set_task_data (task, data, apply_data_free);
  g_task_run_in_thread (task, apply_thread);
}

/**
 * sbx_changes_apply_finish:
 * @self: a change set
 * @result: the result given to the callback
 * @error: return location for an error
 *
 * Finishes [method@Sbx.Changes.apply_async].
 *
 * Returns: %TRUE when every chosen change was applied
 *
 * Since: 0.2
 */
gboolean
sbx_changes_apply_finish (SbxChanges    *self,
                          GAsyncResult  *result,
                          GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);
  return g_task_propagate_boolean (G_TASK (result), error);
}
