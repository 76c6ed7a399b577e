/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sbx profile learn [--profile BASE] [--workspace DIR] [--output FILE
 *   [--force]] [--] COMMAND [ARG...]
 *
 * Runs COMMAND once under BASE with its denials recorded, then prints the
 * narrowest change of BASE that would have allowed what it tried
 * (tools/sbx-profile-learn.c) as a unified diff of BASE's normalized JSON,
 * followed by "# " lines: the approvals a run would still need and what
 * was not turned into a change, with why.  Nothing is applied: BASE is
 * never written; --output FILE writes the changed profile to a new FILE
 * (an existing one only with --force, and never BASE itself).
 *
 * The run is BASE's, with one difference so that network attempts are
 * seen: a network BASE denies runs gated, through the direct egress route
 * sbx run gives a gated network, which refuses every connection at once
 * (asking, with nobody to answer: sbx-cmd-run-egress.c).  No
 * grant is issued and nothing is approved, so the tool reaches nothing
 * BASE would not let it reach; each refused target becomes a denial
 * instead of an unseen "no route".  The command's stdout goes to stderr
 * (stdout is the diff's alone); stdin passes through.
 *
 * Exit status: 0 when the diff was printed, whatever the command did (its
 * status is said in the notes); 1 when sbx could not run it (no backend,
 * an invalid profile) or could not write --output; 2 on a usage error;
 * 128+N when sbx got signal N (SIGINT, SIGTERM, SIGHUP) and killed the
 * command (a cancelled run's denials are lost, so nothing is printed).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <glib-unix.h>
#include <sbx/sbx.h>

#include "sbx-cmd-run-egress.h"
#include "sbx-cmds.h"
#include "sbx-profile-learn.h"

#define LEARN_KEY "sbx-learn"

typedef struct
{
  char    *profile;
  char    *workspace;
  char    *output;
  gboolean force;
} LearnArgs;

static void
learn_args_clear (LearnArgs *args)
{
  g_free (args->profile);
  g_free (args->workspace);
  g_free (args->output);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (LearnArgs, learn_args_clear)

/* BASE: the embedded default (absent or "default"), or a file; @label is
 * what the diff calls it. */
static SbxProfile *
load_base (const LearnArgs *args,
           const char      *workspace,
           char           **label)
{
  g_autoptr(GError) error = NULL;
  SbxProfile *profile;

  if (args->profile == NULL || g_str_equal (args->profile, "default"))
    {
      profile = sbx_profile_new_default (workspace, &error);
      if (profile == NULL)
        sbx_cli_error ("profile learn: default profile: %s", error->message);
      *label = g_strdup ("default profile");
      return profile;
    }
  profile = sbx_profile_new_from_file (args->profile, workspace, &error);
  if (profile == NULL)
    {
      if (error->domain == G_FILE_ERROR)
        sbx_cli_error ("profile learn: %s", error->message);
      else
        sbx_cli_error ("profile learn: %s: %s", args->profile, error->message);
    }
  *label = g_strdup (args->profile);
  return profile;
}

/* The profile the command runs under: BASE, with a denied network gated
 * (no grant will be issued: see the top of the file). */
static SbxProfile *
learning_profile (SbxProfile *base,
                  GError    **error)
{
  g_autoptr(SbxProfileConfig) config = NULL;

  if (sbx_profile_get_network (base) != SBX_ACCESS_DENY)
    return sbx_profile_ref (base);
  config = sbx_profile_dup_config (base);
  sbx_profile_config_set_network (config, SBX_ACCESS_GATED);
  return sbx_profile_new (config, error);
}

/* What the run's report says of filesystem refusals: observed when the
 * backend has an "fs-denials" entry that is not unenforced (as the typelib
 * test reads it); otherwise a note says the change may lack roots. */
static void
note_fs_observation (SbxLearn         *learn,
                     SbxCompileReport *report)
{
  for (guint i = 0; i < sbx_compile_report_get_n_entries (report); i++)
    {
      const char *detail = sbx_compile_report_get_entry_detail (report, i);

      if (!g_str_equal (sbx_compile_report_get_entry_feature (report, i), "fs-denials"))
        continue;
      if (sbx_compile_report_get_entry_status (report, i) != SBX_REPORT_STATUS_UNENFORCED)
        return;
      sbx_learn_add_note (learn, "filesystem refusals were not observed on this run (%s): the change "
                                 "may lack roots the command needs", detail != NULL ? detail : "fs-denials unenforced");
      return;
    }
  sbx_learn_add_note (learn, "filesystem refusals were not observed on this run (backend %s does not "
                             "report them): the change may lack roots the command needs",
                      sbx_compile_report_get_backend (report));
}

/* For a gated network, whether the run's report says a route carries
 * it: where none does (rung 2 has no network of its own to serve; without
 * the egress-http plugin there is no route), a connection fails unseen,
 * so a note says the change may lack network approvals. */
static void
note_network_observation (SbxLearn         *learn,
                          SbxCompileReport *report)
{
  for (guint i = 0; i < sbx_compile_report_get_n_entries (report); i++)
    if (g_str_equal (sbx_compile_report_get_entry_feature (report, i), "egress-route")
        && sbx_compile_report_get_entry_status (report, i) == SBX_REPORT_STATUS_ENFORCED)
      return;
  sbx_learn_add_note (learn, "network attempts were not observed on this run (backend %s, no egress route "
                             "enforced: a refused connection fails unseen): the change may lack network approvals",
                      sbx_compile_report_get_backend (report));
}

/* How the run ended, as a note; a refused command start is a denial. */
static void
note_outcome (SbxLearn     *learn,
              SbxProfile   *base,
              char        **argv,
              SbxRunResult *result,
              const GError *error)
{
  g_autofree char *outcome = NULL;

  if (result != NULL && sbx_run_result_get_if_signaled (result))
    outcome = g_strdup_printf ("the command was killed by signal %d", sbx_run_result_get_term_sig (result));
  else if (result != NULL)
    outcome = g_strdup_printf ("the command exited with status %d", sbx_run_result_get_exit_status (result));
  else if (g_error_matches (error, SBX_GRANT_ERROR, SBX_GRANT_ERROR_REQUIRED)
           && sbx_profile_get_command (base) == SBX_ACCESS_GATED)
    sbx_learn_add (learn, SBX_DENIAL_OPERATION_COMMAND_START, argv[0], NULL, NULL, "command execution is gated");
  else if (g_error_matches (error, SBX_GRANT_ERROR, SBX_GRANT_ERROR_DENIED)
           && sbx_profile_get_command (base) == SBX_ACCESS_DENY)
    sbx_learn_add (learn, SBX_DENIAL_OPERATION_COMMAND_START, argv[0], NULL, NULL,
                   "the profile denies command execution");
  else
    outcome = g_strdup_printf ("the command did not run: %s", error->message);
  if (outcome == NULL)
    outcome = g_strdup ("the command did not start: the profile refused it");
  sbx_learn_set_outcome (learn, outcome);
}

typedef struct
{
  GMainLoop    *loop;
  GCancellable *cancellable;
  SbxRunResult *result;
  GError       *error;
  gboolean      done;
  int           signo;   /* the signal that interrupted the run, or 0 */
} RunWait;

typedef struct
{
  RunWait *wait;
  int      signo;
} RunSignal;

static void
run_done (GObject      *source,
          GAsyncResult *res,
          gpointer      data)
{
  RunWait *wait = data;

  wait->result = sbx_prepared_process_run_finish (SBX_PREPARED_PROCESS (source), res, &wait->error);
  wait->done = TRUE;
  g_main_loop_quit (wait->loop);
}

/* SIGINT, SIGTERM, SIGHUP: the tree is killed (cancelling the run does)
 * and what was learned until then is still printed. */
static gboolean
run_signalled (gpointer data)
{
  RunSignal *rs = data;

  if (rs->wait->signo == 0)
    rs->wait->signo = rs->signo;
  g_cancellable_cancel (rs->wait->cancellable);
  return G_SOURCE_CONTINUE;
}

/* The run, on this thread's default main context, iterated until it ends
 * or a signal cancels it.  *@out_signo: the signal that interrupted it, or
 * 0. */
static SbxRunResult *
run_prepared (SbxPreparedProcess *prepared,
              int                *out_signo,
              GError            **error)
{
  static const int forwarded[3] = { SIGINT, SIGTERM, SIGHUP };
  g_autoptr(GMainLoop) loop = g_main_loop_new (NULL, FALSE);
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  RunWait wait = { loop, cancellable, NULL, NULL, FALSE, 0 };
  RunSignal signals[3];
  guint sources[3];

  for (guint i = 0; i < G_N_ELEMENTS (forwarded); i++)
    {
      signals[i].wait = &wait;
      signals[i].signo = forwarded[i];
      sources[i] = g_unix_signal_add (forwarded[i], run_signalled, &signals[i]);
    }
  sbx_prepared_process_run_async (prepared, cancellable, run_done, &wait);
  while (!wait.done)
    g_main_loop_run (loop);
  for (guint i = 0; i < G_N_ELEMENTS (forwarded); i++)
    g_source_remove (sources[i]);
  *out_signo = wait.signo;
  if (wait.error != NULL)
    g_propagate_error (error, wait.error);
  return wait.result;
}

/* Runs @argv under @base's learning profile, feeding what was refused and
 * how it ended to @learn: SBX_CLI_EXIT_OK, or the exit status when sbx
 * cannot run it at all (said on stderr) or a signal interrupted it. */
static int
learn_run (SbxLearn    *learn,
           SbxProfile  *base,
           char       **argv)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SbxProfile) profile = learning_profile (base, &error);
  g_autoptr(SbxExecutorSetOptions) options = NULL;
  g_autoptr(SbxEgressRoute) route = NULL;
  g_autoptr(SbxExecutorSet) set = NULL;
  g_autoptr(SbxExecutor) executor = NULL;
  g_autoptr(SbxRunOptions) run_options = NULL;
  g_autoptr(SbxPreparedProcess) prepared = NULL;
  g_autoptr(SbxRunResult) result = NULL;
  g_autoptr(GError) close_error = NULL;
  g_autofree char *cwd = g_get_current_dir ();
  int signo = 0;

  if (profile == NULL)
    {
      sbx_cli_error ("profile learn: %s", error->message);
      return SBX_CLI_EXIT_FAILURE;
    }
  options = sbx_executor_set_options_new ();
  sbx_executor_set_options_set_scratch_root (options, g_get_tmp_dir ());
  sbx_executor_set_options_set_max_executors (options, 1);
  /* sbx run's route for a gated network (sbx-cmd-run-egress.c) */
  route = sbx_run_egress_gated_route (profile, NULL);
  sbx_executor_set_options_set_egress_route (options, route);
  set = sbx_executor_set_new (profile, options, &error);
  if (set == NULL)
    {
      sbx_cli_error ("profile learn: %s%s", error->message,
                     g_error_matches (error, SBX_EXECUTOR_SET_ERROR, SBX_EXECUTOR_SET_ERROR_BACKEND_UNAVAILABLE)
                     ? " (refusing to run without confinement; see `sbx doctor`)" : "");
      return SBX_CLI_EXIT_FAILURE;
    }
  executor = sbx_executor_set_for_key (set, LEARN_KEY, &error);
  if (executor == NULL)
    {
      sbx_cli_error ("profile learn: %s", error->message);
      return SBX_CLI_EXIT_FAILURE;
    }
  run_options = sbx_run_options_new ();
  sbx_run_options_set_stdin_fd (run_options, STDIN_FILENO);
  sbx_run_options_set_stdout_fd (run_options, STDERR_FILENO);
  sbx_run_options_set_stderr_fd (run_options, STDERR_FILENO);
  if (route != NULL)
    sbx_run_egress_observe (executor, run_options);
  prepared = sbx_executor_prepare (executor, cwd, (const char *const *) argv, run_options, NULL, &error);
  if (prepared != NULL)
    {
      note_fs_observation (learn, sbx_prepared_process_get_report (prepared));
      if (sbx_profile_get_network (profile) == SBX_ACCESS_GATED)
        note_network_observation (learn, sbx_prepared_process_get_report (prepared));
      result = run_prepared (prepared, &signo, &error);
    }
  if (result != NULL)
    {
      GPtrArray *denials = sbx_run_result_get_denials (result);

      for (guint i = 0; i < denials->len; i++)
        sbx_learn_add_denial (learn, denials->pdata[i]);
      sbx_learn_set_dropped (learn, sbx_run_result_get_denials_dropped (result));
    }
  if (signo != 0)
    {
      /* A cancelled run has no result: its denials went with it. */
      sbx_cli_error ("profile learn: got signal %d (%s); the command was killed and what it tried is "
                     "lost: nothing learned", signo, g_strsignal (signo));
      if (!sbx_executor_set_close (set, NULL, &close_error))
        sbx_cli_error ("profile learn: cleanup: %s", close_error->message);
      return 128 + signo;
    }
  note_outcome (learn, base, argv, result, error);
  if (!sbx_executor_set_close (set, NULL, &close_error))
    sbx_cli_error ("profile learn: cleanup: %s", close_error->message);
  return SBX_CLI_EXIT_OK;
}

/* --output: the changed profile in a new file (O_EXCL), or replacing one
 * with --force; never BASE. */
static gboolean
write_output (const LearnArgs *args,
              SbxProfile      *changed)
{
  g_autofree char *text = sbx_profile_to_json (changed);
  g_autoptr(GError) error = NULL;
  gsize len = strlen (text);
  int fd;

  if (args->force)
    {
      if (!g_file_set_contents_full (args->output, text, (gssize) len, G_FILE_SET_CONTENTS_CONSISTENT, 0644,
                                     &error))
        {
          sbx_cli_error ("profile learn: --output %s: %s", args->output, error->message);
          return FALSE;
        }
      return TRUE;
    }
  fd = open (args->output, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0)
    {
      int errsv = errno;

      sbx_cli_error ("profile learn: --output %s: %s%s", args->output, g_strerror (errsv),
                     errsv == EEXIST ? " (give --force to replace it)" : "");
      return FALSE;
    }
  for (gsize done = 0; done < len;)
    {
      gssize n = write (fd, text + done, len - done);

      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        {
          int errsv = errno;

          close (fd);
          unlink (args->output);
          sbx_cli_error ("profile learn: --output %s: %s", args->output, g_strerror (errsv));
          return FALSE;
        }
      done += (gsize) n;
    }
  if (close (fd) < 0)
    {
      int errsv = errno;

      unlink (args->output);
      sbx_cli_error ("profile learn: --output %s: %s", args->output, g_strerror (errsv));
      return FALSE;
    }
  return TRUE;
}

/* --output checks made before the command runs: in an existing
 * directory, not BASE (even with --force), not an existing file without
 * --force. */
static gboolean
check_output (const LearnArgs *args)
{
  struct stat out_st, base_st;

  g_autofree char *dir = NULL;

  if (args->output == NULL)
    return TRUE;
  dir = g_path_get_dirname (args->output);
  if (!g_file_test (dir, G_FILE_TEST_IS_DIR))
    {
      sbx_cli_error ("profile learn: --output %s: the directory %s does not exist", args->output, dir);
      return FALSE;
    }
  if (lstat (args->output, &out_st) != 0)
    return TRUE;
  if (args->profile != NULL && !g_str_equal (args->profile, "default")
      && stat (args->profile, &base_st) == 0 && stat (args->output, &out_st) == 0
      && base_st.st_dev == out_st.st_dev && base_st.st_ino == out_st.st_ino)
    {
      sbx_cli_error ("profile learn: --output %s is BASE itself; learn never changes BASE", args->output);
      return FALSE;
    }
  if (!args->force)
    {
      sbx_cli_error ("profile learn: --output %s: the file exists (give --force to replace it)", args->output);
      return FALSE;
    }
  return TRUE;
}

int
sbx_cmd_profile_learn (int    argc,
                       char **argv)
{
  g_auto(LearnArgs) args = { 0 };
  const GOptionEntry entries[] = {
    { "profile", 'p', 0, G_OPTION_ARG_FILENAME, &args.profile,
      "The profile to learn from: a FILE, or \"default\" for the embedded default (the default)", "BASE" },
    { "workspace", 'w', 0, G_OPTION_ARG_FILENAME, &args.workspace,
      "Workspace directory, against which a relative or absent workspace.root is resolved "
      "(default: the current directory)", "DIR" },
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &args.output,
      "Also write the changed profile to FILE (a new file; BASE is never written)", "FILE" },
    { "force", 'f', 0, G_OPTION_ARG_NONE, &args.force,
      "Let --output replace an existing FILE", NULL },
    { NULL }
  };
  g_autoptr(GOptionContext) context = g_option_context_new ("[--] COMMAND [ARG...]");
  g_autoptr(GError) error = NULL;
  g_autoptr(SbxProfile) base = NULL;
  g_autoptr(SbxProfile) changed = NULL;
  g_autoptr(SbxLearn) learn = NULL;
  g_autofree char *workspace = NULL;
  g_autofree char *label = NULL;
  g_autofree char *text = NULL;
  int status;

  g_set_prgname ("sbx profile learn");
  g_option_context_set_summary (context,
                                "Runs COMMAND once under BASE with its denials recorded, then prints the\n"
                                "narrowest change of BASE that would have allowed what it tried: a unified\n"
                                "diff of BASE's normalized JSON, then \"# \" lines with the approvals a run\n"
                                "would still need and the denials no profile change should open, with why.\n"
                                "Nothing is applied.  The command's output goes to stderr.  A network BASE\n"
                                "denies runs gated with every connection refused, so its targets are seen.\n"
                                "Exits 0 when the diff was printed (its last line says how the command ended),\n"
                                "1 when sbx could not run the command or write --output, 2 on a usage error,\n"
                                "128+N when sbx got signal N and killed the command (nothing is learned).");
  g_option_context_add_main_entries (context, entries, NULL);
  g_option_context_set_strict_posix (context, TRUE);
  if (!g_option_context_parse (context, &argc, &argv, &error))
    {
      sbx_cli_error ("profile learn: %s (see sbx profile learn --help)", error->message);
      return SBX_CLI_EXIT_USAGE;
    }
  if (argc >= 2 && g_str_equal (argv[1], "--"))
    {
      argv++;
      argc--;
    }
  if (argc < 2)
    {
      sbx_cli_error ("profile learn: no command given (see sbx profile learn --help)");
      return SBX_CLI_EXIT_USAGE;
    }
  if (args.force && args.output == NULL)
    {
      sbx_cli_error ("profile learn: --force only applies to --output FILE");
      return SBX_CLI_EXIT_USAGE;
    }
  if (!check_output (&args))
    return SBX_CLI_EXIT_FAILURE;

  if (args.workspace != NULL)
    {
      g_autofree char *cwd = g_get_current_dir ();

      workspace = g_canonicalize_filename (args.workspace, cwd);
    }
  base = load_base (&args, workspace, &label);
  if (base == NULL)
    return SBX_CLI_EXIT_FAILURE;
  learn = sbx_learn_new (base);
  status = learn_run (learn, base, argv + 1);
  if (status != SBX_CLI_EXIT_OK)
    return status;
  changed = sbx_learn_compute (learn, &error);
  if (changed == NULL)
    {
      sbx_cli_error ("profile learn: %s", error->message);
      return SBX_CLI_EXIT_FAILURE;
    }
  text = sbx_learn_format (learn, label);
  fputs (text, stdout);
  fflush (stdout);
  if (args.output != NULL && !write_output (&args, changed))
    return SBX_CLI_EXIT_FAILURE;
  return SBX_CLI_EXIT_OK;
}
