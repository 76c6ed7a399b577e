/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sbx run with a gated network and no egress option: the sbx program of
 * this build, the Linux backend and plugins/egress-http, against servers
 * on this host's loopback, on ports they picked.
 *
 * What it shows:
 *  - rung 1: each refused target is exactly one denial line naming the
 *    network.proxy-target.v1 grant that opens it (a repeat is counted, not
 *    printed again), the servers saw nothing, and each answers the same
 *    client without the sandbox (the positive control);
 *  - that grant passed back with --approve, and nothing else, opens
 *    exactly that target: another port stays refused, with its line;
 *  - a raw TCP client that ignores the proxy variables (Python's
 *    socket.create_connection): an approved IP literal is reached through
 *    its forwarder; an unapproved one reaches nothing (no mechanism sees
 *    such a connect: what the run printed is logged, not asserted);
 *  - --report=json lists the denials with the grant;
 *  - --approve network.broad.v1 still opens its port (that run gets no
 *    route: the core refuses the grant on a set with one);
 *  - a profile that also gates a host socket keeps its read, write and
 *    network boundaries (sbx run does not make it ask);
 *  - without the egress-http plugin a gated run still runs, closed, with
 *    no route claimed;
 *  - a denied network gets no route (the report has no egress-route
 *    entry, the sandbox no proxy) and its refusals name no grant;
 *  - rung 2 (no network namespace): the route is configured but not kept,
 *    as the report says; the sandbox is not given a proxy, no denial is
 *    printed, the server sees nothing, and the grant is refused because
 *    target-network does not hold.
 */
#include <sbx/sbx.h>

#include <string.h>

#include "executor-test-util.h"
#include "egress-test-util.h"

static const char gated_json[] =
  "{ \"version\": 1,\n"
  "  \"workspace\": { \"root\": \".\", \"read\": \"allow\", \"write\": \"allow\" },\n"
  "  \"host\": { \"read\": \"deny\", \"write\": \"deny\" },\n"
  "  \"network\": \"gated\", \"command\": \"allow\", \"home\": \"isolated\" }\n";

typedef struct
{
  EtuTree     tree;
  TestServer *one;       /* refused, then approved */
  TestServer *two;       /* always refused */
  char       *gated;     /* the gated profile's file */
  char       *url1;
  char       *url2;
} Fx;

static void
fx_clear (Fx *fx)
{
  g_clear_pointer (&fx->one, test_server_free);
  g_clear_pointer (&fx->two, test_server_free);
  g_clear_pointer (&fx->gated, g_free);
  g_clear_pointer (&fx->url1, g_free);
  g_clear_pointer (&fx->url2, g_free);
  etu_tree_clear (&fx->tree);
}

/* FALSE (skipped, nothing left) when curl or python3 is missing or
 * @backend cannot run a sandboxed command here. */
static gboolean
fx_init (Fx         *fx,
         const char *backend)
{
  g_autofree char *curl = g_find_program_in_path ("curl");
  g_autofree char *python = g_find_program_in_path ("python3");
  g_autofree char *out = NULL, *err = NULL;

  memset (fx, 0, sizeof *fx);
  if (curl == NULL || python == NULL)
    {
      g_test_skip ("curl or python3 is not installed (scripts/setup.sh installs them)");
      return FALSE;
    }
  etu_tree_init (&fx->tree);
  if (etu_run_sbx (&fx->tree, backend, &out, &err, "run", "--", "true", NULL) != 0)
    {
      g_test_skip_printf ("%s cannot run a sandboxed command here: %s", backend, err);
      fx_clear (fx);
      return FALSE;
    }
  fx->one = test_server_new (TEST_SERVER_HTTP, NULL);
  fx->two = test_server_new (TEST_SERVER_HTTP, NULL);
  fx->gated = etu_write_file (fx->tree.tmp, "gated.json", gated_json);
  fx->url1 = g_strdup_printf ("http://127.0.0.1:%u/one", test_server_get_port (fx->one));
  fx->url2 = g_strdup_printf ("http://127.0.0.1:%u/two", test_server_get_port (fx->two));
  return TRUE;
}

/* The line sbx prints for a refused connect to 127.0.0.1:@port. */
static char *
denial_line (guint16     port,
             const char *count)
{
  return g_strdup_printf ("sbx: denied connect 127.0.0.1:%u (network is gated)%s; --approve "
                          "network.proxy-target.v1:tcp:127.0.0.1:%u would open it\n", port, count, port);
}

/* The control: each server answers the same curl without the sandbox. */
static void
assert_servers_answer (Fx *fx)
{
  g_autofree char *command = g_strdup_printf ("curl -sf %s; curl -sf %s", fx->url1, fx->url2);
  g_autofree char *out = NULL;

  g_assert_cmpint (etu_run_outside (command, &out), ==, 0);
  g_assert_nonnull (strstr (out, "GET /one"));
  g_assert_nonnull (strstr (out, "GET /two"));
}

static void
test_gated_rung1 (void)
{
  Fx fx;
  g_autofree char *script = NULL, *out = NULL, *err = NULL, *line1 = NULL, *line1_twice = NULL;
  g_autofree char *line2 = NULL, *approve = NULL, *raw = NULL;
  guint seen1, seen2;
  int status;

  if (!fx_init (&fx, "linux-userns"))
    return;
  script = g_strdup_printf ("curl -sf %s; curl -sf %s; curl -sf %s; echo done", fx.url1, fx.url1, fx.url2);
  line1 = denial_line (test_server_get_port (fx.one), "");
  line1_twice = denial_line (test_server_get_port (fx.one), " [2 times]");
  line2 = denial_line (test_server_get_port (fx.two), "");

  /* no option: every target refused, each once with its grant */
  status = etu_run_sbx (&fx.tree, "linux-userns", &out, &err, "run", "--profile", fx.gated, "--report=json", "--",
                        "sh", "-c", script, NULL);
  g_assert_cmpint (status, ==, 0);
  g_assert_nonnull (strstr (out, "done"));
  g_assert_null (strstr (out, "GET /"));
  g_assert_cmpuint (etu_count (err, line1_twice), ==, 1);
  g_assert_cmpuint (etu_count (err, line2), ==, 1);
  g_assert_cmpuint (etu_count (err, "sbx: denied connect "), ==, 2);
  g_assert_null (strstr (err, "sbx: run: network target denied"));
  g_assert_nonnull (strstr (err, "\"grant_class\":\"network.proxy-target.v1\""));
  g_assert_nonnull (strstr (err, "\"denials_dropped\":0}"));
  /* the run's report describes the route it had */
  g_assert_nonnull (strstr (err, "\"feature\":\"egress-route\",\"status\":\"enforced\""));
  g_assert_cmpuint (test_server_get_n_accepted (fx.one), ==, 0);
  g_assert_cmpuint (test_server_get_n_accepted (fx.two), ==, 0);
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);

  assert_servers_answer (&fx);
  seen1 = test_server_get_n_accepted (fx.one);
  seen2 = test_server_get_n_accepted (fx.two);
  g_assert_cmpuint (seen1, ==, 1);
  g_assert_cmpuint (seen2, ==, 1);

  /* the printed grant, alone, opens exactly that target */
  approve = g_strdup_printf ("network.proxy-target.v1:tcp:127.0.0.1:%u", test_server_get_port (fx.one));
  status = etu_run_sbx (&fx.tree, "linux-userns", &out, &err, "run", "--profile", fx.gated, "--approve", approve, "--",
                        "sh", "-c", script, NULL);
  g_assert_cmpint (status, ==, 0);
  g_assert_cmpuint (etu_count (out, "GET /one"), ==, 2);
  g_assert_null (strstr (out, "GET /two"));
  g_assert_null (strstr (err, line1));
  g_assert_null (strstr (err, line1_twice));
  g_assert_cmpuint (etu_count (err, line2), ==, 1);
  g_assert_cmpuint (etu_count (err, "sbx: denied connect "), ==, 1);
  g_assert_cmpuint (test_server_get_n_accepted (fx.one), ==, seen1 + 2);
  g_assert_cmpuint (test_server_get_n_accepted (fx.two), ==, seen2);
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);

  /* a raw client ignoring the proxy variables: the approved IP literal
   * through its forwarder, the other port nowhere */
  raw = g_strdup_printf ("import socket, sys\n"
                         "for port in (%u, %u):\n"
                         "    try:\n"
                         "        s = socket.create_connection(('127.0.0.1', port), timeout=10)\n"
                         "        s.sendall(b'GET /raw%%d HTTP/1.0\\r\\n\\r\\n' %% port)\n"
                         "        print(port, s.recv(12))\n"
                         "    except OSError as e:\n"
                         "        print(port, 'refused', e.errno)\n",
                         test_server_get_port (fx.one), test_server_get_port (fx.two));
  status = etu_run_sbx (&fx.tree, "linux-userns", &out, &err, "run", "--profile", fx.gated, "--approve", approve, "--",
                        "python3", "-c", raw, NULL);
  g_assert_cmpint (status, ==, 0);
  {
    g_autofree char *reached = g_strdup_printf ("%u b'HTTP/1.", test_server_get_port (fx.one));
    g_autofree char *refused = g_strdup_printf ("%u refused", test_server_get_port (fx.two));

    g_assert_nonnull (strstr (out, reached));
    g_assert_nonnull (strstr (out, refused));
  }
  g_test_message ("a raw connect to an unapproved port: stderr says %s",
                  strstr (err, "sbx: denied connect") != NULL ? "a denial" : "nothing (not observed)");
  g_assert_null (strstr (err, line1));
  g_assert_cmpuint (test_server_get_n_accepted (fx.one), ==, seen1 + 3);
  g_assert_cmpuint (test_server_get_n_accepted (fx.two), ==, seen2);
  fx_clear (&fx);
}

/* --approve network.broad.v1 still opens its port to every address with
 * no route (the core refuses that grant on a set with one): the gated
 * network's own route is not made for such a run. */
static void
test_gated_broad (void)
{
  Fx fx;
  g_autofree char *script = NULL, *out = NULL, *err = NULL, *approve = NULL;
  int status;

  if (!fx_init (&fx, "linux-userns"))
    return;
  script = g_strdup_printf ("curl -sf %s; curl -sf --connect-timeout 5 %s; echo done", fx.url1, fx.url2);
  approve = g_strdup_printf ("network.broad.v1:tcp:*:%u", test_server_get_port (fx.one));
  status = etu_run_sbx (&fx.tree, "linux-userns", &out, &err, "run", "--profile", fx.gated, "--approve", approve, "--",
                        "sh", "-c", script, NULL);
  g_assert_cmpint (status, ==, 0);
  g_assert_cmpuint (etu_count (out, "GET /one"), ==, 1);
  g_assert_null (strstr (out, "GET /two"));
  g_assert_cmpuint (test_server_get_n_accepted (fx.one), ==, 1);
  g_assert_cmpuint (test_server_get_n_accepted (fx.two), ==, 0);
  assert_servers_answer (&fx);
  fx_clear (&fx);
}

/* Without the egress-http plugin no route can be served: the gated run
 * keeps its closed network (as before the route) instead of failing, and
 * neither its report nor its output pretends a route. */
static void
test_gated_no_egress_plugin (void)
{
  Fx fx;
  g_autofree char *egress_dir = NULL, *script = NULL, *out = NULL, *err = NULL;
  int status;

  if (!fx_init (&fx, "linux-userns"))
    return;
  /* etu_run_sbx's plugin path is then the Linux plugin's directory alone */
  egress_dir = g_strdup (g_getenv ("SBX_TEST_EGRESS_HTTP_PLUGIN_DIR"));
  g_unsetenv ("SBX_TEST_EGRESS_HTTP_PLUGIN_DIR");
  script = g_strdup_printf ("curl -sf --connect-timeout 5 %s; env | grep -ci _proxy=; echo done", fx.url1);
  status = etu_run_sbx (&fx.tree, "linux-userns", &out, &err, "run", "--profile", fx.gated, "--report", "--", "sh",
                        "-c", script, NULL);
  g_setenv ("SBX_TEST_EGRESS_HTTP_PLUGIN_DIR", egress_dir, TRUE);
  g_assert_cmpint (status, ==, 0);
  g_assert_cmpstr (out, ==, "0\ndone\n");
  g_assert_null (strstr (err, "egress-route"));
  g_assert_null (strstr (err, "sbx: denied connect"));
  g_assert_null (strstr (err, "--approve network."));
  g_assert_cmpuint (test_server_get_n_accepted (fx.one), ==, 0);
  assert_servers_answer (&fx);
  fx_clear (&fx);
}

/* A profile that also gates a host socket: sbx run does not make its run
 * ask (an asking run with a gated host socket claims no read, write or
 * network boundary), so the run keeps its boundaries; --ask still may. */
static void
test_gated_host_socket (void)
{
  Fx fx;
  g_autofree char *profile = NULL, *json = NULL, *out = NULL, *err = NULL;
  int status;

  if (!fx_init (&fx, "linux-userns"))
    return;
  json = g_strdup_printf ("{ \"version\": 1,\n"
                          "  \"workspace\": { \"root\": \".\", \"read\": \"allow\", \"write\": \"allow\" },\n"
                          "  \"host\": { \"read\": \"deny\", \"write\": \"deny\" },\n"
                          "  \"host-sockets\": [ { \"path\": \"%s/daemon.sock\", \"access\": \"gated\" } ],\n"
                          "  \"network\": \"gated\", \"command\": \"allow\", \"home\": \"isolated\" }\n",
                          fx.tree.tmp);
  profile = etu_write_file (fx.tree.tmp, "socket.json", json);
  status = etu_run_sbx (&fx.tree, "linux-userns", &out, &err, "run", "--profile", profile, "--report", "--", "true",
                        NULL);
  g_assert_cmpint (status, ==, 0);
  g_assert_nonnull (strstr (err, "\n  enforced   read-boundary: "));
  g_assert_nonnull (strstr (err, "\n  enforced   write-boundary: "));
  g_assert_nonnull (strstr (err, "\n  enforced   network-boundary: "));
  g_assert_null (strstr (err, "it asks while running"));
  fx_clear (&fx);
}

/* A denied network: no route, nothing reached, no grant named. */
static void
test_denied (void)
{
  Fx fx;
  g_autofree char *deny = NULL, *script = NULL, *out = NULL, *err = NULL;
  int status;

  if (!fx_init (&fx, "linux-userns"))
    return;
  deny = etu_write_file (fx.tree.tmp, "deny.json",
                         "{ \"version\": 1,\n"
                         "  \"workspace\": { \"root\": \".\", \"read\": \"allow\", \"write\": \"allow\" },\n"
                         "  \"host\": { \"read\": \"deny\", \"write\": \"deny\" },\n"
                         "  \"network\": \"deny\", \"command\": \"allow\", \"home\": \"isolated\" }\n");
  script = g_strdup_printf ("curl -sf --connect-timeout 5 %s; env | grep -ci _proxy=; echo done", fx.url1);
  status = etu_run_sbx (&fx.tree, "linux-userns", &out, &err, "run", "--profile", deny, "--report", "--", "sh", "-c",
                        script, NULL);
  g_assert_cmpint (status, ==, 0);
  g_assert_cmpstr (out, ==, "0\ndone\n");
  g_assert_null (strstr (out, "GET /"));
  g_assert_null (strstr (err, "egress-route"));
  g_assert_null (strstr (err, "--approve"));
  g_assert_null (strstr (err, "network.proxy-target"));
  g_assert_cmpuint (test_server_get_n_accepted (fx.one), ==, 0);
  assert_servers_answer (&fx);
  fx_clear (&fx);
}

/* Rung 2: the route is not kept, and nothing pretends it is. */
static void
test_gated_rung2 (void)
{
  Fx fx;
  g_autofree char *script = NULL, *out = NULL, *err = NULL, *approve = NULL;
  int status;

  if (!fx_init (&fx, "linux-landlock"))
    return;
  script = g_strdup_printf ("curl -sf --connect-timeout 5 %s; env | grep -ci _proxy=; echo done", fx.url1);
  status = etu_run_sbx (&fx.tree, "linux-landlock", &out, &err, "run", "--profile", fx.gated, "--report", "--",
                        "sh", "-c", script, NULL);
  g_assert_cmpint (status, ==, 0);
  g_assert_cmpstr (out, ==, "0\ndone\n");
  g_assert_null (strstr (out, "GET /"));
  g_assert_nonnull (strstr (err, "unenforced egress-route: "));
  g_assert_null (strstr (err, "sbx: denied connect"));
  g_assert_null (strstr (err, "--approve network."));
  g_assert_cmpuint (test_server_get_n_accepted (fx.one), ==, 0);
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);

  approve = g_strdup_printf ("network.proxy-target.v1:tcp:127.0.0.1:%u", test_server_get_port (fx.one));
  status = etu_run_sbx (&fx.tree, "linux-landlock", &out, &err, "run", "--profile", fx.gated, "--approve", approve,
                        "--", "curl", "-sf", fx.url1, NULL);
  g_assert_cmpint (status, ==, 125);
  g_assert_nonnull (strstr (err, "target-network"));
  g_assert_cmpuint (test_server_get_n_accepted (fx.one), ==, 0);
  assert_servers_answer (&fx);
  fx_clear (&fx);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/cli-run-network/gated/rung1", test_gated_rung1);
  g_test_add_func ("/cli-run-network/gated/rung2", test_gated_rung2);
  g_test_add_func ("/cli-run-network/gated/broad", test_gated_broad);
  g_test_add_func ("/cli-run-network/gated/host-socket", test_gated_host_socket);
  g_test_add_func ("/cli-run-network/gated/no-egress-plugin", test_gated_no_egress_plugin);
  g_test_add_func ("/cli-run-network/denied", test_denied);
  return g_test_run ();
}
