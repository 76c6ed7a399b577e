/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Live approvals of host unix sockets on the real Linux backend, both
 * rungs, through the library and the plugin as built: a host daemon's
 * socket the profile gates ("host-sockets": [{"path": P, "access":
 * "gated"}]) is held by the connect supervisor and asked
 * (SbxDecisionRequest naming unix.connect.v1 P) when the run asks
 * (sbx_run_options_set_ask).  Listening sockets on this host only; the
 * probe reaches every one of them outside the sandbox (the positive
 * control).
 *
 * What it shows:
 *  - allow once performs exactly that connect: the next one to P asks
 *    again (denied here, with its denial);
 *  - allow for the run: later connects to P are not asked again;
 *  - deny and the timeout refuse as without asking, with the denial;
 *  - the run ending while a connect is held withdraws the question and
 *    nothing hangs;
 *  - concurrent connects to P (two, and a flood of 64) are one question,
 *    answered together;
 *  - a socket the profile does not name (a Deny dimension) is never asked
 *    and stays refused next to an approved one (no widening);
 *  - the approval is a spent grant ("unix.connect.v1 P: approved while
 *    running, ...") and the run claims no boundary an approval defeats.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <glib/gstdio.h>
#include <gio/gio.h>

#include "executor-test-util.h"
#include "ask-test-util.h"

static const char *const rungs[] = { "linux-userns", "linux-landlock" };

/* "PATH ..." connects to each in turn; "-t N PATH" connects N threads at
 * once.  Prints "PATH OK" or "PATH ERR errno" per connect. */
static const char probe[] =
  "import socket, sys, threading\n"
  "def one(p):\n"
  "    s = socket.socket(socket.AF_UNIX)\n"
  "    try:\n"
  "        s.connect(p)\n"
  "        print(p, 'OK', flush=True)\n"
  "    except OSError as e:\n"
  "        print(p, 'ERR', e.errno, flush=True)\n"
  "a = sys.argv[1:]\n"
  "if a and a[0] == '-t':\n"
  "    ts = [threading.Thread(target=one, args=(a[2],)) for _ in range(int(a[1]))]\n"
  "    [t.start() for t in ts]\n"
  "    [t.join() for t in ts]\n"
  "else:\n"
  "    [one(p) for p in a]\n"
  "print('END')\n";

typedef struct
{
  EtuTree         tree;
  const char     *backend;
  char           *host_dir;   /* outside every root */
  char           *gated;      /* a listening socket the profile gates */
  char           *sibling;    /* one beside it the profile does not name */
  GSocket        *listeners[2];
  SbxExecutorSet *set;
  SbxExecutor    *executor;
} Fx;

static GSocket *
listen_at (const char *path)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GSocket) sock = g_socket_new (G_SOCKET_FAMILY_UNIX, G_SOCKET_TYPE_STREAM, 0, &error);
  g_autoptr(GSocketAddress) addr = g_unix_socket_address_new (path);

  g_assert_no_error (error);
  g_assert_true (g_socket_bind (sock, addr, FALSE, &error));
  g_assert_no_error (error);
  g_socket_set_listen_backlog (sock, 128);   /* connects complete without an accept */
  g_assert_true (g_socket_listen (sock, &error));
  g_assert_no_error (error);
  return g_steal_pointer (&sock);
}

static gboolean
fx_init (Fx         *fx,
         const char *backend)
{
  const char *dirs[] = { g_getenv ("SBX_TEST_LINUX_PLUGIN_DIR"), NULL };
  g_autoptr(SbxRegistry) registry = NULL;
  g_autoptr(SbxProfileConfig) config = sbx_profile_config_new ();
  g_autoptr(SbxProfile) profile = NULL;
  g_autoptr(SbxExecutorSetOptions) options = NULL;
  g_autoptr(GError) error = NULL;

  memset (fx, 0, sizeof *fx);
  fx->backend = backend;
  etu_tree_init (&fx->tree);
  fx->host_dir = g_strdup ("/var/tmp/sbx-test-unix-ask-XXXXXX");
  g_assert_nonnull (g_mkdtemp (fx->host_dir));
  g_assert_cmpint (g_chmod (fx->host_dir, 0755), ==, 0);
  fx->gated = g_build_filename (fx->host_dir, "gated.sock", NULL);
  fx->sibling = g_build_filename (fx->host_dir, "sibling.sock", NULL);
  fx->listeners[0] = listen_at (fx->gated);
  fx->listeners[1] = listen_at (fx->sibling);

  registry = sbx_registry_new_for_directories (dirs, &error);
  g_assert_no_error (error);
  sbx_profile_config_set_workspace (config, fx->tree.ws, SBX_ACCESS_ALLOW, SBX_ACCESS_ALLOW);
  sbx_profile_config_set_command (config, SBX_ACCESS_ALLOW);
  sbx_profile_config_add_gated_host_socket (config, fx->gated);
  profile = sbx_profile_new (config, &error);
  g_assert_no_error (error);
  options = etu_options (fx->tree.scratch, 4, registry);
  sbx_executor_set_options_set_backend (options, backend);
  fx->set = sbx_executor_set_new (profile, options, &error);
  if (fx->set == NULL)
    {
      g_test_skip_printf ("%s is unavailable here: %s", backend, error->message);
      return FALSE;
    }
  fx->executor = sbx_executor_set_for_key (fx->set, "k", &error);
  g_assert_no_error (error);
  return TRUE;
}

static void
fx_clear (Fx *fx)
{
  if (fx->set != NULL)
    g_assert_true (sbx_executor_set_close (fx->set, NULL, NULL));
  g_clear_object (&fx->executor);
  g_clear_object (&fx->set);
  for (guint i = 0; i < G_N_ELEMENTS (fx->listeners); i++)
    g_clear_object (&fx->listeners[i]);
  if (fx->host_dir != NULL)
    etu_rm_rf (fx->host_dir);
  g_free (fx->host_dir);
  g_free (fx->gated);
  g_free (fx->sibling);
  etu_tree_clear (&fx->tree);
}

/* Runs the probe with @args, asking (answers from @asker, questions
 * waiting @timeout at most; 0: the default); its output, and its result
 * in *out_result (nullable). */
static char *
run_asking (Fx                *fx,
            const char *const *args,
            AskTester         *asker,
            GTimeSpan          timeout,
            SbxRunResult     **out_result)
{
  g_test_message ("%s:", fx->backend);
  return ask_run_python (fx->executor, fx->tree.ws, probe, args, asker, timeout, out_result);
}

static guint
count_lines (const char *out,
             const char *path,
             const char *what)
{
  g_autofree char *line = g_strdup_printf ("%s %s\n", path, what);
  guint n = 0;

  for (const char *p = strstr (out, line); p != NULL; p = strstr (p + 1, line))
    n++;
  return n;
}

/* The errno a refused connect to a host socket gets: at rung 1 what the
 * view answers for a host path outside it (EACCES from the view
 * supervisor's FUSE root, whose report entry "fs-denials" is enforced,
 * ENOENT from a tmpfs root); at rung 2 it is not the sandbox's. */
static const char *
refused (Fx *fx)
{
  SbxCompileReport *report;

  if (strcmp (fx->backend, "linux-userns") != 0)
    return "ERR 13";
  report = sbx_executor_get_report (fx->executor);
  for (guint i = 0; i < sbx_compile_report_get_n_entries (report); i++)
    if (g_str_equal (sbx_compile_report_get_entry_feature (report, i), "fs-denials"))
      return sbx_compile_report_get_entry_status (report, i) == SBX_REPORT_STATUS_ENFORCED ? "ERR 13" : "ERR 2";
  return "ERR 2";
}

static void
control (Fx *fx)
{
  const char *argv[] = { "/usr/bin/python3", "-c", probe, fx->gated, fx->sibling, NULL };
  g_autofree char *out = NULL;
  g_autoptr(GError) error = NULL;
  int status = -1;

  g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, NULL, &status,
                               &error));
  g_assert_no_error (error);
  g_assert_cmpuint (count_lines (out, fx->gated, "OK"), ==, 1);
  g_assert_cmpuint (count_lines (out, fx->sibling, "OK"), ==, 1);
}

/* The denial of @path in @result, or NULL. */
static SbxDenial *
denial_of (SbxRunResult *result,
           const char   *path)
{
  GPtrArray *denials = sbx_run_result_get_denials (result);

  for (guint i = 0; denials != NULL && i < denials->len; i++)
    if (g_strcmp0 (sbx_denial_get_target (denials->pdata[i]), path) == 0)
      return denials->pdata[i];
  return NULL;
}

/* Allow once: that connect; the next asks again (denied); the sibling is
 * never asked and stays refused; the approval is a spent grant and the run
 * claims no boundary an approval defeats. */
static void
test_once (gconstpointer data)
{
  Fx fx;
  AskTester asker = ask_tester_new (ASK_ONCE_THEN_DENY);
  g_autoptr(SbxRunResult) result = NULL;
  g_autofree char *out = NULL, *needle = NULL, *err = NULL;
  const char *const *spent;
  SbxDenial *d;

  if (fx_init (&fx, data))
    {
      control (&fx);
      err = g_strdup (refused (&fx));
      out = run_asking (&fx, (const char *const[]) { fx.gated, fx.sibling, fx.gated, NULL }, &asker, 0, &result);
      g_assert_nonnull (strstr (out, "END"));
      g_assert_cmpuint (count_lines (out, fx.gated, "OK"), ==, 1);
      g_assert_cmpuint (count_lines (out, fx.gated, err), ==, 1);
      g_assert_true (strstr (out, "OK") < strstr (out, err));   /* the first went through */
      g_assert_cmpuint (count_lines (out, fx.sibling, err), ==, 1);
      g_assert_cmpuint (asker.asked->len, ==, 2);
      g_assert_cmpstr (ask_tester_grant_target (&asker, 0), ==, fx.gated);
      g_assert_cmpstr (ask_tester_grant_target (&asker, 1), ==, fx.gated);
      g_assert_cmpstr (sbx_denial_get_grant_class (sbx_decision_request_get_denial (asker.asked->pdata[0])), ==,
                       SBX_GRANT_CLASS_UNIX_CONNECT);
      spent = sbx_run_result_get_grants_spent (result);
      needle = g_strdup_printf ("%s %s: approved while running, once", SBX_GRANT_CLASS_UNIX_CONNECT, fx.gated);
      g_assert_nonnull (spent);
      g_assert_cmpstr (spent[0], ==, needle);
      g_assert_null (spent[1]);
      /* the refused one is a denial naming the grant; the sibling names none */
      d = denial_of (result, fx.gated);
      g_assert_nonnull (d);
      g_assert_cmpstr (sbx_denial_get_grant_class (d), ==, SBX_GRANT_CLASS_UNIX_CONNECT);
      d = denial_of (result, fx.sibling);
      g_assert_nonnull (d);
      g_assert_null (sbx_denial_get_grant_class (d));
      g_assert_false (sbx_run_result_get_spawn_guarantees (result)
                      & (SBX_GUARANTEE_READ_BOUNDARY | SBX_GUARANTEE_WRITE_BOUNDARY
                         | SBX_GUARANTEE_NETWORK_BOUNDARY));
      g_assert_true (sbx_executor_get_guarantees (fx.executor) & SBX_GUARANTEE_WRITE_BOUNDARY);
    }
  fx_clear (&fx);
  ask_tester_clear (&asker);
}

/* Allow for the run: asked once for three connects; the sibling is still
 * refused (never asked); the next run asks again. */
static void
test_for_run (gconstpointer data)
{
  Fx fx;
  AskTester asker = ask_tester_new (ASK_FOR_RUN_THEN_DENY);
  AskTester next = ask_tester_new (ASK_DENY);
  g_autoptr(SbxRunResult) result = NULL;
  g_autofree char *out = NULL, *again = NULL, *needle = NULL;

  if (fx_init (&fx, data))
    {
      out = run_asking (&fx, (const char *const[]) { fx.gated, fx.gated, fx.sibling, fx.gated, NULL }, &asker, 0,
                        &result);
      g_assert_cmpuint (count_lines (out, fx.gated, "OK"), ==, 3);
      g_assert_cmpuint (count_lines (out, fx.sibling, refused (&fx)), ==, 1);
      g_assert_cmpuint (asker.asked->len, ==, 1);
      needle = g_strdup_printf ("%s %s: approved while running, for the rest of this run",
                                SBX_GRANT_CLASS_UNIX_CONNECT, fx.gated);
      g_assert_cmpstr (sbx_run_result_get_grants_spent (result)[0], ==, needle);
      g_assert_null (denial_of (result, fx.gated));
      /* nothing carries over */
      again = run_asking (&fx, (const char *const[]) { fx.gated, NULL }, &next, 0, NULL);
      g_assert_cmpuint (count_lines (again, fx.gated, refused (&fx)), ==, 1);
      g_assert_cmpuint (next.asked->len, ==, 1);
    }
  fx_clear (&fx);
  ask_tester_clear (&asker);
  ask_tester_clear (&next);
}

/* Deny, and the timeout: refused as without asking, with the denial. */
static void
test_refusals (gconstpointer data)
{
  Fx fx;
  AskTester deny = ask_tester_new (ASK_DENY);
  AskTester keep = ask_tester_new (ASK_KEEP);

  if (fx_init (&fx, data))
    {
      for (int i = 0; i < 2; i++)
        {
          AskTester *asker = i == 0 ? &deny : &keep;
          g_autoptr(SbxRunResult) result = NULL;
          g_autofree char *out = run_asking (&fx, (const char *const[]) { fx.gated, NULL }, asker,
                                             i == 0 ? 0 : 200 * G_TIME_SPAN_MILLISECOND, &result);

          g_assert_cmpuint (count_lines (out, fx.gated, refused (&fx)), ==, 1);
          g_assert_cmpuint (asker->asked->len, ==, 1);
          g_assert_false (sbx_decision_request_is_pending (asker->asked->pdata[0]));
          g_assert_nonnull (denial_of (result, fx.gated));
          g_assert_null (sbx_run_result_get_grants_spent (result)[0]);
        }
    }
  fx_clear (&fx);
  ask_tester_clear (&deny);
  ask_tester_clear (&keep);
}

/* A spawned process asks through its signal; the run ending while the
 * connect is held withdraws the question, and nothing hangs. */
static void
test_run_ends (gconstpointer data)
{
  Fx fx;
  AskTester asker = ask_tester_new (ASK_KEEP);
  g_autoptr(SbxProcess) process = NULL;
  g_autoptr(SbxRunOptions) options = sbx_run_options_new ();
  g_autoptr(GError) error = NULL;

  if (fx_init (&fx, data))
    {
      const char *argv[] = { "/usr/bin/python3", "-c", probe, fx.gated, NULL };

      sbx_run_options_set_ask (options, TRUE);
      sbx_run_options_set_ask_timeout (options, 3600 * G_TIME_SPAN_SECOND);
      process = sbx_executor_spawn (fx.executor, fx.tree.ws, argv, options, NULL, &error);
      g_assert_no_error (error);
      g_signal_connect (process, "approval-requested", G_CALLBACK (ask_tester_on_signal), &asker);
      while (asker.asked->len == 0)
        g_main_context_iteration (NULL, TRUE);
      g_assert_cmpstr (ask_tester_grant_target (&asker, 0), ==, fx.gated);
      g_assert_true (sbx_decision_request_is_pending (asker.asked->pdata[0]));
      sbx_process_force_exit (process);
      ask_wait_process (process);
      g_assert_false (sbx_decision_request_is_pending (asker.asked->pdata[0]));
      /* a late answer does nothing */
      sbx_decision_request_allow_once (asker.asked->pdata[0]);
    }
  fx_clear (&fx);
  ask_tester_clear (&asker);
}

/* @n connects at once to the gated socket: one question, answered
 * together (allow once opens every merged connect). */
static void
test_merged (Fx   *fx,
             guint n)
{
  AskTester asker = ask_tester_new (ASK_KEEP);
  g_autofree char *count = g_strdup_printf ("%u", n);
  g_autofree char *out = NULL;

  asker.want = n;
  out = run_asking (fx, (const char *const[]) { "-t", count, fx->gated, NULL }, &asker, 120 * G_TIME_SPAN_SECOND,
                    NULL);
  g_assert_true (asker.answered);
  g_assert_cmpuint (count_lines (out, fx->gated, "OK"), ==, n);
  g_assert_cmpuint (asker.asked->len, ==, 1);
  ask_tester_clear (&asker);
}

static void
test_two (gconstpointer data)
{
  Fx fx;

  if (fx_init (&fx, data))
    test_merged (&fx, 2);
  fx_clear (&fx);
}

static void
test_flood (gconstpointer data)
{
  Fx fx;

  if (fx_init (&fx, data))
    test_merged (&fx, 64);
  fx_clear (&fx);
}

int
main (int    argc,
      char **argv)
{
  static const struct
  {
    const char *name;
    GTestDataFunc fn;
  } cases[] = {
    { "once", test_once },
    { "for-run", test_for_run },
    { "refusals", test_refusals },
    { "run-ends", test_run_ends },
    { "two", test_two },
    { "flood", test_flood },
  };

  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
  for (guint r = 0; r < G_N_ELEMENTS (rungs); r++)
    for (guint c = 0; c < G_N_ELEMENTS (cases); c++)
      {
        g_autofree char *path = g_strdup_printf ("/linux/unix-ask/%s/%s", rungs[r], cases[c].name);

        g_test_add_data_func (path, rungs[r], cases[c].fn);
      }
  return g_test_run ();
}
