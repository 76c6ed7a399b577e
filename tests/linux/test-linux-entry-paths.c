/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Every rule of the system-call filter on every entry path the kernel
 * offers, on both rungs, through the backend's real spawn path.
 *
 * One table (ops[] below) names each operation the filter refuses and what
 * the target must get at each rung.  tests/linux/entry-probe/sbx-entry-probe
 * (a static helper) performs the operations through one entry:
 *   native  the x86_64 `syscall` instruction;
 *   i386    `int $0x80` with i386 numbers from the 64-bit process, every
 *           pointer below 4 GiB (the reported escape's path);
 *   x32     `syscall` with __X32_SYSCALL_BIT: the filter kills it whole.
 * The probe runs inside the sandbox and, as the positive control, outside
 * it with the same arguments: there the operation succeeds or the kernel
 * answers differently (arguments are chosen so the kernel fails early, even
 * for root, without changing the host).  An unprivileged control that gives
 * the filter's own errno (EPERM from a capability check) cannot tell the two
 * apart: it is logged, and the root run of the suite decides it; the
 * security-relevant rows (sockets, set-id bits, SysV IPC, watches) must be
 * told apart under any uid.
 *
 * The table is tied to the filter: every rule sbx_seccomp_program_rules()
 * lists must be exercised by some row (or be named below with the reason it
 * is not run live), so a rule cannot be added without its live probe.
 *
 * Also here, end to end with ordinary programs: the datagram through the
 * 32-bit gate (a host listener must receive nothing), a host SysV segment,
 * set-id files as `cp && chmod 6755`, host unix sockets in the workspace and
 * in a read-only root, and inotify on a directory the target cannot list.
 *
 * These are the cases of one module, the system-call filter, per entry path: one GTest
 * binary per concept, so it is over a thousand lines.
 */
#include "backend-test-util.h"
#include "executor-test-util.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <glib/gstdio.h>
#include <netinet/in.h>
#include <sys/inotify.h>
#include <sys/ipc.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <arpa/inet.h>

#include "sbx-linux-private.h"
#include "sbx-seccomp.h"

/* Expected results: "ok", "eN", or one of these. */
#define ANY     NULL       /* allowed at this rung: not asserted beyond "not killed" */
#define NOT_OK  "!ok"      /* anything but success */
#define SAME    "="        /* allowed at this rung: exactly what the kernel answers outside */

typedef struct
{
  const char *op;        /* sbx-entry-probe operation */
  const char *calls;     /* the system calls it makes (space-separated), for the coverage check */
  const char *rung1;     /* expected inside, linux-userns */
  const char *rung2;     /* expected inside, linux-landlock */
  gboolean    key;       /* the control must differ under any uid */
} OpRow;

static const OpRow ops[] = {
  { "getpid", "getpid", "ok", "ok", FALSE },
  /* socket families and types (network deny, unix sockets closed) */
  { "sock_inet_dgram", "socket", "ok", "e13", TRUE },
  { "sock_inet_stream", "socket", "ok", "e13", TRUE },
  { "sock_inet6_dgram", "socket", "ok", "e13", TRUE },
  { "sock_inet6_stream", "socket", "ok", "e13", TRUE },
  { "sock_inet_raw", "socket", "e1", "e13", FALSE },
  { "sock_unix_stream", "socket", "ok", "ok", FALSE },
  { "sock_unix_dgram", "socket", "e13", "e13", TRUE },
  /* unix connects go to the supervisor: the sandbox's own socket is
   * reachable, a host daemon's socket in the workspace is not */
  { "unix_connect_own", "socket bind listen connect unlink", "ok", "ok", FALSE },
  { "unix_connect_host", "socket connect", "e13", "e13", TRUE },
  { "sock_vsock", "socket", "e97", "e97", TRUE },
  { "sock_packet", "socket", "e97", "e97", FALSE },
  { "sock_netlink_diag", "socket", "e93", "e93", TRUE },
  { "sock_netlink_route", "socket", "ok", "ok", FALSE },
  { "socketpair_unix", "socketpair", "ok", "ok", FALSE },
  { "socketcall_socket", "socketcall", "e38", "e38", TRUE },
  { "socketcall_socketpair", "socketcall", "e38", "e38", TRUE },
  /* namespaces */
  { "setns", "setns", "e1", "e1", FALSE },
  { "unshare_user", "unshare", "e1", "e1", FALSE },
  { "unshare_net", "unshare", "e1", "e1", FALSE },
  { "unshare_mount", "unshare", "e1", "e1", FALSE },
  { "unshare_ipc", "unshare", "e1", "e1", FALSE },
  { "clone_newuser", "clone", "e1", "e1", FALSE },
  { "clone3", "clone3", "e38", "e38", FALSE },
  /* mount family */
  { "mount", "mount", "e1", "e1", FALSE },
  { "umount", "umount", "e1", "e1", FALSE },
  { "umount2", "umount2", "e1", "e1", FALSE },
  { "pivot_root", "pivot_root", "e1", "e1", FALSE },
  { "move_mount", "move_mount", "e1", "e1", FALSE },
  { "open_tree", "open_tree", "e1", "e1", FALSE },
  { "fsopen", "fsopen", "e1", "e1", FALSE },
  { "fsmount", "fsmount", "e1", "e1", FALSE },
  { "fsconfig", "fsconfig", "e1", "e1", FALSE },
  { "fspick", "fspick", "e1", "e1", FALSE },
  { "mount_setattr", "mount_setattr", "e1", "e1", FALSE },
  { "chroot", "chroot", "e1", "e1", FALSE },
  /* keyrings, bpf, perf, userfaultfd, io_uring */
  { "keyctl", "keyctl", "e1", "e1", FALSE },
  { "add_key", "add_key", "e1", "e1", FALSE },
  { "request_key", "request_key", "e1", "e1", FALSE },
  { "bpf", "bpf", "e1", "e1", FALSE },
  { "perf_event_open", "perf_event_open", "e1", "e1", FALSE },
  { "userfaultfd", "userfaultfd", "e1", "e1", FALSE },
  { "io_uring_setup", "io_uring_setup", "e1", "e1", FALSE },
  { "io_uring_enter", "io_uring_enter", "e1", "e1", FALSE },
  { "io_uring_register", "io_uring_register", "e1", "e1", FALSE },
  /* other processes, file handles */
  { "ptrace", "ptrace", "e1", "e1", FALSE },
  { "process_vm_readv", "process_vm_readv", "e1", "e1", FALSE },
  { "process_vm_writev", "process_vm_writev", "e1", "e1", FALSE },
  { "pidfd_getfd", "pidfd_getfd", "e1", "e1", FALSE },
  { "kcmp", "kcmp", "e1", "e1", FALSE },
  { "open_by_handle_at", "open_by_handle_at", "e1", "e1", FALSE },
  { "name_to_handle_at", "name_to_handle_at", "e1", "e1", FALSE },
  /* host administration */
  { "init_module", "init_module", "e1", "e1", FALSE },
  { "finit_module", "finit_module", "e1", "e1", FALSE },
  { "delete_module", "delete_module", "e1", "e1", FALSE },
  { "kexec_load", "kexec_load", "e1", "e1", FALSE },
  { "kexec_file_load", "kexec_file_load", "e1", "e1", FALSE },
  { "reboot", "reboot", "e1", "e1", FALSE },
  { "swapon", "swapon", "e1", "e1", FALSE },
  { "swapoff", "swapoff", "e1", "e1", FALSE },
  { "acct", "acct", "e1", "e1", FALSE },
  { "quotactl", "quotactl", "e1", "e1", FALSE },
  { "quotactl_fd", "quotactl_fd", "e1", "e1", FALSE },
  { "syslog", "syslog", "e1", "e1", FALSE },
  { "iopl", "iopl", "e1", "e1", FALSE },
  { "ioperm", "ioperm", "e1", "e1", FALSE },
  { "modify_ldt", "modify_ldt", "e1", "e1", FALSE },
  { "lookup_dcookie", "lookup_dcookie", "e1", "e1", FALSE },
  { "nfsservctl", "nfsservctl", "e1", "e1", FALSE },
  { "uselib", "uselib", "e1", "e1", FALSE },
  { "vm86", "vm86", "e1", "e1", FALSE },
  { "vm86old", "vm86old", "e1", "e1", FALSE },
  /* terminals, personality, devices */
  { "tiocsti", "ioctl", "e1", "e1", TRUE },
  { "tioclinux", "ioctl", "e1", "e1", TRUE },
  { "personality_rie", "personality", "e1", "e1", TRUE },
  { "mknod_chr", "mknodat", "e1", "e1", FALSE },
  /* set-id bits, whatever the uid */
  { "chmod_setuid", "chmod", "e1", "e1", TRUE },
  { "chmod_setgid", "chmod", "e1", "e1", TRUE },
  { "fchmod_setuid", "fchmod", "e1", "e1", TRUE },
  { "fchmodat_setgid", "fchmodat", "e1", "e1", TRUE },
  { "fchmodat2_setuid", "fchmodat2", "e1", "e1", TRUE },
  { "open_creat_setuid", "open", "e1", "e1", TRUE },
  { "openat_creat_setgid", "openat", "e1", "e1", TRUE },
  { "creat_setuid", "creat", "e1", "e1", TRUE },
  { "open_tmpfile_setuid", "open", "e1", "e1", TRUE },
  { "mknod_reg_setuid", "mknod", "e1", "e1", TRUE },
  { "mknodat_reg_setgid", "mknodat", "e1", "e1", TRUE },
  { "openat2", "openat2", "e38", "e38", TRUE },
  { "chmod_plain", "chmod", "ok", "ok", FALSE },
  /* set-gid on a directory: the supervisor performs it (on a file: e1 above) */
  { "chmod_setgid_dir", "mkdir chmod rmdir", "ok", "ok", FALSE },
  { "fchmodat_setgid_dir", "mkdir fchmodat rmdir", "ok", "ok", FALSE },
  /* inotify and fanotify: rung 2 only (rung 1 sees only its mount view) */
  { "inotify_init", "inotify_init", "ok", "e38", TRUE },
  { "inotify_init1", "inotify_init1", "ok", "e38", TRUE },
  { "inotify_add_watch", "inotify_add_watch", SAME, "e1", TRUE },
  { "fanotify_init", "fanotify_init", ANY, "e38", FALSE },
  { "fanotify_mark", "fanotify_mark", SAME, "e1", TRUE },
  /* SysV IPC: rung 2 only (rung 1 has a private IPC namespace) */
  { "shmget", "shmget", "ok", "e1", TRUE },
  { "msgget", "msgget", "ok", "e1", TRUE },
  { "semget", "semget", "ok", "e1", TRUE },
  { "shmat_bad", "shmat", SAME, "e1", TRUE },
  { "shmdt", "shmdt", SAME, "e1", TRUE },
  { "shmctl", "shmctl", SAME, "e1", TRUE },
  { "msgsnd", "msgsnd", SAME, "e1", FALSE },
  { "msgrcv", "msgrcv", SAME, "e1", TRUE },
  { "msgctl", "msgctl", SAME, "e1", TRUE },
  { "semop", "semop", SAME, "e1", TRUE },
  { "semtimedop", "semtimedop", SAME, "e1", TRUE },
  { "semtimedop_time64", "semtimedop_time64", SAME, "e1", TRUE },
  { "semctl", "semctl", SAME, "e1", TRUE },
  { "ipc_shmget", "ipc", "ok", "e1", TRUE },
};

/* Rules not run live, and why. */
static const char *const exact_only[] = {
  /* revokes the controlling terminal when the unfiltered control runs as root */
  "vhangup",
  /* only in programs for Landlock ABI < 3 (this kernel's is newer); test-seccomp
   * proves them with a simulated ABI 2 */
  "truncate", "truncate64",
};

static const char *
probe_path (void)
{
  const char *p = g_getenv ("SBX_TEST_ENTRY_PROBE");

  g_assert_nonnull (p);
  return p;
}

typedef struct
{
  const char       *rung;
  char             *parent;
  char             *workspace;
  char             *probe;       /* the probe, copied into the workspace */
  LinuxTestPolicy  *policy;
  LinuxTestBackend *backend;
  char             *host_sock;   /* a host daemon's socket in the workspace */
  int               host_fd;     /* its listener */
} Fixture;

static int
listen_unix_path (const char *path)
{
  struct sockaddr_un addr = { 0 };
  int fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

  g_assert_cmpint (fd, >=, 0);
  addr.sun_family = AF_UNIX;
  g_assert_cmpuint (strlen (path), <, sizeof addr.sun_path);
  g_strlcpy (addr.sun_path, path, sizeof addr.sun_path);
  g_assert_cmpint (bind (fd, (struct sockaddr *) &addr, sizeof addr), ==, 0);
  g_assert_cmpint (listen (fd, 64), ==, 0);
  return fd;
}

static gboolean
fixture_setup_flags (Fixture    *fx,
                     const char *rung,
                     const char *ro_root,
                     uint32_t    flags)
{
  g_autofree char *why = NULL;
  g_autofree char *contents = NULL;
  g_autofree char *f = NULL;
  gsize len;

  fx->rung = rung;
  if (!linux_test_have_rung (rung, &why))
    {
      g_test_skip (why);
      return FALSE;
    }
  fx->parent = etu_make_tmpdir ("sbx-entry-XXXXXX");
  fx->workspace = g_build_filename (fx->parent, "ws", NULL);
  g_assert_cmpint (g_mkdir (fx->workspace, 0755), ==, 0);
  fx->probe = g_build_filename (fx->workspace, "sbx-entry-probe", NULL);
  fx->host_sock = g_build_filename (fx->workspace, "host.sock", NULL);
  fx->host_fd = listen_unix_path (fx->host_sock);
  g_assert_true (g_file_get_contents (probe_path (), &contents, &len, NULL));
  g_assert_true (g_file_set_contents (fx->probe, contents, (gssize) len, NULL));
  g_assert_cmpint (g_chmod (fx->probe, 0755), ==, 0);
  f = g_build_filename (fx->workspace, "f", NULL);
  g_assert_true (g_file_set_contents (f, "", 0, NULL));
  g_assert_cmpint (g_chmod (f, 0644), ==, 0);
  fx->policy = linux_test_policy_new (fx->workspace, 2, 2, 0, 0);
  if (ro_root != NULL)
    linux_test_policy_add_root (fx->policy, ro_root, 2, 0);
  linux_test_policy_set_flags (fx->policy, flags);
  fx->backend = linux_test_backend_new (rung);
  g_assert_cmpint (linux_test_backend_compile (fx->backend, linux_test_policy_get (fx->policy)), ==,
                   SBX_STATUS_OK);
  return TRUE;
}

/* A ports network (network.broad.v1's spec): compiled like fixture_setup()
 * but with TCP connect open to @port only. */
static gboolean
fixture_setup_ports (Fixture *fx, const char *rung, guint16 port)
{
  if (!fixture_setup_flags (fx, rung, NULL, 0))
    return FALSE;
  linux_test_backend_free (fx->backend);
  linux_test_policy_set_ports (fx->policy, &port, 1);
  fx->backend = linux_test_backend_new (rung);
  g_assert_cmpint (linux_test_backend_compile (fx->backend, linux_test_policy_get (fx->policy)), ==,
                   SBX_STATUS_OK);
  return TRUE;
}

static gboolean
fixture_setup (Fixture *fx, const char *rung)
{
  return fixture_setup_flags (fx, rung, NULL, 0);
}

static void
fixture_teardown (Fixture *fx)
{
  g_clear_pointer (&fx->backend, linux_test_backend_free);
  g_clear_pointer (&fx->policy, linux_test_policy_free);
  if (fx->host_sock != NULL)
    close (fx->host_fd);
  g_clear_pointer (&fx->host_sock, g_free);
  if (fx->parent != NULL)
    etu_rm_rf (fx->parent);
  g_clear_pointer (&fx->parent, g_free);
  g_clear_pointer (&fx->workspace, g_free);
  g_clear_pointer (&fx->probe, g_free);
}

static char **
probe_env (Fixture *fx, const char *const *extra)
{
  GPtrArray *env = g_ptr_array_new ();

  g_ptr_array_add (env, g_strdup ("PATH=/usr/bin:/bin"));
  g_ptr_array_add (env, g_strdup_printf ("HOME=%s", linux_test_policy_home (fx->policy)));
  g_ptr_array_add (env, g_strdup_printf ("TMPDIR=%s", linux_test_policy_tmpdir (fx->policy)));
  g_ptr_array_add (env, g_strdup_printf ("SBX_PROBE_DIR=%s", fx->workspace));
  g_ptr_array_add (env, g_strdup_printf ("SBX_PROBE_UNIX_HOST=%s", fx->host_sock));
  for (guint i = 0; extra != NULL && extra[i] != NULL; i++)
    g_ptr_array_add (env, g_strdup (extra[i]));
  g_ptr_array_add (env, NULL);
  return (char **) g_ptr_array_free (env, FALSE);
}

/* Parses "op result" lines into op -> result. */
static GHashTable *
parse_results (const char *out)
{
  GHashTable *h = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_auto(GStrv) lines = g_strsplit (out != NULL ? out : "", "\n", -1);

  for (guint i = 0; lines[i] != NULL; i++)
    {
      char *sp = strchr (lines[i], ' ');

      if (sp == NULL)
        continue;
      *sp = '\0';
      g_hash_table_replace (h, g_strdup (lines[i]), g_strdup (sp + 1));
    }
  return h;
}

static GPtrArray *
probe_argv (const char *probe, const char *entry, const char *only)
{
  GPtrArray *argv = g_ptr_array_new ();

  g_ptr_array_add (argv, (gpointer) probe);
  g_ptr_array_add (argv, (gpointer) entry);
  for (guint i = 0; i < G_N_ELEMENTS (ops); i++)
    if (only == NULL || strcmp (only, ops[i].op) == 0)
      g_ptr_array_add (argv, (gpointer) ops[i].op);
  g_ptr_array_add (argv, NULL);
  return argv;
}

static GHashTable *
run_inside (Fixture *fx, const char *entry, const char *const *extra_env)
{
  g_autoptr(GPtrArray) argv = probe_argv (fx->probe, entry, NULL);
  g_auto(GStrv) envp = probe_env (fx, extra_env);
  g_autoptr(LinuxTestRun) run = linux_test_backend_run (fx->backend, fx->policy, fx->workspace,
                                                        (const char *const *) argv->pdata,
                                                        (const char *const *) envp, NULL);

  g_assert_cmpint (run->spawn_status, ==, SBX_STATUS_OK);
  g_assert_cmpint (run->finish_status, ==, SBX_STATUS_OK);
  if (run->exit.kind != SBX_EXIT_EXITED || run->exit.code != 0)
    g_error ("probe %s inside %s: exit kind %u code %d, stderr: %s", entry, fx->rung, run->exit.kind,
             run->exit.code, run->err);
  return parse_results (run->out);
}

static GHashTable *
run_outside (Fixture *fx, const char *entry, const char *const *extra_env)
{
  g_autoptr(GPtrArray) argv = probe_argv (fx->probe, entry, NULL);
  g_auto(GStrv) envp = probe_env (fx, extra_env);
  g_autofree char *out = NULL, *err = NULL;
  g_autoptr(GError) error = NULL;
  int status = 0;

  g_assert_true (g_spawn_sync (fx->workspace, (char **) argv->pdata, envp, G_SPAWN_DEFAULT, NULL, NULL, &out,
                               &err, &status, &error));
  g_assert_no_error (error);
  if (!WIFEXITED (status) || WEXITSTATUS (status) != 0)
    g_error ("probe %s outside: status %d, stderr: %s", entry, status, err);
  return parse_results (out);
}

static gboolean
result_is (const char *got, const char *expected, const char *control)
{
  if (expected != NULL && strcmp (expected, SAME) == 0)
    return g_strcmp0 (got, control) == 0;
  if (expected == NULL)
    return got != NULL && !g_str_has_prefix (got, "sig");
  if (strcmp (expected, NOT_OK) == 0)
    return got != NULL && strcmp (got, "ok") != 0;
  return g_strcmp0 (got, expected) == 0;
}

static gboolean
kernel_has_i386 (GHashTable *outside)
{
  const char *r = g_hash_table_lookup (outside, "getpid");

  return g_strcmp0 (r, "ok") == 0;
}

/* Native and i386: each row's expected result inside, and a control that
 * tells it apart outside. */
static void
check_entry (Fixture *fx, const char *entry)
{
  gboolean rung1 = strcmp (fx->rung, SBX_LINUX_BACKEND_USERNS) == 0;
  g_autoptr(GHashTable) inside = NULL, outside = NULL;
  guint checked = 0, distinguished = 0, asserted = 0;

  outside = run_outside (fx, entry, NULL);
  if (strcmp (entry, "i386") == 0 && !kernel_has_i386 (outside))
    {
      g_autofree char *why = g_strdup_printf ("no i386 emulation here (int 0x80 getpid: %s)",
                                              (const char *) g_hash_table_lookup (outside, "getpid"));

      g_test_skip (why);
      return;
    }
  inside = run_inside (fx, entry, NULL);
  for (guint i = 0; i < G_N_ELEMENTS (ops); i++)
    {
      const OpRow *row = &ops[i];
      const char *expected = rung1 ? row->rung1 : row->rung2;
      const char *in = g_hash_table_lookup (inside, row->op);
      const char *out = g_hash_table_lookup (outside, row->op);

      if (g_strcmp0 (out, "absent") == 0)
        {
          /* no such call on this entry path: nothing to cover there */
          g_assert_cmpstr (in, ==, "absent");
          continue;
        }
      g_test_message ("%s %-8s %-22s inside: %-7s outside: %s", fx->rung, entry, row->op, in, out);
      if (out == NULL || g_str_has_prefix (out, "sig"))
        g_error ("%s via %s: the control did not run (%s)", row->op, entry, out);
      if (!result_is (in, expected, out))
        g_error ("%s via %s at %s: inside %s, expected %s (outside: %s)", row->op, entry, fx->rung, in,
                 expected != NULL ? expected : "not killed", out);
      checked++;
      if (expected == NULL || strcmp (expected, "ok") == 0 || strcmp (expected, SAME) == 0)
        continue;   /* allowed here: the row checks nothing is lost */
      asserted++;
      if (g_strcmp0 (in, out) != 0)
        distinguished++;
      else if (row->key || getuid () == 0)
        g_error ("%s via %s: the control gives the filter's own answer %s%s", row->op, entry, out,
                 getuid () == 0 ? " as root" : "");
      else
        g_test_message ("  (the control gives the same errno as uid %d; the root run decides it)",
                        (int) getuid ());
    }
  g_test_message ("%s %s: %u rows, %u refusals, %u told apart from the control", fx->rung, entry, checked,
                  asserted, distinguished);
  g_assert_cmpuint (checked, >=, 90);
  g_assert_cmpuint (distinguished, >=, asserted * 3 / 4);
}

static void
test_native (gconstpointer rung)
{
  Fixture fx = { 0 };

  if (!fixture_setup (&fx, rung))
    return;
  check_entry (&fx, "native");
  fixture_teardown (&fx);
}

static void
test_i386 (gconstpointer rung)
{
  Fixture fx = { 0 };

  if (!fixture_setup (&fx, rung))
    return;
  check_entry (&fx, "i386");
  fixture_teardown (&fx);
}

/* x32: every call through it is killed (SIGSYS) inside, whether or not the
 * kernel runs x32; outside it reaches the kernel (ENOSYS without x32). */
static void
test_x32 (gconstpointer rung)
{
  Fixture fx = { 0 };
  g_autoptr(GHashTable) inside = NULL, outside = NULL;
  guint killed = 0;

  if (!fixture_setup (&fx, rung))
    return;
  outside = run_outside (&fx, "x32", NULL);
  inside = run_inside (&fx, "x32", NULL);
  g_test_message ("x32 getpid outside: %s (%s)", (const char *) g_hash_table_lookup (outside, "getpid"),
                  g_strcmp0 (g_hash_table_lookup (outside, "getpid"), "ok") == 0 ? "x32 enabled"
                                                                                  : "kernel without x32");
  for (guint i = 0; i < G_N_ELEMENTS (ops); i++)
    {
      const char *in = g_hash_table_lookup (inside, ops[i].op);
      const char *out = g_hash_table_lookup (outside, ops[i].op);

      if (g_strcmp0 (out, "absent") == 0)
        continue;
      g_assert_nonnull (out);
      g_assert_false (g_str_has_prefix (out, "sig"));
      if (g_strcmp0 (in, "sig31") != 0)
        g_error ("x32 %s at %s: inside %s, expected the filter's kill (sig31)", ops[i].op, fx.rung, in);
      killed++;
    }
  g_assert_cmpuint (killed, >=, 90);
  fixture_teardown (&fx);
}

/* Every rule of the rung's program is exercised by a row. */
static void
test_table_covers_filter (gconstpointer rung)
{
  Fixture fx = { 0 };
  SbxSeccompOptions options = { 0 };
  g_autoptr(SbxLinuxProbe) probe = NULL;
  g_autoptr(SbxSeccompProgram) program = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GHashTable) exercised = g_hash_table_new (g_str_hash, g_str_equal);
  const SbxSeccompRule *rules;
  size_t n;

  if (!fixture_setup (&fx, rung))
    return;
  for (guint i = 0; i < G_N_ELEMENTS (ops); i++)
    {
      g_auto(GStrv) calls = g_strsplit (ops[i].calls, " ", -1);

      for (guint k = 0; calls[k] != NULL; k++)
        g_hash_table_add (exercised, (gpointer) g_intern_string (calls[k]));
    }
  for (guint i = 0; i < G_N_ELEMENTS (exact_only); i++)
    g_hash_table_add (exercised, (gpointer) exact_only[i]);
  options.rung = strcmp (rung, SBX_LINUX_BACKEND_USERNS) == 0 ? 1 : 2;
  options.net_mode = SBX_NET_MODE_DENY;
  probe = sbx_linux_probe_new ();
  options.landlock_abi = probe->landlock_abi;
  program = sbx_seccomp_program_new (&options, NULL, &error);
  g_assert_no_error (error);
  rules = sbx_seccomp_program_rules (program, &n);
  g_assert_cmpuint (n, >, 100);
  for (size_t i = 0; i < n; i++)
    if (!g_hash_table_contains (exercised, rules[i].name))
      g_error ("the filter has a rule for %s that no row of the entry-path table exercises", rules[i].name);
  fixture_teardown (&fx);
}

/* ---- the reported escape: a datagram through the 32-bit gate ---- */

static void
test_udp_datagram (gconstpointer rung)
{
  Fixture fx = { 0 };
  struct sockaddr_in sin = { 0 };
  socklen_t len = sizeof sin;
  g_autofree char *port_env = NULL;
  int lfd;
  char buf[64];

  if (!fixture_setup (&fx, rung))
    return;
  lfd = socket (AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  g_assert_cmpint (lfd, >=, 0);
  sin.sin_family = AF_INET;
  sin.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
  g_assert_cmpint (bind (lfd, (struct sockaddr *) &sin, sizeof sin), ==, 0);
  g_assert_cmpint (getsockname (lfd, (struct sockaddr *) &sin, &len), ==, 0);
  port_env = g_strdup_printf ("SBX_PROBE_PORT=%u", ntohs (sin.sin_port));

  for (guint e = 0; e < 2; e++)
    {
      const char *entry = e == 0 ? "native" : "i386";
      const char *extra[] = { port_env, NULL };
      g_autoptr(GPtrArray) argv = g_ptr_array_new ();
      g_auto(GStrv) envp = probe_env (&fx, extra);
      g_autoptr(LinuxTestRun) run = NULL;
      g_autofree char *out = NULL;
      int status;
      struct pollfd pfd = { lfd, POLLIN, 0 };

      g_ptr_array_add (argv, fx.probe);
      g_ptr_array_add (argv, (gpointer) entry);
      g_ptr_array_add (argv, "udp_send");
      g_ptr_array_add (argv, NULL);
      /* outside: the listener receives it */
      g_assert_true (g_spawn_sync (NULL, (char **) argv->pdata, envp, G_SPAWN_DEFAULT, NULL, NULL, &out, NULL,
                                   &status, NULL));
      if (e == 1 && strstr (out, "udp_send ok") == NULL)
        {
          g_test_message ("no i386 emulation here: %s", out);
          break;
        }
      g_assert_cmpstr (out, ==, "udp_send ok\n");
      g_assert_cmpint (poll (&pfd, 1, 2000), ==, 1);
      g_assert_cmpint (recv (lfd, buf, sizeof buf, 0), ==, 15);
      /* inside: nothing arrives (rung 2: the socket is refused; rung 1: the
       * sandbox's loopback is its own) */
      run = linux_test_backend_run (fx.backend, fx.policy, fx.workspace, (const char *const *) argv->pdata,
                                    (const char *const *) envp, NULL);
      g_assert_cmpint (run->exit.kind, ==, SBX_EXIT_EXITED);
      g_test_message ("%s %s inside: %s", fx.rung, entry, run->out);
      if (strcmp (rung, SBX_LINUX_BACKEND_LANDLOCK) == 0)
        g_assert_cmpstr (run->out, ==, "udp_send e13\n");
      g_assert_cmpint (poll (&pfd, 1, 300), ==, 0);
    }
  close (lfd);
  fixture_teardown (&fx);
}

/* ---- a ports network (network.broad.v1) through every entry ---- */

static int
listen_tcp (guint16 *port)
{
  struct sockaddr_in sin = { 0 };
  socklen_t len = sizeof sin;
  int fd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

  g_assert_cmpint (fd, >=, 0);
  sin.sin_family = AF_INET;
  sin.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
  g_assert_cmpint (bind (fd, (struct sockaddr *) &sin, sizeof sin), ==, 0);
  g_assert_cmpint (listen (fd, 16), ==, 0);
  g_assert_cmpint (getsockname (fd, (struct sockaddr *) &sin, &len), ==, 0);
  *port = ntohs (sin.sin_port);
  return fd;
}

/* Both rungs run a ports spec in the host network namespace.  Through the
 * native and the i386 entry alike (x32 is killed whole): TCP connect to the granted port works,
 * nothing else does (another port, UDP, raw, MPTCP, bind, listen on an
 * unbound socket, socketcall), and a datagram to a host listener never
 * arrives.  Outside, the same probes succeed (the positive control). */
static void
test_ports (gconstpointer rung)
{
  static const struct { const char *op; const char *inside; gboolean control_ok; } rows[] = {
    { "tcp_connect", "ok", TRUE },
    { "tcp_connect_other", "e13", TRUE },
    { "sock_inet_stream", "ok", TRUE },
    { "sock_inet6_stream", "ok", TRUE },
    { "sock_inet_dgram", "e13", TRUE },
    { "sock_inet6_dgram", "e13", TRUE },
    { "sock_inet_raw", "e13", FALSE },      /* outside: EPERM without CAP_NET_RAW */
    { "sock_inet_mptcp", "e13", FALSE },    /* outside: depends on the kernel's MPTCP */
    { "bind_inet", "e13", TRUE },
    { "listen_inet", "e13", TRUE },
    { "udp_send", "e13", TRUE },
    { "sock_unix_stream", "ok", TRUE },
    { "unix_connect_host", "e13", TRUE },   /* the supervisor decides TCP and unix connects alike */
    { "unix_connect_own", "e13", TRUE },    /* its listen(2): refused whatever the socket (see listen_inet) */
    { "socketcall_socket", "e38", FALSE },  /* i386 only */
  };
  Fixture fx = { 0 };
  guint16 granted = 0, other = 0, udp_port = 0;
  int gfd, ofd, ufd;
  g_autofree char *env_granted = NULL, *env_other = NULL, *env_udp = NULL;

  gfd = listen_tcp (&granted);
  ofd = listen_tcp (&other);
  {
    struct sockaddr_in sin = { 0 };
    socklen_t len = sizeof sin;

    ufd = socket (AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    g_assert_cmpint (ufd, >=, 0);
    sin.sin_family = AF_INET;
    sin.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
    g_assert_cmpint (bind (ufd, (struct sockaddr *) &sin, sizeof sin), ==, 0);
    g_assert_cmpint (getsockname (ufd, (struct sockaddr *) &sin, &len), ==, 0);
    udp_port = ntohs (sin.sin_port);
  }
  if (!fixture_setup_ports (&fx, rung, granted))
    {
      close (gfd);
      close (ofd);
      close (ufd);
      return;
    }
  env_granted = g_strdup_printf ("SBX_PROBE_TCP_PORT=%u", granted);
  env_other = g_strdup_printf ("SBX_PROBE_TCP_OTHER=%u", other);
  env_udp = g_strdup_printf ("SBX_PROBE_PORT=%u", udp_port);

  for (guint e = 0; e < 3; e++)
    {
      const char *entry = e == 0 ? "native" : e == 1 ? "i386" : "x32";
      const char *extra[] = { env_granted, env_other, env_udp, NULL };
      g_autoptr(GPtrArray) argv = g_ptr_array_new ();
      g_auto(GStrv) envp = probe_env (&fx, extra);
      g_autoptr(LinuxTestRun) run = NULL;
      g_autoptr(GHashTable) inside = NULL, outside = NULL;
      g_autofree char *out = NULL;
      char buf[64];
      struct pollfd pfd = { ufd, POLLIN, 0 };
      int status;

      g_ptr_array_add (argv, fx.probe);
      g_ptr_array_add (argv, (gpointer) entry);
      for (guint i = 0; i < G_N_ELEMENTS (rows); i++)
        g_ptr_array_add (argv, (gpointer) rows[i].op);
      g_ptr_array_add (argv, NULL);
      g_assert_true (g_spawn_sync (NULL, (char **) argv->pdata, envp, G_SPAWN_DEFAULT, NULL, NULL, &out,
                                   NULL, &status, NULL));
      outside = parse_results (out);
      if (e == 1 && !g_str_equal (g_hash_table_lookup (outside, "sock_inet_stream") ? : "", "ok"))
        {
          g_test_message ("no i386 emulation here: %s", out);
          break;
        }
      /* the control's datagram arrived (x32: where the kernel has it) */
      if (e < 2 || g_str_equal (g_hash_table_lookup (outside, "udp_send") ? : "", "ok"))
        {
          g_assert_cmpint (poll (&pfd, 1, 2000), ==, 1);
          g_assert_cmpint (recv (ufd, buf, sizeof buf, 0), ==, 15);
        }

      run = linux_test_backend_run (fx.backend, fx.policy, fx.workspace, (const char *const *) argv->pdata,
                                    (const char *const *) envp, NULL);
      g_assert_cmpint (run->exit.kind, ==, SBX_EXIT_EXITED);
      g_assert_cmpint (run->exit.code, ==, 0);
      inside = parse_results (run->out);
      for (guint i = 0; i < G_N_ELEMENTS (rows); i++)
        {
          const char *in = g_hash_table_lookup (inside, rows[i].op);
          const char *ctl = g_hash_table_lookup (outside, rows[i].op);

          g_test_message ("%s %-6s %-18s inside: %-6s outside: %s", fx.rung, entry, rows[i].op, in, ctl);
          if (g_strcmp0 (ctl, "absent") == 0)
            {
              g_assert_cmpstr (in, ==, "absent");
              continue;
            }
          g_assert_nonnull (ctl);
          g_assert_false (g_str_has_prefix (ctl, "sig"));
          if (e == 2)
            {
              /* x32 is killed whole, whatever the call */
              g_assert_cmpstr (in, ==, "sig31");
              continue;
            }
          g_assert_cmpstr (in, ==, rows[i].inside);
          if (rows[i].control_ok)
            g_assert_cmpstr (ctl, ==, "ok");
        }
      /* inside: nothing arrived */
      g_assert_cmpint (poll (&pfd, 1, 300), ==, 0);
    }
  close (gfd);
  close (ofd);
  close (ufd);
  fixture_teardown (&fx);
}

/* ---- SysV IPC: a host segment of the same user ---- */

static void
test_sysv_host_segment (gconstpointer rung)
{
  Fixture fx = { 0 };
  g_autofree char *id_env = NULL;
  int id;
  char *mem;

  if (!fixture_setup (&fx, rung))
    return;
  id = shmget (IPC_PRIVATE, 4096, IPC_CREAT | 0600);
  g_assert_cmpint (id, >=, 0);
  mem = shmat (id, NULL, 0);
  g_assert_true (mem != (void *) -1);
  memcpy (mem, "sbx-host-segment", 16);
  /* marked for removal while this process stays attached (Linux still lets
   * others attach it by id): nothing is left if the test aborts */
  g_assert_cmpint (shmctl (id, IPC_RMID, NULL), ==, 0);
  id_env = g_strdup_printf ("SBX_PROBE_SHMID=%d", id);

  for (guint e = 0; e < 2; e++)
    {
      const char *entry = e == 0 ? "native" : "i386";
      const char *extra[] = { id_env, NULL };
      const char *argv[] = { fx.probe, entry, "shm_attach_host", NULL };
      g_auto(GStrv) envp = probe_env (&fx, extra);
      g_autoptr(LinuxTestRun) run = NULL;
      g_autofree char *out = NULL;
      int status;

      g_assert_true (g_spawn_sync (NULL, (char **) argv, envp, G_SPAWN_DEFAULT, NULL, NULL, &out, NULL, &status,
                                   NULL));
      if (e == 1 && strstr (out, "shm_attach_host ok") == NULL && strstr (out, "absent") != NULL)
        break;
      g_assert_cmpstr (out, ==, "shm_attach_host ok\n");
      run = linux_test_backend_run (fx.backend, fx.policy, fx.workspace, argv, (const char *const *) envp, NULL);
      g_assert_cmpint (run->exit.kind, ==, SBX_EXIT_EXITED);
      g_test_message ("%s %s inside: %s", fx.rung, entry, run->out);
      if (strcmp (rung, SBX_LINUX_BACKEND_LANDLOCK) == 0)
        g_assert_cmpstr (run->out, ==, "shm_attach_host e1\n");
      else
        g_assert_cmpstr (run->out, !=, "shm_attach_host ok\n");   /* a private IPC namespace */
    }
  shmdt (mem);

  /* POSIX shared memory keeps working: at rung 1 in the sandbox's private
   * /dev/shm; at rung 2 /dev/shm is the host's, a path like any other that
   * the filesystem rules govern (here granted explicitly), while SysV stays
   * refused whatever the rules say. */
  {
    static const char shm_script[] =
      "python3 -c 'from multiprocessing import shared_memory as s\n"
      "m = s.SharedMemory(create=True, size=4096); m.buf[0] = 7\n"
      "print(\"posix-shm\", m.buf[0]); m.close(); m.unlink()'";
    g_autoptr(LinuxTestRun) run = NULL;
    g_autoptr(LinuxTestPolicy) shm_policy = NULL;
    g_autoptr(LinuxTestBackend) shm_backend = NULL;

    if (strcmp (rung, SBX_LINUX_BACKEND_LANDLOCK) == 0)
      {
        shm_policy = linux_test_policy_new (fx.workspace, 2, 2, 0, 0);
        linux_test_policy_add_root (shm_policy, "/dev/shm", 2, 2);
        shm_backend = linux_test_backend_new (rung);
        g_assert_cmpint (linux_test_backend_compile (shm_backend, linux_test_policy_get (shm_policy)), ==,
                         SBX_STATUS_OK);
        run = linux_test_backend_sh (shm_backend, shm_policy, fx.workspace, shm_script);
      }
    else
      run = linux_test_backend_sh (fx.backend, fx.policy, fx.workspace, shm_script);
    g_test_message ("posix shm at %s: %s%s", fx.rung, run->out, run->err);
    g_assert_cmpint (run->exit.kind, ==, SBX_EXIT_EXITED);
    g_assert_cmpstr (run->out, ==, "posix-shm 7\n");
  }
  {
    const LinuxTestEntry *entry = linux_test_backend_entry (fx.backend, "sysv-ipc");

    if (strcmp (rung, SBX_LINUX_BACKEND_LANDLOCK) == 0)
      {
        g_assert_nonnull (entry);
        g_assert_cmpuint (entry->status, ==, SBX_ABI_REPORT_NARROWED);
      }
    else
      g_assert_null (entry);
  }
  fixture_teardown (&fx);
}

/* ---- set-id files ---- */

static void
test_setid_copy (gconstpointer rung)
{
  Fixture fx = { 0 };
  g_autoptr(LinuxTestRun) run = NULL;
  g_autofree char *host_out = NULL;
  g_autofree char *rs = NULL;
  g_autofree char *inside_script = NULL;
  const char *script = "cp /usr/bin/id ./rs && chmod 6755 ./rs; echo chmod=$?; "
                       "install -m 4755 /usr/bin/id ./rs2; echo install=$?";
  struct stat st;

  if (!fixture_setup (&fx, rung))
    return;
  rs = g_build_filename (fx.workspace, "rs", NULL);
  /* outside: the same commands leave set-id files */
  g_assert_cmpint (linux_test_host_sh (fx.workspace, script, &host_out), ==, 0);
  g_assert_cmpstr (host_out, ==, "chmod=0\ninstall=0\n");
  g_assert_cmpint (stat (rs, &st), ==, 0);
  g_assert_cmphex (st.st_mode & (S_ISUID | S_ISGID), ==, S_ISUID | S_ISGID);
  g_assert_cmpint (linux_test_host_sh (fx.workspace, "rm -f rs rs2", NULL), ==, 0);

  inside_script = g_strdup_printf ("%s; ls -l rs rs2 2>&1 | cut -c1-10", script);
  run = linux_test_backend_sh (fx.backend, fx.policy, fx.workspace, inside_script);
  g_test_message ("%s uid %d: %s", fx.rung, (int) getuid (), run->out);
  g_assert_cmpint (run->exit.kind, ==, SBX_EXIT_EXITED);
  g_assert_nonnull (strstr (run->out, "chmod=1"));
  g_assert_null (strstr (run->out, "install=0"));
  if (stat (rs, &st) == 0)
    g_assert_cmphex (st.st_mode & (S_ISUID | S_ISGID), ==, 0);
  {
    g_autofree char *rs2 = g_build_filename (fx.workspace, "rs2", NULL);

    if (stat (rs2, &st) == 0)
      g_assert_cmphex (st.st_mode & (S_ISUID | S_ISGID), ==, 0);
  }
  {
    const LinuxTestEntry *entry = linux_test_backend_entry (fx.backend, "set-id-files");

    g_assert_nonnull (entry);
    g_assert_cmpuint (entry->status, ==, SBX_ABI_REPORT_ENFORCED);
  }
  fixture_teardown (&fx);
}

/* ---- host unix sockets in the workspace and in a read-only root ---- */

static int
listen_unix (const char *path)
{
  struct sockaddr_un addr = { 0 };
  int fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

  g_assert_cmpint (fd, >=, 0);
  addr.sun_family = AF_UNIX;
  g_strlcpy (addr.sun_path, path, sizeof addr.sun_path);
  g_assert_cmpint (bind (fd, (struct sockaddr *) &addr, sizeof addr), ==, 0);
  g_assert_cmpint (listen (fd, 8), ==, 0);
  return fd;
}

static guint
drain_accepts (int fd)
{
  guint n = 0;
  int c;

  while ((c = accept4 (fd, NULL, NULL, SOCK_CLOEXEC)) >= 0)
    {
      close (c);
      n++;
    }
  return n;
}

static void
unix_sockets_case (const char *rung, gboolean allow)
{
  Fixture fx = { 0 };
  g_autofree char *ro = NULL, *ws_sock = NULL, *ro_sock = NULL, *code = NULL, *host_out = NULL;
  g_autoptr(LinuxTestRun) run = NULL;
  int ws_fd, ro_fd;

  ro = etu_make_tmpdir ("sbx-entry-ro-XXXXXX");
  g_chmod (ro, 0755);
  if (!fixture_setup_flags (&fx, rung, ro, allow ? SBX_POLICY_UNIX_SOCKETS : 0))
    {
      etu_rm_rf (ro);
      return;
    }
  ws_sock = g_build_filename (fx.workspace, "daemon.sock", NULL);
  ro_sock = g_build_filename (ro, "daemon.sock", NULL);
  ws_fd = listen_unix (ws_sock);
  ro_fd = listen_unix (ro_sock);
  code = g_strdup_printf ("import socket\n"
                          "for name in ('%s', '%s'):\n"
                          "  try:\n"
                          "    s = socket.socket(socket.AF_UNIX); s.settimeout(3); s.connect(name); print('connected')\n"
                          "  except OSError as e:\n"
                          "    print('refused', e.errno)\n"
                          "a, b = socket.socketpair(); a.send(b'p'); print('socketpair', b.recv(1).decode())\n",
                          ws_sock, ro_sock);
  {
    const char *argv[] = { "/usr/bin/python3", "-c", code, NULL };

    g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &host_out, NULL, NULL,
                                 NULL));
  }
  g_assert_cmpstr (host_out, ==, "connected\nconnected\nsocketpair p\n");
  g_assert_cmpuint (drain_accepts (ws_fd) + drain_accepts (ro_fd), ==, 2);
  {
    const char *argv[] = { "python3", "-c", code, NULL };

    run = linux_test_backend_run (fx.backend, fx.policy, fx.workspace, argv, NULL, NULL);
  }
  g_test_message ("%s allow=%d: %s", rung, allow, run->out);
  g_assert_cmpint (run->exit.kind, ==, SBX_EXIT_EXITED);
  if (allow)
    {
      const LinuxTestEntry *e = linux_test_backend_entry (fx.backend, "unix-sockets");
      const LinuxTestEntry *nb = linux_test_backend_entry (fx.backend, "network-boundary");

      g_assert_cmpstr (run->out, ==, "connected\nconnected\nsocketpair p\n");
      g_assert_cmpuint (drain_accepts (ws_fd) + drain_accepts (ro_fd), ==, 2);
      g_assert_nonnull (e);
      g_assert_cmpuint (e->status, ==, SBX_ABI_REPORT_UNENFORCED);
      g_assert_nonnull (strstr (e->detail, "reachable"));
      g_assert_nonnull (nb);
      g_assert_nonnull (strstr (nb->detail, "unix sockets"));
    }
  else
    {
      const LinuxTestEntry *e = linux_test_backend_entry (fx.backend, "unix-sockets");

      g_assert_cmpstr (run->out, ==, "refused 13\nrefused 13\nsocketpair p\n");
      g_assert_cmpuint (drain_accepts (ws_fd) + drain_accepts (ro_fd), ==, 0);
      g_assert_nonnull (e);
      g_assert_cmpuint (e->status, ==, SBX_ABI_REPORT_NARROWED);
      g_assert_nonnull (strstr (e->detail, "ABI 9"));
      /* the probe says whether Landlock could scope pathname sockets */
      {
        SbxProbeResultV1 result;
        const LinuxTestEntry *ll;

        g_assert_cmpint (linux_test_backend_probe (fx.backend, &result), ==, SBX_STATUS_OK);
        ll = linux_test_backend_entry (fx.backend, "landlock-unix-sockets");
        g_assert_nonnull (ll);
        g_assert_cmpuint (ll->status, ==, SBX_ABI_REPORT_UNENFORCED);
        g_assert_nonnull (strstr (ll->detail, "LANDLOCK_ACCESS_FS_RESOLVE_UNIX"));
        g_test_message ("probe: %s", ll->detail);
      }
    }
  close (ws_fd);
  close (ro_fd);
  g_unlink (ro_sock);
  etu_rm_rf (ro);
  fixture_teardown (&fx);
}

static void
test_unix_sockets_closed (gconstpointer rung)
{
  unix_sockets_case (rung, FALSE);
}

static void
test_unix_sockets_allowed (gconstpointer rung)
{
  unix_sockets_case (rung, TRUE);
}

/* A daemon's socket in a directory no root covers, with the profile's
 * "unix-sockets": "allow".  Rung 1 shows only the mounted roots: the
 * socket is not there, and the report says the sockets under the roots are
 * reachable and keeps the boundaries.  Rung 2: Landlock does not mediate
 * connect(), the target reaches it (though it cannot list the directory),
 * and the report says every host socket is reachable and claims no write,
 * read or network boundary.  The positive control connects from outside. */
static void
test_unix_sockets_outside_roots (gconstpointer rung)
{
  Fixture fx = { 0 };
  g_autofree char *dir = NULL, *sock = NULL, *code = NULL, *host_out = NULL;
  g_autoptr(LinuxTestRun) run = NULL;
  const LinuxTestEntry *unix_entry, *nb;
  gboolean rung2 = strcmp (rung, SBX_LINUX_BACKEND_LANDLOCK) == 0;
  int fd;

  if (!fixture_setup_flags (&fx, rung, NULL, SBX_POLICY_UNIX_SOCKETS))
    return;
  dir = etu_make_tmpdir ("sbx-daemon-XXXXXX");
  g_assert_cmpint (g_chmod (dir, 0711), ==, 0);
  sock = g_build_filename (dir, "daemon.sock", NULL);
  fd = listen_unix (sock);
  code = g_strdup_printf ("import os, socket\n"
                          "try:\n"
                          "  os.listdir('%s'); print('listed')\n"
                          "except OSError as e:\n"
                          "  print('list refused')\n"
                          "try:\n"
                          "  s = socket.socket(socket.AF_UNIX); s.settimeout(3); s.connect('%s'); print('connected')\n"
                          "except OSError as e:\n"
                          "  print('refused', e.errno)\n", dir, sock);
  {
    const char *argv[] = { "/usr/bin/python3", "-c", code, NULL };

    g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &host_out, NULL, NULL,
                                 NULL));
  }
  g_assert_cmpstr (host_out, ==, "listed\nconnected\n");
  g_assert_cmpuint (drain_accepts (fd), ==, 1);
  {
    const char *argv[] = { "python3", "-c", code, NULL };

    run = linux_test_backend_run (fx.backend, fx.policy, fx.workspace, argv, NULL, NULL);
  }
  g_test_message ("%s: %s", (const char *) rung, run->out);
  g_assert_cmpint (run->exit.kind, ==, SBX_EXIT_EXITED);
  unix_entry = linux_test_backend_entry (fx.backend, "unix-sockets");
  nb = linux_test_backend_entry (fx.backend, "network-boundary");
  g_assert_nonnull (unix_entry);
  g_assert_nonnull (nb);
  g_test_message ("unix-sockets: %s; network-boundary %u: %s", unix_entry->detail, nb->status, nb->detail);
  g_assert_cmpuint (unix_entry->status, ==, SBX_ABI_REPORT_UNENFORCED);
  if (rung2)
    {
      const LinuxTestEntry *wb = linux_test_backend_entry (fx.backend, "write-boundary");
      const LinuxTestEntry *rb = linux_test_backend_entry (fx.backend, "read-boundary");

      /* what holds: the daemon is reached ... */
      g_assert_cmpstr (run->out, ==, "list refused\nconnected\n");
      g_assert_cmpuint (drain_accepts (fd), ==, 1);
      /* ... and the report says so, claiming nothing it defeats */
      g_assert_nonnull (strstr (unix_entry->detail, "every pathname socket on the host"));
      g_assert_null (strstr (unix_entry->detail, "under the roots"));
      g_assert_cmpuint (nb->status, !=, SBX_ABI_REPORT_ENFORCED);
      g_assert_nonnull (wb);
      g_assert_nonnull (rb);
      g_assert_cmpuint (wb->status, !=, SBX_ABI_REPORT_ENFORCED);
      g_assert_cmpuint (rb->status, !=, SBX_ABI_REPORT_ENFORCED);
      g_assert_cmphex (fx.backend->guarantees & (SBX_ABI_GUARANTEE_NETWORK_BOUNDARY |
                                                 SBX_ABI_GUARANTEE_WRITE_BOUNDARY |
                                                 SBX_ABI_GUARANTEE_READ_BOUNDARY), ==, 0);
    }
  else
    {
      g_assert_true (g_str_has_prefix (run->out, "list refused\nrefused "));
      g_assert_cmpuint (drain_accepts (fd), ==, 0);
      g_assert_nonnull (strstr (unix_entry->detail, "under the roots"));
      g_assert_cmpuint (nb->status, ==, SBX_ABI_REPORT_ENFORCED);
      g_assert_nonnull (strstr (nb->detail, "except unix sockets"));
    }
  close (fd);
  g_unlink (sock);
  etu_rm_rf (dir);
  fixture_teardown (&fx);
}

/* ---- inotify on a directory the target cannot list ---- */

static const char inotify_code[] =
  "import ctypes, os, struct, sys, select\n"
  "libc = ctypes.CDLL(None, use_errno=True)\n"
  "fd = libc.inotify_init1(0)\n"
  "if fd < 0:\n"
  "  print('init', ctypes.get_errno()); sys.exit(0)\n"
  "wd = libc.inotify_add_watch(fd, sys.argv[1].encode(), 0x100)\n"
  "if wd < 0:\n"
  "  print('watch', ctypes.get_errno()); sys.exit(0)\n"
  "print('ready', flush=True)\n"
  "r, _, _ = select.select([fd], [], [], 5)\n"
  "if not r:\n"
  "  print('timeout'); sys.exit(0)\n"
  "buf = os.read(fd, 4096)\n"
  "wd, mask, cookie, n = struct.unpack('iIII', buf[:16])\n"
  "print('event', buf[16:16 + n].rstrip(b'\\0').decode())\n";

static void
test_inotify_denied_dir (gconstpointer rung)
{
  Fixture fx = { 0 };
  g_autofree char *denied = NULL, *created = NULL;
  const char *argv_host[] = { "/usr/bin/python3", "-c", inotify_code, NULL, NULL };
  const char *argv_in[] = { "python3", "-c", inotify_code, NULL, NULL };
  GPid pid;
  int out_fd;
  g_autoptr(GError) error = NULL;
  char buf[256] = { 0 };
  ssize_t n, total = 0;

  if (!fixture_setup (&fx, rung))
    return;
  denied = g_build_filename (fx.parent, "denied", NULL);   /* outside every rule */
  g_assert_cmpint (g_mkdir (denied, 0755), ==, 0);
  argv_host[3] = denied;
  argv_in[3] = denied;

  /* outside: the watch reports the name of a file the host creates */
  g_assert_true (g_spawn_async_with_pipes (NULL, (char **) argv_host, NULL, G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL,
                                           &pid, NULL, &out_fd, NULL, &error));
  g_assert_no_error (error);
  while (strstr (buf, "ready") == NULL && (n = read (out_fd, buf + total, sizeof buf - 1 - (size_t) total)) > 0)
    total += n;
  g_assert_nonnull (strstr (buf, "ready"));
  created = g_build_filename (denied, "host-secret-name", NULL);
  g_assert_true (g_file_set_contents (created, "", 0, NULL));
  while ((n = read (out_fd, buf + total, sizeof buf - 1 - (size_t) total)) > 0)
    total += n;
  close (out_fd);
  waitpid (pid, NULL, 0);
  g_spawn_close_pid (pid);
  g_assert_nonnull (strstr (buf, "event host-secret-name"));
  g_unlink (created);

  /* inside: no watch on the denied directory */
  {
    g_autoptr(LinuxTestRun) run = NULL;
    LinuxTestProc *proc = linux_test_backend_start (fx.backend, fx.policy, fx.workspace, argv_in, NULL, -1, 0, &run);

    g_assert_nonnull (proc);
    linux_test_proc_read_until (proc, "\n", 5000);
    g_assert_true (g_file_set_contents (created, "", 0, NULL));
    run = linux_test_proc_wait (proc, NULL);
    g_test_message ("%s: %s", fx.rung, run->out);
    g_assert_null (strstr (run->out, "host-secret-name"));
    g_assert_null (strstr (run->out, "ready"));
    if (strcmp (rung, SBX_LINUX_BACKEND_LANDLOCK) == 0)
      {
        const LinuxTestEntry *e = linux_test_backend_entry (fx.backend, "fs-watch");

        g_assert_cmpstr (run->out, ==, "init 38\n");
        g_assert_nonnull (e);
        g_assert_cmpuint (e->status, ==, SBX_ABI_REPORT_NARROWED);
      }
    else
      {
        const LinuxTestEntry *e = linux_test_backend_entry (fx.backend, "fs-denials");

        /* Not in the mount view: the view supervisor's FUSE root answers a
         * host path that exists EACCES; a tmpfs root (FUSE unavailable)
         * ENOENT. */
        g_assert_nonnull (e);
        g_assert_cmpstr (run->out, ==, e->status == SBX_ABI_REPORT_ENFORCED ? "watch 13\n" : "watch 2\n");
      }
  }
  fixture_teardown (&fx);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  linux_test_add_both ("entry-paths/native", test_native);
  linux_test_add_both ("entry-paths/i386", test_i386);
  linux_test_add_both ("entry-paths/x32", test_x32);
  linux_test_add_both ("entry-paths/table-covers-filter", test_table_covers_filter);
  linux_test_add_both ("entry-paths/udp-datagram", test_udp_datagram);
  linux_test_add_both ("entry-paths/ports", test_ports);
  linux_test_add_both ("entry-paths/sysv-host-segment", test_sysv_host_segment);
  linux_test_add_both ("entry-paths/setid-copy", test_setid_copy);
  linux_test_add_both ("entry-paths/unix-sockets-closed", test_unix_sockets_closed);
  linux_test_add_both ("entry-paths/unix-sockets-allowed", test_unix_sockets_allowed);
  linux_test_add_both ("entry-paths/unix-sockets-outside-roots", test_unix_sockets_outside_roots);
  linux_test_add_both ("entry-paths/inotify-denied-dir", test_inotify_denied_dir);
  return g_test_run ();
}
