/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The view supervisor's FUSE root at rung 1, through the plugin's real
 * vtable: a read, a write, an exec and a listing of a host path outside the
 * view each give the target EACCES (ENOENT with SBX_POLICY_DENIED_NOT_FOUND)
 * and exactly one denial naming the operation and the whole path, while the
 * same commands outside the sandbox succeed; ordinary programs give none;
 * spawns through the executor's zygote and its warm sandboxes each have a
 * view supervisor of their own (one denial each, to that spawn's sink only,
 * also with two spawns or two executors at once; through the library, each
 * names its filesystem.path.read.v1 grant, which opens that file); where
 * FUSE is unavailable the report says why and a path outside the view
 * answers ENOENT with no denial; a host-read view says writes are refused
 * with EROFS and not reported; the file slots are looked up only by a spawn
 * that can ask; as root a spec's first spawn takes the early root; a spawn
 * that cannot make the FUSE root its report promises fails.
 *
 * It holds the cases of one module, the rung-1 view supervisor seen
 * through the plugin's vtable (one GTest binary per concept; the server
 * alone is tests/linux/test-linux-view-server.c).
 */
#include "backend-test-util.h"
#include "executor-test-util.h"
#include "sbx-linux-view-private.h"
#include "sbx-linux-view-slots.h"
#include "sbx-linux-view-start.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <time.h>
#include <sched.h>
#include <unistd.h>
#include <sys/mount.h>
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

/* fixture_setup() with the FUSE root (flags 0, no host read); skips the
 * test (torn down) where it is unavailable (fs-denials not enforced). */
static gboolean
fixture_setup_observed (Fixture *fx)
{
  if (!fixture_setup (fx, 0, 0))
    return FALSE;
  if (!fx->observed)
    {
      g_test_skip ("the view supervisor's FUSE root is unavailable here (fs-denials: not enforced)");
      fixture_teardown (fx);
      return FALSE;
    }
  return TRUE;
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

      /* A spec of its own per attempt: the first spawn of each (direct);
       * test_zygote_and_warm() covers the later ones. */
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

  if (!fixture_setup_observed (&fx))
    return;
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

  if (!fixture_setup_observed (&fx))
    return;
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

/* A file under the outside directory, made here, that the host reads
 * (the positive control of its denial). */
static char *
outside_file (Fixture    *fx,
              const char *name)
{
  char *file = g_build_filename (fx->outside, name, NULL);
  g_autofree char *script = g_strdup_printf ("cat %s", file);
  g_autofree char *out = NULL;

  g_assert_true (g_file_set_contents (file, "secret\n", -1, NULL));
  g_assert_cmpint (linux_test_host_sh (fx->workspace, script, &out), ==, 0);
  g_assert_cmpstr (out, ==, "secret\n");
  return file;
}

/* Clock ticks since boot now (the unit of /proc/PID/stat's starttime). */
static long long
boot_ticks_now (void)
{
  struct timespec ts;

  g_assert_cmpint (clock_gettime (CLOCK_BOOTTIME, &ts), ==, 0);
  return (long long) ts.tv_sec * sysconf (_SC_CLK_TCK) + ts.tv_nsec / (1000000000LL / sysconf (_SC_CLK_TCK));
}

/* Every spawn of a spec with the FUSE root has a view supervisor of its
 * own: the first (direct), the second (through the executor's zygote) and
 * the third and later (each the warm sandbox the one before prepared) each
 * answer EACCES and report exactly their one attempt.  That the later ones
 * really went through the zygote and a warm sandbox is seen inside: from
 * the second on the target is in the zygote's user namespace (the first's
 * is its own), and from the third on the sandbox's PID 1 started before the
 * call (built ahead of need, at the end of the spawn before). */
static void
test_zygote_and_warm (void)
{
  enum { N = 5 };
  Fixture fx = { 0 };
  g_autofree char *first_userns = NULL;
  g_autofree char *zygote_userns = NULL;

  if (!fixture_setup_observed (&fx))
    return;
  g_assert_nonnull (strstr (linux_test_backend_entry (fx.backend, "fs-denials")->detail, "zygote"));
  for (int i = 0; i < N; i++)
    {
      g_autofree char *name = g_strdup_printf ("f-%d", i);
      g_autofree char *file = outside_file (&fx, name);
      g_autofree char *script = g_strdup_printf ("readlink /proc/self/ns/user; cut -d' ' -f22 /proc/1/stat; "
                                                 "cat %s", file);
      g_autofree char *want = g_strdup_printf ("read|%s|view-supervisor|", file);
      g_autoptr(LinuxTestRun) run = NULL;
      g_autoptr(GPtrArray) denials = NULL;
      g_auto(GStrv) lines = NULL;
      long long before;

      /* A margin for the start times: the warm sandbox is built at the
       * end of the spawn before, well before this call. */
      if (i >= 2)
        g_usleep (300 * 1000);
      before = boot_ticks_now ();
      run = run_sh (&fx, script);
      denials = linux_test_backend_denials (fx.backend);
      dump_denials (denials);
      g_test_message ("spawn %d: out %s err %s", i, run->out, run->err);
      g_assert_cmpint (run->spawn_status, ==, SBX_STATUS_OK);
      g_assert_cmpint (run->exit.code, !=, 0);
      g_assert_nonnull (strstr (run->err, "Permission denied"));
      g_assert_null (strstr (run->out, "secret"));
      g_assert_cmpuint (denials->len, ==, 1);
      g_assert_true (g_str_has_prefix (g_ptr_array_index (denials, 0), want));
      lines = g_strsplit (run->out, "\n", -1);
      g_assert_cmpuint (g_strv_length (lines), >=, 2);
      if (i == 0)
        first_userns = g_strdup (lines[0]);
      else if (i == 1)
        {
          g_assert_cmpstr (lines[0], !=, first_userns);
          zygote_userns = g_strdup (lines[0]);
        }
      else
        {
          g_assert_cmpstr (lines[0], ==, zygote_userns);
          /* 300 ms is 30 ticks of 100 Hz: 10 is a third of the margin. */
          g_assert_cmpint (g_ascii_strtoll (lines[1], NULL, 10), <, before - 10);
        }
    }
  fixture_teardown (&fx);
  etu_assert_no_children ();
}

/* A denial sink of one spawn: "op|target" of each denial. */
typedef struct
{
  SbxBackendDenialSinkV1 sink;
  GMutex                 lock;
  GPtrArray             *got;
} SpawnSink;

static void
spawn_sink_denied (void                     *data,
                   const SbxBackendDenialV1 *denial)
{
  SpawnSink *s = data;

  g_mutex_lock (&s->lock);
  g_ptr_array_add (s->got, g_strdup_printf ("%u|%s", denial->operation, denial->target));
  g_mutex_unlock (&s->lock);
}

static void
spawn_sink_init (SpawnSink *s)
{
  memset (s, 0, sizeof *s);   /* no ask: a sink's unset members are NULL, as the ABI reads them */
  s->sink.struct_size = sizeof s->sink;
  s->sink.denied = spawn_sink_denied;
  s->sink.data = s;
  g_mutex_init (&s->lock);
  s->got = g_ptr_array_new_with_free_func (g_free);
}

static void
spawn_sink_clear (SpawnSink *s)
{
  g_ptr_array_unref (s->got);
  g_mutex_clear (&s->lock);
}

/* Exactly one read denial of @file in @s. */
static void
spawn_sink_assert_one (SpawnSink  *s,
                       const char *file)
{
  g_autofree char *want = g_strdup_printf ("%u|%s", SBX_ABI_DENIAL_READ, file);

  g_mutex_lock (&s->lock);
  for (guint i = 0; i < s->got->len; i++)
    g_test_message ("sink %p: %s", (void *) s, (const char *) g_ptr_array_index (s->got, i));
  g_assert_cmpuint (s->got->len, ==, 1);
  g_assert_cmpstr (g_ptr_array_index (s->got, 0), ==, want);
  g_mutex_unlock (&s->lock);
}

/* Two spawns of one executor alive at once, each with a sink of its own
 * (the third and fourth: warm sandboxes): each attempt reaches its own
 * spawn's sink only, also while the other sandbox is alive. */
static void
test_sinks_apart_one_executor (void)
{
  Fixture fx = { 0 };
  SpawnSink sinks[2];
  LinuxTestProc *procs[2];
  char *files[2];

  if (!fixture_setup_observed (&fx))
    return;
  for (int i = 0; i < 2; i++)
    {
      g_autoptr(LinuxTestRun) run = run_sh (&fx, "true");

      g_assert_cmpint (run->exit.code, ==, 0);
    }
  for (int i = 0; i < 2; i++)
    {
      g_autofree char *name = g_strdup_printf ("g-%d", i);
      g_autofree char *script = NULL;
      const char *argv[] = { "/bin/sh", "-c", NULL, NULL };
      LinuxTestRun *failed = NULL;

      files[i] = outside_file (&fx, name);
      script = g_strdup_printf ("echo ready; read x; cat %s", files[i]);
      argv[2] = script;
      spawn_sink_init (&sinks[i]);
      procs[i] = linux_test_backend_start_sink (fx.backend, fx.policy, fx.workspace, argv, NULL, -1, 0,
                                                &sinks[i].sink, &failed);
      if (procs[i] == NULL)
        g_error ("spawn %d failed: %s", i, failed != NULL ? failed->spawn_error : "?");
      g_assert_true (linux_test_proc_read_until (procs[i], "ready\n", 30000));
    }
  /* The first attempts while the second sandbox waits, then the second. */
  for (int i = 0; i < 2; i++)
    {
      g_autoptr(LinuxTestRun) run = linux_test_proc_wait (procs[i], "go\n");

      g_test_message ("spawn %d: err %s", i, run->err);
      g_assert_cmpint (run->exit.code, !=, 0);
      g_assert_nonnull (strstr (run->err, "Permission denied"));
    }
  for (int i = 0; i < 2; i++)
    {
      spawn_sink_assert_one (&sinks[i], files[i]);
      spawn_sink_clear (&sinks[i]);
      g_free (files[i]);
    }
  /* Nothing went to the backend's record (the sink of every other spawn). */
  g_assert_cmpuint (linux_test_backend_denials (fx.backend)->len, ==, 0);
  fixture_teardown (&fx);
  etu_assert_no_children ();
}

static void
slots_ask_deny (void                     *data,
                const SbxBackendDenialV1 *request,
                SbxBackendAnswerFunc     *answer,
                void                     *ticket)
{
  answer (ticket, SBX_ABI_DECISION_DENY);
}

/* The view supervisor's file slots are looked up (one lookup each, B adding
 * its Landlock rule) only by a spawn whose sink can ask: without an ask
 * none is, on the first spawn (direct), the second (the zygote's) and the
 * third (a warm sandbox); with one, all of them are, on each.  And the
 * slots still serve: a spawn that can ask is the one
 * typelib-file-ask's approvals go through. */
static void
test_slots_only_with_ask (void)
{
  Fixture fx = { 0 };

  if (!fixture_setup_observed (&fx))
    return;
  for (int ask = 0; ask < 2; ask++)
    {
      g_assert_cmpint (linux_test_backend_compile (fx.backend, linux_test_policy_get (fx.policy)), ==,
                       SBX_STATUS_OK);
      for (int i = 0; i < 3; i++)
        {
          const char *argv[] = { "/bin/sh", "-c", "true", NULL };
          LinuxTestRun *failed = NULL;
          g_autoptr(LinuxTestRun) run = NULL;
          SpawnSink sink;
          guint64 before = sbx_view_files_slot_lookups ();
          LinuxTestProc *proc;

          spawn_sink_init (&sink);
          if (ask)
            sink.sink.ask = slots_ask_deny;
          proc = linux_test_backend_start_sink (fx.backend, fx.policy, fx.workspace, argv, NULL, -1, 0, &sink.sink,
                                                &failed);
          if (proc == NULL)
            g_error ("spawn failed: %s", failed != NULL ? failed->spawn_error : "?");
          run = linux_test_proc_wait (proc, NULL);
          g_assert_cmpint (run->exit.code, ==, 0);
          g_test_message ("ask %d, spawn %d: %" G_GUINT64_FORMAT " slot lookups", ask, i,
                          sbx_view_files_slot_lookups () - before);
          g_assert_cmpuint (sbx_view_files_slot_lookups () - before, ==, ask ? SBX_VIEW_N_SLOTS : 0);
          spawn_sink_clear (&sink);
        }
    }
  fixture_teardown (&fx);
  etu_assert_no_children ();
}

/* As root, the first spawn of a spec takes the early root
 * (sbx-linux-view-start.c: made, served and listed while the caller goes
 * on from compile to that spawn).  It refuses and reports as a root A
 * made does: EACCES and exactly one denial, naming the pid the process
 * has inside the sandbox (the requests are numbered in our pid namespace,
 * the report in the sandbox's).  The spec's second spawn (the zygote's)
 * takes none and reports the same.  A spec released before any spawn took
 * its early root leaves nothing open; the first spec of a backend takes
 * the spare made while it probed, and a spare no spec took leaves nothing
 * open when its backend goes. */
static void
test_early_root (void)
{
  Fixture fx = { 0 };
  g_autofree char *file = NULL;
  g_autofree char *script = NULL;

  if (geteuid () != 0)
    {
      g_test_skip ("the early root is made only where sbx may mount FUSE itself (root)");
      return;
    }
  if (!fixture_setup_observed (&fx))
    return;
  file = outside_file (&fx, "early");   /* the positive control: the host reads it */
  script = g_strdup_printf ("echo $$; exec cat %s", file);
  g_assert_cmpint (linux_test_backend_compile (fx.backend, linux_test_policy_get (fx.policy)), ==, SBX_STATUS_OK);
  for (int i = 0; i < 2; i++)
    {
      guint taken = sbx_linux_view_early_n_taken ();
      g_autoptr(LinuxTestRun) run = NULL;
      g_autoptr(GPtrArray) denials = NULL;
      g_autofree char *want = NULL;

      g_ptr_array_unref (linux_test_backend_denials (fx.backend));
      run = run_sh (&fx, script);
      g_test_message ("spawn %d: out %s err %s", i, run->out, run->err);
      g_assert_cmpint (run->spawn_status, ==, SBX_STATUS_OK);
      g_assert_cmpint (run->exit.code, !=, 0);
      g_assert_nonnull (strstr (run->err, "Permission denied"));
      denials = linux_test_backend_denials (fx.backend);
      dump_denials (denials);
      g_assert_cmpuint (denials->len, ==, 1);
      want = g_strdup_printf ("read|%s|view-supervisor|%s", file, g_strchomp (run->out));
      g_assert_cmpstr (g_ptr_array_index (denials, 0), ==, want);
      g_assert_cmpuint (sbx_linux_view_early_n_taken (), ==, taken + (i == 0 ? 1 : 0));
    }
  fixture_teardown (&fx);
  etu_assert_no_children ();

  /* Released unused: its thread joined, its server and mount closed (the
   * view supervisor's own thread, started above, stays). */
  {
    guint fds = etu_count_fds ();
    g_autoptr(LinuxTestPolicy) policy = NULL;
    g_autofree char *ws = etu_make_tmpdir ("sbx-ws-XXXXXX");
    LinuxTestBackend *backend = linux_test_backend_new (RUNG1);
    guint taken = sbx_linux_view_early_n_taken ();
    guint spares = sbx_linux_view_early_n_spares_taken ();

    policy = linux_test_policy_new (ws, 2, 2, 0, 0);
    for (int i = 0; i < 3; i++)
      g_assert_cmpint (linux_test_backend_compile (backend, linux_test_policy_get (policy)), ==, SBX_STATUS_OK);
    /* The first compile took the spare made while its backend probed. */
    g_assert_cmpuint (sbx_linux_view_early_n_spares_taken (), ==, spares + 1);
    linux_test_backend_free (backend);
    g_assert_cmpuint (sbx_linux_view_early_n_taken (), ==, taken);
    g_assert_cmpuint (etu_count_fds (), ==, fds);
    etu_rm_rf (ws);
  }

  /* A spare no spec took goes with its probe: nothing left open. */
  {
    guint fds = etu_count_fds ();
    guint spares = sbx_linux_view_early_n_spares_taken ();
    LinuxTestBackend *backend = linux_test_backend_new (RUNG1);
    SbxProbeResultV1 result;

    g_assert_cmpint (linux_test_backend_probe (backend, &result), ==, SBX_STATUS_OK);
    linux_test_backend_free (backend);
    g_assert_cmpuint (sbx_linux_view_early_n_spares_taken (), ==, spares);
    g_assert_cmpuint (etu_count_fds (), ==, fds);
  }
}

/* One executor's spawns on a thread of their own. */
typedef struct
{
  Fixture    *fx;
  const char *tag;
  GPtrArray  *files;   /* the file each spawn reads, in order */
} ExecutorRun;

static gpointer
executor_run_thread (gpointer data)
{
  ExecutorRun *er = data;

  for (guint i = 0; i < er->files->len; i++)
    {
      g_autofree char *script = g_strdup_printf ("cat %s", (const char *) g_ptr_array_index (er->files, i));
      g_autoptr(LinuxTestRun) run = run_sh (er->fx, script);

      g_assert_cmpint (run->spawn_status, ==, SBX_STATUS_OK);
      g_assert_cmpint (run->exit.code, !=, 0);
      g_assert_nonnull (strstr (run->err, "Permission denied"));
    }
  return NULL;
}

/* Two executors spawning at the same time on two threads (direct, zygote
 * and warm spawns of each overlapping the other's): each executor's record
 * holds exactly its own spawns' attempts, one each, in order. */
static void
test_sinks_apart_two_executors (void)
{
  enum { N = 5 };
  Fixture fx[2] = { { 0 }, { 0 } };
  ExecutorRun runs[2];
  GThread *threads[2];

  for (int e = 0; e < 2; e++)
    {
      if (!fixture_setup_observed (&fx[e]))
        {
          if (e == 1)
            fixture_teardown (&fx[0]);
          return;
        }
      runs[e].fx = &fx[e];
      runs[e].tag = e == 0 ? "a" : "b";
      runs[e].files = g_ptr_array_new_with_free_func (g_free);
      for (int i = 0; i < N; i++)
        {
          g_autofree char *name = g_strdup_printf ("%s-%d", runs[e].tag, i);

          g_ptr_array_add (runs[e].files, outside_file (&fx[e], name));
        }
    }
  for (int e = 0; e < 2; e++)
    threads[e] = g_thread_new (runs[e].tag, executor_run_thread, &runs[e]);
  for (int e = 0; e < 2; e++)
    g_thread_join (threads[e]);
  for (int e = 0; e < 2; e++)
    {
      g_autoptr(GPtrArray) denials = linux_test_backend_denials (fx[e].backend);

      dump_denials (denials);
      g_assert_cmpuint (denials->len, ==, N);
      for (int i = 0; i < N; i++)
        {
          g_autofree char *want = g_strdup_printf ("read|%s|view-supervisor|",
                                                   (const char *) g_ptr_array_index (runs[e].files, i));

          g_assert_true (g_str_has_prefix (g_ptr_array_index (denials, i), want));
        }
      g_ptr_array_unref (runs[e].files);
      fixture_teardown (&fx[e]);
    }
  etu_assert_no_children ();
}

/* The build's linux plugin directory (SBX_TEST_PLUGIN_DIRS lists the real
 * plugins' build directories). */
static char *
linux_plugin_dir (void)
{
  g_auto(GStrv) dirs = g_strsplit (g_getenv ("SBX_TEST_PLUGIN_DIRS") != NULL ? g_getenv ("SBX_TEST_PLUGIN_DIRS")
                                   : "", ":", -1);

  for (int i = 0; dirs[i] != NULL; i++)
    if (g_str_has_suffix (dirs[i], "/plugins/linux"))
      return g_strdup (dirs[i]);
  g_error ("SBX_TEST_PLUGIN_DIRS names no plugins/linux directory");
  return NULL;
}

/* Through the library, as a caller sees it (the core maps each backend
 * denial to an SbxDenial with its grant): host read gated, one executor's
 * first four runs (direct, through the zygote, then two warm sandboxes)
 * each end with exactly one denial, the read of that run's file by the
 * view supervisor, naming the grant filesystem.path.read.v1 of that file;
 * that grant, passed back, opens that file and no other (a run with grants
 * is a transient spec, spawned directly). */
static void
test_library_grants (void)
{
  enum { N = 4 };
  Fixture fx = { 0 };
  EtuTree tree = { 0 };
  g_autofree char *plugin_dir = NULL;
  g_autoptr(SbxRegistry) registry = NULL;
  g_autoptr(SbxProfileConfig) config = NULL;
  g_autoptr(SbxProfile) profile = NULL;
  g_autoptr(SbxExecutorSetOptions) options = NULL;
  g_autoptr(SbxExecutorSet) set = NULL;
  g_autoptr(SbxExecutor) executor = NULL;
  g_autoptr(GError) error = NULL;
  const char *dirs[2] = { NULL, NULL };
  g_autoptr(GPtrArray) files = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) usernss = g_ptr_array_new_with_free_func (g_free);

  /* The backend fixture tells whether the FUSE root is there (and makes
   * the outside directory). */
  if (!fixture_setup_observed (&fx))
    return;
  plugin_dir = linux_plugin_dir ();
  dirs[0] = plugin_dir;
  registry = sbx_registry_new_for_directories (dirs, &error);
  g_assert_no_error (error);
  etu_tree_init (&tree);
  config = sbx_profile_config_new ();
  sbx_profile_config_set_workspace (config, tree.ws, SBX_ACCESS_ALLOW, SBX_ACCESS_ALLOW);
  sbx_profile_config_set_host (config, SBX_ACCESS_GATED, SBX_ACCESS_DENY);
  sbx_profile_config_set_network (config, SBX_ACCESS_DENY);
  sbx_profile_config_set_command (config, SBX_ACCESS_ALLOW);   /* a grant is bound to a command */
  sbx_profile_config_set_home (config, SBX_HOME_ISOLATED);
  profile = sbx_profile_new (config, &error);
  g_assert_no_error (error);
  options = etu_options (tree.scratch, 2, registry);
  sbx_executor_set_options_set_backend (options, RUNG1);
  set = sbx_executor_set_new (profile, options, &error);
  g_assert_no_error (error);
  executor = sbx_executor_set_for_key (set, "k", &error);
  g_assert_no_error (error);
  for (int i = 0; i < N; i++)
    {
      g_autofree char *name = g_strdup_printf ("lib-%d", i);
      g_autofree char *file = outside_file (&fx, name);
      g_autofree char *script = g_strdup_printf ("readlink /proc/self/ns/user; cat %s", file);
      g_autoptr(SbxRunResult) result = sbx_executor_run (executor, tree.ws, SBX_SH_ARGV (script), NULL, NULL,
                                                         &error);
      GPtrArray *denials;
      SbxDenial *d;
      gsize len = 0;
      const char *out;
      g_autofree char *userns = NULL;

      g_assert_no_error (error);
      /* The first run is in a user namespace of its own, the later ones in
       * the zygote's. */
      out = g_bytes_get_data (sbx_run_result_get_output (result), &len);
      userns = g_strndup (out, len);
      g_assert_nonnull (strchr (userns, '\n'));
      *strchr (userns, '\n') = '\0';
      if (i == 1)
        g_assert_cmpstr (userns, !=, g_ptr_array_index (usernss, 0));
      else if (i > 1)
        g_assert_cmpstr (userns, ==, g_ptr_array_index (usernss, 1));
      g_ptr_array_add (usernss, g_steal_pointer (&userns));
      denials = sbx_run_result_get_denials (result);
      g_assert_nonnull (denials);
      for (guint k = 0; k < denials->len; k++)
        {
          g_autofree char *line = sbx_denial_to_string (denials->pdata[k]);

          g_test_message ("run %d: %s", i, line);
        }
      g_assert_cmpint (sbx_run_result_get_exit_status (result), !=, 0);
      g_assert_cmpuint (denials->len, ==, 1);
      d = denials->pdata[0];
      g_assert_cmpint (sbx_denial_get_operation (d), ==, SBX_DENIAL_OPERATION_READ);
      g_assert_cmpstr (sbx_denial_get_target (d), ==, file);
      g_assert_cmpstr (sbx_denial_get_mechanism (d), ==, "view-supervisor");
      g_assert_cmpuint (sbx_denial_get_count (d), ==, 1);
      g_assert_cmpstr (sbx_denial_get_grant_class (d), ==, "filesystem.path.read.v1");
      g_assert_cmpstr (sbx_denial_get_grant_target (d), ==, file);
      g_ptr_array_add (files, g_steal_pointer (&file));
    }
  /* That grant passed back opens exactly that file: the last run's file is
   * read, the one before it is still refused (and reported). */
  {
    g_autofree char *script = g_strdup_printf ("cat %s; cat %s", (const char *) files->pdata[N - 1],
                                               (const char *) files->pdata[N - 2]);
    g_autofree char *bound = sbx_grant_command_for_argv (SBX_SH_ARGV (script));
    g_autofree char *token = sbx_executor_issue_grant (executor, "exec-1", bound, tree.ws,
                                                       SBX_GRANT_CLASS_FILESYSTEM_PATH_READ,
                                                       files->pdata[N - 1], NULL, &error);
    const char *grants[] = { token, NULL };
    g_autoptr(SbxRunResult) result = NULL;
    GPtrArray *denials;
    gsize len = 0;
    const char *out;
    g_autofree char *text = NULL;

    g_assert_no_error (error);
    result = etu_run_with_grants (executor, tree.ws, SBX_SH_ARGV (script), "exec-1", grants, NULL, NULL, &error);
    g_assert_no_error (error);
    /* stdout and stderr together: the first file's contents, then cat's
     * complaint about the second */
    out = g_bytes_get_data (sbx_run_result_get_output (result), &len);
    text = g_strndup (out, len);
    g_test_message ("granted run: %s", text);
    g_assert_true (g_str_has_prefix (text, "secret\n"));
    g_assert_null (strstr (text + strlen ("secret\n"), "secret"));
    g_assert_nonnull (strstr (text, "Permission denied"));
    denials = sbx_run_result_get_denials (result);
    g_assert_cmpuint (denials->len, ==, 1);
    g_assert_cmpstr (sbx_denial_get_target (denials->pdata[0]), ==, files->pdata[N - 2]);
  }
  g_assert_true (sbx_executor_set_close (set, NULL, NULL));
  g_clear_object (&executor);
  g_clear_object (&set);
  etu_tree_clear (&tree);
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

/* A spawn whose report promises the FUSE root and that cannot make it
 * fails, naming the step, instead of running with the tmpfs root and its
 * attempts unobserved.  Root only: the case needs a mount namespace for
 * one thread of this process (unshare(CLONE_NEWNS) in a threaded process
 * needs CAP_SYS_ADMIN), in which /dev/fuse is /dev/null after the probe:
 * the spec still says "enforced", and every FUSE mount made from that
 * thread (the early root's, A's, the zygote's A's) fails with EINVAL. */
static gpointer
unobservable_thread (gpointer data)
{
  Fixture *fx = data;
  g_autofree char *marker = g_build_filename (fx->workspace, "ran", NULL);
  g_autofree char *script = g_strdup_printf ("touch %s", marker);

  /* Positive control: the same command runs, the FUSE root made. */
  g_assert_cmpint (linux_test_backend_compile (fx->backend, linux_test_policy_get (fx->policy)), ==,
                   SBX_STATUS_OK);
  {
    g_autoptr(LinuxTestRun) run = run_sh (fx, script);

    g_assert_cmpint (run->spawn_status, ==, SBX_STATUS_OK);
    g_assert_cmpint (run->exit.code, ==, 0);
    g_assert_true (g_file_test (marker, G_FILE_TEST_EXISTS));
    g_assert_cmpint (g_unlink (marker), ==, 0);
  }

  g_assert_cmpint (unshare (CLONE_NEWNS), ==, 0);
  g_assert_cmpint (mount (NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL), ==, 0);
  g_assert_cmpint (mount ("/dev/null", "/dev/fuse", NULL, MS_BIND, NULL), ==, 0);
  g_assert_cmpint (linux_test_backend_compile (fx->backend, linux_test_policy_get (fx->policy)), ==,
                   SBX_STATUS_OK);
  g_assert_cmpuint (linux_test_backend_entry (fx->backend, "fs-denials")->status, ==,
                    SBX_ABI_REPORT_ENFORCED);
  /* The direct spawn, then the zygote's (and the warm sandbox the zygote
   * may prepare meanwhile, which fails the same way and is dropped). */
  for (int i = 0; i < 3; i++)
    {
      g_autoptr(LinuxTestRun) run = run_sh (fx, script);

      g_test_message ("spawn %d: %s", i, run->spawn_error != NULL ? run->spawn_error : "(none)");
      g_assert_cmpint (run->spawn_status, ==, SBX_STATUS_FAILED);
      g_assert_nonnull (run->spawn_error);
      g_assert_nonnull (strstr (run->spawn_error, "view-supervisor-root"));
      g_assert_nonnull (strstr (run->spawn_error, "/dev/fuse"));
      g_assert_nonnull (strstr (run->spawn_error, g_strerror (EINVAL)));
      g_assert_false (g_file_test (marker, G_FILE_TEST_EXISTS));
    }
  g_assert_cmpuint (linux_test_backend_denials (fx->backend)->len, ==, 0);
  /* The spec (its zygote) goes with this thread's mount namespace. */
  linux_test_backend_free (g_steal_pointer (&fx->backend));
  return NULL;
}

static void
test_unobservable (void)
{
  Fixture fx = { 0 };

  if (geteuid () != 0)
    {
      g_test_skip ("root only: a mount namespace for one thread of this process");
      return;
    }
  if (!fixture_setup_observed (&fx))
    return;
  g_thread_join (g_thread_new ("unobservable", unobservable_thread, &fx));
  fixture_teardown (&fx);
  etu_assert_no_children ();
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
  g_test_add_func ("/linux/view/sinks-apart/one-executor", test_sinks_apart_one_executor);
  g_test_add_func ("/linux/view/sinks-apart/two-executors", test_sinks_apart_two_executors);
  g_test_add_func ("/linux/view/library/grants", test_library_grants);
  g_test_add_func ("/linux/view/slots-only-with-ask", test_slots_only_with_ask);
  g_test_add_func ("/linux/view/early-root", test_early_root);
  g_test_add_func ("/linux/view/missing-socket", test_missing_socket);
  g_test_add_func ("/linux/view/fallback", test_fallback);
  g_test_add_func ("/linux/view/unobservable", test_unobservable);
  g_test_add_func ("/linux/view/host-root", test_host_root);
  return g_test_run ();
}
