/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Rung 1: the mount view, compiled once per executor into a flat list of
 * operations the child replays with raw system calls (sbx-linux-spawn.c).
 *
 * The view is a boundary on its own (Landlock is defense in depth on top):
 *  - the root is a private tmpfs, or — only when the policy lets the host be
 *    read — the host "/" bound recursively with the policy's flags;
 *  - each rule path whose access differs from what its enclosing mount gives
 *    becomes a bind of the host path onto the same path (read-only unless the
 *    policy grants write, noexec unless it grants exec, always nosuid and
 *    nodev), or, when the policy hides it, an empty tmpfs / empty file over it;
 *  - a mount cannot express write-only: a path the policy lets the target
 *    write but not read is mounted writable only when Landlock sits on the
 *    view (its plan, built from the same policy, gives that path write
 *    rights and no read or listing), and then the view's directories lose
 *    their blanket listing right (unlisted_view); without Landlock such a
 *    path is hidden, and a grant of it refused.  Exec-only narrows to
 *    hidden;
 *  - runtime-closure paths that are symlinks on the host (/bin -> usr/bin on
 *    merged-/usr systems, /etc/resolv.conf -> ../run/...) are replicated as
 *    symlinks, and their resolved target is bound with the same access, so
 *    ordinary programs start and DNS works;
 *  - /run, /var/run and /tmp are hidden over a visible host unless a rule names
 *    them: unix sockets there (D-Bus, systemd, docker, tmux, ssh-agent) ignore
 *    read-only mounts, so a read-only host would otherwise still let the
 *    target connect to them;
 *  - /dev and /proc are never taken from the host: the child builds a minimal
 *    /dev and mounts a fresh procfs (rules under them are replaced);
 *  - /etc/hosts, where the view shows it read-only, is the sandbox's own
 *    file (the host's lines and one for the sandbox's hostname,
 *    sbx-linux-hosts.c), bound from the state directory.
 *
 * Operations are sorted by path, so a parent is mounted before what is nested
 * in it.  Mountpoints are created only inside tmpfs mounts of our own; inside
 * a host bind the mountpoint must already exist (nothing is ever created on
 * the host).  Paths are canonical: the child opens every path with
 * RESOLVE_NO_SYMLINKS, so a symlink planted after compile fails the spawn
 * instead of redirecting a bind.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sbx-linux-private.h"
#include <sbx/sbx-fs-resolve.h>

/* -------------------------------------------------------------------------- */
/* Precedence (design: SbxFsRuleV1 comment in sbx-plugin-abi.h)               */
/* -------------------------------------------------------------------------- */

/* The policy's precedence, from the one implementation the core uses too
 * (<sbx/sbx-fs-resolve.h>).  Glob denies are left out (NULL matcher): the
 * mount view masks the files they match on its own, so this is the upper
 * bound the view starts from. */
uint32_t
sbx_linux_resolve (const SbxFsRuleV1 *rules,
                   gsize              n_rules,
                   const char        *path,
                   gboolean           tree)
{
  return sbx_fs_resolve_rules (rules, n_rules, path, tree ? SBX_FS_RESOLVE_TREE : SBX_FS_RESOLVE_PATH,
                               NULL, NULL);
}

/* -------------------------------------------------------------------------- */

static gboolean
path_is_under (const char *path,
               const char *ancestor)
{
  gsize len;

  if (strcmp (ancestor, "/") == 0)
    return TRUE;
  len = strlen (ancestor);
  return strncmp (path, ancestor, len) == 0 && (path[len] == '\0' || path[len] == '/');
}

/* The usual homes of unix sockets, hidden over a visible host unless a rule
 * names them. */
static const char *const socket_dirs[] = { "/run", "/var/run", "/tmp" };

/* /dev and /proc are built by the child, never taken from the host. */
static gboolean
path_is_replaced (const char *path)
{
  return path_is_under (path, "/dev") || path_is_under (path, "/proc");
}

/* The directory part of an absolute canonical-looking path resolved through
 * symlinks, with the last component kept as is: the view mirrors the real
 * location of what a rule names without following the rule's own last
 * component (which may be a symlink we replicate).  Falls back to @path when
 * the parent does not exist. */
static char *
canonical_parent (const char *path)
{
  g_autofree char *dir = NULL;
  g_autofree char *base = NULL;
  g_autofree char *real = NULL;

  if (strcmp (path, "/") == 0)
    return g_strdup ("/");
  dir = g_path_get_dirname (path);
  base = g_path_get_basename (path);
  real = realpath (dir, NULL);
  if (real == NULL)
    return g_strdup (path);
  if (strcmp (real, "/") == 0)
    return g_strconcat ("/", base, NULL);
  return g_strconcat (real, "/", base, NULL);
}

typedef struct
{
  const char *path;
  gboolean    own;      /* a tmpfs of ours (we may create in it) */
  uint32_t    access;   /* SBX_FS_* a visible bind gives; 0 for our tmpfs */
} Container;

/* The plan being built and what the steps of sbx_linux_mount_plan_new()
 * hand each other. */
typedef struct
{
  SbxLinuxMountPlan *plan;
  gboolean           landlock;
  const char        *hosts_source;
  GArray            *rules;     /* SbxFsRuleV1, the paths as the view sees them */
  GHashTable        *path_set;  /* every path the view decides on */
  GHashTable        *optional;  /* paths whose absence is not an error */
  GHashTable        *symlinks;  /* path -> link text, for rule paths that are symlinks */
  GHashTable        *sys_set;   /* the curated /sys paths */
  GArray            *stack;     /* Container: the mounts enclosing the path being placed */
  GArray            *ops;       /* SbxMountOp */
  GHashTable        *created;   /* paths created in a tmpfs of ours */
  GPtrArray         *binds;
  GPtrArray         *masked;
  GHashTable        *grant_fds; /* path -> fd + 1 of the policy's grant rules */
  gboolean           grant_fd_failed;
} MountBuilder;

static void
mount_builder_init (MountBuilder *b,
                    gboolean      landlock,
                    const char   *hosts_source)
{
  b->plan = g_new0 (SbxLinuxMountPlan, 1);
  b->plan->strings = g_string_chunk_new (1024);
  b->landlock = landlock;
  b->hosts_source = hosts_source;
  b->rules = g_array_new (FALSE, TRUE, sizeof (SbxFsRuleV1));
  b->path_set = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  b->optional = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  b->symlinks = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  b->sys_set = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  b->stack = g_array_new (FALSE, TRUE, sizeof (Container));
  b->ops = g_array_new (FALSE, TRUE, sizeof (SbxMountOp));
  b->created = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  b->binds = g_ptr_array_new_with_free_func (g_free);
  b->masked = g_ptr_array_new_with_free_func (g_free);
  b->grant_fds = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  b->grant_fd_failed = FALSE;
}

static void
mount_builder_clear (MountBuilder *b)
{
  g_clear_pointer (&b->plan, sbx_linux_mount_plan_free);
  g_clear_pointer (&b->rules, g_array_unref);
  g_clear_pointer (&b->path_set, g_hash_table_unref);
  g_clear_pointer (&b->optional, g_hash_table_unref);
  g_clear_pointer (&b->symlinks, g_hash_table_unref);
  g_clear_pointer (&b->sys_set, g_hash_table_unref);
  g_clear_pointer (&b->stack, g_array_unref);
  g_clear_pointer (&b->ops, g_array_unref);
  g_clear_pointer (&b->created, g_hash_table_unref);
  g_clear_pointer (&b->binds, g_ptr_array_unref);
  g_clear_pointer (&b->masked, g_ptr_array_unref);
  g_clear_pointer (&b->grant_fds, g_hash_table_unref);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (MountBuilder, mount_builder_clear)

static const char *
intern (MountBuilder *b,
        const char   *s)
{
  return g_string_chunk_insert_const (b->plan->strings, s);
}

static SbxMountOp *
add_op (MountBuilder *b,
        uint32_t      kind,
        uint32_t      flags,
        const char   *path,
        const char   *link)
{
  SbxMountOp op = { 0 };
  g_autofree char *dir = NULL;
  g_autofree char *base = NULL;
  const char *rel = path + 1;

  op.kind = kind;
  op.flags = flags;
  op.path = intern (b, path);
  op.rel = intern (b, rel);
  dir = g_path_get_dirname (path);
  base = g_path_get_basename (path);
  op.parent_rel = intern (b, strcmp (dir, "/") == 0 ? "" : dir + 1);
  op.name = intern (b, base);
  op.link = link != NULL ? intern (b, link) : NULL;
  op.tmpfs_slot = -1;
  if (kind == SBX_MOUNT_OP_BIND && g_hash_table_contains (b->grant_fds, path))
    {
      /* A grant: the bind must bring the inode the core pinned and
       * identity-checked, not whatever @path names at spawn.  The fd
       * itself cannot be bound (it belongs to our mount namespace, the
       * child's view is another), so the child re-opens @path without
       * symlinks and compares it with this identity. */
      struct statx stx;
      int fd = GPOINTER_TO_INT (g_hash_table_lookup (b->grant_fds, path)) - 1;

      if (statx (fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_INO, &stx) == 0)
        {
          op.pinned = 1;
          op.pin_dev_major = stx.stx_dev_major;
          op.pin_dev_minor = stx.stx_dev_minor;
          op.pin_ino = stx.stx_ino;
        }
      else
        b->grant_fd_failed = TRUE;
    }
  if (kind == SBX_MOUNT_OP_TMPFS)
    op.tmpfs_slot = b->plan->n_tmpfs_slots++;
  g_array_append_val (b->ops, op);
  return &g_array_index (b->ops, SbxMountOp, b->ops->len - 1);
}

/* Creates every directory from below @container down to @dir (inclusive) in
 * a tmpfs of ours. */
static void
ensure_dirs (MountBuilder    *b,
             const Container *container,
             const char      *dir)
{
  g_autofree char *parent = NULL;

  if (strcmp (dir, container->path) == 0 || g_hash_table_contains (b->created, dir))
    return;
  parent = g_path_get_dirname (dir);
  ensure_dirs (b, container, parent);
  add_op (b, SBX_MOUNT_OP_MKDIR, SBX_MOUNT_F_DIR, dir, NULL);
  g_hash_table_add (b->created, g_strdup (dir));
}

/* The view's /etc/hosts as the sandbox's own file (sbx-linux-hosts.c): in
 * place of the host's where the view shows that read-only and as a regular
 * file (a writable one stays the host's, a symlinked one is left as it is),
 * or created in a tmpfs of ours when the host has none.  TRUE when the
 * path was handled here. */
static gboolean
add_own_hosts (MountBuilder    *b,
               const Container *top,
               const char      *path,
               const char      *source,
               const struct stat *st,
               uint32_t         want)
{
  g_autofree char *parent = NULL;
  SbxMountOp *op;

  if (source == NULL || strcmp (path, "/etc/hosts") != 0 || !(want & SBX_FS_READ) || (want & SBX_FS_WRITE))
    return FALSE;
  if (st != NULL && !S_ISREG (st->st_mode))
    return FALSE;
  if (st == NULL && !top->own)
    return FALSE;   /* nowhere to put it: nothing is created on the host */
  if (top->own)
    {
      parent = g_path_get_dirname (path);
      ensure_dirs (b, top, parent);
      add_op (b, SBX_MOUNT_OP_MKFILE, 0, path, NULL);
    }
  op = add_op (b, SBX_MOUNT_OP_BIND, SBX_MOUNT_F_RDONLY | SBX_MOUNT_F_NOEXEC, path, NULL);
  op->source = g_string_chunk_insert_const (b->plan->strings, source);
  b->plan->own_hosts = TRUE;
  return TRUE;
}

static int
compare_paths (gconstpointer a,
               gconstpointer b)
{
  return strcmp (*(const char *const *) a, *(const char *const *) b);
}

static uint32_t
mount_flags_for (uint32_t access,
                 gboolean is_dir)
{
  uint32_t flags = is_dir ? SBX_MOUNT_F_DIR : 0;

  if (!(access & SBX_FS_WRITE))
    flags |= SBX_MOUNT_F_RDONLY;
  if (!(access & SBX_FS_EXEC))
    flags |= SBX_MOUNT_F_NOEXEC;
  return flags;
}

/* Step 1: the rules as the view sees them: canonical parents, /dev and /proc
 * dropped, symlinked runtime paths followed to their targets; each grant's
 * pinned fd recorded (and checked against its path). */
static gboolean
plan_collect_rules (MountBuilder       *b,
                    const SbxPolicyV1  *policy,
                    GError            **error)
{
  for (guint32 i = 0; i < policy->n_fs_rules; i++)
    {
      const SbxFsRuleV1 *r = &policy->fs_rules[i];
      SbxFsRuleV1 copy = *r;
      g_autofree char *canon = NULL;
      struct stat st;

      if (r->origin == SBX_FS_ORIGIN_DEVICE || path_is_replaced (r->path))
        continue;
      if (r->fd >= 0)
        {
          struct stat fd_st, path_st;

          /* Defense in depth (the backend does not trust the core): a
           * pinned rule's path must still name its fd's inode, and never
           * through a symlink (the core canonicalised it). */
          if (r->origin != SBX_FS_ORIGIN_GRANT || fstat (r->fd, &fd_st) != 0
              || lstat (r->path, &path_st) != 0 || fd_st.st_dev != path_st.st_dev
              || fd_st.st_ino != path_st.st_ino)
            {
              g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                           "mount view: the pinned fd of rule %u (%s) does not name that path",
                           i, r->path);
              return FALSE;
            }
          g_hash_table_replace (b->grant_fds, g_strdup (r->path), GINT_TO_POINTER (r->fd + 1));
        }
      canon = canonical_parent (r->path);
      if (path_is_replaced (canon))
        continue;
      copy.path = intern (b, canon);
      g_array_append_val (b->rules, copy);
      g_hash_table_add (b->path_set, g_strdup (canon));
      if (r->flags & SBX_FS_RULE_OPTIONAL)
        g_hash_table_add (b->optional, g_strdup (canon));

      if (lstat (canon, &st) == 0 && S_ISLNK (st.st_mode))
        {
          g_autofree char *link = g_file_read_link (canon, NULL);
          g_autofree char *target = realpath (canon, NULL);

          if (link != NULL)
            g_hash_table_replace (b->symlinks, g_strdup (canon), g_strdup (link));
          if (target != NULL && r->origin == SBX_FS_ORIGIN_RUNTIME && !path_is_replaced (target))
            {
              SbxFsRuleV1 follow = *r;

              follow.path = intern (b, target);
              g_array_append_val (b->rules, follow);
              g_hash_table_add (b->path_set, g_strdup (target));
              if (r->flags & SBX_FS_RULE_OPTIONAL)
                g_hash_table_add (b->optional, g_strdup (target));
            }
        }
    }
  return TRUE;
}

/* Step 2: hide the usual homes of unix sockets unless a rule names them;
 * rules below them are more specific and still win. */
static void
plan_hide_socket_dirs (MountBuilder *b)
{
  for (guint i = 0; i < G_N_ELEMENTS (socket_dirs); i++)
    {
      SbxFsRuleV1 hide = { sizeof (SbxFsRuleV1), 0, 0, SBX_FS_ALL, SBX_FS_ORIGIN_HOST, -1, NULL };

      if (g_hash_table_contains (b->path_set, socket_dirs[i]))
        continue;
      hide.path = socket_dirs[i];
      g_array_append_val (b->rules, hide);
      g_hash_table_add (b->path_set, g_strdup (socket_dirs[i]));
      g_hash_table_add (b->optional, g_strdup (socket_dirs[i]));
    }
}

static uint32_t
plan_resolve (MountBuilder *b,
              const char   *path,
              gboolean      tree)
{
  return sbx_linux_resolve ((const SbxFsRuleV1 *) b->rules->data, b->rules->len, path, tree);
}

/* Step 3: the root, the bottom of the container stack. */
static void
plan_root (MountBuilder *b)
{
  uint32_t root_access = plan_resolve (b, "/", FALSE) & plan_resolve (b, "/", TRUE);
  Container root = { "/", TRUE, 0 };

  if (root_access & SBX_FS_READ)
    {
      b->plan->root_is_host = TRUE;
      b->plan->root_flags = mount_flags_for (root_access, TRUE);
      root.own = FALSE;
      root.access = root_access;
      g_ptr_array_add (b->binds, g_strdup ("/"));
    }
  else
    {
      b->plan->dev_mkdir = TRUE;
      b->plan->proc_mkdir = TRUE;
    }
  g_array_append_val (b->stack, root);
}

/* Step 3a: the sandbox's /tmp: the executor's TMPDIR where the view can
 * show it there (sbx-linux-tmp.c says when and why HOME moves with it). */
static void
plan_private_tmp (MountBuilder      *b,
                  const SbxPolicyV1 *policy)
{
  gboolean move_home = FALSE;
  g_autofree char *why_not = NULL;

  if (sbx_linux_view_tmp_decide (policy, (const SbxFsRuleV1 *) b->rules->data, b->rules->len,
                                 b->plan->root_is_host, &move_home, &why_not))
    {
      b->plan->tmp_source = intern (b, policy->tmpdir);
      b->plan->home_source = move_home ? intern (b, policy->home) : NULL;
    }
  else
    b->plan->tmp_why_not = intern (b, why_not);
}

/* Step 3a's binds, after every other path: nothing else the view shows
 * lies under them. */
static void
plan_add_private_tmp (MountBuilder *b)
{
  const Container *root = &g_array_index (b->stack, Container, 0);

  for (guint i = 0; i < 2; i++)
    {
      const char *source = i == 0 ? b->plan->tmp_source : b->plan->home_source;
      const char *at = i == 0 ? SBX_LINUX_VIEW_TMP : SBX_LINUX_VIEW_HOME;
      SbxMountOp *op;

      if (source == NULL)
        continue;
      ensure_dirs (b, root, at);
      op = add_op (b, SBX_MOUNT_OP_BIND,
                   mount_flags_for (plan_resolve (b, source, FALSE) & plan_resolve (b, source, TRUE), TRUE), at, NULL);
      op->source = intern (b, source);
      g_ptr_array_add (b->binds, g_strdup (source));
      b->plan->n_binds++;
    }
}

/* Step 3b: a curated read-only /sys where the view would show none: a root
 * of our own and no rule naming /sys or anything under it (the policy
 * decides then).  What programs commonly read and nothing that identifies
 * other processes: the CPU topology and online CPUs (lscpu, runtimes sizing
 * thread pools), the NUMA nodes, and an empty /sys/fs/cgroup where the child
 * mounts the sandbox's own cgroup per spawn (sbx-linux-child-mount.c). */
static void
plan_curated_sys (MountBuilder *b)
{
  static const char *const sys_curated[] = { "/sys/devices/system/cpu", "/sys/devices/system/node" };
  GHashTableIter iter;
  gpointer key;

  if (b->plan->root_is_host)
    return;
  g_hash_table_iter_init (&iter, b->path_set);
  while (g_hash_table_iter_next (&iter, &key, NULL))
    if (path_is_under (key, "/sys"))
      return;
  for (guint i = 0; i < G_N_ELEMENTS (sys_curated); i++)
    if (g_file_test (sys_curated[i], G_FILE_TEST_IS_DIR))
      {
        g_hash_table_add (b->path_set, g_strdup (sys_curated[i]));
        g_hash_table_add (b->sys_set, g_strdup (sys_curated[i]));
      }
  g_hash_table_add (b->path_set, g_strdup (SBX_LINUX_SYS_CGROUP));
  g_hash_table_add (b->sys_set, g_strdup (SBX_LINUX_SYS_CGROUP));
  b->plan->curated_sys = TRUE;
}

/* Step 4's order: every path but the root, sorted so a parent comes before
 * what is nested in it.  The strings belong to the builder's path set. */
static GPtrArray *
plan_sorted_paths (MountBuilder *b)
{
  GPtrArray *paths = g_ptr_array_new ();
  GHashTableIter iter;
  gpointer key;

  g_hash_table_iter_init (&iter, b->path_set);
  while (g_hash_table_iter_next (&iter, &key, NULL))
    if (strcmp (key, "/") != 0)
      g_ptr_array_add (paths, key);
  g_ptr_array_sort (paths, compare_paths);
  return paths;
}

/* The innermost mount enclosing @path: the stack is popped down to it (the
 * paths come sorted, so a container left behind is never re-entered). */
static const Container *
plan_enclosing (MountBuilder *b,
                const char   *path)
{
  while (b->stack->len > 1
         && !path_is_under (path, g_array_index (b->stack, Container, b->stack->len - 1).path))
    g_array_set_size (b->stack, b->stack->len - 1);
  return &g_array_index (b->stack, Container, b->stack->len - 1);
}

/* An empty tmpfs of ours mounted at @path (an existing mountpoint), which
 * then encloses what follows under @path; the container on the stack. */
static const Container *
push_own_tmpfs (MountBuilder *b,
                const char   *path)
{
  Container c = { intern (b, path), TRUE, 0 };

  add_op (b, SBX_MOUNT_OP_TMPFS, SBX_MOUNT_F_DIR, path, NULL);
  g_array_append_val (b->stack, c);
  return &g_array_index (b->stack, Container, b->stack->len - 1);
}

/* The curated /sys (step 3b): an empty tmpfs of ours at /sys, on a
 * mountpoint of the root's, holding the curated paths.  Not the root's
 * own directories: with the view supervisor's FUSE root each of those is
 * a listing round trip at every spawn (/sys, devices, system, fs: four of
 * the default profile's sixteen requests), and a name under /sys outside
 * the curated paths is no host path a profile would grant (ENOENT from the
 * tmpfs, as from the root tmpfs before, and no denial). */
static void
plan_add_sys_path (MountBuilder    *b,
                   const Container *top,
                   const char      *path)
{
  g_autofree char *sys_parent = g_path_get_dirname (path);

  if (strcmp (top->path, "/sys") != 0)
    {
      ensure_dirs (b, top, "/sys");
      top = push_own_tmpfs (b, "/sys");
    }

  ensure_dirs (b, top, sys_parent);
  add_op (b, SBX_MOUNT_OP_MKDIR, SBX_MOUNT_F_DIR, path, NULL);
  g_hash_table_add (b->created, g_strdup (path));
  if (strcmp (path, SBX_LINUX_SYS_CGROUP) != 0)
    {
      add_op (b, SBX_MOUNT_OP_BIND, SBX_MOUNT_F_DIR | SBX_MOUNT_F_RDONLY | SBX_MOUNT_F_NOEXEC
              | SBX_MOUNT_F_OPTIONAL, path, NULL);
      b->plan->n_binds++;
    }
}

/* A path lstat() did not find (@saved_errno): ENOENT and ENOTDIR are
 * absences, which only fail where hiding the path would leave it to the
 * target to create. */
static gboolean
plan_add_absent (MountBuilder     *b,
                 const Container  *top,
                 const char       *path,
                 int               saved_errno,
                 uint32_t          self,
                 uint32_t          tree,
                 GError          **error)
{
  if (saved_errno != ENOENT && saved_errno != ENOTDIR)
    {
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
                   "mount view: lstat %s: %s", path, g_strerror (saved_errno));
      return FALSE;
    }
  /* An absent path the policy hides, under a bind the target may write: the
   * target could create it.  Refuse rather than hide a path that is not
   * there. */
  if (!((self & tree) & SBX_FS_READ) && !top->own && (top->access & SBX_FS_WRITE)
      && !g_hash_table_contains (b->optional, path))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                   "mount view: protected path %s does not exist beneath the writable "
                   "path %s, so it cannot be hidden (the sandbox could create it)",
                   path, top->path);
      return FALSE;
    }
  add_own_hosts (b, top, path, b->hosts_source, NULL, self);
  return TRUE;
}

/* A symlink the rules name: replicated in a tmpfs of ours; inside a host
 * bind the link is already there. */
static void
plan_add_symlink (MountBuilder    *b,
                  const Container *top,
                  const char      *path)
{
  const char *link = g_hash_table_lookup (b->symlinks, path);
  g_autofree char *parent = g_path_get_dirname (path);

  if (!top->own || link == NULL)
    return;
  ensure_dirs (b, top, parent);
  add_op (b, SBX_MOUNT_OP_SYMLINK, 0, path, link);
}

/* The access the view can show for @path from what the policy wants:
 * nothing without read, except write without read where Landlock sits on
 * the view. */
static gboolean
plan_view_access (MountBuilder  *b,
                  const char    *path,
                  uint32_t      *want,
                  GError       **error)
{
  if (!(*want & SBX_FS_READ) && (*want & SBX_FS_WRITE))
    {
      /* Write without read: the view shows it for writing only where
       * Landlock refuses the read (the Landlock plan is built from the same
       * policy: write rights, no read, no listing).  Without Landlock it
       * stays hidden, narrower; a grant of it is refused, since it would
       * open nothing while saying it did. */
      if (!b->landlock && g_hash_table_contains (b->grant_fds, path))
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                       "mount view: %s is granted for writing but not reading, and without "
                       "Landlock a mount cannot show a path write-only", path);
          return FALSE;
        }
      if (!b->landlock)
        *want = 0;
    }
  else if (!(*want & SBX_FS_READ))
    *want = 0;   /* exec-only and nothing: hidden */
  return TRUE;
}

/* A path the view shows with @want: bound from the host unless the
 * enclosing bind already gives exactly that, its mountpoint created first
 * in a tmpfs of ours; a directory becomes the container of what follows. */
static void
plan_add_visible (MountBuilder    *b,
                  const Container *top,
                  const char      *path,
                  uint32_t         want,
                  gboolean         is_dir)
{
  g_autofree char *parent = g_path_get_dirname (path);
  uint32_t flags = mount_flags_for (want, is_dir);

  if (!(want & SBX_FS_READ))
    {
      b->plan->n_unreadable_binds++;
      if (is_dir)
        b->plan->unlisted_view = TRUE;
    }
  if (!top->own
      && (want & (SBX_FS_WRITE | SBX_FS_EXEC)) == (top->access & (SBX_FS_WRITE | SBX_FS_EXEC)))
    return;   /* the enclosing bind already gives exactly this */
  if (g_hash_table_contains (b->optional, path))
    flags |= SBX_MOUNT_F_OPTIONAL;
  if (top->own)
    {
      ensure_dirs (b, top, parent);
      if (is_dir)
        {
          if (!g_hash_table_contains (b->created, path))
            add_op (b, SBX_MOUNT_OP_MKDIR, SBX_MOUNT_F_DIR, path, NULL);
          g_hash_table_add (b->created, g_strdup (path));
        }
      else
        add_op (b, SBX_MOUNT_OP_MKFILE, 0, path, NULL);
    }
  add_op (b, SBX_MOUNT_OP_BIND, flags, path, NULL);
  g_ptr_array_add (b->binds, g_strdup (path));
  b->plan->n_binds++;
  if (is_dir)
    {
      Container c = { intern (b, path), FALSE, want };
      g_array_append_val (b->stack, c);
    }
}

/* A path hidden beneath something visible: covered by an empty tmpfs (a
 * directory, then a container of ours) or an empty file. */
static void
plan_add_covered (MountBuilder *b,
                  const char   *path,
                  gboolean      is_dir)
{
  if (is_dir)
    push_own_tmpfs (b, path);
  else
    add_op (b, SBX_MOUNT_OP_MASK_FILE, 0, path, NULL);
  g_ptr_array_add (b->masked, g_strdup (path));
  for (guint k = 0; k < G_N_ELEMENTS (socket_dirs); k++)
    if (strcmp (path, socket_dirs[k]) == 0)
      b->plan->hides_host_sockets = TRUE;
}

/* With a root of our own, the host's /run is not shown (unless a rule
 * names it); the view still has a /run: an empty tmpfs of the sandbox's
 * own, read-only like the root, where whatever a rule shows under /run is
 * mounted.  Programs walk /run component by component (glibc's systemd
 * NSS module: /run/userdb, /run/host/userdb on every lookup of an unknown
 * user), and bubblewrap's views answer them ENOENT from a /run of their
 * own; without it every such walk reached the view supervisor as an
 * attempt on the host's /run, a "denied read /run" the profile does not
 * mean (nothing there was ever asked for). */
static void
plan_add_own_run (MountBuilder    *b,
                  const Container *top,
                  const char      *path)
{
  ensure_dirs (b, top, path);
  push_own_tmpfs (b, path);
  b->plan->own_run = TRUE;
}

/* Step 4, for one path: what the view shows there. */
static gboolean
plan_add_path (MountBuilder  *b,
               const char    *path,
               GError       **error)
{
  const Container *top = plan_enclosing (b, path);
  struct stat st;
  uint32_t self, tree, want;
  gboolean is_dir;

  if (g_hash_table_contains (b->sys_set, path))
    {
      plan_add_sys_path (b, top, path);
      return TRUE;
    }
  if (g_strcmp0 (path, b->plan->tmp_source) == 0 || g_strcmp0 (path, b->plan->home_source) == 0)
    return TRUE;   /* shown elsewhere (step 3a) */
  self = plan_resolve (b, path, FALSE);
  tree = plan_resolve (b, path, TRUE);
  if (lstat (path, &st) != 0)
    return plan_add_absent (b, top, path, errno, self, tree, error);
  if (S_ISLNK (st.st_mode))
    {
      plan_add_symlink (b, top, path);
      return TRUE;
    }
  is_dir = S_ISDIR (st.st_mode);
  want = is_dir ? (self & tree) : self;
  if (!plan_view_access (b, path, &want, error))
    return FALSE;
  if (add_own_hosts (b, top, path, b->hosts_source, &st, want))
    return TRUE;
  if (want != 0)
    plan_add_visible (b, top, path, want, is_dir);
  else if (!top->own && (top->access & SBX_FS_READ))
    plan_add_covered (b, path, is_dir);
  else if (is_dir && strcmp (path, "/run") == 0 && strcmp (top->path, "/") == 0)
    plan_add_own_run (b, top, path);
  /* else: hidden under our own tmpfs, which shows nothing by default. */
  return TRUE;
}

/* Whether the op at @i creates its node in the root tmpfs itself: no
 * directory mounted before it (a bind, a tmpfs of ours) encloses it. */
static gboolean
plan_op_in_root (const SbxMountOp *ops,
                 gsize             i)
{
  for (gsize k = 0; k < i; k++)
    if ((ops[k].kind == SBX_MOUNT_OP_TMPFS || (ops[k].kind == SBX_MOUNT_OP_BIND && (ops[k].flags & SBX_MOUNT_F_DIR)))
        && strcmp (ops[k].path, ops[i].path) != 0 && path_is_under (ops[i].path, ops[k].path))
      return FALSE;
  return TRUE;
}

static void
plan_skeleton_add (GArray     *entries,
                   GHashTable *seen,
                   const char *path,
                   mode_t      type,
                   const char *link)
{
  SbxViewEntry e = { path, type, link };

  if (!g_hash_table_add (seen, (gpointer) path))
    return;
  g_array_append_val (entries, e);
}

/* Step 5: the view's skeleton, with a root of our own.  What the child
 * would create in the root tmpfs (the mountpoints of the top binds, the
 * directories leading to them, the replicated symlinks, /dev, /proc) is
 * what the view supervisor shows when the root is its FUSE filesystem;
 * those ops are flagged SBX_MOUNT_F_SKELETON, and a child that mounted that
 * root skips them; the directories among them that hold entries are
 * flagged SBX_MOUNT_F_LIST too (the child lists them to learn their
 * entries in one round trip).  Nested tmpfs mounts (a hidden directory's, /dev's) keep
 * their own ops: they are not the root's. */
static void
plan_skeleton (SbxLinuxMountPlan *plan)
{
  g_autoptr(GArray) entries = NULL;
  g_autoptr(GHashTable) seen = NULL;
  g_autoptr(GHashTable) parents = NULL;   /* parent_rel of every skeleton op */

  if (plan->root_is_host)
    return;
  entries = g_array_new (FALSE, TRUE, sizeof (SbxViewEntry));
  seen = g_hash_table_new (g_str_hash, g_str_equal);
  parents = g_hash_table_new (g_str_hash, g_str_equal);
  if (plan->dev_mkdir)
    plan_skeleton_add (entries, seen, g_string_chunk_insert_const (plan->strings, "/dev"), S_IFDIR, NULL);
  if (plan->proc_mkdir)
    plan_skeleton_add (entries, seen, g_string_chunk_insert_const (plan->strings, "/proc"), S_IFDIR, NULL);
  for (gsize i = 0; i < plan->n_ops; i++)
    {
      SbxMountOp *op = &plan->ops[i];
      mode_t type = op->kind == SBX_MOUNT_OP_MKDIR ? S_IFDIR
                    : op->kind == SBX_MOUNT_OP_MKFILE ? S_IFREG
                    : op->kind == SBX_MOUNT_OP_SYMLINK ? S_IFLNK : 0;

      if (type == 0 || !plan_op_in_root (plan->ops, i))
        continue;
      op->flags |= SBX_MOUNT_F_SKELETON;
      plan_skeleton_add (entries, seen, op->path, type, type == S_IFLNK ? op->link : NULL);
      g_hash_table_add (parents, (gpointer) op->parent_rel);
    }
  for (gsize i = 0; i < plan->n_ops; i++)
    {
      SbxMountOp *op = &plan->ops[i];

      if (op->kind == SBX_MOUNT_OP_MKDIR && (op->flags & SBX_MOUNT_F_SKELETON)
          && g_hash_table_contains (parents, op->rel))
        op->flags |= SBX_MOUNT_F_LIST;
    }
  plan->n_skeleton = entries->len;
  plan->skeleton = (SbxViewEntry *) g_array_free (g_steal_pointer (&entries), FALSE);
}

/* The plan out of the builder, once every path is placed. */
static SbxLinuxMountPlan *
plan_finish (MountBuilder  *b,
             GError       **error)
{
  SbxLinuxMountPlan *plan;

  if (b->grant_fd_failed)
    {
      int errsv = errno;

      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errsv),
                   "mount view: cannot read a grant's pinned identity: %s", g_strerror (errsv));
      return NULL;
    }
  plan = g_steal_pointer (&b->plan);
  plan->n_ops = b->ops->len;
  plan->ops = (SbxMountOp *) g_array_free (g_steal_pointer (&b->ops), FALSE);
  g_ptr_array_add (b->binds, NULL);
  plan->bind_sources = (char **) g_ptr_array_steal (b->binds, NULL);
  g_ptr_array_add (b->masked, NULL);
  plan->masked = (char **) g_ptr_array_steal (b->masked, NULL);
  plan_skeleton (plan);
  return plan;
}

SbxLinuxMountPlan *
sbx_linux_mount_plan_new (const SbxPolicyV1  *policy,
                          gboolean            landlock,
                          const char         *hosts_source,
                          GError            **error)
{
  g_auto(MountBuilder) b = { 0 };
  g_autoptr(GPtrArray) paths = NULL;

  mount_builder_init (&b, landlock, hosts_source);
  if (!plan_collect_rules (&b, policy, error))
    return NULL;
  plan_hide_socket_dirs (&b);
  plan_root (&b);
  plan_private_tmp (&b, policy);
  plan_curated_sys (&b);
  paths = plan_sorted_paths (&b);
  for (guint i = 0; i < paths->len; i++)
    if (!plan_add_path (&b, g_ptr_array_index (paths, i), error))
      return NULL;
  plan_add_private_tmp (&b);
  return plan_finish (&b, error);
}

void
sbx_linux_mount_plan_free (SbxLinuxMountPlan *plan)
{
  if (plan == NULL)
    return;
  g_free (plan->ops);
  g_free (plan->skeleton);
  g_strfreev (plan->bind_sources);
  g_strfreev (plan->masked);
  if (plan->strings != NULL)
    g_string_chunk_free (plan->strings);
  g_free (plan);
}
