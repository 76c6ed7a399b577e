/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The http-connect route under load: 1,000 concurrent tunnels through one
 * route, opened from several client threads at once, CONNECT tunnels and raw
 * tunnels (sbx-egress-tunnel.h, the forwarders' path).  Each case counts
 * /proc/self/fd and /proc/self/task with the route running, before the
 * tunnels and after they are gone, so a leaked socket, pipe or stuck
 * per-connection thread fails it; and each releases one execution while the
 * other's tunnels carry bytes, which must close exactly the released
 * execution's tunnels. */
#include "egress-test-util.h"
#include "sbx-egress-proxy.h"
#include "sbx-egress-tunnel.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#define N_TUNNELS 1000
#define N_CLIENT_THREADS 4
/* bytes in flight per surviving tunnel while the other execution is released */
#define IN_FLIGHT (16 * 1024)

/* Waits (bounded, not timed) until @cond holds. */
#define WAIT_UNTIL(cond)                                        \
  G_STMT_START {                                                \
    for (int wait_i_ = 0; wait_i_ < 4000 && !(cond); wait_i_++) \
      g_usleep (5000);                                          \
    g_assert_true (cond);                                       \
  } G_STMT_END

static guint
count_dir (const char *path)
{
  g_autoptr(GDir) dir = g_dir_open (path, 0, NULL);
  guint n = 0;

  g_assert_nonnull (dir);
  while (g_dir_read_name (dir) != NULL)
    n++;
  return n;
}

/* Per tunnel in this one process: the client socket, the proxy's two, the
 * server's, and two pipes (4 fds) of the splice relay.  FALSE (skipped, with
 * the reason) when the hard limit cannot hold them. */
static gboolean
raise_nofile (void)
{
  struct rlimit rl;
  rlim_t want = 8 * N_TUNNELS + 512;

  g_assert_cmpint (getrlimit (RLIMIT_NOFILE, &rl), ==, 0);
  if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < want)
    {
      g_test_skip_printf ("RLIMIT_NOFILE hard limit %lu is below %lu: cannot hold %d tunnels in one process",
                          (unsigned long) rl.rlim_max, (unsigned long) want, N_TUNNELS);
      return FALSE;
    }
  if (rl.rlim_cur < want)
    {
      rl.rlim_cur = want;
      g_assert_cmpint (setrlimit (RLIMIT_NOFILE, &rl), ==, 0);
    }
  return TRUE;
}

typedef struct
{
  EgressTestHost  *th;
  EgressTestRoute *route;
  TestServer      *echo;
  char            *target;
  char            *authority;
  guint            fds_base;
  guint            threads_base;
  char            *auth[2];       /* CONNECT: A's and B's Proxy-Authorization */
  guint16          forward[2];    /* raw: A's and B's forwarder ports */
} Fixture;

static void
fixture_setup (Fixture       *f,
               gconstpointer  data)
{
  g_autofree char *error = NULL;

  f->th = egress_test_host_new (SBX_HOST_FEATURE_EGRESS_V1);
  f->route = egress_test_route_start (f->th, "direct", &error);
  g_assert_null (error);
  f->echo = test_server_new (TEST_SERVER_ECHO, NULL);
  f->target = g_strdup_printf ("tcp:127.0.0.1:%u", test_server_get_port (f->echo));
  f->authority = g_strdup_printf ("127.0.0.1:%u", test_server_get_port (f->echo));
}

static void
fixture_teardown (Fixture       *f,
                  gconstpointer  data)
{
  egress_test_route_stop (f->route);
  test_server_free (f->echo);
  egress_test_host_free (f->th);
  g_free (f->target);
  g_free (f->authority);
  g_free (f->auth[0]);
  g_free (f->auth[1]);
}

/* The baseline: the route and the server running, one tunnel opened and
 * closed (GIO creates some state lazily, once). */
static void
take_baseline (Fixture *f)
{
  const char *targets[] = { f->target, NULL };
  g_autofree char *cred = egress_test_authorize (f->route, "warm-up", targets);
  g_autofree char *auth = egress_test_auth_header ("warm-up", cred);
  GSocket *s = test_connect_request (f->route->port, f->authority, auth, 200, NULL);
  guint8 b[1];

  test_send_all (s, "w", 1);
  test_read_exact (s, b, 1);
  g_object_unref (s);
  g_assert_null (egress_test_revoke (f->route, "warm-up"));
  WAIT_UNTIL (sbx_egress_proxy_get_n_connections (f->route->route) == 0);
  /* the server closes its side of the warm-up tunnel when it sees EOF, on
   * its own thread: a baseline taken before that counts its descriptor,
   * and nothing later ever returns to it */
  WAIT_UNTIL (test_server_get_n_live (f->echo) == 0);
  /* the route keeps a bounded number of idle relay pipes for reuse: the
   * baseline is without them */
  f->fds_base = count_dir ("/proc/self/fd") - 2 * sbx_egress_proxy_get_n_pooled_pipes (f->route->route);
  f->threads_base = count_dir ("/proc/self/task");
}

/* The pool is bounded: 1,000 tunnels do not leave 1,000 pipes behind. */
static guint
pooled_pipes (Fixture *f)
{
  guint n = sbx_egress_proxy_get_n_pooled_pipes (f->route->route);

  g_assert_cmpuint (n, <=, 32);
  return n;
}

/* Every tunnel gone and the proxy still running: the fds and threads are
 * what they were before the first tunnel. */
static void
assert_back_to_baseline (Fixture *f)
{
  guint fds, threads;

  WAIT_UNTIL (sbx_egress_proxy_get_n_connections (f->route->route) == 0);
  /* the server closes its side when it sees EOF: give it the time */
  WAIT_UNTIL (count_dir ("/proc/self/fd") - 2 * pooled_pipes (f) == f->fds_base);
  fds = count_dir ("/proc/self/fd") - 2 * pooled_pipes (f);
  threads = count_dir ("/proc/self/task");
  g_test_message ("fds %u -> %u (and %u pooled pipes), threads %u -> %u", f->fds_base, fds, pooled_pipes (f),
                  f->threads_base, threads);
  g_assert_cmpuint (fds, ==, f->fds_base);
  g_assert_cmpuint (threads, ==, f->threads_base);
}

/* The route still serves promptly (its thread is not stuck). */
static void
assert_route_alive (Fixture *f)
{
  const char *targets[] = { f->target, NULL };
  g_autofree char *cred = egress_test_authorize (f->route, "alive", targets);
  g_autofree char *auth = egress_test_auth_header ("alive", cred);
  GSocket *s = test_connect_request (f->route->port, f->authority, auth, 200, NULL);
  guint8 b[5];

  test_send_all (s, "alive", 5);
  test_read_exact (s, b, 5);
  g_assert_cmpmem (b, 5, "alive", 5);
  g_object_unref (s);
  g_assert_null (egress_test_revoke (f->route, "alive"));
}

/* ------------------------------------------------------------------------- */
/* Opening from several threads at once                                       */
/* ------------------------------------------------------------------------- */

typedef GSocket *(*OpenFunc) (Fixture *f, guint index);

typedef struct
{
  Fixture  *f;
  OpenFunc  open;
  GSocket **sockets;
  guint     first;
  guint     step;
} Opener;

static gpointer
opener_thread (gpointer data)
{
  Opener *o = data;

  for (guint i = o->first; i < N_TUNNELS; i += o->step)
    o->sockets[i] = o->open (o->f, i);
  return NULL;
}

static void
open_concurrently (Fixture  *f,
                   OpenFunc  open,
                   GSocket **sockets)
{
  Opener openers[N_CLIENT_THREADS];
  GThread *threads[N_CLIENT_THREADS];

  for (guint t = 0; t < N_CLIENT_THREADS; t++)
    {
      openers[t] = (Opener) { .f = f, .open = open, .sockets = sockets, .first = t, .step = N_CLIENT_THREADS };
      threads[t] = g_thread_new ("opener", opener_thread, &openers[t]);
    }
  for (guint t = 0; t < N_CLIENT_THREADS; t++)
    g_thread_join (threads[t]);
  for (guint i = 0; i < N_TUNNELS; i++)
    g_assert_nonnull (sockets[i]);
}

/* Each tunnel carries its own index, all at once. */
static void
echo_all (GSocket **sockets)
{
  for (guint i = 0; i < N_TUNNELS; i++)
    {
      guint32 tag = i;

      test_send_all (sockets[i], &tag, sizeof tag);
    }
  for (guint i = 0; i < N_TUNNELS; i++)
    {
      guint32 tag = G_MAXUINT32;

      test_read_exact (sockets[i], (guint8 *) &tag, sizeof tag);
      g_assert_cmpuint (tag, ==, i);
    }
}

/* B's tunnels (the odd ones) still echo. */
static void
echo_odd (GSocket **sockets)
{
  for (guint i = 1; i < N_TUNNELS; i += 2)
    test_send_all (sockets[i], "b", 1);
  for (guint i = 1; i < N_TUNNELS; i += 2)
    {
      guint8 b = 0;

      test_read_exact (sockets[i], &b, 1);
      g_assert_cmpuint (b, ==, 'b');
    }
}

/* Even tunnels belong to execution A, odd ones to B.  B's tunnels get
 * IN_FLIGHT bytes each, A is released while those bytes travel; then A's
 * tunnels end without a byte and B's deliver every byte, in order. */
static char *
release_a_under_load (Fixture    *f,
                      GSocket   **sockets,
                      const char *exec_a)
{
  char *denial = NULL;
  g_autofree guint8 *out = g_malloc (IN_FLIGHT);
  g_autofree guint8 *in = g_malloc (IN_FLIGHT);

  for (guint i = 0; i < IN_FLIGHT; i++)
    out[i] = (guint8) (i * 7 + 3);
  for (guint i = 1; i < N_TUNNELS; i += 2)
    test_send_all (sockets[i], out, IN_FLIGHT);
  g_assert_true (sbx_egress_proxy_revoke (f->route->route, exec_a, &denial));
  for (guint i = 0; i < N_TUNNELS; i += 2)
    {
      g_autoptr(GByteArray) rest = test_read_all (sockets[i], 16);

      /* EOF (or a reset) and not a byte: the tunnel is gone */
      g_assert_cmpuint (rest->len, ==, 0);
    }
  WAIT_UNTIL (sbx_egress_proxy_get_n_connections (f->route->route) == N_TUNNELS / 2);
  for (guint i = 1; i < N_TUNNELS; i += 2)
    {
      memset (in, 0, IN_FLIGHT);
      test_read_exact (sockets[i], in, IN_FLIGHT);
      g_assert_cmpmem (in, IN_FLIGHT, out, IN_FLIGHT);
    }
  /* and they still carry new bytes */
  echo_odd (sockets);
  return denial;
}

static void
close_all (GSocket **sockets)
{
  for (guint i = 0; i < N_TUNNELS; i++)
    g_clear_object (&sockets[i]);
}

/* ------------------------------------------------------------------------- */
/* CONNECT tunnels                                                            */
/* ------------------------------------------------------------------------- */

static GSocket *
open_connect (Fixture *f,
              guint    index)
{
  return test_connect_request (f->route->port, f->authority, f->auth[index % 2], 200, NULL);
}

static void
test_connect_thousand (Fixture       *f,
                       gconstpointer  data)
{
  const char *targets[] = { NULL, NULL };
  g_autofree GSocket **sockets = g_new0 (GSocket *, N_TUNNELS);
  g_autofree char *cred_a = NULL;
  g_autofree char *cred_b = NULL;

  if (!raise_nofile ())
    return;
  targets[0] = f->target;
  take_baseline (f);
  cred_a = egress_test_authorize (f->route, "conn-a", targets);
  cred_b = egress_test_authorize (f->route, "conn-b", targets);
  f->auth[0] = egress_test_auth_header ("conn-a", cred_a);
  f->auth[1] = egress_test_auth_header ("conn-b", cred_b);

  open_concurrently (f, open_connect, sockets);
  g_assert_cmpuint (sbx_egress_proxy_get_n_connections (f->route->route), ==, N_TUNNELS);
  echo_all (sockets);
  g_assert_null (release_a_under_load (f, sockets, "conn-a"));
  /* A's credential is dead under load too; B's is not */
  g_object_unref (test_connect_request (f->route->port, f->authority, f->auth[0], 407, NULL));
  close_all (sockets);
  g_assert_null (egress_test_revoke (f->route, "conn-b"));
  assert_back_to_baseline (f);
  assert_route_alive (f);
}

/* ------------------------------------------------------------------------- */
/* Raw tunnels (the forwarders' path)                                         */
/* ------------------------------------------------------------------------- */

static int
listen_loopback (guint16 *port)
{
  struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
  socklen_t len = sizeof a;
  int fd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

  g_assert_cmpint (fd, >=, 0);
  g_assert_cmpint (bind (fd, (struct sockaddr *) &a, sizeof a), ==, 0);
  g_assert_cmpint (listen (fd, 4096), ==, 0);
  g_assert_cmpint (getsockname (fd, (struct sockaddr *) &a, &len), ==, 0);
  *port = ntohs (a.sin_port);
  return fd;
}

static gboolean
connect_refused (guint16 port)
{
  struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons (port),
                           .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
  int fd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  gboolean refused;

  g_assert_cmpint (fd, >=, 0);
  refused = connect (fd, (struct sockaddr *) &a, sizeof a) != 0 && errno == ECONNREFUSED;
  close (fd);
  return refused;
}

static GSocket *
open_raw (Fixture *f,
          guint    index)
{
  return test_connect_loopback (f->forward[index % 2]);
}

static void
test_raw_thousand (Fixture       *f,
                   gconstpointer  data)
{
  SbxEgressProxy *proxy = f->route->route;
  const char *targets[] = { NULL, NULL };
  g_autofree GSocket **sockets = g_new0 (GSocket *, N_TUNNELS);
  g_autoptr(GError) error = NULL;
  g_autofree char *cred_a = NULL;
  g_autofree char *cred_b = NULL;
  g_autofree char *denial = NULL;
  guint16 unapproved_port;
  int fd;

  if (!raise_nofile ())
    return;
  targets[0] = f->target;
  take_baseline (f);
  cred_a = egress_test_authorize (f->route, "raw-a", targets);
  cred_b = egress_test_authorize (f->route, "raw-b", targets);

  /* the API refuses what it can judge at once, and takes the fd anyway */
  fd = listen_loopback (&unapproved_port);
  g_assert_false (sbx_egress_tunnel_serve_fd (proxy, "nobody", f->target, fd, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND);
  g_clear_error (&error);
  g_assert_cmpint (fcntl (fd, F_GETFD), ==, -1);
  fd = listen_loopback (&unapproved_port);
  g_assert_false (sbx_egress_tunnel_serve_fd (proxy, "raw-a", "tcp:127.0.0.1:0080", fd, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_assert_cmpint (fcntl (fd, F_GETFD), ==, -1);

  /* a forwarder for a target A is not approved for: closed, no dial,
   * and the denial recorded (positive control below: the approved one) */
  fd = listen_loopback (&unapproved_port);
  g_assert_true (sbx_egress_tunnel_serve_fd (proxy, "raw-a", "tcp:127.0.0.1:9", fd, &error));
  g_assert_no_error (error);
  {
    guint dials = sbx_egress_proxy_get_n_dials (proxy);
    GSocket *s = test_connect_loopback (unapproved_port);
    g_autoptr(GByteArray) rest = NULL;

    test_send_all (s, "x", 1);
    rest = test_read_all (s, 16);
    g_assert_cmpuint (rest->len, ==, 0);
    g_object_unref (s);
    g_assert_cmpuint (sbx_egress_proxy_get_n_dials (proxy), ==, dials);
  }

  fd = listen_loopback (&f->forward[0]);
  g_assert_true (sbx_egress_tunnel_serve_fd (proxy, "raw-a", f->target, fd, &error));
  g_assert_no_error (error);
  fd = listen_loopback (&f->forward[1]);
  g_assert_true (sbx_egress_tunnel_serve_fd (proxy, "raw-b", f->target, fd, &error));
  g_assert_no_error (error);

  open_concurrently (f, open_raw, sockets);
  /* a raw tunnel registers when its connection is accepted, which the
   * client's connect() does not wait for */
  WAIT_UNTIL (sbx_egress_proxy_get_n_connections (proxy) == N_TUNNELS);
  echo_all (sockets);

  /* a tunnel opened on a socket the caller already holds */
  {
    int pair[2];
    guint32 word = 0x5a5a5a5a, back = 0;

    g_assert_cmpint (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), ==, 0);
    g_assert_true (sbx_egress_tunnel_open (proxy, "raw-b", f->target, pair[1], &error));
    g_assert_no_error (error);
    g_assert_cmpint (write (pair[0], &word, sizeof word), ==, sizeof word);
    g_assert_cmpint (read (pair[0], &back, sizeof back), ==, sizeof back);
    g_assert_cmpuint (back, ==, word);
    close (pair[0]);
    g_assert_false (sbx_egress_tunnel_open (proxy, "nobody", f->target, -1, &error));
    g_clear_error (&error);
  }
  WAIT_UNTIL (sbx_egress_proxy_get_n_connections (proxy) == N_TUNNELS);

  /* releasing A under load closes its tunnels, and its forwarders */
  denial = release_a_under_load (f, sockets, "raw-a");
  g_assert_nonnull (denial);
  g_assert_nonnull (strstr (denial, "tcp:127.0.0.1:9 (not approved"));
  /* A's forwarders are closed: connecting to them is refused (B's, the
   * positive control, still accepts) */
  WAIT_UNTIL (connect_refused (f->forward[0]) && connect_refused (unapproved_port));
  g_assert_false (connect_refused (f->forward[1]));
  close_all (sockets);
  g_assert_true (sbx_egress_proxy_revoke (proxy, "raw-b", NULL));
  assert_back_to_baseline (f);
  assert_route_alive (f);
}

/* A raw tunnel on an upstream route whose proxy refuses the CONNECT: the
 * client's socket is closed, the only dial was the upstream's, and the
 * target (reachable directly: the positive control) saw no connection. */
static void
test_raw_upstream_refuses (void)
{
  TestServer *echo = test_server_new (TEST_SERVER_ECHO, NULL);
  TestServer *refuses = test_server_new (TEST_SERVER_SCRIPTED, "HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n");
  g_autofree char *config = g_strdup_printf ("http://127.0.0.1:%u", test_server_get_port (refuses));
  g_autofree char *target = g_strdup_printf ("tcp:127.0.0.1:%u", test_server_get_port (echo));
  const char *targets[] = { target, NULL };
  g_autoptr(GError) error = NULL;
  g_autofree char *cred = NULL;
  SbxEgressProxy *proxy = sbx_egress_proxy_new (config, &error);
  g_autoptr(GByteArray) rest = NULL;
  GSocket *s;
  guint16 port;
  int fd;

  g_assert_no_error (error);
  cred = sbx_egress_proxy_authorize (proxy, "up", targets, &error);
  g_assert_no_error (error);
  fd = listen_loopback (&port);
  g_assert_true (sbx_egress_tunnel_serve_fd (proxy, "up", target, fd, &error));
  g_assert_no_error (error);
  s = test_connect_loopback (port);
  test_send_all (s, "x", 1);
  rest = test_read_all (s, 16);
  g_assert_cmpuint (rest->len, ==, 0);
  g_object_unref (s);
  g_assert_cmpuint (sbx_egress_proxy_get_n_dials (proxy), ==, 1);
  g_assert_cmpuint (test_server_get_n_accepted (refuses), ==, 1);
  g_assert_cmpuint (test_server_get_n_accepted (echo), ==, 0);
  /* positive control: the target itself answers */
  s = test_connect_loopback (test_server_get_port (echo));
  g_object_unref (s);
  WAIT_UNTIL (test_server_get_n_accepted (echo) == 1);
  g_assert_true (sbx_egress_proxy_revoke (proxy, "up", NULL));
  sbx_egress_proxy_free (proxy);
  test_server_free (refuses);
  test_server_free (echo);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add ("/egress-tunnels/connect-thousand", Fixture, NULL, fixture_setup, test_connect_thousand,
              fixture_teardown);
  g_test_add ("/egress-tunnels/raw-thousand", Fixture, NULL, fixture_setup, test_raw_thousand, fixture_teardown);
  g_test_add_func ("/egress-tunnels/raw-upstream-refuses", test_raw_upstream_refuses);
  return g_test_run ();
}
