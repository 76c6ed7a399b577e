/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Stages: creating and removing the directory a staged run writes into
 * (sbx-stage-private.h has the layout).  The stages directory and every
 * stage are 0700 and the caller's: a stage holds what a tool wrote in the
 * workspace, as private as the workspace itself.
 */
#include "sbx-stage-private.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char *
sbx_stage_root_dir (void)
{
  return g_build_filename (g_get_user_state_dir (), "sbx", "stages", NULL);
}

gboolean
sbx_stage_id_is_valid (const char *id)
{
  return id != NULL && id[0] != '\0' && id[0] != '.' && strchr (id, '/') == NULL
         && strlen (id) < 128;
}

static gboolean
set_errno_error (GError    **error,
                 int         errsv,
                 const char *what,
                 const char *path)
{
  g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errsv), "%s %s: %s", what, path,
               g_strerror (errsv));
  return FALSE;
}

gboolean
sbx_stage_remove_at (int          dirfd,
                     const char  *name,
                     GError     **error)
{
  struct stat st;
  struct dirent *de;
  DIR *dir;
  int fd;

  if (fstatat (dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return errno == ENOENT ? TRUE : set_errno_error (error, errno, "Cannot inspect", name);
  if (!S_ISDIR (st.st_mode))
    {
      if (unlinkat (dirfd, name, 0) < 0 && errno != ENOENT)
        return set_errno_error (error, errno, "Cannot remove", name);
      return TRUE;
    }
  /* overlayfs leaves work/work mode 0: ours to open again. */
  if ((st.st_mode & S_IRWXU) != S_IRWXU && st.st_uid == geteuid ())
    (void) fchmodat (dirfd, name, S_IRWXU, 0);
  fd = openat (dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return set_errno_error (error, errno, "Cannot open", name);
  dir = fdopendir (fd);
  if (dir == NULL)
    {
      int errsv = errno;

      close (fd);
      return set_errno_error (error, errsv, "Cannot read", name);
    }
  while ((de = readdir (dir)) != NULL)
    {
      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
        continue;
      if (!sbx_stage_remove_at (fd, de->d_name, error))
        {
          closedir (dir);
          return FALSE;
        }
    }
  closedir (dir);
  if (unlinkat (dirfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
    return set_errno_error (error, errno, "Cannot remove", name);
  return TRUE;
}

gboolean
sbx_stage_remove_tree (const char  *dir,
                       GError     **error)
{
  return sbx_stage_remove_at (AT_FDCWD, dir, error);
}

/* @path as a 0700 directory of ours: made if missing, refused if anyone
 * else could reach into it. */
static gboolean
private_dir (const char  *path,
             GError     **error)
{
  struct stat st;

  if (g_mkdir_with_parents (path, 0700) < 0)
    return set_errno_error (error, errno, "Cannot create the stage directory", path);
  if (lstat (path, &st) < 0)
    return set_errno_error (error, errno, "Cannot inspect", path);
  if (!S_ISDIR (st.st_mode) || st.st_uid != geteuid () || (st.st_mode & (S_IRWXG | S_IRWXO)) != 0)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_PERMISSION_DENIED,
                   "The stages directory %s must be a directory of this user with mode 0700", path);
      return FALSE;
    }
  return TRUE;
}

static gboolean
ctime_after (const struct stat *a,
             const struct stat *b)
{
  return a->st_ctim.tv_sec > b->st_ctim.tv_sec
         || (a->st_ctim.tv_sec == b->st_ctim.tv_sec && a->st_ctim.tv_nsec > b->st_ctim.tv_nsec);
}

/* Timestamps come from a coarse clock (one tick is a few milliseconds): a
 * host change made just before "started" may carry its very ctime.  So
 * the run starts only once the clock has moved past it (a fresh file's
 * ctime is later): then a host object whose ctime is after "started"
 * changed after the run began, and one at or before it did not. */
static gboolean
wait_for_next_tick (const char  *dir,
                    const char  *started,
                    GError     **error)
{
  g_autofree char *tick = g_build_filename (dir, "tick", NULL);
  struct stat st_started, st_tick;
  gint64 give_up = g_get_monotonic_time () + G_USEC_PER_SEC;

  if (stat (started, &st_started) < 0)
    return set_errno_error (error, errno, "Cannot inspect", started);
  for (;;)
    {
      int fd;

      /* A new inode each time (truncating an empty file keeps its ctime). */
      (void) unlink (tick);
      fd = open (tick, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
      if (fd < 0 || fstat (fd, &st_tick) < 0)
        {
          int errsv = errno;

          if (fd >= 0)
            close (fd);
          return set_errno_error (error, errsv, "Cannot create", tick);
        }
      close (fd);
      if (ctime_after (&st_tick, &st_started))
        break;
      if (g_get_monotonic_time () > give_up)
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED,
                       "The file timestamps under %s do not advance; a stage cannot tell host "
                       "changes after its start", dir);
          return FALSE;
        }
      g_usleep (500);
    }
  (void) unlink (tick);
  return TRUE;
}

/* Appends one record (sbx-stage-private.h) for each object below the
 * host directory @fd, whose path relative to its root is @rel ("" for
 * the root).  Symbolic links are listed, never followed; a directory it
 * cannot read is listed without its content (the caller cannot tell
 * those changes apart then: the docs say so). */
static void
list_host (int      fd,
           GString *rel,
           GString *out)
{
  int copy = fcntl (fd, F_DUPFD_CLOEXEC, 3);
  DIR *dir = copy >= 0 ? fdopendir (copy) : NULL;
  struct dirent *de;

  if (dir == NULL)
    {
      if (copy >= 0)
        close (copy);
      return;
    }
  while ((de = readdir (dir)) != NULL)
    {
      gsize len = rel->len;
      gboolean is_dir = de->d_type == DT_DIR;
      struct stat st;

      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
        continue;
      if (de->d_type == DT_UNKNOWN)
        is_dir = fstatat (fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR (st.st_mode);
      if (len > 0)
        g_string_append_c (rel, '/');
      g_string_append (rel, de->d_name);
      g_string_append_c (out, is_dir ? 'd' : '-');
      g_string_append_len (out, rel->str, (gssize) rel->len + 1);
      if (is_dir)
        {
          int child = openat (fd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

          if (child >= 0)
            {
              list_host (child, rel, out);
              close (child);
            }
        }
      g_string_truncate (rel, len);
    }
  closedir (dir);
}

/* Writes N/host.list for the host root @path into @base (N). */
static gboolean
save_host_list (const char  *path,
                const char  *base,
                GError     **error)
{
  g_autoptr(GString) rel = g_string_new (NULL);
  g_autoptr(GString) out = g_string_new (NULL);
  g_autofree char *list = g_build_filename (base, "host.list", NULL);
  int fd = open (path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

  if (fd >= 0)
    {
      list_host (fd, rel, out);
      close (fd);
    }
  return g_file_set_contents_full (list, out->str, (gssize) out->len, G_FILE_SET_CONTENTS_NONE, 0600,
                                   error);
}

void
sbx_stage_free (SbxStage *stage)
{
  if (stage == NULL)
    return;
  g_free (stage->id);
  g_free (stage->dir);
  g_strfreev (stage->paths);
  g_strfreev (stage->uppers);
  g_strfreev (stage->works);
  g_free (stage->roots);
  g_free (stage);
}

/* The policy's writable roots that a stage covers: the workspace and the
 * profile's roots.  HOME and TMPDIR are the executor's own scratch, never
 * the host's files; a writable host root cannot be staged. */
static GPtrArray *
staged_paths (const SbxPolicyV1  *policy,
              GError            **error)
{
  g_autoptr(GPtrArray) paths = g_ptr_array_new_with_free_func (g_free);

  for (uint32_t i = 0; i < policy->n_fs_rules; i++)
    {
      const SbxFsRuleV1 *r = &policy->fs_rules[i];

      if (!(r->allow & SBX_FS_WRITE) || (r->deny & SBX_FS_WRITE))
        continue;
      switch (r->origin)
        {
        case SBX_FS_ORIGIN_WORKSPACE:
        case SBX_FS_ORIGIN_ROOT:
          break;
        case SBX_FS_ORIGIN_HOST:
        case SBX_FS_ORIGIN_GRANT:
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                       "A staged run cannot stage the writable %s %s",
                       r->origin == SBX_FS_ORIGIN_HOST ? "host root" : "grant path", r->path);
          return NULL;
        default:
          continue;
        }
      if (r->flags & (SBX_FS_RULE_GLOB | SBX_FS_RULE_EXACT))
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                       "A staged run can stage whole directories only, not %s", r->path);
          return NULL;
        }
      if (strpbrk (r->path, ",:\\") != NULL)
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                       "The writable root %s cannot be staged: overlayfs cannot take a path "
                       "with ',', ':' or '\\'", r->path);
          return NULL;
        }
      if (!g_ptr_array_find_with_equal_func (paths, r->path, g_str_equal, NULL))
        g_ptr_array_add (paths, g_strdup (r->path));
    }
  if (paths->len == 0)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                   "A staged run needs a writable workspace or root; this profile has none");
      return NULL;
    }
  return g_steal_pointer (&paths);
}

SbxStage *
sbx_stage_new (const SbxPolicyV1  *policy,
               const char         *backend,
               const char *const  *argv,
               GError            **error)
{
  g_autoptr(SbxStage) stage = g_new0 (SbxStage, 1);
  g_autoptr(GPtrArray) paths = NULL;
  g_autoptr(GKeyFile) ini = g_key_file_new ();
  g_autoptr(GDateTime) now = g_date_time_new_now_utc ();
  g_autofree char *root = sbx_stage_root_dir ();
  g_autofree char *stamp = g_date_time_format (now, "%Y%m%d-%H%M%S");
  g_autofree char *template = NULL;
  g_autofree char *created = g_date_time_format_iso8601 (now);
  g_autofree char *command = NULL;
  g_autofree char *ini_path = NULL;
  g_autofree char *started = NULL;
  struct stat st;

  paths = staged_paths (policy, error);
  if (paths == NULL || !private_dir (root, error))
    return NULL;
  template = g_strdup_printf ("%s/%s-XXXXXX", root, stamp);
  if (g_mkdtemp_full (template, 0700) == NULL)
    {
      set_errno_error (error, errno, "Cannot create a stage in", root);
      return NULL;
    }
  stage->dir = g_steal_pointer (&template);
  stage->id = g_path_get_basename (stage->dir);
  stage->n_roots = paths->len;
  stage->paths = g_new0 (char *, paths->len + 1);
  stage->uppers = g_new0 (char *, paths->len + 1);
  stage->works = g_new0 (char *, paths->len + 1);
  stage->roots = g_new0 (SbxStageRootV1, paths->len);
  command = argv != NULL ? g_strjoinv (" ", (char **) argv) : g_strdup ("");
  g_key_file_set_integer (ini, "stage", "version", 1);
  g_key_file_set_string (ini, "stage", "created", created);
  g_key_file_set_string (ini, "stage", "backend", backend);
  g_key_file_set_string (ini, "stage", "command", command);
  g_key_file_set_integer (ini, "stage", "roots", (int) paths->len);
  for (guint i = 0; i < paths->len; i++)
    {
      g_autofree char *group = g_strdup_printf ("root %u", i);
      g_autofree char *n = g_strdup_printf ("%u", i);
      g_autofree char *base = g_build_filename (stage->dir, n, NULL);

      stage->paths[i] = g_strdup (paths->pdata[i]);
      stage->uppers[i] = g_build_filename (base, "upper", NULL);
      stage->works[i] = g_build_filename (base, "work", NULL);
      if (mkdir (base, 0700) < 0 || mkdir (stage->uppers[i], 0700) < 0
          || mkdir (stage->works[i], 0700) < 0)
        {
          set_errno_error (error, errno, "Cannot create", base);
          goto fail;
        }
      /* The overlay's root takes the upper directory's mode: the host
       * root's (the stage's own 0700 directory keeps others out). */
      if (stat (stage->paths[i], &st) == 0)
        (void) chmod (stage->uppers[i], st.st_mode & 07777 & ~(mode_t) (S_ISUID | S_ISGID));
      stage->roots[i].struct_size = sizeof stage->roots[i];
      stage->roots[i].path = stage->paths[i];
      stage->roots[i].upper = stage->uppers[i];
      stage->roots[i].work = stage->works[i];
      g_key_file_set_string (ini, group, "path", stage->paths[i]);
      if (!save_host_list (stage->paths[i], base, error))
        goto fail;
    }
  ini_path = g_build_filename (stage->dir, "stage.ini", NULL);
  if (!g_key_file_save_to_file (ini, ini_path, error))
    goto fail;
  /* Last: its ctime is when the host's files were last known unchanged. */
  started = g_build_filename (stage->dir, "started", NULL);
  if (!g_file_set_contents_full (started, "", 0, G_FILE_SET_CONTENTS_NONE, 0600, error)
      || !wait_for_next_tick (stage->dir, started, error))
    goto fail;
  return g_steal_pointer (&stage);

fail:
  sbx_stage_remove_tree (stage->dir, NULL);
  return NULL;
}
