/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Landlock plan, the builder (parent side): each allow axis becomes rules on
 * pinned inodes, carved around nested denies (sibling enumeration, snapshot
 * semantics), and policy paths that run through symlinks are resolved once.
 * See sbx-landlock.c for the rules this follows.
 */
#include "sbx-landlock.h"
#include "sbx-landlock-compat.h"
#include "sbx-landlock-private.h"
#include "sbx-landlock-build-private.h"
#include <sbx/sbx-fs-resolve.h>
#include "sbx-raw-syscall.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <linux/openat2.h>

#include <gio/gio.h>

/* ------------------------------------------------------------------------- */
/* Builder                                                                    */
/* ------------------------------------------------------------------------- */


void
ll_builder_init (Builder         *b,
                 SbxLandlockPlan *plan)
{
  b->plan = plan;
  b->entries = g_ptr_array_new_with_free_func (ll_entry_free);
  b->globs = g_ptr_array_new_with_free_func (ll_entry_free);
  b->rules = g_array_new (FALSE, FALSE, sizeof (LlRule));
  b->rule_index = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  b->pins = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  b->fds = g_array_new (FALSE, FALSE, sizeof (int));
  b->dropped = g_ptr_array_new_with_free_func (g_free);
  b->gaps = g_ptr_array_new_with_free_func (g_free);
}

void
ll_builder_clear (Builder *b)
{
  g_clear_pointer (&b->entries, g_ptr_array_unref);
  g_clear_pointer (&b->globs, g_ptr_array_unref);
  if (b->rules != NULL)
    g_array_unref (b->rules);
  g_clear_pointer (&b->rule_index, g_hash_table_unref);
  g_clear_pointer (&b->pins, g_hash_table_unref);
  if (b->fds != NULL)
    {
      for (guint i = 0; i < b->fds->len; i++)
        close (g_array_index (b->fds, int, i));
      g_array_unref (b->fds);
    }
  g_clear_pointer (&b->dropped, g_ptr_array_unref);
  g_clear_pointer (&b->gaps, g_ptr_array_unref);
  b->plan = NULL;   /* borrowed: sbx_landlock_plan_new() owns it */
}


static gboolean
set_errno_error (GError **error, int saved_errno, const char *op, const char *path, const char *hint)
{
  g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
               "%s %s: %s%s%s", op, path, g_strerror (saved_errno),
               hint != NULL ? ". Hint: " : "", hint != NULL ? hint : "");
  return FALSE;
}

static void
drop (Builder *b, const char *path, const char *why)
{
  g_autofree char *item = g_strdup_printf ("%s (%s)", path, why);

  /* once per path, not once per axis */
  for (guint i = 0; i < b->dropped->len; i++)
    if (strcmp (g_ptr_array_index (b->dropped, i), item) == 0)
      return;
  g_ptr_array_add (b->dropped, g_steal_pointer (&item));
}

static int
own_fd (Builder *b, int fd)
{
  g_array_append_val (b->fds, fd);
  return fd;
}

static void
stx_of (const struct statx *stx, uint32_t *maj, uint32_t *min, uint64_t *ino, uint32_t *type)
{
  *maj = stx->stx_dev_major;
  *min = stx->stx_dev_minor;
  *ino = stx->stx_ino;
  *type = stx->stx_mode & S_IFMT;
}

/* Record @access on the inode described by @stx, reached through @fd (the
 * inode for RULE_FD, its pinned parent for RULE_NAME).  Rules on one inode are
 * merged (OR), preferring an fd-backed one. */
static void
add_rule (Builder *b, int kind, int fd, const char *name, const struct statx *stx, uint64_t access)
{
  LlRule rule = { 0 };
  g_autofree char *key = NULL;
  gpointer found;

  access &= b->plan->handled_fs;
  stx_of (stx, &rule.dev_major, &rule.dev_minor, &rule.ino, &rule.type);
  if (rule.type != S_IFDIR)
    access &= LL_FILE_RIGHTS;
  if (access == 0)
    return;

  key = g_strdup_printf ("%u:%u:%" G_GUINT64_FORMAT, rule.dev_major, rule.dev_minor, rule.ino);
  found = g_hash_table_lookup (b->rule_index, key);
  if (found != NULL)
    {
      LlRule *existing = &g_array_index (b->rules, LlRule, GPOINTER_TO_UINT (found) - 1);

      existing->access |= access;
      if (existing->kind == RULE_NAME && kind == RULE_FD)
        {
          existing->kind = RULE_FD;
          existing->fd = fd;
          existing->name = NULL;
        }
      return;
    }
  rule.access = access;
  rule.kind = kind;
  rule.fd = fd;
  rule.name = name != NULL ? g_string_chunk_insert_const (b->plan->names, name) : NULL;
  g_array_append_val (b->rules, rule);
  g_hash_table_insert (b->rule_index, g_steal_pointer (&key), GUINT_TO_POINTER (b->rules->len));
}

/* Classify an inode for an emitted rule; returns FALSE (and records why)
 * when no rule may name it. */
static gboolean
inode_ruleable (Builder *b, const char *path, const struct statx *stx, gboolean exact, gboolean top_level)
{
  switch (stx->stx_mode & S_IFMT)
    {
    case S_IFDIR:
      if (exact)
        {
          /* A rule on a directory covers its subtree: an exact directory
           * allow cannot be expressed without widening. */
          drop (b, path, "exact rule on a directory");
          return FALSE;
        }
      return TRUE;
    case S_IFREG:
      if (stx->stx_nlink != 1)
        {
          drop (b, path, "regular file with several hard links");
          return FALSE;
        }
      return TRUE;
    case S_IFCHR:
      if (!top_level)
        {
          /* devices are granted only by the policy's own entries */
          drop (b, path, "character device inside a tree");
          return FALSE;
        }
      return TRUE;
    case S_IFLNK:
      drop (b, path, "symbolic link");
      return FALSE;
    case S_IFBLK:
      drop (b, path, "block device");
      return FALSE;
    case S_IFIFO:
      drop (b, path, "FIFO");
      return FALSE;
    case S_IFSOCK:
      drop (b, path, "socket");
      return FALSE;
    default:
      drop (b, path, "unknown file type");
      return FALSE;
    }
}

static int
statx_fd (int fd, const char *name, int flags, struct statx *stx)
{
  if (statx (fd, name, flags | AT_NO_AUTOMOUNT,
             STATX_TYPE | STATX_MODE | STATX_INO | STATX_NLINK, stx) < 0)
    return -errno;
  return 0;
}

/* openat2(@path, O_PATH|O_NOFOLLOW|O_CLOEXEC, RESOLVE_NO_SYMLINKS) where
 * openat2 exists, else (ENOSYS: a seccomp filter that refuses it, as sbx's
 * own sandbox does, so a nested sbx gets here) the same walk one component
 * at a time: each opened O_PATH|O_NOFOLLOW from the one before, a symbolic
 * link before the last component is ELOOP as with RESOLVE_NO_SYMLINKS, and
 * the last one, a link included, is opened itself.  @path is absolute and
 * clean: a "." or ".." component, or an empty one but a trailing '/', is
 * -EINVAL.  Returns the fd or a negative errno. */
int
ll_open_path_nofollow (const char *path)
{
  struct open_how how = {
    .flags = O_PATH | O_CLOEXEC | O_NOFOLLOW,
    .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
  };
  g_auto(GStrv) parts = NULL;
  int fd;

  fd = (int) syscall (SYS_openat2, AT_FDCWD, path, &how, sizeof how);
  if (fd >= 0 || errno != ENOSYS)
    return fd >= 0 ? fd : -errno;
  if (path[0] != '/')
    return -EINVAL;
  fd = open ("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return -errno;
  parts = g_strsplit (path + 1, "/", -1);
  for (gsize i = 0; parts[i] != NULL; i++)
    {
      gboolean last = parts[i + 1] == NULL || (parts[i + 1][0] == '\0' && parts[i + 2] == NULL);
      struct stat st;
      int next, saved;

      if (parts[i][0] == '\0' && parts[i + 1] == NULL)
        break;   /* "/" itself, or a trailing '/' */
      if (parts[i][0] == '\0' || strcmp (parts[i], ".") == 0 || strcmp (parts[i], "..") == 0)
        {
          close (fd);
          return -EINVAL;
        }
      next = openat (fd, parts[i], O_PATH | O_NOFOLLOW | O_CLOEXEC);
      saved = errno;
      close (fd);
      if (next < 0)
        return -saved;
      fd = next;
      if (last)
        continue;
      if (fstat (fd, &st) != 0)
        saved = errno;
      else if (S_ISLNK (st.st_mode))
        saved = ELOOP;
      else
        continue;
      close (fd);
      return -saved;
    }
  return fd;
}

/* Pin @e's target: a dup of the host's fd, or openat2 without following any
 * symlink.  Returns the fd (owned by the builder, shared per path) or a
 * negative errno. */
static int
pin_entry (Builder *b, const LlEntry *e, struct statx *stx)
{
  g_autofree char *key = e->fd >= 0 ? g_strdup_printf ("fd:%d", e->fd) : g_strdup (e->path);
  gpointer cached = g_hash_table_lookup (b->pins, key);
  int fd, r;

  if (cached != NULL)
    fd = GPOINTER_TO_INT (cached) - 1;
  else if (e->fd >= 0)
    {
      fd = fcntl (e->fd, F_DUPFD_CLOEXEC, 3);
      if (fd < 0)
        return -errno;
      own_fd (b, fd);
      g_hash_table_insert (b->pins, g_steal_pointer (&key), GINT_TO_POINTER (fd + 1));
    }
  else
    {
      fd = ll_open_path_nofollow (e->path);
      if (fd < 0)
        return fd;
      own_fd (b, fd);
      g_hash_table_insert (b->pins, g_steal_pointer (&key), GINT_TO_POINTER (fd + 1));
    }
  r = statx_fd (fd, "", AT_EMPTY_PATH, stx);
  if (r < 0)
    return r;
  return fd;
}

/* Pin a child directory found by the enumeration; -1 when it vanished or
 * changed between the listing and now (narrow: it is skipped). */
static int
pin_child_dir (Builder *b, int parent_fd, const char *name, const char *path, const struct statx *seen)
{
  gpointer cached = g_hash_table_lookup (b->pins, path);
  struct statx now;
  int fd;

  if (cached != NULL)
    return GPOINTER_TO_INT (cached) - 1;
  fd = openat (parent_fd, name, O_PATH | O_CLOEXEC | O_NOFOLLOW | O_DIRECTORY);
  if (fd < 0)
    return -1;
  if (statx_fd (fd, "", AT_EMPTY_PATH, &now) < 0 || now.stx_ino != seen->stx_ino ||
      now.stx_dev_major != seen->stx_dev_major || now.stx_dev_minor != seen->stx_dev_minor)
    {
      close (fd);
      return -1;
    }
  own_fd (b, fd);
  g_hash_table_insert (b->pins, g_strdup (path), GINT_TO_POINTER (fd + 1));
  return fd;
}

static char *
child_path (const char *dir, const char *name)
{
  return strcmp (dir, "/") == 0 ? g_strconcat ("/", name, NULL) : g_strconcat (dir, "/", name, NULL);
}

/* Excludes strictly beneath @path. */
static GArray *
excludes_under (GArray *excludes, const char *path)
{
  GArray *nested = g_array_new (FALSE, FALSE, sizeof (LlExclude));

  for (guint i = 0; i < excludes->len; i++)
    {
      LlExclude *x = &g_array_index (excludes, LlExclude, i);

      if (ll_path_under (path, x->path))
        g_array_append_vals (nested, x, 1);
    }
  return nested;
}

/* Sibling enumeration of the directory pinned by @dir_fd (path @dir) for
 * @axis: grant every child that holds no exclude, descend into those that
 * hold one deeper down, leave denied ones out. */
G_DEFINE_AUTOPTR_CLEANUP_FUNC (DIR, closedir)

static gboolean
carve (Builder *b, int dir_fd, const char *dir, uint32_t axis, GArray *excludes, GError **error)
{
  int list_fd;
  g_autoptr(DIR) d = NULL;
  struct dirent *de;

  list_fd = openat (dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (list_fd < 0)
    {
      int saved = errno;

      if (saved == EMFILE || saved == ENFILE || saved == ENOMEM)
        return set_errno_error (error, saved, "open for listing", dir, NULL);
      drop (b, dir, "cannot be listed for a carve-out");
      return TRUE;
    }
  d = fdopendir (list_fd);
  if (d == NULL)
    {
      int saved = errno;

      close (list_fd);
      return set_errno_error (error, saved, "fdopendir", dir, NULL);
    }

  while ((de = readdir (d)) != NULL)
    {
      g_autofree char *path = NULL;
      g_autoptr(GArray) nested = NULL;
      gboolean tree = FALSE, exact = FALSE, barrier = FALSE;
      struct statx stx;

      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
        continue;
      path = child_path (dir, de->d_name);
      for (guint i = 0; i < excludes->len; i++)
        {
          LlExclude *x = &g_array_index (excludes, LlExclude, i);

          if (strcmp (x->path, path) == 0)
            {
              tree = tree || x->kind == EX_TREE;
              exact = exact || x->kind == EX_EXACT;
              barrier = barrier || x->kind == EX_BARRIER;
            }
        }
      if (tree)
        continue;
      if (statx_fd (dir_fd, de->d_name, AT_SYMLINK_NOFOLLOW, &stx) < 0)
        continue;   /* vanished */
      if (S_ISLNK (stx.stx_mode))
        continue;   /* never followed; its target is governed by its own path */
      if (barrier && S_ISDIR (stx.stx_mode))
        continue;

      nested = excludes_under (excludes, path);
      if (exact || nested->len > 0)
        {
          int child_fd;

          if (!S_ISDIR (stx.stx_mode))
            continue;
          child_fd = pin_child_dir (b, dir_fd, de->d_name, path, &stx);
          if (child_fd < 0)
            continue;
          if (!carve (b, child_fd, path, axis, nested, error))
            return FALSE;
          continue;
        }
      if (!inode_ruleable (b, path, &stx, FALSE, FALSE))
        continue;
      add_rule (b, RULE_NAME, dir_fd, de->d_name, &stx, ll_axis_rights (axis, stx.stx_mode & S_IFMT));
    }
  return TRUE;
}

/* Emit the rules of allow @e on @axis. */
gboolean
ll_emit_allow_axis (Builder *b, const LlEntry *e, uint32_t axis, GError **error)
{
  g_autoptr(GArray) excludes = g_array_new (FALSE, FALSE, sizeof (LlExclude));
  struct statx stx;
  int fd;

  for (guint i = 0; i < b->entries->len; i++)
    {
      const LlEntry *d = g_ptr_array_index (b->entries, i);
      gboolean nested = ll_path_under (e->path, d->path);
      gboolean same = strcmp (e->path, d->path) == 0;

      if (d->deny == 0)
        continue;
      /* deny wins a tie (same path, same shape) */
      if (same && d->exact == e->exact && (d->deny & axis))
        {
          b->literal_deny = TRUE;
          return TRUE;
        }
      if (e->exact)
        continue;   /* nothing lies beneath an exact allow */
      if ((d->deny & axis) && (nested || (same && d->exact)))
        {
          LlExclude x = { d->path, d->exact ? EX_EXACT : EX_TREE };

          g_array_append_val (excludes, x);
          b->literal_deny = TRUE;
          if (axis == SBX_FS_WRITE && e->allow & SBX_FS_WRITE)
            b->carved_write_deny = TRUE;
        }
      else if (axis == SBX_FS_WRITE && (d->deny & (SBX_FS_READ | SBX_FS_EXEC)) && nested)
        {
          /* topology barrier: see the comment at the top */
          LlExclude x = { d->path, d->exact ? 0 : EX_BARRIER };

          g_array_append_val (excludes, x);
        }
    }

  fd = pin_entry (b, e, &stx);
  if (fd < 0)
    {
      switch (-fd)
        {
        case ENOENT:
          if (!e->optional)
            drop (b, e->path, "does not exist");
          return TRUE;
        case ELOOP:
        case EXDEV:
          if (!e->resolved)
            drop (b, e->path, "path runs through a symbolic link");
          return TRUE;
        case EACCES:
        case EPERM:
        case ENOTDIR:
          drop (b, e->path, g_strerror (-fd));
          return TRUE;
        default:
          return set_errno_error (error, -fd, "open", e->path, NULL);
        }
    }

  if (S_ISLNK (stx.stx_mode) && e->resolved)
    return TRUE;   /* O_PATH|O_NOFOLLOW opened the link itself; its target has its own entry */
  if (e->origin == SBX_FS_ORIGIN_DEVICE && !S_ISCHR (stx.stx_mode))
    {
      drop (b, e->path, "device entry is not a character device");
      return TRUE;
    }
  if (excludes->len == 0)
    {
      if (!inode_ruleable (b, e->path, &stx, e->exact, TRUE))
        return TRUE;
      if (S_ISCHR (stx.stx_mode) && axis == SBX_FS_EXEC)
        return TRUE;
      add_rule (b, RULE_FD, fd, NULL, &stx, ll_axis_rights (axis, stx.stx_mode & S_IFMT));
      return TRUE;
    }

  if (!S_ISDIR (stx.stx_mode))
    return TRUE;   /* a deny at a file's own path: nothing to carve */
  b->carved_axes |= axis;
  return carve (b, fd, e->path, axis, excludes, error);
}

/* ------------------------------------------------------------------------- */
/* Symlinked policy paths                                                     */
/* ------------------------------------------------------------------------- */

/* Canonical spelling of @path: realpath() of its longest existing prefix
 * plus the rest.  NULL when nothing resolves differently. */
static char *
canonical_path (const char *path)
{
  g_autofree char *prefix = g_strdup (path);
  GString *rest = g_string_new (NULL);

  for (;;)
    {
      g_autofree char *real = realpath (prefix, NULL);
      char *slash;

      if (real != NULL)
        {
          g_autofree char *joined = NULL;

          if (rest->len == 0)
            joined = g_strdup (real);
          else
            joined = strcmp (real, "/") == 0 ? g_strdup (rest->str) : g_strconcat (real, rest->str, NULL);
          g_string_free (rest, TRUE);
          if (strcmp (joined, path) == 0)
            return NULL;
          return g_steal_pointer (&joined);
        }
      slash = strrchr (prefix, '/');
      if (slash == NULL || slash == prefix)
        break;
      g_string_prepend (rest, slash);
      *slash = '\0';
    }
  g_string_free (rest, TRUE);
  return NULL;
}

static LlEntry *
entry_copy_at (const LlEntry *e, const char *path)
{
  LlEntry *c = g_new0 (LlEntry, 1);

  *c = *e;
  c->path = g_strdup (path);
  c->fd = -1;
  c->resolved = FALSE;
  return c;
}

/* A policy path that runs through a symlink is enforced on its resolved
 * target: denies are copied there (only narrows); allows are copied for the
 * axes the policy grants at the target anyway, the rest is reported. */
void
ll_resolve_symlinked_entries (Builder *b)
{
  guint n = b->entries->len;
  g_autoptr(GPtrArray) pending = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) pending_entries = g_ptr_array_new ();

  for (guint i = 0; i < n; i++)
    {
      LlEntry *e = g_ptr_array_index (b->entries, i);
      char *canon;

      if (e->fd >= 0 || e->canonical)
        continue;   /* identity-checked by the core: never re-followed */
      canon = canonical_path (e->path);
      if (canon == NULL)
        continue;
      e->resolved = TRUE;
      if (e->deny != 0)
        {
          LlEntry *c = entry_copy_at (e, canon);

          c->allow = 0;
          g_ptr_array_add (b->entries, c);
        }
      if (e->allow != 0)
        {
          g_ptr_array_add (pending, canon);
          g_ptr_array_add (pending_entries, e);
        }
      else
        g_free (canon);
    }

  /* Decide every allow against the policy including the copied denies, but
   * before any copied allow exists. */
  n = b->entries->len;
  for (guint i = 0; i < pending->len; i++)
    {
      LlEntry *e = g_ptr_array_index (pending_entries, i);
      const char *target = g_ptr_array_index (pending, i);
      g_autoptr(GPtrArray) view = g_ptr_array_new ();
      uint32_t granted = 0;

      for (guint j = 0; j < n; j++)
        g_ptr_array_add (view, g_ptr_array_index (b->entries, j));
      granted = e->allow & ll_resolve_path (view, b->globs, target);
      if (granted != e->allow)
        {
          GString *missing = g_string_new (NULL);

          for (guint k = 0; k < LL_N_AXES; k++)
            if ((e->allow & ll_axes[k]) && !(granted & ll_axes[k]))
              g_string_append_printf (missing, "%s%s", missing->len ? "," : "", ll_axis_name (ll_axes[k]));
          g_ptr_array_add (b->gaps, g_strdup_printf ("%s -> %s (%s not granted at the target)",
                                                     e->path, target, missing->str));
          g_string_free (missing, TRUE);
        }
      if (granted != 0)
        {
          LlEntry *c = entry_copy_at (e, target);

          c->allow = granted;
          c->deny = 0;
          g_ptr_array_add (b->entries, c);
        }
    }
}
