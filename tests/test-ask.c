/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Live approvals, end to end: the library, the Linux backend (rung 1,
 * linux-userns: the egress route needs its private network) and
 * plugins/egress-http as built, against HTTP servers on this host's
 * loopback only, on ports the servers picked.  Every case spawns a tool
 * with sbx_run_options_set_ask() and answers SbxProcess::approval-requested
 * on this thread's main context; the tool's exit status says what its
 * connections got (each target answers without the sandbox in the
 * positive control).
 *
 * What it shows:
 *  - allow once opens exactly that connection: the second one to the same
 *    target asks again (and is denied here);
 *  - allow for the run opens the target until the run ends (asked once for
 *    three connections), and the next run asks again;
 *  - deny, no handler and the timeout refuse, each with a denial; the
 *    run's end withdraws a pending question (no hang);
 *  - a profile whose network is Deny is never asked;
 *  - an approval opens exactly its target: another port asks again; a
 *    name resolving to loopback and the metadata address stay refused by
 *    the address rules after approval;
 *  - identical concurrent requests are asked once and answered together;
 *  - a thousand held requests cost file descriptors only: memory bounded
 *    and no busy loop while they wait;
 *  - approvals are spent grants of the run ("approved while running" in
 *    the grant-spent events and, for a run, its result); a run (not a
 *    spawned process) asks through the options' function.
 */
#include <sbx/sbx.h>

#include <string.h>
#include <sys/resource.h>
#include <glib/gstdio.h>

#include "executor-test-util.h"
#include "egress-test-util.h"
#include "sbx-decision-private.h"

typedef struct
{
  EtuTree         tree;
  TestServer     *http;
  TestServer     *other;
  char           *events;
  SbxExecutorSet *set;
  SbxExecutor    *executor;
} Fx;

typedef enum
{
  ANSWER_ONCE_THEN_DENY,
  ANSWER_FOR_RUN,
  ANSWER_DENY,
  ANSWER_KEEP,        /* keeps the request unanswered */
  ANSWER_ALLOW_ALL,   /* allow once, every time */
} AnswerMode;

typedef struct
{
  AnswerMode  mode;
  GPtrArray  *asked;  /* SbxDecisionRequest (owned refs) */
  GThread    *thread;
  gboolean    wrong_thread;
} Asker;

static void fx_clear (Fx *fx);

static gboolean
fx_init (Fx       *fx,
         SbxAccess network)
{
  const char *dirs[] = { g_getenv ("SBX_TEST_LINUX_PLUGIN_DIR"), g_getenv ("SBX_TEST_EGRESS_HTTP_PLUGIN_DIR"),
                         g_getenv ("SBX_TEST_JSONL_PLUGIN_DIR"), NULL };
  g_autoptr(SbxRegistry) registry = NULL;
  g_autoptr(SbxProfileConfig) config = sbx_profile_config_new ();
  g_autoptr(SbxProfile) profile = NULL;
  g_autoptr(SbxExecutorSetOptions) options = NULL;
  g_autoptr(SbxEgressRoute) route = sbx_egress_route_new_direct ();
  g_autoptr(GError) error = NULL;
  g_autofree char *curl = g_find_program_in_path ("curl");

  memset (fx, 0, sizeof *fx);
  if (curl == NULL)
    {
      g_test_skip ("curl is not installed (scripts/setup.sh installs it)");
      return FALSE;
    }
  registry = sbx_registry_new_for_directories (dirs, &error);
  g_assert_no_error (error);
  etu_tree_init (&fx->tree);
  fx->http = test_server_new (TEST_SERVER_HTTP, NULL);
  fx->other = test_server_new (TEST_SERVER_HTTP, NULL);
  fx->events = g_build_filename (fx->tree.tmp, "events.jsonl", NULL);
  sbx_profile_config_set_workspace (config, fx->tree.ws, SBX_ACCESS_ALLOW, SBX_ACCESS_ALLOW);
  sbx_profile_config_set_host (config, SBX_ACCESS_DENY, SBX_ACCESS_DENY);
  sbx_profile_config_set_network (config, network);
  sbx_profile_config_set_command (config, SBX_ACCESS_ALLOW);
  sbx_profile_config_set_home (config, SBX_HOME_ISOLATED);
  profile = sbx_profile_new (config, &error);
  g_assert_no_error (error);
  options = etu_options (fx->tree.scratch, 4, registry);
  sbx_executor_set_options_set_backend (options, "linux-userns");
  if (network != SBX_ACCESS_DENY)
    sbx_executor_set_options_set_egress_route (options, route);
  sbx_executor_set_options_add_reporter (options, "jsonl", fx->events);
  fx->set = sbx_executor_set_new (profile, options, &error);
  if (fx->set == NULL && g_error_matches (error, SBX_EXECUTOR_SET_ERROR,
                                          SBX_EXECUTOR_SET_ERROR_BACKEND_UNAVAILABLE))
    {
      g_test_skip_printf ("linux-userns is unavailable here: %s", error->message);
      fx_clear (fx);
      return FALSE;
    }
  g_assert_no_error (error);
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
  g_clear_pointer (&fx->http, test_server_free);
  g_clear_pointer (&fx->other, test_server_free);
  if (fx->events != NULL)
    g_unlink (fx->events);
  g_free (fx->events);
  if (fx->tree.tmp != NULL)
    etu_tree_clear (&fx->tree);
}

static char *
url_of (TestServer *s,
        const char *host)
{
  return g_strdup_printf ("http://%s:%u/ask", host, test_server_get_port (s));
}

static void
on_request (SbxProcess         *process,
            SbxDecisionRequest *request,
            gpointer            data)
{
  Asker *asker = data;

  (void) process;
  if (g_thread_self () != asker->thread)
    asker->wrong_thread = TRUE;
  g_assert_true (sbx_decision_request_is_pending (request));
  g_ptr_array_add (asker->asked, g_object_ref (request));
  switch (asker->mode)
    {
    case ANSWER_ONCE_THEN_DENY:
      if (asker->asked->len == 1)
        sbx_decision_request_allow_once (request);
      else
        sbx_decision_request_deny (request);
      break;
    case ANSWER_FOR_RUN:
      sbx_decision_request_allow_for_run (request);
      break;
    case ANSWER_DENY:
      sbx_decision_request_deny (request);
      break;
    case ANSWER_ALLOW_ALL:
      sbx_decision_request_allow_once (request);
      break;
    case ANSWER_KEEP:
    default:
      break;
    }
}

static SbxProcess *
spawn_asking (Fx         *fx,
              const char *command,
              Asker      *asker,
              GTimeSpan   ask_timeout)
{
  g_autoptr(SbxRunOptions) options = sbx_run_options_new ();
  g_autoptr(GError) error = NULL;
  const char *argv[] = { "/bin/sh", "-c", command, NULL };
  SbxProcess *process;

  sbx_run_options_set_ask (options, TRUE);
  if (ask_timeout > 0)
    sbx_run_options_set_ask_timeout (options, ask_timeout);
  process = sbx_executor_spawn (fx->executor, fx->tree.ws, argv, options, NULL, &error);
  g_assert_no_error (error);
  if (asker != NULL)
    g_signal_connect (process, "approval-requested", G_CALLBACK (on_request), asker);
  return process;
}

static void
wait_done (SbxProcess *process,
           gboolean   *done)
{
  (void) process;
  *done = TRUE;
}

static void
wait_cb (GObject      *source,
         GAsyncResult *result,
         gpointer      data)
{
  g_autoptr(GError) error = NULL;

  g_assert_true (sbx_process_wait_finish (SBX_PROCESS (source), result, &error));
  g_assert_no_error (error);
  wait_done (SBX_PROCESS (source), data);
}

/* Runs this thread's main context until @process ends (its questions are
 * answered here meanwhile); its exit status. */
static int
finish (SbxProcess *process)
{
  gboolean done = FALSE;

  sbx_process_wait_async (process, NULL, wait_cb, &done);
  while (!done)
    g_main_context_iteration (NULL, TRUE);
  g_assert_true (sbx_process_get_if_exited (process));
  return sbx_process_get_exit_status (process);
}

static Asker
asker_new (AnswerMode mode)
{
  Asker a = { mode, g_ptr_array_new_with_free_func (g_object_unref), g_thread_self (), FALSE };

  return a;
}

static const char *
grant_target_of (Asker *asker,
                 guint  i)
{
  return sbx_denial_get_grant_target (sbx_decision_request_get_denial (asker->asked->pdata[i]));
}

static char *
read_events (Fx *fx)
{
  char *text = NULL;

  if (!g_file_get_contents (fx->events, &text, NULL, NULL))
    return g_strdup ("");
  return text;
}

/* ------------------------------------------------------------------------- */

static void
test_once (void)
{
  Fx fx;
  Asker asker = asker_new (ANSWER_ONCE_THEN_DENY);
  g_autofree char *url = NULL, *command = NULL, *target = NULL, *events = NULL;
  g_autoptr(SbxProcess) process = NULL;

  if (!fx_init (&fx, SBX_ACCESS_GATED))
    {
      g_ptr_array_unref (asker.asked);
      return;
    }
  url = url_of (fx.http, "127.0.0.1");
  target = g_strdup_printf ("tcp:127.0.0.1:%u", test_server_get_port (fx.http));
  /* the positive control: the target answers without the sandbox */
  {
    g_autofree char *control = g_strdup_printf ("curl -sf %s >/dev/null", url);
    const char *argv[] = { "/bin/sh", "-c", control, NULL };
    int status = -1;

    g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, NULL, NULL, &status,
                                 NULL));
    g_assert_true (g_spawn_check_wait_status (status, NULL));
  }
  /* 0: the first connection went through and the second was refused */
  command = g_strdup_printf ("curl -sf %s >/dev/null || exit 1; curl -sf %s >/dev/null && exit 2; exit 0",
                             url, url);
  process = spawn_asking (&fx, command, &asker, 0);
  g_assert_cmpint (finish (process), ==, 0);
  g_assert_false (asker.wrong_thread);
  g_assert_cmpuint (asker.asked->len, ==, 2);
  g_assert_cmpstr (grant_target_of (&asker, 0), ==, target);
  g_assert_cmpstr (sbx_denial_get_grant_class (sbx_decision_request_get_denial (asker.asked->pdata[0])), ==,
                   SBX_GRANT_CLASS_NETWORK_PROXY_TARGET);
  g_assert_cmpstr (grant_target_of (&asker, 1), ==, target);
  g_assert_false (sbx_decision_request_is_pending (asker.asked->pdata[0]));
  g_clear_object (&process);
  /* the approval is a spent grant of the run; the refusal a denial */
  events = read_events (&fx);
  g_assert_nonnull (strstr (events, ": approved while running, once"));
  g_assert_nonnull (strstr (events, "not approved when asked"));
  fx_clear (&fx);
  g_ptr_array_unref (asker.asked);
}

static void
test_for_run (void)
{
  Fx fx;
  Asker asker = asker_new (ANSWER_FOR_RUN);
  Asker next = asker_new (ANSWER_DENY);
  g_autofree char *url = NULL, *command = NULL, *again = NULL, *events = NULL, *needle = NULL;
  g_autoptr(SbxProcess) process = NULL;
  g_autoptr(SbxProcess) second = NULL;

  if (!fx_init (&fx, SBX_ACCESS_GATED))
    {
      g_ptr_array_unref (asker.asked);
      g_ptr_array_unref (next.asked);
      return;
    }
  url = url_of (fx.http, "127.0.0.1");
  command = g_strdup_printf ("for i in 1 2 3; do curl -sf %s >/dev/null || exit $i; done", url);
  process = spawn_asking (&fx, command, &asker, 0);
  g_assert_cmpint (finish (process), ==, 0);
  g_assert_cmpuint (asker.asked->len, ==, 1);
  /* nothing carries over: the next run asks again (and is denied) */
  again = g_strdup_printf ("curl -sf %s >/dev/null && exit 1; exit 0", url);
  second = spawn_asking (&fx, again, &next, 0);
  g_assert_cmpint (finish (second), ==, 0);
  g_assert_cmpuint (next.asked->len, ==, 1);
  g_clear_object (&process);
  g_clear_object (&second);
  events = read_events (&fx);
  needle = g_strdup_printf ("tcp:127.0.0.1:%u: approved while running, for the rest of this run",
                            test_server_get_port (fx.http));
  g_assert_nonnull (strstr (events, needle));
  g_assert_nonnull (strstr (events, "\"approved_while_running\":true"));
  fx_clear (&fx);
  g_ptr_array_unref (asker.asked);
  g_ptr_array_unref (next.asked);
}

/* Deny, no handler, the timeout: each refuses, with a denial event. */
static void
test_refusals (void)
{
  Fx fx;
  Asker deny = asker_new (ANSWER_DENY);
  Asker keep = asker_new (ANSWER_KEEP);
  g_autofree char *url = NULL, *command = NULL, *events = NULL;
  g_autoptr(SbxProcess) p1 = NULL, p2 = NULL, p3 = NULL;

  if (!fx_init (&fx, SBX_ACCESS_GATED))
    {
      g_ptr_array_unref (deny.asked);
      g_ptr_array_unref (keep.asked);
      return;
    }
  url = url_of (fx.http, "127.0.0.1");
  command = g_strdup_printf ("curl -sf %s >/dev/null && exit 1; exit 0", url);
  p1 = spawn_asking (&fx, command, &deny, 0);
  g_assert_cmpint (finish (p1), ==, 0);
  g_assert_cmpuint (deny.asked->len, ==, 1);
  /* no handler: refused at once, never held for the timeout */
  p2 = spawn_asking (&fx, command, NULL, 3600 * G_TIME_SPAN_SECOND);
  g_assert_cmpint (finish (p2), ==, 0);
  /* a kept request times out (300 ms) and is no longer pending */
  p3 = spawn_asking (&fx, command, &keep, 300 * G_TIME_SPAN_MILLISECOND);
  g_assert_cmpint (finish (p3), ==, 0);
  g_assert_cmpuint (keep.asked->len, ==, 1);
  g_assert_false (sbx_decision_request_is_pending (keep.asked->pdata[0]));
  sbx_decision_request_allow_once (keep.asked->pdata[0]);   /* too late: nothing happens */
  g_clear_object (&p1);
  g_clear_object (&p2);
  g_clear_object (&p3);
  events = read_events (&fx);
  g_assert_nonnull (strstr (events, "not approved when asked"));
  g_assert_null (strstr (events, "approved while running"));
  fx_clear (&fx);
  g_ptr_array_unref (deny.asked);
  g_ptr_array_unref (keep.asked);
}

/* A Deny network is never asked. */
static void
test_deny_profile (void)
{
  Fx fx;
  Asker asker = asker_new (ANSWER_ALLOW_ALL);
  g_autofree char *url = NULL, *command = NULL;
  g_autoptr(SbxProcess) process = NULL;

  if (!fx_init (&fx, SBX_ACCESS_DENY))
    {
      g_ptr_array_unref (asker.asked);
      return;
    }
  url = url_of (fx.http, "127.0.0.1");
  command = g_strdup_printf ("curl -sf %s >/dev/null && exit 1; exit 0", url);
  process = spawn_asking (&fx, command, &asker, 0);
  g_assert_cmpint (finish (process), ==, 0);
  g_assert_cmpuint (asker.asked->len, ==, 0);
  g_clear_object (&process);
  fx_clear (&fx);
  g_ptr_array_unref (asker.asked);
}

/* An approval opens exactly its target, under every address rule. */
static void
test_no_widening (void)
{
  Fx fx;
  Asker asker = asker_new (ANSWER_ALLOW_ALL);
  g_autofree char *url = NULL, *other = NULL, *name = NULL, *command = NULL;
  g_autoptr(SbxProcess) process = NULL;
  g_autoptr(GPtrArray) targets = g_ptr_array_new_with_free_func (g_free);

  if (!fx_init (&fx, SBX_ACCESS_GATED))
    {
      g_ptr_array_unref (asker.asked);
      return;
    }
  url = url_of (fx.http, "127.0.0.1");
  other = url_of (fx.other, "127.0.0.1");
  name = url_of (fx.http, "localhost");
  /* approved: the literal opens; another port is its own question; the
   * name (loopback, non-public) and the metadata address stay refused */
  command = g_strdup_printf ("curl -sf %s >/dev/null || exit 1; curl -sf %s >/dev/null || exit 2; "
                             "curl -sf %s >/dev/null && exit 3; "
                             "curl -sf -m 5 http://169.254.169.254/ >/dev/null && exit 4; exit 0",
                             url, other, name);
  process = spawn_asking (&fx, command, &asker, 0);
  g_assert_cmpint (finish (process), ==, 0);
  g_assert_cmpuint (asker.asked->len, ==, 4);
  g_ptr_array_add (targets, g_strdup_printf ("tcp:127.0.0.1:%u", test_server_get_port (fx.http)));
  g_ptr_array_add (targets, g_strdup_printf ("tcp:127.0.0.1:%u", test_server_get_port (fx.other)));
  g_ptr_array_add (targets, g_strdup_printf ("tcp:localhost:%u", test_server_get_port (fx.http)));
  g_ptr_array_add (targets, g_strdup ("tcp:169.254.169.254:80"));
  for (guint i = 0; i < 4; i++)
    g_assert_cmpstr (grant_target_of (&asker, i), ==, targets->pdata[i]);
  g_clear_object (&process);
  fx_clear (&fx);
  g_ptr_array_unref (asker.asked);
}

static guint
count_fds (void)
{
  g_autoptr(GDir) dir = g_dir_open ("/proc/self/fd", 0, NULL);
  guint n = 0;

  g_assert_nonnull (dir);
  while (g_dir_read_name (dir) != NULL)
    n++;
  return n;
}

static gsize
vm_rss_kib (void)
{
  g_autofree char *status = NULL;
  const char *line;

  g_assert_true (g_file_get_contents ("/proc/self/status", &status, NULL, NULL));
  line = strstr (status, "\nVmRSS:");
  g_assert_nonnull (line);
  return (gsize) g_ascii_strtoull (line + strlen ("\nVmRSS:"), NULL, 10);
}

/* The run ends while its question is pending: the request is withdrawn
 * (denied), the process ends, nothing waits for an answer. */
static void
test_run_ends (void)
{
  Fx fx;
  Asker asker = asker_new (ANSWER_KEEP);
  g_autofree char *url = NULL, *command = NULL;
  g_autoptr(SbxProcess) process = NULL;
  g_autoptr(GError) error = NULL;

  if (!fx_init (&fx, SBX_ACCESS_GATED))
    {
      g_ptr_array_unref (asker.asked);
      return;
    }
  url = url_of (fx.http, "127.0.0.1");
  command = g_strdup_printf ("curl -sf %s >/dev/null; exit 0", url);
  process = spawn_asking (&fx, command, &asker, 3600 * G_TIME_SPAN_SECOND);
  while (asker.asked->len == 0)
    g_main_context_iteration (NULL, TRUE);
  g_assert_true (sbx_decision_request_is_pending (asker.asked->pdata[0]));
  sbx_process_force_exit (process);
  g_assert_true (sbx_process_wait (process, NULL, &error));
  g_assert_no_error (error);
  g_assert_false (sbx_decision_request_is_pending (asker.asked->pdata[0]));
  g_clear_object (&process);
  fx_clear (&fx);
  g_ptr_array_unref (asker.asked);
}

static void
on_func_request (SbxDecisionRequest *request,
                 gpointer            data)
{
  Asker *asker = data;

  on_request (NULL, request, asker);
}

static void
run_done (GObject      *source,
          GAsyncResult *result,
          gpointer      data)
{
  SbxRunResult **out = data;
  g_autoptr(GError) error = NULL;

  *out = sbx_executor_run_finish (SBX_EXECUTOR (source), result, &error);
  g_assert_no_error (error);
}

/* A run (not a spawned process) asks through the options' function, on
 * the caller's context; its approval is a spent grant in the result. */
static void
test_run_func (void)
{
  Fx fx;
  Asker asker = asker_new (ANSWER_FOR_RUN);
  g_autofree char *url = NULL, *command = NULL, *needle = NULL;
  g_autoptr(SbxRunOptions) options = sbx_run_options_new ();
  SbxRunResult *result = NULL;
  const char *const *spent;
  const char *argv[] = { "/bin/sh", "-c", NULL, NULL };

  if (!fx_init (&fx, SBX_ACCESS_GATED))
    {
      g_ptr_array_unref (asker.asked);
      return;
    }
  url = url_of (fx.http, "127.0.0.1");
  command = g_strdup_printf ("curl -sf %s >/dev/null && curl -sf %s >/dev/null", url, url);
  argv[2] = command;
  sbx_run_options_set_ask (options, TRUE);
  sbx_run_options_set_decision_func (options, on_func_request, &asker, NULL);
  sbx_executor_run_async (fx.executor, fx.tree.ws, argv, options, NULL, run_done, &result);
  while (result == NULL)
    g_main_context_iteration (NULL, TRUE);
  g_assert_cmpint (sbx_run_result_get_exit_status (result), ==, 0);
  g_assert_false (asker.wrong_thread);
  g_assert_cmpuint (asker.asked->len, ==, 1);
  spent = sbx_run_result_get_grants_spent (result);
  needle = g_strdup_printf ("%s tcp:127.0.0.1:%u: approved while running, for the rest of this run",
                            SBX_GRANT_CLASS_NETWORK_PROXY_TARGET, test_server_get_port (fx.http));
  g_assert_nonnull (spent[0]);
  g_assert_cmpstr (spent[0], ==, needle);
  g_assert_null (spent[1]);
  g_assert_cmpuint (sbx_run_result_get_denials (result)->len, ==, 0);
  sbx_run_result_unref (result);
  fx_clear (&fx);
  g_ptr_array_unref (asker.asked);
}

static gboolean
deadline_passed (gpointer data)
{
  *(gboolean *) data = TRUE;
  return G_SOURCE_REMOVE;
}

/* Identical concurrent requests: one question, answered together. */
static void
test_merged (gconstpointer data)
{
  guint n = GPOINTER_TO_UINT (data);
  Fx fx;
  Asker asker = asker_new (ANSWER_KEEP);
  g_autofree char *script = NULL, *command = NULL, *authority = NULL;
  g_autoptr(SbxProcess) process = NULL;
  struct rusage before, after;
  struct rlimit saved_limit, limit;
  gint64 deadline;
  guint fds_before;
  gsize rss_before;
  SbxDecisionBroker *broker;

  /* the proxy and the server run in this process: a held request is one
   * descriptor, an opened one three (the client's, the dial, the accept) */
  g_assert_cmpint (getrlimit (RLIMIT_NOFILE, &saved_limit), ==, 0);
  if (saved_limit.rlim_max != RLIM_INFINITY && saved_limit.rlim_max < 3 * n + 256)
    {
      g_test_skip_printf ("%u requests need %u descriptors; the hard limit is %lu", n, 3 * n + 256,
                          (unsigned long) saved_limit.rlim_max);
      g_ptr_array_unref (asker.asked);
      return;
    }
  limit = saved_limit;
  if (limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur < 3 * n + 256)
    limit.rlim_cur = 3 * n + 256;
  g_assert_cmpint (setrlimit (RLIMIT_NOFILE, &limit), ==, 0);
  if (!fx_init (&fx, SBX_ACCESS_GATED))
    {
      g_assert_cmpint (setrlimit (RLIMIT_NOFILE, &saved_limit), ==, 0);
      g_ptr_array_unref (asker.asked);
      return;
    }
  authority = g_strdup_printf ("127.0.0.1:%u", test_server_get_port (fx.http));
  /* N CONNECTs with the run's proxy credential, all held; then each must
   * get its 200 */
  script = g_build_filename (fx.tree.ws, "flood.py", NULL);
  g_assert_true (g_file_set_contents (script,
                                      "import base64, os, socket, sys, urllib.parse\n"
                                      "u = urllib.parse.urlsplit(os.environ['HTTP_PROXY'])\n"
                                      "pair = urllib.parse.unquote(u.username) + ':' + urllib.parse.unquote(u.password)\n"
                                      "auth = base64.b64encode(pair.encode()).decode()\n"
                                      "n, target = int(sys.argv[1]), sys.argv[2]\n"
                                      "head = ('CONNECT %s HTTP/1.1\\r\\nHost: %s\\r\\nProxy-Authorization: Basic %s\\r\\n\\r\\n'\n"
                                      "        % (target, target, auth)).encode()\n"
                                      "socks = []\n"
                                      "for i in range(n):\n"
                                      "    s = socket.create_connection(('127.0.0.1', u.port))\n"
                                      "    s.sendall(head)\n"
                                      "    socks.append(s)\n"
                                      "ok = sum(1 for s in socks if s.recv(12).startswith(b'HTTP/1.1 200'))\n"
                                      "sys.exit(0 if ok == n else 1)\n", -1, NULL));
  command = g_strdup_printf ("ulimit -n 4096 2>/dev/null; exec /usr/bin/python3 flood.py %u %s", n, authority);
  fds_before = count_fds ();
  rss_before = vm_rss_kib ();
  /* a question that outlives a slow machine's connections */
  process = spawn_asking (&fx, command, &asker, 600 * G_TIME_SPAN_SECOND);
  deadline = g_get_monotonic_time () + 120 * G_TIME_SPAN_SECOND;
  while (asker.asked->len == 0 && g_get_monotonic_time () < deadline)
    g_main_context_iteration (NULL, TRUE);
  g_assert_cmpuint (asker.asked->len, ==, 1);
  broker = sbx_decision_request_get_broker (asker.asked->pdata[0]);
  /* every request reaches the one question (the proxy thread holds them) */
  while (sbx_decision_broker_get_n_waiting (broker) < n && g_get_monotonic_time () < deadline)
    g_main_context_iteration (NULL, FALSE);
  g_assert_cmpuint (sbx_decision_broker_get_n_waiting (broker), ==, n);
  g_assert_cmpuint (sbx_decision_broker_get_n_asked (broker), ==, 1);
  if (n >= 1000)
    {
      /* held requests cost no CPU: 300 ms of waiting uses a few ms at most */
      gboolean passed = FALSE;
      gint64 cpu_us;

      g_assert_cmpint (getrusage (RUSAGE_SELF, &before), ==, 0);
      g_timeout_add (300, deadline_passed, &passed);
      while (!passed)
        g_main_context_iteration (NULL, TRUE);
      g_assert_cmpint (getrusage (RUSAGE_SELF, &after), ==, 0);
      cpu_us = (after.ru_utime.tv_sec - before.ru_utime.tv_sec) * G_USEC_PER_SEC
               + (after.ru_utime.tv_usec - before.ru_utime.tv_usec)
               + (after.ru_stime.tv_sec - before.ru_stime.tv_sec) * G_USEC_PER_SEC
               + (after.ru_stime.tv_usec - before.ru_stime.tv_usec);
      g_test_message ("%u held requests: %" G_GINT64_FORMAT " us of CPU in 300 ms", n, cpu_us);
      g_assert_cmpint (cpu_us, <, 100000);
      /* each held request is its connection (one descriptor) and its
       * buffers: bounded, nothing per second of waiting */
      g_test_message ("%u held requests: %u more descriptors, %" G_GSIZE_FORMAT " KiB more RSS", n,
                      count_fds () - fds_before, vm_rss_kib () - MIN (rss_before, vm_rss_kib ()));
      g_assert_cmpuint (count_fds (), <=, fds_before + n + 64);
      g_assert_cmpuint (vm_rss_kib (), <, rss_before + 64 * 1024);
    }
  sbx_decision_request_allow_once (asker.asked->pdata[0]);
  g_assert_cmpint (finish (process), ==, 0);
  g_assert_cmpuint (asker.asked->len, ==, 1);
  g_clear_object (&process);
  fx_clear (&fx);
  g_assert_cmpint (setrlimit (RLIMIT_NOFILE, &saved_limit), ==, 0);
  g_ptr_array_unref (asker.asked);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/ask/network/once", test_once);
  g_test_add_func ("/ask/network/for-run", test_for_run);
  g_test_add_func ("/ask/network/refusals", test_refusals);
  g_test_add_func ("/ask/network/deny-profile", test_deny_profile);
  g_test_add_func ("/ask/network/no-widening", test_no_widening);
  g_test_add_func ("/ask/network/run-ends", test_run_ends);
  g_test_add_func ("/ask/network/run-func", test_run_func);
  g_test_add_data_func ("/ask/network/merged", GUINT_TO_POINTER (20), test_merged);
  g_test_add_data_func ("/ask/network/thousand-held", GUINT_TO_POINTER (1000), test_merged);
  return g_test_run ();
}
