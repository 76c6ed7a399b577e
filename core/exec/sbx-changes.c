/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * SbxChanges: a stage's change set (docs/staging.md), read from the
 * overlay's upper layers against the host as it is now.
 *
 * The upper layer of a root holds what the run wrote, in overlayfs's own
 * terms (user-namespace mounts use "userxattr"):
 *  - a character device 0:0 is a whiteout: the name was deleted;
 *  - a directory with user.overlay.opaque = "y" replaced the host's
 *    directory whole: a host entry it does not hold was deleted;
 *  - any other object is the path's new state (a copied-up file that was
 *    not changed compares equal and is no change).
 * Comparing against the host now (not a snapshot taken at the start) makes
 * an applied change vanish from the list; a host object whose ctime is
 * after the stage's "started" file changed after the run began (the stage
 * waited for the clock to pass it, sbx-stage.c): such a
 * change is a conflict, and apply keeps the host's version.
 */
#include "sbx-changes-private.h"

#include "sbx-stage-private.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

/**
 * sbx_changes_error_quark:
 *
 * Returns the error domain of [error@Sbx.ChangesError].
 *
 * Returns: the quark
 *
 * Since: 0.2
 */
G_DEFINE_QUARK (sbx-changes-error-quark, sbx_changes_error)

/**
 * SbxChanges:
 *
 * The change set of a staged run ([method@Sbx.RunOptions.set_staged]):
 * every path the run added, modified, deleted or changed the type, mode
 * or link target of, each with whether the host changed it too after the
 * run began (a conflict).  Apply writes each change into the host per
 * file atomically and never through a symbolic link; discard drops the
 * stage.  Either removes the stage once nothing of it is left to apply.
 *
 * Since: 0.2
 */
G_DEFINE_FINAL_TYPE (SbxChanges, sbx_changes, G_TYPE_OBJECT)

static void
change_free (gpointer data)
{
  SbxChange *c = data;

  g_free (c->path);
  g_free (c->rel);
  g_free (c);
}

static void
sbx_changes_finalize (GObject *object)
{
  SbxChanges *self = SBX_CHANGES (object);

  g_free (self->id);
  g_free (self->dir);
  g_free (self->command);
  g_clear_pointer (&self->created, g_date_time_unref);
  g_strfreev (self->roots);
  g_strfreev (self->uppers);
  for (guint i = 0; self->at_start != NULL && i < self->n_roots; i++)
    g_clear_pointer (&self->at_start[i], g_hash_table_unref);
  g_free (self->at_start);
  g_ptr_array_unref (self->changes);
  G_OBJECT_CLASS (sbx_changes_parent_class)->finalize (object);
}

static void
sbx_changes_class_init (SbxChangesClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = sbx_changes_finalize;
}

static void
sbx_changes_init (SbxChanges *self)
{
  self->changes = g_ptr_array_new_with_free_func (change_free);
}

int
sbx_changes_open_beneath (int         dirfd,
                          const char *rel,
                          int         flags)
{
  struct open_how how = { 0 };

  if (rel[0] == '\0')
    rel = ".";
  how.flags = (guint64) (flags | O_NOFOLLOW | O_CLOEXEC);
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  return (int) syscall (SYS_openat2, dirfd, rel, &how, sizeof how);
}

gboolean
sbx_changes_changed_since (SbxChanges        *self,
                           const struct stat *st)
{
  return st->st_ctim.tv_sec > self->started.tv_sec
         || (st->st_ctim.tv_sec == self->started.tv_sec && st->st_ctim.tv_nsec > self->started.tv_nsec);
}

static gboolean
is_whiteout (const struct stat *st)
{
  return S_ISCHR (st->st_mode) && major (st->st_rdev) == 0 && minor (st->st_rdev) == 0;
}

static gboolean
is_opaque (int fd)
{
  char value[2] = { 0, 0 };

  return fgetxattr (fd, "user.overlay.opaque", value, sizeof value) == 1 && value[0] == 'y';
}

/* Whether the regular files @a (in @adir) and @b (in @bdir) hold the same bytes. */
static gboolean
same_content (int         adir,
              const char *a,
              int         bdir,
              const char *b,
              off_t       size)
{
  char abuf[65536], bbuf[65536];
  int afd, bfd;
  gboolean same = TRUE;

  afd = openat (adir, a, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  bfd = openat (bdir, b, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (afd < 0 || bfd < 0)
    same = FALSE;
  for (off_t done = 0; same && done < size;)
    {
      ssize_t na = read (afd, abuf, sizeof abuf);
      ssize_t nb = na > 0 ? read (bfd, bbuf, (size_t) na) : -1;

      if (na <= 0 || nb != na || memcmp (abuf, bbuf, (size_t) na) != 0)
        same = FALSE;
      done += na > 0 ? na : 0;
    }
  if (afd >= 0)
    close (afd);
  if (bfd >= 0)
    close (bfd);
  return same;
}

static gboolean
same_link (int         adir,
           const char *a,
           int         bdir,
           const char *b)
{
  char at[4097], bt[4097];
  ssize_t na = readlinkat (adir, a, at, sizeof at - 1);
  ssize_t nb = readlinkat (bdir, b, bt, sizeof bt - 1);

  return na >= 0 && na == nb && memcmp (at, bt, (size_t) na) == 0;
}

static void
add_change (SbxChanges   *self,
            guint         root,
            const char   *rel,
            SbxChangeKind kind,
            gboolean      conflict,
            mode_t        upper_mode)
{
  SbxChange *c = g_new0 (SbxChange, 1);

  c->root = root;
  c->rel = g_strdup (rel);
  c->path = g_build_filename (self->roots[root], rel, NULL);
  c->kind = kind;
  c->conflict = conflict;
  c->upper_mode = upper_mode;
  g_ptr_array_add (self->changes, c);
}

static int
compare_names (gconstpointer a,
               gconstpointer b)
{
  return strcmp (*(const char *const *) a, *(const char *const *) b);
}

/* The names in the directory @fd (sorted; "." and ".." left out). */
static GPtrArray *
read_names (int fd)
{
  GPtrArray *names = g_ptr_array_new_with_free_func (g_free);
  struct dirent *de;
  DIR *dir;
  int copy = fcntl (fd, F_DUPFD_CLOEXEC, 3);

  if (copy < 0 || (dir = fdopendir (copy)) == NULL)
    {
      if (copy >= 0)
        close (copy);
      return names;
    }
  rewinddir (dir);
  while ((de = readdir (dir)) != NULL)
    if (strcmp (de->d_name, ".") != 0 && strcmp (de->d_name, "..") != 0)
      g_ptr_array_add (names, g_strdup (de->d_name));
  closedir (dir);
  g_ptr_array_sort (names, compare_names);
  return names;
}

/* Root @root's N/host.list (sbx-stage-private.h), or NULL without one. */
static GHashTable *
load_host_list (SbxChanges *self,
                guint       root)
{
  g_autofree char *num = g_strdup_printf ("%u", root);
  g_autofree char *list = g_build_filename (self->dir, num, "host.list", NULL);
  g_autofree char *data = NULL;
  GHashTable *table;
  gsize len;

  if (!g_file_get_contents (list, &data, &len, NULL))
    return NULL;
  table = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  for (gsize at = 0; at < len;)
    {
      const char *rec = data + at;
      gsize n = strnlen (rec, len - at);

      if (n >= 2 && at + n < len)
        g_hash_table_insert (table, g_strdup (rec + 1), GINT_TO_POINTER (rec[0] == 'd' ? 'd' : '-'));
      at += n + 1;
    }
  return table;
}

/* Whether the host object at @rel of root @root (described by @hst when
 * @host) is gone or of another kind than at the start: a host deletion
 * or replacement after the run began.  (A replacement by a non-directory
 * has a later ctime anyway; a directory's ctime also moves when entries
 * come and go, so it cannot tell.) */
static gboolean
host_lost (SbxChanges        *self,
           guint              root,
           const char        *rel,
           gboolean           host,
           const struct stat *hst)
{
  gpointer was;

  if (self->at_start == NULL || self->at_start[root] == NULL
      || !g_hash_table_lookup_extended (self->at_start[root], rel, NULL, &was))
    return FALSE;
  return !host || S_ISDIR (hst->st_mode) != (GPOINTER_TO_INT (was) == 'd');
}

/* One directory of root @root's upper layer (@ufd) against the host's
 * (@hfd, -1 when the host has no directory there), at @rel.  @lost: the
 * host deleted or replaced this directory after the run began, so every
 * change below it is a conflict. */
static void
scan_dir (SbxChanges *self,
          guint       root,
          int         ufd,
          int         hfd,
          const char *rel,
          gboolean    lost)
{
  g_autoptr(GPtrArray) names = read_names (ufd);

  /* An opaque directory replaced the host's: what only the host has is gone. */
  if (hfd >= 0 && is_opaque (ufd))
    {
      g_autoptr(GPtrArray) host_names = read_names (hfd);

      for (guint i = 0; i < host_names->len; i++)
        {
          const char *name = host_names->pdata[i];
          g_autofree char *child = rel[0] != '\0' ? g_strconcat (rel, "/", name, NULL) : g_strdup (name);
          struct stat st;

          if (g_ptr_array_find_with_equal_func (names, name, g_str_equal, NULL))
            continue;
          if (fstatat (hfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
            add_change (self, root, child, SBX_CHANGE_DELETED,
                        !S_ISDIR (st.st_mode) && sbx_changes_changed_since (self, &st), 0);
        }
    }
  for (guint i = 0; i < names->len; i++)
    {
      const char *name = names->pdata[i];
      g_autofree char *child = rel[0] != '\0' ? g_strconcat (rel, "/", name, NULL) : g_strdup (name);
      struct stat ust, hst;
      gboolean host = hfd >= 0 && fstatat (hfd, name, &hst, AT_SYMLINK_NOFOLLOW) == 0;
      gboolean gone = host_lost (self, root, child, host, &hst);
      gboolean conflict = lost || gone
                          || (host && !S_ISDIR (hst.st_mode) && sbx_changes_changed_since (self, &hst));

      if (fstatat (ufd, name, &ust, AT_SYMLINK_NOFOLLOW) < 0)
        continue;
      if (is_whiteout (&ust))
        {
          if (host)
            add_change (self, root, child, SBX_CHANGE_DELETED, conflict, 0);
          continue;
        }
      if (!S_ISDIR (ust.st_mode) && !S_ISREG (ust.st_mode) && !S_ISLNK (ust.st_mode))
        {
          add_change (self, root, child, SBX_CHANGE_REFUSED, FALSE, ust.st_mode);
          continue;
        }
      if (!host)
        add_change (self, root, child, SBX_CHANGE_ADDED, conflict, ust.st_mode);
      else if ((ust.st_mode & S_IFMT) != (hst.st_mode & S_IFMT))
        add_change (self, root, child, SBX_CHANGE_TYPE_CHANGED, conflict, ust.st_mode);
      else if (S_ISLNK (ust.st_mode))
        {
          if (!same_link (ufd, name, hfd, name))
            add_change (self, root, child, SBX_CHANGE_LINK_CHANGED, conflict, ust.st_mode);
        }
      else if (S_ISREG (ust.st_mode)
               && (ust.st_size != hst.st_size || !same_content (ufd, name, hfd, name, ust.st_size)))
        add_change (self, root, child, SBX_CHANGE_MODIFIED, conflict, ust.st_mode);
      else if ((ust.st_mode & 07777) != (hst.st_mode & 07777))
        add_change (self, root, child, SBX_CHANGE_MODE_CHANGED, conflict, ust.st_mode);

      if (S_ISDIR (ust.st_mode))
        {
          int cu = sbx_changes_open_beneath (ufd, name, O_RDONLY | O_DIRECTORY);
          int ch = host && S_ISDIR (hst.st_mode) ? sbx_changes_open_beneath (hfd, name, O_RDONLY | O_DIRECTORY) : -1;

          if (cu >= 0)
            scan_dir (self, root, cu, ch, child, lost || gone);
          if (cu >= 0)
            close (cu);
          if (ch >= 0)
            close (ch);
        }
    }
}

gboolean
sbx_changes_scan (SbxChanges  *self,
                  GError     **error)
{
  g_ptr_array_set_size (self->changes, 0);
  for (guint i = 0; i < self->n_roots; i++)
    {
      int ufd = open (self->uppers[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      int hfd = open (self->roots[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

      if (ufd < 0)
        {
          int errsv = errno;

          if (hfd >= 0)
            close (hfd);
          g_set_error (error, SBX_CHANGES_ERROR, SBX_CHANGES_ERROR_INVALID,
                       "Stage %s: cannot open %s: %s", self->id, self->uppers[i], g_strerror (errsv));
          return FALSE;
        }
      scan_dir (self, i, ufd, hfd, "", FALSE);
      close (ufd);
      if (hfd >= 0)
        close (hfd);
    }
  return TRUE;
}

/**
 * sbx_changes_list_stages:
 * @error: return location for an error
 *
 * The IDs of the stages of this user (in `$XDG_STATE_HOME/sbx/stages`),
 * oldest first.
 *
 * Returns: (transfer full) (array zero-terminated=1): the IDs (empty when
 *   there are none), or %NULL with @error set
 *
 * Since: 0.2
 */
char **
sbx_changes_list_stages (GError **error)
{
  g_autofree char *root = sbx_stage_root_dir ();
  g_autoptr(GPtrArray) ids = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GDir) dir = NULL;
  g_autoptr(GError) local_error = NULL;
  const char *name;

  dir = g_dir_open (root, 0, &local_error);
  if (dir == NULL)
    {
      /* No stages directory (or no state directory at all): no stages. */
      if (g_error_matches (local_error, G_FILE_ERROR, G_FILE_ERROR_NOENT)
          || g_error_matches (local_error, G_FILE_ERROR, G_FILE_ERROR_NOTDIR))
        return g_new0 (char *, 1);
      g_propagate_error (error, g_steal_pointer (&local_error));
      return NULL;
    }
  while ((name = g_dir_read_name (dir)) != NULL)
    if (sbx_stage_id_is_valid (name))
      g_ptr_array_add (ids, g_strdup (name));
  g_ptr_array_sort (ids, compare_names);
  g_ptr_array_add (ids, NULL);
  return (char **) g_ptr_array_free (g_steal_pointer (&ids), FALSE);
}

/**
 * sbx_changes_open:
 * @stage_id: a stage's ID ([method@Sbx.RunResult.get_stage_id])
 * @error: return location for an error
 *
 * Reads the stage @stage_id of this user and compares it with the host.
 *
 * Returns: (transfer full): the change set, or %NULL with @error set
 *   ([error@Sbx.ChangesError])
 *
 * Since: 0.2
 */
SbxChanges *
sbx_changes_open (const char  *stage_id,
                  GError     **error)
{
  g_autoptr(SbxChanges) self = NULL;
  g_autoptr(GKeyFile) ini = g_key_file_new ();
  g_autofree char *root = sbx_stage_root_dir ();
  g_autofree char *ini_path = NULL;
  g_autofree char *started = NULL;
  g_autofree char *created = NULL;
  g_autoptr(GError) local_error = NULL;
  struct stat st;
  int n;

  g_return_val_if_fail (stage_id != NULL, NULL);

  if (!sbx_stage_id_is_valid (stage_id))
    {
      g_set_error (error, SBX_CHANGES_ERROR, SBX_CHANGES_ERROR_INVALID, "“%s” is not a stage ID", stage_id);
      return NULL;
    }
  self = g_object_new (SBX_TYPE_CHANGES, NULL);
  self->id = g_strdup (stage_id);
  self->dir = g_build_filename (root, stage_id, NULL);
  ini_path = g_build_filename (self->dir, "stage.ini", NULL);
  started = g_build_filename (self->dir, "started", NULL);
  if (lstat (self->dir, &st) < 0 || !S_ISDIR (st.st_mode))
    {
      g_set_error (error, SBX_CHANGES_ERROR, SBX_CHANGES_ERROR_NOT_FOUND, "No stage %s (in %s)",
                   stage_id, root);
      return NULL;
    }
  if (!g_key_file_load_from_file (ini, ini_path, G_KEY_FILE_NONE, &local_error)
      || lstat (started, &st) < 0)
    {
      g_set_error (error, SBX_CHANGES_ERROR, SBX_CHANGES_ERROR_INVALID,
                   "Stage %s is incomplete or malformed (%s): discard it",
                   stage_id, local_error != NULL ? local_error->message : "no “started” file");
      return NULL;
    }
  self->started = st.st_ctim;
  self->command = g_key_file_get_string (ini, "stage", "command", NULL);
  created = g_key_file_get_string (ini, "stage", "created", NULL);
  self->created = created != NULL ? g_date_time_new_from_iso8601 (created, NULL) : NULL;
  n = g_key_file_get_integer (ini, "stage", "roots", NULL);
  if (n <= 0 || n > 1024)
    {
      g_set_error (error, SBX_CHANGES_ERROR, SBX_CHANGES_ERROR_INVALID,
                   "Stage %s names no roots: discard it", stage_id);
      return NULL;
    }
  self->n_roots = (guint) n;
  self->roots = g_new0 (char *, self->n_roots + 1);
  self->uppers = g_new0 (char *, self->n_roots + 1);
  for (guint i = 0; i < self->n_roots; i++)
    {
      g_autofree char *group = g_strdup_printf ("root %u", i);
      g_autofree char *num = g_strdup_printf ("%u", i);

      self->roots[i] = g_key_file_get_string (ini, group, "path", NULL);
      self->uppers[i] = g_build_filename (self->dir, num, "upper", NULL);
      if (self->roots[i] == NULL || !g_path_is_absolute (self->roots[i]))
        {
          g_set_error (error, SBX_CHANGES_ERROR, SBX_CHANGES_ERROR_INVALID,
                       "Stage %s: root %u has no absolute path: discard it", stage_id, i);
          return NULL;
        }
    }
  self->at_start = g_new0 (GHashTable *, self->n_roots);
  for (guint i = 0; i < self->n_roots; i++)
    self->at_start[i] = load_host_list (self, i);
  if (!sbx_changes_scan (self, error))
    return NULL;
  return g_steal_pointer (&self);
}

/**
 * sbx_changes_get_id:
 * @self: a change set
 *
 * The stage's ID, as [method@Sbx.RunResult.get_stage_id] gave it.
 *
 * Returns: the stage's ID
 *
 * Since: 0.2
 */
const char *
sbx_changes_get_id (SbxChanges *self)
{
  g_return_val_if_fail (SBX_IS_CHANGES (self), NULL);
  return self->id;
}

/**
 * sbx_changes_get_dir:
 * @self: a change set
 *
 * Where the stage lives (a 0700 directory of the caller's).
 *
 * Returns: (type filename): the stage's directory
 *
 * Since: 0.2
 */
const char *
sbx_changes_get_dir (SbxChanges *self)
{
  g_return_val_if_fail (SBX_IS_CHANGES (self), NULL);
  return self->dir;
}

/**
 * sbx_changes_get_command:
 * @self: a change set
 *
 * The command line the staged run ran, as recorded when it began.
 *
 * Returns: (nullable): the staged command line, as recorded (for display)
 *
 * Since: 0.2
 */
const char *
sbx_changes_get_command (SbxChanges *self)
{
  g_return_val_if_fail (SBX_IS_CHANGES (self), NULL);
  return self->command;
}

/**
 * sbx_changes_get_created:
 * @self: a change set
 *
 * When the stage was made.
 *
 * Returns: (nullable) (transfer none): when the stage was made (UTC)
 *
 * Since: 0.2
 */
GDateTime *
sbx_changes_get_created (SbxChanges *self)
{
  g_return_val_if_fail (SBX_IS_CHANGES (self), NULL);
  return self->created;
}

/**
 * sbx_changes_get_n_changes:
 * @self: a change set
 *
 * How many changes the stage holds against the host as it is now.
 *
 * Returns: the number of changes (a parent directory before its children)
 *
 * Since: 0.2
 */
guint
sbx_changes_get_n_changes (SbxChanges *self)
{
  g_return_val_if_fail (SBX_IS_CHANGES (self), 0);
  return self->changes->len;
}

static SbxChange *
change_at (SbxChanges *self,
           guint       index)
{
  return g_ptr_array_index (self->changes, index);
}

/**
 * sbx_changes_get_path:
 * @self: a change set
 * @index: a change, below [method@Sbx.Changes.get_n_changes]
 *
 * The host path change @index is about.
 *
 * Returns: (type filename): the host path of change @index
 *
 * Since: 0.2
 */
const char *
sbx_changes_get_path (SbxChanges *self,
                      guint       index)
{
  g_return_val_if_fail (SBX_IS_CHANGES (self), NULL);
  g_return_val_if_fail (index < self->changes->len, NULL);
  return change_at (self, index)->path;
}

/**
 * sbx_changes_get_kind:
 * @self: a change set
 * @index: a change, below [method@Sbx.Changes.get_n_changes]
 *
 * What the run did to the path of change @index.
 *
 * Returns: what the run did to the path
 *
 * Since: 0.2
 */
SbxChangeKind
sbx_changes_get_kind (SbxChanges *self,
                      guint       index)
{
  g_return_val_if_fail (SBX_IS_CHANGES (self), SBX_CHANGE_REFUSED);
  g_return_val_if_fail (index < self->changes->len, SBX_CHANGE_REFUSED);
  return change_at (self, index)->kind;
}

/**
 * sbx_changes_get_conflict:
 * @self: a change set
 * @index: a change, below [method@Sbx.Changes.get_n_changes]
 *
 * Whether the host changed the path too after the run began: apply keeps
 * the host's version and reports it.
 *
 * Returns: %TRUE for a conflict
 *
 * Since: 0.2
 */
gboolean
sbx_changes_get_conflict (SbxChanges *self,
                          guint       index)
{
  g_return_val_if_fail (SBX_IS_CHANGES (self), FALSE);
  g_return_val_if_fail (index < self->changes->len, FALSE);
  return change_at (self, index)->conflict;
}

/**
 * sbx_changes_get_summary:
 * @self: a change set
 *
 * One line per change ("A", "M", "D", "T" type, "P" permissions, "L" link,
 * "!" refused; a "C" after it marks a conflict) and a last line counting
 * them.
 *
 * Returns: (transfer full): the summary
 *
 * Since: 0.2
 */
char *
sbx_changes_get_summary (SbxChanges *self)
{
  static const char letters[] = "AMDTPL!";
  GString *out = g_string_new (NULL);
  guint counts[7] = { 0 };
  guint conflicts = 0;

  g_return_val_if_fail (SBX_IS_CHANGES (self), NULL);

  for (guint i = 0; i < self->changes->len; i++)
    {
      SbxChange *c = change_at (self, i);

      counts[c->kind]++;
      conflicts += c->conflict ? 1 : 0;
      g_string_append_printf (out, "%c%c %s\n", letters[c->kind], c->conflict ? 'C' : ' ', c->path);
    }
  g_string_append_printf (out, "%u changes: %u added, %u modified, %u deleted, %u type, %u mode, "
                               "%u link, %u refused; %u conflicts\n",
                          self->changes->len, counts[0], counts[1], counts[2], counts[3], counts[4],
                          counts[5], counts[6], conflicts);
  return g_string_free (out, FALSE);
}

static GBytes *
read_beneath (const char *root,
              const char *rel)
{
  int rootfd = open (root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  int fd = rootfd >= 0 ? sbx_changes_open_beneath (rootfd, rel, O_RDONLY) : -1;
  g_autoptr(GMappedFile) map = NULL;
  struct stat st;

  if (rootfd >= 0)
    close (rootfd);
  if (fd < 0 || fstat (fd, &st) < 0 || !S_ISREG (st.st_mode))
    {
      if (fd >= 0)
        close (fd);
      return g_bytes_new (NULL, 0);
    }
  map = g_mapped_file_new_from_fd (fd, FALSE, NULL);
  close (fd);
  if (map == NULL)
    return g_bytes_new (NULL, 0);
  return g_mapped_file_get_bytes (map);
}

/**
 * sbx_changes_get_diff:
 * @self: a change set
 * @path: (nullable) (type filename): one changed path, or %NULL for all
 * @error: return location for an error
 *
 * A unified diff (`diff -u` style, own implementation) of the regular
 * files among the changes (for @path and what lies below it); other
 * changes get a one-line note.
 *
 * Returns: (transfer full): the diff, or %NULL with @error set
 *
 * Since: 0.2
 */
char *
sbx_changes_get_diff (SbxChanges  *self,
                      const char  *path,
                      GError     **error)
{
  g_autoptr(GString) out = g_string_new (NULL);
  gboolean any = FALSE;

  g_return_val_if_fail (SBX_IS_CHANGES (self), NULL);

  for (guint i = 0; i < self->changes->len; i++)
    {
      SbxChange *c = change_at (self, i);
      gboolean upper_file = S_ISREG (c->upper_mode);
      g_autoptr(GBytes) old = NULL;
      g_autoptr(GBytes) new_ = NULL;
      g_autofree char *a = NULL;
      g_autofree char *b = NULL;

      if (path != NULL && strcmp (c->path, path) != 0
          && !(g_str_has_prefix (c->path, path) && c->path[strlen (path)] == '/'))
        continue;
      any = TRUE;
      if (c->kind == SBX_CHANGE_MODE_CHANGED)
        {
          g_string_append_printf (out, "%s: permissions now %04o\n", c->path, (unsigned) (c->upper_mode & 07777));
          continue;
        }
      if (c->kind == SBX_CHANGE_REFUSED || (!upper_file && c->kind != SBX_CHANGE_DELETED))
        {
          g_string_append_printf (out, "%s: %s\n", c->path,
                                  c->kind == SBX_CHANGE_REFUSED ? "a device node, FIFO or socket (refused)"
                                  : S_ISDIR (c->upper_mode) ? "directory" : "symbolic link");
          continue;
        }
      old = c->kind == SBX_CHANGE_ADDED ? g_bytes_new (NULL, 0) : read_beneath (self->roots[c->root], c->rel);
      new_ = c->kind == SBX_CHANGE_DELETED ? g_bytes_new (NULL, 0) : read_beneath (self->uppers[c->root], c->rel);
      if (g_bytes_get_size (old) == 0 && g_bytes_get_size (new_) == 0 && c->kind == SBX_CHANGE_DELETED)
        {
          g_string_append_printf (out, "%s: deleted\n", c->path);
          continue;
        }
      a = c->kind == SBX_CHANGE_ADDED ? g_strdup ("/dev/null") : g_strconcat ("a", c->path, NULL);
      b = c->kind == SBX_CHANGE_DELETED ? g_strdup ("/dev/null") : g_strconcat ("b", c->path, NULL);
      sbx_changes_diff_text (out, a, old, b, new_);
    }
  if (path != NULL && !any)
    {
      g_set_error (error, SBX_CHANGES_ERROR, SBX_CHANGES_ERROR_INVALID,
                   "%s is not among the changes of stage %s", path, self->id);
      return NULL;
    }
  return g_string_free (g_steal_pointer (&out), FALSE);
}

/**
 * sbx_changes_discard:
 * @self: a change set
 * @error: return location for an error
 *
 * Drops the stage: nothing of it reaches the host, and its directory is
 * removed whole.
 *
 * Returns: %TRUE on success
 *
 * Since: 0.2
 */
gboolean
sbx_changes_discard (SbxChanges  *self,
                     GError     **error)
{
  g_autoptr(GError) local_error = NULL;

  g_return_val_if_fail (SBX_IS_CHANGES (self), FALSE);

  if (!sbx_stage_remove_tree (self->dir, &local_error))
    {
      g_set_error (error, SBX_CHANGES_ERROR, SBX_CHANGES_ERROR_FAILED, "Cannot discard stage %s: %s",
                   self->id, local_error->message);
      return FALSE;
    }
  g_ptr_array_set_size (self->changes, 0);
  return TRUE;
}

static void
discard_thread (GTask        *task,
                gpointer      source,
                gpointer      task_data,
                GCancellable *cancellable)
{
  GError *error = NULL;

  if (sbx_changes_discard (source, &error))
    g_task_return_boolean (task, TRUE);
  else
    g_task_return_error (task, error);
}

/**
 * sbx_changes_discard_async:
 * @self: a change set
 * @cancellable: (nullable): a cancellable (checked before it starts)
 * @callback: (scope async): called when done
 * @user_data: data for @callback
 *
 * Asynchronous twin of [method@Sbx.Changes.discard], on a worker thread.
 *
 * Since: 0.2
 */
void
sbx_changes_discard_async (SbxChanges          *self,
                           GCancellable        *cancellable,
                           GAsyncReadyCallback  callback,
                           gpointer             user_data)
{
  g_autoptr(GTask) task = g_task_new (self, cancellable, callback, user_data);

  g_task_set_source_tag (task, sbx_changes_discard_async);
  g_task_run_in_thread (task, discard_thread);
}

/**
 * sbx_changes_discard_finish:
 * @self: a change set
 * @result: the result given to the callback
 * @error: return location for an error
 *
 * Finishes [method@Sbx.Changes.discard_async].
 *
 * Returns: %TRUE on success
 *
 * Since: 0.2
 */
gboolean
sbx_changes_discard_finish (SbxChanges    *self,
                            GAsyncResult  *result,
                            GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);
  return g_task_propagate_boolean (G_TASK (result), error);
}
