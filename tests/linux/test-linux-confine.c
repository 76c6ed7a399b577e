/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the Linux backend forbids, tried from inside the sandbox on both rungs
 * each next to the same probe succeeding without the sandbox:
 * reading and writing outside the roots, writing a read-only root, escaping
 * through "..", symlinks, hard links and rename, the network under deny,
 * host processes (seeing, signalling, ptracing the supervisor), terminal
 * injection, new user namespaces and mounts, another executor's HOME and
 * TMPDIR, the supervisor's descriptors and environment, exhausting pids,
 * host unix sockets (D-Bus style), and a root caller's capabilities and
 * kernel tunables.  Where a rung does not claim a guarantee, the test checks
 * that the report says so and skips with the reason.
 *
 * These are the cases of one module, the Linux backend's confinement: one GTest
 * binary per concept, so it is over a thousand lines.
 */
#include "backend-test-util.h"
#include "executor-test-util.h"

#include <errno.h>
#include <fcntl.h>
#include <pty.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <glib/gstdio.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>

#include "sbx-linux-private.h"

typedef struct
{
  const char       *rung;
  char             *parent;     /* holds ws/ and outside/ side by side */
  char             *workspace;
  char             *outside;    /* not granted by the policy */
  char             *secret;     /* outside/secret */
  LinuxTestPolicy  *policy;
  LinuxTestBackend *backend;
} Fixture;

static gboolean
fixture_setup_full (Fixture    *fx,
                    const char *rung,
                    int         host_read,
                    const char *ro_root)
{
  g_autofree char *why = NULL;

  fx->rung = rung;
  if (!linux_test_have_rung (rung, &why))
    {
      g_test_skip (why);
      return FALSE;
    }
  fx->parent = etu_make_tmpdir ("sbx-confine-XXXXXX");
  fx->workspace = g_build_filename (fx->parent, "ws", NULL);
  fx->outside = g_build_filename (fx->parent, "outside", NULL);
  fx->secret = g_build_filename (fx->outside, "secret", NULL);
  g_assert_cmpint (g_mkdir (fx->workspace, 0755), ==, 0);
  g_assert_cmpint (g_mkdir (fx->outside, 0755), ==, 0);
  g_assert_true (g_file_set_contents (fx->secret, "TOPSECRET\n", -1, NULL));
  fx->policy = linux_test_policy_new (fx->workspace, 2, 2, host_read, 0);
  if (ro_root != NULL)
    linux_test_policy_add_root (fx->policy, ro_root, 2, 0);
  fx->backend = linux_test_backend_new (rung);
  g_assert_cmpint (linux_test_backend_compile (fx->backend, linux_test_policy_get (fx->policy)), ==,
                   SBX_STATUS_OK);
  return TRUE;
}

static gboolean
fixture_setup (Fixture    *fx,
               const char *rung)
{
  return fixture_setup_full (fx, rung, 0, NULL);
}

static void
fixture_teardown (Fixture *fx)
{
  g_clear_pointer (&fx->backend, linux_test_backend_free);
  g_clear_pointer (&fx->policy, linux_test_policy_free);
  if (fx->parent != NULL)
    etu_rm_rf (fx->parent);
  g_clear_pointer (&fx->parent, g_free);
  g_clear_pointer (&fx->workspace, g_free);
  g_clear_pointer (&fx->outside, g_free);
  g_clear_pointer (&fx->secret, g_free);
}

static LinuxTestRun *
sandbox_sh (Fixture    *fx,
            const char *script)
{
  LinuxTestRun *run = linux_test_backend_sh (fx->backend, fx->policy, fx->workspace, script);

  g_assert_cmpint (run->spawn_status, ==, SBX_STATUS_OK);
  g_assert_cmpint (run->finish_status, ==, SBX_STATUS_OK);
  g_assert_cmpuint (run->exit.kind, ==, SBX_EXIT_EXITED);
  return run;
}

static LinuxTestRun *
sandbox_python (Fixture    *fx,
                const char *code)
{
  const char *argv[] = { "python3", "-c", code, NULL };
  LinuxTestRun *run = linux_test_backend_run (fx->backend, fx->policy, fx->workspace, argv, NULL, NULL);

  g_assert_cmpint (run->spawn_status, ==, SBX_STATUS_OK);
  g_assert_cmpint (run->finish_status, ==, SBX_STATUS_OK);
  return run;
}

static int
host_python (const char *code,
             char      **out)
{
  const char *argv[] = { "/usr/bin/python3", "-c", code, NULL };
  g_autofree char *stdout_buf = NULL;
  int status = 0;

  g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &stdout_buf,
                               NULL, &status, NULL));
  if (out != NULL)
    *out = g_steal_pointer (&stdout_buf);
  return WIFEXITED (status) ? WEXITSTATUS (status) : 128 + WTERMSIG (status);
}

static char *
file_contents (const char *path)
{
  char *contents = NULL;

  g_assert_true (g_file_get_contents (path, &contents, NULL, NULL));
  return contents;
}

/* ------------------------------------------------------------------------- */

static void
test_read_outside (gconstpointer rung)
{
  Fixture fx = { 0 };
  g_autofree char *script = NULL;
  g_autofree char *host_out = NULL;
  g_autoptr(LinuxTestRun) run = NULL;

  if (!fixture_setup (&fx, rung))
    return;
  script = g_strdup_printf ("cat '%s'", fx.secret);
  g_assert_cmpint (linux_test_host_sh (fx.workspace, script, &host_out), ==, 0);
  g_assert_cmpstr (host_out, ==, "TOPSECRET\n");
  run = sandbox_sh (&fx, script);
  g_assert_cmpint (run->exit.code, !=, 0);
  g_assert_null (strstr (run->out, "TOPSECRET"));
  fixture_teardown (&fx);
}

static void
test_write_outside (gconstpointer rung)
{
  Fixture fx = { 0 };
  g_autofree char *host_file = NULL;
  g_autofree char *sandbox_file = NULL;
  g_autofree char *script = NULL;
  g_autoptr(LinuxTestRun) run = NULL;

  if (!fixture_setup (&fx, rung))
    return;
  host_file = g_build_filename (fx.outside, "by-host", NULL);
  sandbox_file = g_build_filename (fx.outside, "by-sandbox", NULL);
  script = g_strdup_printf ("echo x > '%s'", host_file);
  g_assert_cmpint (linux_test_host_sh (fx.workspace, script, NULL), ==, 0);
  g_assert_true (g_file_test (host_file, G_FILE_TEST_EXISTS));
  g_free (script);
  script = g_strdup_printf ("echo x > '%s'; echo y >> '%s'; mkdir '%s.d'", sandbox_file, fx.secret,
                            sandbox_file);
  run = sandbox_sh (&fx, script);
  g_assert_false (g_file_test (sandbox_file, G_FILE_TEST_EXISTS));
  g_free (script);
  script = g_strdup_printf ("%s.d", sandbox_file);
  g_assert_false (g_file_test (script, G_FILE_TEST_EXISTS));
  {
    g_autofree char *secret = file_contents (fx.secret);

    g_assert_cmpstr (secret, ==, "TOPSECRET\n");
  }
  /* The same writes inside the workspace work. */
  g_clear_pointer (&run, linux_test_run_free);
  run = sandbox_sh (&fx, "echo inside > file && mkdir dir && cat file");
  g_assert_cmpint (run->exit.code, ==, 0);
  g_assert_cmpstr (run->out, ==, "inside\n");
  fixture_teardown (&fx);
}

/* A read-only additional root "<parent>/ro" holding "data" ("original\n"),
 * and the fixture around it.  FALSE when the rung is unavailable here: the
 * fixture skipped and everything made is removed. */
static gboolean
ro_root_setup (Fixture     *fx,
               const char  *rung,
               char       **parent,
               char       **ro,
               char       **ro_file)
{
  *parent = etu_make_tmpdir ("sbx-ro-XXXXXX");
  *ro = g_build_filename (*parent, "ro", NULL);
  *ro_file = g_build_filename (*ro, "data", NULL);
  g_assert_cmpint (g_mkdir (*ro, 0755), ==, 0);
  g_assert_true (g_file_set_contents (*ro_file, "original\n", -1, NULL));
  if (fixture_setup_full (fx, rung, 0, *ro))
    return TRUE;
  etu_rm_rf (*parent);
  return FALSE;
}

static void
test_read_only_root (gconstpointer rung_data)
{
  Fixture fx = { 0 };
  g_autofree char *parent = NULL;
  g_autofree char *ro = NULL;
  g_autofree char *ro_file = NULL;
  g_autofree char *script = NULL;
  g_autofree char *host_script = NULL;
  g_autoptr(LinuxTestRun) run = NULL;
  const char *rung = rung_data;

  if (!ro_root_setup (&fx, rung, &parent, &ro, &ro_file))
    return;
  /* Positive control: the owner can write there without the sandbox. */
  host_script = g_strdup_printf ("touch '%s/host-can' && rm '%s/host-can'", ro, ro);
  g_assert_cmpint (linux_test_host_sh (fx.workspace, host_script, NULL), ==, 0);

  script = g_strdup_printf ("cat '%s' || exit 10; "
                            "echo changed > '%s' && exit 11; "
                            "echo more >> '%s' && exit 12; "
                            "touch '%s/new' && exit 13; "
                            "rm -f '%s' ; test -e '%s' || exit 14; "
                            "mkdir '%s/dir' && exit 15; "
                            "truncate -s 0 '%s' && exit 17; "
                            "exit 0",
                            ro_file, ro_file, ro_file, ro, ro_file, ro_file, ro, ro_file);
  run = sandbox_sh (&fx, script);
  g_assert_cmpint (run->exit.code, ==, 0);
  g_assert_cmpstr (run->out, ==, "original\n");
  {
    g_autofree char *data = file_contents (ro_file);

    g_assert_cmpstr (data, ==, "original\n");
  }

  /* Metadata: a read-only mount refuses chmod/utimes; Landlock cannot, and
   * the report must say so. */
  g_clear_pointer (&run, linux_test_run_free);
  g_free (script);
  script = g_strdup_printf ("chmod 700 '%s' && echo chmod-ok; touch -d 2001-01-01 '%s' && echo utimes-ok; "
                            "exit 0", ro_file, ro_file);
  run = sandbox_sh (&fx, script);
  if (g_strcmp0 (rung, SBX_LINUX_BACKEND_USERNS) == 0)
    g_assert_cmpstr (run->out, ==, "");
  else
    {
      const LinuxTestEntry *e = linux_test_backend_entry (fx.backend, "file-metadata");

      g_assert_nonnull (e);
      g_assert_cmpuint (e->status, ==, SBX_ABI_REPORT_UNENFORCED);
      g_test_message ("rung 2 metadata (reported unenforced): %s", run->out);
    }
  fixture_teardown (&fx);
  etu_rm_rf (parent);
}

static void
test_dotdot (gconstpointer rung)
{
  Fixture fx = { 0 };
  g_autofree char *host_out = NULL;
  const char *script = "cat ../outside/secret; cat ./../outside/../outside/secret; "
                       "cd .. && ls outside";
  g_autoptr(LinuxTestRun) run = NULL;

  if (!fixture_setup (&fx, rung))
    return;
  g_assert_cmpint (linux_test_host_sh (fx.workspace, "cat ../outside/secret", &host_out), ==, 0);
  g_assert_cmpstr (host_out, ==, "TOPSECRET\n");
  run = sandbox_sh (&fx, script);
  g_assert_cmpint (run->exit.code, !=, 0);
  g_assert_null (strstr (run->out, "TOPSECRET"));
  g_assert_null (strstr (run->out, "secret"));
  fixture_teardown (&fx);
}

static void
test_symlinks (gconstpointer rung)
{
  Fixture fx = { 0 };
  g_autofree char *file_link = NULL;
  g_autofree char *dir_link = NULL;
  g_autofree char *host_out = NULL;
  g_autofree char *script = NULL;
  g_autoptr(LinuxTestRun) run = NULL;

  if (!fixture_setup (&fx, rung))
    return;
  /* Links planted in the workspace by the host user, pointing outside. */
  file_link = g_build_filename (fx.workspace, "file-link", NULL);
  dir_link = g_build_filename (fx.workspace, "dir-link", NULL);
  g_assert_cmpint (symlink (fx.secret, file_link), ==, 0);
  g_assert_cmpint (symlink (fx.outside, dir_link), ==, 0);
  g_assert_cmpint (linux_test_host_sh (fx.workspace, "cat file-link dir-link/secret", &host_out), ==, 0);
  g_assert_cmpstr (host_out, ==, "TOPSECRET\nTOPSECRET\n");

  script = g_strdup_printf ("cat file-link; cat dir-link/secret; ls dir-link/; "
                            "ln -s '%s' made-link && cat made-link; "
                            "ln -s ../outside rel-link && cat rel-link/secret; "
                            "echo x > dir-link/written",
                            fx.secret);
  run = sandbox_sh (&fx, script);
  g_assert_cmpint (run->exit.code, !=, 0);
  g_assert_null (strstr (run->out, "TOPSECRET"));
  g_assert_null (strstr (run->out, "secret"));
  g_free (script);
  script = g_build_filename (fx.outside, "written", NULL);
  g_assert_false (g_file_test (script, G_FILE_TEST_EXISTS));
  fixture_teardown (&fx);
}

static void
test_hardlinks (gconstpointer rung)
{
  Fixture fx = { 0 };
  g_autofree char *parent = NULL;
  g_autofree char *ro = NULL;
  g_autofree char *ro_file = NULL;
  g_autofree char *host_link = NULL;
  g_autofree char *script = NULL;
  g_autoptr(LinuxTestRun) run = NULL;

  if (!ro_root_setup (&fx, rung, &parent, &ro, &ro_file))
    return;
  /* Positive control: the same links can be made without the sandbox when
   * source and destination share a filesystem. */
  host_link = g_build_filename (fx.workspace, "host-link", NULL);
  if (link (ro_file, host_link) == 0)
    g_assert_cmpint (g_unlink (host_link), ==, 0);
  else
    g_test_message ("host control: link() across these directories fails too (%s)", g_strerror (errno));

  script = g_strdup_printf ("ln '%s' hl-secret && cat hl-secret; "
                            "ln '%s' hl-ro && echo pwned >> hl-ro; "
                            "cp --link '%s' cp-link && echo pwned >> cp-link; "
                            "true",
                            fx.secret, ro_file, ro_file);
  run = sandbox_sh (&fx, script);
  g_assert_null (strstr (run->out, "TOPSECRET"));
  {
    g_autofree char *data = file_contents (ro_file);
    g_autofree char *secret = file_contents (fx.secret);

    g_assert_cmpstr (data, ==, "original\n");
    g_assert_cmpstr (secret, ==, "TOPSECRET\n");
  }
  fixture_teardown (&fx);
  etu_rm_rf (parent);
}

static void
test_rename (gconstpointer rung)
{
  Fixture fx = { 0 };
  g_autofree char *parent = NULL;
  g_autofree char *ro = NULL;
  g_autofree char *ro_file = NULL;
  g_autofree char *moved_out = NULL;
  g_autofree char *script = NULL;
  g_autoptr(LinuxTestRun) run = NULL;

  if (!ro_root_setup (&fx, rung, &parent, &ro, &ro_file))
    return;
  script = g_strdup_printf ("echo mine > a; "
                            "mv '%s' ./stolen; mv a '%s/'; mv '%s' ./secret-here; "
                            "mkdir -p d/e && mv a d/e/b && mv d/e/b d/c && cat d/c",
                            ro_file, fx.outside, fx.secret);
  run = sandbox_sh (&fx, script);
  /* Renames inside the writable tree work, across directories too. */
  g_assert_cmpint (run->exit.code, ==, 0);
  g_assert_cmpstr (run->out, ==, "mine\n");
  g_assert_true (g_file_test (ro_file, G_FILE_TEST_EXISTS));
  g_assert_true (g_file_test (fx.secret, G_FILE_TEST_EXISTS));
  moved_out = g_build_filename (fx.outside, "a", NULL);
  g_assert_false (g_file_test (moved_out, G_FILE_TEST_EXISTS));
  {
    g_autofree char *data = file_contents (ro_file);

    g_assert_cmpstr (data, ==, "original\n");
  }
  /* mv falls back to copy + unlink across mounts: a copy of a readable file
   * may land in the workspace (policy allows both), but the unreadable
   * secret never does. */
  g_free (script);
  script = g_build_filename (fx.workspace, "secret-here", NULL);
  g_assert_false (g_file_test (script, G_FILE_TEST_EXISTS));
  fixture_teardown (&fx);
  etu_rm_rf (parent);
}

/* ------------------------------------------------------------------------- */
/* Network                                                                     */
/* ------------------------------------------------------------------------- */

static int
tcp_listen_loopback (int *port)
{
  struct sockaddr_in addr = { 0 };
  socklen_t len = sizeof addr;
  int fd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

  g_assert_cmpint (fd, >=, 0);
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
  g_assert_cmpint (bind (fd, (struct sockaddr *) &addr, sizeof addr), ==, 0);
  g_assert_cmpint (listen (fd, 16), ==, 0);
  g_assert_cmpint (getsockname (fd, (struct sockaddr *) &addr, &len), ==, 0);
  *port = ntohs (addr.sin_port);
  return fd;
}

static void
test_network_deny (gconstpointer rung)
{
  Fixture fx = { 0 };
  g_autofree char *code = NULL;
  g_autoptr(LinuxTestRun) run = NULL;
  int port, fd;

  if (!fixture_setup (&fx, rung))
    return;
  fd = tcp_listen_loopback (&port);
  code = g_strdup_printf ("import socket\n"
                          "try:\n"
                          "  socket.create_connection(('127.0.0.1', %d), 3)\n"
                          "  print('connected')\n"
                          "except OSError as e:\n"
                          "  print('refused', e.errno)\n"
                          "try:\n"
                          "  s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)\n"
                          "  s.settimeout(3)\n"
                          "  s.connect(('192.0.2.1', 80))\n"
                          "  print('routed')\n"
                          "except OSError as e:\n"
                          "  print('no-route', e.errno)\n",
                          port);
  {
    g_autofree char *host_out = NULL;

    g_assert_cmpint (host_python (code, &host_out), ==, 0);
    g_assert_true (g_str_has_prefix (host_out, "connected\n"));
  }
  run = sandbox_python (&fx, code);
  g_assert_null (strstr (run->out, "connected"));
  g_assert_null (strstr (run->out, "routed\n"));
  g_assert_nonnull (strstr (run->out, "refused"));
  close (fd);

  /* Rung 1: the sandbox's own loopback is up and private. */
  if (g_strcmp0 (rung, SBX_LINUX_BACKEND_USERNS) == 0)
    {
      g_clear_pointer (&run, linux_test_run_free);
      run = sandbox_python (&fx, "import socket\n"
                                 "srv = socket.socket(); srv.bind(('127.0.0.1', 0)); srv.listen()\n"
                                 "c = socket.create_connection(srv.getsockname(), 3)\n"
                                 "a, _ = srv.accept(); c.send(b'ping'); print(a.recv(4).decode())\n");
      g_assert_cmpint (run->exit.code, ==, 0);
      g_assert_cmpstr (run->out, ==, "ping\n");
    }
  fixture_teardown (&fx);
}

static void
test_network_open (gconstpointer rung)
{
  Fixture fx = { 0 };
  g_autofree char *code = NULL;
  g_autoptr(LinuxTestRun) run = NULL;
  int port, fd;
  const LinuxTestEntry *e;

  if (!fixture_setup (&fx, rung))
    return;
  linux_test_policy_set_net (fx.policy, SBX_NET_MODE_OPEN);
  g_assert_cmpint (linux_test_backend_compile (fx.backend, linux_test_policy_get (fx.policy)), ==,
                   SBX_STATUS_OK);
  g_assert_false (fx.backend->guarantees & SBX_ABI_GUARANTEE_NETWORK_BOUNDARY);
  e = linux_test_backend_entry (fx.backend, "network");
  g_assert_nonnull (e);
  g_assert_cmpuint (e->status, ==, SBX_ABI_REPORT_UNENFORCED);

  fd = tcp_listen_loopback (&port);
  code = g_strdup_printf ("import socket\n"
                          "socket.create_connection(('127.0.0.1', %d), 3); print('tcp-ok')\n"
                          "u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
                          "u.sendto(b'x', ('127.0.0.1', %d)); print('udp-ok')\n"
                          "print(open('/etc/resolv.conf').read() != '' and 'resolv-ok')\n"
                          "print(socket.getaddrinfo('localhost', 80)[0][4][0] in ('127.0.0.1', '::1') "
                          "and 'dns-ok')\n",
                          port, port);
  run = sandbox_python (&fx, code);
  g_assert_cmpint (run->exit.code, ==, 0);
  g_assert_cmpstr (run->out, ==, "tcp-ok\nudp-ok\nresolv-ok\ndns-ok\n");
  close (fd);
  fixture_teardown (&fx);
}

/* ------------------------------------------------------------------------- */
/* Processes                                                                   */
/* ------------------------------------------------------------------------- */

static void
test_host_processes_invisible (gconstpointer rung)
{
  Fixture fx = { 0 };
  g_autofree char *script = NULL;
  g_autoptr(LinuxTestRun) run = NULL;
  const LinuxTestEntry *e;

  if (!fixture_setup (&fx, rung))
    return;
  if (!(fx.backend->guarantees & SBX_ABI_GUARANTEE_PROCESS_BOUNDARY))
    {
      e = linux_test_backend_entry (fx.backend, "process-boundary");
      g_assert_nonnull (e);
      g_assert_cmpuint (e->status, ==, SBX_ABI_REPORT_UNENFORCED);
      g_test_skip ("this rung does not claim the process boundary (the report says so): "
                   "host processes are visible");
      fixture_teardown (&fx);
      return;
    }
  g_assert_true (g_file_test ("/proc/1/cmdline", G_FILE_TEST_EXISTS));
  script = g_strdup_printf ("test -e /proc/%d && echo sees-supervisor; "
                            "ls -d /proc/[0-9]* | wc -l; cat /proc/1/cmdline | tr '\\0' ' '",
                            (int) getpid ());
  run = sandbox_sh (&fx, script);
  g_assert_null (strstr (run->out, "sees-supervisor"));
  /* Only sbx-init, the shell, ls/wc/cat: a handful of pids. */
  g_assert_cmpint (atoi (run->out), <=, 6);
  g_assert_nonnull (strstr (run->out, "sbx-init"));
  fixture_teardown (&fx);
}

static void
test_signal_ptrace_supervisor (gconstpointer rung)
{
  Fixture fx = { 0 };
  g_autofree char *code = NULL;
  g_autofree char *host_out = NULL;
  g_autoptr(LinuxTestRun) run = NULL;
  pid_t victim;
  int status;

  if (!fixture_setup (&fx, rung))
    return;
  /* A host process of the same user: the sandbox must not reach it. */
  victim = fork ();
  g_assert_cmpint (victim, >=, 0);
  if (victim == 0)
    {
      pause ();
      _exit (0);
    }
  code = g_strdup_printf ("import ctypes, os\n"
                          "libc = ctypes.CDLL(None, use_errno=True)\n"
                          "for pid in (%d, %d):\n"
                          "  try:\n"
                          "    os.kill(pid, 0); print('signal-ok', pid)\n"
                          "  except OSError as e:\n"
                          "    print('signal-denied', e.errno)\n"
                          "  if pid != %d:\n"
                          "    continue\n"
                          "  # PTRACE_SEIZE: attaches without stopping the tracee; the\n"
                          "  # tracer's exit detaches.\n"
                          "  if libc.ptrace(0x4206, pid, None, None) == 0:\n"
                          "    print('ptrace-ok', pid)\n"
                          "  else:\n"
                          "    print('ptrace-denied', ctypes.get_errno())\n",
                          (int) getpid (), (int) victim, (int) victim);
  /* Positive control: without the sandbox both can be signalled and the
   * victim can be ptraced. */
  g_assert_cmpint (host_python (code, &host_out), ==, 0);
  g_assert_nonnull (strstr (host_out, "signal-ok"));
  g_assert_nonnull (strstr (host_out, "ptrace-ok"));

  run = sandbox_python (&fx, code);
  g_assert_cmpint (run->exit.code, ==, 0);
  g_assert_null (strstr (run->out, "signal-ok"));
  g_assert_null (strstr (run->out, "ptrace-ok"));
  /* Also a real signal, not just probe 0: the victim survives. */
  g_clear_pointer (&run, linux_test_run_free);
  g_free (code);
  code = g_strdup_printf ("kill -KILL %d; kill -TERM %d; exit 0", (int) victim, (int) getpid ());
  run = sandbox_sh (&fx, code);
  g_assert_cmpint (waitpid (victim, &status, WNOHANG), ==, 0);
  kill (victim, SIGKILL);
  g_assert_cmpint (waitpid (victim, &status, 0), ==, victim);
  fixture_teardown (&fx);
}

static void
test_terminal_injection (gconstpointer rung)
{
  Fixture fx = { 0 };
  const char *code = "import fcntl, termios, errno\n"
                     "try:\n"
                     "  fcntl.ioctl(0, termios.TIOCSTI, b'x'); print('injected')\n"
                     "except OSError as e:\n"
                     "  print('denied', errno.errorcode.get(e.errno))\n";
  const char *argv[] = { "python3", "-c", code, NULL };
  LinuxTestRun *failed = NULL;
  LinuxTestProc *proc;
  g_autoptr(LinuxTestRun) run = NULL;
  int master, slave;

  if (!fixture_setup (&fx, rung))
    return;
  /* Without PTY mode the target's stdin is the caller's terminal without
   * being its controlling terminal; with it, a fresh session owns the pty.
   * Either way TIOCSTI must not inject. */
  g_assert_cmpint (openpty (&master, &slave, NULL, NULL, NULL), ==, 0);
  for (int pty_mode = 0; pty_mode <= 1; pty_mode++)
    {
      proc = linux_test_backend_start (fx.backend, fx.policy, fx.workspace, argv, NULL, slave,
                                       pty_mode ? SBX_SPAWN_PTY : 0, &failed);
      g_assert_nonnull (proc);
      run = linux_test_proc_wait (proc, NULL);
      g_assert_cmpint (run->exit.code, ==, 0);
      g_assert_null (strstr (run->out, "injected"));
      g_assert_nonnull (strstr (run->out, "denied"));
      g_clear_pointer (&run, linux_test_run_free);
    }
  close (slave);
  close (master);

  /* Positive control: a process whose controlling terminal is the pty can
   * inject (when the host allows legacy TIOCSTI or we are root). */
  {
    g_autofree char *host_out = NULL;
    const char *control = "import fcntl, termios, os, pty\n"
                          "pid, fd = pty.fork()\n"
                          "if pid == 0:\n"
                          "  try:\n"
                          "    fcntl.ioctl(0, termios.TIOCSTI, b'x'); os._exit(0)\n"
                          "  except OSError:\n"
                          "    os._exit(1)\n"
                          "print('control', os.waitpid(pid, 0)[1] == 0)\n";

    g_assert_cmpint (host_python (control, &host_out), ==, 0);
    g_test_message ("host control: %s", host_out);
  }
  fixture_teardown (&fx);
}

static void
test_no_namespaces_or_mounts (gconstpointer rung)
{
  Fixture fx = { 0 };
  g_autoptr(LinuxTestRun) run = NULL;
  const char *script = "unshare -U true && echo userns-created; "
                       "unshare -r true && echo root-userns-created; "
                       "unshare -m true && echo mountns-created; "
                       "unshare -n true && echo netns-created; "
                       "mkdir -p \"$TMPDIR/mnt\"; mount -t tmpfs none \"$TMPDIR/mnt\" && echo mounted; "
                       "exit 0";

  if (!fixture_setup (&fx, rung))
    return;
  /* Positive control: this host lets an unprivileged process make a user
   * namespace (the rung-1 probe proved it; rung 2 on a host without them
   * still must deny). */
  if (g_strcmp0 (rung, SBX_LINUX_BACKEND_USERNS) == 0)
    g_assert_cmpint (linux_test_host_sh (fx.workspace, "unshare -U true", NULL), ==, 0);
  run = sandbox_sh (&fx, script);
  g_assert_cmpstr (run->out, ==, "");
  fixture_teardown (&fx);
}

static void
test_other_executor (gconstpointer rung)
{
  Fixture fx = { 0 };
  g_autoptr(LinuxTestPolicy) other = NULL;
  g_autofree char *other_home_file = NULL;
  g_autofree char *other_tmp_file = NULL;
  g_autofree char *script = NULL;
  g_autofree char *host_out = NULL;
  g_autoptr(LinuxTestRun) run = NULL;

  if (!fixture_setup (&fx, rung))
    return;
  other = linux_test_policy_new (fx.workspace, 2, 2, 0, 0);
  other_home_file = g_build_filename (linux_test_policy_home (other), "token", NULL);
  other_tmp_file = g_build_filename (linux_test_policy_tmpdir (other), "token", NULL);
  g_assert_true (g_file_set_contents (other_home_file, "OTHER-HOME\n", -1, NULL));
  g_assert_true (g_file_set_contents (other_tmp_file, "OTHER-TMP\n", -1, NULL));
  script = g_strdup_printf ("cat '%s' '%s'; ls '%s'; echo x > '%s/planted'",
                            other_home_file, other_tmp_file, linux_test_policy_scratch (other),
                            linux_test_policy_home (other));
  g_assert_cmpint (linux_test_host_sh (fx.workspace, script, &host_out), ==, 0);
  g_assert_nonnull (strstr (host_out, "OTHER-HOME"));
  {
    g_autofree char *planted = g_build_filename (linux_test_policy_home (other), "planted", NULL);

    g_assert_cmpint (g_unlink (planted), ==, 0);
    run = sandbox_sh (&fx, script);
    g_assert_cmpint (run->exit.code, !=, 0);
    g_assert_null (strstr (run->out, "OTHER"));
    g_assert_false (g_file_test (planted, G_FILE_TEST_EXISTS));
  }
  /* Its own HOME and TMPDIR work. */
  g_clear_pointer (&run, linux_test_run_free);
  run = sandbox_sh (&fx, "echo a > \"$HOME/f\" && echo b > \"$TMPDIR/f\" && cat \"$HOME/f\" \"$TMPDIR/f\"");
  g_assert_cmpint (run->exit.code, ==, 0);
  g_assert_cmpstr (run->out, ==, "a\nb\n");
  fixture_teardown (&fx);
}

static void
test_no_fd_or_env_leak (gconstpointer rung)
{
  Fixture fx = { 0 };
  g_autoptr(LinuxTestRun) run = NULL;
  /* fstat() every descriptor number: works without /proc (rung 2 has none). */
  const char *code = "import os\n"
                     "fds = []\n"
                     "for fd in range(4096):\n"
                     "  try:\n"
                     "    os.fstat(fd); fds.append(str(fd))\n"
                     "  except OSError:\n"
                     "    pass\n"
                     "print(' '.join(fds))\n"
                     "for k in sorted(os.environ): print('%s=%s' % (k, os.environ[k]))\n";
  int fd, leaked;

  if (!fixture_setup (&fx, rung))
    return;
  /* A descriptor the supervisor forgot to mark CLOEXEC, and a secret in its
   * environment. */
  fd = open ("/dev/null", O_RDONLY);
  g_assert_cmpint (fd, >=, 0);
  leaked = dup2 (fd, 57);
  g_assert_cmpint (leaked, ==, 57);
  close (fd);
  g_setenv ("SBX_TEST_SUPERVISOR_SECRET", "hunter2", TRUE);
  /* Positive control: a plain child inherits both. */
  {
    g_autofree char *host_out = NULL;
    const char *argv[] = { "/bin/sh", "-c", "test -e /proc/self/fd/57 && echo fd-leaked; env", NULL };

    g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL,
                                 G_SPAWN_LEAVE_DESCRIPTORS_OPEN, NULL, NULL, &host_out, NULL,
                                 NULL, NULL));
    g_assert_nonnull (strstr (host_out, "fd-leaked"));
    g_assert_nonnull (strstr (host_out, "hunter2"));
  }
  run = sandbox_python (&fx, code);
  close (57);
  g_unsetenv ("SBX_TEST_SUPERVISOR_SECRET");
  g_assert_null (strstr (run->out, "hunter2"));
  /* Only stdio, and exactly the environment given to spawn. */
  {
    g_autofree char *expect = g_strdup_printf ("0 1 2\nHOME=%s\nLANG=C.UTF-8\n"
                                               "PATH=/usr/local/bin:/usr/bin:/bin\nTMPDIR=%s\n",
                                               linux_test_policy_home (fx.policy),
                                               linux_test_policy_tmpdir (fx.policy));

    g_assert_cmpstr (run->out, ==, expect);
  }
  fixture_teardown (&fx);
}

static void
test_pid_exhaustion (gconstpointer rung)
{
  Fixture fx = { 0 };
  const char *code = "import os, time\n"
                     "kids = []\n"
                     "for i in range(60):\n"
                     "  try:\n"
                     "    pid = os.fork()\n"
                     "  except OSError:\n"
                     "    break\n"
                     "  if pid == 0:\n"
                     "    time.sleep(10); os._exit(0)\n"
                     "  kids.append(pid)\n"
                     "print(len(kids))\n"
                     "for k in kids: os.kill(k, 9)\n"
                     "for k in kids: os.waitpid(k, 0)\n";
  const LinuxTestEntry *e;
  g_autoptr(LinuxTestRun) run = NULL;
  g_autofree char *host_out = NULL;
  GPtrArray *bystanders;

  if (!fixture_setup (&fx, rung))
    return;
  linux_test_policy_set_limits (fx.policy, 16, 0, 0);
  g_assert_cmpint (linux_test_backend_compile (fx.backend, linux_test_policy_get (fx.policy)), ==,
                   SBX_STATUS_OK);
  e = linux_test_backend_entry (fx.backend, "process-limit");
  g_assert_nonnull (e);
  if (e->status != SBX_ABI_REPORT_ENFORCED)
    {
      g_assert_cmpuint (e->status, ==, SBX_ABI_REPORT_UNENFORCED);
      g_assert_nonnull (strstr (e->detail, "Hint:"));
      g_test_skip_printf ("the process limit is not enforced here, and the report says so: %s", e->detail);
      fixture_teardown (&fx);
      return;
    }
  /* The guarantee bit needs sandbox-wide memory too (cgroup): never here. */
  g_assert_false (fx.backend->guarantees & SBX_ABI_GUARANTEE_RESOURCE_LIMITS);

  /* Positive control: the same loop forks all 60 without the sandbox. */
  g_assert_cmpint (host_python (code, &host_out), ==, 0);
  g_assert_cmpint (atoi (host_out), ==, 60);

  /* Other processes of the same user outside the sandbox do not count
   * against it (RLIMIT_NPROC counts per user namespace). */
  bystanders = g_ptr_array_new ();
  for (int i = 0; i < 20; i++)
    {
      pid_t p = fork ();

      g_assert_cmpint (p, >=, 0);
      if (p == 0)
        {
          pause ();
          _exit (0);
        }
      g_ptr_array_add (bystanders, GINT_TO_POINTER (p));
    }
  run = sandbox_python (&fx, code);
  for (guint i = 0; i < bystanders->len; i++)
    {
      pid_t p = GPOINTER_TO_INT (g_ptr_array_index (bystanders, i));

      kill (p, SIGKILL);
      waitpid (p, NULL, 0);
    }
  g_ptr_array_unref (bystanders);
  g_assert_cmpint (run->exit.code, ==, 0);
  /* 16 tasks of the command (python and at most 15 children); sbx-init
   * is not counted against the limit. */
  g_assert_cmpint (atoi (run->out), <=, 15);
  g_assert_cmpint (atoi (run->out), >=, 10);
  fixture_teardown (&fx);
}

static void
test_unix_socket_escape (gconstpointer rung)
{
  Fixture fx = { 0 };
  g_autofree char *sockdir = NULL;
  g_autofree char *sockpath = NULL;
  g_autofree char *abstract = NULL;
  g_autofree char *code = NULL;
  g_autofree char *host_out = NULL;
  g_autoptr(LinuxTestRun) run = NULL;
  struct sockaddr_un addr = { 0 };
  int path_fd, abstract_fd;

  /* A host that lets the sandbox read it (host read allowed): sockets such
   * as a D-Bus bus are then visible, and read-only mounts do not stop
   * connect().  /var/tmp is neither masked nor granted specially. */
  if (!fixture_setup_full (&fx, rung, 2, NULL))
    return;
  {
    g_autoptr(GError) error = NULL;
    char template[] = "/var/tmp/sbx-sock-XXXXXX";

    sockdir = g_strdup (g_mkdtemp (template));
    g_assert_nonnull (sockdir);
    g_assert_no_error (error);
  }
  g_chmod (sockdir, 0755);
  sockpath = g_build_filename (sockdir, "bus", NULL);
  path_fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  addr.sun_family = AF_UNIX;
  g_strlcpy (addr.sun_path, sockpath, sizeof addr.sun_path);
  g_assert_cmpint (bind (path_fd, (struct sockaddr *) &addr, sizeof addr), ==, 0);
  g_assert_cmpint (listen (path_fd, 8), ==, 0);
  abstract = g_strdup_printf ("sbx-test-%d-%u", (int) getpid (), g_random_int ());
  abstract_fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  memset (&addr, 0, sizeof addr);
  addr.sun_family = AF_UNIX;
  memcpy (addr.sun_path + 1, abstract, strlen (abstract));
  g_assert_cmpint (bind (abstract_fd, (struct sockaddr *) &addr,
                         offsetof (struct sockaddr_un, sun_path) + 1 + strlen (abstract)), ==, 0);
  g_assert_cmpint (listen (abstract_fd, 8), ==, 0);

  code = g_strdup_printf ("import socket\n"
                          "for name in ('%s', '\\0%s'):\n"
                          "  try:\n"
                          "    s = socket.socket(socket.AF_UNIX); s.settimeout(3); s.connect(name)\n"
                          "    print('connected')\n"
                          "  except OSError as e:\n"
                          "    print('refused', e.errno)\n"
                          "a, b = socket.socketpair(); a.send(b'p'); print('socketpair', b.recv(1).decode())\n",
                          sockpath, abstract);
  g_assert_cmpint (host_python (code, &host_out), ==, 0);
  g_assert_cmpstr (host_out, ==, "connected\nconnected\nsocketpair p\n");
  run = sandbox_python (&fx, code);
  g_assert_cmpint (run->exit.code, ==, 0);
  g_assert_null (strstr (run->out, "connected"));
  /* socketpair() still works (pipelines, python, git need it). */
  g_assert_nonnull (strstr (run->out, "socketpair p"));
  close (path_fd);
  close (abstract_fd);
  g_unlink (sockpath);
  g_rmdir (sockdir);

  /* Rung 1 over a visible host also hides /run, /var/run and /tmp. */
  if (g_strcmp0 (rung, SBX_LINUX_BACKEND_USERNS) == 0)
    {
      const LinuxTestEntry *e = linux_test_backend_entry (fx.backend, "host-sockets");

      g_assert_nonnull (e);
      g_assert_cmpuint (e->status, ==, SBX_ABI_REPORT_NARROWED);
      g_clear_pointer (&run, linux_test_run_free);
      run = sandbox_sh (&fx, "ls -A /run /tmp | grep -v '^/\\|^$' | grep -v '^sbx-'; "
                             "cat /etc/hostname >/dev/null && echo host-readable");
      g_assert_cmpstr (run->out, ==, "host-readable\n");
    }
  fixture_teardown (&fx);
}

static void
test_no_capabilities (gconstpointer rung)
{
  Fixture fx = { 0 };
  g_autoptr(LinuxTestRun) run = NULL;
  g_autofree char *expect = NULL;
  g_autofree char *host_out = NULL;
  /* capget/prctl rather than /proc/self/status: rung 2 grants no /proc. */
  const char *code = "import ctypes, os\n"
                     "libc = ctypes.CDLL(None, use_errno=True)\n"
                     "hdr = (ctypes.c_uint32 * 2)(0x20080522, 0)\n"
                     "data = (ctypes.c_uint32 * 6)()\n"
                     "libc.capget(hdr, data)\n"
                     "print('effective', data[0] | data[3], 'permitted', data[1] | data[4],"
                     " 'inheritable', data[2] | data[5])\n"
                     "print('bounding', sum(1 for c in range(64) if libc.prctl(23, c, 0, 0, 0) == 1))\n"
                     "print('ambient', sum(1 for c in range(64) if libc.prctl(47, 1, c, 0, 0) == 1))\n"
                     "print('uid', os.getuid(), os.geteuid(), 'gid', os.getgid())\n"
                     "for path in ('/proc/sys/kernel/hostname', '/proc/sysrq-trigger'):\n"
                     "  try:\n"
                     "    os.close(os.open(path, os.O_WRONLY)); print('writable', path)\n"
                     "  except OSError:\n"
                     "    pass\n";

  if (!fixture_setup (&fx, rung))
    return;
  if (geteuid () == 0)
    {
      /* Positive control: root outside the sandbox holds capabilities and
       * may open kernel tunables for writing. */
      g_assert_cmpint (host_python (code, &host_out), ==, 0);
      g_assert_null (strstr (host_out, "effective 0 "));
      g_assert_nonnull (strstr (host_out, "writable /proc/sys/kernel/hostname"));
    }
  run = sandbox_python (&fx, code);
  g_assert_cmpint (run->exit.code, ==, 0);
  expect = g_strdup_printf ("effective 0 permitted 0 inheritable 0\nbounding 0\nambient 0\n"
                            "uid %u %u gid %u\n", (unsigned) getuid (), (unsigned) geteuid (),
                            (unsigned) getgid ());
  /* An unprivileged caller at rung 2 keeps the (harmless) default bounding
   * set: without any capability it cannot drop it, and no_new_privs keeps
   * file capabilities from filling it. */
  if (geteuid () != 0 && g_strcmp0 (rung, SBX_LINUX_BACKEND_LANDLOCK) == 0)
    {
      g_assert_true (g_str_has_prefix (run->out, "effective 0 permitted 0 inheritable 0\nbounding "));
      g_assert_null (strstr (run->out, "writable"));
    }
  else
    g_assert_cmpstr (run->out, ==, expect);
  fixture_teardown (&fx);
}

/* Paths the policy denies inside the writable workspace: a file (exact
 * rule) and a directory stay unreadable and unwritable, siblings work. */
static void
test_denied_inside_workspace (gconstpointer rung)
{
  Fixture fx = { 0 };
  g_autofree char *why = NULL;
  g_autofree char *secret_file = NULL;
  g_autofree char *private_dir = NULL;
  g_autofree char *private_file = NULL;
  g_autofree char *plain = NULL;
  g_autoptr(LinuxTestRun) run = NULL;

  if (!linux_test_have_rung (rung, &why))
    {
      g_test_skip (why);
      return;
    }
  fx.rung = rung;
  fx.parent = etu_make_tmpdir ("sbx-confine-XXXXXX");
  fx.workspace = g_build_filename (fx.parent, "ws", NULL);
  g_assert_cmpint (g_mkdir (fx.workspace, 0755), ==, 0);
  secret_file = g_build_filename (fx.workspace, "secret.env", NULL);
  private_dir = g_build_filename (fx.workspace, "private", NULL);
  private_file = g_build_filename (private_dir, "key", NULL);
  plain = g_build_filename (fx.workspace, "plain.txt", NULL);
  g_assert_true (g_file_set_contents (secret_file, "TOKEN=abc\n", -1, NULL));
  g_assert_cmpint (g_mkdir (private_dir, 0755), ==, 0);
  g_assert_true (g_file_set_contents (private_file, "PRIVATE\n", -1, NULL));
  g_assert_true (g_file_set_contents (plain, "plain\n", -1, NULL));
  fx.policy = linux_test_policy_new (fx.workspace, 2, 2, 0, 0);
  linux_test_policy_add_rule (fx.policy, secret_file, 0, SBX_FS_ALL, SBX_FS_RULE_EXACT, SBX_FS_ORIGIN_ROOT);
  linux_test_policy_add_rule (fx.policy, private_dir, 0, SBX_FS_ALL, 0, SBX_FS_ORIGIN_ROOT);
  fx.backend = linux_test_backend_new (rung);
  g_assert_cmpint (linux_test_backend_compile (fx.backend, linux_test_policy_get (fx.policy)), ==,
                   SBX_STATUS_OK);
  /* Positive control: all of it is readable without the sandbox. */
  g_assert_cmpint (linux_test_host_sh (fx.workspace, "cat secret.env private/key plain.txt", NULL), ==, 0);
  run = sandbox_sh (&fx, "cat secret.env; cat private/key; ls private; echo x > private/new; "
                         "echo y >> secret.env; cat plain.txt");
  g_assert_null (strstr (run->out, "TOKEN"));
  g_assert_null (strstr (run->out, "PRIVATE"));
  g_assert_null (strstr (run->out, "key"));
  g_assert_nonnull (strstr (run->out, "plain\n"));
  {
    g_autofree char *secret = file_contents (secret_file);
    g_autofree char *created = g_build_filename (private_dir, "new", NULL);

    g_assert_cmpstr (secret, ==, "TOKEN=abc\n");
    g_assert_false (g_file_test (created, G_FILE_TEST_EXISTS));
  }
  fixture_teardown (&fx);
}

/* Rung 1: the view has nothing of the host but what the policy names, and
 * the curated read-only /sys (CPU topology, NUMA nodes, the sandbox's own
 * cgroup: sbx-linux-mount.c; what it holds is tested in test-linux-tools). */
static void
test_minimal_view (gconstpointer rung)
{
  Fixture fx = { 0 };
  g_autoptr(LinuxTestRun) run = NULL;

  if (g_strcmp0 (rung, SBX_LINUX_BACKEND_USERNS) != 0)
    {
      g_test_skip ("the mount view is rung 1's");
      return;
    }
  if (!fixture_setup (&fx, rung))
    return;
  run = sandbox_sh (&fx, "ls /dev | tr '\\n' ' '; echo; test -e /sys && echo has-sys; "
                         "test -e /root && echo has-root; test -e /etc/shadow && echo has-shadow; "
                         "test -e /home && echo has-home; hostname; "
                         "touch /newfile 2>/dev/null && echo root-writable; "
                         "touch /usr/newfile 2>/dev/null && echo usr-writable; "
                         "echo ok > /dev/null && echo devnull; head -c 4 /dev/urandom | wc -c; exit 0");
  g_assert_cmpstr (run->out, ==,
                   "fd full null ptmx pts random shm stderr stdin stdout tty urandom zero \n"
                   "has-sys\nsbx\ndevnull\n4\n");
  fixture_teardown (&fx);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
  linux_test_add_both ("confine/read-outside", test_read_outside);
  linux_test_add_both ("confine/write-outside", test_write_outside);
  linux_test_add_both ("confine/read-only-root", test_read_only_root);
  linux_test_add_both ("confine/dotdot", test_dotdot);
  linux_test_add_both ("confine/symlinks", test_symlinks);
  linux_test_add_both ("confine/hardlinks", test_hardlinks);
  linux_test_add_both ("confine/rename", test_rename);
  linux_test_add_both ("confine/network-deny", test_network_deny);
  linux_test_add_both ("confine/network-open", test_network_open);
  linux_test_add_both ("confine/host-processes-invisible", test_host_processes_invisible);
  linux_test_add_both ("confine/signal-ptrace-supervisor", test_signal_ptrace_supervisor);
  linux_test_add_both ("confine/terminal-injection", test_terminal_injection);
  linux_test_add_both ("confine/no-namespaces-or-mounts", test_no_namespaces_or_mounts);
  linux_test_add_both ("confine/other-executor", test_other_executor);
  linux_test_add_both ("confine/no-fd-or-env-leak", test_no_fd_or_env_leak);
  linux_test_add_both ("confine/pid-exhaustion", test_pid_exhaustion);
  linux_test_add_both ("confine/unix-socket-escape", test_unix_socket_escape);
  linux_test_add_both ("confine/no-capabilities", test_no_capabilities);
  linux_test_add_both ("confine/minimal-view", test_minimal_view);
  linux_test_add_both ("confine/denied-inside-workspace", test_denied_inside_workspace);
  return g_test_run ();
}
