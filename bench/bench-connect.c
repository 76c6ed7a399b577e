/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench-connect: the latency of connect(2), TCP and unix, where it runs.
 *
 *   bench-connect RUNS WARMUP DIR
 *
 * Listens on 127.0.0.1 (an ephemeral port) and on DIR/bench-connect.sock,
 * then times RUNS connects of a fresh socket to each (after WARMUP
 * untimed ones), interleaved, accepting and closing each connection outside
 * the timed span.  Prints "tcp MEDIAN_NS MIN_NS" and "unix MEDIAN_NS
 * MIN_NS".  run-connect.sh runs it outside and inside sbx run at both
 * rungs, where every connect goes through the connect supervisor
 * (docs/linux-backend.md), and prints the ratios.  Static where the
 * toolchain allows (it runs in the sandbox); no timed assertion.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static int64_t
now_ns (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int
compare (const void *a, const void *b)
{
  int64_t x = *(const int64_t *) a, y = *(const int64_t *) b;

  return x < y ? -1 : x > y;
}

/* One timed connect to @addr, or -1. */
static int64_t
one (int listener, int family, const struct sockaddr *addr, socklen_t len)
{
  int fd = socket (family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int64_t start, took;
  int c;

  if (fd < 0)
    return -1;
  start = now_ns ();
  if (connect (fd, addr, len) != 0)
    {
      perror ("bench-connect: connect");
      close (fd);
      return -1;
    }
  took = now_ns () - start;
  c = accept4 (listener, NULL, NULL, SOCK_CLOEXEC);
  if (c >= 0)
    close (c);
  close (fd);
  return took;
}

int
main (int argc, char **argv)
{
  struct sockaddr_in sin = { 0 };
  struct sockaddr_un sun = { 0 };
  socklen_t sin_len = sizeof sin;
  int runs, warmup, tcp, unx;
  int64_t *t_tcp, *t_unix;

  if (argc != 4)
    {
      fprintf (stderr, "usage: bench-connect RUNS WARMUP DIR\n");
      return 2;
    }
  runs = atoi (argv[1]);
  warmup = atoi (argv[2]);
  if (runs < 1 || warmup < 0)
    return 2;
  tcp = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sin.sin_family = AF_INET;
  sin.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
  if (tcp < 0 || bind (tcp, (struct sockaddr *) &sin, sizeof sin) != 0 || listen (tcp, 64) != 0
      || getsockname (tcp, (struct sockaddr *) &sin, &sin_len) != 0)
    {
      perror ("bench-connect: tcp listener");
      return 1;
    }
  unx = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sun.sun_family = AF_UNIX;
  snprintf (sun.sun_path, sizeof sun.sun_path, "%s/bench-connect.sock", argv[3]);
  unlink (sun.sun_path);
  if (unx < 0 || bind (unx, (struct sockaddr *) &sun, sizeof sun) != 0 || listen (unx, 64) != 0)
    {
      perror ("bench-connect: unix listener");
      return 1;
    }
  t_tcp = calloc ((size_t) runs, sizeof *t_tcp);
  t_unix = calloc ((size_t) runs, sizeof *t_unix);
  for (int i = -warmup; i < runs; i++)
    {
      int64_t a = one (tcp, AF_INET, (struct sockaddr *) &sin, sizeof sin);
      int64_t b = one (unx, AF_UNIX, (struct sockaddr *) &sun, sizeof sun);

      if (a < 0 || b < 0)
        return 1;
      if (i >= 0)
        {
          t_tcp[i] = a;
          t_unix[i] = b;
        }
    }
  unlink (sun.sun_path);
  qsort (t_tcp, (size_t) runs, sizeof *t_tcp, compare);
  qsort (t_unix, (size_t) runs, sizeof *t_unix, compare);
  printf ("tcp %lld %lld\n", (long long) t_tcp[runs / 2], (long long) t_tcp[0]);
  printf ("unix %lld %lld\n", (long long) t_unix[runs / 2], (long long) t_unix[0]);
  free (t_tcp);
  free (t_unix);
  return 0;
}
