/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Conformance cases: judge one plugin file by what its backends claim.
 *
 * The plugin is copied (mode 0644) into a private 0700 directory and loaded
 * through sbx_registry_new_for_directories() on that directory alone, so
 * nothing else is loaded and the loader's file rules apply as in production.
 * For each backend:
 *
 *  1. probe; a backend whose probe fails claims nothing and is skipped.
 *  2. a profile the backend's probed guarantees can carry (an Unconfined one
 *     for an unconfined-only backend; otherwise host read/write and network
 *     denied exactly where read-, write- and network-boundary are probed),
 *     run through an executor set that forces this backend.
 *  3. claims: compile may not exceed probe (level, guarantees).
 *  4. every compiled guarantee: its probes are tried inside the sandbox and
 *     must be refused, and the same probe run outside must work (the
 *     positive control: a probe that cannot succeed proves nothing).
 *  5. teardown: nothing of the tree survives a normal exit, a timeout, a
 *     set close, or a killed supervisor (a descendant that left the process
 *     group is held against the backend only when it reported enforced
 *     containment).
 *  6. limits as reported: the output limit always; the process limit when
 *     the compile report says it is enforced.
 *  7. a spawn under a grant that drops a guarantee claims none of it
 *     (sbx-conformance-spawn.c).
 *
 * Probes run as sbx-conformance-probe (libc only), copied into the
 * workspace so it is executable in any sandbox that runs programs there.
 */
#include "sbx-conformance-private.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <unistd.h>

#include <gio/gio.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>

#include <sbx/sbx-cleanup.h>

void
sbx_conformance_case_free (SbxConformanceCase *c)
{
  if (c == NULL)
    return;
  g_free (c->backend);
  g_free (c->area);
  g_free (c->name);
  g_free (c->detail);
  g_free (c);
}

void
sbx_conformance_prepare_environment (void)
{
  g_autofree char *secret = g_strdup_printf ("sbx-conformance-secret-%08x%08x",
                                             g_random_int (), g_random_int ());

  g_setenv (SBX_CONFORMANCE_SECRET_VAR, secret, TRUE);
}
void
sbx_conformance_record (Run                   *run,
                        const char            *backend,
                        const char            *area,
                        const char            *name,
                        SbxConformanceOutcome  outcome,
                        const char            *format,
                        ...)
{
  SbxConformanceCase *c = g_new0 (SbxConformanceCase, 1);
  va_list args;

  c->backend = g_strdup (backend);
  c->area = g_strdup (area);
  c->name = g_strdup (name);
  c->outcome = outcome;
  va_start (args, format);
  c->detail = g_strdup_vprintf (format, args);
  va_end (args);
  g_ptr_array_add (run->cases, c);
  if (run->options->emit != NULL)
    run->options->emit (c, run->options->user_data);
}

gboolean
sbx_conformance_copy_file (const char  *from,
                           const char  *to,
                           int          mode,
                           GError     **error)
{
  g_autofree char *contents = NULL;
  gsize length;

  if (!g_file_get_contents (from, &contents, &length, error))
    return FALSE;
  if (!g_file_set_contents_full (to, contents, (gssize) length, G_FILE_SET_CONTENTS_NONE, mode, error))
    return FALSE;
  /* The umask may have narrowed the mode; the loader wants it exact. */
  return g_chmod (to, mode) == 0 || (g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (errno),
                                                  "chmod %s: %s", to, g_strerror (errno)), FALSE);
}

/* Removes @path recursively without following symlinks. */
void
sbx_conformance_remove_tree (const char *path)
{
  g_autoptr(GFile) file = g_file_new_for_path (path);
  g_autoptr(GFileEnumerator) children = NULL;
  GFileInfo *info;

  children = g_file_enumerate_children (file, G_FILE_ATTRIBUTE_STANDARD_NAME "," G_FILE_ATTRIBUTE_STANDARD_TYPE,
                                        G_FILE_QUERY_INFO_NOFOLLOW_SYMLINKS, NULL, NULL);
  /* A directory the sandbox made read-only to us is made writable first. */
  g_chmod (path, 0700);
  while (children != NULL && (info = g_file_enumerator_next_file (children, NULL, NULL)) != NULL)
    {
      g_autofree char *child = g_build_filename (path, g_file_info_get_name (info), NULL);

      if (g_file_info_get_file_type (info) == G_FILE_TYPE_DIRECTORY)
        sbx_conformance_remove_tree (child);
      else
        g_unlink (child);
      g_object_unref (info);
    }
  g_rmdir (path);
}
/* ------------------------------------------------------------------------- */
/* Running the probe                                                          */
/* ------------------------------------------------------------------------- */

typedef struct
{
  gboolean ran;      /* the probe ran to an exit status */
  int      status;   /* its exit code (or 128 + signal) */
  char    *output;   /* stdout (and stderr, inside) */
  char    *error;    /* why it did not run */
} ProbeRun;

static void
probe_run_clear (ProbeRun *p)
{
  g_clear_pointer (&p->output, g_free);
  g_clear_pointer (&p->error, g_free);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (ProbeRun, probe_run_clear)

static void
inside (Subject    *s,
        ProbeRun   *out,
        const char *verb,
        ...) G_GNUC_NULL_TERMINATED;

/* Runs "helper VERB ARGS..." in the sandbox. */
static void
inside (Subject    *s,
        ProbeRun   *out,
        const char *verb,
        ...)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  g_autoptr(GError) error = NULL;
  g_autoptr(SbxRunResult) result = NULL;
  va_list args;

  memset (out, 0, sizeof *out);
  g_ptr_array_add (argv, s->helper);
  g_ptr_array_add (argv, (gpointer) verb);
  va_start (args, verb);
  for (const char *a = va_arg (args, const char *); a != NULL; a = va_arg (args, const char *))
    g_ptr_array_add (argv, (gpointer) a);
  va_end (args);
  g_ptr_array_add (argv, NULL);

  result = sbx_executor_run (s->executor, s->ws, (const char *const *) argv->pdata, NULL, NULL, &error);
  if (result == NULL)
    {
      out->error = g_strdup (error->message);
      return;
    }
  out->ran = TRUE;
  out->status = sbx_run_result_get_if_exited (result) ? sbx_run_result_get_exit_status (result)
                                                   : 128 + sbx_run_result_get_term_sig (result);
  {
    GBytes *bytes = sbx_run_result_get_output (result);
    const char *data = g_bytes_get_size (bytes) > 0 ? g_bytes_get_data (bytes, NULL) : "";

    out->output = g_strchomp (g_strndup (data, g_bytes_get_size (bytes)));
  }
  s->containment = sbx_run_result_get_lifetime_containment (result);
}

static void
outside (Subject    *s,
         ProbeRun   *out,
         const char *verb,
         ...) G_GNUC_NULL_TERMINATED;

/* Runs "helper VERB ARGS..." directly, with the caller's authority. */
static void
outside (Subject    *s,
         ProbeRun   *out,
         const char *verb,
         ...)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  g_autoptr(GError) error = NULL;
  int wait_status = 0;
  va_list args;

  memset (out, 0, sizeof *out);
  g_ptr_array_add (argv, s->helper);
  g_ptr_array_add (argv, (gpointer) verb);
  va_start (args, verb);
  for (const char *a = va_arg (args, const char *); a != NULL; a = va_arg (args, const char *))
    g_ptr_array_add (argv, (gpointer) a);
  va_end (args);
  g_ptr_array_add (argv, NULL);

  if (!g_spawn_sync (s->ws, (char **) argv->pdata, NULL, G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL,
                     &out->output, NULL, &wait_status, &error))
    {
      out->error = g_strdup (error->message);
      return;
    }
  if (out->output != NULL)
    g_strchomp (out->output);
  out->ran = TRUE;
  out->status = WIFEXITED (wait_status) ? WEXITSTATUS (wait_status) : 128 + WTERMSIG (wait_status);
}

static const char *
probe_text (const ProbeRun *p)
{
  static const char *const none = "";

  if (!p->ran)
    return p->error != NULL ? p->error : none;
  return p->output != NULL ? p->output : none;
}

/* What a boundary probe did to the host, when that can be seen from
 * outside (a write reaching the host file), as opposed to the probe's own
 * exit status. */
typedef enum
{
  EFFECT_UNKNOWN,   /* judge by the exit status and the leak string only */
  EFFECT_NONE,      /* the host is untouched */
  EFFECT_SEEN,      /* the host was changed: the boundary did not hold */
} HostEffect;

/* One boundary probe: refused inside, worked outside.  A probe that
 * "worked" inside still passes when the host shows no effect of it and no
 * secret leaked: a backend may give the sandbox a private view (a write into
 * a throw-away copy) instead of an error.  @leak, when given, is a string
 * whose presence in the inside output is a leak whatever the exit status. */
static void
judge_denial (Subject        *s,
              const char     *area,
              const char     *name,
              const ProbeRun *in,
              const ProbeRun *out,
              const char     *leak,
              HostEffect      effect)
{
  Run *run = s->run;
  gboolean leaked = leak != NULL && in->ran && strstr (probe_text (in), leak) != NULL;

  if (!out->ran || out->status != PROBE_WORKED)
    sbx_conformance_record (run, s->backend, area, name, SBX_CONFORMANCE_FAIL,
                            "positive control failed: outside the sandbox the probe did not work (status %d: %s), "
                            "so a refusal inside would prove nothing", out->status, probe_text (out));
  else if (!in->ran)
    sbx_conformance_record (run, s->backend, area, name, SBX_CONFORMANCE_FAIL,
                            "the probe did not run inside the sandbox: %s", probe_text (in));
  else if (leaked || effect == EFFECT_SEEN)
    sbx_conformance_record (run, s->backend, area, name, SBX_CONFORMANCE_FAIL,
                            "%s is claimed, but the probe reached the host from inside the sandbox "
                            "(status %d, output: %.200s)", area, in->status, probe_text (in));
  else if (in->status == PROBE_WORKED && effect == EFFECT_NONE)
    sbx_conformance_record (run, s->backend, area, name, SBX_CONFORMANCE_PASS,
                            "the sandbox saw success, but the host is untouched (a private view); worked outside");
  else if (in->status == PROBE_WORKED && leak != NULL)
    sbx_conformance_record (run, s->backend, area, name, SBX_CONFORMANCE_PASS,
                            "the sandbox read something, but not the host's contents (a private view); "
                            "worked outside");
  else if (in->status == PROBE_WORKED)
    sbx_conformance_record (run, s->backend, area, name, SBX_CONFORMANCE_FAIL,
                            "%s is claimed, but the probe WORKED inside the sandbox (status %d, output: %.200s)",
                            area, in->status, probe_text (in));
  else if (in->status != PROBE_REFUSED)
    sbx_conformance_record (run, s->backend, area, name, SBX_CONFORMANCE_FAIL,
                            "unexpected probe status %d inside the sandbox: %.200s", in->status, probe_text (in));
  else
    sbx_conformance_record (run, s->backend, area, name, SBX_CONFORMANCE_PASS,
                            "refused inside (%.120s), worked outside", probe_text (in));
}

/* A positive control inside: the sandbox can do what its profile allows,
 * so the refusals above are the boundary's, not a broken probe's. */
static void
judge_allowed (Subject        *s,
               const char     *area,
               const char     *name,
               const ProbeRun *in)
{
  if (in->ran && in->status == PROBE_WORKED)
    sbx_conformance_record (s->run, s->backend, area, name, SBX_CONFORMANCE_PASS, "works inside, as the profile allows");
  else
    sbx_conformance_record (s->run, s->backend, area, name, SBX_CONFORMANCE_FAIL,
                            "the profile allows it, but it failed inside the sandbox (status %d: %.200s)",
                            in->status, probe_text (in));
}

/* ------------------------------------------------------------------------- */
/* Guarantee cases                                                            */
/* ------------------------------------------------------------------------- */

void
sbx_conformance_case_write_boundary (Subject *s)
{
  const char *area = "write-boundary";
  g_autofree char *created_in = g_build_filename (s->outside, "created-inside", NULL);
  g_autofree char *created_out = g_build_filename (s->outside, "created-outside", NULL);
  g_autofree char *existing = g_build_filename (s->outside, "existing", NULL);
  g_autofree char *existing_out = g_build_filename (s->outside, "existing-outside", NULL);
  g_autofree char *dir_in = g_build_filename (s->outside, "dir-inside", NULL);
  g_autofree char *dir_out = g_build_filename (s->outside, "dir-outside", NULL);
  g_autofree char *ws_file = g_build_filename (s->ws, "written-inside", NULL);
  g_autofree char *contents = NULL;
  g_auto(ProbeRun) in = { 0 };
  g_auto(ProbeRun) out = { 0 };

  inside (s, &in, "write", created_in, NULL);
  outside (s, &out, "write", created_out, NULL);
  judge_denial (s, area, "create-outside-roots", &in, &out, NULL,
                g_file_test (created_in, G_FILE_TEST_EXISTS) ? EFFECT_SEEN : EFFECT_NONE);
  probe_run_clear (&in);
  probe_run_clear (&out);

  g_file_set_contents (existing_out, "original\n", -1, NULL);
  inside (s, &in, "write", existing, NULL);
  outside (s, &out, "write", existing_out, NULL);
  g_file_get_contents (existing, &contents, NULL, NULL);
  judge_denial (s, area, "overwrite-outside-roots", &in, &out, NULL,
                g_strcmp0 (contents, "original\n") != 0 ? EFFECT_SEEN : EFFECT_NONE);
  probe_run_clear (&in);
  probe_run_clear (&out);

  inside (s, &in, "mkdir", dir_in, NULL);
  outside (s, &out, "mkdir", dir_out, NULL);
  judge_denial (s, area, "mkdir-outside-roots", &in, &out, NULL,
                g_file_test (dir_in, G_FILE_TEST_EXISTS) ? EFFECT_SEEN : EFFECT_NONE);
  probe_run_clear (&in);

  inside (s, &in, "write", ws_file, NULL);
  if (in.ran && in.status == PROBE_WORKED && !g_file_test (ws_file, G_FILE_TEST_IS_REGULAR))
    sbx_conformance_record (s->run, s->backend, area, "write-in-workspace", SBX_CONFORMANCE_FAIL,
                            "the write into the workspace worked inside but %s is not on the host", ws_file);
  else
    judge_allowed (s, area, "write-in-workspace", &in);
}

void
sbx_conformance_case_read_boundary (Subject *s)
{
  const char *area = "read-boundary";
  g_autofree char *secret = g_build_filename (s->outside, "secret", NULL);
  g_autofree char *visible = g_build_filename (s->ws, "visible", NULL);
  g_auto(ProbeRun) in = { 0 };
  g_auto(ProbeRun) out = { 0 };

  inside (s, &in, "read", secret, NULL);
  outside (s, &out, "read", secret, NULL);
  judge_denial (s, area, "read-host-file", &in, &out, "outside-secret-contents", EFFECT_UNKNOWN);
  probe_run_clear (&in);
  probe_run_clear (&out);

  inside (s, &in, "list", s->outside, NULL);
  outside (s, &out, "list", s->outside, NULL);
  /* The listing names what it saw: a host name in it is the leak. */
  judge_denial (s, area, "list-host-directory", &in, &out, "outside-secret-name", EFFECT_UNKNOWN);
  probe_run_clear (&in);

  inside (s, &in, "read", visible, NULL);
  judge_allowed (s, area, "read-in-workspace", &in);
}

/* A listener in the host's network namespace; connections complete in its
 * backlog, nobody accepts them. */
static int
host_listener (guint16 *out_port)
{
  struct sockaddr_in addr = { .sin_family = AF_INET };
  socklen_t len = sizeof addr;
  sbx_autofd int fd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

  addr.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
  if (fd < 0 || bind (fd, (struct sockaddr *) &addr, sizeof addr) < 0 || listen (fd, 64) < 0
      || getsockname (fd, (struct sockaddr *) &addr, &len) < 0)
    return -1;
  *out_port = ntohs (addr.sin_port);
  return sbx_steal_fd (&fd);
}

void
sbx_conformance_case_network (Subject    *s,
                              const char *area)
{
  g_auto(ProbeRun) in = { 0 };
  g_auto(ProbeRun) out = { 0 };
  g_autofree char *port_text = NULL;
  guint16 port = 0;
  sbx_autofd int fd = host_listener (&port);

  if (fd < 0)
    {
      sbx_conformance_record (s->run, s->backend, area, "connect-host-loopback", SBX_CONFORMANCE_FAIL,
                              "cannot listen on 127.0.0.1 for the probe: %s", g_strerror (errno));
      return;
    }
  port_text = g_strdup_printf ("%u", port);
  inside (s, &in, "connect", "127.0.0.1", port_text, NULL);
  outside (s, &out, "connect", "127.0.0.1", port_text, NULL);
  sbx_clear_fd (&fd);
  judge_denial (s, area, "connect-host-loopback", &in, &out, NULL, EFFECT_UNKNOWN);
}

void
sbx_conformance_case_env_scrub (Subject *s)
{
  g_auto(ProbeRun) in = { 0 };
  g_auto(ProbeRun) out = { 0 };
  const char *secret = g_getenv (SBX_CONFORMANCE_SECRET_VAR);

  if (secret == NULL)
    {
      sbx_conformance_record (s->run, s->backend, "env-scrub", "supervisor-secret-hidden", SBX_CONFORMANCE_FAIL,
                              "%s is not set in this process: sbx_conformance_prepare_environment() was not called",
                              SBX_CONFORMANCE_SECRET_VAR);
      return;
    }
  inside (s, &in, "env", SBX_CONFORMANCE_SECRET_VAR, NULL);
  outside (s, &out, "env", SBX_CONFORMANCE_SECRET_VAR, NULL);
  judge_denial (s, "env-scrub", "supervisor-secret-hidden", &in, &out, secret, EFFECT_UNKNOWN);
}

void
sbx_conformance_case_process_boundary (Subject *s)
{
  g_autofree char *marker = g_strdup_printf ("sbx-conformance-host-%d-%u", (int) getpid (), ++s->run->n_markers);
  const char *argv[] = { s->helper, "hang", marker, NULL };
  g_autoptr(GError) error = NULL;
  g_autofree char *pid_text = NULL;
  g_auto(ProbeRun) in = { 0 };
  g_auto(ProbeRun) out = { 0 };
  GPid pid;

  if (!g_spawn_async (NULL, (char **) argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL, &pid, &error))
    {
      sbx_conformance_record (s->run, s->backend, "process-boundary", "signal-host-process", SBX_CONFORMANCE_FAIL,
                              "cannot start the host process: %s", error->message);
      return;
    }
  pid_text = g_strdup_printf ("%d", (int) pid);
  inside (s, &in, "signal", pid_text, NULL);
  outside (s, &out, "signal", pid_text, NULL);
  judge_denial (s, "process-boundary", "signal-host-process", &in, &out, NULL, EFFECT_UNKNOWN);
  probe_run_clear (&in);
  probe_run_clear (&out);
  inside (s, &in, "see", pid_text, NULL);
  outside (s, &out, "see", pid_text, NULL);
  judge_denial (s, "process-boundary", "see-host-process", &in, &out, NULL, EFFECT_UNKNOWN);
  kill (pid, SIGKILL);
  waitpid (pid, NULL, 0);
}

void
sbx_conformance_case_fork_limit (Subject    *s,
                                 const char *area,
                                 const char *name)
{
  g_autofree char *inside_n = g_strdup_printf ("%d", FORKS_INSIDE);
  g_autofree char *outside_n = g_strdup_printf ("%d", FORKS_OUTSIDE);
  g_auto(ProbeRun) in = { 0 };
  g_auto(ProbeRun) out = { 0 };
  long got_in, got_out;

  outside (s, &out, "forks", outside_n, NULL);
  got_out = out.ran ? strtol (probe_text (&out), NULL, 10) : -1;
  if (!out.ran || got_out != FORKS_OUTSIDE)
    {
      sbx_conformance_record (s->run, s->backend, area, name, SBX_CONFORMANCE_FAIL,
                              "positive control failed: outside the sandbox %ld of %d forks worked", got_out, FORKS_OUTSIDE);
      return;
    }
  inside (s, &in, "forks", inside_n, NULL);
  if (!in.ran)
    {
      sbx_conformance_record (s->run, s->backend, area, name, SBX_CONFORMANCE_FAIL,
                              "the fork loop did not run inside: %s", probe_text (&in));
      return;
    }
  got_in = strtol (probe_text (&in), NULL, 10);
  if (got_in >= PROCESS_LIMIT || got_in < 0)
    sbx_conformance_record (s->run, s->backend, area, name, SBX_CONFORMANCE_FAIL,
                            "the process limit is %d, but %ld forks worked inside the sandbox", PROCESS_LIMIT, got_in);
  else
    sbx_conformance_record (s->run, s->backend, area, name, SBX_CONFORMANCE_PASS,
                            "the fork loop stopped after %ld forks inside (limit %d); %d worked outside",
                            got_in, PROCESS_LIMIT, FORKS_OUTSIDE);
}

/* ------------------------------------------------------------------------- */
/* Teardown                                                                   */
/* ------------------------------------------------------------------------- */

/* The pids of live processes with @marker as one of their arguments. */
static GArray *
find_marked (const char *marker)
{
  GArray *pids = g_array_new (FALSE, FALSE, sizeof (int));
  g_autoptr(GDir) proc = g_dir_open ("/proc", 0, NULL);
  const char *name;

  while (proc != NULL && (name = g_dir_read_name (proc)) != NULL)
    {
      g_autofree char *path = NULL;
      g_autofree char *cmdline = NULL;
      gsize length = 0;

      if (name[0] < '1' || name[0] > '9')
        continue;
      path = g_strdup_printf ("/proc/%s/cmdline", name);
      if (!g_file_get_contents (path, &cmdline, &length, NULL))
        continue;
      for (gsize i = 0; i < length; i += strlen (cmdline + i) + 1)
        if (g_str_equal (cmdline + i, marker))
          {
            int pid = atoi (name);

            g_array_append_val (pids, pid);
            break;
          }
    }
  return pids;
}

static gboolean
wait_marked (const char *marker,
             gboolean    present,
             gint64      timeout_us)
{
  gint64 deadline = g_get_monotonic_time () + timeout_us;

  for (;;)
    {
      g_autoptr(GArray) pids = find_marked (marker);

      if ((pids->len > 0) == present)
        return TRUE;
      if (g_get_monotonic_time () >= deadline)
        return FALSE;
      g_usleep (20 * 1000);
    }
}

/* Counts and kills what a case left behind, so a failure does not leak
 * processes.  A process the backend already killed may not have been
 * scheduled to die yet when the run returns: it gets SURVIVOR_GRACE_US to
 * disappear, and only one still there after that is a survivor. */
static guint
kill_marked (const char *marker)
{
  g_autoptr(GArray) pids = NULL;

  wait_marked (marker, FALSE, SURVIVOR_GRACE_US);
  pids = find_marked (marker);

  for (guint i = 0; i < pids->len; i++)
    kill (g_array_index (pids, int, i), SIGKILL);
  wait_marked (marker, FALSE, GONE_WAIT_US);
  return pids->len;
}

static char *
new_marker (Subject *s)
{
  return g_strdup_printf ("sbx-conformance-tree-%d-%u", (int) getpid (), ++s->run->n_markers);
}

void
sbx_conformance_case_teardown_exit (Subject *s)
{
  g_autofree char *marker = new_marker (s);
  g_autofree char *escapee = new_marker (s);
  g_auto(ProbeRun) in = { 0 };
  guint left;

  inside (s, &in, "linger", marker, NULL);
  left = kill_marked (marker);
  if (!in.ran || in.status != PROBE_WORKED)
    sbx_conformance_record (s->run, s->backend, "teardown", "normal-exit", SBX_CONFORMANCE_FAIL,
                            "the lingering probe did not run: %s", probe_text (&in));
  else if (left > 0)
    sbx_conformance_record (s->run, s->backend, "teardown", "normal-exit", SBX_CONFORMANCE_FAIL,
                            "%u background process(es) of the tree survived the target's exit", left);
  else
    sbx_conformance_record (s->run, s->backend, "teardown", "normal-exit", SBX_CONFORMANCE_PASS,
                            "no process of the tree survived the target's exit");
  probe_run_clear (&in);

  /* A descendant in a new session leaves the process group: only a backend
   * that reports enforced containment must still catch it. */
  inside (s, &in, "linger", escapee, "setsid", NULL);
  left = kill_marked (escapee);
  if (!in.ran || in.status != PROBE_WORKED)
    sbx_conformance_record (s->run, s->backend, "teardown", "normal-exit-new-session", SBX_CONFORMANCE_FAIL,
                            "the lingering probe did not run: %s", probe_text (&in));
  else if (left == 0)
    sbx_conformance_record (s->run, s->backend, "teardown", "normal-exit-new-session", SBX_CONFORMANCE_PASS,
                            "a descendant in a new session did not survive either");
  else if (s->containment == SBX_LIFETIME_CONTAINMENT_ENFORCED)
    sbx_conformance_record (s->run, s->backend, "teardown", "normal-exit-new-session", SBX_CONFORMANCE_FAIL,
                            "the run reported enforced containment, but a descendant in a new session survived");
  else
    sbx_conformance_record (s->run, s->backend, "teardown", "normal-exit-new-session", SBX_CONFORMANCE_SKIP,
                            "a descendant in a new session survived; the run reported containment %s, not enforced, "
                            "so it claims no better (killed by the suite)",
                            s->containment == SBX_LIFETIME_CONTAINMENT_BEST_EFFORT ? "best-effort" : "unspecified");
}

void
sbx_conformance_case_teardown_timeout (Subject *s)
{
  g_autofree char *marker = new_marker (s);
  g_autoptr(SbxRunOptions) options = sbx_run_options_new ();
  g_autoptr(SbxRunResult) result = NULL;
  g_autoptr(GError) error = NULL;
  const char *argv[] = { s->helper, "tree", marker, NULL };
  guint left;

  sbx_run_options_set_timeout (options, G_USEC_PER_SEC / 2);
  result = sbx_executor_run (s->executor, s->ws, argv, options, NULL, &error);
  left = kill_marked (marker);
  if (!g_error_matches (error, SBX_EXECUTOR_ERROR, SBX_EXECUTOR_ERROR_TIMED_OUT))
    sbx_conformance_record (s->run, s->backend, "teardown", "timeout", SBX_CONFORMANCE_FAIL,
                            "a hanging tree with a 0.5 s timeout did not time out: %s",
                            error != NULL ? error->message : "it returned a result");
  else if (left > 0)
    sbx_conformance_record (s->run, s->backend, "teardown", "timeout", SBX_CONFORMANCE_FAIL,
                            "%u process(es) of the tree survived the timeout", left);
  else
    sbx_conformance_record (s->run, s->backend, "teardown", "timeout", SBX_CONFORMANCE_PASS,
                            "timed out and left no process");
}

typedef struct
{
  SbxExecutor *executor;
  const char  *cwd;
  const char  *argv[4];
  GError      *error;
} CloseRun;

static gpointer
close_run_thread (gpointer data)
{
  CloseRun *cr = data;
  SbxRunResult *result = sbx_executor_run (cr->executor, cr->cwd, cr->argv, NULL, NULL, &cr->error);

  g_clear_pointer (&result, sbx_run_result_unref);
  return NULL;
}

void
sbx_conformance_case_teardown_close (Subject *s)
{
  g_autofree char *marker = new_marker (s);
  g_autoptr(SbxExecutorSetOptions) options = sbx_executor_set_options_new ();
  g_autoptr(SbxExecutorSet) set = NULL;
  g_autoptr(SbxExecutor) executor = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *scratch = g_build_filename (s->dir, "scratch-close", NULL);
  CloseRun cr = { 0 };
  gboolean appeared;
  GThread *thread;
  guint left;

  g_mkdir (scratch, 0700);
  sbx_executor_set_options_set_registry (options, s->run->registry);
  sbx_executor_set_options_set_backend (options, s->backend);
  sbx_executor_set_options_set_scratch_root (options, scratch);
  sbx_executor_set_options_set_max_executors (options, 2);
  set = sbx_executor_set_new (s->profile, options, &error);
  if (set != NULL)
    executor = sbx_executor_set_for_key (set, "close", &error);
  if (executor == NULL)
    {
      sbx_conformance_record (s->run, s->backend, "teardown", "set-close", SBX_CONFORMANCE_FAIL,
                              "cannot open a second executor set: %s", error->message);
      return;
    }
  cr.executor = executor;
  cr.cwd = s->ws;
  cr.argv[0] = s->helper;
  cr.argv[1] = "tree";
  cr.argv[2] = marker;
  thread = g_thread_new ("conformance-close", close_run_thread, &cr);
  appeared = wait_marked (marker, TRUE, MARKER_WAIT_US);
  sbx_executor_set_close (set, NULL, &error);
  g_thread_join (thread);
  left = kill_marked (marker);
  if (!appeared)
    sbx_conformance_record (s->run, s->backend, "teardown", "set-close", SBX_CONFORMANCE_FAIL,
                            "the tree never started: %s", cr.error != NULL ? cr.error->message : "no error");
  else if (!g_error_matches (cr.error, SBX_EXECUTOR_ERROR, SBX_EXECUTOR_ERROR_CLOSED))
    sbx_conformance_record (s->run, s->backend, "teardown", "set-close", SBX_CONFORMANCE_FAIL,
                            "closing the set did not end the run as closed: %s",
                            cr.error != NULL ? cr.error->message : "it returned a result");
  else if (error != NULL)
    sbx_conformance_record (s->run, s->backend, "teardown", "set-close", SBX_CONFORMANCE_FAIL,
                            "closing the set failed: %s", error->message);
  else if (left > 0)
    sbx_conformance_record (s->run, s->backend, "teardown", "set-close", SBX_CONFORMANCE_FAIL,
                            "%u process(es) of the tree survived the set's close", left);
  else
    sbx_conformance_record (s->run, s->backend, "teardown", "set-close", SBX_CONFORMANCE_PASS,
                            "the close ended the run and left no process");
  g_clear_error (&cr.error);
}

void
sbx_conformance_case_teardown_killed_supervisor (Subject *s)
{
  g_autofree char *marker = new_marker (s);
  g_autofree char *scratch = g_build_filename (s->dir, "scratch-killed", NULL);
  /* Not the marker itself: the supervisor's own command line must not
   * match it. */
  g_autofree char *marker_arg = g_strconcat ("marker=", marker, NULL);
  g_autoptr(GError) error = NULL;
  gboolean appeared, gone;
  GPid pid;
  guint left;

  if (s->run->options->self_path == NULL)
    {
      sbx_conformance_record (s->run, s->backend, "teardown", "killed-supervisor", SBX_CONFORMANCE_SKIP,
                              "no path to sbx-conformance was given to run a supervisor in");
      return;
    }
  g_mkdir (scratch, 0700);
  {
    const char *argv[] = { s->run->options->self_path, "--supervise-child", s->run->plugin_dir,
                           s->backend, s->profile_file, scratch, s->ws, s->helper, marker_arg, NULL };

    if (!g_spawn_async (NULL, (char **) argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDOUT_TO_DEV_NULL,
                        NULL, NULL, &pid, &error))
      {
        sbx_conformance_record (s->run, s->backend, "teardown", "killed-supervisor", SBX_CONFORMANCE_FAIL,
                                "cannot start the supervisor: %s", error->message);
        return;
      }
  }
  appeared = wait_marked (marker, TRUE, MARKER_WAIT_US);
  kill (pid, SIGKILL);
  waitpid (pid, NULL, 0);
  gone = wait_marked (marker, FALSE, GONE_WAIT_US);
  left = kill_marked (marker);
  sbx_conformance_remove_tree (scratch);
  if (!appeared)
    sbx_conformance_record (s->run, s->backend, "teardown", "killed-supervisor", SBX_CONFORMANCE_FAIL,
                            "the supervised tree never started");
  else if (gone)
    sbx_conformance_record (s->run, s->backend, "teardown", "killed-supervisor", SBX_CONFORMANCE_PASS,
                            "the tree died with its supervisor");
  else if (s->containment == SBX_LIFETIME_CONTAINMENT_ENFORCED)
    sbx_conformance_record (s->run, s->backend, "teardown", "killed-supervisor", SBX_CONFORMANCE_FAIL,
                            "the backend reports enforced containment, but %u process(es) outlived the killed supervisor",
                            left);
  else
    sbx_conformance_record (s->run, s->backend, "teardown", "killed-supervisor", SBX_CONFORMANCE_SKIP,
                            "%u process(es) outlived the killed supervisor; the backend reports containment %s, "
                            "not enforced (killed by the suite)", left,
                            s->containment == SBX_LIFETIME_CONTAINMENT_BEST_EFFORT ? "best-effort" : "unspecified");
}

/* ------------------------------------------------------------------------- */
/* Limits as reported                                                         */
/* ------------------------------------------------------------------------- */

void
sbx_conformance_case_output_limit (Subject *s)
{
  g_autoptr(SbxRunResult) result = NULL;
  g_autoptr(SbxRunOptions) options = NULL;
  g_autoptr(GError) error = NULL;
  const char *argv[] = { s->helper, "output", "1000000", NULL };
  const char *control[] = { s->helper, "output", "10000", NULL };
  gsize length;

  result = sbx_executor_run (s->executor, s->ws, control, NULL, NULL, &error);
  if (result == NULL || g_bytes_get_size (sbx_run_result_get_output (result)) != 10000
      || sbx_run_result_get_truncated (result))
    {
      sbx_conformance_record (s->run, s->backend, "limits", "output-limit", SBX_CONFORMANCE_FAIL,
                              "positive control failed: 10000 bytes of output without a limit came back as %s",
                              result == NULL ? error->message : "a different amount or truncated");
      return;
    }
  g_clear_pointer (&result, sbx_run_result_unref);
  options = sbx_run_options_new ();
  sbx_run_options_set_max_output (options, OUTPUT_LIMIT);
  result = sbx_executor_run (s->executor, s->ws, argv, options, NULL, &error);
  if (result == NULL)
    {
      sbx_conformance_record (s->run, s->backend, "limits", "output-limit", SBX_CONFORMANCE_FAIL,
                              "a run over its output limit failed instead of returning truncated output: %s", error->message);
      return;
    }
  length = g_bytes_get_size (sbx_run_result_get_output (result));
  if (!sbx_run_result_get_truncated (result) || length > OUTPUT_LIMIT)
    sbx_conformance_record (s->run, s->backend, "limits", "output-limit", SBX_CONFORMANCE_FAIL,
                            "limit %d bytes: %" G_GSIZE_FORMAT " bytes came back, truncated: %s",
                            OUTPUT_LIMIT, length, sbx_run_result_get_truncated (result) ? "yes" : "no");
  else
    sbx_conformance_record (s->run, s->backend, "limits", "output-limit", SBX_CONFORMANCE_PASS,
                            "%" G_GSIZE_FORMAT " of 1000000 bytes came back, flagged truncated (limit %d)", length, OUTPUT_LIMIT);
}

/* The compile report's verdict on a feature, or 0 when it has no entry. */
static SbxReportStatus
report_status (SbxCompileReport *report,
               const char       *feature,
               const char      **out_detail)
{
  for (guint i = 0; i < sbx_compile_report_get_n_entries (report); i++)
    if (g_str_equal (sbx_compile_report_get_entry_feature (report, i), feature))
      {
        *out_detail = sbx_compile_report_get_entry_detail (report, i);
        return sbx_compile_report_get_entry_status (report, i);
      }
  return 0;
}

void
sbx_conformance_case_process_limit (Subject *s)
{
  SbxCompileReport *report = sbx_executor_get_report (s->executor);
  const char *detail = NULL;
  SbxReportStatus status;

  if (s->unconfined)
    {
      sbx_conformance_record (s->run, s->backend, "limits", "process-limit", SBX_CONFORMANCE_SKIP,
                              "an Unconfined profile sets no limits");
      return;
    }
  status = report_status (report, "process-limit", &detail);
  if (status == SBX_REPORT_STATUS_ENFORCED || status == SBX_REPORT_STATUS_NARROWED)
    sbx_conformance_case_fork_limit (s, "limits", "process-limit");
  else
    sbx_conformance_record (s->run, s->backend, "limits", "process-limit", SBX_CONFORMANCE_SKIP,
                            "the compile report does not say the process limit is enforced (%s)",
                            detail != NULL ? detail : "no process-limit entry");
}
