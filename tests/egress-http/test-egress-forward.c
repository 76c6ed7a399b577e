/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Egress for clients that ignore the proxy variables, end to end: the
 * library, linux-userns and plugins/egress-http as built, against servers on
 * this host's loopback only.  Every client here has the proxy variables
 * removed (a python socket client unsets them; git's git:// protocol never
 * uses an HTTP proxy).
 *
 * What it shows:
 *  - an approved IP literal (tcp:127.0.0.1:PORT) is reached by a plain TCP
 *    client and by git over a local `git daemon`; another port of the same
 *    address is refused, a literal outside 127/8 is on the sandbox's lo only
 *    when approved, and the metadata address never has a forwarder;
 *  - an approved name is answered by the sandbox's DNS stub with a
 *    sandbox-loopback address whose forwarder relays through the route's
 *    upstream proxy (CONNECT name:port); other names are refused by the
 *    stub, other ports of the name have no forwarder, AAAA answers are
 *    empty; the stub answers the same over TCP, to a raw client sending
 *    pipelined queries and to glibc forced onto TCP;
 *  - two concurrent executions of one executor cannot use each other's
 *    names, addresses or ports;
 *  - nothing is left behind (fds of this process, children);
 *  - rung 2 (linux-landlock) has none of it: the network is closed.
 * Each denial has its positive control: the same probe outside the sandbox,
 * or the same sandbox reaching what it was approved for.
 */
#include <sbx/sbx.h>

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <glib/gstdio.h>

#include "executor-test-util.h"
#include "egress-test-util.h"

/* The client every sandbox runs: connects to HOST PORT with every proxy
 * variable removed, sends a request, prints OK and the first bytes of the
 * answer, or FAIL and why (resolution and connection failures apart). */
static const char client_py[] =
  "import os, socket, sys\n"
  "for k in list(os.environ):\n"
  "    if 'proxy' in k.lower():\n"
  "        del os.environ[k]\n"
  "host, port, tag = sys.argv[1], int(sys.argv[2]), sys.argv[3]\n"
  "try:\n"
  "    infos = socket.getaddrinfo(host, port, socket.AF_INET, socket.SOCK_STREAM)\n"
  "except socket.gaierror as e:\n"
  "    print(tag + '=RESOLVE-FAIL', e.errno); sys.exit(0)\n"
  "try:\n"
  "    s = socket.create_connection((host, port), timeout=10)\n"
  "    print(tag + '=CONNECTED')\n"
  "    s.sendall(b'GET /' + tag.encode() + b' HTTP/1.0\\r\\nHost: x\\r\\n\\r\\n')\n"
  "    data = b''\n"
  "    while True:\n"
  "        chunk = s.recv(4096)\n"
  "        if not chunk: break\n"
  "        data += chunk\n"
  "    print(tag + ('=OK' if b'GET /' + tag.encode() in data else '=EMPTY'), infos[0][4][0])\n"
  "except OSError as e:\n"
  "    print(tag + '=CONNECT-FAIL', e.errno)\n";

/* A DNS-over-TCP client (RFC 1035 §4.2.2): one connection to the
 * sandbox's stub, an A query per name argument, all sent at once (so they
 * are pipelined), then one line per answer: the name, whether the id
 * matches, the rcode and the address (or '-'); CLOSED when the stub ended
 * the connection instead. */
static const char dnstcp_py[] =
  "import socket, struct, sys\n"
  "def query(i, name):\n"
  "    q = struct.pack('>HHHHHH', 0x4200 + i, 0x0100, 1, 0, 0, 0)\n"
  "    for label in name.split('.'):\n"
  "        q += bytes([len(label)]) + label.encode()\n"
  "    q += b'\\0' + struct.pack('>HH', 1, 1)\n"
  "    return struct.pack('>H', len(q)) + q\n"
  "names = sys.argv[1:]\n"
  "s = socket.create_connection(('127.0.0.53', 53), timeout=10)\n"
  "s.sendall(b''.join(query(i, n) for i, n in enumerate(names)))\n"
  "def exactly(n):\n"
  "    data = b''\n"
  "    while len(data) < n:\n"
  "        chunk = s.recv(n - len(data))\n"
  "        if not chunk:\n"
  "            raise EOFError\n"
  "        data += chunk\n"
  "    return data\n"
  "for i, n in enumerate(names):\n"
  "    try:\n"
  "        a = exactly(struct.unpack('>H', exactly(2))[0])\n"
  "    except (EOFError, OSError):\n"
  "        print('dnstcp', n, 'CLOSED'); break\n"
  "    ident, flags, qd, an = struct.unpack('>HHHH', a[:8])\n"
  "    addr = socket.inet_ntoa(a[-4:]) if an == 1 else '-'\n"
  "    print('dnstcp', n, 'id-ok' if ident == 0x4200 + i else 'id-bad', flags & 15, addr)\n";

typedef struct
{
  EtuTree         tree;
  TestServer     *http;      /* approved */
  TestServer     *other;     /* never approved */
  SbxExecutorSet *set;
  SbxExecutor    *executor;
} Fx;

static SbxRegistry *
egress_registry (void)
{
  const char *dirs[] = { g_getenv ("SBX_TEST_LINUX_PLUGIN_DIR"), g_getenv ("SBX_TEST_EGRESS_HTTP_PLUGIN_DIR"),
                         NULL };
  g_autoptr(GError) error = NULL;
  SbxRegistry *registry;

  g_assert_nonnull (dirs[0]);
  g_assert_nonnull (dirs[1]);
  registry = sbx_registry_new_for_directories (dirs, &error);
  g_assert_no_error (error);
  return registry;
}

static void fx_clear (Fx *fx);

static gboolean
have_python (void)
{
  g_autofree char *path = g_find_program_in_path ("python3");

  return path != NULL;
}

static gboolean
fx_init (Fx             *fx,
         const char     *backend,
         SbxAccess       network,
         SbxEgressRoute *route)
{
  g_autoptr(SbxRegistry) registry = egress_registry ();
  g_autoptr(SbxProfileConfig) config = sbx_profile_config_new ();
  g_autoptr(SbxProfile) profile = NULL;
  g_autoptr(SbxExecutorSetOptions) options = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *client = NULL;

  memset (fx, 0, sizeof *fx);
  if (!have_python ())
    {
      g_test_skip ("python3 is not installed");
      return FALSE;
    }
  etu_tree_init (&fx->tree);
  fx->http = test_server_new (TEST_SERVER_HTTP, NULL);
  fx->other = test_server_new (TEST_SERVER_HTTP, NULL);
  client = g_build_filename (fx->tree.ws, "client.py", NULL);
  g_assert_true (g_file_set_contents (client, client_py, -1, NULL));
  g_free (client);
  client = g_build_filename (fx->tree.ws, "dnstcp.py", NULL);
  g_assert_true (g_file_set_contents (client, dnstcp_py, -1, NULL));
  sbx_profile_config_set_workspace (config, fx->tree.ws, SBX_ACCESS_ALLOW, SBX_ACCESS_ALLOW);
  sbx_profile_config_set_host (config, SBX_ACCESS_ALLOW, SBX_ACCESS_DENY);
  sbx_profile_config_set_network (config, network);
  sbx_profile_config_set_command (config, SBX_ACCESS_ALLOW);
  sbx_profile_config_set_home (config, SBX_HOME_ISOLATED);
  profile = sbx_profile_new (config, &error);
  g_assert_no_error (error);
  options = etu_options (fx->tree.scratch, 4, registry);
  sbx_executor_set_options_set_backend (options, backend);
  sbx_executor_set_options_set_egress_route (options, route);
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

static void
fx_clear (Fx *fx)
{
  if (fx->set != NULL)
    g_assert_true (sbx_executor_set_close (fx->set, NULL, NULL));
  g_clear_object (&fx->executor);
  g_clear_object (&fx->set);
  g_clear_pointer (&fx->http, test_server_free);
  g_clear_pointer (&fx->other, test_server_free);
  if (fx->tree.tmp != NULL)
    etu_tree_clear (&fx->tree);
}

static char *
output_of (SbxRunResult *result)
{
  GBytes *bytes = sbx_run_result_get_output (result);
  gsize len;
  const char *data = g_bytes_get_data (bytes, &len);

  return g_strndup (data != NULL ? data : "", len);
}

static SbxRunResult *
run_with_targets (Fx                *fx,
                  const char        *execution_id,
                  const char        *command,
                  const char *const *targets)
{
  g_autoptr(GPtrArray) grants = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GError) error = NULL;
  SbxRunResult *result;

  for (gsize i = 0; targets[i] != NULL; i++)
    {
      g_autofree char *bound = sbx_grant_command_for_argv (SBX_SH_ARGV (command));
      char *token = sbx_executor_issue_grant (fx->executor, execution_id, bound, fx->tree.ws,
                                              SBX_GRANT_CLASS_NETWORK_PROXY_TARGET, targets[i], NULL, &error);

      g_assert_no_error (error);
      g_ptr_array_add (grants, token);
    }
  g_ptr_array_add (grants, NULL);
  result = etu_run_with_grants (fx->executor, fx->tree.ws, SBX_SH_ARGV (command), execution_id,
                                (const char *const *) grants->pdata, NULL, NULL, &error);
  g_assert_no_error (error);
  return result;
}

/* The same command without the sandbox: the positive control. */
static char *
run_outside (const char *cwd,
             const char *command)
{
  const char *argv[] = { "/bin/sh", "-c", command, NULL };
  g_autoptr(GError) error = NULL;
  char *out = NULL;
  int status = -1;

  g_assert_true (g_spawn_sync (cwd, (char **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, NULL, &status,
                               &error));
  g_assert_no_error (error);
  return out;
}

/* ------------------------------------------------------------------------- */
/* A scripted upstream proxy: CONNECT NAME:PORT goes to 127.0.0.1:PORT      */
/* whatever NAME is (the test's "DNS" for names that do not exist), and     */
/* every authority asked for is recorded.                                   */
/* ------------------------------------------------------------------------- */

typedef struct
{
  GSocket   *listener;
  guint16    port;
  GThread   *thread;
  GMutex     lock;
  GString   *seen;     /* "authority\n" per CONNECT */
  gboolean   stop;
} FakeUpstream;

static void
relay (int a,
       int b)
{
  gboolean open_a = TRUE, open_b = TRUE;
  char buf[16384];

  while (open_a || open_b)
    {
      struct pollfd p[2] = { { a, open_a ? POLLIN : 0, 0 }, { b, open_b ? POLLIN : 0, 0 } };

      if (poll (p, 2, 20000) <= 0)
        return;
      for (int i = 0; i < 2; i++)
        if (p[i].revents & (POLLIN | POLLHUP | POLLERR))
          {
            ssize_t n = read (p[i].fd, buf, sizeof buf);

            if (n <= 0)
              {
                shutdown (i == 0 ? b : a, SHUT_WR);
                if (i == 0)
                  open_a = FALSE;
                else
                  open_b = FALSE;
              }
            else if (write (i == 0 ? b : a, buf, (size_t) n) != n)
              return;
          }
    }
}

static gpointer
upstream_conn (gpointer data)
{
  g_autoptr(GSocket) s = data;
  g_autoptr(GString) head = g_string_new (NULL);
  FakeUpstream *up = g_object_get_data (G_OBJECT (s), "up");
  char c;

  while (!strstr (head->str, "\r\n\r\n") && head->len < 8192)
    {
      if (g_socket_receive (s, &c, 1, NULL, NULL) != 1)
        return NULL;
      g_string_append_c (head, c);
    }
  if (g_str_has_prefix (head->str, "CONNECT "))
    {
      const char *authority = head->str + 8;
      const char *space = strchr (authority, ' ');
      g_autofree char *auth = g_strndup (authority, space != NULL ? (gsize) (space - authority) : 0);
      const char *colon = strrchr (auth, ':');
      g_autoptr(GSocket) out = NULL;

      g_mutex_lock (&up->lock);
      g_string_append_printf (up->seen, "%s\n", auth);
      g_mutex_unlock (&up->lock);
      if (colon != NULL)
        out = test_connect_loopback ((guint16) atoi (colon + 1));
      if (out != NULL)
        {
          static const char ok[] = "HTTP/1.1 200 OK\r\n\r\n";

          test_send_all (s, ok, sizeof ok - 1);
          relay (g_socket_get_fd (s), g_socket_get_fd (out));
          return NULL;
        }
    }
  test_send_all (s, "HTTP/1.1 502 Bad Gateway\r\n\r\n", 28);
  return NULL;
}

static gpointer
upstream_accept (gpointer data)
{
  FakeUpstream *up = data;

  for (;;)
    {
      GSocket *s = g_socket_accept (up->listener, NULL, NULL);

      if (s == NULL || up->stop)
        {
          g_clear_object (&s);
          return NULL;
        }
      g_socket_set_blocking (s, TRUE);
      g_object_set_data (G_OBJECT (s), "up", up);
      g_thread_unref (g_thread_new ("fake-upstream-conn", upstream_conn, s));
    }
}

static FakeUpstream *
fake_upstream_new (void)
{
  FakeUpstream *up = g_new0 (FakeUpstream, 1);
  g_autoptr(GInetAddress) lo = g_inet_address_new_loopback (G_SOCKET_FAMILY_IPV4);
  g_autoptr(GSocketAddress) addr = g_inet_socket_address_new (lo, 0);
  g_autoptr(GSocketAddress) bound = NULL;

  g_mutex_init (&up->lock);
  up->seen = g_string_new (NULL);
  up->listener = g_socket_new (G_SOCKET_FAMILY_IPV4, G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_TCP, NULL);
  g_assert_true (g_socket_bind (up->listener, addr, TRUE, NULL));
  g_assert_true (g_socket_listen (up->listener, NULL));
  bound = g_socket_get_local_address (up->listener, NULL);
  up->port = g_inet_socket_address_get_port (G_INET_SOCKET_ADDRESS (bound));
  up->thread = g_thread_new ("fake-upstream", upstream_accept, up);
  return up;
}

static char *
fake_upstream_seen (FakeUpstream *up)
{
  char *s;

  g_mutex_lock (&up->lock);
  s = g_strdup (up->seen->str);
  g_mutex_unlock (&up->lock);
  return s;
}

static void
fake_upstream_free (FakeUpstream *up)
{
  g_autoptr(GSocket) poke = NULL;

  up->stop = TRUE;
  poke = test_connect_loopback (up->port);   /* wakes the accept */
  g_thread_join (up->thread);
  g_socket_close (up->listener, NULL);
  g_object_unref (up->listener);
  g_string_free (up->seen, TRUE);
  g_mutex_clear (&up->lock);
  g_free (up);
}

/* fx_init for linux-userns with a route through a fresh FakeUpstream,
 * returned in @up_out; FALSE (nothing left to free) when skipped. */
static gboolean
fx_init_upstream (Fx            *fx,
                  FakeUpstream **up_out)
{
  FakeUpstream *up = fake_upstream_new ();
  g_autofree char *url = g_strdup_printf ("http://127.0.0.1:%u", up->port);
  g_autoptr(SbxEgressRoute) route = NULL;
  g_autoptr(GError) error = NULL;

  *up_out = NULL;
  route = sbx_egress_route_new_upstream (url, FALSE, &error);
  g_assert_no_error (error);
  if (!fx_init (fx, "linux-userns", SBX_ACCESS_GATED, route))
    {
      fake_upstream_free (up);
      return FALSE;
    }
  *up_out = up;
  return TRUE;
}

/* ------------------------------------------------------------------------- */

/* A target sbx never reaches is refused when the grant is issued, with the
 * reason, by the rule the egress applies at connect: every metadata form
 * (tests/test-egress-route.c holds the rule's whole table).  The same
 * executor issues a grant for a reachable target. */
static void
test_metadata_refused_at_issue (void)
{
  static const char *const never[] = {
    "tcp:169.254.169.254:80", "tcp:[::ffff:169.254.169.254]:80", "tcp:[fd00:ec2::254]:80",
    "tcp:[64:ff9b::a9fe:a9fe]:80", "tcp:100.100.100.200:80", "tcp:2852039166:80",
    "tcp:0xa9fea9fe:80",
  };
  g_autoptr(SbxEgressRoute) route = sbx_egress_route_new_direct ();
  g_autofree char *token = NULL;
  g_autoptr(GError) error = NULL;
  Fx fx;

  if (!fx_init (&fx, "linux-userns", SBX_ACCESS_GATED, route))
    return;
  for (gsize i = 0; i < G_N_ELEMENTS (never); i++)
    {
      g_autofree char *refused = sbx_executor_issue_grant (fx.executor, "exec", "true", fx.tree.ws,
                                                           SBX_GRANT_CLASS_NETWORK_PROXY_TARGET,
                                                           never[i], NULL, &error);

      g_test_message ("%s: %s", never[i], error != NULL ? error->message : "(issued)");
      g_assert_null (refused);
      g_assert_error (error, SBX_GRANT_ERROR, SBX_GRANT_ERROR_DENIED);
      g_assert_nonnull (strstr (error->message, "cloud metadata address"));
      g_assert_nonnull (strstr (error->message, SBX_GRANT_CLASS_NETWORK_PROXY_TARGET));
      g_clear_error (&error);
    }
  token = sbx_executor_issue_grant (fx.executor, "exec", "true", fx.tree.ws,
                                    SBX_GRANT_CLASS_NETWORK_PROXY_TARGET, "tcp:169.254.169.253:80",
                                    NULL, &error);
  g_assert_no_error (error);
  g_assert_nonnull (token);
  fx_clear (&fx);
}

static void
test_literal_plain_client (void)
{
  g_autoptr(SbxEgressRoute) route = sbx_egress_route_new_direct ();
  g_autoptr(SbxRunResult) result = NULL;
  g_autofree char *target = NULL, *command = NULL, *out = NULL, *outside = NULL, *control = NULL;
  const char *targets[4] = { NULL, NULL, NULL, NULL };
  guint16 port, other;
  Fx fx;

  if (!fx_init (&fx, "linux-userns", SBX_ACCESS_GATED, route))
    return;
  port = test_server_get_port (fx.http);
  other = test_server_get_port (fx.other);
  target = g_strdup_printf ("tcp:127.0.0.1:%u", port);
  targets[0] = target;
  targets[1] = "tcp:192.0.2.7:9";   /* outside 127/8: a forwarder on the sandbox's lo */

  /* positive control: both servers answer a plain client without the sandbox */
  control = g_strdup_printf ("python3 client.py 127.0.0.1 %u mine; python3 client.py 127.0.0.1 %u theirs",
                             port, other);
  outside = run_outside (fx.tree.ws, control);
  g_assert_nonnull (strstr (outside, "mine=OK"));
  g_assert_nonnull (strstr (outside, "theirs=OK"));

  /* in the sandbox: the approved literal, not the other port; 192.0.2.7:9
   * is connectable (its forwarder exists, the dial then fails) while the
   * unapproved 192.0.2.8 has no route; the metadata address never: its
   * approval is refused when it is issued (so no forwarder can be made for
   * it), and it has no route */
  command = g_strdup_printf ("env | grep -i _proxy= | sed 's/=.*//' | sort | tr '\\n' ' '; echo; "
                             "python3 client.py 127.0.0.1 %u mine; python3 client.py 127.0.0.1 %u theirs; "
                             "python3 client.py 192.0.2.7 9 added; python3 client.py 192.0.2.8 9 notadded; "
                             "python3 client.py 169.254.169.254 80 metadata",
                             port, other);
  {
    g_autofree char *bound = sbx_grant_command_for_argv (SBX_SH_ARGV (command));
    g_autoptr(GError) error = NULL;
    g_autofree char *token = sbx_executor_issue_grant (fx.executor, "exec-literal", bound, fx.tree.ws,
                                                       SBX_GRANT_CLASS_NETWORK_PROXY_TARGET,
                                                       "tcp:169.254.169.254:80", NULL, &error);

    g_assert_null (token);
    g_assert_error (error, SBX_GRANT_ERROR, SBX_GRANT_ERROR_DENIED);
    g_assert_nonnull (strstr (error->message, "cloud metadata address"));
  }
  result = run_with_targets (&fx, "exec-literal", command, targets);
  out = output_of (result);
  g_test_message ("%s", out);
  g_assert_nonnull (strstr (out, "HTTP_PROXY"));   /* set, and the client drops them */
  g_assert_nonnull (strstr (out, "mine=OK 127.0.0.1"));
  g_assert_nonnull (strstr (out, "theirs=CONNECT-FAIL 111"));   /* ECONNREFUSED: no forwarder */
  g_assert_null (strstr (out, "metadata=CONNECTED"));
  g_assert_nonnull (strstr (out, "\nadded=CONNECTED"));         /* accepted by its forwarder */
  g_assert_null (strstr (out, "notadded=CONNECTED"));
  g_assert_nonnull (strstr (out, "notadded=CONNECT-FAIL 101")); /* ENETUNREACH */
  g_assert_nonnull (strstr (out, "metadata=CONNECT-FAIL 101"));
  g_assert_cmpuint (test_server_get_n_accepted (fx.other), ==, 1);  /* the control's only */
  fx_clear (&fx);
}

static void
die_with_parent (gpointer data)
{
  prctl (PR_SET_PDEATHSIG, SIGKILL);
}

static void
test_git_daemon (void)
{
  g_autoptr(SbxEgressRoute) route = sbx_egress_route_new_direct ();
  g_autoptr(SbxRunResult) result = NULL;
  g_autoptr(GSubprocess) daemon = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *git = g_find_program_in_path ("git");
  g_autofree char *base = NULL, *setup = NULL, *target = NULL, *command = NULL, *out = NULL;
  g_autofree char *outside = NULL, *control = NULL, *port_arg = NULL, *base_arg = NULL, *setup_out = NULL;
  const char *targets[2] = { NULL, NULL };
  guint16 port, other_port;
  Fx fx;

  if (git == NULL)
    {
      g_test_skip ("git is not installed");
      return;
    }
  if (!fx_init (&fx, "linux-userns", SBX_ACCESS_GATED, route))
    return;
  base = g_build_filename (fx.tree.tmp, "git", NULL);
  setup = g_strdup_printf ("set -e; mkdir -p %s; cd %s; git init -q --bare --initial-branch=main repo.git; git init -q w; cd w; "
                           "echo hello-from-git > f; git add f; git -c user.email=t@t -c user.name=t commit -qm m; "
                           "git push -q ../repo.git HEAD:refs/heads/main; echo setup-ok", base, base);
  setup_out = run_outside (fx.tree.ws, setup);
  g_assert_nonnull (strstr (setup_out, "setup-ok"));
  {
    /* a free port: bound, read and closed (the daemon binds it next) */
    g_autoptr(GSocket) probe = g_socket_new (G_SOCKET_FAMILY_IPV4, G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_TCP,
                                             NULL);
    g_autoptr(GInetAddress) lo = g_inet_address_new_loopback (G_SOCKET_FAMILY_IPV4);
    g_autoptr(GSocketAddress) addr = g_inet_socket_address_new (lo, 0);
    g_autoptr(GSocketAddress) bound = NULL;

    g_assert_true (g_socket_bind (probe, addr, TRUE, NULL));
    bound = g_socket_get_local_address (probe, NULL);
    port = g_inet_socket_address_get_port (G_INET_SOCKET_ADDRESS (bound));
  }
  other_port = test_server_get_port (fx.other);
  port_arg = g_strdup_printf ("--port=%u", port);
  base_arg = g_strdup_printf ("--base-path=%s", base);
  {
    /* git-daemon itself, not `git daemon`: the wrapper forks the daemon as
     * its child, so killing the wrapper would leave the daemon running after
     * the test; the daemon also dies with this process if the test aborts */
    g_autofree char *exec_path = NULL;
    g_autofree char *daemon_path = NULL;
    const char *argv[] = { NULL, "--reuseaddr", "--listen=127.0.0.1", port_arg, base_arg,
                           "--export-all", base, NULL };
    g_autoptr(GSubprocessLauncher) launcher =
      g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_SILENCE | G_SUBPROCESS_FLAGS_STDERR_SILENCE);
    const char *git_argv[] = { git, "--exec-path", NULL };

    g_assert_true (g_spawn_sync (NULL, (char **) git_argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &exec_path, NULL,
                                 NULL, &error));
    g_assert_no_error (error);
    daemon_path = g_build_filename (g_strstrip (exec_path), "git-daemon", NULL);
    argv[0] = daemon_path;
    g_subprocess_launcher_set_child_setup (launcher, die_with_parent, NULL, NULL);
    daemon = g_subprocess_launcher_spawnv (launcher, argv, &error);
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

  /* positive control: git clones over git:// without the sandbox */
  control = g_strdup_printf ("git clone -q git://127.0.0.1:%u/repo.git outside-clone && cat outside-clone/f", port);
  outside = run_outside (fx.tree.tmp, control);
  g_assert_nonnull (strstr (outside, "hello-from-git"));

  target = g_strdup_printf ("tcp:127.0.0.1:%u", port);
  targets[0] = target;
  command = g_strdup_printf ("unset HTTP_PROXY HTTPS_PROXY ALL_PROXY http_proxy https_proxy all_proxy; "
                             "git clone -q git://127.0.0.1:%u/repo.git c1 && cat c1/f; "
                             "git clone -q git://127.0.0.1:%u/repo.git c2 2>/dev/null; echo other-rc=$?",
                             port, other_port);
  result = run_with_targets (&fx, "exec-git", command, targets);
  out = output_of (result);
  g_test_message ("%s", out);
  g_assert_nonnull (strstr (out, "hello-from-git"));
  g_assert_nonnull (strstr (out, "other-rc=128"));
  g_assert_cmpuint (test_server_get_n_accepted (fx.other), ==, 0);

  g_subprocess_force_exit (daemon);
  g_subprocess_wait (daemon, NULL, NULL);
  fx_clear (&fx);
}

static void
test_name_via_upstream (void)
{
  FakeUpstream *up;
  g_autoptr(SbxRunResult) result = NULL;
  g_autofree char *target = NULL, *command = NULL, *out = NULL, *seen = NULL, *control = NULL;
  g_autofree char *outside = NULL;
  const char *targets[2] = { NULL, NULL };
  guint16 port;
  Fx fx;

  if (!fx_init_upstream (&fx, &up))
    return;
  port = test_server_get_port (fx.http);

  /* positive control: the upstream serves any name (it would relay
   * other.test too) */
  control = g_strdup_printf ("curl -s --noproxy '' -p -x http://127.0.0.1:%u http://other.test:%u/control",
                             up->port, port);
  outside = run_outside (fx.tree.ws, control);
  g_assert_nonnull (strstr (outside, "GET /control"));

  target = g_strdup_printf ("tcp:approved.test:%u", port);
  targets[0] = target;
  command = g_strdup_printf ("python3 client.py approved.test %u named; python3 client.py APPROVED.Test %u upper; "
                             "python3 client.py other.test %u other; "
                             "python3 client.py approved.test %u otherport; "
                             "python3 -c \"import socket; print('aaaa=', len([a for a in "
                             "socket.getaddrinfo('approved.test', 1) if a[0] == socket.AF_INET6]))\"",
                             port, port, port, test_server_get_port (fx.other));
  result = run_with_targets (&fx, "exec-name", command, targets);
  out = output_of (result);
  g_test_message ("%s", out);
  g_assert_nonnull (strstr (out, "named=OK 127.83.0.1"));
  g_assert_nonnull (strstr (out, "upper=OK 127.83.0.1"));
  g_assert_nonnull (strstr (out, "other=RESOLVE-FAIL"));         /* the stub's REFUSED */
  g_assert_nonnull (strstr (out, "otherport=CONNECT-FAIL 111"));  /* no forwarder on that port */
  g_assert_nonnull (strstr (out, "aaaa= 0"));
  seen = fake_upstream_seen (up);
  g_test_message ("upstream saw: %s", seen);
  g_assert_nonnull (strstr (seen, target + 4));   /* "approved.test:PORT": by name, through the route */
  g_assert_null (strstr (seen, "127.83."));
  fx_clear (&fx);
  fake_upstream_free (up);
}

/* The stub over TCP inside a real run: pipelined queries on one
 * connection (the approved name answered, another refused), and glibc's
 * resolver forced onto TCP (RES_OPTIONS=use-vc) reaching the approved name
 * through its forwarder while another name fails to resolve.  The run is
 * also approved for the stub's own address and port as a literal: that
 * gets no forwarder, which would take the stub's TCP port. */
static void
test_dns_over_tcp (void)
{
  FakeUpstream *up;
  g_autoptr(SbxRunResult) result = NULL;
  g_autofree char *target = NULL, *command = NULL, *out = NULL;
  const char *targets[3] = { NULL, "tcp:127.0.0.53:53", NULL };
  guint16 port;
  Fx fx;

  if (!fx_init_upstream (&fx, &up))
    return;
  port = test_server_get_port (fx.http);
  target = g_strdup_printf ("tcp:approved.test:%u", port);
  targets[0] = target;
  command = g_strdup_printf ("python3 dnstcp.py approved.test other.test APPROVED.Test; "
                             "RES_OPTIONS=use-vc python3 client.py approved.test %u vc; "
                             "RES_OPTIONS=use-vc python3 client.py other.test %u vcother",
                             port, port);
  result = run_with_targets (&fx, "exec-dnstcp", command, targets);
  out = output_of (result);
  g_test_message ("%s", out);
  g_assert_nonnull (strstr (out, "dnstcp approved.test id-ok 0 127.83.0.1\n"));
  g_assert_nonnull (strstr (out, "dnstcp other.test id-ok 5 -\n"));        /* REFUSED */
  g_assert_nonnull (strstr (out, "dnstcp APPROVED.Test id-ok 0 127.83.0.1\n"));
  g_assert_nonnull (strstr (out, "vc=OK 127.83.0.1"));
  g_assert_nonnull (strstr (out, "vcother=RESOLVE-FAIL"));
  fx_clear (&fx);
  fake_upstream_free (up);
}

/* Two concurrent executions of one executor: B cannot resolve A's name nor
 * reach A's forwarder address and port, and A's approvals outlive B. */
static void
test_concurrent_isolation (void)
{
  FakeUpstream *up;
  g_autoptr(GError) error = NULL;
  g_autoptr(GAsyncResult) async_a = NULL;
  g_autoptr(SbxRunResult) ra = NULL, rb = NULL;
  g_autoptr(GPtrArray) grants_a = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *ta = NULL, *tb = NULL, *cmd_a = NULL, *cmd_b = NULL, *out_a = NULL, *out_b = NULL;
  g_autofree char *ready = NULL;
  const char *targets_b[2] = { NULL, NULL };
  guint16 pa, pb;
  Fx fx;

  if (!fx_init_upstream (&fx, &up))
    return;
  pa = test_server_get_port (fx.http);
  pb = test_server_get_port (fx.other);
  ta = g_strdup_printf ("tcp:a.test:%u", pa);
  tb = g_strdup_printf ("tcp:b.test:%u", pb);
  ready = g_build_filename (fx.tree.ws, "a.ready", NULL);

  cmd_a = g_strdup_printf ("python3 client.py a.test %u a-own; touch a.ready; i=0; "
                           "while [ ! -e b.done ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done; "
                           "python3 client.py a.test %u a-again; python3 client.py b.test %u a-other",
                           pa, pa, pb);
  {
    g_autofree char *bound = sbx_grant_command_for_argv (SBX_SH_ARGV (cmd_a));
    char *token = sbx_executor_issue_grant (fx.executor, "exec-a", bound, fx.tree.ws,
                                            SBX_GRANT_CLASS_NETWORK_PROXY_TARGET, ta, NULL, &error);

    g_assert_no_error (error);
    g_ptr_array_add (grants_a, token);
    g_ptr_array_add (grants_a, NULL);
  }
  etu_run_with_grants_async (fx.executor, fx.tree.ws, SBX_SH_ARGV (cmd_a), "exec-a",
                             (const char *const *) grants_a->pdata, NULL, NULL, etu_store_result, &async_a);
  g_assert_true (etu_wait_for_file (ready, 30000));

  /* B: its own name works (positive control); A's name is refused by B's
   * stub, and A's address and port lead nowhere in B's sandbox */
  cmd_b = g_strdup_printf ("python3 client.py b.test %u b-own; python3 client.py a.test %u b-name; "
                           "python3 client.py 127.83.0.1 %u b-addr; touch b.done", pb, pa, pa);
  targets_b[0] = tb;
  rb = run_with_targets (&fx, "exec-b", cmd_b, targets_b);
  out_b = output_of (rb);
  g_test_message ("B: %s", out_b);
  g_assert_nonnull (strstr (out_b, "b-own=OK 127.83.0.1"));
  g_assert_nonnull (strstr (out_b, "b-name=RESOLVE-FAIL"));
  g_assert_nonnull (strstr (out_b, "b-addr=CONNECT-FAIL 111"));

  ra = sbx_executor_run_finish (fx.executor, etu_wait_async (&async_a), &error);
  g_assert_no_error (error);
  out_a = output_of (ra);
  g_test_message ("A: %s", out_a);
  g_assert_nonnull (strstr (out_a, "a-own=OK 127.83.0.1"));
  g_assert_nonnull (strstr (out_a, "a-again=OK"));          /* B's end left A's forwarder open */
  g_assert_nonnull (strstr (out_a, "a-other=RESOLVE-FAIL"));
  fx_clear (&fx);
  fake_upstream_free (up);
}

static void
test_nothing_left_behind (void)
{
  g_autoptr(SbxEgressRoute) route = sbx_egress_route_new_direct ();
  g_autofree char *before_list = NULL, *after_list = NULL;
  guint before, after, children;
  Fx fx;

  /* warm up what GLib and the plugins open once per process */
  if (!fx_init (&fx, "linux-userns", SBX_ACCESS_GATED, route))
    return;
  {
    g_autofree char *t = g_strdup_printf ("tcp:127.0.0.1:%u", test_server_get_port (fx.http));
    const char *targets[] = { t, "tcp:warm.test:80", NULL };
    g_autoptr(SbxRunResult) r = run_with_targets (&fx, "warm", "true", targets);

    g_assert_nonnull (r);
  }
  fx_clear (&fx);
  before = etu_count_fds ();
  before_list = etu_list_fds ();
  children = etu_count_children ();
  g_assert_true (fx_init (&fx, "linux-userns", SBX_ACCESS_GATED, route));
  for (int i = 0; i < 4; i++)
    {
      g_autofree char *t = g_strdup_printf ("tcp:127.0.0.1:%u", test_server_get_port (fx.http));
      g_autofree char *command = g_strdup_printf ("python3 client.py 127.0.0.1 %u run%d",
                                                  test_server_get_port (fx.http), i);
      g_autofree char *id = g_strdup_printf ("leak-%d", i);
      const char *targets[] = { t, "tcp:name.test:80", "tcp:192.0.2.9:80", NULL };
      g_autoptr(SbxRunResult) r = run_with_targets (&fx, id, command, targets);
      g_autofree char *out = output_of (r);
      g_autofree char *expect = g_strdup_printf ("run%d=OK", i);

      g_assert_nonnull (strstr (out, expect));
    }
  fx_clear (&fx);
  after = etu_count_fds ();
  after_list = etu_list_fds ();
  if (after != before)
    g_test_message ("before: %s\nafter: %s", before_list, after_list);
  g_assert_cmpuint (after, ==, before);
  g_assert_cmpuint (etu_count_children (), ==, children);
}

/* Rung 2: no namespace, so no stub and no forwarder; the network is closed
 * and a plain client reaches nothing (the control reaches the server). */
static void
test_rung2_closed (void)
{
  g_autoptr(SbxEgressRoute) route = sbx_egress_route_new_direct ();
  g_autoptr(SbxRunResult) result = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *command = NULL, *out = NULL, *outside = NULL;
  Fx fx;

  if (!fx_init (&fx, "linux-landlock", SBX_ACCESS_ALLOW, route))
    return;
  g_assert_false (sbx_executor_get_guarantees (fx.executor) & SBX_GUARANTEE_TARGET_NETWORK);
  command = g_strdup_printf ("python3 client.py 127.0.0.1 %u r2", test_server_get_port (fx.http));
  outside = run_outside (fx.tree.ws, command);
  g_assert_nonnull (strstr (outside, "r2=OK"));
  result = sbx_executor_run (fx.executor, fx.tree.ws, SBX_SH_ARGV (command), NULL, NULL, &error);
  g_assert_no_error (error);
  out = output_of (result);
  g_test_message ("%s", out);
  g_assert_null (strstr (out, "r2=OK"));
  g_assert_cmpuint (test_server_get_n_accepted (fx.http), ==, 1);   /* the control's only */
  fx_clear (&fx);
}

int
main (int    argc,
      char **argv)
{
  signal (SIGPIPE, SIG_IGN);
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/egress-forward/metadata-refused-at-issue", test_metadata_refused_at_issue);
  g_test_add_func ("/egress-forward/literal-plain-client", test_literal_plain_client);
  g_test_add_func ("/egress-forward/git-daemon", test_git_daemon);
  g_test_add_func ("/egress-forward/name-via-upstream", test_name_via_upstream);
  g_test_add_func ("/egress-forward/dns-over-tcp", test_dns_over_tcp);
  g_test_add_func ("/egress-forward/concurrent-isolation", test_concurrent_isolation);
  g_test_add_func ("/egress-forward/nothing-left-behind", test_nothing_left_behind);
  g_test_add_func ("/egress-forward/rung2-closed", test_rung2_closed);
  return g_test_run ();
}
