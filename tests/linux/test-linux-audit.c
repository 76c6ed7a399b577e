/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Filesystem denials at rung 2 (plugins/linux/sbx-linux-audit.c): the
 * "fs-denials" entry says why Landlock's refusals are not observed, and no
 * denial is ever invented.
 *
 *  - every host state has its own "not observed: ..." detail, none claims
 *    more (detail/every-state);
 *  - the state measured here is this host's: an unprivileged caller cannot
 *    join the audit read-log group (CAP_AUDIT_READ); for root the kernel is
 *    asked, and the answer is checked against what the kernel does: a
 *    Landlock refusal of a child of this test shows in the audit records
 *    exactly when the entry would say they are readable (audit enabled).
 *    A seccomp kill of a second child, logged even with audit disabled, is
 *    the positive control that records reach the reader at all
 *    (measure/matches-kernel); measuring leaves no descriptor behind;
 *  - a rung-2 compile has exactly one "fs-denials" entry, and compiling
 *    leaves no descriptor or thread behind (compile/one-entry);
 *  - through the library at rung 2: a read, a write, an exec and a listing
 *    outside the policy each fail with "Permission denied" (and work
 *    without the sandbox: the positive control), and the run gives no
 *    denial, as the run's report says; a run that touches nothing denied
 *    gives none either (rung2/none-invented).
 * Runs as root and unprivileged; what a caller cannot do is said and
 * skipped, never assumed.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/netlink.h>
#include <linux/seccomp.h>

#include <glib/gstdio.h>
#include <sbx/sbx-cleanup.h>

#include "backend-test-util.h"
#include "executor-test-util.h"
#include "sbx-landlock-compat.h"
#include "sbx-linux-audit.h"

#ifndef AUDIT_LANDLOCK_ACCESS
#define AUDIT_LANDLOCK_ACCESS 1423
#endif
#ifndef AUDIT_LANDLOCK_DOMAIN
#define AUDIT_LANDLOCK_DOMAIN 1424
#endif

#define RUNG2 "linux-landlock"

/* ---- detail/every-state ---- */

typedef struct
{
  int         host;
  int         err;
  const char *says;   /* the reason, as the detail must name it */
} StateCase;

static void
test_detail_every_state (void)
{
  static const StateCase cases[] = {
    { SBX_LINUX_AUDIT_LANDLOCK_OLD, 0, "Landlock ABI 6 < 7" },
    { SBX_LINUX_AUDIT_ABSENT, EPROTONOSUPPORT, "a kernel without audit, or the filter of a sandbox" },
    { SBX_LINUX_AUDIT_NO_SOCKET, EACCES, "audit netlink socket could not be opened" },
    { SBX_LINUX_AUDIT_NO_CAP, EPERM, "needs CAP_AUDIT_READ" },
    { SBX_LINUX_AUDIT_NO_GROUP, ENOMEM, "read-log group could not be joined" },
    { SBX_LINUX_AUDIT_STATE_UNKNOWN, ETIMEDOUT, "audit state could not be read (AUDIT_GET: " },
    { SBX_LINUX_AUDIT_DISABLED, 0, "the kernel's audit is disabled" },
    { SBX_LINUX_AUDIT_READABLE, 0, "the backend does not read Landlock's audit records" },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      SbxLinuxAudit audit = { cases[i].host, cases[i].host == SBX_LINUX_AUDIT_LANDLOCK_OLD ? 6 : 7,
                              cases[i].err };
      uint32_t status = 0;
      g_autofree char *detail = sbx_linux_audit_detail (&audit, &status);

      g_test_message ("state %d: %s", cases[i].host, detail);
      g_assert_cmpuint (status, ==, SBX_ABI_REPORT_UNENFORCED);
      g_assert_true (g_str_has_prefix (detail, "not observed: "));
      g_assert_nonnull (strstr (detail, cases[i].says));
      g_assert_nonnull (strstr (detail, "EACCES, unreported"));
      if (cases[i].err != 0 && cases[i].host != SBX_LINUX_AUDIT_NO_CAP)
        g_assert_nonnull (strstr (detail, g_strerror (cases[i].err)));
    }
}

/* ---- measure/matches-kernel ---- */

/* A child that Landlock refuses reading @path (a ruleset handling file
 * reads with no rule), in the same execution that restricted itself: the
 * kernel's default logging covers exactly that. */
static pid_t
spawn_landlock_refusal (const char *path)
{
  pid_t pid = fork ();

  g_assert_cmpint (pid, >=, 0);
  if (pid == 0)
    {
      struct sbx_landlock_ruleset_attr attr = { .handled_access_fs = LANDLOCK_ACCESS_FS_READ_FILE };
      long ruleset = syscall (__NR_landlock_create_ruleset, &attr, sizeof attr.handled_access_fs, 0);
      int fd;

      if (ruleset < 0 || prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
          || syscall (__NR_landlock_restrict_self, (int) ruleset, 0) != 0)
        _exit (2);
      fd = open (path, O_RDONLY | O_CLOEXEC);
      _exit (fd < 0 && errno == EACCES ? 0 : 1);
    }
  return pid;
}

/* A child that a seccomp filter kills at getppid(): the kernel logs the
 * kill (kernel.seccomp.actions_logged) whether or not audit is enabled. */
static pid_t
spawn_seccomp_kill (void)
{
  pid_t pid = fork ();

  g_assert_cmpint (pid, >=, 0);
  if (pid == 0)
    {
      struct sock_filter filter[] = {
        BPF_STMT (BPF_LD | BPF_W | BPF_ABS, offsetof (struct seccomp_data, nr)),
        BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, __NR_getppid, 0, 1),
        BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
        BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      };
      struct sock_fprog prog = { G_N_ELEMENTS (filter), filter };

      if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
          || prctl (PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0)
        _exit (2);
      syscall (__NR_getppid);
      _exit (3);
    }
  return pid;
}

static int
wait_child (pid_t pid)
{
  int status = 0;

  g_assert_cmpint (TEMP_FAILURE_RETRY (waitpid (pid, &status, 0)), ==, pid);
  return status;
}

/* Reads the read-log group until the seccomp record of @killed arrives
 * (records leave the kernel in the order they were made, so any record of
 * the Landlock child, refused before, has arrived by then).  Returns FALSE
 * when it never comes within @timeout_ms; *landlock says whether a Landlock
 * record named @path. */
static gboolean
read_records_until (int         fd,
                    pid_t       killed,
                    const char *path,
                    int         timeout_ms,
                    gboolean   *landlock)
{
  g_autofree char *pid_field = g_strdup_printf (" pid=%d ", (int) killed);
  g_autofree char *path_field = g_strdup_printf ("path=\"%s\"", path);
  gint64 deadline = g_get_monotonic_time () / 1000 + timeout_ms;

  *landlock = FALSE;
  for (;;)
    {
      char buf[9000] __attribute__ ((aligned (NLMSG_ALIGNTO)));
      struct pollfd pfd = { .fd = fd, .events = POLLIN };
      gint64 left = deadline - g_get_monotonic_time () / 1000;
      const struct nlmsghdr *h = (const struct nlmsghdr *) buf;
      g_autofree char *text = NULL;
      ssize_t n;

      if (left <= 0 || poll (&pfd, 1, (int) left) <= 0)
        return FALSE;
      n = recv (fd, buf, sizeof buf - 1, MSG_DONTWAIT);
      if (n < (ssize_t) NLMSG_HDRLEN || !NLMSG_OK (h, (size_t) n))
        continue;
      text = g_strndup (NLMSG_DATA (h), h->nlmsg_len - NLMSG_HDRLEN);
      if ((h->nlmsg_type == AUDIT_LANDLOCK_ACCESS || h->nlmsg_type == AUDIT_LANDLOCK_DOMAIN)
          && strstr (text, path_field) != NULL)
        {
          g_test_message ("Landlock record: %s", text);
          *landlock = TRUE;
        }
      if (h->nlmsg_type == AUDIT_SECCOMP && strstr (text, pid_field) != NULL)
        return TRUE;
    }
}

static void
test_measure_matches_kernel (void)
{
  SbxLinuxAudit audit;
  struct sockaddr_nl addr = { .nl_family = AF_NETLINK, .nl_groups = 1u << (AUDIT_NLGRP_READLOG - 1) };
  int abi = (int) syscall (__NR_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
  guint fds_before = etu_count_fds ();
  g_autofree char *dir = NULL;
  g_autofree char *path = NULL;
  g_autofree char *detail = NULL;
  uint32_t status;
  gboolean landlock = FALSE;
  sbx_autofd int fd = -1;
  pid_t refused, killed;

  sbx_linux_audit_measure (abi, &audit);
  detail = sbx_linux_audit_detail (&audit, &status);
  g_test_message ("this host: %s", detail);
  g_assert_cmpuint (etu_count_fds (), ==, fds_before);
  if (abi < 7)
    {
      g_assert_cmpint (audit.host, ==, SBX_LINUX_AUDIT_LANDLOCK_OLD);
      g_test_skip_printf ("Landlock ABI %d logs nothing: nothing to compare with", abi);
      return;
    }
  fd = socket (AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_AUDIT);
  if (fd < 0)
    {
      int saved = errno;

      g_assert_cmpint (audit.host, ==, saved == EPROTONOSUPPORT ? SBX_LINUX_AUDIT_ABSENT
                       : SBX_LINUX_AUDIT_NO_SOCKET);
      g_assert_cmpint (audit.err, ==, saved);
      g_test_skip_printf ("no NETLINK_AUDIT here (%s)", g_strerror (saved));
      return;
    }
  if (bind (fd, (struct sockaddr *) &addr, sizeof addr) < 0)
    {
      /* The backend's measure met the same refusal. */
      g_assert_cmpint (errno, ==, EPERM);
      g_assert_cmpint (audit.host, ==, SBX_LINUX_AUDIT_NO_CAP);
      g_assert_cmpint (audit.err, ==, EPERM);
      if (geteuid () != 0)
        g_test_message ("unprivileged: the read-log group is closed to this caller, as reported");
      return;
    }
  g_assert_true (audit.host == SBX_LINUX_AUDIT_DISABLED || audit.host == SBX_LINUX_AUDIT_READABLE
                 || audit.host == SBX_LINUX_AUDIT_STATE_UNKNOWN);

  dir = etu_make_tmpdir ("sbx-audit-XXXXXX");
  path = etu_write_file (dir, "refused-by-landlock", "x\n");
  refused = spawn_landlock_refusal (path);
  /* Landlock refused the read: the refusal happened, whatever is logged. */
  g_assert_cmpint (wait_child (refused), ==, 0);
  killed = spawn_seccomp_kill ();
  g_assert_true (WIFSIGNALED (wait_child (killed)));
  if (!read_records_until (fd, killed, path, 10000, &landlock))
    {
      etu_rm_rf (dir);
      g_test_skip ("no seccomp record reached the read-log group within 10 s (kill_process not in "
                   "kernel.seccomp.actions_logged?): nothing shows the reader works");
      return;
    }
  etu_rm_rf (dir);
  g_test_message ("Landlock record for the refused read: %s", landlock ? "yes" : "no");
  if (audit.host == SBX_LINUX_AUDIT_DISABLED)
    g_assert_false (landlock);
  else if (audit.host == SBX_LINUX_AUDIT_READABLE)
    g_assert_true (landlock);
}

/* ---- compile/one-entry ---- */

static guint
count_threads (void)
{
  g_autoptr(GDir) d = g_dir_open ("/proc/self/task", 0, NULL);
  guint n = 0;

  g_assert_nonnull (d);
  while (g_dir_read_name (d) != NULL)
    n++;
  return n;
}

static void
test_compile_one_entry (void)
{
  g_autofree char *why = NULL;
  g_autofree char *ws = NULL;
  g_autoptr(LinuxTestPolicy) policy = NULL;
  g_autoptr(LinuxTestBackend) backend = NULL;
  guint fds, threads;

  if (!linux_test_have_rung (RUNG2, &why))
    {
      g_test_skip (why);
      return;
    }
  ws = etu_make_tmpdir ("sbx-audit-ws-XXXXXX");
  policy = linux_test_policy_new (ws, 2, 2, 0, 0);
  backend = linux_test_backend_new (RUNG2);
  /* The first compile makes what the backend keeps for good (its probe). */
  g_assert_cmpint (linux_test_backend_compile (backend, linux_test_policy_get (policy)), ==, SBX_STATUS_OK);
  fds = etu_count_fds ();
  threads = count_threads ();
  for (int i = 0; i < 20; i++)
    {
      guint n = 0;

      g_assert_cmpint (linux_test_backend_compile (backend, linux_test_policy_get (policy)), ==,
                       SBX_STATUS_OK);
      for (guint j = 0; j < backend->th.entries->len; j++)
        {
          const LinuxTestEntry *e = g_ptr_array_index (backend->th.entries, j);

          if (strcmp (e->feature, SBX_LINUX_FEATURE_FS_DENIALS) == 0)
            {
              n++;
              g_assert_cmpuint (e->status, ==, SBX_ABI_REPORT_UNENFORCED);
              g_assert_true (g_str_has_prefix (e->detail, "not observed: "));
            }
        }
      g_assert_cmpuint (n, ==, 1);
    }
  g_assert_cmpuint (etu_count_fds (), ==, fds);
  g_assert_cmpuint (count_threads (), ==, threads);
  g_clear_pointer (&backend, linux_test_backend_free);
  g_clear_pointer (&policy, linux_test_policy_free);
  etu_rm_rf (ws);
}

/* ---- rung2/none-invented ---- */

typedef struct
{
  const char *name;
  const char *before;   /* the script is before + the host directory + after */
  const char *after;
} Attempt;

static const Attempt attempts[] = {
  { "read", "cat ", "/secret" },
  { "write", "echo x > ", "/created" },
  { "exec", "", "/tool" },
  { "list", "ls ", "" },
};

/* Runs @script with /bin/sh, no sandbox: the positive control. */
static int
host_sh (const char *script,
         char      **output)
{
  const char *argv[] = { "/bin/sh", "-c", script, NULL };
  g_autoptr(GError) error = NULL;
  int status = 0;

  g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL,
                               output, NULL, &status, &error));
  g_assert_no_error (error);
  return status;
}

static char *
output_of (SbxRunResult *result)
{
  gsize len = 0;
  const char *data = g_bytes_get_data (sbx_run_result_get_output (result), &len);

  return g_strndup (data != NULL ? data : "", len);
}

/* The run's report says, once, that denials are not observed, and why. */
static void
assert_entry_not_observed (SbxRunResult *result,
                           const char   *expected)
{
  SbxCompileReport *report = sbx_run_result_get_spawn_report (result);
  guint n = 0;

  for (guint i = 0; i < sbx_compile_report_get_n_entries (report); i++)
    if (g_strcmp0 (sbx_compile_report_get_entry_feature (report, i), SBX_LINUX_FEATURE_FS_DENIALS) == 0)
      {
        n++;
        g_assert_cmpint (sbx_compile_report_get_entry_status (report, i), ==, SBX_REPORT_STATUS_UNENFORCED);
        g_assert_cmpstr (sbx_compile_report_get_entry_detail (report, i), ==, expected);
      }
  g_assert_cmpuint (n, ==, 1);
}

static void
test_rung2_none_invented (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SbxRegistry) registry = etu_registry ("linux", NULL);
  g_autoptr(SbxProfileConfig) config = sbx_profile_config_new ();
  g_autoptr(SbxProfile) profile = NULL;
  g_autoptr(SbxExecutorSetOptions) options = NULL;
  g_autoptr(SbxExecutorSet) set = NULL;
  g_autoptr(SbxExecutor) executor = NULL;
  g_autoptr(SbxRunResult) clean = NULL;
  g_autofree char *host_dir = g_strdup ("/var/tmp/sbx-test-audit-XXXXXX");
  g_autofree char *tool = NULL;
  g_autofree char *expected = NULL;
  SbxLinuxAudit audit;
  uint32_t status;
  EtuTree tree;

  etu_tree_init (&tree);
  g_assert_nonnull (g_mkdtemp (host_dir));
  g_free (etu_write_file (host_dir, "secret", "S3CRET\n"));
  tool = etu_write_file (host_dir, "tool", "#!/bin/sh\necho TOOL-RAN\n");
  g_assert_cmpint (g_chmod (tool, 0755), ==, 0);

  sbx_profile_config_set_workspace (config, tree.ws, SBX_ACCESS_ALLOW, SBX_ACCESS_ALLOW);
  sbx_profile_config_set_host (config, SBX_ACCESS_DENY, SBX_ACCESS_DENY);
  sbx_profile_config_set_network (config, SBX_ACCESS_DENY);
  sbx_profile_config_set_command (config, SBX_ACCESS_ALLOW);
  profile = sbx_profile_new (config, &error);
  g_assert_no_error (error);
  options = etu_options (tree.scratch, 4, registry);
  sbx_executor_set_options_set_backend (options, RUNG2);
  set = sbx_executor_set_new (profile, options, &error);
  if (set == NULL)
    {
      g_test_skip_printf ("%s is unavailable here: %s", RUNG2, error->message);
      etu_rm_rf (host_dir);
      etu_tree_clear (&tree);
      return;
    }
  executor = sbx_executor_set_for_key (set, "k", &error);
  g_assert_no_error (error);
  sbx_linux_audit_measure ((int) syscall (__NR_landlock_create_ruleset, NULL, 0,
                                          LANDLOCK_CREATE_RULESET_VERSION), &audit);
  expected = sbx_linux_audit_detail (&audit, &status);

  for (gsize i = 0; i < G_N_ELEMENTS (attempts); i++)
    {
      g_autofree char *script = g_strconcat (attempts[i].before, host_dir, attempts[i].after, NULL);
      g_autofree char *inside = g_strdup_printf ("%s 2>&1; echo rc=$?", script);
      g_autofree char *host_out = NULL;
      g_autofree char *out = NULL;
      g_autofree char *created = g_build_filename (host_dir, "created", NULL);
      g_autoptr(SbxRunResult) result = NULL;

      /* Without the sandbox it works. */
      g_assert_cmpint (host_sh (script, &host_out), ==, 0);
      g_unlink (created);
      result = sbx_executor_run (executor, tree.ws, SBX_SH_ARGV (inside), NULL, NULL, &error);
      g_assert_no_error (error);
      out = output_of (result);
      g_test_message ("%s inside: %s", attempts[i].name, out);
      g_assert_nonnull (strstr (out, "Permission denied"));
      g_assert_null (strstr (out, "rc=0"));
      g_assert_null (strstr (out, "S3CRET"));
      g_assert_null (strstr (out, "TOOL-RAN"));
      g_assert_false (g_file_test (created, G_FILE_TEST_EXISTS));
      /* Refused, and not reported: nothing observed, nothing invented. */
      g_assert_cmpuint (sbx_run_result_get_denials (result)->len, ==, 0);
      g_assert_cmpuint (sbx_run_result_get_denials_dropped (result), ==, 0);
      assert_entry_not_observed (result, expected);
    }

  /* A run that touches nothing denied. */
  clean = sbx_executor_run (executor, tree.ws, SBX_SH_ARGV ("echo ok > out && cat out && ls >/dev/null"),
                            NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (sbx_run_result_get_exit_status (clean), ==, 0);
  g_assert_cmpuint (sbx_run_result_get_denials (clean)->len, ==, 0);
  assert_entry_not_observed (clean, expected);

  g_assert_true (sbx_executor_set_close (set, NULL, NULL));
  etu_rm_rf (host_dir);
  etu_tree_clear (&tree);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
  g_test_add_func ("/linux/audit/detail/every-state", test_detail_every_state);
  g_test_add_func ("/linux/audit/measure/matches-kernel", test_measure_matches_kernel);
  g_test_add_func ("/linux/audit/compile/one-entry", test_compile_one_entry);
  g_test_add_func ("/linux/audit/rung2/none-invented", test_rung2_none_invented);
  return g_test_run ();
}
