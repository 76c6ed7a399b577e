/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The rung-1 mount view compiler (white box): the precedence resolver
 * against table rows, and the operation lists it produces for typical and
 * adversarial policies (nested read-only roots, hidden paths under visible
 * ones, host read with masked socket directories, replicated runtime
 * symlinks, an absent protected path under a writable root), plus the
 * policy validation of compile().
 */
#include "backend-test-util.h"
#include "executor-test-util.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <glib/gstdio.h>

#include "sbx-linux-private.h"

#define R SBX_FS_READ
#define X SBX_FS_EXEC
#define W SBX_FS_WRITE

static SbxFsRuleV1
rule (const char *path,
      uint32_t    allow,
      uint32_t    deny,
      uint32_t    flags)
{
  SbxFsRuleV1 r = { sizeof (SbxFsRuleV1), flags, allow, deny, SBX_FS_ORIGIN_ROOT, -1, path };

  return r;
}

/* ---- resolver ---- */

typedef struct
{
  const char *path;
  gboolean    tree;
  uint32_t    expect;
} ResolveRow;

static void
test_resolve_table (void)
{
  const SbxFsRuleV1 rules[] = {
    rule ("/", 0, R | X | W, 0),                 /* host denied */
    rule ("/usr", R | X, 0, 0),                  /* runtime: mentions R, X only */
    rule ("/ws", R | X | W, 0, 0),
    rule ("/ws/ro", R | X, W, 0),                /* nested read-only root */
    rule ("/ws/ro/open", W, 0, 0),               /* W only: R and X fall back to /ws/ro */
    rule ("/ws/hidden", 0, R | X | W, 0),
    rule ("/ws/exact", 0, R | X | W, SBX_FS_RULE_EXACT),
    rule ("/ws/tie", R, 0, 0),
    rule ("/ws/tie", 0, R, 0),                   /* tie: deny wins */
    rule ("/ws/malformed", 0, 0, 0),             /* allow == deny == 0: deny-all */
  };
  static const ResolveRow rows[] = {
    { "/", FALSE, 0 },
    { "/etc/passwd", FALSE, 0 },
    { "/usr", FALSE, R | X },
    { "/usr/bin/sh", FALSE, R | X },
    { "/ws", FALSE, R | X | W },
    { "/ws/file", FALSE, R | X | W },
    { "/wsx", FALSE, 0 },                        /* prefix, not a descendant */
    { "/ws/ro", FALSE, R | X },
    { "/ws/ro/f", FALSE, R | X },
    { "/ws/ro/open", FALSE, R | X | W },
    { "/ws/hidden/f", FALSE, 0 },
    { "/ws/exact", FALSE, 0 },                   /* exact deny applies to itself */
    { "/ws/exact", TRUE, R | X | W },            /* ...not to its descendants */
    { "/ws/exact/child", FALSE, R | X | W },
    { "/ws/tie", FALSE, X | W },
    { "/ws/malformed/f", FALSE, 0 },
    { "/ws/ro", TRUE, R | X },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (rows); i++)
    {
      uint32_t got = sbx_linux_resolve (rules, G_N_ELEMENTS (rules), rows[i].path, rows[i].tree);

      if (got != rows[i].expect)
        g_error ("resolve %s (tree %d): got 0x%x, expected 0x%x", rows[i].path, rows[i].tree, got,
                 rows[i].expect);
    }
}

/* ---- plans ---- */

typedef struct
{
  char            *tmp;
  char            *ws;
  GArray          *rules;
  SbxNetPolicyV1   net;
  SbxPolicyV1      policy;
} PlanFixture;

static void
plan_fixture_setup (PlanFixture *fx)
{
  fx->tmp = etu_make_tmpdir ("sbx-mount-XXXXXX");
  fx->ws = g_build_filename (fx->tmp, "ws", NULL);
  g_assert_cmpint (g_mkdir (fx->ws, 0755), ==, 0);
  fx->rules = g_array_new (FALSE, TRUE, sizeof (SbxFsRuleV1));
  fx->net.struct_size = sizeof fx->net;
  fx->net.mode = SBX_NET_MODE_DENY;
}

static void
plan_fixture_teardown (PlanFixture *fx)
{
  etu_rm_rf (fx->tmp);
  g_free (fx->tmp);
  g_free (fx->ws);
  g_array_unref (fx->rules);
}

static void
add (PlanFixture *fx,
     const char  *path,
     uint32_t     allow,
     uint32_t     deny,
     uint32_t     flags,
     uint32_t     origin)
{
  SbxFsRuleV1 r = rule (g_intern_string (path), allow, deny, flags);

  r.origin = origin;
  g_array_append_val (fx->rules, r);
}

static const SbxPolicyV1 *
policy (PlanFixture *fx)
{
  fx->policy.struct_size = sizeof fx->policy;
  fx->policy.fs_rules = (const SbxFsRuleV1 *) (void *) fx->rules->data;
  fx->policy.n_fs_rules = fx->rules->len;
  fx->policy.net = &fx->net;
  fx->policy.workspace = fx->ws;
  return &fx->policy;
}

static const SbxMountOp *
find_op (SbxLinuxMountPlan *plan,
         uint32_t           kind,
         const char        *path)
{
  for (gsize i = 0; i < plan->n_ops; i++)
    if (plan->ops[i].kind == kind && strcmp (plan->ops[i].path, path) == 0)
      return &plan->ops[i];
  return NULL;
}

static gssize
op_index (SbxLinuxMountPlan *plan,
          uint32_t           kind,
          const char        *path)
{
  for (gsize i = 0; i < plan->n_ops; i++)
    if (plan->ops[i].kind == kind && strcmp (plan->ops[i].path, path) == 0)
      return (gssize) i;
  return -1;
}

/* Host denied: a tmpfs root; the workspace bound read-write (noexec off),
 * a nested read-only root on top of it, a hidden directory under the
 * workspace covered by a tmpfs; mountpoints created only in our tmpfs. */
static void
test_plan_default (void)
{
  PlanFixture fx;
  g_autoptr(SbxLinuxMountPlan) plan = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *ro = NULL;
  g_autofree char *hidden = NULL;
  g_autofree char *ws_parent = NULL;
  const SbxMountOp *op;

  plan_fixture_setup (&fx);
  ro = g_build_filename (fx.ws, "ro", NULL);
  hidden = g_build_filename (fx.ws, "hidden", NULL);
  g_assert_cmpint (g_mkdir (ro, 0755), ==, 0);
  g_assert_cmpint (g_mkdir (hidden, 0755), ==, 0);
  add (&fx, "/usr", R | X, 0, 0, SBX_FS_ORIGIN_RUNTIME);
  add (&fx, "/dev/null", R | W, 0, SBX_FS_RULE_EXACT, SBX_FS_ORIGIN_DEVICE);
  add (&fx, "/proc/self", R, 0, 0, SBX_FS_ORIGIN_ROOT);   /* replaced: never bound */
  add (&fx, fx.ws, R | X | W, 0, 0, SBX_FS_ORIGIN_WORKSPACE);
  add (&fx, ro, R | X, W, 0, SBX_FS_ORIGIN_ROOT);
  add (&fx, hidden, 0, R | X | W, 0, SBX_FS_ORIGIN_ROOT);
  add (&fx, "/", 0, R | X | W, 0, SBX_FS_ORIGIN_HOST);
  plan = sbx_linux_mount_plan_new (policy (&fx), TRUE, NULL, &error);
  g_assert_no_error (error);

  g_assert_false (plan->root_is_host);
  g_assert_true (plan->dev_mkdir && plan->proc_mkdir);
  op = find_op (plan, SBX_MOUNT_OP_BIND, "/usr");
  g_assert_nonnull (op);
  g_assert_cmpuint (op->flags, ==, SBX_MOUNT_F_DIR | SBX_MOUNT_F_RDONLY);
  op = find_op (plan, SBX_MOUNT_OP_BIND, fx.ws);
  g_assert_nonnull (op);
  g_assert_cmpuint (op->flags, ==, SBX_MOUNT_F_DIR);
  op = find_op (plan, SBX_MOUNT_OP_BIND, ro);
  g_assert_nonnull (op);
  g_assert_cmpuint (op->flags, ==, SBX_MOUNT_F_DIR | SBX_MOUNT_F_RDONLY);
  g_assert_cmpint (op_index (plan, SBX_MOUNT_OP_BIND, fx.ws), <, op_index (plan, SBX_MOUNT_OP_BIND, ro));
  op = find_op (plan, SBX_MOUNT_OP_TMPFS, hidden);
  g_assert_nonnull (op);
  g_assert_cmpint (op->tmpfs_slot, >=, 0);
  /* /run: the sandbox's own empty tmpfs on a mountpoint of the root's
   * (the host's /run is not shown; programs walking it find nothing) */
  g_assert_true (plan->own_run);
  op = find_op (plan, SBX_MOUNT_OP_TMPFS, "/run");
  g_assert_nonnull (op);
  g_assert_cmpint (op->tmpfs_slot, >=, 0);
  g_assert_cmpint (op->tmpfs_slot, !=, find_op (plan, SBX_MOUNT_OP_TMPFS, hidden)->tmpfs_slot);
  g_assert_cmpint (op_index (plan, SBX_MOUNT_OP_MKDIR, "/run"), <, op_index (plan, SBX_MOUNT_OP_TMPFS, "/run"));
  g_assert_true (find_op (plan, SBX_MOUNT_OP_MKDIR, "/run")->flags & SBX_MOUNT_F_SKELETON);
  g_assert_false (g_strv_contains ((const char *const *) plan->masked, "/run"));
  /* the curated /sys: a tmpfs of ours on a mountpoint of the root's, the
   * curated paths made and bound inside it (none of them the root's own
   * skeleton, so none is a round trip to the view supervisor) */
  g_assert_true (plan->curated_sys);
  op = find_op (plan, SBX_MOUNT_OP_TMPFS, "/sys");
  g_assert_nonnull (op);
  g_assert_true (find_op (plan, SBX_MOUNT_OP_MKDIR, "/sys")->flags & SBX_MOUNT_F_SKELETON);
  g_assert_cmpint (op_index (plan, SBX_MOUNT_OP_MKDIR, "/sys"), <, op_index (plan, SBX_MOUNT_OP_TMPFS, "/sys"));
  op = find_op (plan, SBX_MOUNT_OP_MKDIR, SBX_LINUX_SYS_CGROUP);
  g_assert_nonnull (op);
  g_assert_false (op->flags & SBX_MOUNT_F_SKELETON);
  g_assert_cmpint (op_index (plan, SBX_MOUNT_OP_TMPFS, "/sys"), <, op_index (plan, SBX_MOUNT_OP_MKDIR, SBX_LINUX_SYS_CGROUP));
  for (gsize i = 0; i < plan->n_skeleton; i++)
    g_assert_false (g_str_has_prefix (plan->skeleton[i].path, "/sys/"));
  g_assert_cmpint (plan->n_tmpfs_slots, ==, 3);   /* the hidden directory, /run, /sys */
  /* Nothing under /dev or /proc, nothing for the host root. */
  for (gsize i = 0; i < plan->n_ops; i++)
    {
      g_assert_false (g_str_has_prefix (plan->ops[i].path, "/dev"));
      g_assert_false (g_str_has_prefix (plan->ops[i].path, "/proc"));
      g_assert_cmpstr (plan->ops[i].path, !=, "/");
    }
  /* The workspace's parent directories are created in the root tmpfs; the
   * read-only root's mountpoint is not (it exists inside the bound ws). */
  ws_parent = g_path_get_dirname (fx.ws);
  g_assert_nonnull (find_op (plan, SBX_MOUNT_OP_MKDIR, ws_parent));
  g_assert_nonnull (find_op (plan, SBX_MOUNT_OP_MKDIR, fx.ws));
  g_assert_null (find_op (plan, SBX_MOUNT_OP_MKDIR, ro));
  /* The skeleton's directories that hold entries are listed by a child
   * with the FUSE root (SBX_MOUNT_F_LIST); the workspace's mountpoint holds
   * none of the skeleton (what is under it is the bind's) and is not. */
  op = find_op (plan, SBX_MOUNT_OP_MKDIR, ws_parent);
  g_assert_cmpuint (op->flags & (SBX_MOUNT_F_SKELETON | SBX_MOUNT_F_LIST), ==,
                    SBX_MOUNT_F_SKELETON | SBX_MOUNT_F_LIST);
  op = find_op (plan, SBX_MOUNT_OP_MKDIR, fx.ws);
  g_assert_cmpuint (op->flags & (SBX_MOUNT_F_SKELETON | SBX_MOUNT_F_LIST), ==, SBX_MOUNT_F_SKELETON);
  for (gsize i = 0; i < plan->n_ops; i++)
    if (plan->ops[i].flags & SBX_MOUNT_F_LIST)
      {
        gboolean holds = FALSE;

        g_assert_cmpuint (plan->ops[i].kind, ==, SBX_MOUNT_OP_MKDIR);
        g_assert_true (plan->ops[i].flags & SBX_MOUNT_F_SKELETON);
        for (gsize k = 0; k < plan->n_ops; k++)
          holds |= (plan->ops[k].flags & SBX_MOUNT_F_SKELETON)
                   && strcmp (plan->ops[k].parent_rel, plan->ops[i].rel) == 0;
        g_assert_true (holds);
      }
  /* Landlock's mount roots are the bind sources. */
  g_assert_true (g_strv_contains ((const char *const *) plan->bind_sources, fx.ws));
  g_assert_true (g_strv_contains ((const char *const *) plan->bind_sources, ro));
  g_assert_false (plan->hides_host_sockets);
  plan_fixture_teardown (&fx);
}

/* Host read allowed: the host root is bound read-only and /run, /var/run
 * (when a real directory) and /tmp are hidden unless a rule names them; the
 * workspace under /tmp gets its mountpoints created inside that mask. */
static void
test_plan_host_read (void)
{
  PlanFixture fx;
  g_autoptr(SbxLinuxMountPlan) plan = NULL;
  g_autoptr(GError) error = NULL;

  plan_fixture_setup (&fx);
  add (&fx, fx.ws, R | X | W, 0, 0, SBX_FS_ORIGIN_WORKSPACE);
  add (&fx, "/", R | X, W, 0, SBX_FS_ORIGIN_HOST);
  plan = sbx_linux_mount_plan_new (policy (&fx), TRUE, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (plan->root_is_host);
  g_assert_cmpuint (plan->root_flags, ==, SBX_MOUNT_F_DIR | SBX_MOUNT_F_RDONLY);
  g_assert_false (plan->dev_mkdir);
  g_assert_nonnull (find_op (plan, SBX_MOUNT_OP_TMPFS, "/run"));
  g_assert_true (plan->hides_host_sockets);
  g_assert_false (plan->own_run);   /* the host's /run covered, not a /run of our root's */
  if (g_str_has_prefix (fx.ws, "/tmp/"))
    {
      g_assert_cmpint (op_index (plan, SBX_MOUNT_OP_TMPFS, "/tmp"), <,
                       op_index (plan, SBX_MOUNT_OP_MKDIR, fx.ws));
      g_assert_cmpint (op_index (plan, SBX_MOUNT_OP_MKDIR, fx.ws), <,
                       op_index (plan, SBX_MOUNT_OP_BIND, fx.ws));
    }
  /* /usr is already visible through the root: no separate bind. */
  g_assert_null (find_op (plan, SBX_MOUNT_OP_BIND, "/usr"));
  plan_fixture_teardown (&fx);
}

/* A root of our own and a rule naming /run: the host's /run is bound (the
 * policy's word wins), no /run of the sandbox's own. */
static void
test_plan_own_root_explicit_run (void)
{
  PlanFixture fx;
  g_autoptr(SbxLinuxMountPlan) plan = NULL;
  g_autoptr(GError) error = NULL;

  if (!g_file_test ("/run", G_FILE_TEST_IS_DIR))
    {
      g_test_skip ("this host has no /run");
      return;
    }
  plan_fixture_setup (&fx);
  add (&fx, fx.ws, R | X | W, 0, 0, SBX_FS_ORIGIN_WORKSPACE);
  add (&fx, "/run", R, W, 0, SBX_FS_ORIGIN_ROOT);
  add (&fx, "/", 0, R | X | W, 0, SBX_FS_ORIGIN_HOST);
  plan = sbx_linux_mount_plan_new (policy (&fx), TRUE, NULL, &error);
  g_assert_no_error (error);
  g_assert_false (plan->root_is_host);
  g_assert_false (plan->own_run);
  g_assert_null (find_op (plan, SBX_MOUNT_OP_TMPFS, "/run"));
  g_assert_nonnull (find_op (plan, SBX_MOUNT_OP_BIND, "/run"));
  plan_fixture_teardown (&fx);
}

/* A rule naming /run overrides the socket mask (the policy's word wins). */
static void
test_plan_host_read_explicit_run (void)
{
  PlanFixture fx;
  g_autoptr(SbxLinuxMountPlan) plan = NULL;
  g_autoptr(GError) error = NULL;

  plan_fixture_setup (&fx);
  add (&fx, fx.ws, R | X | W, 0, 0, SBX_FS_ORIGIN_WORKSPACE);
  add (&fx, "/run", R | X, W, 0, SBX_FS_ORIGIN_ROOT);
  add (&fx, "/", R | X, W, 0, SBX_FS_ORIGIN_HOST);
  plan = sbx_linux_mount_plan_new (policy (&fx), TRUE, NULL, &error);
  g_assert_no_error (error);
  g_assert_null (find_op (plan, SBX_MOUNT_OP_TMPFS, "/run"));
  plan_fixture_teardown (&fx);
}

/* Runtime paths that are symlinks on the host are replicated as links and
 * their target is bound with the same access. */
static void
test_plan_runtime_symlink (void)
{
  PlanFixture fx;
  g_autoptr(SbxLinuxMountPlan) plan = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *real = NULL;
  g_autofree char *link = NULL;
  g_autofree char *file = NULL;
  const SbxMountOp *op;

  plan_fixture_setup (&fx);
  real = g_build_filename (fx.tmp, "real", NULL);
  link = g_build_filename (fx.tmp, "link", NULL);
  file = g_build_filename (real, "f", NULL);
  g_assert_cmpint (g_mkdir (real, 0755), ==, 0);
  g_assert_true (g_file_set_contents (file, "x", -1, NULL));
  g_assert_cmpint (symlink ("real", link), ==, 0);
  add (&fx, link, R | X, 0, SBX_FS_RULE_OPTIONAL, SBX_FS_ORIGIN_RUNTIME);
  add (&fx, "/", 0, R | X | W, 0, SBX_FS_ORIGIN_HOST);
  plan = sbx_linux_mount_plan_new (policy (&fx), TRUE, NULL, &error);
  g_assert_no_error (error);
  op = find_op (plan, SBX_MOUNT_OP_SYMLINK, link);
  g_assert_nonnull (op);
  g_assert_cmpstr (op->link, ==, "real");
  op = find_op (plan, SBX_MOUNT_OP_BIND, real);
  g_assert_nonnull (op);
  g_assert_true (op->flags & SBX_MOUNT_F_OPTIONAL);
  plan_fixture_teardown (&fx);
}

/* A hidden path that does not exist under a writable bind cannot be hidden
 * (the sandbox could create it): compile refuses. */
static void
test_plan_absent_protected (void)
{
  PlanFixture fx;
  g_autoptr(SbxLinuxMountPlan) plan = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *absent = NULL;

  plan_fixture_setup (&fx);
  absent = g_build_filename (fx.ws, ".secrets", NULL);
  add (&fx, fx.ws, R | X | W, 0, 0, SBX_FS_ORIGIN_WORKSPACE);
  add (&fx, absent, 0, R | X | W, 0, SBX_FS_ORIGIN_ROOT);
  add (&fx, "/", 0, R | X | W, 0, SBX_FS_ORIGIN_HOST);
  plan = sbx_linux_mount_plan_new (policy (&fx), TRUE, NULL, &error);
  g_assert_null (plan);
  g_assert_nonnull (error);
  g_assert_nonnull (strstr (error->message, absent));
  g_assert_nonnull (strstr (error->message, "cannot be hidden"));
  g_clear_error (&error);

  /* Under a read-only bind it cannot be created, so it is simply skipped. */
  g_array_set_size (fx.rules, 0);
  add (&fx, fx.ws, R | X, W, 0, SBX_FS_ORIGIN_WORKSPACE);
  add (&fx, absent, 0, R | X | W, 0, SBX_FS_ORIGIN_ROOT);
  add (&fx, "/", 0, R | X | W, 0, SBX_FS_ORIGIN_HOST);
  plan = sbx_linux_mount_plan_new (policy (&fx), TRUE, NULL, &error);
  g_assert_no_error (error);
  g_assert_nonnull (plan);
  plan_fixture_teardown (&fx);
}

/* A denied file under a visible directory is covered by an empty file;
 * exec-only directories narrow to hidden (a mount cannot express them);
 * write-only ones are mounted writable when Landlock refuses their read
 * (and the view then loses its blanket listing right), hidden otherwise. */
static void
test_plan_masks_and_narrowing (void)
{
  PlanFixture fx;
  g_autoptr(SbxLinuxMountPlan) plan = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *secret = NULL;
  g_autofree char *xonly = NULL;
  g_autofree char *wonly = NULL;
  g_autofree char *noexec = NULL;
  const SbxMountOp *op;

  plan_fixture_setup (&fx);
  secret = g_build_filename (fx.ws, "secret.txt", NULL);
  xonly = g_build_filename (fx.ws, "xonly", NULL);
  wonly = g_build_filename (fx.ws, "wonly", NULL);
  noexec = g_build_filename (fx.ws, "data", NULL);
  g_assert_true (g_file_set_contents (secret, "s", -1, NULL));
  g_assert_cmpint (g_mkdir (xonly, 0755), ==, 0);
  g_assert_cmpint (g_mkdir (wonly, 0755), ==, 0);
  g_assert_cmpint (g_mkdir (noexec, 0755), ==, 0);
  add (&fx, fx.ws, R | X | W, 0, 0, SBX_FS_ORIGIN_WORKSPACE);
  add (&fx, secret, 0, R | X | W, SBX_FS_RULE_EXACT, SBX_FS_ORIGIN_ROOT);
  add (&fx, xonly, X, R | W, 0, SBX_FS_ORIGIN_ROOT);
  add (&fx, wonly, W, R | X, 0, SBX_FS_ORIGIN_ROOT);
  add (&fx, noexec, R | W, X, 0, SBX_FS_ORIGIN_ROOT);
  add (&fx, "/", 0, R | X | W, 0, SBX_FS_ORIGIN_HOST);
  plan = sbx_linux_mount_plan_new (policy (&fx), TRUE, NULL, &error);
  g_assert_no_error (error);
  g_assert_nonnull (find_op (plan, SBX_MOUNT_OP_MASK_FILE, secret));
  g_assert_nonnull (find_op (plan, SBX_MOUNT_OP_TMPFS, xonly));
  g_assert_null (find_op (plan, SBX_MOUNT_OP_TMPFS, wonly));
  op = find_op (plan, SBX_MOUNT_OP_BIND, wonly);
  g_assert_nonnull (op);
  g_assert_cmpuint (op->flags, ==, SBX_MOUNT_F_DIR | SBX_MOUNT_F_NOEXEC);   /* writable */
  g_assert_cmpuint (plan->n_unreadable_binds, ==, 1);
  g_assert_true (plan->unlisted_view);
  op = find_op (plan, SBX_MOUNT_OP_BIND, noexec);
  g_assert_nonnull (op);
  g_assert_cmpuint (op->flags, ==, SBX_MOUNT_F_DIR | SBX_MOUNT_F_NOEXEC);
  g_clear_pointer (&plan, sbx_linux_mount_plan_free);

  /* Without Landlock nothing would refuse the read: hidden. */
  plan = sbx_linux_mount_plan_new (policy (&fx), FALSE, NULL, &error);
  g_assert_no_error (error);
  g_assert_nonnull (find_op (plan, SBX_MOUNT_OP_TMPFS, wonly));
  g_assert_null (find_op (plan, SBX_MOUNT_OP_BIND, wonly));
  g_assert_cmpuint (plan->n_unreadable_binds, ==, 0);
  g_assert_false (plan->unlisted_view);
  g_clear_pointer (&plan, sbx_linux_mount_plan_free);

  /* ... and a write-only grant (a pinned rule) is refused, never void. */
  {
    g_autofree char *granted = g_build_filename (fx.ws, "granted", NULL);
    int fd;

    g_assert_true (g_file_set_contents (granted, "g", -1, NULL));
    fd = open (granted, O_PATH | O_CLOEXEC);
    g_assert_cmpint (fd, >=, 0);
    add (&fx, granted, W, R | X, SBX_FS_RULE_EXACT | SBX_FS_RULE_CANONICAL, SBX_FS_ORIGIN_GRANT);
    g_array_index (fx.rules, SbxFsRuleV1, fx.rules->len - 1).fd = fd;
    plan = sbx_linux_mount_plan_new (policy (&fx), FALSE, NULL, &error);
    g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED);
    g_assert_null (plan);
    g_clear_error (&error);
    plan = sbx_linux_mount_plan_new (policy (&fx), TRUE, NULL, &error);
    g_assert_no_error (error);
    op = find_op (plan, SBX_MOUNT_OP_BIND, granted);
    g_assert_nonnull (op);
    g_assert_cmpuint (op->flags & SBX_MOUNT_F_RDONLY, ==, 0);
    g_assert_cmpuint (op->pinned, ==, 1);
    close (fd);
  }
  plan_fixture_teardown (&fx);
}

/* compile() re-validates the policy (defense in depth) and refuses what it
 * cannot honour instead of widening. */
static void
test_compile_validation (void)
{
  g_autofree char *why = NULL;
  g_autofree char *ws = NULL;
  struct
  {
    const char *name;
    uint32_t    allow, deny, flags, origin, net_mode;
    const char *path;
    int32_t     status;
    const char *needle;
  } rows[] = {
    { "relative", R, 0, 0, SBX_FS_ORIGIN_ROOT, SBX_NET_MODE_DENY, "rel/path", SBX_STATUS_INVALID, "clean absolute" },
    { "dotdot", R, 0, 0, SBX_FS_ORIGIN_ROOT, SBX_NET_MODE_DENY, "/a/../b", SBX_STATUS_INVALID, "clean absolute" },
    { "trailing-slash", R, 0, 0, SBX_FS_ORIGIN_ROOT, SBX_NET_MODE_DENY, "/a/", SBX_STATUS_INVALID, "clean absolute" },
    { "bad-bits", 0x10, 0, 0, SBX_FS_ORIGIN_ROOT, SBX_NET_MODE_DENY, "/a", SBX_STATUS_INVALID, "access bits" },
    { "bad-flags", R, 0, 0x100, SBX_FS_ORIGIN_ROOT, SBX_NET_MODE_DENY, "/a", SBX_STATUS_INVALID, "flags" },
    { "bad-origin", R, 0, 0, 99, SBX_NET_MODE_DENY, "/a", SBX_STATUS_INVALID, "origin" },
    { "glob", 0, R, SBX_FS_RULE_GLOB, SBX_FS_ORIGIN_ROOT, SBX_NET_MODE_DENY, "/a/**/.env*", SBX_STATUS_UNSUPPORTED, "glob" },
    /* ports are supported (network.broad.v1), but never without a port list */
    { "ports-empty", R, 0, 0, SBX_FS_ORIGIN_ROOT, SBX_NET_MODE_PORTS, "/a", SBX_STATUS_INVALID, "ports with 0 ports" },
    /* proxy mode is compiled (tests/test-executor-egress.c); without a port it is malformed */
    { "proxy-no-port", R, 0, 0, SBX_FS_ORIGIN_ROOT, SBX_NET_MODE_PROXY, "/a", SBX_STATUS_INVALID, "proxy_port 0" },
    { "net-mode", R, 0, 0, SBX_FS_ORIGIN_ROOT, 9, "/a", SBX_STATUS_INVALID, "network mode" },
  };

  if (!linux_test_have_rung ("linux-userns", &why))
    {
      g_test_skip (why);
      return;
    }
  ws = etu_make_tmpdir ("sbx-ws-XXXXXX");
  for (gsize i = 0; i < G_N_ELEMENTS (rows); i++)
    {
      g_autoptr(LinuxTestPolicy) p = linux_test_policy_new (ws, 2, 2, 0, 0);
      g_autoptr(LinuxTestBackend) b = linux_test_backend_new ("linux-userns");

      linux_test_policy_add_rule (p, rows[i].path, rows[i].allow, rows[i].deny, rows[i].flags,
                                  rows[i].origin);
      linux_test_policy_set_net (p, rows[i].net_mode);
      g_test_message ("row %s", rows[i].name);
      g_assert_cmpint (linux_test_backend_compile (b, linux_test_policy_get (p)), ==, rows[i].status);
      g_assert_nonnull (strstr (b->th.error, rows[i].needle));
      g_assert_null (b->spec);
    }
  /* An unconfined policy is not this backend's. */
  {
    g_autoptr(LinuxTestPolicy) p = linux_test_policy_new (ws, 2, 2, 2, 2);
    g_autoptr(LinuxTestBackend) b = linux_test_backend_new ("linux-userns");
    SbxPolicyV1 copy = *linux_test_policy_get (p);

    copy.flags |= SBX_POLICY_UNCONFINED;
    g_assert_cmpint (linux_test_backend_compile (b, &copy), ==, SBX_STATUS_UNSUPPORTED);
  }
  etu_rm_rf (ws);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
  g_test_add_func ("/linux/mount/resolve/table", test_resolve_table);
  g_test_add_func ("/linux/mount/plan/default", test_plan_default);
  g_test_add_func ("/linux/mount/plan/host-read", test_plan_host_read);
  g_test_add_func ("/linux/mount/plan/host-read-explicit-run", test_plan_host_read_explicit_run);
  g_test_add_func ("/linux/mount/plan/own-root-explicit-run", test_plan_own_root_explicit_run);
  g_test_add_func ("/linux/mount/plan/runtime-symlink", test_plan_runtime_symlink);
  g_test_add_func ("/linux/mount/plan/absent-protected", test_plan_absent_protected);
  g_test_add_func ("/linux/mount/plan/masks-and-narrowing", test_plan_masks_and_narrowing);
  g_test_add_func ("/linux/compile/validation", test_compile_validation);
  return g_test_run ();
}
