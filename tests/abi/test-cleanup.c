/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * <sbx/sbx-cleanup.h> on its own: no GLib, no library, as a plugin uses it.
 * Each case checks what the header promises at scope exit: an fd is closed
 * (and errno kept), a stolen fd or pointer is left alone, memory is freed
 * (the ASan phase sees a leak otherwise), a resource of one's own kind is
 * released exactly once.  TAP on stdout.
 */
#include "sbx-cleanup.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>

static int n_failed, n_run;

static void
check (int         ok,
       const char *name)
{
  n_run++;
  printf ("%s %d - %s\n", ok ? "ok" : "not ok", n_run, name);
  if (!ok)
    n_failed++;
}

static int
fd_is_open (int fd)
{
  return fcntl (fd, F_GETFD) >= 0;
}

static int released, released_value;

static int
release_counted (int value)
{
  released++;
  released_value = value;
  return 0;
}

/* A resource whose "none" value is 0, released through a function. */
SBX_DEFINE_CLEANUP (counted, int, 0, release_counted)

static int
scoped_fd (int keep)
{
  sbx_autofd int fd = open ("/dev/null", O_RDONLY | O_CLOEXEC);

  if (fd < 0)
    return -2;
  if (keep)
    return sbx_steal_fd (&fd);
  return fd; /* the number only: the fd is closed on the way out */
}

static int
errno_after_close (void)
{
  sbx_autofd int fd = open ("/dev/null", O_RDONLY | O_CLOEXEC);

  errno = ENOENT;
  return fd;
}

static char *
scoped_string (int keep)
{
  sbx_autofree char *text = strdup ("scoped");

  if (keep)
    return sbx_steal_pointer (&text);
  return NULL;
}

static void
scoped_counted (int value)
{
  sbx_auto (counted) int resource = value;

  (void) resource;
}

int
main (void)
{
  int   fd;
  char *kept;

  /* Positive control: an fd that is not closed stays open. */
  fd = scoped_fd (1);
  check (fd >= 0 && fd_is_open (fd), "a stolen fd survives the scope");
  close (fd);
  fd = scoped_fd (0);
  check (fd >= 0 && !fd_is_open (fd), "an sbx_autofd fd is closed at scope exit");

  errno = 0;
  fd = errno_after_close ();
  check (errno == ENOENT, "closing at scope exit keeps errno");
  check (!fd_is_open (fd), "... and the fd was closed");

  {
    int value = -1;

    sbx_clear_fd (&value);
    check (value == -1, "clearing -1 closes nothing and leaves -1");
  }

  kept = scoped_string (1);
  check (kept != NULL && strcmp (kept, "scoped") == 0, "a stolen pointer survives the scope");
  free (kept);
  check (scoped_string (0) == NULL, "an sbx_autofree pointer is freed at scope exit (ASan checks)");

  released = 0;
  scoped_counted (7);
  check (released == 1 && released_value == 7, "SBX_DEFINE_CLEANUP releases the value once");
  released = 0;
  scoped_counted (0);
  check (released == 0, "... and never the none value");

  printf ("1..%d\n", n_run);
  return n_failed == 0 ? 0 : 1;
}
