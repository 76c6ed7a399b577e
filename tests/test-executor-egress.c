/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Executor sets with an egress route, end to end: the library, the Linux
 * backend and plugins/egress-http as built, against servers on this host's
 * loopback only (and tinyproxy on loopback as the organisation's upstream).
 *
 * What it shows:
 *  - a network.proxy-target.v1 grant for tcp:127.0.0.1:PORT lets curl,
 *    through the proxy variables, reach exactly that server from inside
 *    linux-userns; another port is refused (403), the run's result carries
 *    the denial and the reporter gets a network-denied event; a connection
 *    that ignores the proxy (curl --noproxy) reaches nothing;
 *  - each run is its own execution in its own network namespace: a run
 *    holding another run's proxy URL (credential included) is refused (407)
 *    by its own sandbox's listener, and cannot reach the other's targets;
 *  - Network=Allow with an upstream route: every plain run reaches every
 *    target through tinyproxy, whose credentials never reach the sandbox;
 *  - Network=Allow with a direct route refuses names and literals in
 *    non-public classes that no approval names;
 *  - linux-landlock (no network namespace) closes the network and reports
 *    that target-network does not hold, so proxy-target grants fail closed.
 * Every denial has its positive control: the same server reached without
 * the sandbox, or with the approval.
 */
#include <sbx/sbx.h>

#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <glib/gstdio.h>

#include "executor-test-util.h"
#include "executor-test-util.h"
#include "egress-test-util.h"

typedef struct
{
  EtuTree         tree;
  TestServer     *http;      /* approved */
  TestServer     *other;     /* never approved */
  char           *events;    /* the jsonl reporter's file */
  SbxExecutorSet *set;
  SbxExecutor    *executor;
} Fx;

static SbxRegistry *
egress_registry (void)
{
  g_autofree char *relay = g_build_filename (g_getenv ("SBX_TEST_MOCK_PLUGIN_DIR"), "egress-relay", NULL);
  const char *dirs[] = { g_getenv ("SBX_TEST_LINUX_PLUGIN_DIR"), g_getenv ("SBX_TEST_EGRESS_HTTP_PLUGIN_DIR"),
                         g_getenv ("SBX_TEST_JSONL_PLUGIN_DIR"), relay, NULL };
  g_autoptr(GError) error = NULL;
  SbxRegistry *registry;

  g_assert_nonnull (dirs[0]);
  g_assert_nonnull (dirs[1]);
  g_assert_nonnull (dirs[2]);
  g_assert_nonnull (g_getenv ("SBX_TEST_MOCK_PLUGIN_DIR"));
  registry = sbx_registry_new_for_directories (dirs, &error);
  g_assert_no_error (error);
  return registry;
}

static gboolean
have_curl (void)
{
  g_autofree char *path = g_find_program_in_path ("curl");

  return path != NULL;
}

/* Sets up a set for @network with @route on @backend.  FALSE (skipped)
 * when the backend cannot run here. */
static void fx_clear (Fx *fx);

static gboolean
fx_init_with (Fx             *fx,
              const char     *backend,
              SbxAccess       network,
              SbxEgressRoute *route,
              const char     *extension)
{
  g_autoptr(SbxRegistry) registry = egress_registry ();
  g_autoptr(SbxProfileConfig) config = sbx_profile_config_new ();
  g_autoptr(SbxProfile) profile = NULL;
  g_autoptr(SbxExecutorSetOptions) options = NULL;
  g_autoptr(GError) error = NULL;

  memset (fx, 0, sizeof *fx);
  if (!have_curl ())
    {
      g_test_skip ("curl is not installed (scripts/setup.sh installs it)");
      return FALSE;
    }
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
  sbx_executor_set_options_set_backend (options, backend);
  sbx_executor_set_options_set_egress_route (options, route);
  sbx_executor_set_options_set_egress_extension (options, extension);
  sbx_executor_set_options_add_reporter (options, "jsonl", fx->events);
  fx->set = sbx_executor_set_new (profile, options, &error);
  if (fx->set == NULL && g_error_matches (error, SBX_EXECUTOR_SET_ERROR,
                                          SBX_EXECUTOR_SET_ERROR_BACKEND_UNAVAILABLE))
    {
      g_test_skip_printf ("%s is unavailable here: %s", backend, error->message);
      fx_clear (fx);
      return FALSE;
    }
  g_assert_no_error (error);
  fx->executor = sbx_executor_set_for_key (fx->set, "k", &error);
  g_assert_no_error (error);
  return TRUE;
}

static gboolean
fx_init (Fx             *fx,
         const char     *backend,
         SbxAccess       network,
         SbxEgressRoute *route)
{
  return fx_init_with (fx, backend, network, route, NULL);
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
target_of (TestServer *s)
{
  return g_strdup_printf ("tcp:127.0.0.1:%u", test_server_get_port (s));
}

static char *
url_of (TestServer *s,
        const char *path)
{
  return g_strdup_printf ("http://127.0.0.1:%u/%s", test_server_get_port (s), path);
}

static char *
output_of (SbxRunResult *result)
{
  GBytes *bytes = sbx_run_result_get_output (result);
  gsize len;
  const char *data = g_bytes_get_data (bytes, &len);

  return g_strndup (data != NULL ? data : "", len);
}

/* Runs @command with a proxy-target grant for each of @targets, as
 * @execution_id. */
static SbxRunResult *
run_with_targets (Fx                *fx,
                  const char        *execution_id,
                  const char        *command,
                  const char *const *targets,
                  GError           **error)
{
  g_autoptr(GPtrArray) grants = g_ptr_array_new_with_free_func (g_free);

  for (gsize i = 0; targets != NULL && targets[i] != NULL; i++)
    {
      g_autoptr(GError) local = NULL;
      g_autofree char *bound = sbx_grant_command_for_argv (SBX_SH_ARGV (command));
      char *token = sbx_executor_issue_grant (fx->executor, execution_id, bound, fx->tree.ws,
                                              SBX_GRANT_CLASS_NETWORK_PROXY_TARGET, targets[i], NULL, &local);

      g_assert_no_error (local);
      g_ptr_array_add (grants, token);
    }
  g_ptr_array_add (grants, NULL);
  return etu_run_with_grants (fx->executor, fx->tree.ws, SBX_SH_ARGV (command), execution_id,
                              (const char *const *) grants->pdata, NULL, NULL, error);
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
test_gated_proxy_target (void)
{
  g_autoptr(SbxEgressRoute) route = sbx_egress_route_new_direct ();
  Fx fx;
  g_autofree char *target = NULL;
  g_autofree char *url = NULL;
  g_autofree char *other_url = NULL;
  g_autofree char *command = NULL;
  g_autofree char *out = NULL;
  g_autofree char *outside = NULL;
  g_autoptr(SbxRunResult) result = NULL;
  g_autoptr(GError) error = NULL;
  const char *targets[2] = { NULL, NULL };
  SbxGuarantees bits;

  if (!fx_init (&fx, "linux-userns", SBX_ACCESS_GATED, route))
    return;
  target = target_of (fx.http);
  url = url_of (fx.http, "approved");
  other_url = url_of (fx.other, "unapproved");
  targets[0] = target;

  bits = sbx_executor_get_guarantees (fx.executor);
  g_assert_true (bits & SBX_GUARANTEE_TARGET_NETWORK);
  g_assert_true (bits & SBX_GUARANTEE_ADDRESS_NETWORK);   /* direct route */
  g_assert_true (bits & SBX_GUARANTEE_NETWORK_BOUNDARY);

  /* positive control: both servers answer without the sandbox */
  command = g_strdup_printf ("curl -sf --noproxy '*' %s && curl -sf --noproxy '*' %s", url, other_url);
  g_assert_cmpint (etu_run_outside (command, &outside), ==, 0);
  g_assert_nonnull (strstr (outside, "GET /approved"));
  g_assert_nonnull (strstr (outside, "GET /unapproved"));
  g_clear_pointer (&command, g_free);

  /* the approved target, through HTTP_PROXY */
  command = g_strdup_printf ("curl -sf %s", url);
  result = run_with_targets (&fx, "exec-approved", command, targets, &error);
  g_assert_no_error (error);
  out = output_of (result);
  g_test_message ("approved: %s", out);
  g_assert_cmpint (sbx_run_result_get_exit_status (result), ==, 0);
  g_assert_nonnull (strstr (out, "GET /approved"));
  g_assert_null (sbx_run_result_get_denied_target (result));
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&result, sbx_run_result_unref);
  g_clear_pointer (&command, g_free);

  /* the child's proxy variables: this execution's URL on the sandbox's own
   * loopback, NO_PROXY empty */
  result = run_with_targets (&fx, "exec-env", "env | sort", targets, &error);
  g_assert_no_error (error);
  out = output_of (result);
  g_assert_nonnull (strstr (out, "HTTP_PROXY=http://exec-env:"));
  g_assert_nonnull (strstr (out, "@127.0.0.1:3128\n"));
  g_assert_nonnull (strstr (out, "HTTPS_PROXY=http://exec-env:"));
  g_assert_nonnull (strstr (out, "ALL_PROXY=http://exec-env:"));
  g_assert_nonnull (strstr (out, "http_proxy=http://exec-env:"));
  g_assert_nonnull (strstr (out, "https_proxy=http://exec-env:"));
  g_assert_nonnull (strstr (out, "all_proxy=http://exec-env:"));
  g_assert_nonnull (strstr (out, "\nNO_PROXY=\n"));
  g_assert_nonnull (strstr (out, "\nno_proxy=\n"));
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&result, sbx_run_result_unref);

  /* another port: 403, and the first denial is the run's */
  command = g_strdup_printf ("curl -sf %s; echo rc=$?", other_url);
  result = run_with_targets (&fx, "exec-other", command, targets, &error);
  g_assert_no_error (error);
  out = output_of (result);
  g_test_message ("other: %s", out);
  g_assert_nonnull (strstr (out, "rc=22"));   /* curl -f: HTTP error (403) */
  g_assert_null (strstr (out, "GET /unapproved"));
  {
    g_autofree char *denied = target_of (fx.other);
    g_autofree char *events = NULL;

    g_assert_cmpstr (sbx_run_result_get_denied_target (result), ==, denied);
    g_assert_nonnull (strstr (sbx_run_result_get_denial_reason (result), "not approved"));
    events = read_events (&fx);
    g_assert_nonnull (strstr (events, "\"event\":\"network-denied\""));
    g_assert_nonnull (strstr (events, denied));
  }
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&result, sbx_run_result_unref);
  g_clear_pointer (&command, g_free);

  /* a client that ignores the proxy variables reaches the approved literal
   * through its forwarder in the sandbox (tests/egress-http/
   * test-egress-forward.c), and nothing else: no route out of the namespace */
  command = g_strdup_printf ("curl -sf --noproxy '*' --connect-timeout 5 %s; echo rc=$?; "
                             "curl -sf --noproxy '*' --connect-timeout 5 %s; echo other-rc=$?", url, other_url);
  result = run_with_targets (&fx, "exec-direct", command, targets, &error);
  g_assert_no_error (error);
  out = output_of (result);
  g_test_message ("direct: %s", out);
  g_assert_nonnull (strstr (out, "GET /approved"));
  g_assert_nonnull (strstr (out, "rc=0"));
  g_assert_nonnull (strstr (out, "other-rc=7"));   /* could not connect */
  g_assert_null (strstr (out, "GET /unapproved"));
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&result, sbx_run_result_unref);
  g_clear_pointer (&command, g_free);

  /* a plain run (no grant) of the Gated profile: no proxy variables and no
   * listener */
  command = g_strdup_printf ("env | grep -ci _proxy; curl -sf -x http://127.0.0.1:3128 --connect-timeout 5 %s; echo rc=$?",
                             url);
  result = sbx_executor_run (fx.executor, fx.tree.ws, SBX_SH_ARGV (command), NULL, NULL, &error);
  g_assert_no_error (error);
  out = output_of (result);
  g_test_message ("plain: %s", out);
  g_assert_true (g_str_has_prefix (out, "0\n"));
  g_assert_nonnull (strstr (out, "rc=7"));
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&result, sbx_run_result_unref);

  fx_clear (&fx);
}

/* Two runs of one executor at once: what one was approved for, the other
 * cannot reach, not even with the other's proxy URL and credential. */
/* A spawned process (sbx_executor_spawn) gets the same route as a run: its
 * grants authorize its targets, the listener in its namespace is served for
 * its execution, another port is refused and reported. */
static void
test_spawn_proxy_target (void)
{
  g_autoptr(SbxEgressRoute) route = sbx_egress_route_new_direct ();
  Fx fx;
  g_autofree char *target = NULL;
  g_autofree char *url = NULL;
  g_autofree char *other_url = NULL;
  g_autofree char *command = NULL;
  g_autofree char *bound = NULL;
  g_autofree char *token = NULL;
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  g_autofree char *outside = NULL;
  g_autofree char *events = NULL;
  g_autoptr(SbxRunOptions) options = sbx_run_options_new ();
  g_autoptr(SbxProcess) process = NULL;
  g_autoptr(GError) error = NULL;
  const char *grants[2] = { NULL, NULL };
  const char *argv[4] = { "/bin/sh", "-c", NULL, NULL };

  if (!fx_init (&fx, "linux-userns", SBX_ACCESS_GATED, route))
    return;
  target = target_of (fx.http);
  url = url_of (fx.http, "spawned");
  other_url = url_of (fx.other, "unapproved");
  command = g_strdup_printf ("curl -sf %s; curl -sf %s; echo rc=$?", url, other_url);

  /* positive control: both servers answer without the sandbox */
  {
    g_autofree char *control = g_strdup_printf ("curl -sf --noproxy '*' %s && curl -sf --noproxy '*' %s",
                                                url, other_url);

    g_assert_cmpint (etu_run_outside (control, &outside), ==, 0);
    g_assert_nonnull (strstr (outside, "GET /spawned"));
    g_assert_nonnull (strstr (outside, "GET /unapproved"));
  }

  argv[2] = command;
  bound = sbx_grant_command_for_argv (argv);
  token = sbx_executor_issue_grant (fx.executor, "exec-spawn", bound, fx.tree.ws,
                                    SBX_GRANT_CLASS_NETWORK_PROXY_TARGET, target, NULL, &error);
  g_assert_no_error (error);
  grants[0] = token;
  sbx_run_options_set_grants (options, grants);
  sbx_run_options_set_execution_id (options, "exec-spawn");
  sbx_run_options_set_stderr (options, SBX_STDIO_MERGE);
  process = sbx_executor_spawn (fx.executor, fx.tree.ws, argv, options, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (sbx_process_communicate_utf8 (process, NULL, NULL, &out, &err, &error));
  g_assert_no_error (error);
  g_test_message ("spawned: %s", out);
  g_assert_nonnull (strstr (out, "GET /spawned"));
  g_assert_null (strstr (out, "GET /unapproved"));
  g_assert_nonnull (strstr (out, "rc=22"));   /* curl -f: the proxy's 403 */
  g_assert_true (sbx_process_wait (process, NULL, &error));
  g_assert_no_error (error);
  g_clear_object (&process);

  /* the first denial reached the reporters */
  g_assert_true (g_file_get_contents (fx.events, &events, NULL, NULL));
  g_assert_nonnull (strstr (events, "network-denied"));
  fx_clear (&fx);
}

static void
test_concurrent_isolation (void)
{
  g_autoptr(SbxEgressRoute) route = sbx_egress_route_new_direct ();
  Fx fx;
  g_autofree char *ta = NULL, *tb = NULL, *ua = NULL, *ub = NULL;
  g_autofree char *cmd_a = NULL, *cmd_b = NULL;
  g_autofree char *url_file = NULL, *done_file = NULL;
  g_autoptr(GPtrArray) grants_a = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GAsyncResult) async_a = NULL;
  g_autoptr(SbxRunResult) ra = NULL, rb = NULL;
  g_autofree char *out_a = NULL, *out_b = NULL;
  g_autoptr(GError) error = NULL;
  const char *targets_b[2] = { NULL, NULL };

  if (!fx_init (&fx, "linux-userns", SBX_ACCESS_GATED, route))
    return;
  ta = target_of (fx.http);
  tb = target_of (fx.other);
  ua = url_of (fx.http, "a");
  ub = url_of (fx.other, "b");
  url_file = g_build_filename (fx.tree.ws, "a.url", NULL);
  done_file = g_build_filename (fx.tree.ws, "b.done", NULL);

  /* A: approved for the first server; publishes its proxy URL and waits
   * until B has tried it */
  cmd_a = g_strdup_printf ("curl -sf %s >/dev/null && echo a-own=ok; printf %%s \"$HTTP_PROXY\" > a.url.tmp && "
                           "mv a.url.tmp a.url; i=0; while [ ! -e b.done ] && [ $i -lt 200 ]; do sleep 0.05; "
                           "i=$((i+1)); done; curl -sf %s; echo a-other=$?",
                           ua, ub);
  {
    g_autofree char *bound = sbx_grant_command_for_argv (SBX_SH_ARGV (cmd_a));
    char *token = sbx_executor_issue_grant (fx.executor, "exec-a", bound, fx.tree.ws,
                                            SBX_GRANT_CLASS_NETWORK_PROXY_TARGET, ta, NULL, &error);

    g_assert_no_error (error);
    g_ptr_array_add (grants_a, token);
    g_ptr_array_add (grants_a, NULL);
  }
  etu_run_with_grants_async (fx.executor, fx.tree.ws, SBX_SH_ARGV (cmd_a), "exec-a",
                             (const char *const *) grants_a->pdata, NULL, NULL,
                             etu_store_result, &async_a);
  g_assert_true (etu_wait_for_file (url_file, 20000));

  /* B: approved for the second server only; tries the first with its own
   * credential (403) and with A's (407 at B's own listener), then its own */
  cmd_b = g_strdup_printf ("curl -s -o /dev/null -w 'b-first=%%{http_code}\\n' %s; "
                           "curl -s -o /dev/null -w 'b-stolen=%%{http_code}\\n' -x \"$(cat a.url)\" %s; "
                           "curl -sf %s >/dev/null && echo b-own=ok; touch b.done",
                           ua, ua, ub);
  targets_b[0] = tb;
  rb = run_with_targets (&fx, "exec-b", cmd_b, targets_b, &error);
  g_assert_no_error (error);
  out_b = output_of (rb);
  g_test_message ("B: %s", out_b);
  g_assert_nonnull (strstr (out_b, "b-first=403"));
  g_assert_nonnull (strstr (out_b, "b-stolen=407"));
  g_assert_nonnull (strstr (out_b, "b-own=ok"));

  ra = sbx_executor_run_finish (fx.executor, etu_wait_async (&async_a), &error);
  g_assert_no_error (error);
  out_a = output_of (ra);
  g_test_message ("A: %s", out_a);
  g_assert_nonnull (strstr (out_a, "a-own=ok"));
  g_assert_nonnull (strstr (out_a, "a-other=22"));
  g_assert_cmpstr (sbx_run_result_get_denied_target (ra), ==, tb);
  g_assert_cmpstr (sbx_run_result_get_denied_target (rb), ==, ta);

  fx_clear (&fx);
}

/* tinyproxy on loopback with Basic credentials, as the upstream route */
static void
die_with_parent (gpointer data)
{
  prctl (PR_SET_PDEATHSIG, SIGKILL);
}

static guint16
free_port (void)
{
  g_autoptr(GSocket) s = g_socket_new (G_SOCKET_FAMILY_IPV4, G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_TCP, NULL);
  g_autoptr(GInetAddress) lo = g_inet_address_new_loopback (G_SOCKET_FAMILY_IPV4);
  g_autoptr(GSocketAddress) addr = g_inet_socket_address_new (lo, 0);
  g_autoptr(GSocketAddress) bound = NULL;

  g_assert_true (g_socket_bind (s, addr, TRUE, NULL));
  bound = g_socket_get_local_address (s, NULL);
  return g_inet_socket_address_get_port (G_INET_SOCKET_ADDRESS (bound));
}

static void
test_allow_upstream_tinyproxy (void)
{
  g_autofree char *bin = g_find_program_in_path ("tinyproxy");
  g_autofree char *dir = NULL, *conf = NULL, *text = NULL, *port_url = NULL;
  g_autoptr(GSubprocess) tinyproxy = NULL;
  g_autoptr(SbxEgressRoute) route = NULL;
  g_autoptr(SbxRunResult) result = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *command = NULL, *out = NULL, *seen = NULL, *report = NULL;
  guint16 port;
  Fx fx;

  if (bin == NULL && g_file_test ("/usr/sbin/tinyproxy", G_FILE_TEST_IS_EXECUTABLE))
    bin = g_strdup ("/usr/sbin/tinyproxy");
  if (bin == NULL && g_file_test ("/usr/bin/tinyproxy", G_FILE_TEST_IS_EXECUTABLE))
    bin = g_strdup ("/usr/bin/tinyproxy");
  if (bin == NULL)
    {
      g_test_skip ("tinyproxy is not installed (scripts/setup.sh installs it)");
      return;
    }
  dir = g_dir_make_tmp ("sbx-tinyproxy-XXXXXX", &error);
  g_assert_no_error (error);
  port = free_port ();
  conf = g_build_filename (dir, "tinyproxy.conf", NULL);
  text = g_strdup_printf ("Port %u\nListen 127.0.0.1\nTimeout 30\nMaxClients 64\nLogLevel Error\n"
                          "BasicAuth orguser org_pa-ss.9\nAllow 127.0.0.1\nDisableViaHeader Yes\n", port);
  g_assert_true (g_file_set_contents (conf, text, -1, &error));
  {
    g_autoptr(GSubprocessLauncher) launcher =
      g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_SILENCE | G_SUBPROCESS_FLAGS_STDERR_SILENCE);
    const char *argv[] = { bin, "-d", "-c", conf, NULL };

    g_subprocess_launcher_set_child_setup (launcher, die_with_parent, NULL, NULL);
    tinyproxy = g_subprocess_launcher_spawnv (launcher, argv, &error);
    g_assert_no_error (error);
  }
  for (int i = 0; i < 400; i++)
    {
      g_autoptr(GSocketClient) client = g_socket_client_new ();
      g_autoptr(GSocketConnection) c = g_socket_client_connect_to_host (client, "127.0.0.1", port, NULL, NULL);

      if (c != NULL)
        break;
      g_usleep (25000);
    }
  port_url = g_strdup_printf ("http://orguser:org_pa-ss.9@127.0.0.1:%u", port);
  route = sbx_egress_route_new_upstream (port_url, FALSE, &error);
  g_assert_no_error (error);

  if (fx_init (&fx, "linux-userns", SBX_ACCESS_ALLOW, route))
    {
      /* A name: the upstream resolves it (an IP literal in a non-public
       * class would still be refused here unless an approval names it). */
      g_autofree char *url = g_strdup_printf ("http://localhost:%u/via-upstream", test_server_get_port (fx.http));

      /* positive control: tinyproxy serves the origin for its credentials */
      {
        g_autofree char *control = g_strdup_printf ("curl -sS -x %s %s", port_url, url);
        g_autofree char *control_out = NULL;

        g_assert_cmpint (etu_run_outside (control, &control_out), ==, 0);
        g_assert_nonnull (strstr (control_out, "GET /via-upstream"));
      }
      /* address-network does not hold: the upstream resolves names */
      g_assert_true (sbx_executor_get_guarantees (fx.executor) & SBX_GUARANTEE_TARGET_NETWORK);
      g_assert_false (sbx_executor_get_guarantees (fx.executor) & SBX_GUARANTEE_ADDRESS_NETWORK);
      report = sbx_compile_report_to_json (sbx_executor_get_report (fx.executor));
      g_assert_null (strstr (report, "org_pa-ss"));

      /* a plain run reaches any target through the route, and nothing in
       * the sandbox shows the upstream's credentials */
      command = g_strdup_printf ("curl -sSf %s && env && cat /proc/self/environ | tr '\\0' '\\n'", url);
      result = sbx_executor_run (fx.executor, fx.tree.ws, SBX_SH_ARGV (command), NULL, NULL, &error);
      g_assert_no_error (error);
      out = output_of (result);
      g_test_message ("%s", out);
      g_assert_cmpint (sbx_run_result_get_exit_status (result), ==, 0);
      g_assert_nonnull (strstr (out, "GET /via-upstream"));
      g_assert_nonnull (strstr (out, "HTTP_PROXY=http://route-"));
      g_assert_null (strstr (out, "org_pa-ss"));
      g_assert_null (strstr (out, "orguser"));
      g_assert_null (strstr (out, "b3JndXNlcjpvcmdfcGEtc3MuOQ"));   /* base64 "orguser:org_pa-ss.9" */
      seen = test_server_last_head (fx.http);
      g_assert_null (strstr (seen, "Proxy-Authorization"));
      fx_clear (&fx);
    }
  g_subprocess_force_exit (tinyproxy);
  g_subprocess_wait (tinyproxy, NULL, NULL);
  g_unlink (conf);
  g_rmdir (dir);
}

/* Network=Allow, direct route: every target may be asked for, but the
 * address rules still refuse what no approval names. */
static void
test_allow_direct_address_rules (void)
{
  g_autoptr(SbxEgressRoute) route = sbx_egress_route_new_direct ();
  g_autoptr(SbxRunResult) result = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *command = NULL, *out = NULL, *outside = NULL, *url = NULL, *target = NULL;
  Fx fx;

  if (!fx_init (&fx, "linux-userns", SBX_ACCESS_ALLOW, route))
    return;
  url = url_of (fx.http, "literal");
  target = target_of (fx.http);
  command = g_strdup_printf ("curl -s -o /dev/null -w '%%{http_code}\\n' --noproxy '*' %s", url);
  g_assert_cmpint (etu_run_outside (command, &outside), ==, 0);
  g_assert_cmpstr (outside, ==, "200\n");
  g_clear_pointer (&command, g_free);
  command = g_strdup_printf ("curl -s -o /dev/null -w '%%{http_code}\\n' %s; "
                             "curl -s -o /dev/null -w '%%{http_code}\\n' http://localhost:%u/name; "
                             "curl -s -o /dev/null -w '%%{http_code}\\n' http://169.254.169.254/latest",
                             url, test_server_get_port (fx.http));
  result = sbx_executor_run (fx.executor, fx.tree.ws, SBX_SH_ARGV (command), NULL, NULL, &error);
  g_assert_no_error (error);
  out = output_of (result);
  g_test_message ("%s", out);
  g_assert_cmpstr (out, ==, "502\n502\n502\n");
  g_assert_cmpuint (test_server_get_n_accepted (fx.http), ==, 1);   /* only the control */
  g_assert_cmpstr (sbx_run_result_get_denied_target (result), ==, target);
  g_assert_nonnull (strstr (sbx_run_result_get_denial_reason (result), "non-public"));
  g_clear_pointer (&result, sbx_run_result_unref);
  g_clear_pointer (&out, g_free);

  /* a run with grants (none needed here) of an Allow profile is
   * authorized for every target too, as a plain run is */
  {
    const char *none[] = { NULL };

    result = etu_run_with_grants (fx.executor, fx.tree.ws, SBX_SH_ARGV ("printf %s \"$HTTP_PROXY\""),
                                  "exec-q8", none, NULL, NULL, &error);
    g_assert_no_error (error);
    out = output_of (result);
    g_assert_true (g_str_has_prefix (out, "http://route-"));
    g_assert_true (g_str_has_suffix (out, "@127.0.0.1:3128"));
  }
  fx_clear (&fx);
}

/* Runs through the route leave no descriptor behind: the listener of each
 * run's namespace is closed with the run, the route's with the set. */
static void
test_no_fd_leak (void)
{
  g_autoptr(SbxEgressRoute) route = sbx_egress_route_new_direct ();
  g_autofree char *before_list = NULL, *after_list = NULL;
  guint before, after;
  Fx fx;

  /* warm up what GLib and the plugins open once per process */
  if (!fx_init (&fx, "linux-userns", SBX_ACCESS_ALLOW, route))
    return;
  {
    g_autoptr(SbxRunResult) r = sbx_executor_run (fx.executor, fx.tree.ws,
                                                  SBX_SH_ARGV ("curl -s http://localhost:1/"),
                                                  NULL, NULL, NULL);

    g_assert_nonnull (r);
  }
  fx_clear (&fx);
  before = etu_count_fds ();
  before_list = etu_list_fds ();
  g_assert_true (fx_init (&fx, "linux-userns", SBX_ACCESS_ALLOW, route));
  for (int i = 0; i < 5; i++)
    {
      g_autofree char *command = g_strdup_printf ("curl -s http://localhost:%u/ >/dev/null",
                                                  test_server_get_port (fx.http));
      g_autoptr(SbxRunResult) r = sbx_executor_run (fx.executor, fx.tree.ws, SBX_SH_ARGV (command), NULL,
                                                    NULL, NULL);

      g_assert_nonnull (r);
    }
  fx_clear (&fx);
  after = etu_count_fds ();
  after_list = etu_list_fds ();
  if (after != before)
    g_test_message ("before: %s\nafter: %s", before_list, after_list);
  g_assert_cmpuint (after, ==, before);
}

/* Rung 2 has no network namespace: the network is closed, the report says
 * why, and proxy-target grants fail closed. */
static void
test_rung2_fails_closed (void)
{
  g_autoptr(SbxEgressRoute) route = sbx_egress_route_new_direct ();
  g_autoptr(SbxRunResult) result = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *report = NULL, *target = NULL, *command = NULL, *out = NULL;
  char *token;
  Fx fx;

  if (!fx_init (&fx, "linux-landlock", SBX_ACCESS_GATED, route))
    return;
  g_assert_false (sbx_executor_get_guarantees (fx.executor) & SBX_GUARANTEE_TARGET_NETWORK);
  g_assert_false (sbx_executor_get_guarantees (fx.executor) & SBX_GUARANTEE_ADDRESS_NETWORK);
  g_assert_true (sbx_executor_get_guarantees (fx.executor) & SBX_GUARANTEE_NETWORK_BOUNDARY);
  report = sbx_compile_report_to_json (sbx_executor_get_report (fx.executor));
  g_assert_nonnull (strstr (report, "private network namespace"));
  target = target_of (fx.http);
  command = g_strdup_printf ("curl -sf %s", target);
  token = sbx_executor_issue_grant (fx.executor, "exec", command, fx.tree.ws,
                                    SBX_GRANT_CLASS_NETWORK_PROXY_TARGET, target, NULL, &error);
  g_assert_null (token);
  g_assert_error (error, SBX_GRANT_ERROR, SBX_GRANT_ERROR_GUARANTEE_MISMATCH);
  g_clear_error (&error);
  g_clear_pointer (&command, g_free);
  fx_clear (&fx);

  /* Network=Allow with the route: closed too (nothing reaches the server) */
  if (!fx_init (&fx, "linux-landlock", SBX_ACCESS_ALLOW, route))
    return;
  command = g_strdup_printf ("curl -sf --connect-timeout 5 http://127.0.0.1:%u/x; echo rc=$?",
                             test_server_get_port (fx.http));
  result = sbx_executor_run (fx.executor, fx.tree.ws, SBX_SH_ARGV (command), NULL, NULL, &error);
  g_assert_no_error (error);
  out = output_of (result);
  g_test_message ("%s", out);
  g_assert_null (strstr (out, "rc=0"));
  g_assert_cmpuint (test_server_get_n_accepted (fx.http), ==, 0);
  fx_clear (&fx);
}

/* Without a route, proxy-target grants are unsupported (upstream step 8);
 * an Unconfined profile cannot take a route. */
static void
test_no_route (void)
{
  const char *dirs[] = { g_getenv ("SBX_TEST_LINUX_PLUGIN_DIR"), g_getenv ("SBX_TEST_EGRESS_HTTP_PLUGIN_DIR"),
                         etu_plugin_dir ("unconfined"), NULL };
  g_autoptr(SbxRegistry) registry = sbx_registry_new_for_directories (dirs, NULL);
  g_autoptr(SbxEgressRoute) route = sbx_egress_route_new_direct ();
  g_autoptr(SbxExecutorSetOptions) options = NULL;
  g_autoptr(SbxProfile) unconfined = NULL;
  g_autoptr(SbxExecutorSet) set = NULL;
  g_autoptr(GError) error = NULL;
  EtuTree tree;

  etu_tree_init (&tree);
  unconfined = etu_profile_unconfined (tree.ws, SBX_ACCESS_ALLOW);
  options = etu_options (tree.scratch, 1, registry);
  sbx_executor_set_options_set_egress_route (options, route);
  set = sbx_executor_set_new (unconfined, options, &error);
  g_assert_null (set);
  g_assert_error (error, SBX_EXECUTOR_SET_ERROR, SBX_EXECUTOR_SET_ERROR_INVALID_OPTIONS);
  g_assert_nonnull (strstr (error->message, "Unconfined"));
  g_clear_error (&error);
  /* an egress extension that is not loaded */
  sbx_executor_set_options_set_egress_extension (options, "no-such-egress");
  {
    g_autoptr(SbxProfile) sandboxed = etu_profile_sandboxed (tree.ws);

    set = sbx_executor_set_new (sandboxed, options, &error);
    g_assert_null (set);
    g_assert_error (error, SBX_EXECUTOR_SET_ERROR, SBX_EXECUTOR_SET_ERROR_INVALID_OPTIONS);
    g_assert_nonnull (strstr (error->message, "no-such-egress"));
  }
  etu_tree_clear (&tree);
}

/* A vendor's egress plugin through the seam (tests/plugins/egress-relay):
 * the host starts its route, checks its fingerprint, authorizes the run,
 * hands it the listener from the run's namespace and revokes the run at
 * its end (the plugin's denial lands in the result). */
static void
test_vendor_plugin_seam (void)
{
  g_autoptr(SbxEgressRoute) route = sbx_egress_route_new_direct ();
  g_autoptr(SbxRunResult) result = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *out = NULL;
  Fx fx;

  if (!fx_init_with (&fx, "linux-userns", SBX_ACCESS_ALLOW, route, "mock-egress-relay"))
    return;
  result = sbx_executor_run (fx.executor, fx.tree.ws, SBX_SH_ARGV ("curl -sf http://example.invalid/ && curl -sf http://example.invalid/"),
                             NULL, NULL, &error);
  g_assert_no_error (error);
  out = output_of (result);
  g_test_message ("%s", out);
  g_assert_nonnull (strstr (out, "mock-egress-relay route-"));
  g_assert_nonnull (strstr (out, "targets=all served=1\n"));
  g_assert_nonnull (strstr (out, "targets=all served=2\n"));
  g_assert_cmpstr (sbx_run_result_get_denied_target (result), ==, "tcp:mock.invalid:1");
  g_assert_true (g_str_has_prefix (sbx_run_result_get_denial_reason (result), "mock denial of route-"));
  fx_clear (&fx);

  /* a plugin that starts another route than the one given is refused */
  {
    g_autoptr(SbxEgressRoute) upstream = sbx_egress_route_new_upstream ("http://proxy.invalid:8080", FALSE, &error);
    g_autoptr(SbxRegistry) registry = egress_registry ();
    g_autoptr(SbxExecutorSetOptions) options = NULL;
    g_autoptr(SbxProfile) profile = NULL;
    g_autoptr(SbxExecutorSet) set = NULL;
    EtuTree tree;

    g_assert_no_error (error);
    etu_tree_init (&tree);
    profile = etu_profile_sandboxed (tree.ws);
    options = etu_options (tree.scratch, 1, registry);
    sbx_executor_set_options_set_egress_route (options, upstream);
    sbx_executor_set_options_set_egress_extension (options, "mock-egress-relay");
    set = sbx_executor_set_new (profile, options, &error);
    g_assert_null (set);
    g_assert_error (error, SBX_EXECUTOR_SET_ERROR, SBX_EXECUTOR_SET_ERROR_INVALID_OPTIONS);
    g_assert_nonnull (strstr (error->message, "not-the-route-you-gave-me"));
    etu_tree_clear (&tree);
  }
}

/* A backend that leaves the network open next to the proxy cannot take a
 * route: with the route, network-boundary is required (mock-ok told to
 * claim everything but it); without, the same set is created (control). */
static void
test_route_needs_network_boundary (void)
{
  g_autoptr(SbxEgressRoute) route = sbx_egress_route_new_direct ();
  g_autoptr(SbxRegistry) registry = NULL;
  g_autoptr(SbxProfileConfig) config = sbx_profile_config_new ();
  g_autoptr(SbxProfile) profile = NULL;
  g_autoptr(GError) error = NULL;
  const char *dirs[] = { etu_plugin_dir ("ok"), g_getenv ("SBX_TEST_EGRESS_HTTP_PLUGIN_DIR"), NULL };
  EtuTree tree;

  etu_tree_init (&tree);
  g_setenv ("SBX_MOCK_OK_GUARANTEES", "0xef", TRUE);   /* all but network-boundary */
  registry = sbx_registry_new_for_directories (dirs, &error);
  g_unsetenv ("SBX_MOCK_OK_GUARANTEES");
  g_assert_no_error (error);
  sbx_profile_config_set_workspace (config, tree.ws, SBX_ACCESS_ALLOW, SBX_ACCESS_ALLOW);
  sbx_profile_config_set_host (config, SBX_ACCESS_ALLOW, SBX_ACCESS_ALLOW);
  sbx_profile_config_set_network (config, SBX_ACCESS_ALLOW);
  sbx_profile_config_set_command (config, SBX_ACCESS_ALLOW);
  profile = sbx_profile_new (config, &error);
  g_assert_no_error (error);
  for (int with_route = 0; with_route < 2; with_route++)
    {
      g_autoptr(SbxExecutorSetOptions) options = etu_options (tree.scratch, 1, registry);
      g_autoptr(SbxExecutorSet) set = NULL;
      g_autoptr(SbxExecutor) executor = NULL;
      g_autoptr(GError) local = NULL;

      sbx_executor_set_options_set_backend (options, "mock-ok");
      if (with_route)
        sbx_executor_set_options_set_egress_route (options, route);
      set = sbx_executor_set_new (profile, options, &local);
      g_assert_no_error (local);
      executor = sbx_executor_set_for_key (set, "k", &local);
      if (with_route)
        {
          g_assert_null (executor);
          g_assert_error (local, SBX_EXECUTOR_SET_ERROR, SBX_EXECUTOR_SET_ERROR_MISSING_GUARANTEES);
          g_assert_nonnull (strstr (local->message, "network-boundary"));
        }
      else
        {
          g_assert_no_error (local);
          g_assert_nonnull (executor);
        }
      g_assert_true (sbx_executor_set_close (set, NULL, NULL));
    }
  etu_tree_clear (&tree);
}

/* sbx run --allow-host, as built: the approved target answers, another is
 * refused and sbx says so on stderr, once, as the denial that names the
 * grant opening it (the route reports every refusal, so the first-denial
 * line would repeat it). */
static void
test_cli_allow_host (void)
{
  Fx fx;
  g_autoptr(SbxEgressRoute) route = sbx_egress_route_new_direct ();
  g_autofree char *host = NULL, *url = NULL, *other = NULL, *out = NULL, *err = NULL, *denied = NULL;
  g_autofree char *line = NULL;
  int status;

  /* the fixture only for the tree and the servers (and the skip when
   * linux-userns cannot run here) */
  if (!fx_init (&fx, "linux-userns", SBX_ACCESS_GATED, route))
    return;
  host = g_strdup_printf ("127.0.0.1:%u", test_server_get_port (fx.http));
  url = url_of (fx.http, "cli");
  other = url_of (fx.other, "cli-other");
  denied = target_of (fx.other);

  status = etu_run_sbx (&fx.tree, "linux-userns", &out, &err, "run", "--allow-host", host, "--", "curl", "-sf", url, NULL);
  g_test_message ("approved: %d %s %s", status, out, err);
  g_assert_cmpint (status, ==, 0);
  g_assert_nonnull (strstr (out, "GET /cli"));
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);

  status = etu_run_sbx (&fx.tree, "linux-userns", &out, &err, "run", "--allow-host", host, "--", "curl", "-sf", other, NULL);
  g_test_message ("other: %d %s %s", status, out, err);
  g_assert_cmpint (status, ==, 22);
  g_assert_null (strstr (out, "GET /cli-other"));
  line = g_strdup_printf ("sbx: denied connect %s (network is gated); --approve network.proxy-target.v1:%s "
                          "would open it\n", denied + strlen ("tcp:"), denied);
  g_assert_nonnull (strstr (err, line));
  g_assert_true (strstr (err, line) == g_strrstr (err, line));
  g_assert_null (strstr (err, "sbx: run: network target denied: "));
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);

  /* without --allow-host the default profile's network is denied: nothing */
  status = etu_run_sbx (&fx.tree, "linux-userns", &out, &err, "run", "--", "curl", "-sf", "--connect-timeout", "5", url, NULL);
  g_assert_cmpint (status, !=, 0);
  g_assert_null (strstr (out, "GET /cli"));
  fx_clear (&fx);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/executor-egress/gated/proxy-target", test_gated_proxy_target);
  g_test_add_func ("/executor-egress/gated/concurrent-isolation", test_concurrent_isolation);
  g_test_add_func ("/executor-egress/gated/spawn-proxy-target", test_spawn_proxy_target);
  g_test_add_func ("/executor-egress/allow/upstream-tinyproxy", test_allow_upstream_tinyproxy);
  g_test_add_func ("/executor-egress/allow/direct-address-rules", test_allow_direct_address_rules);
  g_test_add_func ("/executor-egress/rung2/fails-closed", test_rung2_fails_closed);
  g_test_add_func ("/executor-egress/no-fd-leak", test_no_fd_leak);
  g_test_add_func ("/executor-egress/route-needs-network-boundary", test_route_needs_network_boundary);
  g_test_add_func ("/executor-egress/no-route", test_no_route);
  g_test_add_func ("/executor-egress/cli/allow-host", test_cli_allow_host);
  g_test_add_func ("/executor-egress/vendor-plugin-seam", test_vendor_plugin_seam);
  return g_test_run ();
}
