/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench-stamp: the target of the exec-latency benchmark.  Writes the
 * CLOCK_MONOTONIC time at which it started running (nanoseconds, decimal)
 * to stdout and exits 0.  Linked statically where the toolchain can (no
 * dynamic loader between the exec and the stamp), so "the stamp" is as
 * close to "the exec" as a program can tell.  CLOCK_MONOTONIC is not
 * namespaced by anything sbx creates, so the parent and a sandboxed child
 * read the same clock.
 */
#include <stdio.h>
#include <time.h>

int
main (void)
{
  struct timespec now;

  if (clock_gettime (CLOCK_MONOTONIC, &now) != 0)
    return 1;
  printf ("%lld\n", (long long) now.tv_sec * 1000000000LL + now.tv_nsec);
  return 0;
}
