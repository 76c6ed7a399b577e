/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The view supervisor's FUSE root at rung 1, through the plugin's real
 * vtable: a read, a write, an exec and a listing of a host path outside the
 * view each give the target EACCES (ENOENT with SBX_POLICY_DENIED_NOT_FOUND)
 * and exactly one denial naming the operation and the whole path, while the
 * same commands outside the sandbox succeed; ordinary programs give none;
 * spawns through the executor's zygote and warm sandbox keep a tmpfs root,
 * as the report says; where FUSE is unavailable the report says why and a
 * path outside the view answers ENOENT with no denial; a host-read view says
 * writes are refused with EROFS and not reported.
 */
#include "backend-test-util.h"
#include "executor-test-util.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <glib/gstdio.h>

#define RUNG1 "linux-userns"

typedef struct
{
  char             *workspace;
  char             *outside;    /* a host directory no rule names, outside the view */
  LinuxTestPolicy  *policy;
  LinuxTestBackend *backend;
  gboolean          observed;   /* fs-denials: enforced */
} Fixture;

/* A directory under /var/tmp (not under /tmp, which the view shows as the
 * executor's own): a file, an executable script and a subdirectory. */
static char *
make_outside (void)
{
  g_autofree char *tmpl = g_strdup ("/var/tmp/sbx-view-XXXXXX");
  char *dir = g_mkdtemp (g_steal_pointer (&tmpl));
  g_autofree char *f = NULL;
  g_autofree char *x = NULL;
  g_autofree char *sub = NULL;

  g_assert_nonnull (dir);
  g_assert_cmpint (g_chmod (dir, 0755), ==, 0);
  f = g_build_filename (dir, "f", NULL);
  x = g_build_filename (dir, "x", NULL);
  sub = g_build_filename (dir, "sub", NULL);
  g_assert_true (g_file_set_contents (f, "secret\n", -1, NULL));
  g_assert_true (g_file_set_contents (x, "#!/bin/sh\necho ran\n", -1, NULL));
  g_assert_cmpint (g_chmod (x, 0755), ==, 0);
  g_assert_cmpint (g_mkdir (sub, 0755), ==, 0);
  g_free (f);
  f = g_build_filename (sub, "e", NULL);
  g_assert_true (g_file_set_contents (f, "", -1, NULL));
  return dir;
}

static gboolean
fixture_setup (Fixture  *fx,
               uint32_t  flags,
               int       host_read)
{
  g_autofree char *why = NULL;
  const LinuxTestEntry *e;

  if (!linux_test_have_rung (RUNG1, &why))
    {
      g_test_skip (why);
      return FALSE;
    }
  fx->workspace = etu_make_tmpdir ("sbx-ws-XXXXXX");
  fx->outside = make_outside ();
  fx->policy = linux_test_policy_new (fx->workspace, 2, 2, host_read, 0);
  linux_test_policy_set_flags (fx->policy, flags);
  fx->backend = linux_test_backend_new (RUNG1);
  g_assert_cmpint (linux_test_backend_compile (fx->backend, linux_test_policy_get (fx->policy)), ==,
                   SBX_STATUS_OK);
  e = linux_test_backend_entry (fx->backend, "fs-denials");
  g_assert_nonnull (e);
  g_test_message ("fs-denials: %u %s", e->status, e->detail);
  fx->observed = e->status == SBX_ABI_REPORT_ENFORCED;
  return TRUE;
}

static void
fixture_teardown (Fixture *fx)
{
  g_clear_pointer (&fx->backend, linux_test_backend_free);
  g_clear_pointer (&fx->policy, linux_test_policy_free);
  if (fx->workspace != NULL)
    etu_rm_rf (fx->workspace);
  if (fx->outside != NULL)
    etu_rm_rf (fx->outside);
  g_clear_pointer (&fx->workspace, g_free);
  g_clear_pointer (&fx->outside, g_free);
}

/* Whether this process can open /dev/fuse (what the sandbox's A needs). */
static gboolean
fuse_openable (int *open_errno)
{
  int fd = open ("/dev/fuse", O_RDWR | O_CLOEXEC);

  if (fd < 0)
    {
      *open_errno = errno;
      return FALSE;
    }
  close (fd);
  *open_errno = 0;
  return TRUE;
}

typedef struct
{
  const char *name;
  const char *pre;      /* the command: pre, the outside directory, post */
  const char *post;
  const char *op;
  const char *target;   /* under the outside directory */
  /* what dash or the tool says for EACCES and for ENOENT (NULL: it says
   * nothing, a glob that matches nothing stays as written) */
  const char *eacces_says;
  const char *enoent_says;
} Attempt;

static const Attempt attempts[] = {
  { "read", "cat ", "/f", "read", "/f", "Permission denied", "No such file" },
  { "write-existing", "echo x >> ", "/f", "write", "/f", "Permission denied", "Directory nonexistent" },
  { "write-new", "echo x > ", "/new", "write", "/new", "Permission denied", "Directory nonexistent" },
  { "exec", "", "/x", "exec", "/x", "Permission denied", "not found" },
  /* a glob opens the directory itself (ls would stat it first: a read) */
  { "list", "echo ", "/sub/*", "list", "/sub", NULL, NULL },
};

/* sh -c @script with PATH, HOME and TMPDIR and no LANG: glibc looks a
 * locale name up in /etc/locale.alias, a host file the runtime closure
 * does not name, so with LANG set every program would add a read of it. */
static LinuxTestRun *
run_sh (Fixture    *fx,
        const char *script)
{
  g_autofree char *home = g_strdup_printf ("HOME=%s", linux_test_policy_home (fx->policy));
  g_autofree char *tmpdir = g_strdup_printf ("TMPDIR=%s", linux_test_policy_tmpdir (fx->policy));
  const char *argv[] = { "sh", "-c", script, NULL };
  const char *envp[] = { "PATH=/usr/local/bin:/usr/bin:/bin", home, tmpdir, NULL };

  return linux_test_backend_run (fx->backend, fx->policy, fx->workspace, argv, envp, NULL);
}

static void
dump_denials (GPtrArray *denials)
{
  for (guint i = 0; i < denials->len; i++)
    g_test_message ("denial: %s", (const char *) g_ptr_array_index (denials, i));
}

/* Each attempt, outside the sandbox (it works) and inside it (refused with
 * the flag's errno, and exactly one denial of that operation and path). */
static void
check_attempts (uint32_t flags)
{
  Fixture fx = { 0 };
  gboolean not_found = (flags & SBX_POLICY_DENIED_NOT_FOUND) != 0;

  if (!fixture_setup (&fx, flags, 0))
    return;
  if (!fx.observed)
    {
      g_test_skip ("the view supervisor's FUSE root is unavailable here (fs-denials: not enforced)");
      fixture_teardown (&fx);
      return;
    }
  for (gsize i = 0; i < G_N_ELEMENTS (attempts); i++)
    {
      const Attempt *a = &attempts[i];
      g_autofree char *script = g_strconcat (a->pre, fx.outside, a->post, NULL);
      g_autofree char *refused = g_strdup_printf ("%s; echo \"rc=$?\"", script);
      g_autofree char *want = g_strdup_printf ("%s|%s%s|view-supervisor|", a->op, fx.outside, a->target);
      g_autofree char *host_out = NULL;
      g_autoptr(LinuxTestRun) run = NULL;
      g_autoptr(GPtrArray) denials = NULL;

      /* Positive control: the same command without the sandbox. */
      g_assert_cmpint (linux_test_host_sh (fx.workspace, script, &host_out), ==, 0);
      if (a->eacces_says == NULL)
        g_assert_nonnull (strstr (host_out, "/sub/e"));

      /* A spec's first spawn goes directly (later ones through its
       * zygote, which keeps a tmpfs root): one spec per attempt. */
      g_assert_cmpint (linux_test_backend_compile (fx.backend, linux_test_policy_get (fx.policy)), ==,
                       SBX_STATUS_OK);
      g_ptr_array_unref (linux_test_backend_denials (fx.backend));
      run = run_sh (&fx, refused);
      g_test_message ("%s: out %s err %s", a->name, run->out, run->err);
      g_assert_cmpint (run->spawn_status, ==, SBX_STATUS_OK);
      g_assert_cmpint (run->finish_status, ==, SBX_STATUS_OK);
      g_assert_null (strstr (run->out, "ran"));
      g_assert_null (strstr (run->out, "/sub/e"));
      if (a->eacces_says != NULL)
        {
          g_assert_null (strstr (run->out, "rc=0"));
          g_assert_nonnull (strstr (run->err, not_found ? a->enoent_says : a->eacces_says));
        }
      else
        g_assert_nonnull (strstr (run->out, "/sub/*"));   /* not expanded: the listing failed */
      /* finish() returned: every denial of the spawn is in. */
      denials = linux_test_backend_denials (fx.backend);
      dump_denials (denials);
      g_assert_cmpuint (denials->len, ==, 1);
      g_assert_true (g_str_has_prefix (g_ptr_array_index (denials, 0), want));
    }
  fixture_teardown (&fx);
  etu_assert_no_children ();
}

static void
test_attempts_eacces (void)
{
  check_attempts (0);
}

static void
test_attempts_not_found (void)
{
  check_attempts (SBX_POLICY_DENIED_NOT_FOUND);
}

/* Ordinary programs probe many paths inside the view (gcc's search paths,
 * git's configuration, a Python start-up with its locale, ssl, sqlite and
 * mimetypes modules, whose /etc files the runtime closure names:
 * core/plugin/sbx-policy.c): none of it is a denial. */
static void
test_no_spurious (void)
{
  Fixture fx = { 0 };
  static const struct { const char *tool; const char *command; } commands[] = {
    { "gcc", "printf 'int main(void){return 0;}\\n' > a.c && gcc -o a a.c && ./a" },
    { "git", "git status --short" },
    { "python3", "python3 -c 'import json, locale, mimetypes, ssl, sqlite3; mimetypes.init(); locale.setlocale(locale.LC_ALL, \"\")'" },
  };

  if (!fixture_setup (&fx, 0, 0))
    return;
  if (!fx.observed)
    {
      g_test_skip ("the view supervisor's FUSE root is unavailable here (fs-denials: not enforced)");
      fixture_teardown (&fx);
      return;
    }
  g_assert_cmpint (linux_test_host_sh (fx.workspace, "git init -q . 2>/dev/null || true", NULL), ==, 0);
  for (gsize i = 0; i < G_N_ELEMENTS (commands); i++)
    {
      g_autofree char *found = g_find_program_in_path (commands[i].tool);
      g_autoptr(LinuxTestRun) run = NULL;
      g_autoptr(GPtrArray) denials = NULL;

      if (found == NULL)
        {
          g_test_message ("%s is not installed: not tried", commands[i].tool);
          continue;
        }
      g_assert_cmpint (linux_test_host_sh (fx.workspace, commands[i].command, NULL), ==, 0);
      g_assert_cmpint (linux_test_backend_compile (fx.backend, linux_test_policy_get (fx.policy)), ==,
                       SBX_STATUS_OK);
      g_ptr_array_unref (linux_test_backend_denials (fx.backend));
      run = run_sh (&fx, commands[i].command);
      g_test_message ("%s: %s%s", commands[i].command, run->out, run->err);
      g_assert_cmpint (run->exit.code, ==, 0);
      denials = linux_test_backend_denials (fx.backend);
      dump_denials (denials);
      g_assert_cmpuint (denials->len, ==, 0);
    }
  fixture_teardown (&fx);
}

/* A PATH entry outside the view (a caller's ~/.cargo/bin) is left out of
 * the target's PATH and of the search for the command: otherwise every
 * command a shell or make looks up would be a round trip to the server, an
 * EACCES and a denial, and a missing command would be "not executable"
 * (126) instead of "not found" (127). */
static void
test_path_outside (void)
{
  Fixture fx = { 0 };
  g_autofree char *path = NULL;
  g_autofree char *home = NULL;
  g_autofree char *tmpdir = NULL;
  const char *argv[] = { "sh", "-c", "cat /dev/null && echo \"PATH=$PATH\"; sbx-no-such-command", NULL };
  const char *missing[] = { "sbx-no-such-command", NULL };
  g_autoptr(LinuxTestRun) run = NULL;
  g_autoptr(LinuxTestRun) run_missing = NULL;
  g_autoptr(GPtrArray) denials = NULL;

  if (!fixture_setup (&fx, 0, 0))
    return;
  if (!fx.observed)
    {
      g_test_skip ("the view supervisor's FUSE root is unavailable here (fs-denials: not enforced)");
      fixture_teardown (&fx);
      return;
    }
  path = g_strdup_printf ("PATH=%s:/usr/bin:/bin", fx.outside);
  home = g_strdup_printf ("HOME=%s", linux_test_policy_home (fx.policy));
  tmpdir = g_strdup_printf ("TMPDIR=%s", linux_test_policy_tmpdir (fx.policy));
  {
    const char *envp[] = { path, home, tmpdir, NULL };

    run = linux_test_backend_run (fx.backend, fx.policy, fx.workspace, argv, envp, NULL);
    g_assert_cmpint (linux_test_backend_compile (fx.backend, linux_test_policy_get (fx.policy)), ==,
                     SBX_STATUS_OK);
    run_missing = linux_test_backend_run (fx.backend, fx.policy, fx.workspace, missing, envp, NULL);
  }
  g_test_message ("out %s err %s", run->out, run->err);
  g_assert_nonnull (strstr (run->out, "PATH=/usr/bin:/bin\n"));
  g_assert_cmpint (run->exit.code, ==, 127);   /* the shell's own search */
  g_assert_cmpint (run_missing->spawn_status, ==, SBX_STATUS_EXEC_NOT_FOUND);
  denials = linux_test_backend_denials (fx.backend);
  dump_denials (denials);
  g_assert_cmpuint (denials->len, ==, 0);
  /* The control: that entry is searched outside the sandbox. */
  {
    g_autofree char *out = NULL;
    g_autofree char *script = g_strdup_printf ("%s; x", path);

    g_assert_cmpint (linux_test_host_sh (fx.workspace, script, &out), ==, 0);
    g_assert_nonnull (strstr (out, "ran"));
  }
  fixture_teardown (&fx);
}

/* A spec with the FUSE root never spawns through its zygote (whose view is
 * shared by every sandbox of the executor) nor a warm sandbox: each of
 * three spawns of one spec is direct, answers EACCES and reports its one
 * attempt, as the report says. */
static void
test_zygote_and_warm (void)
{
  Fixture fx = { 0 };
  g_autofree char *script = NULL;

  if (!fixture_setup (&fx, 0, 0))
    return;
  if (!fx.observed)
    {
      g_test_skip ("the view supervisor's FUSE root is unavailable here (fs-denials: not enforced)");
      fixture_teardown (&fx);
      return;
    }
  g_assert_nonnull (strstr (linux_test_backend_entry (fx.backend, "fs-denials")->detail, "zygote"));
  script = g_strdup_printf ("cat %s/f", fx.outside);
  for (int i = 0; i < 3; i++)
    {
      g_autoptr(LinuxTestRun) run = run_sh (&fx, script);
      g_autoptr(GPtrArray) denials = linux_test_backend_denials (fx.backend);

      dump_denials (denials);
      g_assert_cmpint (run->spawn_status, ==, SBX_STATUS_OK);
      g_assert_cmpint (run->exit.code, !=, 0);
      g_assert_nonnull (strstr (run->err, "Permission denied"));
      g_assert_cmpuint (denials->len, ==, 1);
    }
  fixture_teardown (&fx);
  etu_assert_no_children ();
}

/* A connect to a socket path that does not exist on the host, under a host
 * directory outside the view that does (glibc's nscd client connects to
 * /var/run/nscd/socket for every user lookup): ENOENT, as outside and as
 * the stat of that path inside, and no denial (nothing is there to open).
 * The control: outside the sandbox the same connect gets ENOENT too. */
static void
test_missing_socket (void)
{
  Fixture fx = { 0 };
  g_autofree char *path = NULL;
  g_autofree char *script = NULL;
  g_autoptr(LinuxTestRun) run = NULL;
  g_autoptr(GPtrArray) denials = NULL;
  const char *probe = "import socket, sys\n"
                      "s = socket.socket(socket.AF_UNIX)\n"
                      "try:\n    s.connect(sys.argv[1]); print('connected')\n"
                      "except OSError as e:\n    print('errno', e.errno)\n";
  g_autofree char *out = NULL;

  if (!fixture_setup (&fx, 0, 0))
    return;
  path = g_strdup_printf ("%s/no-such.sock", fx.outside);
  {
    const char *argv[] = { "python3", "-c", probe, path, NULL };

    g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, &out, NULL, NULL,
                                 NULL));
    g_assert_cmpstr (out, ==, "errno 2\n");
  }
  {
    g_autofree char *quoted = g_shell_quote (probe);

    script = g_strdup_printf ("python3 -c %s %s", quoted, path);
  }
  run = run_sh (&fx, script);
  denials = linux_test_backend_denials (fx.backend);
  dump_denials (denials);
  g_assert_cmpint (run->spawn_status, ==, SBX_STATUS_OK);
  g_assert_cmpstr (run->out, ==, "errno 2\n");
  g_assert_cmpuint (denials->len, ==, 0);
  fixture_teardown (&fx);
}

/* Without FUSE (an unprivileged caller where /dev/fuse is 0600, sbx inside
 * sbx): the report says why, a path outside the view answers ENOENT and
 * nothing is reported; the spawn works as before. */
static void
test_fallback (void)
{
  Fixture fx = { 0 };
  g_autofree char *script = NULL;
  g_autoptr(LinuxTestRun) run = NULL;
  g_autoptr(GPtrArray) denials = NULL;
  const LinuxTestEntry *e;
  int open_errno = 0;

  if (!fixture_setup (&fx, 0, 0))
    return;
  e = linux_test_backend_entry (fx.backend, "fs-denials");
  if (fuse_openable (&open_errno))
    {
      /* This kernel mounts FUSE in a user namespace (the probe did): the
       * report says so; the fallback is exercised where the device is
       * not accessible (tests run unprivileged too). */
      g_assert_cmpuint (e->status, ==, SBX_ABI_REPORT_ENFORCED);
      g_test_skip ("/dev/fuse opens here: the fallback is tested where it does not (unprivileged, mode 0600)");
      fixture_teardown (&fx);
      return;
    }
  g_assert_cmpuint (e->status, ==, SBX_ABI_REPORT_UNENFORCED);
  g_assert_nonnull (strstr (e->detail, "/dev/fuse cannot be opened"));
  g_assert_nonnull (strstr (e->detail, g_strerror (open_errno)));
  g_assert_nonnull (strstr (e->detail, "ENOENT"));
  script = g_strdup_printf ("cat %s/f", fx.outside);
  g_assert_cmpint (linux_test_host_sh (fx.workspace, script, NULL), ==, 0);
  run = run_sh (&fx, script);
  g_assert_cmpint (run->spawn_status, ==, SBX_STATUS_OK);
  g_assert_cmpint (run->exit.code, !=, 0);
  g_assert_nonnull (strstr (run->err, "No such file"));
  denials = linux_test_backend_denials (fx.backend);
  g_assert_cmpuint (denials->len, ==, 0);
  fixture_teardown (&fx);
  etu_assert_no_children ();
}

/* A view on the host's own root (host read allowed): no FUSE root; the
 * report says writes are refused with EROFS and not reported. */
static void
test_host_root (void)
{
  Fixture fx = { 0 };
  g_autofree char *script = NULL;
  g_autoptr(LinuxTestRun) run = NULL;
  const LinuxTestEntry *e;

  if (!fixture_setup (&fx, 0, 2))
    return;
  e = linux_test_backend_entry (fx.backend, "fs-denials");
  g_assert_cmpuint (e->status, ==, SBX_ABI_REPORT_UNENFORCED);
  g_assert_nonnull (strstr (e->detail, "EROFS"));
  script = g_strdup_printf ("echo x > %s/new", fx.outside);
  run = run_sh (&fx, script);
  g_assert_nonnull (strstr (run->err, "Read-only file system"));
  g_assert_cmpuint (linux_test_backend_denials (fx.backend)->len, ==, 0);
  fixture_teardown (&fx);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
  g_test_add_func ("/linux/view/attempts/eacces", test_attempts_eacces);
  g_test_add_func ("/linux/view/attempts/not-found", test_attempts_not_found);
  g_test_add_func ("/linux/view/no-spurious", test_no_spurious);
  g_test_add_func ("/linux/view/path-outside", test_path_outside);
  g_test_add_func ("/linux/view/zygote-and-warm", test_zygote_and_warm);
  g_test_add_func ("/linux/view/missing-socket", test_missing_socket);
  g_test_add_func ("/linux/view/fallback", test_fallback);
  g_test_add_func ("/linux/view/host-root", test_host_root);
  return g_test_run ();
}
