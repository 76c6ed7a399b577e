/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The Landlock plan (plugins/linux/sbx-landlock.c).  Every denial is tried in
 * a forked child that applied the plan, and the same probe is run in a child
 * without it (positive control): a denial that also happens unconfined
 * proves nothing.  The cases that are a tree, rules and probes are rows of
 * one table (cases[], run by test_case(), which also checks that every
 * denial in a row has its control); cases that need more machinery (links,
 * symlinks, devices, network, scoping, grants' fds, mount roots, the
 * property sweep) are functions.
 *
 * Longer than the project's ~1,000-line guide on purpose: it is the one test
 * binary of one concept (the plan), and each function below is a
 * self-contained case with its own tree; splitting it would only spread the
 * probes and fixtures over several binaries.
 */
#include "linux-test-util.h"
#include "sbx-landlock-compat.h"
#include "sbx-landlock-build-private.h"
#include "sbx-policy-private.h"   /* sbx_fs_resolve(): the reference model */

#include <errno.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <linux/filter.h>
#include <sys/prctl.h>
#include <stddef.h>
#include <stdio.h>
#include <gio/gio.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <termios.h>
#include <unistd.h>

extern char **environ;

static int kernel_abi;

static gboolean
need_landlock (void)
{
  if (kernel_abi < 1)
    {
      g_test_skip ("Landlock is not available on this kernel");
      return FALSE;
    }
  return TRUE;
}

/* ------------------------------------------------------------------------- */
/* Probes (run in the child: plain libc, no GLib)                             */
/* ------------------------------------------------------------------------- */

typedef struct
{
  const char *a;
  const char *b;
} Two;

static int
probe_read (gconstpointer data)
{
  char c;
  int fd = open (data, O_RDONLY | O_CLOEXEC);

  if (fd < 0)
    return errno;
  if (read (fd, &c, 1) < 0)
    {
      int e = errno;

      close (fd);
      return e;
    }
  close (fd);
  return 0;
}

static int
probe_write (gconstpointer data)
{
  int fd = open (data, O_WRONLY | O_APPEND | O_CLOEXEC);

  if (fd < 0)
    return errno;
  if (write (fd, "x", 1) != 1)
    {
      int e = errno;

      close (fd);
      return e;
    }
  close (fd);
  return 0;
}

static int
probe_create (gconstpointer data)
{
  int fd = open (data, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);

  if (fd < 0)
    return errno;
  close (fd);
  return 0;
}

static int
probe_list (gconstpointer data)
{
  int fd = open (data, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

  if (fd < 0)
    return errno;
  close (fd);
  return 0;
}

static int
probe_truncate (gconstpointer data)
{
  return truncate (data, 0) < 0 ? errno : 0;
}

static int
probe_unlink (gconstpointer data)
{
  return unlink (data) < 0 ? errno : 0;
}

static int
probe_rename (gconstpointer data)
{
  const Two *t = data;

  return rename (t->a, t->b) < 0 ? errno : 0;
}

/* rename a -> b, then read b: the rename's errno, or the read's */
static int
probe_move_and_read (gconstpointer data)
{
  const Two *t = data;

  if (rename (t->a, t->b) < 0)
    return errno;
  return probe_read (t->b);
}

static int
probe_link (gconstpointer data)
{
  const Two *t = data;

  return link (t->a, t->b) < 0 ? errno : 0;
}

/* Runs argv (NULL-terminated); 0 when it ran and exited 0, the spawn errno,
 * or 900 + exit status. */
static int
probe_exec (gconstpointer data)
{
  char *const *argv = (char *const *) data;
  pid_t pid;
  int status;
  int r = posix_spawn (&pid, argv[0], NULL, NULL, argv, environ);

  if (r != 0)
    return r;
  if (waitpid (pid, &status, 0) != pid)
    return errno;
  if (WIFEXITED (status) && WEXITSTATUS (status) == 0)
    return 0;
  if (WIFEXITED (status) && WEXITSTATUS (status) == 127)
    return EACCES;   /* the shell could not run its command */
  return 900 + (WIFEXITED (status) ? WEXITSTATUS (status) : 99);
}

static int
probe_ioctl_tcgets (gconstpointer data)
{
  struct termios t;
  int fd = open (data, O_RDWR | O_CLOEXEC);
  int r;

  if (fd < 0)
    return errno;
  r = ioctl (fd, TCGETS, &t) < 0 ? errno : 0;
  close (fd);
  return r;
}

static int
probe_open_fifo (gconstpointer data)
{
  int fd = open (data, O_RDONLY | O_NONBLOCK | O_CLOEXEC);

  if (fd < 0)
    return errno;
  close (fd);
  return 0;
}

static int
probe_errno_neutral (gconstpointer data)
{
  return 0;
}

/* ------------------------------------------------------------------------- */
/* Fixture helpers                                                            */
/* ------------------------------------------------------------------------- */

static char *
mk (const char *root, const char *rel)
{
  char *p = path_join (root, rel);

  g_assert_no_errno (g_mkdir_with_parents (p, 0755));
  return p;
}

static char *
mkf (const char *root, const char *rel)
{
  char *p = path_join (root, rel);
  g_autofree char *dir = g_path_get_dirname (p);

  g_assert_no_errno (g_mkdir_with_parents (dir, 0755));
  write_file (p, "data\n");
  return p;
}

static void
copy_exe (const char *from, const char *to)
{
  g_autofree char *contents = NULL;
  gsize len;
  g_autoptr(GError) error = NULL;

  g_file_get_contents (from, &contents, &len, &error);
  g_assert_no_error (error);
  g_file_set_contents (to, contents, (gssize) len, &error);
  g_assert_no_error (error);
  g_assert_no_errno (chmod (to, 0755));
}

static SbxLandlockPlan *
plan_for (EtuPolicy *tp, int abi, int rung, gboolean net, TestReport *report)
{
  SbxLinuxReporter reporter;
  SbxLandlockOptions options = { abi > 0 ? abi : kernel_abi, rung, net, NULL };
  g_autoptr(GError) error = NULL;
  SbxLandlockPlan *plan;

  test_report_init (report, &reporter);
  plan = sbx_landlock_plan_new (etu_policy_get (tp), &options, &reporter, &error);
  g_assert_no_error (error);
  g_assert_nonnull (plan);
  test_report_dump (report);
  return plan;
}

/* The host root denied on every axis, as a Sandboxed profile with host
 * read/write denied compiles it. */
static void
add_host_deny (EtuPolicy *tp)
{
  etu_policy_add (tp, "/", 0, SBX_FS_ALL, 0, SBX_FS_ORIGIN_HOST);
}

/* ------------------------------------------------------------------------- */
/* Tests                                                                      */
/* ------------------------------------------------------------------------- */

static void
test_probe_abi (void)
{
  g_test_message ("kernel Landlock ABI %d", kernel_abi);
  if (!need_landlock ())
    return;
  g_assert_cmpint (kernel_abi, >=, 1);
  g_assert_cmpint (sbx_landlock_probe_abi (), ==, kernel_abi);
}

/* ------------------------------------------------------------------------- */
/* Table-driven cases                                                         */
/* ------------------------------------------------------------------------- */

/* One case: a tree under a scratch root, the policy's rules over it (paths
 * relative to the root; the host root is denied on every axis), the report
 * entries the plan must make, and probes.  IN probes run in a child that
 * applied the plan, OUT probes in one that did not (positive controls, run
 * after every IN probe: a mutating control cannot disturb an IN one).  Every
 * IN probe that expects a denial needs an OUT probe of the same kind and
 * path that succeeds: a denial that also happens unconfined proves nothing.
 * A probe with min_abi runs only on kernels with at least that Landlock ABI. */

typedef enum { IN, OUT } ProbeSide;
typedef enum { P_READ, P_WRITE, P_CREATE, P_LIST, P_TRUNCATE, P_UNLINK, P_RENAME, P_EXEC } ProbeKind;

typedef struct
{
  ProbeSide   side;
  ProbeKind   kind;
  const char *a;
  const char *b;        /* P_RENAME: the new name */
  int         expect;   /* 0 or an errno */
  int         min_abi;
} CaseProbe;

typedef struct
{
  const char *path;
  uint32_t    allow, deny, flags;
} CaseRule;

typedef struct
{
  const char *feature;
  uint32_t    status;
  const char *needle;   /* in the detail, or NULL */
} CaseReport;

typedef struct
{
  const char *name;
  int         rung;              /* SBX_LANDLOCK_RUNG_*; 0: rung 2 */
  gboolean    runtime;           /* the runtime closure (programs start) */
  const char *dirs[8];
  const char *files[8];          /* "data\n" each */
  const char *exes[4];           /* copies of /usr/bin/true */
  const char *late[4];           /* files created after the plan */
  CaseRule    rules[8];
  CaseReport  reports[6];
  CaseProbe   probes[24];
} LandlockCase;

#define ALL SBX_FS_ALL
#define RD  SBX_FS_READ
#define WR  SBX_FS_WRITE
#define EX  SBX_FS_EXEC
#define EXACT SBX_FS_RULE_EXACT

static const LandlockCase cases[] = {
  { "axis/read-write-exec", 0, TRUE,
    { "r", "w", "x", "none" }, { "r/f", "w/f", "x/f", "none/f" }, { "r/true", "x/true" }, { NULL },
    { { "r", RD, EX | WR, 0 }, { "w", WR, RD | EX, 0 }, { "x", RD | EX, WR, 0 } },
    { { "read-boundary", SBX_ABI_REPORT_ENFORCED, NULL } },
    { /* read axis only */
      { IN, P_READ, "r/f", NULL, 0 }, { IN, P_LIST, "r", NULL, 0 },
      { IN, P_WRITE, "r/f", NULL, EACCES }, { IN, P_CREATE, "r/new", NULL, EACCES },
      { IN, P_EXEC, "r/true", NULL, EACCES }, { IN, P_TRUNCATE, "x/f", NULL, EACCES, 3 },
      /* write axis only: no read, no listing */
      { IN, P_WRITE, "w/f", NULL, 0 }, { IN, P_READ, "w/f", NULL, EACCES },
      { IN, P_LIST, "w", NULL, EACCES }, { IN, P_CREATE, "w/new", NULL, 0 },
      /* read + exec */
      { IN, P_EXEC, "x/true", NULL, 0 }, { IN, P_READ, "x/f", NULL, 0 },
      { IN, P_WRITE, "x/f", NULL, EACCES },
      /* outside every rule */
      { IN, P_READ, "none/f", NULL, EACCES }, { IN, P_LIST, "none", NULL, EACCES },
      { OUT, P_WRITE, "r/f", NULL, 0 }, { OUT, P_CREATE, "r/new", NULL, 0 },
      { OUT, P_EXEC, "r/true", NULL, 0 }, { OUT, P_TRUNCATE, "x/f", NULL, 0, 3 },
      { OUT, P_READ, "w/f", NULL, 0 }, { OUT, P_LIST, "w", NULL, 0 }, { OUT, P_WRITE, "x/f", NULL, 0 },
      { OUT, P_READ, "none/f", NULL, 0 }, { OUT, P_LIST, "none", NULL, 0 }
    } },

  /* The same write-only tree under the mount view's Landlock layer (rung 1):
   * what a write-only grant relies on there. */
  { "axis/write-only-rung1", SBX_LANDLOCK_RUNG_USERNS, FALSE,
    { "w" }, { "w/f", "only" }, { NULL }, { NULL },
    { { "w", WR, RD | EX, 0 }, { "only", WR, RD | EX, EXACT } },
    { { NULL } },
    { { IN, P_WRITE, "w/f", NULL, 0 }, { IN, P_CREATE, "w/new", NULL, 0 },
      { IN, P_READ, "w/f", NULL, EACCES }, { IN, P_LIST, "w", NULL, EACCES },
      { IN, P_WRITE, "only", NULL, 0 }, { IN, P_READ, "only", NULL, EACCES },
      { OUT, P_READ, "w/f", NULL, 0 }, { OUT, P_LIST, "w", NULL, 0 }, { OUT, P_READ, "only", NULL, 0 } } },

  { "exact-vs-tree", 0, FALSE,
    { "d", "e" }, { "d/f1", "d/f2", "e/sub/f" }, { NULL }, { NULL },
    { { "d/f1", RD, 0, EXACT }, { "d", RD, 0, EXACT }, { "e", RD, 0, 0 } },
    /* an exact directory allow cannot be a Landlock rule without widening */
    { { "allow-paths", SBX_ABI_REPORT_NARROWED, "exact rule on a directory" } },
    { { IN, P_READ, "d/f1", NULL, 0 }, { IN, P_READ, "d/f2", NULL, EACCES },
      { IN, P_LIST, "d", NULL, EACCES }, { IN, P_READ, "e/sub/f", NULL, 0 },
      { OUT, P_READ, "d/f2", NULL, 0 }, { OUT, P_LIST, "d", NULL, 0 } } },

  { "carve/nested-deny-snapshot", 0, FALSE,
    { "ws/sub" }, { "ws/secret", "ws/top" }, { NULL }, { "ws/late" },
    { { "ws", ALL, 0, 0 }, { "ws/secret", 0, ALL, EXACT } },
    { { "carveout", SBX_ABI_REPORT_NARROWED, NULL },
      { "filesystem-axis-snapshot", SBX_ABI_REPORT_NARROWED, "read" },
      { "filesystem-axis-snapshot", SBX_ABI_REPORT_NARROWED, "write" },
      { "fixed-path-deny", SBX_ABI_REPORT_ENFORCED, NULL } },
    { /* siblings keep their authority */
      { IN, P_READ, "ws/top", NULL, 0 }, { IN, P_WRITE, "ws/top", NULL, 0 },
      { IN, P_CREATE, "ws/sub/new", NULL, 0 },
      /* the denied file */
      { IN, P_READ, "ws/secret", NULL, EACCES }, { IN, P_WRITE, "ws/secret", NULL, EACCES },
      { IN, P_UNLINK, "ws/secret", NULL, EACCES }, { IN, P_RENAME, "ws/top", "ws/secret", EACCES },
      /* snapshot semantics: the carved directory itself gets nothing new */
      { IN, P_CREATE, "ws/new", NULL, EACCES }, { IN, P_READ, "ws/late", NULL, EACCES },
      { OUT, P_READ, "ws/secret", NULL, 0 }, { OUT, P_WRITE, "ws/secret", NULL, 0 },
      { OUT, P_READ, "ws/late", NULL, 0 }, { OUT, P_CREATE, "ws/new", NULL, 0 },
      { OUT, P_RENAME, "ws/top", "ws/secret", 0 }, { OUT, P_UNLINK, "ws/secret", NULL, 0 }
    } },

  { "carve/deny-wins-tie", 0, FALSE,
    { "t" }, { "t/f", "g" }, { NULL }, { NULL },
    { { "t", RD | WR, 0, 0 }, { "t", 0, RD, 0 }, { "g", RD, 0, EXACT }, { "g", 0, RD, EXACT } },
    { { NULL } },
    { { IN, P_READ, "t/f", NULL, EACCES }, { IN, P_READ, "g", NULL, EACCES },
      /* the tie is per axis: write at t is still allowed */
      { IN, P_WRITE, "t/f", NULL, 0 },
      { OUT, P_READ, "t/f", NULL, 0 }, { OUT, P_READ, "g", NULL, 0 } } },

  { "carve/restored-child", 0, FALSE,
    { NULL }, { "a/h", "a/b/g", "a/b/c/f" }, { NULL }, { NULL },
    { { "a", RD, 0, 0 }, { "a/b", 0, ALL, 0 }, { "a/b/c", RD, 0, 0 } },
    { { NULL } },
    { { IN, P_READ, "a/h", NULL, 0 }, { IN, P_READ, "a/b/g", NULL, EACCES },
      { IN, P_LIST, "a/b", NULL, EACCES }, { IN, P_READ, "a/b/c/f", NULL, 0 },
      { OUT, P_READ, "a/b/g", NULL, 0 }, { OUT, P_LIST, "a/b", NULL, 0 } } },
};

#undef ALL
#undef RD
#undef WR
#undef EX
#undef EXACT

static const char *const probe_names[] = { "read", "write", "create", "list", "truncate", "unlink",
                                           "rename", "exec" };

static int
run_case_probe (const Confinement *c,
                const char        *root,
                const CaseProbe   *p)
{
  g_autofree char *a = path_join (root, p->a);
  g_autofree char *b = p->b != NULL ? path_join (root, p->b) : NULL;
  Two two = { a, b };
  char *argv[2] = { a, NULL };

  switch (p->kind)
    {
    case P_READ:
      return run_probe (c, probe_read, a);
    case P_WRITE:
      return run_probe (c, probe_write, a);
    case P_CREATE:
      return run_probe (c, probe_create, a);
    case P_LIST:
      return run_probe (c, probe_list, a);
    case P_TRUNCATE:
      return run_probe (c, probe_truncate, a);
    case P_UNLINK:
      return run_probe (c, probe_unlink, a);
    case P_RENAME:
      return run_probe (c, probe_rename, &two);
    case P_EXEC:
      return run_probe (c, probe_exec, argv);
    default:
      g_assert_not_reached ();
    }
}

static void
test_case (gconstpointer data)
{
  const LandlockCase *tc = data;
  g_autofree char *root = NULL;
  g_autoptr(EtuPolicy) tp = NULL;
  g_autoptr(SbxLandlockPlan) plan = NULL;
  TestReport report;
  Confinement c = { 0 };

  if (!need_landlock ())
    return;
  /* The table is its own check: every IN denial has its OUT control. */
  for (guint i = 0; i < G_N_ELEMENTS (tc->probes) && tc->probes[i].a != NULL; i++)
    {
      const CaseProbe *p = &tc->probes[i];
      gboolean controlled = FALSE;

      if (p->side != IN || p->expect == 0)
        continue;
      for (guint k = 0; k < G_N_ELEMENTS (tc->probes) && tc->probes[k].a != NULL; k++)
        controlled = controlled || (tc->probes[k].side == OUT && tc->probes[k].kind == p->kind
                                    && strcmp (tc->probes[k].a, p->a) == 0 && tc->probes[k].expect == 0);
      if (!controlled)
        g_error ("case %s: IN %s %s has no positive control", tc->name, probe_names[p->kind], p->a);
    }

  root = scratch_new ();
  for (guint i = 0; i < G_N_ELEMENTS (tc->dirs) && tc->dirs[i] != NULL; i++)
    g_free (mk (root, tc->dirs[i]));
  for (guint i = 0; i < G_N_ELEMENTS (tc->files) && tc->files[i] != NULL; i++)
    g_free (mkf (root, tc->files[i]));
  for (guint i = 0; i < G_N_ELEMENTS (tc->exes) && tc->exes[i] != NULL; i++)
    {
      g_autofree char *to = path_join (root, tc->exes[i]);

      copy_exe ("/usr/bin/true", to);
    }
  tp = etu_policy_new (root);
  add_host_deny (tp);
  if (tc->runtime)
    etu_policy_add_runtime (tp);
  for (guint i = 0; i < G_N_ELEMENTS (tc->rules) && tc->rules[i].path != NULL; i++)
    {
      g_autofree char *rel = g_strconcat ("~/", tc->rules[i].path, NULL);

      etu_policy_add (tp, rel, tc->rules[i].allow, tc->rules[i].deny, tc->rules[i].flags,
                      SBX_FS_ORIGIN_ROOT);
    }
  plan = plan_for (tp, 0, tc->rung != 0 ? tc->rung : SBX_LANDLOCK_RUNG_LANDLOCK, FALSE, &report);
  c.plan = plan;
  for (guint i = 0; i < G_N_ELEMENTS (tc->late) && tc->late[i] != NULL; i++)
    g_free (mkf (root, tc->late[i]));

  for (guint i = 0; i < G_N_ELEMENTS (tc->reports) && tc->reports[i].feature != NULL; i++)
    {
      const char *detail = NULL;

      g_assert_cmpuint (test_report_status (&report, tc->reports[i].feature, &detail), ==,
                        tc->reports[i].status);
      if (tc->reports[i].needle != NULL)
        g_assert_nonnull (strstr (detail, tc->reports[i].needle));
    }
  for (int side = IN; side <= OUT; side++)
    for (guint i = 0; i < G_N_ELEMENTS (tc->probes) && tc->probes[i].a != NULL; i++)
      {
        const CaseProbe *p = &tc->probes[i];

        if ((int) p->side != side || kernel_abi < p->min_abi)
          continue;
        g_test_message ("%s %s %s%s%s", side == IN ? "in" : "out", probe_names[p->kind], p->a,
                        p->b != NULL ? " -> " : "", p->b != NULL ? p->b : "");
        assert_probe (run_case_probe (side == IN ? &c : NULL, root, p), p->expect);
      }

  test_report_clear (&report);
  g_clear_pointer (&plan, sbx_landlock_plan_free);
  scratch_free (g_steal_pointer (&root));
}

/* A writable tree with a read-denied subtree that has a restored readable
 * child: write must not let names be moved across the boundary. */
static void
test_write_barrier (void)
{
  g_autofree char *root = scratch_new ();
  g_autofree char *other = mkf (root, "ws/other"), *secret = mkf (root, "ws/priv/secret");
  g_autofree char *pubf = mkf (root, "ws/priv/pub/x");
  g_autofree char *priv = path_join (root, "ws/priv"), *priv2 = path_join (root, "ws/priv2");
  g_autofree char *moved = path_join (root, "ws/priv/x"), *alias = path_join (root, "ws/priv/pub/s");
  g_autofree char *newf = path_join (root, "ws/newf");
  g_autoptr(EtuPolicy) tp = etu_policy_new (root);
  g_autoptr(SbxLandlockPlan) plan = NULL;
  TestReport report;
  Confinement c = { 0 };
  Two out = { pubf, moved }, away = { priv, priv2 }, hard = { secret, alias };

  if (!need_landlock ())
    {
      scratch_free (g_steal_pointer (&root));
      return;
    }
  add_host_deny (tp);
  etu_policy_add (tp, "~/ws", SBX_FS_ALL, 0, 0, SBX_FS_ORIGIN_WORKSPACE);
  etu_policy_add (tp, "~/ws/priv", SBX_FS_WRITE, SBX_FS_READ | SBX_FS_EXEC, 0, SBX_FS_ORIGIN_ROOT);
  etu_policy_add (tp, "~/ws/priv/pub", SBX_FS_READ | SBX_FS_WRITE, 0, 0, SBX_FS_ORIGIN_ROOT);
  plan = plan_for (tp, 0, SBX_LANDLOCK_RUNG_LANDLOCK, FALSE, &report);
  c.plan = plan;

  assert_probe (run_probe (&c, probe_write, other), 0);
  assert_probe (run_probe (&c, probe_read, secret), EACCES);
  assert_probe (run_probe (&c, probe_read, pubf), 0);
  /* the readable file moved to a read-denied name is not readable there */
  g_assert_cmpint (run_probe (&c, probe_move_and_read, &out), !=, 0);
  if (g_file_test (moved, G_FILE_TEST_EXISTS))
    g_assert_no_errno (rename (moved, pubf));
  g_assert_cmpint (run_probe (&c, probe_rename, &away), !=, 0);
  g_assert_cmpint (run_probe (&c, probe_link, &hard), !=, 0);
  g_assert_false (g_file_test (alias, G_FILE_TEST_EXISTS));
  /* the carved parent gets no new entries */
  assert_probe (run_probe (&c, probe_create, newf), EACCES);
  /* the restored child keeps its own write */
  assert_probe (run_probe (&c, probe_write, pubf), 0);
  /* controls */
  assert_probe (run_probe (NULL, probe_link, &hard), 0);
  assert_probe (run_probe (NULL, probe_move_and_read, &out), 0);
  assert_probe (run_probe (NULL, probe_rename, &away), 0);

  test_report_clear (&report);
  g_clear_pointer (&plan, sbx_landlock_plan_free);
  scratch_free (g_steal_pointer (&root));
}

static void
test_rename_inside_tree (void)
{
  g_autofree char *root = scratch_new ();
  g_autofree char *f = mkf (root, "ws/d1/f"), *d2 = mk (root, "ws/d2");
  g_autofree char *f2 = path_join (root, "ws/d2/f"), *g = path_join (root, "ws/d1/g");
  g_autofree char *same = path_join (root, "ws/d2/f.renamed");
  g_autoptr(EtuPolicy) tp = etu_policy_new (root);
  g_autoptr(SbxLandlockPlan) plan = NULL, plan1 = NULL;
  TestReport report, report1;
  Confinement c = { 0 }, c1 = { 0 };
  Two mv = { f, f2 }, ln = { f2, g }, mv_same = { f2, same };

  if (!need_landlock ())
    {
      scratch_free (g_steal_pointer (&root));
      return;
    }
  (void) d2;
  add_host_deny (tp);
  etu_policy_add (tp, "~/ws", SBX_FS_ALL, 0, 0, SBX_FS_ORIGIN_WORKSPACE);
  plan = plan_for (tp, 0, SBX_LANDLOCK_RUNG_LANDLOCK, FALSE, &report);
  plan1 = plan_for (tp, 1, SBX_LANDLOCK_RUNG_LANDLOCK, FALSE, &report1);
  c.plan = plan;
  c1.plan = plan1;

  if (kernel_abi >= 2)
    {
      /* REFER granted on the writable tree */
      assert_probe (run_probe (&c, probe_rename, &mv), 0);
      assert_probe (run_probe (&c, probe_link, &ln), 0);
      g_assert_true (g_file_test (g, G_FILE_TEST_EXISTS));
      g_assert_no_errno (unlink (g));
      g_assert_no_errno (rename (f2, f));
    }
  /* ABI 1 has no REFER: any reparenting fails with EXDEV, renames within one
   * directory still work */
  assert_probe (run_probe (&c1, probe_rename, &mv), EXDEV);
  assert_probe (run_probe (NULL, probe_rename, &mv), 0);
  assert_probe (run_probe (&c1, probe_rename, &mv_same), 0);
  g_assert_cmpuint (test_report_status (&report1, "landlock-abi", NULL), ==, SBX_ABI_REPORT_ENFORCED);

  test_report_clear (&report);
  test_report_clear (&report1);
  g_clear_pointer (&plan, sbx_landlock_plan_free);
  g_clear_pointer (&plan1, sbx_landlock_plan_free);
  scratch_free (g_steal_pointer (&root));
}

static void
test_rename_out_of_tree (void)
{
  g_autofree char *root = scratch_new ();
  g_autofree char *wf = mkf (root, "ws/f"), *rg = mkf (root, "ro/g"), *ds = mkf (root, "den/s");
  g_autofree char *wsec = mkf (root, "ws2/secret"), *sub = mk (root, "ws2/sub");
  g_autofree char *to_ro = path_join (root, "ro/f"), *ln_ro = path_join (root, "ro/l");
  g_autofree char *to_ws = path_join (root, "ws/g"), *den_ws = path_join (root, "ws/s");
  g_autofree char *copy = path_join (root, "ws2/sub/copy");
  g_autoptr(EtuPolicy) tp = etu_policy_new (root);
  g_autoptr(SbxLandlockPlan) plan = NULL;
  TestReport report;
  Confinement c = { 0 };
  Two a = { wf, to_ro }, b = { wf, ln_ro }, d = { rg, to_ws }, e = { ds, den_ws }, h = { wsec, copy };

  if (!need_landlock ())
    {
      scratch_free (g_steal_pointer (&root));
      return;
    }
  (void) sub;
  add_host_deny (tp);
  etu_policy_add (tp, "~/ws", SBX_FS_ALL, 0, 0, SBX_FS_ORIGIN_WORKSPACE);
  etu_policy_add (tp, "~/ws2", SBX_FS_ALL, 0, 0, SBX_FS_ORIGIN_ROOT);
  etu_policy_add (tp, "~/ws2/secret", 0, SBX_FS_ALL, SBX_FS_RULE_EXACT, SBX_FS_ORIGIN_ROOT);
  etu_policy_add (tp, "~/ro", SBX_FS_READ, SBX_FS_WRITE, 0, SBX_FS_ORIGIN_ROOT);
  plan = plan_for (tp, 0, SBX_LANDLOCK_RUNG_LANDLOCK, FALSE, &report);
  c.plan = plan;

  /* writable -> read-only: refused, source stays */
  g_assert_cmpint (run_probe (&c, probe_rename, &a), !=, 0);
  g_assert_cmpint (run_probe (&c, probe_link, &b), !=, 0);
  /* read-only -> writable: refused (no REMOVE on the source) */
  g_assert_cmpint (run_probe (&c, probe_rename, &d), !=, 0);
  /* a file of a denied area hard-linked into a writable directory */
  g_assert_cmpint (run_probe (&c, probe_link, &e), !=, 0);
  /* a denied file of a carved tree hard-linked next to writable files */
  g_assert_cmpint (run_probe (&c, probe_link, &h), !=, 0);
  g_assert_true (g_file_test (wf, G_FILE_TEST_EXISTS));
  g_assert_true (g_file_test (rg, G_FILE_TEST_EXISTS));
  g_assert_false (g_file_test (to_ro, G_FILE_TEST_EXISTS));
  g_assert_false (g_file_test (ln_ro, G_FILE_TEST_EXISTS));
  g_assert_false (g_file_test (den_ws, G_FILE_TEST_EXISTS));
  g_assert_false (g_file_test (copy, G_FILE_TEST_EXISTS));

  /* positive controls */
  assert_probe (run_probe (NULL, probe_link, &e), 0);
  assert_probe (run_probe (NULL, probe_link, &h), 0);
  assert_probe (run_probe (NULL, probe_link, &b), 0);
  assert_probe (run_probe (NULL, probe_rename, &a), 0);
  assert_probe (run_probe (NULL, probe_rename, &d), 0);

  test_report_clear (&report);
  g_clear_pointer (&plan, sbx_landlock_plan_free);
  scratch_free (g_steal_pointer (&root));
}

static void
test_multi_link_dropped (void)
{
  g_autofree char *root = scratch_new ();
  g_autofree char *f = mkf (root, "m/f"), *f2 = path_join (root, "other/f2");
  g_autofree char *g = mkf (root, "m/g"), *g2 = path_join (root, "other/g2");
  g_autofree char *plain = mkf (root, "c/plain"), *hl = mkf (root, "c/hl"), *x = mkf (root, "c/x");
  g_autofree char *hl2 = path_join (root, "other/hl2");
  g_autofree char *fifo = NULL;
  g_autofree char *o = mk (root, "other");
  g_autoptr(EtuPolicy) tp = etu_policy_new (root);
  g_autoptr(SbxLandlockPlan) plan = NULL;
  TestReport report;
  const char *detail = NULL;
  Confinement c = { 0 };

  if (!need_landlock ())
    {
      scratch_free (g_steal_pointer (&root));
      return;
    }
  (void) o;
  (void) x;
  fifo = path_join (root, "c/fifo");
  g_assert_no_errno (mkfifo (fifo, 0600));
  g_assert_no_errno (link (f, f2));
  g_assert_no_errno (link (hl, hl2));
  add_host_deny (tp);
  etu_policy_add (tp, "~/m/f", SBX_FS_READ, 0, SBX_FS_RULE_EXACT, SBX_FS_ORIGIN_ROOT);
  etu_policy_add (tp, "~/m/g", SBX_FS_READ, 0, SBX_FS_RULE_EXACT, SBX_FS_ORIGIN_ROOT);
  etu_policy_add (tp, "~/c", SBX_FS_READ, 0, 0, SBX_FS_ORIGIN_ROOT);
  etu_policy_add (tp, "~/c/x", 0, SBX_FS_ALL, SBX_FS_RULE_EXACT, SBX_FS_ORIGIN_ROOT);
  plan = plan_for (tp, 0, SBX_LANDLOCK_RUNG_LANDLOCK, FALSE, &report);
  c.plan = plan;

  g_assert_cmpuint (test_report_status (&report, "allow-paths", &detail), ==, SBX_ABI_REPORT_NARROWED);
  g_assert_nonnull (strstr (detail, "several hard links"));
  g_assert_nonnull (strstr (detail, "FIFO"));
  /* a FIFO of a carved tree gets no rule either */
  assert_probe (run_probe (&c, probe_open_fifo, fifo), EACCES);
  assert_probe (run_probe (NULL, probe_open_fifo, fifo), 0);
  /* multi-link files: no rule, neither exact nor carved */
  assert_probe (run_probe (&c, probe_read, f), EACCES);
  assert_probe (run_probe (&c, probe_read, hl), EACCES);
  assert_probe (run_probe (&c, probe_read, plain), 0);
  assert_probe (run_probe (NULL, probe_read, f), 0);
  assert_probe (run_probe (NULL, probe_read, hl), 0);
  /* single-link at the snapshot, linked before the spawn: the child skips
   * the rule */
  assert_probe (run_probe (&c, probe_read, g), 0);
  g_assert_no_errno (link (g, g2));
  assert_probe (run_probe (&c, probe_read, g), EACCES);
  assert_probe (run_probe (&c, probe_read, g2), EACCES);
  assert_probe (run_probe (NULL, probe_read, g), 0);

  test_report_clear (&report);
  g_clear_pointer (&plan, sbx_landlock_plan_free);
  scratch_free (g_steal_pointer (&root));
}

static void
test_symlinks_do_not_widen (void)
{
  g_autofree char *root = scratch_new ();
  g_autofree char *outside = mkf (root, "outside/f"), *inside = mkf (root, "inside/f");
  g_autofree char *ws = mk (root, "ws"), *wsln = path_join (root, "ws/ln");
  g_autofree char *lnk = path_join (root, "lnk"), *lnkf = path_join (root, "lnk/f");
  g_autofree char *lnk2 = path_join (root, "lnk2"), *lnk2f = path_join (root, "lnk2/f");
  g_autofree char *outdir = path_join (root, "outside"), *indir = path_join (root, "inside");
  g_autoptr(EtuPolicy) tp = etu_policy_new (root);
  g_autoptr(SbxLandlockPlan) plan = NULL;
  TestReport report;
  const char *detail = NULL;
  Confinement c = { 0 };

  if (!need_landlock ())
    {
      scratch_free (g_steal_pointer (&root));
      return;
    }
  (void) ws;
  (void) inside;
  g_assert_no_errno (symlink (outside, wsln));
  g_assert_no_errno (symlink (outdir, lnk));
  g_assert_no_errno (symlink (indir, lnk2));
  add_host_deny (tp);
  etu_policy_add (tp, "~/ws", SBX_FS_READ, 0, 0, SBX_FS_ORIGIN_WORKSPACE);
  etu_policy_add (tp, "~/inside", SBX_FS_READ, 0, 0, SBX_FS_ORIGIN_ROOT);
  /* policy paths that are symlinks: one into the policy, one out of it */
  etu_policy_add (tp, "~/lnk", SBX_FS_READ, 0, 0, SBX_FS_ORIGIN_ROOT);
  etu_policy_add (tp, "~/lnk2", SBX_FS_READ, 0, 0, SBX_FS_ORIGIN_ROOT);
  plan = plan_for (tp, 0, SBX_LANDLOCK_RUNG_LANDLOCK, FALSE, &report);
  c.plan = plan;

  assert_probe (run_probe (&c, probe_read, wsln), EACCES);
  assert_probe (run_probe (&c, probe_read, lnkf), EACCES);
  assert_probe (run_probe (&c, probe_read, lnk2f), 0);
  assert_probe (run_probe (NULL, probe_read, wsln), 0);
  assert_probe (run_probe (NULL, probe_read, lnkf), 0);
  g_assert_cmpuint (test_report_status (&report, "allow-paths", &detail), ==, SBX_ABI_REPORT_NARROWED);
  g_assert_nonnull (strstr (detail, "lnk -> "));
  g_assert_null (strstr (detail, "lnk2 -> "));

  test_report_clear (&report);
  g_clear_pointer (&plan, sbx_landlock_plan_free);
  scratch_free (g_steal_pointer (&root));
}

static void
test_dev_null (void)
{
  g_autofree char *root = scratch_new ();
  g_autoptr(EtuPolicy) tp = etu_policy_new (root);
  g_autoptr(EtuPolicy) tp2 = etu_policy_new (root);
  g_autoptr(SbxLandlockPlan) plan = NULL, plan2 = NULL;
  TestReport report, report2;
  Confinement c = { 0 }, c2 = { 0 }, c3 = { 0 };
  SbxLandlockExtraRule extra;
  g_autofree char *fake = NULL;
  const char *detail = NULL;
  int devnull;

  if (!need_landlock ())
    {
      scratch_free (g_steal_pointer (&root));
      return;
    }
  fake = mkf (root, "not-a-device");
  add_host_deny (tp);
  etu_policy_add (tp, "/dev/null", SBX_FS_READ | SBX_FS_WRITE, 0, SBX_FS_RULE_EXACT, SBX_FS_ORIGIN_DEVICE);
  /* a device entry must be a character device */
  etu_policy_add (tp, "~/not-a-device", SBX_FS_READ | SBX_FS_WRITE, 0, SBX_FS_RULE_EXACT, SBX_FS_ORIGIN_DEVICE);
  plan = plan_for (tp, 0, SBX_LANDLOCK_RUNG_LANDLOCK, FALSE, &report);
  g_assert_cmpuint (test_report_status (&report, "allow-paths", &detail), ==, SBX_ABI_REPORT_NARROWED);
  g_assert_nonnull (strstr (detail, "not a character device"));
  add_host_deny (tp2);
  plan2 = plan_for (tp2, 0, SBX_LANDLOCK_RUNG_LANDLOCK, FALSE, &report2);
  c.plan = plan;
  c2.plan = plan2;

  assert_probe (run_probe (&c, probe_write, "/dev/null"), 0);
  assert_probe (run_probe (&c, probe_read, "/dev/null"), 0);
  assert_probe (run_probe (&c2, probe_write, "/dev/null"), EACCES);
  assert_probe (run_probe (NULL, probe_write, "/dev/null"), 0);
  assert_probe (run_probe (&c, probe_read, fake), EACCES);
  assert_probe (run_probe (NULL, probe_read, fake), 0);
  if (kernel_abi >= 5)
    {
      /* IOCTL_DEV comes with the device rule: the ioctl reaches the driver
       * (ENOTTY), while a rule without it is refused by Landlock */
      assert_probe (run_probe (&c, probe_ioctl_tcgets, "/dev/null"), ENOTTY);
      devnull = open ("/dev/null", O_PATH | O_CLOEXEC);
      g_assert_cmpint (devnull, >=, 0);
      extra.fd = devnull;
      extra.access = LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_WRITE_FILE;
      c3.plan = plan2;
      c3.extra = &extra;
      c3.n_extra = 1;
      assert_probe (run_probe (&c3, probe_ioctl_tcgets, "/dev/null"), EACCES);
      extra.access = sbx_landlock_plan_access_rw_file (plan2);
      assert_probe (run_probe (&c3, probe_ioctl_tcgets, "/dev/null"), ENOTTY);
      close (devnull);
    }

  test_report_clear (&report);
  test_report_clear (&report2);
  g_clear_pointer (&plan, sbx_landlock_plan_free);
  g_clear_pointer (&plan2, sbx_landlock_plan_free);
  scratch_free (g_steal_pointer (&root));
}

static void
test_usr_merge (void)
{
  g_autofree char *root = scratch_new ();
  g_autoptr(EtuPolicy) tp = etu_policy_new (root);
  g_autoptr(EtuPolicy) tp2 = etu_policy_new (root);
  g_autoptr(SbxLandlockPlan) plan = NULL, plan2 = NULL;
  TestReport report, report2;
  const char *detail = NULL;
  Confinement c = { 0 }, c2 = { 0 };
  char *sh[] = { (char *) "/bin/sh", (char *) "-c", (char *) "exit 0", NULL };
  char *ld[] = { (char *) "/lib64/ld-linux-x86-64.so.2", (char *) "/bin/true", NULL };
  struct stat st;

  if (!need_landlock ())
    {
      scratch_free (g_steal_pointer (&root));
      return;
    }
  add_host_deny (tp);
  etu_policy_add_runtime (tp);
  plan = plan_for (tp, 0, SBX_LANDLOCK_RUNG_LANDLOCK, FALSE, &report);
  c.plan = plan;
  if (lstat ("/bin", &st) == 0 && S_ISLNK (st.st_mode))
    g_test_message ("/bin is a symbolic link on this host (usr-merge)");

  assert_probe (run_probe (&c, probe_exec, sh), 0);
  if (g_file_test (ld[0], G_FILE_TEST_EXISTS))
    assert_probe (run_probe (&c, probe_exec, ld), 0);
  /* the runtime's symlinks resolve into the policy: no gap */
  g_assert_cmpuint (test_report_status (&report, "allow-paths", &detail), !=, 0);
  g_assert_null (strstr (detail != NULL ? detail : "", "/bin -> "));
  g_assert_null (strstr (detail != NULL ? detail : "", "/bin ("));
  g_assert_null (strstr (detail != NULL ? detail : "", "/lib64 ("));

  /* /bin alone: its target /usr/bin is outside the policy, so /bin/sh gets
   * no rule and the gap is reported */
  if (lstat ("/bin", &st) == 0 && S_ISLNK (st.st_mode))
    {
      add_host_deny (tp2);
      etu_policy_add (tp2, "/bin", SBX_FS_READ | SBX_FS_EXEC, 0, 0, SBX_FS_ORIGIN_RUNTIME);
      etu_policy_add (tp2, "/usr/lib", SBX_FS_READ | SBX_FS_EXEC, 0, 0, SBX_FS_ORIGIN_RUNTIME);
      etu_policy_add (tp2, "/lib64", SBX_FS_READ | SBX_FS_EXEC, 0, SBX_FS_RULE_OPTIONAL, SBX_FS_ORIGIN_RUNTIME);
      etu_policy_add (tp2, "/usr/lib64", SBX_FS_READ | SBX_FS_EXEC, 0, SBX_FS_RULE_OPTIONAL, SBX_FS_ORIGIN_RUNTIME);
      plan2 = plan_for (tp2, 0, SBX_LANDLOCK_RUNG_LANDLOCK, FALSE, &report2);
      c2.plan = plan2;
      g_assert_cmpint (run_probe (&c2, probe_exec, sh), !=, 0);
      g_assert_cmpuint (test_report_status (&report2, "allow-paths", &detail), ==, SBX_ABI_REPORT_NARROWED);
      g_assert_nonnull (strstr (detail, "/bin -> /usr/bin"));
      test_report_clear (&report2);
    }
  assert_probe (run_probe (NULL, probe_exec, sh), 0);

  test_report_clear (&report);
  g_clear_pointer (&plan, sbx_landlock_plan_free);
  g_clear_pointer (&plan2, sbx_landlock_plan_free);
  scratch_free (g_steal_pointer (&root));
}

/* ---- network ---- */

static int
listen_tcp (uint16_t *port)
{
  struct sockaddr_in sin = { 0 };
  socklen_t len = sizeof sin;
  int fd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

  g_assert_cmpint (fd, >=, 0);
  sin.sin_family = AF_INET;
  sin.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
  g_assert_no_errno (bind (fd, (struct sockaddr *) &sin, sizeof sin));
  g_assert_no_errno (listen (fd, 16));
  g_assert_no_errno (getsockname (fd, (struct sockaddr *) &sin, &len));
  *port = ntohs (sin.sin_port);
  return fd;
}

static int
probe_connect_tcp (gconstpointer data)
{
  struct sockaddr_in sin = { 0 };
  int fd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int r;

  if (fd < 0)
    return errno;
  sin.sin_family = AF_INET;
  sin.sin_port = htons ((uint16_t) GPOINTER_TO_UINT (data));
  sin.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
  r = connect (fd, (struct sockaddr *) &sin, sizeof sin) < 0 ? errno : 0;
  close (fd);
  return r;
}

static int
probe_bind_tcp (gconstpointer data)
{
  struct sockaddr_in sin = { 0 };
  int fd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int r;

  if (fd < 0)
    return errno;
  sin.sin_family = AF_INET;
  sin.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
  r = bind (fd, (struct sockaddr *) &sin, sizeof sin) < 0 ? errno : 0;
  close (fd);
  return r;
}

static void
test_net_tcp (void)
{
  g_autofree char *root = scratch_new ();
  g_autoptr(EtuPolicy) tp = etu_policy_new (root);
  g_autoptr(SbxLandlockPlan) deny = NULL, ports = NULL;
  TestReport report, report2;
  const char *detail = NULL;
  Confinement cd = { 0 }, cp = { 0 };
  uint16_t p, q;
  int lp, lq;

  if (!need_landlock ())
    {
      scratch_free (g_steal_pointer (&root));
      return;
    }
  if (kernel_abi < 4)
    {
      g_test_skip ("Landlock ABI < 4: no TCP rules on this kernel");
      scratch_free (g_steal_pointer (&root));
      return;
    }
  lp = listen_tcp (&p);
  lq = listen_tcp (&q);
  add_host_deny (tp);
  tp->net.mode = SBX_NET_MODE_DENY;
  deny = plan_for (tp, 0, SBX_LANDLOCK_RUNG_LANDLOCK, TRUE, &report);
  tp->net.mode = SBX_NET_MODE_PORTS;
  tp->ports[0] = p;
  tp->net.n_tcp_ports = 1;
  ports = plan_for (tp, 0, SBX_LANDLOCK_RUNG_LANDLOCK, TRUE, &report2);
  cd.plan = deny;
  cp.plan = ports;

  g_assert_cmpuint (sbx_landlock_plan_enforces (deny) & SBX_LANDLOCK_ENFORCES_NET, !=, 0);
  g_assert_cmpuint (test_report_status (&report, "network-boundary", NULL), ==, SBX_ABI_REPORT_ENFORCED);
  g_assert_cmpuint (test_report_status (&report2, "network-boundary", &detail), ==, SBX_ABI_REPORT_ENFORCED);
  g_assert_nonnull (strstr (detail, "port(s)"));

  assert_probe (run_probe (&cd, probe_connect_tcp, GUINT_TO_POINTER (p)), EACCES);
  assert_probe (run_probe (&cd, probe_bind_tcp, NULL), EACCES);
  assert_probe (run_probe (&cp, probe_connect_tcp, GUINT_TO_POINTER (p)), 0);
  assert_probe (run_probe (&cp, probe_connect_tcp, GUINT_TO_POINTER (q)), EACCES);
  assert_probe (run_probe (&cp, probe_bind_tcp, NULL), EACCES);
  assert_probe (run_probe (NULL, probe_connect_tcp, GUINT_TO_POINTER (p)), 0);
  assert_probe (run_probe (NULL, probe_connect_tcp, GUINT_TO_POINTER (q)), 0);
  assert_probe (run_probe (NULL, probe_bind_tcp, NULL), 0);

  /* DNS (a broad grant's): port 53 too.  Nothing need listen there: an
   * allowed connect is refused by the peer (or accepted), a denied one by
   * Landlock with EACCES. */
  {
    g_autoptr(SbxLandlockPlan) dns = NULL;
    TestReport report3;
    Confinement cn = { 0 };
    int r;

    tp->net.flags |= SBX_NET_FLAG_DNS;
    dns = plan_for (tp, 0, SBX_LANDLOCK_RUNG_LANDLOCK, TRUE, &report3);
    cn.plan = dns;
    g_assert_cmpuint (test_report_status (&report3, "network-boundary", &detail), ==, SBX_ABI_REPORT_ENFORCED);
    g_assert_nonnull (strstr (detail, ",53"));
    r = run_probe (&cn, probe_connect_tcp, GUINT_TO_POINTER (53));
    g_assert_true (r == 0 || r == ECONNREFUSED);
    assert_probe (run_probe (&cn, probe_connect_tcp, GUINT_TO_POINTER (p)), 0);
    assert_probe (run_probe (&cn, probe_connect_tcp, GUINT_TO_POINTER (q)), EACCES);
    assert_probe (run_probe (&cp, probe_connect_tcp, GUINT_TO_POINTER (53)), EACCES);
    test_report_clear (&report3);
    tp->net.flags &= ~SBX_NET_FLAG_DNS;
  }

  close (lp);
  close (lq);
  test_report_clear (&report);
  test_report_clear (&report2);
  g_clear_pointer (&deny, sbx_landlock_plan_free);
  g_clear_pointer (&ports, sbx_landlock_plan_free);
  scratch_free (g_steal_pointer (&root));
}

static void
test_net_proxy_unsupported (void)
{
  g_autofree char *root = scratch_new ();
  g_autoptr(EtuPolicy) tp = etu_policy_new (root);
  g_autoptr(GError) error = NULL;
  SbxLandlockOptions options = { kernel_abi, SBX_LANDLOCK_RUNG_LANDLOCK, TRUE, NULL };
  SbxLandlockPlan *plan;

  if (!need_landlock ())
    {
      scratch_free (g_steal_pointer (&root));
      return;
    }
  tp->net.mode = SBX_NET_MODE_PROXY;
  tp->net.proxy_port = 3128;
  plan = sbx_landlock_plan_new (etu_policy_get (tp), &options, NULL, &error);
  g_assert_null (plan);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED);
  scratch_free (g_steal_pointer (&root));
}

/* ---- scoping ---- */

static int
probe_connect_abstract (gconstpointer data)
{
  struct sockaddr_un sun = { 0 };
  const char *name = data;
  int fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int r;

  if (fd < 0)
    return errno;
  sun.sun_family = AF_UNIX;
  memcpy (sun.sun_path + 1, name, strlen (name));
  r = connect (fd, (struct sockaddr *) &sun, (socklen_t) (offsetof (struct sockaddr_un, sun_path) + 1 + strlen (name)))
      < 0 ? errno : 0;
  close (fd);
  return r;
}

static int
probe_kill0 (gconstpointer data)
{
  return kill ((pid_t) GPOINTER_TO_INT (data), 0) < 0 ? errno : 0;
}

static void
test_scoping (void)
{
  g_autofree char *root = scratch_new ();
  g_autoptr(EtuPolicy) tp = etu_policy_new (root);
  g_autoptr(SbxLandlockPlan) plan = NULL;
  g_autofree char *name = g_strdup_printf ("sbx-lsm-test-%d", (int) getpid ());
  struct sockaddr_un sun = { 0 };
  TestReport report;
  Confinement c = { 0 };
  pid_t sleeper;
  int lfd, status;

  if (!need_landlock ())
    {
      scratch_free (g_steal_pointer (&root));
      return;
    }
  add_host_deny (tp);
  plan = plan_for (tp, 0, SBX_LANDLOCK_RUNG_LANDLOCK, FALSE, &report);
  c.plan = plan;
  if (kernel_abi < 6)
    {
      g_assert_cmpuint (test_report_status (&report, "landlock-scoping", NULL), ==, SBX_ABI_REPORT_UNENFORCED);
      g_assert_cmpuint (sbx_landlock_plan_enforces (plan) & SBX_LANDLOCK_ENFORCES_SCOPE, ==, 0);
      g_test_skip ("Landlock ABI < 6: no scoping on this kernel (the report says so)");
      test_report_clear (&report);
      scratch_free (g_steal_pointer (&root));
      return;
    }
  g_assert_cmpuint (test_report_status (&report, "landlock-scoping", NULL), ==, SBX_ABI_REPORT_ENFORCED);
  g_assert_cmpuint (sbx_landlock_plan_enforces (plan) & SBX_LANDLOCK_ENFORCES_SCOPE, !=, 0);

  lfd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  g_assert_cmpint (lfd, >=, 0);
  sun.sun_family = AF_UNIX;
  memcpy (sun.sun_path + 1, name, strlen (name));
  g_assert_no_errno (bind (lfd, (struct sockaddr *) &sun,
                           (socklen_t) (offsetof (struct sockaddr_un, sun_path) + 1 + strlen (name))));
  g_assert_no_errno (listen (lfd, 4));
  assert_probe (run_probe (&c, probe_connect_abstract, name), EPERM);
  assert_probe (run_probe (NULL, probe_connect_abstract, name), 0);
  close (lfd);

  sleeper = fork ();
  g_assert_cmpint (sleeper, >=, 0);
  if (sleeper == 0)
    {
      pause ();
      _exit (0);
    }
  assert_probe (run_probe (&c, probe_kill0, GINT_TO_POINTER (sleeper)), EPERM);
  assert_probe (run_probe (NULL, probe_kill0, GINT_TO_POINTER (sleeper)), 0);
  kill (sleeper, SIGKILL);
  g_assert_cmpint (waitpid (sleeper, &status, 0), ==, sleeper);

  test_report_clear (&report);
  g_clear_pointer (&plan, sbx_landlock_plan_free);
  scratch_free (g_steal_pointer (&root));
}

/* ---- ABI degradation ---- */

static void
test_abi_levels (void)
{
  g_autofree char *root = scratch_new ();
  g_autofree char *ok = mkf (root, "ok/f"), *no = mkf (root, "no/f");
  g_autoptr(EtuPolicy) tp = etu_policy_new (root);

  if (!need_landlock ())
    {
      scratch_free (g_steal_pointer (&root));
      return;
    }
  add_host_deny (tp);
  etu_policy_add (tp, "~/ok", SBX_FS_READ | SBX_FS_WRITE, 0, 0, SBX_FS_ORIGIN_ROOT);
  tp->net.mode = SBX_NET_MODE_DENY;

  for (int abi = 1; abi <= MIN (kernel_abi, SBX_LANDLOCK_ABI_MAX); abi++)
    {
      g_autoptr(SbxLandlockPlan) plan = NULL;
      TestReport report;
      Confinement c = { 0 };
      uint64_t fs = (1ULL << 13) - 1;
      uint32_t enforces;
      const char *detail = NULL;
      g_autofree char *prefix = g_strdup_printf ("%d", abi);

      g_test_message ("simulated Landlock ABI %d", abi);
      plan = plan_for (tp, abi, SBX_LANDLOCK_RUNG_LANDLOCK, TRUE, &report);
      c.plan = plan;
      if (abi >= 2)
        fs |= LANDLOCK_ACCESS_FS_REFER;
      if (abi >= 3)
        fs |= LANDLOCK_ACCESS_FS_TRUNCATE;
      if (abi >= 5)
        fs |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
      g_assert_cmpint (sbx_landlock_plan_abi (plan), ==, abi);
      g_assert_cmphex (sbx_landlock_plan_handled_access_fs (plan), ==, fs);
      g_assert_cmphex (sbx_landlock_plan_handled_access_net (plan), ==,
                       abi >= 4 ? (LANDLOCK_ACCESS_NET_BIND_TCP | LANDLOCK_ACCESS_NET_CONNECT_TCP) : 0);
      g_assert_cmphex (sbx_landlock_plan_scoped (plan), ==,
                       abi >= 6 ? (LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | LANDLOCK_SCOPE_SIGNAL) : 0);
      g_assert_cmphex (sbx_landlock_plan_access_rw_file (plan) & ~fs, ==, 0);

      enforces = sbx_landlock_plan_enforces (plan);
      g_assert_cmpuint (enforces & SBX_LANDLOCK_ENFORCES_READ, !=, 0);
      g_assert_cmpuint (!!(enforces & SBX_LANDLOCK_ENFORCES_WRITE), ==, abi >= 3);
      g_assert_cmpuint (!!(enforces & SBX_LANDLOCK_ENFORCES_WRITE_EXCEPT_TRUNCATE), ==, abi < 3);
      g_assert_cmpuint (!!(enforces & SBX_LANDLOCK_ENFORCES_NET), ==, abi >= 4);
      g_assert_cmpuint (!!(enforces & SBX_LANDLOCK_ENFORCES_SCOPE), ==, abi >= 6);
      g_assert_cmpuint (test_report_status (&report, "write-boundary", NULL), ==,
                        abi >= 3 ? SBX_ABI_REPORT_ENFORCED : SBX_ABI_REPORT_UNENFORCED);
      g_assert_cmpuint (test_report_status (&report, "network-boundary", NULL), ==,
                        abi >= 4 ? SBX_ABI_REPORT_ENFORCED : SBX_ABI_REPORT_UNENFORCED);
      g_assert_cmpuint (test_report_status (&report, "landlock-scoping", NULL), ==,
                        abi >= 6 ? SBX_ABI_REPORT_ENFORCED : SBX_ABI_REPORT_UNENFORCED);
      g_assert_cmpuint (test_report_status (&report, "landlock-abi", &detail), ==, SBX_ABI_REPORT_ENFORCED);
      g_assert_true (g_str_has_prefix (detail, prefix));

      /* the kernel accepts the degraded ruleset and it still confines */
      assert_probe (run_probe (&c, probe_read, ok), 0);
      assert_probe (run_probe (&c, probe_read, no), EACCES);
      assert_probe (run_probe (&c, probe_write, ok), 0);
      if (abi < 3)
        {
          /* the gap the write-boundary entry reports: truncate(2) is not
           * mediated below ABI 3, even outside every rule (the seccomp
           * program closes it, see test-seccomp) */
          assert_probe (run_probe (&c, probe_truncate, no), 0);
          write_file (no, "data\n");
        }
      else
        assert_probe (run_probe (&c, probe_truncate, no), EACCES);
      test_report_clear (&report);
    }
  assert_probe (run_probe (NULL, probe_read, no), 0);
  scratch_free (g_steal_pointer (&root));
}

/* ---- validation ---- */

typedef struct
{
  const char *name;
  const char *path;
  uint32_t    allow;
  uint32_t    deny;
  uint32_t    flags;
  uint32_t    size;
} BadRule;

static void
test_rejects_malformed (void)
{
  static const BadRule rows[] = {
    { "relative path", "tmp/x", SBX_FS_READ, 0, 0, 0 },
    { "dot-dot", "/tmp/../etc", SBX_FS_READ, 0, 0, 0 },
    { "trailing slash", "/tmp/", SBX_FS_READ, 0, 0, 0 },
    { "double slash", "/tmp//x", SBX_FS_READ, 0, 0, 0 },
    { "unknown access bit", "/tmp", 8, 0, 0, 0 },
    { "unknown flag", "/tmp", SBX_FS_READ, 0, 64, 0 },
    { "glob allow", "/tmp/*", SBX_FS_READ, 0, SBX_FS_RULE_GLOB, 0 },
    { "short struct", "/tmp", SBX_FS_READ, 0, 0, 8 },
    { "null path", NULL, SBX_FS_READ, 0, 0, 0 },
  };

  if (!need_landlock ())
    return;
  for (guint i = 0; i < G_N_ELEMENTS (rows); i++)
    {
      SbxFsRuleV1 rule = { sizeof rule, rows[i].flags, rows[i].allow, rows[i].deny, SBX_FS_ORIGIN_ROOT, -1,
                           rows[i].path };
      SbxPolicyV1 policy = { sizeof policy, 0, 0, &rule, 1, 0, NULL, NULL, NULL, NULL, NULL, NULL };
      SbxLandlockOptions options = { kernel_abi, SBX_LANDLOCK_RUNG_LANDLOCK, FALSE, NULL };
      g_autoptr(GError) error = NULL;
      SbxLandlockPlan *plan;

      if (rows[i].size != 0)
        rule.struct_size = rows[i].size;
      plan = sbx_landlock_plan_new (&policy, &options, NULL, &error);
      g_test_message ("%s: %s", rows[i].name, error != NULL ? error->message : "(accepted)");
      g_assert_null (plan);
      g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT);
    }

  {
    SbxPolicyV1 policy = { sizeof policy, 0, 0, NULL, 0, 0, NULL, NULL, NULL, NULL, NULL, NULL };
    SbxLandlockOptions too_new = { kernel_abi + 1, SBX_LANDLOCK_RUNG_LANDLOCK, FALSE, NULL };
    SbxLandlockOptions bad_rung = { kernel_abi, 3, FALSE, NULL };
    g_autoptr(GError) error = NULL, error2 = NULL, error3 = NULL;

    g_assert_null (sbx_landlock_plan_new (&policy, &too_new, NULL, &error));
    g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED);
    g_assert_null (sbx_landlock_plan_new (&policy, &bad_rung, NULL, &error2));
    g_assert_error (error2, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT);
    policy.flags = SBX_POLICY_UNCONFINED;
    g_assert_null (sbx_landlock_plan_new (&policy, &bad_rung, NULL, &error3));
    g_assert_error (error3, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT);
  }
}

static void
test_glob_deny_reported (void)
{
  g_autofree char *root = scratch_new ();
  g_autoptr(EtuPolicy) tp = etu_policy_new (root);
  g_autoptr(SbxLandlockPlan) plan2 = NULL, plan1 = NULL;
  TestReport report2, report1;

  if (!need_landlock ())
    {
      scratch_free (g_steal_pointer (&root));
      return;
    }
  add_host_deny (tp);
  etu_policy_add (tp, "~", SBX_FS_ALL, 0, 0, SBX_FS_ORIGIN_WORKSPACE);
  etu_policy_add (tp, "~/**/.env*", 0, SBX_FS_READ, SBX_FS_RULE_GLOB, SBX_FS_ORIGIN_ROOT);
  plan2 = plan_for (tp, 0, SBX_LANDLOCK_RUNG_LANDLOCK, FALSE, &report2);
  plan1 = plan_for (tp, 0, SBX_LANDLOCK_RUNG_USERNS, FALSE, &report1);

  /* rung 2 cannot express it: reported, and the read boundary not claimed */
  g_assert_cmpuint (test_report_status (&report2, "glob-deny", NULL), ==, SBX_ABI_REPORT_UNENFORCED);
  g_assert_cmpuint (test_report_status (&report2, "read-boundary", NULL), ==, SBX_ABI_REPORT_UNENFORCED);
  g_assert_cmpuint (sbx_landlock_plan_enforces (plan2) & SBX_LANDLOCK_ENFORCES_READ, ==, 0);
  g_assert_cmpuint (sbx_landlock_plan_enforces (plan2) & SBX_LANDLOCK_ENFORCES_WRITE, !=, 0);
  /* rung 1 masks globs in the mount view; the Landlock layer reports none */
  g_assert_cmpuint (test_report_status (&report1, "glob-deny", NULL), ==, 0);
  g_assert_cmpuint (sbx_landlock_plan_enforces (plan1) & SBX_LANDLOCK_ENFORCES_READ, !=, 0);

  test_report_clear (&report1);
  test_report_clear (&report2);
  g_clear_pointer (&plan1, sbx_landlock_plan_free);
  g_clear_pointer (&plan2, sbx_landlock_plan_free);
  scratch_free (g_steal_pointer (&root));
}

/* ---- child side contract ---- */

static void
test_apply_errno_neutral (void)
{
  g_autofree char *root = scratch_new ();
  g_autoptr(EtuPolicy) tp = etu_policy_new (root);
  g_autoptr(SbxLandlockPlan) plan = NULL;
  TestReport report;
  pid_t pid;
  int status;

  if (!need_landlock ())
    {
      scratch_free (g_steal_pointer (&root));
      return;
    }
  add_host_deny (tp);
  etu_policy_add (tp, "~/missing-file", SBX_FS_READ, 0, SBX_FS_RULE_OPTIONAL, SBX_FS_ORIGIN_ROOT);
  plan = plan_for (tp, 0, SBX_LANDLOCK_RUNG_LANDLOCK, FALSE, &report);
  (void) probe_errno_neutral;

  pid = fork ();
  g_assert_cmpint (pid, >=, 0);
  if (pid == 0)
    {
      const char *step = NULL;
      SbxLandlockExtraRule bad = { -1, LANDLOCK_ACCESS_FS_READ_FILE };
      int r;

      errno = 4242;
      r = sbx_landlock_plan_apply (plan, NULL, 0, &step);
      if (r != 0 || errno != 4242 || step != NULL)
        _exit (10);
      /* a failing step names itself and still leaves errno alone */
      r = sbx_landlock_plan_apply (plan, &bad, 1, &step);
      if (r != -EBADF || errno != 4242 || step == NULL || strcmp (step, "statx (extra rule)") != 0)
        _exit (11);
      _exit (0);
    }
  g_assert_cmpint (waitpid (pid, &status, 0), ==, pid);
  g_assert_true (WIFEXITED (status));
  g_assert_cmpint (WEXITSTATUS (status), ==, 0);

  test_report_clear (&report);
  g_clear_pointer (&plan, sbx_landlock_plan_free);
  scratch_free (g_steal_pointer (&root));
}

/* A grant's rule carries an fd pinned by the core: the plan uses that
 * inode, never the path again. */
static void
test_pinned_fd_rule (void)
{
  g_autofree char *root = scratch_new ();
  g_autofree char *f = mkf (root, "g/f"), *moved = path_join (root, "g/moved");
  g_autoptr(EtuPolicy) tp = etu_policy_new (root);
  g_autoptr(SbxLandlockPlan) plan = NULL;
  TestReport report;
  Confinement c = { 0 };
  int fd;

  if (!need_landlock ())
    {
      scratch_free (g_steal_pointer (&root));
      return;
    }
  fd = open (f, O_PATH | O_CLOEXEC | O_NOFOLLOW);
  g_assert_cmpint (fd, >=, 0);
  add_host_deny (tp);
  etu_policy_add (tp, "~/g/f", SBX_FS_READ, 0, SBX_FS_RULE_EXACT | SBX_FS_RULE_CANONICAL, SBX_FS_ORIGIN_GRANT);
  g_array_index (tp->rules, SbxFsRuleV1, tp->rules->len - 1).fd = fd;
  plan = plan_for (tp, 0, SBX_LANDLOCK_RUNG_LANDLOCK, FALSE, &report);
  /* the host's fd is valid during compile only */
  close (fd);
  c.plan = plan;

  /* swap the path: the pinned inode keeps the grant, the new file at the
   * granted path gets nothing */
  g_assert_no_errno (rename (f, moved));
  write_file (f, "replacement\n");
  assert_probe (run_probe (&c, probe_read, moved), 0);
  assert_probe (run_probe (&c, probe_read, f), EACCES);
  assert_probe (run_probe (NULL, probe_read, f), 0);

  test_report_clear (&report);
  g_clear_pointer (&plan, sbx_landlock_plan_free);
  scratch_free (g_steal_pointer (&root));
}

/* ---- rung 1: bind-mount roots ---- */

typedef struct
{
  const char *newroot;
  const char *source;
} ViewArgs;

static int
write_proc (const char *path, const char *text)
{
  int fd = open (path, O_WRONLY | O_CLOEXEC);
  ssize_t n;

  if (fd < 0)
    return -1;
  n = write (fd, text, strlen (text));
  close (fd);
  return n == (ssize_t) strlen (text) ? 0 : -1;
}

/* In the child: a private mount view whose root is a tmpfs with @source
 * bound at /x, the old root detached (as rung 1 builds it). */
static int
enter_view (gconstpointer data)
{
  const ViewArgs *v = data;
  char x[4096], old[4096];
  int r;

  uid_t uid = getuid ();
  gid_t gid = getgid ();

  if (unshare (CLONE_NEWUSER | CLONE_NEWNS) < 0)
    return errno;
  if (write_proc ("/proc/self/setgroups", "deny") != 0)
    return errno;
  snprintf (x, sizeof x, "%d %d 1", (int) uid, (int) uid);
  if (write_proc ("/proc/self/uid_map", x) != 0)
    return errno;
  snprintf (x, sizeof x, "%d %d 1", (int) gid, (int) gid);
  if (write_proc ("/proc/self/gid_map", x) != 0)
    return errno;
  if (mount (NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
    return errno;
  if (mount ("tmpfs", v->newroot, "tmpfs", 0, "mode=0755") < 0)
    return errno;
  snprintf (x, sizeof x, "%s/x", v->newroot);
  snprintf (old, sizeof old, "%s/old", v->newroot);
  if (mkdir (x, 0755) < 0 || mkdir (old, 0755) < 0)
    return errno;
  if (mount (v->source, x, NULL, MS_BIND | MS_REC, NULL) < 0)
    return errno;
  if (chdir (v->newroot) < 0)
    return errno;
  r = (int) syscall (SYS_pivot_root, ".", "old");
  if (r < 0)
    return errno;
  if (umount2 ("/old", MNT_DETACH) < 0 || chdir ("/") < 0)
    return errno;
  return 0;
}

static void
test_mount_roots (void)
{
  g_autofree char *root = scratch_new ();
  g_autofree char *newroot = mk (root, "newroot"), *src = mkf (root, "src/f");
  g_autofree char *srcdir = path_join (root, "src");
  g_autoptr(EtuPolicy) tp = etu_policy_new (root);
  g_autoptr(SbxLandlockPlan) plain = NULL, rooted = NULL;
  const char *roots[] = { srcdir, NULL };
  SbxLandlockOptions options = { kernel_abi, SBX_LANDLOCK_RUNG_USERNS, FALSE, roots };
  g_autoptr(GError) error = NULL;
  ViewArgs v = { newroot, srcdir };
  TestReport report;
  Confinement c = { 0 }, cr = { 0 }, cv = { 0 };
  int control;

  if (!need_landlock ())
    {
      scratch_free (g_steal_pointer (&root));
      return;
    }
  (void) src;
  /* host read allowed: the only rule covering src/ is the one on "/" */
  etu_policy_add (tp, "/", SBX_FS_READ, SBX_FS_WRITE | SBX_FS_EXEC, 0, SBX_FS_ORIGIN_HOST);
  plain = plan_for (tp, 0, SBX_LANDLOCK_RUNG_USERNS, FALSE, &report);
  test_report_clear (&report);
  rooted = sbx_landlock_plan_new (etu_policy_get (tp), &options, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (sbx_landlock_plan_n_rules (rooted), ==, sbx_landlock_plan_n_rules (plain) + 1);

  cv.before = enter_view;
  cv.before_data = &v;
  control = run_probe (&cv, probe_read, "/x/f");
  if (control != 0)
    {
      g_autofree char *why = g_strdup_printf ("cannot build a private mount view here: %s",
                                              probe_result_name (control));

      g_test_skip (why);
      g_clear_pointer (&plain, sbx_landlock_plan_free);
      g_clear_pointer (&rooted, sbx_landlock_plan_free);
      scratch_free (g_steal_pointer (&root));
      return;
    }
  c = cv;
  c.plan = plain;
  cr = cv;
  cr.plan = rooted;
  /* the walk from /x/f stops at the tmpfs root: host "/" is not on it */
  assert_probe (run_probe (&c, probe_read, "/x/f"), EACCES);
  assert_probe (run_probe (&cr, probe_read, "/x/f"), 0);

  g_clear_pointer (&plain, sbx_landlock_plan_free);
  g_clear_pointer (&rooted, sbx_landlock_plan_free);
  scratch_free (g_steal_pointer (&root));
}

/* ---- property: never wider than the reference model ---- */

#define PROP_NODES 14

static const char *const prop_dirs[] = { "", "a", "b", "a/c", "a/c/d", "b/e" };
static const char *const prop_files[] = { "f", "a/f", "a/g", "b/f", "a/c/f", "a/c/d/f", "b/e/f", "b/e/g" };
static const char *const prop_rule_paths[] = {
  "", "a", "b", "a/c", "a/c/d", "b/e", "a/f", "a/g", "b/f", "a/c/f", "a/c/d/f", "b/e/f", "b/e/g", "a/x", "b/e/none",
};

typedef struct
{
  const char *root;
  char        results[PROP_NODES][4];   /* per node: read, write, exec, create (1 = allowed) */
} PropArgs;

static int
prop_probe_all (gconstpointer data)
{
  PropArgs *pa = (PropArgs *) data;
  char path[4096];
  guint node = 0;
  int fd;

  for (guint i = 0; i < G_N_ELEMENTS (prop_dirs); i++, node++)
    {
      snprintf (path, sizeof path, "%s/%s", pa->root, prop_dirs[i]);
      fd = open (path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      pa->results[node][0] = fd >= 0;
      if (fd >= 0)
        close (fd);
      snprintf (path, sizeof path, "%s/%s%s.probe", pa->root, prop_dirs[i], prop_dirs[i][0] ? "/" : "");
      fd = open (path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
      pa->results[node][3] = fd >= 0;
      if (fd >= 0)
        close (fd);
    }
  for (guint i = 0; i < G_N_ELEMENTS (prop_files); i++, node++)
    {
      char *argv[2] = { path, NULL };
      pid_t pid;
      int status;

      snprintf (path, sizeof path, "%s/%s", pa->root, prop_files[i]);
      fd = open (path, O_RDONLY | O_CLOEXEC);
      pa->results[node][0] = fd >= 0;
      if (fd >= 0)
        close (fd);
      fd = open (path, O_WRONLY | O_CLOEXEC);
      pa->results[node][1] = fd >= 0;
      if (fd >= 0)
        close (fd);
      pa->results[node][2] = posix_spawn (&pid, path, NULL, NULL, argv, environ) == 0 &&
                             waitpid (pid, &status, 0) == pid && WIFEXITED (status) && WEXITSTATUS (status) == 0;
    }
  /* hand the table back through the result pipe: too big for an int, so
   * through a shared mapping prepared by the parent */
  return 0;
}

static void
test_property_never_wider (void)
{
  g_autofree char *root = scratch_new ();
  g_autoptr(GRand) rand = g_rand_new_with_seed (g_test_rand_int ());
  PropArgs *shared;
  guint iterations = g_test_slow () ? 400 : 120;
  guint narrowed = 0, total = 0, allowed = 0;

  if (!need_landlock ())
    {
      scratch_free (g_steal_pointer (&root));
      return;
    }
  for (guint i = 1; i < G_N_ELEMENTS (prop_dirs); i++)
    g_free (mk (root, prop_dirs[i]));
  for (guint i = 0; i < G_N_ELEMENTS (prop_files); i++)
    {
      g_autofree char *f = path_join (root, prop_files[i]);

      copy_exe ("/usr/bin/true", f);
    }
  shared = mmap (NULL, sizeof *shared, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  g_assert_true (shared != MAP_FAILED);
  shared->root = root;

  for (guint it = 0; it < iterations; it++)
    {
      g_autoptr(EtuPolicy) tp = etu_policy_new (root);
      g_autoptr(SbxLandlockPlan) plan = NULL;
      SbxLandlockOptions options = { kernel_abi, SBX_LANDLOCK_RUNG_LANDLOCK, FALSE, NULL };
      g_autoptr(GError) error = NULL;
      g_autoptr(GString) desc = g_string_new (NULL);
      const SbxPolicyV1 *policy;
      guint n_rules = (guint) g_rand_int_range (rand, 1, 7);
      Confinement c = { 0 };
      guint node = 0;

      add_host_deny (tp);
      etu_policy_add_runtime (tp);
      for (guint r = 0; r < n_rules; r++)
        {
          const char *rel = prop_rule_paths[g_rand_int_range (rand, 0, G_N_ELEMENTS (prop_rule_paths))];
          g_autofree char *tilde = g_strconcat ("~", rel[0] ? "/" : "", rel, NULL);
          uint32_t allow = 0, deny = 0;
          uint32_t flags = g_rand_boolean (rand) ? SBX_FS_RULE_EXACT : 0;

          for (guint k = 0; k < 3; k++)
            {
              uint32_t axis = 1u << k;

              switch (g_rand_int_range (rand, 0, 3))
                {
                case 0: allow |= axis; break;
                case 1: deny |= axis; break;
                default: break;
                }
            }
          if (allow == 0 && deny == 0)
            allow = SBX_FS_READ;
          etu_policy_add (tp, tilde, allow, deny, flags | SBX_FS_RULE_OPTIONAL, SBX_FS_ORIGIN_ROOT);
          g_string_append_printf (desc, " {%s allow=%u deny=%u%s}", tilde, allow, deny, flags ? " exact" : "");
        }
      policy = etu_policy_get (tp);
      plan = sbx_landlock_plan_new (policy, &options, NULL, &error);
      g_assert_no_error (error);
      c.plan = plan;
      memset (shared->results, 0, sizeof shared->results);
      assert_probe (run_probe (&c, prop_probe_all, shared), 0);

      for (guint i = 0; i < G_N_ELEMENTS (prop_dirs); i++, node++)
        {
          g_autofree char *dir = prop_dirs[i][0] ? path_join (root, prop_dirs[i]) : g_strdup (root);
          g_autofree char *probe = path_join (dir, ".probe");
          guint32 want_dir = sbx_fs_resolve (policy->fs_rules, policy->n_fs_rules, dir);
          guint32 want_new = sbx_fs_resolve (policy->fs_rules, policy->n_fs_rules, probe);

          if (shared->results[node][0] && !(want_dir & SBX_FS_READ))
            g_error ("iteration %u: %s listable, model says no:%s", it, dir, desc->str);
          if (shared->results[node][3] && !(want_new & SBX_FS_WRITE))
            g_error ("iteration %u: %s creatable, model says no:%s", it, probe, desc->str);
          allowed += shared->results[node][0] + shared->results[node][3];
          if (g_test_verbose () && !shared->results[node][0] && (want_dir & SBX_FS_READ))
            g_test_message ("narrower than the model: dir %s list:%s", prop_dirs[i], desc->str);
          if (g_test_verbose () && !shared->results[node][3] && (want_new & SBX_FS_WRITE))
            g_test_message ("narrower than the model: dir %s create:%s", prop_dirs[i], desc->str);
          narrowed += (!shared->results[node][0] && (want_dir & SBX_FS_READ)) +
                      (!shared->results[node][3] && (want_new & SBX_FS_WRITE));
          total += 2;
          unlink (probe);
        }
      for (guint i = 0; i < G_N_ELEMENTS (prop_files); i++, node++)
        {
          g_autofree char *f = path_join (root, prop_files[i]);
          guint32 want = sbx_fs_resolve (policy->fs_rules, policy->n_fs_rules, f);
          static const guint32 bits[3] = { SBX_FS_READ, SBX_FS_WRITE, SBX_FS_EXEC };

          for (guint k = 0; k < 3; k++)
            {
              if (shared->results[node][k] && !(want & bits[k]))
                g_error ("iteration %u: %s %s allowed, model says no:%s", it, f,
                         k == 0 ? "read" : k == 1 ? "write" : "exec", desc->str);
              narrowed += !shared->results[node][k] && (want & bits[k]);
              if (!shared->results[node][k] && (want & bits[k]) && g_test_verbose ())
                g_test_message ("narrower than the model: %s %s:%s", prop_files[i], k == 0 ? "read" : k == 1 ? "write" : "exec", desc->str);
              allowed += shared->results[node][k];
              total++;
            }
        }
    }
  g_test_message ("%u policies, %u verdicts, %u allowed, %u narrower than the model, none wider",
                  iterations, total, allowed, narrowed);
  /* the comparison is not vacuous */
  g_assert_cmpuint (allowed, >, total / 20);
  munmap (shared, sizeof *shared);
  scratch_free (g_steal_pointer (&root));
}

/* The pins of the plan's paths where openat2 is refused with ENOSYS (sbx's
 * own seccomp program refuses it, so a nested sbx meets this): the walk one
 * component at a time gives what openat2(RESOLVE_NO_SYMLINKS) gives.  Each
 * expectation is checked with openat2 here and under a filter that refuses
 * it, in a subprocess. */
static void
check_open_nofollow (const char *root)
{
  g_autofree char *dir = g_build_filename (root, "d", NULL);
  g_autofree char *file = g_build_filename (root, "d", "f", NULL);
  g_autofree char *link = g_build_filename (root, "l", NULL);
  g_autofree char *through = g_build_filename (root, "l", "f", NULL);
  g_autofree char *missing = g_build_filename (root, "d", "missing", NULL);
  struct stat a, b;
  int fd;

  fd = ll_open_path_nofollow (file);
  g_assert_cmpint (fd, >=, 0);
  g_assert_cmpint (fstat (fd, &a), ==, 0);
  g_assert_cmpint (stat (file, &b), ==, 0);
  g_assert_true (a.st_ino == b.st_ino && a.st_dev == b.st_dev);
  close (fd);
  fd = ll_open_path_nofollow (dir);
  g_assert_cmpint (fd, >=, 0);
  g_assert_cmpint (fstat (fd, &a), ==, 0);
  g_assert_true (S_ISDIR (a.st_mode));
  close (fd);
  /* the last component a link: the link itself */
  fd = ll_open_path_nofollow (link);
  g_assert_cmpint (fd, >=, 0);
  g_assert_cmpint (fstatat (fd, "", &a, AT_EMPTY_PATH), ==, 0);
  g_assert_true (S_ISLNK (a.st_mode));
  close (fd);
  /* a link on the way: refused, whatever lies behind it */
  g_assert_cmpint (ll_open_path_nofollow (through), ==, -ELOOP);
  g_assert_cmpint (ll_open_path_nofollow (missing), ==, -ENOENT);
  fd = ll_open_path_nofollow ("/");
  g_assert_cmpint (fd, >=, 0);
  close (fd);
}

static void
test_open_nofollow_without_openat2 (void)
{
  g_autofree char *root = NULL;

  if (g_test_subprocess ())
    {
      struct sock_filter code[] = {
        BPF_STMT (BPF_LD | BPF_W | BPF_ABS, offsetof (struct seccomp_data, nr)),
        BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, __NR_openat2, 0, 1),
        BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
        BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      };
      struct sock_fprog prog = { G_N_ELEMENTS (code), code };
      struct open_how how = { .flags = O_PATH | O_CLOEXEC };

      root = g_strdup (g_getenv ("SBX_TEST_NOFOLLOW_ROOT"));
      g_assert_nonnull (root);
      g_assert_cmpint (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), ==, 0);
      g_assert_cmpint (prctl (PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog), ==, 0);
      /* the filter holds: openat2 itself is gone */
      g_assert_cmpint (syscall (SYS_openat2, AT_FDCWD, "/", &how, sizeof how), ==, -1);
      g_assert_cmpint (errno, ==, ENOSYS);
      check_open_nofollow (root);
      return;
    }
  root = g_dir_make_tmp ("sbx-nofollow-XXXXXX", NULL);
  {
    g_autofree char *dir = g_build_filename (root, "d", NULL);
    g_autofree char *file = g_build_filename (root, "d", "f", NULL);
    g_autofree char *link = g_build_filename (root, "l", NULL);

    g_assert_cmpint (mkdir (dir, 0755), ==, 0);
    g_assert_true (g_file_set_contents (file, "x", 1, NULL));
    g_assert_cmpint (symlink ("d", link), ==, 0);
  }
  check_open_nofollow (root);   /* openat2 itself: the reference */
  g_setenv ("SBX_TEST_NOFOLLOW_ROOT", root, TRUE);
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_INHERIT_STDERR | G_TEST_SUBPROCESS_INHERIT_STDOUT);
  g_test_trap_assert_passed ();
  etu_rm_rf (root);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
  kernel_abi = sbx_landlock_probe_abi ();

  g_test_add_func ("/landlock/abi/probe", test_probe_abi);
  g_test_add_func ("/landlock/abi/levels", test_abi_levels);
  g_test_add_func ("/landlock/carve/write-barrier", test_write_barrier);
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *path = g_strdup_printf ("/landlock/%s", cases[i].name);

      g_test_add_data_func (path, &cases[i], test_case);
    }
  g_test_add_func ("/landlock/rename/inside-tree", test_rename_inside_tree);
  g_test_add_func ("/landlock/rename/out-of-tree", test_rename_out_of_tree);
  g_test_add_func ("/landlock/links/multi-link-dropped", test_multi_link_dropped);
  g_test_add_func ("/landlock/pin/without-openat2", test_open_nofollow_without_openat2);
  g_test_add_func ("/landlock/symlinks/do-not-widen", test_symlinks_do_not_widen);
  g_test_add_func ("/landlock/devices/dev-null", test_dev_null);
  g_test_add_func ("/landlock/runtime/usr-merge", test_usr_merge);
  g_test_add_func ("/landlock/net/tcp", test_net_tcp);
  g_test_add_func ("/landlock/net/proxy-unsupported", test_net_proxy_unsupported);
  g_test_add_func ("/landlock/scope/unix-and-signal", test_scoping);
  g_test_add_func ("/landlock/policy/rejects-malformed", test_rejects_malformed);
  g_test_add_func ("/landlock/policy/glob-deny-reported", test_glob_deny_reported);
  g_test_add_func ("/landlock/apply/errno-neutral", test_apply_errno_neutral);
  g_test_add_func ("/landlock/grants/pinned-fd", test_pinned_fd_rule);
  g_test_add_func ("/landlock/property/never-wider-than-model", test_property_never_wider);
  g_test_add_func ("/landlock/rung1/mount-roots", test_mount_roots);
  return g_test_run ();
}
