/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench-egress: the http-connect route against direct loopback, in one run.
 *
 *   bench-egress [--runs N] [--warmup N] [--megabytes M]
 *
 * Starts, on loopback, a server (echo for latency, sink for throughput) and
 * the egress proxy of plugins/egress-http (direct route, one execution
 * authorized for the server's target), then measures in the same process:
 *   connect latency: a fresh TCP connection to the server plus a 1-byte
 *     round trip, directly vs. through the proxy (connect, CONNECT, 200,
 *     the same round trip), median of N;
 *   throughput: M MiB written then half-closed, until the server's byte
 *     count comes back, directly vs. through a tunnel, best of 3.
 * Prints one line per measurement with the ratio tunnel / direct (latency)
 * and tunnel / direct (throughput), then the CPU time the whole process
 * spent per connect and per 100 MiB on each side (not a goal: it does not
 * depend on the machine's load, so it says what the tunnel costs when wall
 * times are noisy).  No assertions: numbers depend on the
 * machine; bench/run-egress.sh runs it.
 */
#include "sbx-egress-proxy.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------------------- */
/* Servers: one blocking thread per connection                                */
/* ------------------------------------------------------------------------- */

typedef struct
{
  int      listen_fd;
  guint16  port;
  gboolean sink;
} Server;

static void
nodelay (int fd)
{
  int one = 1;

  setsockopt (fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

static gpointer
serve_one (gpointer data)
{
  int fd = GPOINTER_TO_INT (((gpointer *) data)[0]);
  gboolean sink = GPOINTER_TO_INT (((gpointer *) data)[1]);
  char *local = g_malloc (256 * 1024);
  guint64 total = 0;

  g_free (data);
  nodelay (fd);
  for (;;)
    {
      ssize_t n = read (fd, local, 256 * 1024);

      if (n <= 0)
        break;
      total += (guint64) n;
      if (!sink && write (fd, local, (size_t) n) != n)
        break;
    }
  if (sink)
    (void) !write (fd, &total, sizeof total);
  close (fd);
  g_free (local);
  return NULL;
}

static gpointer
accept_loop (gpointer data)
{
  Server *s = data;

  for (;;)
    {
      int fd = accept4 (s->listen_fd, NULL, NULL, SOCK_CLOEXEC);
      gpointer *args;

      if (fd < 0)
        break;
      args = g_new (gpointer, 2);
      args[0] = GINT_TO_POINTER (fd);
      args[1] = GINT_TO_POINTER (s->sink);
      g_thread_unref (g_thread_new ("bench-conn", serve_one, args));
    }
  return NULL;
}

static int
listen_loopback (guint16 *port)
{
  struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
  socklen_t len = sizeof a;
  int fd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

  if (fd < 0 || bind (fd, (struct sockaddr *) &a, sizeof a) != 0 || listen (fd, 512) != 0 ||
      getsockname (fd, (struct sockaddr *) &a, &len) != 0)
    {
      perror ("bench-egress: listen");
      exit (1);
    }
  *port = ntohs (a.sin_port);
  return fd;
}

static Server *
server_start (gboolean sink)
{
  Server *s = g_new0 (Server, 1);

  s->sink = sink;
  s->listen_fd = listen_loopback (&s->port);
  g_thread_unref (g_thread_new ("bench-accept", accept_loop, s));
  return s;
}

/* ------------------------------------------------------------------------- */
/* Clients                                                                    */
/* ------------------------------------------------------------------------- */

static int
connect_loopback (guint16 port)
{
  struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons (port),
                           .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
  int fd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

  if (fd < 0 || connect (fd, (struct sockaddr *) &a, sizeof a) != 0)
    {
      perror ("bench-egress: connect");
      exit (1);
    }
  nodelay (fd);
  return fd;
}

static void
write_all (int         fd,
           const void *data,
           size_t      len)
{
  const char *p = data;

  while (len > 0)
    {
      ssize_t n = write (fd, p, len);

      if (n <= 0)
        {
          perror ("bench-egress: write");
          exit (1);
        }
      p += n;
      len -= (size_t) n;
    }
}

static void
read_exact (int    fd,
            void  *data,
            size_t len)
{
  char *p = data;

  while (len > 0)
    {
      ssize_t n = read (fd, p, len);

      if (n <= 0)
        {
          fprintf (stderr, "bench-egress: short read\n");
          exit (1);
        }
      p += n;
      len -= (size_t) n;
    }
}

/* A tunnel through the proxy to @port; returns the socket after the 200. */
static int
open_tunnel (guint16     proxy_port,
             guint16     port,
             const char *auth)
{
  int fd = connect_loopback (proxy_port);
  g_autofree char *req = g_strdup_printf ("CONNECT 127.0.0.1:%u HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n%s\r\n", port,
                                          port, auth);
  char head[512];
  size_t got = 0;

  write_all (fd, req, strlen (req));
  /* nothing follows the proxy's 200 head before we send, so the head is
   * read as a client reads it, in as few reads as it arrives in (not one
   * byte per read, which would bill the benchmark's own syscalls to the
   * tunnel) */
  while (got < 4 || memcmp (head + got - 4, "\r\n\r\n", 4) != 0)
    {
      ssize_t n = got < sizeof head ? read (fd, head + got, sizeof head - got) : -1;

      if (n <= 0)
        {
          fprintf (stderr, "bench-egress: no CONNECT answer\n");
          exit (1);
        }
      got += (size_t) n;
    }
  if (strncmp (head, "HTTP/1.1 200", 12) != 0)
    {
      fprintf (stderr, "bench-egress: CONNECT refused: %.*s\n", (int) got, head);
      exit (1);
    }
  return fd;
}

/* CPU time of the whole process (client, servers, proxy), in us: unlike
 * wall time, what a tunnel costs in it does not depend on the load of the
 * machine. */
static double
cpu_us (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double) ts.tv_sec * 1e6 + (double) ts.tv_nsec / 1e3;
}

static int
compare_doubles (const void *a,
                 const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;

  return x < y ? -1 : x > y ? 1 : 0;
}

static double
latency_once (guint16     proxy_port,
              guint16     port,
              const char *auth)
{
  gint64 start = g_get_monotonic_time ();
  int fd = auth != NULL ? open_tunnel (proxy_port, port, auth) : connect_loopback (port);
  char c = 'x';

  write_all (fd, &c, 1);
  read_exact (fd, &c, 1);
  close (fd);
  return (double) (g_get_monotonic_time () - start);
}

static double
throughput_once (guint16     proxy_port,
                 guint16     port,
                 const char *auth,
                 guint64     bytes)
{
  static char chunk[256 * 1024];
  gint64 start = g_get_monotonic_time ();
  int fd = auth != NULL ? open_tunnel (proxy_port, port, auth) : connect_loopback (port);
  guint64 left = bytes, echoed = 0;

  while (left > 0)
    {
      size_t n = left < sizeof chunk ? (size_t) left : sizeof chunk;

      write_all (fd, chunk, n);
      left -= n;
    }
  shutdown (fd, SHUT_WR);
  read_exact (fd, &echoed, sizeof echoed);
  close (fd);
  if (echoed != bytes)
    {
      fprintf (stderr, "bench-egress: server counted %" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT " bytes\n",
               echoed, bytes);
      exit (1);
    }
  return (double) bytes / (1024.0 * 1024.0) / ((double) (g_get_monotonic_time () - start) / 1e6);
}

int
main (int    argc,
      char **argv)
{
  g_autoptr(GError) error = NULL;
  int runs = 300, warmup = 30, megabytes = 512;
  Server *echo, *sink;
  SbxEgressProxy *proxy;
  guint16 proxy_port;
  int listen_fd;
  g_autofree double *direct = NULL;
  g_autofree double *tunnel = NULL;
  g_autofree char *echo_target = NULL;
  g_autofree char *sink_target = NULL;
  g_autofree char *credential = NULL;
  g_autofree char *auth = NULL;
  double best_direct = 0, best_tunnel = 0, med_direct, med_tunnel;
  double cpu_direct = 0, cpu_tunnel = 0, tp_cpu_direct = 0, tp_cpu_tunnel = 0;

  for (int i = 1; i < argc; i++)
    {
      if (strcmp (argv[i], "--runs") == 0 && i + 1 < argc)
        runs = atoi (argv[++i]);
      else if (strcmp (argv[i], "--warmup") == 0 && i + 1 < argc)
        warmup = atoi (argv[++i]);
      else if (strcmp (argv[i], "--megabytes") == 0 && i + 1 < argc)
        megabytes = atoi (argv[++i]);
      else
        {
          fprintf (stderr, "usage: bench-egress [--runs N] [--warmup N] [--megabytes M]\n");
          return 2;
        }
    }
  if (runs < 1 || warmup < 0 || megabytes < 1)
    return 2;

  echo = server_start (FALSE);
  sink = server_start (TRUE);
  proxy = sbx_egress_proxy_new ("direct", &error);
  if (proxy == NULL)
    {
      fprintf (stderr, "bench-egress: %s\n", error->message);
      return 1;
    }
  listen_fd = listen_loopback (&proxy_port);
  if (!sbx_egress_proxy_serve_fd (proxy, NULL, listen_fd, &error))
    {
      fprintf (stderr, "bench-egress: %s\n", error->message);
      return 1;
    }
  echo_target = g_strdup_printf ("tcp:127.0.0.1:%u", echo->port);
  sink_target = g_strdup_printf ("tcp:127.0.0.1:%u", sink->port);
  {
    const char *targets[] = { echo_target, sink_target, NULL };
    g_autofree char *pair = NULL;
    g_autofree char *b64 = NULL;

    credential = sbx_egress_proxy_authorize (proxy, "bench", targets, &error);
    if (credential == NULL)
      {
        fprintf (stderr, "bench-egress: %s\n", error->message);
        return 1;
      }
    pair = g_strconcat ("bench:", credential, NULL);
    b64 = g_base64_encode ((const guchar *) pair, strlen (pair));
    auth = g_strdup_printf ("Proxy-Authorization: Basic %s\r\n", b64);
  }

  /* connect latency, interleaved so drift hits both equally */
  direct = g_new (double, runs);
  tunnel = g_new (double, runs);
  for (int i = 0; i < warmup; i++)
    {
      latency_once (proxy_port, echo->port, NULL);
      latency_once (proxy_port, echo->port, auth);
    }
  for (int i = 0; i < runs; i++)
    {
      double c0 = cpu_us (), c1, c2;

      direct[i] = latency_once (proxy_port, echo->port, NULL);
      c1 = cpu_us ();
      tunnel[i] = latency_once (proxy_port, echo->port, auth);
      c2 = cpu_us ();
      cpu_direct += c1 - c0;
      cpu_tunnel += c2 - c1;
    }
  qsort (direct, (size_t) runs, sizeof (double), compare_doubles);
  qsort (tunnel, (size_t) runs, sizeof (double), compare_doubles);
  med_direct = direct[runs / 2];
  med_tunnel = tunnel[runs / 2];

  /* throughput, best of 3 each, interleaved */
  for (int i = 0; i < 3; i++)
    {
      double c0 = cpu_us ();
      double d = throughput_once (proxy_port, sink->port, NULL, (guint64) megabytes << 20);
      double c1 = cpu_us ();
      double t = throughput_once (proxy_port, sink->port, auth, (guint64) megabytes << 20);
      double c2 = cpu_us ();

      tp_cpu_direct += c1 - c0;
      tp_cpu_tunnel += c2 - c1;

      best_direct = MAX (best_direct, d);
      best_tunnel = MAX (best_tunnel, t);
    }

  printf ("%-34s %12s %12s %8s\n", "measure", "direct", "tunnel", "ratio");
  printf ("%-34s %10.1f us %9.1f us %7.2fx  (goal <= 1.5)\n", "connect latency (median)", med_direct, med_tunnel,
          med_tunnel / med_direct);
  printf ("%-34s %8.0f MiB/s %6.0f MiB/s %7.2fx  (goal >= 0.9)\n", "throughput (best of 3)", best_direct,
          best_tunnel, best_tunnel / best_direct);
  /* not goals: where the difference comes from when the machine is busy */
  printf ("%-34s %10.1f us %9.1f us %7.2fx\n", "cpu per connect (mean, process)", cpu_direct / runs,
          cpu_tunnel / runs, cpu_tunnel / cpu_direct);
  printf ("%-34s %10.2f ms %9.2f ms %7.2fx\n", "cpu per 100 MiB (mean, process)",
          tp_cpu_direct / (3.0 * megabytes) * 100 / 1000, tp_cpu_tunnel / (3.0 * megabytes) * 100 / 1000,
          tp_cpu_tunnel / tp_cpu_direct);
  printf ("(%d latency runs after %d warm-up, %d MiB per throughput run, %u CPUs)\n", runs, warmup, megabytes,
          g_get_num_processors ());

  sbx_egress_proxy_revoke (proxy, "bench", NULL);
  sbx_egress_proxy_free (proxy);
  return 0;
}
