/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The policy compiler (profile -> SbxPolicyV1) and the filesystem precedence
 * model (sbx_fs_resolve), which backends use as their reference.
 */
#include <sbx/sbx.h>
#include <string.h>
#include <unistd.h>

#include "sbx-policy-private.h"
#include "executor-test-util.h"

#define R SBX_FS_READ
#define X SBX_FS_EXEC
#define W SBX_FS_WRITE
#define RX (SBX_FS_READ | SBX_FS_EXEC)
#define RW (SBX_FS_READ | SBX_FS_WRITE)
#define RWX SBX_FS_ALL

static const SbxPolicyDirs test_dirs = {
  .home = "/scratch/set/home-1",
  .home_owned = TRUE,
  .tmpdir = "/scratch/set/tmp-1",
  .state_dir = "/scratch/set/state-1",
};

static SbxPolicyInput
sandboxed_input (void)
{
  SbxPolicyInput input = {
    .workspace = "/work/ws",
    .workspace_read = SBX_ACCESS_ALLOW,
    .workspace_write = SBX_ACCESS_ALLOW,
    .host_read = SBX_ACCESS_DENY,
    .host_write = SBX_ACCESS_DENY,
    .network = SBX_ACCESS_DENY,
    .isolation = SBX_ISOLATION_SANDBOXED,
    .required = SBX_GUARANTEE_ENV_SCRUB | SBX_GUARANTEE_READ_BOUNDARY
                | SBX_GUARANTEE_WRITE_BOUNDARY | SBX_GUARANTEE_NETWORK_BOUNDARY,
  };

  return input;
}

static const SbxFsRuleV1 *
find_rule (const SbxPolicyV1 *policy,
           const char        *path,
           guint32            origin)
{
  for (guint i = 0; i < policy->n_fs_rules; i++)
    if (g_str_equal (policy->fs_rules[i].path, path) && policy->fs_rules[i].origin == origin)
      return &policy->fs_rules[i];
  return NULL;
}

static guint32
resolve (const SbxPolicyV1 *policy,
         const char        *path)
{
  return sbx_fs_resolve (policy->fs_rules, policy->n_fs_rules, path);
}

/* ------------------------------------------------------------------------- */
/* Compilation                                                                */
/* ------------------------------------------------------------------------- */

/* Every rule is a well-formed ABI struct: size, fd, explicit bits, origin. */
static void
assert_rules_well_formed (const SbxPolicyV1 *policy)
{
  g_assert_cmpuint (policy->struct_size, ==, sizeof (SbxPolicyV1));
  g_assert_nonnull (policy->net);
  g_assert_cmpuint (policy->net->struct_size, ==, sizeof (SbxNetPolicyV1));
  g_assert_nonnull (policy->limits);
  g_assert_cmpuint (policy->limits->struct_size, ==, sizeof (SbxLimitsV1));
  for (guint i = 0; i < policy->n_fs_rules; i++)
    {
      const SbxFsRuleV1 *rule = &policy->fs_rules[i];

      g_assert_cmpuint (rule->struct_size, ==, sizeof (SbxFsRuleV1));
      g_assert_cmpint (rule->fd, ==, -1);
      g_assert_true (rule->allow != 0 || rule->deny != 0);
      g_assert_cmpuint (rule->allow & rule->deny, ==, 0);
      g_assert_cmpuint ((rule->allow | rule->deny) & ~SBX_FS_ALL, ==, 0);
      g_assert_cmpuint (rule->origin, >=, SBX_FS_ORIGIN_RUNTIME);
      g_assert_cmpuint (rule->origin, <=, SBX_FS_ORIGIN_TMPDIR);
      g_assert_true (rule->path[0] == '/');
      g_assert_cmpuint (rule->flags & SBX_FS_RULE_GLOB, ==, 0);
    }
}

static void
test_compile_sandboxed_order (void)
{
  SbxPolicyRoot roots[] = {
    { "/data/ro", SBX_ACCESS_ALLOW, SBX_ACCESS_DENY },
    { "/work/ws/secret", SBX_ACCESS_DENY, SBX_ACCESS_DENY },
  };
  SbxPolicyInput input = sandboxed_input ();
  g_autoptr(SbxPolicy) policy = NULL;
  const SbxPolicyV1 *abi;
  guint32 expected_origin[] = {
    SBX_FS_ORIGIN_WORKSPACE, SBX_FS_ORIGIN_ROOT, SBX_FS_ORIGIN_ROOT,
    SBX_FS_ORIGIN_HOST, SBX_FS_ORIGIN_HOME, SBX_FS_ORIGIN_TMPDIR,
  };
  const char *expected_path[] = {
    "/work/ws", "/data/ro", "/work/ws/secret", "/", test_dirs.home, test_dirs.tmpdir,
  };
  gsize n_runtime;
  guint i;

  input.roots = roots;
  input.n_roots = G_N_ELEMENTS (roots);
  policy = sbx_policy_new (&input, &test_dirs);
  abi = sbx_policy_get_abi (policy);
  assert_rules_well_formed (abi);

  /* Order: runtime closure (then devices), workspace, roots, host, HOME,
   * TMPDIR.  An exact closure row that is a symlink on this host is followed
   * by a rule for its target (e.g. /etc/localtime -> zoneinfo). */
  {
    const SbxRuntimePath *closure = sbx_policy_runtime_closure (&n_runtime);
    gsize n_links = 0;

    for (gsize r = 0; r < n_runtime; r++)
      {
        g_autofree char *target = NULL;

        if ((closure[r].flags & SBX_FS_RULE_EXACT) == 0)
          continue;
        target = sbx_policy_runtime_link_target (closure[r].path);
        if (target == NULL)
          continue;
        n_links++;
        g_assert_nonnull (find_rule (abi, target, closure[r].origin));
        g_assert_cmpuint (find_rule (abi, target, closure[r].origin)->allow, ==, closure[r].allow);
      }
    n_runtime += n_links;
  }
  g_assert_cmpuint (abi->n_fs_rules, ==, n_runtime + G_N_ELEMENTS (expected_path));
  for (i = 0; i < n_runtime; i++)
    g_assert_true (abi->fs_rules[i].origin == SBX_FS_ORIGIN_RUNTIME
                   || abi->fs_rules[i].origin == SBX_FS_ORIGIN_DEVICE);
  /* Devices come after the runtime paths. */
  for (i = 1; i < n_runtime; i++)
    g_assert_false (abi->fs_rules[i - 1].origin == SBX_FS_ORIGIN_DEVICE
                    && abi->fs_rules[i].origin == SBX_FS_ORIGIN_RUNTIME);
  for (guint k = 0; k < G_N_ELEMENTS (expected_path); k++, i++)
    {
      g_assert_cmpstr (abi->fs_rules[i].path, ==, expected_path[k]);
      g_assert_cmpuint (abi->fs_rules[i].origin, ==, expected_origin[k]);
      g_assert_cmpuint (abi->fs_rules[i].flags, ==, 0);
    }

  g_assert_cmpuint (abi->flags, ==, 0);
  g_assert_cmpuint (abi->required_guarantees, ==, input.required);
  g_assert_cmpstr (abi->workspace, ==, "/work/ws");
  g_assert_cmpstr (abi->home, ==, test_dirs.home);
  g_assert_cmpstr (abi->tmpdir, ==, test_dirs.tmpdir);
  g_assert_cmpstr (abi->state_dir, ==, test_dirs.state_dir);
  g_assert_cmpuint (abi->net->mode, ==, SBX_NET_MODE_DENY);
  g_assert_cmpuint (abi->net->n_tcp_ports, ==, 0);

  /* The view holds no pointer into the input. */
  g_assert_true (abi->workspace != input.workspace);
}

/* An exact runtime row that is a symlink grants its target too; a plain
 * file, a missing path and a dangling link grant nothing extra. */
static void
test_runtime_link_target (void)
{
  g_autofree char *dir = g_dir_make_tmp ("sbx-test-policy-XXXXXX", NULL);
  g_autofree char *real = g_build_filename (dir, "real.conf", NULL);
  g_autofree char *link = g_build_filename (dir, "link.conf", NULL);
  g_autofree char *dangling = g_build_filename (dir, "dangling.conf", NULL);
  g_autofree char *missing = g_build_filename (dir, "missing.conf", NULL);
  g_autofree char *canonical_real = NULL;
  g_autofree char *target = NULL;

  g_assert_nonnull (dir);
  g_assert_true (g_file_set_contents (real, "x", 1, NULL));
  g_assert_cmpint (symlink ("real.conf", link), ==, 0);
  g_assert_cmpint (symlink ("nowhere.conf", dangling), ==, 0);
  canonical_real = realpath (real, NULL);

  target = sbx_policy_runtime_link_target (link);
  g_assert_cmpstr (target, ==, canonical_real);
  g_assert_null (sbx_policy_runtime_link_target (real));
  g_assert_null (sbx_policy_runtime_link_target (dangling));
  g_assert_null (sbx_policy_runtime_link_target (missing));

  g_assert_cmpint (unlink (link), ==, 0);
  g_assert_cmpint (unlink (dangling), ==, 0);
  g_assert_cmpint (unlink (real), ==, 0);
  g_assert_cmpint (rmdir (dir), ==, 0);
}

/* The set's private directory is denied whole, whatever host access the
 * profile gives: an executor never reaches a sibling's HOME, TMPDIR or
 * backend state; its own HOME and TMPDIR stay R|W|X. */
static void
test_compile_set_dir_denied (void)
{
  static const SbxAccess host[] = { SBX_ACCESS_DENY, SBX_ACCESS_GATED, SBX_ACCESS_ALLOW };
  SbxPolicyDirs dirs = test_dirs;

  dirs.set_dir = "/scratch/set";
  for (guint r = 0; r < G_N_ELEMENTS (host); r++)
    for (guint w = 0; w < G_N_ELEMENTS (host); w++)
      {
        SbxPolicyInput input = sandboxed_input ();
        g_autoptr(SbxPolicy) policy = NULL;
        const SbxPolicyV1 *abi;

        input.host_read = host[r];
        input.host_write = host[w];
        policy = sbx_policy_new (&input, &dirs);
        abi = sbx_policy_get_abi (policy);
        assert_rules_well_formed (abi);
        g_assert_cmpuint (resolve (abi, "/scratch/set"), ==, 0);
        g_assert_cmpuint (resolve (abi, "/scratch/set/home-2/.bash_history"), ==, 0);
        g_assert_cmpuint (resolve (abi, "/scratch/set/tmp-2/f"), ==, 0);
        g_assert_cmpuint (resolve (abi, "/scratch/set/state-1/f"), ==, 0);
        g_assert_cmpuint (resolve (abi, "/scratch/set/home-1/.config/x"), ==, RWX);
        g_assert_cmpuint (resolve (abi, "/scratch/set/tmp-1/f"), ==, RWX);
        /* Beside the set: the host access, untouched. */
        g_assert_cmpuint (resolve (abi, "/scratch/other"), ==,
                          (host[r] == SBX_ACCESS_ALLOW ? (SBX_FS_READ | SBX_FS_EXEC) : 0)
                          | (host[w] == SBX_ACCESS_ALLOW ? SBX_FS_WRITE : 0));
      }
}

/* A workspace that contains the scratch root.  Other sets'
 * directories listed at creation are denied; the scratch root is a snapshot
 * (its listed entries keep the workspace's access, anything created in it
 * later, a set's directory above all, is denied); the executor's own HOME
 * and TMPDIR stay R|W|X.  A scratch root the sandbox cannot see gets no
 * snapshot rules. */
static void
test_compile_scratch_snapshot (void)
{
  static const char *const others[] = { "/work/sandbox-executors-B", NULL };
  static const char *const entries[] = { "/work/file", "/work/ws", NULL };
  SbxPolicyDirs dirs = {
    .home = "/work/sandbox-executors-A/home-1",
    .home_owned = TRUE,
    .tmpdir = "/work/sandbox-executors-A/tmp-1",
    .state_dir = "/work/sandbox-executors-A/state-1",
    .set_dir = "/work/sandbox-executors-A",
    .other_set_dirs = others,
    .scratch_root = "/work",
    .scratch_entries = entries,
  };
  SbxPolicyInput input = sandboxed_input ();
  g_autoptr(SbxPolicy) policy = NULL;
  g_autoptr(SbxPolicy) hidden = NULL;
  const SbxPolicyV1 *abi;
  guint n_plain;

  input.workspace = "/work";
  policy = sbx_policy_new (&input, &dirs);
  abi = sbx_policy_get_abi (policy);
  assert_rules_well_formed (abi);
  g_assert_cmpuint (resolve (abi, "/work/sandbox-executors-B/home-2/.gitconfig"), ==, 0);
  g_assert_cmpuint (resolve (abi, "/work/sandbox-executors-LATER/home-3/.gitconfig"), ==, 0);
  g_assert_cmpuint (resolve (abi, "/work/sandbox-executors-A/home-2/x"), ==, 0);
  g_assert_cmpuint (resolve (abi, "/work/sandbox-executors-A/home-1/x"), ==, RWX);
  g_assert_cmpuint (resolve (abi, "/work/sandbox-executors-A/tmp-1/x"), ==, RWX);
  g_assert_cmpuint (resolve (abi, "/work/file"), ==, RWX);
  g_assert_cmpuint (resolve (abi, "/work/ws/deep/x"), ==, RWX);
  g_assert_cmpuint (resolve (abi, "/work/new-later"), ==, 0);

  /* The same scratch root outside everything the sandbox sees. */
  input.workspace = "/elsewhere";
  hidden = sbx_policy_new (&input, &dirs);
  n_plain = sbx_policy_get_abi (hidden)->n_fs_rules;
  for (guint i = 0; i < n_plain; i++)
    g_assert_cmpstr (sbx_policy_get_abi (hidden)->fs_rules[i].path, !=, "/work/file");
}

typedef struct
{
  SbxAccess read;
  SbxAccess write;
  guint32   allow;
  guint32   deny;
} RootRow;

/* Allow opens an axis; Deny and Gated (until a grant) deny it explicitly. */
static void
test_compile_root_access_table (void)
{
  static const RootRow rows[] = {
    { SBX_ACCESS_ALLOW, SBX_ACCESS_ALLOW, RWX, 0 },
    { SBX_ACCESS_ALLOW, SBX_ACCESS_GATED, RX, W },
    { SBX_ACCESS_ALLOW, SBX_ACCESS_DENY, RX, W },
    { SBX_ACCESS_GATED, SBX_ACCESS_ALLOW, W, RX },
    { SBX_ACCESS_GATED, SBX_ACCESS_GATED, 0, RWX },
    { SBX_ACCESS_DENY, SBX_ACCESS_GATED, 0, RWX },
    { SBX_ACCESS_DENY, SBX_ACCESS_DENY, 0, RWX },
  };

  for (gsize r = 0; r < G_N_ELEMENTS (rows); r++)
    {
      SbxPolicyRoot root = { "/data", rows[r].read, rows[r].write };
      SbxPolicyInput input = sandboxed_input ();
      g_autoptr(SbxPolicy) policy = NULL;
      const SbxPolicyV1 *abi;
      const SbxFsRuleV1 *rule;

      input.workspace_read = rows[r].read;
      input.workspace_write = rows[r].write;
      input.host_read = rows[r].read;
      input.host_write = rows[r].write;
      input.roots = &root;
      input.n_roots = 1;
      policy = sbx_policy_new (&input, &test_dirs);
      abi = sbx_policy_get_abi (policy);

      for (guint32 origin = SBX_FS_ORIGIN_WORKSPACE; origin <= SBX_FS_ORIGIN_HOST; origin++)
        {
          const char *path = origin == SBX_FS_ORIGIN_WORKSPACE ? "/work/ws"
                             : origin == SBX_FS_ORIGIN_ROOT ? "/data" : "/";

          rule = find_rule (abi, path, origin);
          g_assert_nonnull (rule);
          g_assert_cmpuint (rule->allow, ==, rows[r].allow);
          g_assert_cmpuint (rule->deny, ==, rows[r].deny);
        }
      /* And the model agrees. */
      g_assert_cmpuint (resolve (abi, "/work/ws/file") & RWX, ==, rows[r].allow);
      g_assert_cmpuint (resolve (abi, "/data/file") & RWX, ==, rows[r].allow);
    }
}

static void
test_compile_home_tmpdir (void)
{
  SbxPolicyInput input = sandboxed_input ();
  SbxPolicyDirs real_home = test_dirs;
  g_autoptr(SbxPolicy) isolated = NULL;
  g_autoptr(SbxPolicy) real = NULL;

  isolated = sbx_policy_new (&input, &test_dirs);
  g_assert_cmpuint (resolve (sbx_policy_get_abi (isolated), "/scratch/set/home-1/.config/x"), ==, RWX);
  g_assert_cmpuint (resolve (sbx_policy_get_abi (isolated), "/scratch/set/tmp-1/f"), ==, RWX);
  /* The backend state directory is not the child's. */
  g_assert_cmpuint (resolve (sbx_policy_get_abi (isolated), "/scratch/set/state-1/f"), ==, 0);
  /* The shared /tmp is never implied. */
  g_assert_cmpuint (resolve (sbx_policy_get_abi (isolated), "/tmp/f"), ==, 0);

  /* A real HOME gets no rule: the profile governs it (host denied here). */
  real_home.home = "/home/someone";
  real_home.home_owned = FALSE;
  real = sbx_policy_new (&input, &real_home);
  g_assert_null (find_rule (sbx_policy_get_abi (real), "/home/someone", SBX_FS_ORIGIN_HOME));
  g_assert_cmpstr (sbx_policy_get_abi (real)->home, ==, "/home/someone");
  g_assert_cmpuint (resolve (sbx_policy_get_abi (real), "/home/someone/.ssh/id_ed25519"), ==, 0);
  g_assert_cmpuint (resolve (sbx_policy_get_abi (real), "/scratch/set/tmp-1/f"), ==, RWX);
}

static void
test_compile_network (void)
{
  static const struct { SbxAccess net; guint32 mode; } rows[] = {
    { SBX_ACCESS_ALLOW, SBX_NET_MODE_OPEN },
    { SBX_ACCESS_GATED, SBX_NET_MODE_DENY },
    { SBX_ACCESS_DENY, SBX_NET_MODE_DENY },
  };

  for (gsize r = 0; r < G_N_ELEMENTS (rows); r++)
    {
      SbxPolicyInput input = sandboxed_input ();
      g_autoptr(SbxPolicy) policy = NULL;

      input.network = rows[r].net;
      policy = sbx_policy_new (&input, &test_dirs);
      g_assert_cmpuint (sbx_policy_get_abi (policy)->net->mode, ==, rows[r].mode);
      g_assert_cmpuint (sbx_policy_get_abi (policy)->net->proxy_port, ==, 0);
    }
}

static void
test_compile_limits (void)
{
  SbxPolicyInput input = sandboxed_input ();
  g_autoptr(SbxPolicy) policy = NULL;
  const SbxLimitsV1 *limits;

  input.max_processes = 1024;
  input.max_memory_bytes = G_GUINT64_CONSTANT (4) << 30;
  input.max_open_files = 4096;
  policy = sbx_policy_new (&input, &test_dirs);
  limits = sbx_policy_get_abi (policy)->limits;
  g_assert_cmpuint (limits->max_processes, ==, 1024);
  g_assert_cmpuint (limits->max_memory_bytes, ==, G_GUINT64_CONSTANT (4) << 30);
  g_assert_cmpuint (limits->max_open_files, ==, 4096);
  g_assert_cmpuint (limits->flags, ==, 0);
}

static void
test_compile_unconfined (void)
{
  SbxPolicyInput input = sandboxed_input ();
  g_autoptr(SbxPolicy) policy = NULL;
  const SbxPolicyV1 *abi;

  input.isolation = SBX_ISOLATION_UNCONFINED;
  input.workspace_read = input.workspace_write = SBX_ACCESS_ALLOW;
  input.host_read = input.host_write = input.network = SBX_ACCESS_ALLOW;
  input.required = SBX_GUARANTEE_ENV_SCRUB;
  policy = sbx_policy_new (&input, &test_dirs);
  abi = sbx_policy_get_abi (policy);
  assert_rules_well_formed (abi);

  g_assert_cmpuint (abi->flags, ==, SBX_POLICY_UNCONFINED);
  g_clear_pointer (&policy, sbx_policy_free);
  /* the profile's unix-sockets member travels as a policy flag; absent: closed */
  input = sandboxed_input ();
  policy = sbx_policy_new (&input, &test_dirs);
  g_assert_cmpuint (sbx_policy_get_abi (policy)->flags & SBX_POLICY_UNIX_SOCKETS, ==, 0);
  g_clear_pointer (&policy, sbx_policy_free);
  input.unix_sockets = TRUE;
  policy = sbx_policy_new (&input, &test_dirs);
  g_assert_cmpuint (sbx_policy_get_abi (policy)->flags, ==, SBX_POLICY_UNIX_SOCKETS);
  g_clear_pointer (&policy, sbx_policy_free);
  /* "denied-paths": "not-found" likewise; absent (permission-denied): no flag */
  input = sandboxed_input ();
  g_assert_cmpint (input.denied_paths, ==, SBX_DENIED_PATHS_PERMISSION_DENIED);
  policy = sbx_policy_new (&input, &test_dirs);
  g_assert_cmpuint (sbx_policy_get_abi (policy)->flags & SBX_POLICY_DENIED_NOT_FOUND, ==, 0);
  g_clear_pointer (&policy, sbx_policy_free);
  input.denied_paths = SBX_DENIED_PATHS_NOT_FOUND;
  policy = sbx_policy_new (&input, &test_dirs);
  g_assert_cmpuint (sbx_policy_get_abi (policy)->flags, ==, SBX_POLICY_DENIED_NOT_FOUND);
  g_clear_pointer (&policy, sbx_policy_free);
  input = sandboxed_input ();
  input.isolation = SBX_ISOLATION_UNCONFINED;
  input.workspace_read = input.workspace_write = SBX_ACCESS_ALLOW;
  input.host_read = input.host_write = input.network = SBX_ACCESS_ALLOW;
  input.required = SBX_GUARANTEE_ENV_SCRUB;
  policy = sbx_policy_new (&input, &test_dirs);
  abi = sbx_policy_get_abi (policy);
  g_assert_cmpuint (abi->net->mode, ==, SBX_NET_MODE_OPEN);
  /* No runtime closure is named; "/" is R|W|X. */
  for (guint i = 0; i < abi->n_fs_rules; i++)
    g_assert_cmpuint (abi->fs_rules[i].origin, !=, SBX_FS_ORIGIN_RUNTIME);
  g_assert_cmpuint (find_rule (abi, "/", SBX_FS_ORIGIN_HOST)->allow, ==, RWX);
  g_assert_cmpuint (resolve (abi, "/etc/shadow"), ==, RWX);
}

/* A gated or denied workspace resolves to no access at all until a grant. */
static void
test_compile_gated_resolves_to_nothing (void)
{
  SbxPolicyInput input = sandboxed_input ();
  g_autoptr(SbxPolicy) policy = NULL;

  input.workspace_read = SBX_ACCESS_GATED;
  input.workspace_write = SBX_ACCESS_GATED;
  input.host_read = SBX_ACCESS_ALLOW;
  input.host_write = SBX_ACCESS_ALLOW;
  policy = sbx_policy_new (&input, &test_dirs);
  /* A workspace Deny carves out of a host Allow. */
  g_assert_cmpuint (resolve (sbx_policy_get_abi (policy), "/work/ws/src/main.c"), ==, 0);
  g_assert_cmpuint (resolve (sbx_policy_get_abi (policy), "/work/other"), ==, RWX);
  /* There is no implicit .git carve-out. */
  g_assert_cmpuint (resolve (sbx_policy_get_abi (policy), "/work/ws/.git/config"), ==, 0);
}

/* The runtime closure lets ordinary programs start with host read denied;
 * the host's secrets stay denied. */
static void
test_runtime_closure_ordinary_programs (void)
{
  static const struct { const char *path; guint32 access; } rows[] = {
    { "/bin/sh", RX },
    { "/usr/bin/env", RX },
    { "/usr/bin/git", RX },
    { "/lib/x86_64-linux-gnu/libc.so.6", RX },
    { "/lib64/ld-linux-x86-64.so.2", RX },
    { "/usr/lib/x86_64-linux-gnu/libc.so.6", RX },
    { "/usr/libexec/coreutils/libstdbuf.so", RX },
    { "/usr/lib/git-core/git-remote-http", RX },
    { "/usr/share/zoneinfo/Europe/Paris", RX },   /* via the /usr tree */
    { "/etc/alternatives/awk", R },
    { "/etc/ssl/certs/ca-certificates.crt", R },
    { "/etc/ld.so.cache", R },
    { "/etc/hosts", R },
    { "/etc/resolv.conf", R },
    { "/etc/nsswitch.conf", R },
    { "/etc/passwd", R },
    { "/etc/group", R },
    { "/etc/localtime", R },
    { "/dev/null", RW },
    { "/dev/urandom", RW },
    { "/dev/tty", RW },
    /* Exact rules open no children and no neighbours. */
    { "/etc/hosts.allow", 0 },
    { "/etc/passwd-", 0 },
    { "/dev/null/x", 0 },
    /* Denied: everything else of the host. */
    { "/etc/shadow", 0 },
    { "/etc/ssh/ssh_config", 0 },
    { "/etc/ssl/private/key.pem", 0 },
    { "/etc", 0 },
    { "/home/user/.ssh/id_rsa", 0 },
    { "/root/.bashrc", 0 },
    { "/proc/1/environ", 0 },
    { "/dev/sda", 0 },
    { "/tmp/x", 0 },
    { "/var/lib/secret", 0 },
    { "/", 0 },
  };
  SbxPolicyInput input = sandboxed_input ();
  g_autoptr(SbxPolicy) policy = sbx_policy_new (&input, &test_dirs);
  gsize n;
  const SbxRuntimePath *closure = sbx_policy_runtime_closure (&n);

  for (gsize r = 0; r < G_N_ELEMENTS (rows); r++)
    {
      guint32 got = resolve (sbx_policy_get_abi (policy), rows[r].path);

      if (got != rows[r].access)
        g_error ("%s: expected access %u, got %u", rows[r].path, rows[r].access, got);
    }

  /* No runtime path is writable, devices are exact, and every row has a
   * documented origin. */
  for (gsize i = 0; i < n; i++)
    {
      g_assert_cmpuint (closure[i].allow & SBX_FS_WRITE, ==,
                        closure[i].origin == SBX_FS_ORIGIN_DEVICE ? SBX_FS_WRITE : 0);
      if (closure[i].origin == SBX_FS_ORIGIN_DEVICE)
        g_assert_cmpuint (closure[i].flags & SBX_FS_RULE_EXACT, ==, SBX_FS_RULE_EXACT);
      else
        g_assert_cmpuint (closure[i].origin, ==, SBX_FS_ORIGIN_RUNTIME);
      g_assert_true (g_str_has_prefix (closure[i].path, "/"));
    }
}

/* The compiler reads a real profile through its getters. */
static void
test_compile_for_profile (void)
{
  g_autofree char *tmp = etu_make_tmpdir ("sbx-test-policy-XXXXXX");
  g_autofree char *ws = etu_mkdir (tmp, "ws");
  g_autofree char *data = etu_mkdir (tmp, "data");
  g_autoptr(SbxProfileConfig) config = sbx_profile_config_new ();
  g_autoptr(SbxProfile) profile = NULL;
  g_autoptr(SbxPolicy) policy = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *inside = NULL;
  const SbxPolicyV1 *abi;

  sbx_profile_config_set_workspace (config, ws, SBX_ACCESS_ALLOW, SBX_ACCESS_GATED);
  sbx_profile_config_set_host (config, SBX_ACCESS_DENY, SBX_ACCESS_DENY);
  sbx_profile_config_set_network (config, SBX_ACCESS_DENY);
  sbx_profile_config_set_command (config, SBX_ACCESS_ALLOW);
  sbx_profile_config_add_root (config, data, SBX_ACCESS_ALLOW, SBX_ACCESS_ALLOW);
  sbx_profile_config_set_limits (config, 64, 1 << 20, 128);
  profile = sbx_profile_new (config, &error);
  g_assert_no_error (error);

  policy = sbx_policy_new_for_profile (profile, &test_dirs);
  abi = sbx_policy_get_abi (policy);
  assert_rules_well_formed (abi);
  g_assert_cmpstr (abi->workspace, ==, sbx_profile_get_workspace_root (profile));
  g_assert_cmpuint (abi->required_guarantees, ==, sbx_profile_get_required_guarantees (profile));
  g_assert_cmpuint (abi->limits->max_processes, ==, 64);
  g_assert_cmpuint (abi->limits->max_memory_bytes, ==, 1 << 20);
  g_assert_cmpuint (abi->limits->max_open_files, ==, 128);
  inside = g_build_filename (sbx_profile_get_workspace_root (profile), "f", NULL);
  g_assert_cmpuint (resolve (abi, inside), ==, RX);
  g_clear_pointer (&inside, g_free);
  inside = g_build_filename (sbx_profile_get_root_path (profile, 0), "f", NULL);
  g_assert_cmpuint (resolve (abi, inside), ==, RWX);
  g_assert_cmpuint (abi->flags & SBX_POLICY_DENIED_NOT_FOUND, ==, 0);
  g_clear_pointer (&policy, sbx_policy_free);
  g_clear_pointer (&profile, sbx_profile_unref);

  /* the profile's "denied-paths": "not-found" reaches the backend */
  sbx_profile_config_set_denied_paths (config, SBX_DENIED_PATHS_NOT_FOUND);
  profile = sbx_profile_new (config, &error);
  g_assert_no_error (error);
  policy = sbx_policy_new_for_profile (profile, &test_dirs);
  g_assert_cmpuint (sbx_policy_get_abi (policy)->flags & SBX_POLICY_DENIED_NOT_FOUND, ==,
                    SBX_POLICY_DENIED_NOT_FOUND);

  etu_rm_rf (tmp);
}

/* ------------------------------------------------------------------------- */
/* ResolveFS                                                                  */
/* ------------------------------------------------------------------------- */

#define TREE(p, a, d)  { sizeof (SbxFsRuleV1), 0, (a), (d), SBX_FS_ORIGIN_HOST, -1, (p) }
#define EXACT(p, a, d) { sizeof (SbxFsRuleV1), SBX_FS_RULE_EXACT, (a), (d), SBX_FS_ORIGIN_HOST, -1, (p) }
#define GLOB(p, a, d)  { sizeof (SbxFsRuleV1), SBX_FS_RULE_GLOB, (a), (d), SBX_FS_ORIGIN_HOST, -1, (p) }

typedef struct
{
  const char *name;
  SbxFsRuleV1 rules[4];
  guint       n_rules;
  const char *path;
  guint32     expected;
} ResolveRow;

static const ResolveRow resolve_rows[] = {
  { "no-rule-denies", { TREE ("/a", R, 0) }, 1, "/b", 0 },
  { "no-rule-for-axis-denies", { TREE ("/", R, 0) }, 1, "/x", R },
  { "empty-policy", { TREE ("/a", R, 0) }, 0, "/a", 0 },
  { "tree-matches-itself", { TREE ("/a", RWX, 0) }, 1, "/a", RWX },
  { "tree-matches-descendant", { TREE ("/a", RWX, 0) }, 1, "/a/b/c", RWX },
  { "tree-boundary-is-slash", { TREE ("/work/repo", RWX, 0) }, 1, "/work/repository", 0 },
  { "root-matches-everything", { TREE ("/", RX, W) }, 1, "/any/path", RX },
  { "most-specific-wins", { TREE ("/", RWX, 0), TREE ("/home", 0, RWX) }, 2, "/home/u/f", 0 },
  { "most-specific-wins-outside", { TREE ("/", RWX, 0), TREE ("/home", 0, RWX) }, 2, "/etc/f", RWX },
  { "narrow-allow-beats-broad-deny", { TREE ("/", 0, RWX), TREE ("/w", RX, W) }, 2, "/w/f", RX },
  { "axes-are-independent", { TREE ("/", RX, W), TREE ("/w", W, 0) }, 2, "/w/f", RWX },
  { "tie-allows-union", { TREE ("/a", R, 0), TREE ("/a", W, 0) }, 2, "/a/f", RW },
  { "tie-deny-wins", { TREE ("/a", RWX, 0), TREE ("/a", 0, W) }, 2, "/a/f", RX },
  { "tie-deny-wins-either-order", { TREE ("/a", 0, W), TREE ("/a", RWX, 0) }, 2, "/a/f", RX },
  { "exact-deny-only-at-target", { TREE ("/a", RWX, 0), EXACT ("/a/b", 0, RWX) }, 2, "/a/b", 0 },
  { "exact-deny-spares-children", { TREE ("/a", RWX, 0), EXACT ("/a/b", 0, RWX) }, 2, "/a/b/c", RWX },
  { "exact-grant-beats-tree-deny", { TREE ("/a", 0, RWX), EXACT ("/a", R, 0) }, 2, "/a", R },
  { "exact-grant-opens-no-children", { TREE ("/a", 0, RWX), EXACT ("/a/f", R, 0) }, 2, "/a/f/x", 0 },
  { "exact-grant-at-target", { TREE ("/a", 0, RWX), EXACT ("/a/f", R, 0) }, 2, "/a/f", R },
  { "exact-grant-no-neighbour", { TREE ("/a", 0, RWX), EXACT ("/a/f", R, 0) }, 2, "/a/fx", 0 },
  { "zero-rule-denies-all", { TREE ("/", RWX, 0), TREE ("/x", 0, 0) }, 2, "/x/y", 0 },
  { "zero-rule-elsewhere", { TREE ("/", RWX, 0), TREE ("/x", 0, 0) }, 2, "/y", RWX },
  { "path-is-cleaned", { TREE ("/a/c", R, 0) }, 1, "/a/./b/../c//f", R },
  { "path-cleaning-no-escape", { TREE ("/a", R, 0) }, 1, "/a/../etc/passwd", 0 },
  { "case-sensitive", { TREE ("/A", RWX, 0) }, 1, "/a", 0 },
  { "rule-path-cleaned", { TREE ("/a/", RWX, 0) }, 1, "/a/f", RWX },
  /* Glob denies are hard overrides, applied last. */
  { "glob-deny-overrides-specific-allow",
    { TREE ("/", RWX, 0), TREE ("/w/deep/dir", RWX, 0), GLOB ("**/.env*", 0, R) }, 3,
    "/w/deep/dir/.env.local", X | W },
  { "glob-deny-miss", { TREE ("/", RWX, 0), GLOB ("**/.env*", 0, R) }, 2, "/w/env", RWX },
  { "glob-star-stays-in-segment", { TREE ("/", RWX, 0), GLOB ("/w/*/key", 0, RWX) }, 2, "/w/a/key", 0 },
  { "glob-star-no-slash", { TREE ("/", RWX, 0), GLOB ("/w/*/key", 0, RWX) }, 2, "/w/a/b/key", RWX },
  { "glob-double-star-crosses", { TREE ("/", RWX, 0), GLOB ("/w/**/key", 0, RWX) }, 2, "/w/a/b/key", 0 },
  { "glob-question-one-char", { TREE ("/", RWX, 0), GLOB ("/w/?", 0, W) }, 2, "/w/a", RX },
  { "glob-question-not-slash", { TREE ("/", RWX, 0), GLOB ("/w?a", 0, W) }, 2, "/w/a", RWX },
  { "glob-class", { TREE ("/", RWX, 0), GLOB ("/w/[abc].txt", 0, R) }, 2, "/w/b.txt", X | W },
  { "glob-class-miss", { TREE ("/", RWX, 0), GLOB ("/w/[abc].txt", 0, R) }, 2, "/w/d.txt", RWX },
  { "glob-class-negated-bang", { TREE ("/", RWX, 0), GLOB ("/w/[!a]", 0, R) }, 2, "/w/a", RWX },
  { "glob-class-negated-caret", { TREE ("/", RWX, 0), GLOB ("/w/[^a]", 0, R) }, 2, "/w/b", X | W },
  { "glob-class-unicode-range", { TREE ("/", RWX, 0), GLOB ("/w/[α-ω]", 0, R) }, 2, "/w/β", X | W },
  { "glob-class-unicode-miss", { TREE ("/", RWX, 0), GLOB ("/w/[α-ω]", 0, R) }, 2, "/w/b", RWX },
  { "glob-unclosed-bracket-literal", { TREE ("/", RWX, 0), GLOB ("/w/[b", 0, R) }, 2, "/w/[b", X | W },
  { "glob-unclosed-bracket-not-class", { TREE ("/", RWX, 0), GLOB ("/w/[b", 0, R) }, 2, "/w/b", RWX },
  { "glob-case-sensitive", { TREE ("/", RWX, 0), GLOB ("/w/*.PEM", 0, R) }, 2, "/w/k.pem", RWX },
  /* Malformed globs fail closed on both sides. */
  { "malformed-deny-glob-denies-all", { TREE ("/", RWX, 0), GLOB ("/w/[z-a]", 0, W) }, 2, "/etc/x", RX },
  { "malformed-allow-glob-grants-nothing", { GLOB ("/w/[z-a]", RWX, 0) }, 1, "/w/[z-a]", 0 },
  { "valid-allow-glob-grants", { GLOB ("/w/*.txt", R, 0) }, 1, "/w/a.txt", R },
  /* A glob's specificity is its literal prefix. */
  { "glob-prefix-specificity", { TREE ("/", 0, RWX), GLOB ("/w/src/*.c", R, 0) }, 2, "/w/src/a.c", R },
};

static void
test_resolve_table (gconstpointer data)
{
  const ResolveRow *row = data;
  guint32 got = sbx_fs_resolve (row->rules, row->n_rules, row->path);

  if (got != row->expected)
    g_error ("%s: resolve(%s) = %u, expected %u", row->name, row->path, got, row->expected);
}

typedef struct
{
  const char *pattern;
  const char *path;
  gboolean    match;
  gboolean    valid;
} GlobRow;

static const GlobRow glob_rows[] = {
  { "/a/b", "/a/b", TRUE, TRUE },
  { "/a/b", "/a/bc", FALSE, TRUE },
  { "/a/*", "/a/", TRUE, TRUE },
  { "/a/*", "/a/b", TRUE, TRUE },
  { "/a/*", "/a/b/c", FALSE, TRUE },
  { "/a/**", "/a/b/c", TRUE, TRUE },
  { "**", "", TRUE, TRUE },
  { "**/x", "/deep/er/x", TRUE, TRUE },
  { "*x*", "axb", TRUE, TRUE },
  { "*x*", "a/xb", FALSE, TRUE },
  { "a?c", "abc", TRUE, TRUE },
  { "a?c", "ac", FALSE, TRUE },
  { "a?c", "a/c", FALSE, TRUE },
  { "a?c", "aéc", TRUE, TRUE },          /* one code point, two bytes */
  { "[]a]", "]", TRUE, TRUE },           /* ']' first is literal */
  { "[]a]", "a", TRUE, TRUE },
  { "[!]a]", "b", TRUE, TRUE },
  { "[a-]", "-", TRUE, TRUE },
  { "[a-c]", "b", TRUE, TRUE },
  { "[a-c]", "d", FALSE, TRUE },
  { "[^/]", "/", FALSE, TRUE },
  { "[^a]", "/", TRUE, TRUE },           /* a negated class may match '/' */
  { "[c-a]", "b", FALSE, FALSE },        /* reversed range: malformed */
  { "x[", "x[", TRUE, TRUE },            /* unclosed: literal */
  { "x[ab", "x[ab", TRUE, TRUE },
  { "x[ab", "xa", FALSE, TRUE },
  { "A", "a", FALSE, TRUE },
  { "**a**a**a**a**a**b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", FALSE, TRUE },
};

static void
test_glob_table (void)
{
  for (gsize r = 0; r < G_N_ELEMENTS (glob_rows); r++)
    {
      gboolean valid = !glob_rows[r].valid;
      gboolean match = sbx_fs_glob_match (glob_rows[r].pattern, glob_rows[r].path, &valid);

      if (match != glob_rows[r].match || valid != glob_rows[r].valid)
        g_error ("glob %s vs %s: match %d valid %d, expected %d %d", glob_rows[r].pattern,
                 glob_rows[r].path, match, valid, glob_rows[r].match, glob_rows[r].valid);
    }
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  g_test_add_func ("/policy/compile/sandboxed-order", test_compile_sandboxed_order);
  g_test_add_func ("/policy/compile/runtime-link-target", test_runtime_link_target);
  g_test_add_func ("/policy/compile/root-access-table", test_compile_root_access_table);
  g_test_add_func ("/policy/compile/home-tmpdir", test_compile_home_tmpdir);
  g_test_add_func ("/policy/compile/set-dir-denied", test_compile_set_dir_denied);
  g_test_add_func ("/policy/compile/scratch-snapshot", test_compile_scratch_snapshot);
  g_test_add_func ("/policy/compile/network", test_compile_network);
  g_test_add_func ("/policy/compile/limits", test_compile_limits);
  g_test_add_func ("/policy/compile/unconfined", test_compile_unconfined);
  g_test_add_func ("/policy/compile/gated-resolves-to-nothing", test_compile_gated_resolves_to_nothing);
  g_test_add_func ("/policy/compile/for-profile", test_compile_for_profile);
  g_test_add_func ("/policy/runtime/ordinary-programs", test_runtime_closure_ordinary_programs);
  for (gsize r = 0; r < G_N_ELEMENTS (resolve_rows); r++)
    {
      g_autofree char *path = g_strdup_printf ("/policy/resolve/%s", resolve_rows[r].name);

      g_test_add_data_func (path, &resolve_rows[r], test_resolve_table);
    }
  g_test_add_func ("/policy/glob/table", test_glob_table);

  return g_test_run ();
}
