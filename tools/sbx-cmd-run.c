/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sbx run [OPTION...] -- COMMAND [ARG...]
 *
 * Runs one command in an executor of a one-key executor set.  stdin, stdout
 * and stderr pass through live: without --max-output the command gets sbx's
 * own descriptors (a terminal stays a terminal); with --max-output its output
 * goes through pipes that the executor copies on as it arrives, counting
 * every byte, and the first byte past the limit kills the whole tree.
 *
 * Exit status: the command's; 128+N when a signal N killed it (or when sbx
 * got SIGINT/SIGTERM/SIGHUP N and killed the tree; one its caller ignored
 * stays ignored: sbx does not catch it and the command starts with it
 * ignored, as under a plain wrapper); 124 when --timeout
 * passed and the tree was killed; 125 when sbx itself refused or failed
 * (with a message naming why); 126 when the command is not executable; 127
 * when it is not found.
 *
 * Grants: sbx plays the approval system for this one run.  Each
 * --approve CLASS[:TARGET] mints a grant for exactly this command (its argv,
 * normalized with sbx_grant_command_for_argv()), this working directory and
 * a fresh execution ID, and the run spends them all; command.start.v1
 * without a target means this command.  --ask asks on the terminal for each
 * Gated capability the profile declares and mints what is approved.  A
 * Gated command without either exits 125 saying how to approve it.
 *
 * Interactive mode (stdin and stdout are terminals and the profile is
 * Sandboxed, or --pty; --no-pty turns it off): the command gets a terminal
 * of its own, opened inside the sandbox, as its stdin, stdout, stderr and
 * controlling terminal, and sbx relays bytes between it and sbx's own
 * terminal, which is in raw mode meanwhile (Ctrl-C and Ctrl-Z are bytes for
 * the command's line discipline, so they reach its foreground group).  The
 * window size is copied at the start and on every SIGWINCH.  The terminal's
 * settings are put back on every way out of the run: the command's exit,
 * its death, a signal to sbx, a timeout, the output limit.  Only SIGKILL of
 * sbx leaves them to the shell.  The command never holds a descriptor of
 * sbx's terminal, so nothing it does (TIOCSTI is refused anyway) can type
 * into it.
 */
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <glib-unix.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>
#include <sys/ioctl.h>

#include <sbx/sbx.h>

#include "sbx-cmd-run-egress.h"
#include "sbx-cmd-run-ask.h"
#include "sbx-cmd-run-denials.h"

#include "sbx-cmds.h"

#define RUN_EXIT_TIMEOUT      124
#define RUN_EXIT_SBX_FAILED   125
#define RUN_EXIT_NOT_EXEC     126
#define RUN_EXIT_NOT_FOUND    127
#define RUN_KEY               "sbx-run"

typedef enum
{
  REPORT_NONE,
  REPORT_TEXT,
  REPORT_JSON,
} ReportFormat;

typedef struct
{
  char        *profile_file;
  char        *workspace;
  char       **read_paths;
  char       **write_paths;
  char        *network;
  ReportFormat report;
  char        *timeout;
  char        *max_output;
  char       **allow_host;
  char        *upstream_proxy;
  char       **approve;
  gboolean     ask;
  gboolean     pty;
  gboolean     no_pty;
  gboolean     stage;
  gboolean     review;
} RunArgs;

static void
run_args_clear (RunArgs *args)
{
  g_free (args->profile_file);
  g_free (args->workspace);
  g_strfreev (args->read_paths);
  g_strfreev (args->write_paths);
  g_free (args->network);
  g_free (args->timeout);
  g_free (args->max_output);
  g_strfreev (args->allow_host);
  g_free (args->upstream_proxy);
  g_strfreev (args->approve);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (RunArgs, run_args_clear)

static gboolean
parse_report (const char  *option_name,
              const char  *value,
              gpointer     data,
              GError     **error)
{
  RunArgs *args = data;

  if (value == NULL || g_str_equal (value, "text"))
    args->report = REPORT_TEXT;
  else if (g_str_equal (value, "json"))
    args->report = REPORT_JSON;
  else
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                   "--report takes no value or \"json\", not \"%s\"", value);
      return FALSE;
    }
  return TRUE;
}

/* "1048576", "64K", "10M", "2G" (powers of 1024). */
static gboolean
parse_size (const char *text,
            guint64    *out)
{
  guint64 value;
  char *end = NULL;
  guint shift = 0;

  if (text == NULL || !g_ascii_isdigit (text[0]))
    return FALSE;
  errno = 0;
  value = g_ascii_strtoull (text, &end, 10);
  if (errno != 0)
    return FALSE;
  switch (g_ascii_toupper (*end))
    {
    case '\0': shift = 0; break;
    case 'K':  shift = 10; end++; break;
    case 'M':  shift = 20; end++; break;
    case 'G':  shift = 30; end++; break;
    default:   return FALSE;
    }
  if (*end != '\0' || value == 0 || value > (G_MAXUINT64 >> shift))
    return FALSE;
  *out = value << shift;
  return TRUE;
}

static gboolean
parse_seconds (const char *text,
               GTimeSpan  *out)
{
  char *end = NULL;
  double seconds;

  if (text == NULL || text[0] == '\0')
    return FALSE;
  seconds = g_ascii_strtod (text, &end);
  if (*end != '\0' || !isfinite (seconds) || seconds <= 0 || seconds > 1e9)
    return FALSE;
  *out = (GTimeSpan) ceil (seconds * G_USEC_PER_SEC);
  return TRUE;
}

static char *
absolute_path (const char *path)
{
  g_autofree char *cwd = g_get_current_dir ();

  return g_canonicalize_filename (path, cwd);
}

/* The profile: --profile FILE or the embedded default, then --workspace,
 * --read, --write and --network applied on top (re-validated). */
static SbxProfile *
build_profile (const RunArgs  *args,
               GError        **error)
{
  g_autoptr(SbxProfile) base = NULL;
  g_autoptr(SbxProfileConfig) config = NULL;
  g_autofree char *workspace = NULL;
  g_autoptr(GHashTable) roots = NULL;
  GHashTableIter iter;
  gpointer key;
  gpointer value;

  workspace = args->workspace != NULL ? absolute_path (args->workspace) : g_get_current_dir ();
  if (args->profile_file != NULL)
    base = sbx_profile_new_from_file (args->profile_file, workspace, error);
  else
    base = sbx_profile_new_default (workspace, error);
  if (base == NULL)
    return NULL;

  if (args->workspace == NULL && args->read_paths == NULL && args->write_paths == NULL
      && args->network == NULL)
    return g_steal_pointer (&base);

  config = sbx_profile_dup_config (base);
  if (args->workspace != NULL)
    sbx_profile_config_set_workspace (config, workspace,
                                      sbx_profile_get_workspace_read (base),
                                      sbx_profile_get_workspace_write (base));
  /* A path given to both --read and --write is writable. */
  roots = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  for (guint i = 0; args->read_paths != NULL && args->read_paths[i] != NULL; i++)
    g_hash_table_insert (roots, absolute_path (args->read_paths[i]), GINT_TO_POINTER (FALSE));
  for (guint i = 0; args->write_paths != NULL && args->write_paths[i] != NULL; i++)
    g_hash_table_insert (roots, absolute_path (args->write_paths[i]), GINT_TO_POINTER (TRUE));
  g_hash_table_iter_init (&iter, roots);
  while (g_hash_table_iter_next (&iter, &key, &value))
    sbx_profile_config_add_root (config, key, SBX_ACCESS_ALLOW,
                                 GPOINTER_TO_INT (value) ? SBX_ACCESS_ALLOW : SBX_ACCESS_DENY);
  if (args->network != NULL)
    {
      if (g_str_equal (args->network, "allow"))
        sbx_profile_config_set_network (config, SBX_ACCESS_ALLOW);
      else if (g_str_equal (args->network, "deny"))
        sbx_profile_config_set_network (config, SBX_ACCESS_DENY);
      else
        {
          g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                       "--network takes \"deny\" or \"allow\", not \"%s\"", args->network);
          return NULL;
        }
    }
  return sbx_profile_new (config, error);
}

typedef struct
{
  GMainLoop    *loop;
  GCancellable *cancellable;
  SbxRunResult *result;
  GError       *error;
  int           signal_received;
  gboolean      done;
} RunState;

static void
run_done (GObject      *source,
          GAsyncResult *res,
          gpointer      data)
{
  RunState *state = data;

  state->result = sbx_prepared_process_run_finish (SBX_PREPARED_PROCESS (source), res,
                                                   &state->error);
  state->done = TRUE;
  g_main_loop_quit (state->loop);
}

typedef struct
{
  RunState *state;
  int       signo;
} SignalData;

static gboolean
on_signal (gpointer data)
{
  SignalData *sd = data;

  if (sd->state->signal_received == 0)
    sd->state->signal_received = sd->signo;
  g_cancellable_cancel (sd->state->cancellable);
  return G_SOURCE_CONTINUE;
}

/* The outer terminal in interactive mode: its settings before raw mode,
 * and the pipe SIGWINCH is relayed through. */
typedef struct
{
  gboolean       raw;          /* stdin's settings were changed */
  struct termios saved;
  int            resize_pipe[2];
  guint          winch_source;
} Terminal;

static void
terminal_restore (Terminal *term)
{
  if (term->raw)
    {
      /* TCSADRAIN: what the command wrote is on the screen first. */
      while (tcsetattr (STDIN_FILENO, TCSADRAIN, &term->saved) < 0 && errno == EINTR)
        ;
      term->raw = FALSE;
    }
  if (term->winch_source != 0)
    {
      g_source_remove (term->winch_source);
      term->winch_source = 0;
    }
  for (int i = 0; i < 2; i++)
    if (term->resize_pipe[i] >= 0)
      {
        close (term->resize_pipe[i]);
        term->resize_pipe[i] = -1;
      }
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Terminal, terminal_restore)

static gboolean
on_winch (gpointer data)
{
  Terminal *term = data;

  /* Non-blocking: a full pipe already says "resized". */
  if (write (term->resize_pipe[1], "w", 1) < 0 && errno != EAGAIN)
    g_debug ("relaying SIGWINCH: %s", g_strerror (errno));
  return G_SOURCE_CONTINUE;
}

/* The window size of sbx's terminal (stdin, else stdout), or 24 x 80. */
static void
terminal_size (guint16 *rows,
               guint16 *cols)
{
  struct winsize ws = { 0 };

  if ((ioctl (STDIN_FILENO, TIOCGWINSZ, &ws) == 0 || ioctl (STDOUT_FILENO, TIOCGWINSZ, &ws) == 0)
      && ws.ws_row > 0 && ws.ws_col > 0)
    {
      *rows = ws.ws_row;
      *cols = ws.ws_col;
      return;
    }
  *rows = 24;
  *cols = 80;
}

/* Interactive mode, first half: follow SIGWINCH.  FALSE with errno set. */
static gboolean
terminal_follow_size (Terminal *term)
{
  if (pipe2 (term->resize_pipe, O_CLOEXEC | O_NONBLOCK) < 0)
    return FALSE;
  term->winch_source = g_unix_signal_add (SIGWINCH, on_winch, term);
  return TRUE;
}

/* Interactive mode, second half (after the report is printed: raw mode
 * would print it as a staircase): put stdin's terminal (if it is one) in
 * raw mode.  FALSE with errno set when the terminal cannot be set up. */
static gboolean
terminal_make_raw (Terminal *term)
{
  struct termios raw;

  if (!isatty (STDIN_FILENO))
    return TRUE;
  if (tcgetattr (STDIN_FILENO, &term->saved) < 0)
    return FALSE;
  raw = term->saved;
  cfmakeraw (&raw);
  if (tcsetattr (STDIN_FILENO, TCSADRAIN, &raw) < 0)
    return FALSE;
  term->raw = TRUE;
  return TRUE;
}

static int
refuse (const char *format,
        ...) G_GNUC_PRINTF (1, 2);

static int
refuse (const char *format,
        ...)
{
  g_autofree char *message = NULL;
  va_list args;

  va_start (args, format);
  message = g_strdup_vprintf (format, args);
  va_end (args);
  sbx_cli_error ("run: %s", message);
  return RUN_EXIT_SBX_FAILED;
}

/* The Gated capabilities @profile declares, as (class, target) pairs, in a
 * stable order: the command start, the workspace, each root, the host,
 * each gated host socket.
 * The network is not listed: a broad grant needs a port, which only
 * --approve network.broad.v1:tcp:*:PORT can name. */
static GPtrArray *
gated_capabilities (SbxProfile *profile)
{
  GPtrArray *caps = g_ptr_array_new_with_free_func (g_free);
  const char *ws = sbx_profile_get_workspace_root (profile);

#define ADD_CAP(cls, target) g_ptr_array_add (caps, g_strdup (cls)), \
                             g_ptr_array_add (caps, (target) != NULL ? g_strdup (target) : NULL)
  if (sbx_profile_get_command (profile) == SBX_ACCESS_GATED)
    ADD_CAP (SBX_GRANT_CLASS_COMMAND_START, NULL);
  if (sbx_profile_get_workspace_read (profile) == SBX_ACCESS_GATED)
    ADD_CAP (SBX_GRANT_CLASS_FILESYSTEM_TREE_READ, ws);
  if (sbx_profile_get_workspace_write (profile) == SBX_ACCESS_GATED)
    ADD_CAP (SBX_GRANT_CLASS_FILESYSTEM_TREE_WRITE, ws);
  for (guint i = 0; i < sbx_profile_get_n_roots (profile); i++)
    {
      const char *path = sbx_profile_get_root_path (profile, i);

      if (sbx_profile_get_root_read (profile, i) == SBX_ACCESS_GATED)
        ADD_CAP (SBX_GRANT_CLASS_FILESYSTEM_TREE_READ, path);
      if (sbx_profile_get_root_write (profile, i) == SBX_ACCESS_GATED)
        ADD_CAP (SBX_GRANT_CLASS_FILESYSTEM_TREE_WRITE, path);
    }
  if (sbx_profile_get_host_read (profile) == SBX_ACCESS_GATED)
    ADD_CAP (SBX_GRANT_CLASS_FILESYSTEM_HOST_READ, "host:*");
  if (sbx_profile_get_host_write (profile) == SBX_ACCESS_GATED)
    ADD_CAP (SBX_GRANT_CLASS_FILESYSTEM_HOST_WRITE, "host:*");
  /* Gated host sockets are not asked here: the connect supervisor asks
   * while the command runs (docs/live-approvals.md), as for the network. */
#undef ADD_CAP
  return caps;
}

/* One y/N question on the terminal (stdin). */
static gboolean
ask_yes (const char *grant_class,
         const char *target,
         const char *command)
{
  char line[64];

  fprintf (stderr, "sbx: approve %s %s for this run of `%s`? [y/N] ", grant_class,
           target != NULL ? target : "(this command)", command);
  fflush (stderr);
  if (fgets (line, sizeof line, stdin) == NULL)
    return FALSE;
  return line[0] == 'y' || line[0] == 'Y';
}

/* Mints the run's grants: --approve ones, then --ask ones.  FALSE with
 * *out_status set when sbx must refuse. */
static gboolean
mint_grants (SbxExecutor    *executor,
             SbxProfile     *profile,
             const RunArgs  *args,
             const char     *execution_id,
             const char     *command,
             const char     *cwd,
             GPtrArray      *tokens,
             GPtrArray      *approved,
             int            *out_status)
{
  for (guint i = 0; args->approve != NULL && args->approve[i] != NULL; i++)
    {
      g_autoptr(GError) error = NULL;
      const char *colon = strchr (args->approve[i], ':');
      g_autofree char *cls = colon != NULL ? g_strndup (args->approve[i], (gsize) (colon - args->approve[i]))
                                           : g_strdup (args->approve[i]);
      g_autofree char *target = NULL;
      char *token;

      if (colon != NULL)
        target = colon[1] == '/' ? absolute_path (colon + 1) : g_strdup (colon + 1);
      token = sbx_executor_issue_grant (executor, execution_id, command, cwd, cls, target, NULL, &error);
      if (token == NULL)
        {
          *out_status = refuse ("--approve %s: %s", args->approve[i], error->message);
          return FALSE;
        }
      g_ptr_array_add (tokens, token);
      g_ptr_array_add (approved, g_strdup (args->approve[i]));
    }
  if (args->ask)
    {
      g_autoptr(GPtrArray) caps = gated_capabilities (profile);

      if (!isatty (STDIN_FILENO))
        {
          *out_status = refuse ("--ask needs a terminal on stdin to ask on; use --approve CLASS[:TARGET]");
          return FALSE;
        }
      for (guint i = 0; i < caps->len; i += 2)
        {
          g_autoptr(GError) error = NULL;
          const char *cls = g_ptr_array_index (caps, i);
          const char *target = g_ptr_array_index (caps, i + 1);
          char *token;

          if (!ask_yes (cls, target, command))
            continue;
          token = sbx_executor_issue_grant (executor, execution_id, command, cwd, cls, target, NULL,
                                            &error);
          if (token == NULL)
            {
              *out_status = refuse ("%s %s: %s", cls, target != NULL ? target : "", error->message);
              return FALSE;
            }
          g_ptr_array_add (tokens, token);
        }
    }
  return TRUE;
}

/* --report: the run's report (scope "run"), after its grants were verified
 * and before the command runs; never the executor's, which a grant may
 * contradict. */
static void
print_run_report (SbxCompileReport *report,
                  ReportFormat      format)
{
  g_autofree char *text = format == REPORT_JSON ? sbx_compile_report_to_json (report)
                                                : sbx_compile_report_to_text (report);

  fprintf (stderr, "%s%s", text, g_str_has_suffix (text, "\n") ? "" : "\n");
  fflush (stderr);
}

static int
exit_status_for_error (const GError *error,
                       const char   *command,
                       const RunArgs *args,
                       SbxProfile   *profile)
{
  /* A refused command start is a denial first: the line says what would
   * open it; the refusal below says how to approve it here. */
  sbx_run_print_command_denial (error, profile, command, args->report == REPORT_JSON);
  if (g_error_matches (error, SBX_EXECUTOR_ERROR, SBX_EXECUTOR_ERROR_NOT_FOUND))
    {
      sbx_cli_error ("run: %s: command not found (%s)", command, error->message);
      return RUN_EXIT_NOT_FOUND;
    }
  if (g_error_matches (error, SBX_EXECUTOR_ERROR, SBX_EXECUTOR_ERROR_NOT_EXECUTABLE))
    {
      sbx_cli_error ("run: %s: not executable (%s)", command, error->message);
      return RUN_EXIT_NOT_EXEC;
    }
  if (g_error_matches (error, SBX_EXECUTOR_ERROR, SBX_EXECUTOR_ERROR_TIMED_OUT))
    {
      sbx_cli_error ("run: timed out after %s s; the process tree was killed", args->timeout);
      return RUN_EXIT_TIMEOUT;
    }
  if (g_error_matches (error, SBX_GRANT_ERROR, SBX_GRANT_ERROR_REQUIRED))
    return refuse ("%s: the profile gates command execution; approve this run with "
                   "--approve command.start.v1, or answer on the terminal with --ask (%s)",
                   command, error->message);
  return refuse ("%s", error->message);
}

/* The signals this process's caller left ignored (nohup: SIGHUP; a shell's
 * background job: SIGINT and SIGQUIT; trap "" INT), read before sbx changes
 * any disposition itself.  The command starts with them ignored too, as a
 * plain wrapper's child would (POSIX keeps SIG_IGN across exec), and sbx
 * neither catches nor acts on them. */
static GArray *
caller_ignored_signals (void)
{
  GArray *ignored = g_array_new (FALSE, FALSE, sizeof (int));

  for (int signo = 1; signo <= 64 && signo < NSIG; signo++)
    {
      struct sigaction current;

      if (signo == SIGKILL || signo == SIGSTOP)
        continue;
      if (sigaction (signo, NULL, &current) == 0 && !(current.sa_flags & SA_SIGINFO)
          && current.sa_handler == SIG_IGN)
        g_array_append_val (ignored, signo);
    }
  return ignored;
}

static gboolean
signal_is_in (const GArray *signals,
              int           signo)
{
  for (guint i = 0; i < signals->len; i++)
    if (g_array_index (signals, int, i) == signo)
      return TRUE;
  return FALSE;
}

int
sbx_cmd_run (int    argc,
             char **argv)
{
  /* First, before anything here changes a disposition (SIGPIPE below). */
  g_autoptr(GArray) ignored_signals = caller_ignored_signals ();
  g_auto(RunArgs) args = { 0 };
  g_auto(SbxRunEgress) egress = { 0 };
  g_autoptr(SbxRunAsk) ask = NULL;
  g_autofree char **original_argv = g_memdup2 (argv, sizeof (char *) * (gsize) argc);
  g_autoptr(GOptionContext) context = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(SbxProfile) profile = NULL;
  g_autoptr(SbxExecutorSetOptions) set_options = NULL;
  g_autoptr(SbxExecutorSet) set = NULL;
  g_autoptr(SbxExecutor) executor = NULL;
  g_autoptr(SbxRunOptions) run_options = NULL;
  g_autoptr(SbxPreparedProcess) prepared = NULL;
  g_autoptr(GMainLoop) loop = NULL;
  g_autoptr(GCancellable) cancellable = NULL;
  g_autofree char *cwd = NULL;
  g_autofree char *bound_command = NULL;
  g_autofree char *execution_id = NULL;
  g_autoptr(GPtrArray) tokens = NULL;
  g_autoptr(GPtrArray) approved = NULL;
  const char *command;
  GTimeSpan timeout = 0;
  guint64 max_output = 0;
  RunState state = { 0 };
  SignalData signals[3];
  guint signal_sources[3] = { 0, 0, 0 };
  static const int forwarded[3] = { SIGINT, SIGTERM, SIGHUP };
  g_auto(Terminal) term = { .resize_pipe = { -1, -1 } };
  gboolean interactive;
  int status;
  const GOptionEntry entries[] = {
    { "profile", 0, 0, G_OPTION_ARG_FILENAME, &args.profile_file,
      "Profile file (default: the embedded default profile)", "FILE" },
    { "workspace", 0, 0, G_OPTION_ARG_FILENAME, &args.workspace,
      "Workspace directory (default: the current directory)", "DIR" },
    { "read", 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &args.read_paths,
      "Add a read-only root", "PATH" },
    { "write", 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &args.write_paths,
      "Add a read-write root", "PATH" },
    { "network", 0, 0, G_OPTION_ARG_STRING, &args.network,
      "Network access: deny or allow", "deny|allow" },
    { "report", 0, G_OPTION_FLAG_OPTIONAL_ARG, G_OPTION_ARG_CALLBACK, (gpointer) parse_report,
      "Write this run's compile report (after its grants) to stderr before the command runs "
      "(as JSON with =json)", "json" },
    { "timeout", 0, 0, G_OPTION_ARG_STRING, &args.timeout,
      "Kill the process tree after SECS seconds (exit 124)", "SECS" },
    { "max-output", 0, 0, G_OPTION_ARG_STRING, &args.max_output,
      "Pass on at most SIZE bytes of output (K/M/G suffixes); past it kill the tree", "SIZE" },
    { "allow-host", 0, 0, G_OPTION_ARG_STRING_ARRAY, &args.allow_host,
      "Let this run reach HOST:PORT through the egress proxy (repeatable)", "HOST:PORT" },
    { "upstream-proxy", 0, 0, G_OPTION_ARG_STRING, &args.upstream_proxy,
      "Route egress through this HTTP(S) proxy (env:NAME reads it from $NAME)", "URL" },
    { "approve", 0, 0, G_OPTION_ARG_STRING_ARRAY, &args.approve,
      "Approve one Gated capability for this run (repeatable); command.start.v1 "
      "without a target means this command", "CLASS[:TARGET]" },
    { "ask", 0, 0, G_OPTION_ARG_NONE, &args.ask,
      "Ask on the terminal for each Gated capability the profile declares, and, while the "
      "command runs, for each connection a Gated network holds no grant for", NULL },
    { "pty", 0, 0, G_OPTION_ARG_NONE, &args.pty,
      "Give the command a terminal of its own inside the sandbox, also when stdin or "
      "stdout is not a terminal (stdout and stderr then both go through it)", NULL },
    { "no-pty", 0, 0, G_OPTION_ARG_NONE, &args.no_pty,
      "Never give the command a terminal: stdin, stdout and stderr pass through as they are", NULL },
    { "stage", 0, 0, G_OPTION_ARG_NONE, &args.stage,
      "Stage the run's writes: the host is unchanged until `sbx stage apply ID`", NULL },
    { "review", 0, 0, G_OPTION_ARG_NONE, &args.review,
      "Stage the run, then ask on the terminal: apply, discard or show the diff", NULL },
    { NULL },
  };
  g_autoptr(GOptionGroup) group = NULL;

  g_set_prgname ("sbx run");
  context = g_option_context_new ("[--] COMMAND [ARG...]");
  g_option_context_set_summary (context, "Run one command in the sandbox.");
  g_option_context_set_description (context,
                                    "stdin, stdout and stderr pass through.  When stdin and stdout are terminals\n"
                                    "(or with --pty) and the profile is Sandboxed, the command gets a terminal of\n"
                                    "its own inside the sandbox instead: job control, window size and full-screen\n"
                                    "programs work, stdout and stderr both go through that terminal (one stream),\n"
                                    "and --max-output counts the bytes relayed from it.  --no-pty turns this off.\n"
                                    "Exit status: the command's; 128+N\n"
                                    "when signal N killed it; 124 when --timeout passed; 125 when sbx refused or\n"
                                    "failed; 126 when the command is not executable; 127 when it is not found.\n");
  group = g_option_group_new ("run", NULL, NULL, &args, NULL);
  g_option_group_add_entries (group, entries);
  g_option_context_set_main_group (context, g_steal_pointer (&group));
  /* Options end at the command: "sbx run ls -la" passes -la to ls. */
  g_option_context_set_strict_posix (context, TRUE);
  if (!g_option_context_parse (context, &argc, &argv, &error))
    return refuse ("%s (see sbx run --help)", error->message);

  /* Egress: the run's route and targets (sbx-cmd-run-egress.c). */
  if (!sbx_run_egress_parse (&egress, args.allow_host, args.upstream_proxy, argc, original_argv, &error))
    return refuse ("%s", error->message);

  /* argv[0] is "run"; the command follows, after an optional "--". */
  if (argc >= 2 && g_str_equal (argv[1], "--"))
    {
      argv++;
      argc--;
    }
  if (argc < 2)
    return refuse ("no command given (see sbx run --help)");
  if (args.pty && args.no_pty)
    return refuse ("--pty and --no-pty contradict each other");
  command = argv[1];
  if (args.timeout != NULL && !parse_seconds (args.timeout, &timeout))
    return refuse ("--timeout takes a positive number of seconds, not \"%s\"", args.timeout);
  if (args.max_output != NULL && !parse_size (args.max_output, &max_output))
    return refuse ("--max-output takes a positive size in bytes (with an optional K, M or G), "
                   "not \"%s\"", args.max_output);

  profile = build_profile (&args, &error);
  if (profile == NULL)
    return refuse ("%s", error->message);
  {
    SbxProfile *routed = sbx_run_egress_profile (&egress, profile,
                                                 args.network != NULL && g_str_equal (args.network, "deny"),
                                                 &error);

    if (routed == NULL)
      return refuse ("%s", error->message);
    g_clear_pointer (&profile, sbx_profile_unref);
    profile = routed;
  }

  /* A Gated network that no option routed gets the direct route, so that
   * its connections are held, refused as denials or asked about, and an
   * --approve network.proxy-target.v1 has a route to authorize. */
  if (egress.route == NULL)
    egress.route = sbx_run_egress_gated_route (profile, (const char *const *) args.approve);
  /* --ask: the terminal that answers while the command runs
   * (sbx-cmd-run-ask.c). */
  if (args.ask)
    {
      ask = sbx_run_ask_new (command, &error);
      if (ask == NULL)
        return refuse ("%s", error->message);
    }

  set_options = sbx_executor_set_options_new ();
  sbx_executor_set_options_set_scratch_root (set_options, g_get_tmp_dir ());
  sbx_executor_set_options_set_max_executors (set_options, 1);
  sbx_run_egress_set_options (&egress, set_options);
  set = sbx_executor_set_new (profile, set_options, &error);
  if (set == NULL)
    {
      /* With SBX_BACKEND set (a forced backend, a veto, "help") the
       * registry's message says it all. */
      if (g_error_matches (error, SBX_EXECUTOR_SET_ERROR, SBX_EXECUTOR_SET_ERROR_BACKEND_UNAVAILABLE)
          && sbx_profile_get_isolation (profile) == SBX_ISOLATION_SANDBOXED
          && g_getenv ("SBX_BACKEND") == NULL)
        return refuse ("no sandboxing backend on this host can enforce this Sandboxed profile; "
                       "refusing to run without confinement (%s). See `sbx doctor`.",
                       error->message);
      return refuse ("%s", error->message);
    }
  executor = sbx_executor_set_for_key (set, RUN_KEY, &error);
  if (executor == NULL)
    return refuse ("%s", error->message);

  /* A closed reader of our output must not kill sbx (and leave the tree
   * running); the child gets SIGPIPE's default disposition back unless the
   * caller ignored it (ignored_signals was read before this). */
  signal (SIGPIPE, SIG_IGN);

  run_options = sbx_run_options_new ();
  sbx_run_options_set_ignored_signals (run_options, (const int *) (gpointer) ignored_signals->data,
                                       ignored_signals->len);
  sbx_run_options_set_stdin_fd (run_options, STDIN_FILENO);
  sbx_run_options_set_stdout_fd (run_options, STDOUT_FILENO);
  sbx_run_options_set_stderr_fd (run_options, STDERR_FILENO);
  sbx_run_options_set_timeout (run_options, timeout);
  sbx_run_options_set_max_output (run_options, max_output);
  sbx_run_options_set_staged (run_options, args.stage || args.review);
  if (ask != NULL)
    sbx_run_ask_attach (ask, run_options);
  else if (egress.route != NULL && sbx_profile_get_network (profile) == SBX_ACCESS_GATED
           && sbx_run_egress_may_observe (profile))
    sbx_run_egress_observe (executor, run_options);
  /* A terminal for the command when sbx runs in one (or when asked).  An
   * Unconfined profile runs without a sandbox to open it in: it keeps the
   * real terminal unless --pty insists (and the backend then refuses). */
  interactive = args.pty
                || (!args.no_pty && isatty (STDIN_FILENO) && isatty (STDOUT_FILENO)
                    && sbx_profile_get_isolation (profile) == SBX_ISOLATION_SANDBOXED);

  cwd = g_get_current_dir ();
  bound_command = sbx_grant_command_for_argv ((const char *const *) argv + 1);
  if (bound_command == NULL)
    return refuse ("the command line is not valid UTF-8");
  {
    g_autofree char *uuid = g_uuid_string_random ();

    execution_id = g_strconcat ("sbx-run-", uuid, NULL);
  }
  tokens = g_ptr_array_new_with_free_func (g_free);
  approved = g_ptr_array_new_with_free_func (g_free);
  if (!mint_grants (executor, profile, &args, execution_id, bound_command, cwd, tokens, approved,
                    &status))
    {
      g_autoptr(GError) close_error = NULL;

      sbx_executor_set_close (set, NULL, &close_error);
      return status;
    }
  if (!sbx_run_egress_mint (&egress, executor, profile, execution_id, bound_command, cwd, tokens, approved,
                            &error))
    {
      g_autoptr(GError) close_error = NULL;

      status = refuse ("%s", error->message);
      sbx_executor_set_close (set, NULL, &close_error);
      return status;
    }
  g_ptr_array_add (tokens, NULL);
  if (interactive)
    {
      guint16 rows, cols;

      /* After --ask's questions, before the command runs. */
      terminal_size (&rows, &cols);
      if (!terminal_follow_size (&term))
        {
          int errsv = errno;
          g_autoptr(GError) close_error = NULL;

          terminal_restore (&term);
          sbx_executor_set_close (set, NULL, &close_error);
          return refuse ("cannot set up the terminal for interactive mode: %s (use --no-pty)",
                         g_strerror (errsv));
        }
      /* The library's PTY for a run: it relays sbx's stdin and stdout, and
       * follows sbx's terminal's size on each SIGWINCH. */
      sbx_run_options_set_pty (run_options, rows, cols);
      sbx_run_options_set_pty_resize_fd (run_options, term.resize_pipe[0], -1);
      /* --ask pauses the relay of the terminal to the command to ask */
      if (ask != NULL && !sbx_run_ask_relay_stdin (ask, run_options, STDIN_FILENO))
        {
          int errsv = errno;
          g_autoptr(GError) close_error = NULL;

          terminal_restore (&term);
          sbx_executor_set_close (set, NULL, &close_error);
          return refuse ("cannot set up --ask's terminal relay: %s", g_strerror (errsv));
        }
      if (ask != NULL)
        sbx_run_ask_set_redraw_fd (ask, term.resize_pipe[1]);
    }

  /* The run is a grant transaction (the execution ID is always set), with
   * or without tokens.  Prepared first: the grants are verified and spent
   * and the run's own spec compiled, so the report printed is this run's
   * (a grant may have taken a guarantee the executor has), then run by
   * the same engine as sbx_executor_run_async(). */
  sbx_run_options_set_execution_id (run_options, execution_id);
  sbx_run_options_set_grants (run_options, (const char *const *) tokens->pdata);
  prepared = sbx_executor_prepare (executor, cwd, (const char *const *) argv + 1, run_options,
                                   NULL, &error);
  if (prepared == NULL)
    {
      g_autoptr(GError) close_error = NULL;

      terminal_restore (&term);
      status = exit_status_for_error (error, command, &args, profile);
      sbx_executor_set_close (set, NULL, &close_error);
      return status;
    }
  if (args.report != REPORT_NONE)
    print_run_report (sbx_prepared_process_get_report (prepared), args.report);
  if (interactive && !terminal_make_raw (&term))
    {
      int errsv = errno;
      g_autoptr(GError) close_error = NULL;

      terminal_restore (&term);
      sbx_executor_set_close (set, NULL, &close_error);
      return refuse ("cannot set up the terminal for interactive mode: %s (use --no-pty)",
                     g_strerror (errsv));
    }
  loop = g_main_loop_new (NULL, FALSE);
  cancellable = g_cancellable_new ();
  state.loop = loop;
  state.cancellable = cancellable;
  for (guint i = 0; i < G_N_ELEMENTS (forwarded); i++)
    {
      /* One the caller ignores stays ignored: nohup's hang-up neither
       * reaches sbx nor kills the tree. */
      if (signal_is_in (ignored_signals, forwarded[i]))
        continue;
      signals[i].state = &state;
      signals[i].signo = forwarded[i];
      signal_sources[i] = g_unix_signal_add (forwarded[i], on_signal, &signals[i]);
    }
  sbx_prepared_process_run_async (prepared, cancellable, run_done, &state);
  while (!state.done)
    g_main_loop_run (loop);
  for (guint i = 0; i < G_N_ELEMENTS (forwarded); i++)
    if (signal_sources[i] != 0)
      g_source_remove (signal_sources[i]);
  /* Before anything sbx says about the run. */
  terminal_restore (&term);

  if (state.result != NULL)
    {
      const char *const *spent = sbx_run_result_get_grants_spent (state.result);

      if (args.report == REPORT_JSON && spent[0] != NULL)
        {
          g_autoptr(GString) json = g_string_new ("{\"grants_spent\":[");

          for (guint i = 0; spent[i] != NULL; i++)
            {
              g_autofree char *escaped = g_strescape (spent[i], NULL);

              g_string_append_printf (json, "%s\"%s\"", i > 0 ? "," : "", escaped);
            }
          fprintf (stderr, "%s]}\n", json->str);
        }
      else if (args.report == REPORT_TEXT && spent[0] != NULL)
        {
          fprintf (stderr, "Grants spent:\n");
          for (guint i = 0; spent[i] != NULL; i++)
            fprintf (stderr, "  %s\n", spent[i]);
        }
      sbx_run_egress_report_denial (state.result);
      if (sbx_run_result_get_stage_id (state.result) != NULL)
        sbx_run_stage_finish (sbx_run_result_get_stage_id (state.result), args.review,
                              args.report == REPORT_JSON);
      sbx_run_print_denials (state.result, args.report == REPORT_JSON);
      if (sbx_run_result_get_truncated (state.result))
        {
          /* The output was cut where the limit fell, mid-line as a rule:
           * the notice starts on a line of its own, not glued to the last
           * byte passed on (stdout and stderr are often one terminal). */
          fputc ('\n', stderr);
          sbx_cli_error ("run: output limit of %" G_GUINT64_FORMAT " bytes reached; "
                         "the rest was not passed on and the process tree was killed", max_output);
        }
      if (sbx_run_result_get_if_signaled (state.result))
        status = 128 + sbx_run_result_get_term_sig (state.result);
      else
        status = sbx_run_result_get_exit_status (state.result);
      sbx_run_result_unref (state.result);
    }
  else if (state.signal_received != 0
           && g_error_matches (state.error, SBX_EXECUTOR_ERROR, SBX_EXECUTOR_ERROR_CANCELLED))
    {
      sbx_cli_error ("run: got signal %d (%s); the process tree was killed",
                     state.signal_received, g_strsignal (state.signal_received));
      status = 128 + state.signal_received;
    }
  else
    {
      status = exit_status_for_error (state.error, command, &args, profile);
    }
  g_clear_error (&state.error);

  if (!sbx_executor_set_close (set, NULL, &error))
    sbx_cli_error ("run: cleanup: %s", error->message);
  return status;
}
