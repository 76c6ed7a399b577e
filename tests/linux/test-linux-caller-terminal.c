/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The caller's terminal: a command whose stdin is the
 * caller's terminal and whose stdout is a pipe (`sbx run -- cmd | cat` from
 * an interactive shell, `--no-pty`) must not be able to change that
 * terminal, on any entry path, at either rung; a command in a terminal of
 * its own keeps full control of it.
 *
 * The "caller's terminal" is a pty pair this test creates.  The probe
 * (tests/linux/entry-probe/sbx-entry-probe, its tty_* operations) makes the
 * terminal-setting requests on its stdin through the native `syscall`
 * entry, the i386 `int $0x80` gate and x32 (killed whole), with arguments
 * that change the terminal (echo off, another interrupt character, a 1x1
 * window, ...), also through a dup(2) of the descriptor and a reopening of
 * /proc/self/fd/0.  After every sandboxed run the terminal's modes, window
 * size, line discipline and exclusive flag are byte for byte what they
 * were.  The positive control runs the same probe on the same terminal
 * without the sandbox: the requests succeed and the settings change.
 */
#include "backend-test-util.h"

#include <errno.h>
#include <fcntl.h>
#include <pty.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>
#include <glib/gstdio.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

#include "sbx-linux-private.h"
#include "executor-test-util.h"

#define NOT_OK "!ok"

typedef struct
{
  const char *op;
  const char *inside;     /* expected inside, both rungs, native and i386 */
  gboolean    control;    /* also run outside (TIOCCONS is not: as root it would take the host's console) */
} TtyRow;

static const TtyRow rows[] = {
  /* reading stays */
  { "tty_tcgets", "ok", TRUE },
  { "tty_tiocgwinsz", "ok", TRUE },
  { "tty_fionread", "ok", TRUE },
  { "tty_tcdrain", "ok", TRUE },
  /* setting is refused, on any descriptor */
  { "tty_tcsets", "e1", TRUE },
  { "tty_tcsetsw", "e1", TRUE },
  { "tty_tcsetsf", "e1", TRUE },
  { "tty_tcsets_high", "e1", TRUE },
  { "tty_tcseta", "e1", TRUE },
  { "tty_tcsets2", "e1", TRUE },
  { "tty_tiocswinsz", "e1", TRUE },
  { "tty_tiocsetd", "e1", TRUE },
  { "tty_tcflsh", "e1", TRUE },
  { "tty_tcxonc", "e1", TRUE },
  { "tty_tcsbrk", "e1", TRUE },
  { "tty_tiocsbrk", "e1", TRUE },
  { "tty_tioccbrk", "e1", TRUE },
  { "tty_tiocexcl", "e1", TRUE },
  { "tty_tiocnxcl", "e1", TRUE },
  { "tty_kdsetmode", "e1", TRUE },
  { "tty_tiocsctty", "e1", TRUE },
  { "tty_tiocspgrp", "e1", TRUE },
  { "tty_dup_tcsets", "e1", TRUE },
  /* rung 2: Landlock refuses the open (EACCES); rung 1: the filter the request */
  { "tty_reopen_tcsets", NOT_OK, TRUE },
  { "tty_tioccons", "e1", FALSE },
};

/* Everything of the terminal a request above could change. */
typedef struct
{
  struct termios t;
  struct winsize ws;
  int            ldisc;
  int            excl;
} TtyState;

static void
tty_state (int fd, TtyState *st)
{
  memset (st, 0, sizeof *st);
  g_assert_cmpint (tcgetattr (fd, &st->t), ==, 0);
  g_assert_cmpint (ioctl (fd, TIOCGWINSZ, &st->ws), ==, 0);
  g_assert_cmpint (ioctl (fd, TIOCGETD, &st->ldisc), ==, 0);
  g_assert_cmpint (ioctl (fd, TIOCGEXCL, &st->excl), ==, 0);
}

static void
tty_restore (int fd, const TtyState *st)
{
  g_assert_cmpint (tcsetattr (fd, TCSANOW, &st->t), ==, 0);
  g_assert_cmpint (ioctl (fd, TIOCSWINSZ, &st->ws), ==, 0);
  g_assert_cmpint (ioctl (fd, TIOCSETD, &st->ldisc), ==, 0);
  g_assert_cmpint (ioctl (fd, st->excl ? TIOCEXCL : TIOCNXCL), ==, 0);
  g_assert_cmpint (tcflow (fd, TCOON), ==, 0);
}

typedef struct
{
  const char       *rung;
  char             *parent;
  char             *workspace;
  char             *probe;
  LinuxTestPolicy  *policy;
  LinuxTestBackend *backend;
  int               master;
  int               slave;     /* the caller's terminal */
  TtyState          before;
} Fixture;

static gboolean
fixture_setup (Fixture *fx, const char *rung)
{
  g_autofree char *why = NULL;
  g_autofree char *contents = NULL;
  const char *probe = g_getenv ("SBX_TEST_ENTRY_PROBE");
  struct winsize ws = { 24, 80, 0, 0 };
  gsize len;

  fx->rung = rung;
  if (!linux_test_have_rung (rung, &why))
    {
      g_test_skip (why);
      return FALSE;
    }
  g_assert_nonnull (probe);
  fx->parent = etu_make_tmpdir ("sbx-tty-XXXXXX");
  fx->workspace = g_build_filename (fx->parent, "ws", NULL);
  g_assert_cmpint (g_mkdir (fx->workspace, 0755), ==, 0);
  fx->probe = g_build_filename (fx->workspace, "sbx-entry-probe", NULL);
  g_assert_true (g_file_get_contents (probe, &contents, &len, NULL));
  g_assert_true (g_file_set_contents (fx->probe, contents, (gssize) len, NULL));
  g_assert_cmpint (g_chmod (fx->probe, 0755), ==, 0);
  fx->policy = linux_test_policy_new (fx->workspace, 2, 2, 0, 0);
  fx->backend = linux_test_backend_new (rung);
  g_assert_cmpint (linux_test_backend_compile (fx->backend, linux_test_policy_get (fx->policy)), ==,
                   SBX_STATUS_OK);
  g_assert_cmpint (openpty (&fx->master, &fx->slave, NULL, NULL, &ws), ==, 0);
  tty_state (fx->slave, &fx->before);
  return TRUE;
}

static void
fixture_teardown (Fixture *fx)
{
  if (fx->slave >= 0)
    close (fx->slave);
  if (fx->master >= 0)
    close (fx->master);
  g_clear_pointer (&fx->backend, linux_test_backend_free);
  g_clear_pointer (&fx->policy, linux_test_policy_free);
  if (fx->parent != NULL)
    etu_rm_rf (fx->parent);
  g_clear_pointer (&fx->parent, g_free);
  g_clear_pointer (&fx->workspace, g_free);
  g_clear_pointer (&fx->probe, g_free);
}

static GPtrArray *
probe_argv (const char *probe, const char *entry, gboolean control_only)
{
  GPtrArray *argv = g_ptr_array_new ();

  g_ptr_array_add (argv, (gpointer) probe);
  g_ptr_array_add (argv, (gpointer) entry);
  for (guint i = 0; i < G_N_ELEMENTS (rows); i++)
    if (!control_only || rows[i].control)
      g_ptr_array_add (argv, (gpointer) rows[i].op);
  g_ptr_array_add (argv, NULL);
  return argv;
}

/* "op result" lines (\r\n from a terminal) into op -> result. */
static GHashTable *
parse_results (const char *out)
{
  GHashTable *h = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_auto(GStrv) lines = g_strsplit (out != NULL ? out : "", "\n", -1);

  for (guint i = 0; lines[i] != NULL; i++)
    {
      char *sp;

      g_strstrip (lines[i]);
      sp = strchr (lines[i], ' ');
      if (sp == NULL)
        continue;
      *sp = '\0';
      g_hash_table_replace (h, g_strdup (lines[i]), g_strdup (sp + 1));
    }
  return h;
}

/* The probe in the sandbox with the caller's terminal as stdin and a pipe
 * as stdout and stderr. */
static GHashTable *
run_inside (Fixture *fx, const char *entry)
{
  g_autoptr(GPtrArray) argv = probe_argv (fx->probe, entry, FALSE);
  LinuxTestRun *failed = NULL;
  LinuxTestProc *proc;
  g_autoptr(LinuxTestRun) run = NULL;

  proc = linux_test_backend_start (fx->backend, fx->policy, fx->workspace, (const char *const *) argv->pdata,
                                   NULL, fx->slave, 0, &failed);
  if (proc == NULL)
    g_error ("spawn at %s: %s", fx->rung, failed->spawn_error);
  run = linux_test_proc_wait (proc, NULL);
  g_assert_cmpint (run->finish_status, ==, SBX_STATUS_OK);
  if (run->exit.kind != SBX_EXIT_EXITED || run->exit.code != 0)
    g_error ("probe %s inside %s: exit kind %u code %d, stderr: %s", entry, fx->rung, run->exit.kind,
             run->exit.code, run->err);
  g_test_message ("%s %s inside: %s", fx->rung, entry, run->out);
  return parse_results (run->out);
}

/* The same probe without any sandbox, on the same terminal. */
static GHashTable *
run_outside (Fixture *fx, const char *entry)
{
  g_autoptr(GPtrArray) argv = probe_argv (fx->probe, entry, TRUE);
  g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE);
  g_autoptr(GSubprocess) proc = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *out = NULL;

  g_subprocess_launcher_take_stdin_fd (launcher, fcntl (fx->slave, F_DUPFD_CLOEXEC, 3));
  proc = g_subprocess_launcher_spawnv (launcher, (const char *const *) argv->pdata, &error);
  g_assert_no_error (error);
  g_assert_true (g_subprocess_communicate_utf8 (proc, NULL, NULL, &out, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (g_subprocess_get_successful (proc));
  g_test_message ("%s outside: %s", entry, out);
  return parse_results (out);
}

static gboolean
result_is (const char *got, const char *expected)
{
  if (got == NULL)
    return FALSE;
  if (strcmp (expected, NOT_OK) == 0)
    return strcmp (got, "ok") != 0 && !g_str_has_prefix (got, "sig");
  return strcmp (got, expected) == 0;
}

static void
assert_unchanged (Fixture *fx, const char *what)
{
  TtyState now;

  tty_state (fx->slave, &now);
  if (memcmp (&now, &fx->before, sizeof now) != 0)
    g_error ("%s at %s changed the caller's terminal (echo %s, window %ux%u, line discipline %d, exclusive %d)",
             what, fx->rung, (now.t.c_lflag & ECHO) ? "on" : "off", now.ws.ws_row, now.ws.ws_col, now.ldisc,
             now.excl);
}

/* Native and i386 (where the kernel runs it): every row as expected
 * inside, the terminal unchanged; outside the setting rows succeed and the
 * terminal changed (then it is put back).  x32: killed, unchanged. */
static void
test_caller_terminal (gconstpointer rung)
{
  Fixture fx = { .master = -1, .slave = -1 };
  static const char *const entries[] = { "native", "i386" };
  guint entries_run = 0;

  if (!fixture_setup (&fx, rung))
    return;
  for (guint e = 0; e < G_N_ELEMENTS (entries); e++)
    {
      g_autoptr(GHashTable) outside = run_outside (&fx, entries[e]);
      g_autoptr(GHashTable) inside = NULL;
      TtyState changed;

      if (e == 1 && g_strcmp0 (g_hash_table_lookup (outside, "tty_tcgets"), "ok") != 0)
        {
          g_test_message ("no i386 emulation here: %s", (const char *) g_hash_table_lookup (outside, "tty_tcgets"));
          break;
        }
      /* the positive control: the kernel performs each request, and the
       * terminal is no longer what it was */
      for (guint i = 0; i < G_N_ELEMENTS (rows); i++)
        {
          const char *out = g_hash_table_lookup (outside, rows[i].op);

          if (!rows[i].control)
            continue;
          g_assert_nonnull (out);
          if (strcmp (rows[i].inside, "ok") == 0)
            g_assert_cmpstr (out, ==, "ok");
          else if (result_is (out, rows[i].inside))
            g_error ("%s %s outside gives %s too: the row cannot tell the filter apart", entries[e], rows[i].op,
                     out);
        }
      tty_state (fx.slave, &changed);
      g_assert_false (changed.t.c_lflag & ECHO);
      g_assert_cmpuint (changed.ws.ws_row, ==, 1);
      g_assert_cmpuint (changed.ws.ws_col, ==, 1);
      g_assert_true (memcmp (&changed, &fx.before, sizeof changed) != 0);
      tty_restore (fx.slave, &fx.before);
      assert_unchanged (&fx, "restoring after the control");

      inside = run_inside (&fx, entries[e]);
      for (guint i = 0; i < G_N_ELEMENTS (rows); i++)
        {
          const char *in = g_hash_table_lookup (inside, rows[i].op);

          if (!result_is (in, rows[i].inside))
            g_error ("%s %s at %s: inside %s, expected %s", entries[e], rows[i].op, fx.rung, in, rows[i].inside);
        }
      assert_unchanged (&fx, entries[e]);
      entries_run++;
    }
  g_assert_cmpuint (entries_run, >=, 1);

  /* x32: every call killed (sig31) or the entry absent from the kernel;
   * either way nothing changed */
  {
    g_autoptr(GHashTable) inside = run_inside (&fx, "x32");

    for (guint i = 0; i < G_N_ELEMENTS (rows); i++)
      g_assert_cmpstr (g_hash_table_lookup (inside, rows[i].op), ==, "sig31");
    assert_unchanged (&fx, "x32");
  }
  fixture_teardown (&fx);
  etu_assert_no_children ();
}

/* Per spawn: after runs that shared the caller's terminal, the same spec
 * (at rung 1 through its warm sandbox) gives a command a terminal of its own
 * with full control of it (SBX_SPAWN_PTY_SANDBOX, what --pty uses), and a
 * terminal the host hands over as the target's controlling terminal
 * (SBX_SPAWN_PTY) too; then shares the caller's again and refuses. */
static void
test_own_terminal (gconstpointer rung)
{
  Fixture fx = { .master = -1, .slave = -1 };
  const char *ops[] = { NULL, "native", "tty_tcsets", "tty_tiocswinsz", "tty_tiocsetd", "tty_tcflsh", NULL };
  LinuxTestRun *failed = NULL;
  LinuxTestProc *proc;

  if (!fixture_setup (&fx, rung))
    return;
  ops[0] = fx.probe;
  {
    g_autoptr(GHashTable) inside = run_inside (&fx, "native");

    g_assert_cmpstr (g_hash_table_lookup (inside, "tty_tcsets"), ==, "e1");
  }
  {
    g_autoptr(LinuxTestRun) run = NULL;
    g_autoptr(GHashTable) results = NULL;

    proc = linux_test_backend_start_sandbox_pty (fx.backend, fx.policy, fx.workspace, ops, 24, 80, &failed);
    g_assert_nonnull (proc);
    run = linux_test_proc_wait (proc, NULL);
    g_test_message ("sandbox terminal at %s: %s", fx.rung, run->out);
    g_assert_cmpint (run->exit.code, ==, 0);
    results = parse_results (run->out);
    for (guint i = 2; ops[i] != NULL; i++)
      g_assert_cmpstr (g_hash_table_lookup (results, ops[i]), ==, "ok");
  }
  {
    g_autoptr(LinuxTestRun) run = NULL;
    g_autoptr(GHashTable) results = NULL;
    int own_master = -1, own_slave = -1;
    struct termios t;

    g_assert_cmpint (openpty (&own_master, &own_slave, NULL, NULL, NULL), ==, 0);
    proc = linux_test_backend_start (fx.backend, fx.policy, fx.workspace, ops, NULL, own_slave, SBX_SPAWN_PTY,
                                     &failed);
    g_assert_nonnull (proc);
    run = linux_test_proc_wait (proc, NULL);
    g_test_message ("handed-over terminal at %s: %s", fx.rung, run->out);
    results = parse_results (run->out);
    for (guint i = 2; ops[i] != NULL; i++)
      g_assert_cmpstr (g_hash_table_lookup (results, ops[i]), ==, "ok");
    g_assert_cmpint (tcgetattr (own_slave, &t), ==, 0);
    g_assert_false (t.c_lflag & ECHO);   /* the target did set it */
    close (own_slave);
    close (own_master);
  }
  {
    g_autoptr(GHashTable) inside = run_inside (&fx, "native");

    g_assert_cmpstr (g_hash_table_lookup (inside, "tty_tcsets"), ==, "e1");
    g_assert_cmpstr (g_hash_table_lookup (inside, "tty_tiocswinsz"), ==, "e1");
  }
  assert_unchanged (&fx, "the runs around the target's own terminals");
  fixture_teardown (&fx);
  etu_assert_no_children ();
}

/* The report states the rule. */
static void
test_report (gconstpointer rung)
{
  Fixture fx = { .master = -1, .slave = -1 };
  const LinuxTestEntry *entry;

  if (!fixture_setup (&fx, rung))
    return;
  entry = linux_test_backend_entry (fx.backend, "terminal");
  g_assert_nonnull (entry);
  g_assert_cmpuint (entry->status, ==, SBX_ABI_REPORT_ENFORCED);
  g_assert_nonnull (strstr (entry->detail, "cannot set that terminal's modes"));
  g_assert_nonnull (strstr (entry->detail, "TIOCSTI"));
  fixture_teardown (&fx);
  etu_assert_no_children ();
}

typedef struct
{
  uint32_t flags;
  int      in, out, err;
  gboolean shared;
} ShareCase;

/* Which requests share the caller's terminal: a terminal on any standard
 * stream, except the one handed over with SBX_SPAWN_PTY. */
static void
test_shares_terminal (void)
{
  int m1 = -1, s1 = -1, m2 = -1, s2 = -1, p[2];
  ShareCase cases[6];
  guint n = 0;

  g_assert_cmpint (openpty (&m1, &s1, NULL, NULL, NULL), ==, 0);
  g_assert_cmpint (openpty (&m2, &s2, NULL, NULL, NULL), ==, 0);
  g_assert_cmpint (pipe (p), ==, 0);
  cases[n++] = (ShareCase) { 0, s1, p[1], p[1], TRUE };       /* sbx run -- cmd | cat */
  cases[n++] = (ShareCase) { 0, p[0], p[1], s1, TRUE };       /* only stderr */
  cases[n++] = (ShareCase) { 0, p[0], p[1], p[1], FALSE };
  cases[n++] = (ShareCase) { 0, -1, -1, -1, FALSE };
  cases[n++] = (ShareCase) { SBX_SPAWN_PTY, s1, s1, s1, FALSE };
  cases[n++] = (ShareCase) { SBX_SPAWN_PTY, s1, p[1], s2, TRUE };   /* another terminal on stderr */
  for (guint i = 0; i < n; i++)
    {
      SbxSpawnRequestV1 req = { 0 };

      req.struct_size = sizeof req;
      req.flags = cases[i].flags;
      req.stdin_fd = cases[i].in;
      req.stdout_fd = cases[i].out;
      req.stderr_fd = cases[i].err;
      g_assert_cmpint (sbx_linux_spawn_shares_terminal (&req), ==, cases[i].shared);
    }
  close (m1);
  close (s1);
  close (m2);
  close (s2);
  close (p[0]);
  close (p[1]);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
  linux_test_add_both ("caller-terminal/unchanged", test_caller_terminal);
  linux_test_add_both ("caller-terminal/own-terminal", test_own_terminal);
  linux_test_add_both ("caller-terminal/report", test_report);
  g_test_add_func ("/linux/caller-terminal/shares-terminal", test_shares_terminal);
  return g_test_run ();
}
