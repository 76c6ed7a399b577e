/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Live approvals of names, end to end: the library, the Linux backend
 * (rung 1, linux-userns: the DNS stub lives in the sandbox's own network)
 * and plugins/egress-http as built.  A tool sends DNS queries (UDP and
 * TCP) to the sandbox's stub for names no grant approved; with
 * sbx_run_options_set_ask() the stub holds each and the run asks
 * (operation resolve, grant network.proxy-target.v1 "tcp:NAME:*").  Nothing
 * leaves this host: the stub never resolves a name upstream.  The refusal
 * (REFUSED) and the approval (an answer) are the same probe in the same
 * sandbox, each the other's control; without the sandbox there is no stub
 * to ask.
 *
 * What it shows:
 *  - allow once answers that query (A 127.84.0.1, TTL 0) and the next
 *    query for the name asks again; a direct connection to the answer is
 *    refused at once (no forwarder exists for a name approved live);
 *  - allow for the run answers later queries (UDP and TCP) without asking;
 *    another name is its own question (no widening);
 *  - deny and the timeout answer REFUSED, with the resolve denial;
 *  - the run ending while a query is held withdraws the question (no hang);
 *  - concurrent identical queries (two, and a flood of 64) are one
 *    question; a name spelling the metadata address still gets only the
 *    stub's own address;
 *  - a Deny network has no stub and asks nothing;
 *  - approvals are spent grants of the run ("approved while running").
 */
#include <sbx/sbx.h>

#include <string.h>
#include <glib/gstdio.h>

#include "executor-test-util.h"
#include "ask-test-util.h"
#include "sbx-decision-private.h"

/* Each argument "udp:NAME" or "tcp:NAME" is one query (type A) to the
 * stub, in turn; "-t N udp:NAME" sends N at once (threads); "connect:HOST"
 * connects to HOST:80.  Prints "NAME PROTO RCODE ADDRESS TTL" per query
 * ("-" for none) and "connect HOST OK|ERR errno". */
static const char probe[] =
  "import socket, struct, sys, threading\n"
  "def recvall(s, n):\n"
  "    b = b''\n"
  "    while len(b) < n:\n"
  "        c = s.recv(n - len(b))\n"
  "        if not c: raise OSError(0, 'eof')\n"
  "        b += c\n"
  "    return b\n"
  "def query(spec):\n"
  "    proto, name = spec.split(':', 1)\n"
  "    pkt = struct.pack('>HHHHHH', 0x1234, 0x0100, 1, 0, 0, 0)\n"
  "    pkt += b''.join(bytes([len(l)]) + l.encode() for l in name.split('.')) + b'\\0'\n"
  "    pkt += struct.pack('>HH', 1, 1)\n"
  "    try:\n"
  "        if proto == 'tcp':\n"
  "            s = socket.create_connection(('127.0.0.53', 53))\n"
  "            s.sendall(struct.pack('>H', len(pkt)) + pkt)\n"
  "            r = recvall(s, struct.unpack('>H', recvall(s, 2))[0])\n"
  "        else:\n"
  "            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
  "            s.connect(('127.0.0.53', 53))\n"
  "            s.send(pkt)\n"
  "            r = s.recv(512)\n"
  "    except OSError as e:\n"
  "        print(name, proto, 'ERR', e.errno, flush=True)\n"
  "        return\n"
  "    an = struct.unpack('>H', r[6:8])[0]\n"
  "    addr = socket.inet_ntoa(r[-4:]) if an else '-'\n"
  "    ttl = struct.unpack('>I', r[-10:-6])[0] if an else '-'\n"
  "    print(name, proto, r[3] & 0xf, addr, ttl, flush=True)\n"
  "a = sys.argv[1:]\n"
  "while a:\n"
  "    if a[0] == '-t':\n"
  "        ts = [threading.Thread(target=query, args=(a[2],)) for _ in range(int(a[1]))]\n"
  "        [t.start() for t in ts]\n"
  "        [t.join() for t in ts]\n"
  "        a = a[3:]\n"
  "    elif a[0].startswith('connect:'):\n"
  "        s = socket.socket()\n"
  "        try:\n"
  "            s.connect((a[0][8:], 80))\n"
  "            print('connect', a[0][8:], 'OK', flush=True)\n"
  "        except OSError as e:\n"
  "            print('connect', a[0][8:], 'ERR', e.errno, flush=True)\n"
  "        a = a[1:]\n"
  "    else:\n"
  "        query(a[0])\n"
  "        a = a[1:]\n"
  "print('END')\n";

typedef struct
{
  EtuTree         tree;
  char           *events;
  SbxExecutorSet *set;
  SbxExecutor    *executor;
} Fx;

static void
fx_clear (Fx *fx)
{
  if (fx->set != NULL)
    g_assert_true (sbx_executor_set_close (fx->set, NULL, NULL));
  g_clear_object (&fx->executor);
  g_clear_object (&fx->set);
  if (fx->events != NULL)
    g_unlink (fx->events);
  g_clear_pointer (&fx->events, g_free);
  if (fx->tree.tmp != NULL)
    etu_tree_clear (&fx->tree);
  memset (&fx->tree, 0, sizeof fx->tree);
}

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

  memset (fx, 0, sizeof *fx);
  registry = sbx_registry_new_for_directories (dirs, &error);
  g_assert_no_error (error);
  etu_tree_init (&fx->tree);
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

/* Runs the probe with @args, asking; its output and result. */
static char *
run_asking (Fx                *fx,
            const char *const *args,
            AskTester         *asker,
            GTimeSpan          timeout,
            SbxRunResult     **out_result)
{
  return ask_run_python (fx->executor, fx->tree.ws, probe, args, asker, timeout, out_result);
}

static guint
count_lines (const char *out,
             const char *line)
{
  g_autofree char *needle = g_strdup_printf ("%s\n", line);
  guint n = 0;

  for (const char *p = strstr (out, needle); p != NULL; p = strstr (p + 1, needle))
    if (p == out || p[-1] == '\n')
      n++;
  return n;
}

static char *
read_events (Fx *fx)
{
  char *text = NULL;

  if (!g_file_get_contents (fx->events, &text, NULL, NULL))
    return g_strdup ("");
  return text;
}

/* The resolve denial of @name in @result, or NULL. */
static SbxDenial *
denial_of (SbxRunResult *result,
           const char   *name)
{
  GPtrArray *denials = sbx_run_result_get_denials (result);

  for (guint i = 0; denials != NULL && i < denials->len; i++)
    if (sbx_denial_get_operation (denials->pdata[i]) == SBX_DENIAL_OPERATION_RESOLVE
        && g_strcmp0 (sbx_denial_get_target (denials->pdata[i]), name) == 0)
      return denials->pdata[i];
  return NULL;
}

/* ------------------------------------------------------------------------- */

/* Allow once: this query; the next asks again (denied: REFUSED, with its
 * denial); the answer's address reaches nothing directly. */
static void
test_once (void)
{
  Fx fx;
  AskTester asker = ask_tester_new (ASK_ONCE_THEN_DENY);
  g_autoptr(SbxRunResult) result = NULL;
  g_autofree char *out = NULL, *events = NULL;
  const char *const *spent;

  if (fx_init (&fx, SBX_ACCESS_GATED))
    {
      out = run_asking (&fx, (const char *const[]) { "udp:once.example", "connect:127.84.0.1", "udp:once.example",
                                                     NULL }, &asker, 0, &result);
      g_assert_cmpuint (count_lines (out, "once.example udp 0 127.84.0.1 0"), ==, 1);
      g_assert_cmpuint (count_lines (out, "connect 127.84.0.1 ERR 111"), ==, 1);
      g_assert_cmpuint (count_lines (out, "once.example udp 5 - -"), ==, 1);
      g_assert_cmpuint (asker.asked->len, ==, 2);
      g_assert_cmpstr (ask_tester_grant_target (&asker, 0), ==, "tcp:once.example:*");
      g_assert_cmpstr (ask_tester_grant_target (&asker, 1), ==, "tcp:once.example:*");
      g_assert_cmpint (sbx_denial_get_operation (sbx_decision_request_get_denial (asker.asked->pdata[0])), ==,
                       SBX_DENIAL_OPERATION_RESOLVE);
      g_assert_cmpstr (sbx_denial_get_grant_class (sbx_decision_request_get_denial (asker.asked->pdata[0])), ==,
                       SBX_GRANT_CLASS_NETWORK_PROXY_TARGET);
      spent = sbx_run_result_get_grants_spent (result);
      g_assert_cmpstr (spent[0], ==,
                       SBX_GRANT_CLASS_NETWORK_PROXY_TARGET " tcp:once.example:*: approved while running, once");
      g_assert_null (spent[1]);
      /* the refused query is a denial that names no grant (as without
       * asking: no grant issued before a spawn opens a name alone) */
      g_assert_nonnull (denial_of (result, "once.example"));
      g_assert_null (sbx_denial_get_grant_class (denial_of (result, "once.example")));
      events = read_events (&fx);
      g_assert_nonnull (strstr (events, "\"approved_while_running\":true"));
    }
  fx_clear (&fx);
  ask_tester_clear (&asker);
}

/* Allow for the run: later queries, UDP and TCP, are answered without
 * asking; another name (and one spelling the metadata address) is its own
 * question, and gets only the stub's address. */
static void
test_for_run (void)
{
  Fx fx;
  AskTester asker = ask_tester_new (ASK_FOR_RUN_THEN_DENY);
  AskTester meta = ask_tester_new (ASK_ONCE_THEN_DENY);
  g_autoptr(SbxRunResult) result = NULL;
  g_autofree char *out = NULL, *out2 = NULL;

  if (fx_init (&fx, SBX_ACCESS_GATED))
    {
      out = run_asking (&fx, (const char *const[]) { "udp:run.example", "udp:run.example", "tcp:run.example",
                                                     "tcp:other.example", "udp:run.example", NULL },
                        &asker, 0, &result);
      g_assert_cmpuint (count_lines (out, "run.example udp 0 127.84.0.1 0"), ==, 3);
      g_assert_cmpuint (count_lines (out, "run.example tcp 0 127.84.0.1 0"), ==, 1);
      g_assert_cmpuint (count_lines (out, "other.example tcp 5 - -"), ==, 1);
      g_assert_cmpuint (asker.asked->len, ==, 2);
      g_assert_cmpstr (ask_tester_grant_target (&asker, 0), ==, "tcp:run.example:*");
      g_assert_cmpstr (ask_tester_grant_target (&asker, 1), ==, "tcp:other.example:*");
      g_assert_cmpstr (sbx_run_result_get_grants_spent (result)[0], ==,
                       SBX_GRANT_CLASS_NETWORK_PROXY_TARGET " tcp:run.example:*: approved while running, for the "
                                                            "rest of this run");
      g_assert_null (denial_of (result, "run.example"));
      g_assert_nonnull (denial_of (result, "other.example"));
      /* an approved name never resolves to a real address */
      out2 = run_asking (&fx, (const char *const[]) { "udp:169.254.169.254", NULL }, &meta, 0, NULL);
      g_assert_cmpuint (count_lines (out2, "169.254.169.254 udp 0 127.84.0.1 0"), ==, 1);
      g_assert_cmpuint (meta.asked->len, ==, 1);
    }
  fx_clear (&fx);
  ask_tester_clear (&asker);
  ask_tester_clear (&meta);
}

/* Deny and the timeout: REFUSED (UDP and TCP), with the denial. */
static void
test_refusals (void)
{
  Fx fx;
  AskTester deny = ask_tester_new (ASK_DENY);
  AskTester keep = ask_tester_new (ASK_KEEP);

  if (fx_init (&fx, SBX_ACCESS_GATED))
    {
      for (int i = 0; i < 2; i++)
        {
          AskTester *asker = i == 0 ? &deny : &keep;
          g_autoptr(SbxRunResult) result = NULL;
          g_autofree char *out = run_asking (&fx, (const char *const[]) { "udp:no.example", "tcp:no.example", NULL },
                                             asker, i == 0 ? 0 : 200 * G_TIME_SPAN_MILLISECOND, &result);

          g_assert_cmpuint (count_lines (out, "no.example udp 5 - -"), ==, 1);
          g_assert_cmpuint (count_lines (out, "no.example tcp 5 - -"), ==, 1);
          g_assert_cmpuint (asker->asked->len, ==, 2);
          g_assert_false (sbx_decision_request_is_pending (asker->asked->pdata[0]));
          g_assert_nonnull (denial_of (result, "no.example"));
          g_assert_null (sbx_run_result_get_grants_spent (result)[0]);
        }
    }
  fx_clear (&fx);
  ask_tester_clear (&deny);
  ask_tester_clear (&keep);
}

static gboolean
keep_waking (gpointer data)
{
  (void) data;
  return G_SOURCE_CONTINUE;
}

/* A spawned process asks through its signal; the run ending while its
 * queries (UDP and TCP) are held withdraws the questions, nothing hangs. */
static void
test_run_ends (void)
{
  Fx fx;
  AskTester asker = ask_tester_new (ASK_KEEP);
  g_autoptr(SbxProcess) process = NULL;
  g_autoptr(SbxRunOptions) options = sbx_run_options_new ();
  g_autoptr(GError) error = NULL;
  guint wake;

  if (fx_init (&fx, SBX_ACCESS_GATED))
    {
      /* $0 of sh -c is the probe: one query over TCP, one over UDP */
      const char *argv[] = { "/bin/sh", "-c",
                             "/usr/bin/python3 -c \"$0\" tcp:held.example & "
                             "exec /usr/bin/python3 -c \"$0\" udp:held.example", probe, NULL };

      sbx_run_options_set_ask (options, TRUE);
      sbx_run_options_set_ask_timeout (options, 3600 * G_TIME_SPAN_SECOND);
      process = sbx_executor_spawn (fx.executor, fx.tree.ws, argv, options, NULL, &error);
      g_assert_no_error (error);
      g_signal_connect (process, "approval-requested", G_CALLBACK (ask_tester_on_signal), &asker);
      /* the count grows on the stub's thread: looked at every 10 ms */
      wake = g_timeout_add (10, keep_waking, NULL);
      while (asker.asked->len == 0
             || sbx_decision_broker_get_n_waiting (sbx_decision_request_get_broker (asker.asked->pdata[0])) < 2)
        g_main_context_iteration (NULL, TRUE);
      g_source_remove (wake);
      g_assert_cmpuint (asker.asked->len, ==, 1);   /* both queries: one question */
      g_assert_true (sbx_decision_request_is_pending (asker.asked->pdata[0]));
      sbx_process_force_exit (process);
      ask_wait_process (process);
      g_assert_false (sbx_decision_request_is_pending (asker.asked->pdata[0]));
      sbx_decision_request_allow_once (asker.asked->pdata[0]);   /* too late: nothing happens */
    }
  fx_clear (&fx);
  ask_tester_clear (&asker);
}

/* Identical concurrent queries: one question, answered together. */
static void
test_merged (gconstpointer data)
{
  guint n = GPOINTER_TO_UINT (data);
  Fx fx;
  AskTester asker = ask_tester_new (ASK_KEEP);
  g_autofree char *count = g_strdup_printf ("%u", n);
  g_autofree char *out = NULL;

  asker.want = n;
  if (fx_init (&fx, SBX_ACCESS_GATED))
    {
      out = run_asking (&fx, (const char *const[]) { "-t", count, "udp:many.example", NULL }, &asker,
                        120 * G_TIME_SPAN_SECOND, NULL);
      g_assert_true (asker.answered);
      g_assert_cmpuint (count_lines (out, "many.example udp 0 127.84.0.1 0"), ==, n);
      g_assert_cmpuint (asker.asked->len, ==, 1);
    }
  fx_clear (&fx);
  ask_tester_clear (&asker);
}

/* A Deny network has no stub: nothing is asked. */
static void
test_deny_profile (void)
{
  Fx fx;
  AskTester asker = ask_tester_new (ASK_ONCE_THEN_DENY);
  g_autofree char *out = NULL;

  if (fx_init (&fx, SBX_ACCESS_DENY))
    {
      out = run_asking (&fx, (const char *const[]) { "udp:deny.example", NULL }, &asker, 0, NULL);
      g_assert_cmpuint (count_lines (out, "deny.example udp ERR 111"), ==, 1);
      g_assert_cmpuint (asker.asked->len, ==, 0);
    }
  fx_clear (&fx);
  ask_tester_clear (&asker);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/ask/dns/once", test_once);
  g_test_add_func ("/ask/dns/for-run", test_for_run);
  g_test_add_func ("/ask/dns/refusals", test_refusals);
  g_test_add_func ("/ask/dns/run-ends", test_run_ends);
  g_test_add_data_func ("/ask/dns/two", GUINT_TO_POINTER (2), test_merged);
  g_test_add_data_func ("/ask/dns/flood", GUINT_TO_POINTER (64), test_merged);
  g_test_add_func ("/ask/dns/deny-profile", test_deny_profile);
  return g_test_run ();
}
