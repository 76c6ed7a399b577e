/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sbx-conformance-probe: the program sbx-conformance runs INSIDE a sandbox
 * (and, as the positive control, outside it).  Each verb attempts one thing
 * and answers with its exit status: 0 = it worked, 10 = it was refused or
 * failed (the errno text on stdout), 2 = usage.  Plain C and libc only, so it
 * runs wherever the runtime closure (/usr, /lib) is visible; sbx-conformance
 * copies it into the sandbox's workspace.
 *
 *   write PATH | mkdir PATH | read PATH (contents printed) | list DIR (names printed)
 *   connect IPV4 PORT          TCP connect
 *   signal PID                 kill (PID, 0)
 *   see PID                    /proc/PID exists
 *   env NAME                   NAME is set (value printed)
 *   forks N                    fork up to N sleeping children; prints how many
 *                              succeeded, kills them, exits 0
 *   output N                   N bytes on stdout
 *   linger MARKER [setsid]     start "hang MARKER" in the background (in a
 *                              new session with "setsid") and exit
 *   tree MARKER                start "hang MARKER" in the background, then
 *                              become "hang MARKER" too
 *   hang MARKER                sleep until killed
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sbx/sbx-cleanup.h>

SBX_DEFINE_CLEANUP (dir, DIR *, NULL, closedir)

#define WORKED  0
#define REFUSED 10
#define USAGE   2

static int
refused (const char *what)
{
  printf ("refused: %s: %s\n", what, strerror (errno));
  return REFUSED;
}

static void
hang (void)
{
  for (;;)
    pause ();
}

/* Starts "SELF hang MARKER" as a child; returns its pid or -1. */
static pid_t
start_hang (const char *self,
            const char *marker,
            int         new_session)
{
  pid_t pid = fork ();

  if (pid == 0)
    {
      char *const argv[] = { (char *) self, (char *) "hang", (char *) marker, NULL };

      if (new_session)
        setsid ();
      execv (self, argv);
      _exit (127);
    }
  return pid;
}

int
main (int    argc,
      char **argv)
{
  const char *verb;

  if (argc < 3)
    return USAGE;
  verb = argv[1];

  if (strcmp (verb, "write") == 0)
    {
      sbx_autofd int fd = open (argv[2], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

      if (fd < 0)
        return refused ("open");
      if (write (fd, "x\n", 2) != 2)
        return refused ("write");
      return WORKED;
    }
  if (strcmp (verb, "mkdir") == 0)
    return mkdir (argv[2], 0755) == 0 ? WORKED : refused ("mkdir");
  if (strcmp (verb, "read") == 0)
    {
      char           buf[256];
      sbx_autofd int fd = open (argv[2], O_RDONLY | O_CLOEXEC);
      ssize_t        n;

      if (fd < 0)
        return refused ("open");
      n = read (fd, buf, sizeof buf - 1);
      if (n < 0)
        return refused ("read");
      buf[n] = '\0';
      printf ("%s", buf);
      return WORKED;
    }
  if (strcmp (verb, "list") == 0)
    {
      sbx_auto (dir) DIR *dir = opendir (argv[2]);
      struct dirent      *entry;
      int                 n = 0;

      if (dir == NULL)
        return refused ("opendir");
      while ((entry = readdir (dir)) != NULL)
        if (strcmp (entry->d_name, ".") != 0 && strcmp (entry->d_name, "..") != 0)
          {
            printf ("%s\n", entry->d_name);
            n++;
          }
      printf ("%d entries\n", n);
      /* An empty view of a non-empty directory is not a read of it. */
      return n > 0 ? WORKED : REFUSED;
    }
  if (strcmp (verb, "connect") == 0 && argc >= 4)
    {
      struct sockaddr_in addr;
      sbx_autofd int     fd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

      if (fd < 0)
        return refused ("socket");
      memset (&addr, 0, sizeof addr);
      addr.sin_family = AF_INET;
      addr.sin_port = htons ((uint16_t) atoi (argv[3]));
      if (inet_pton (AF_INET, argv[2], &addr.sin_addr) != 1)
        return USAGE;
      if (connect (fd, (struct sockaddr *) &addr, sizeof addr) < 0)
        return refused ("connect");
      return WORKED;
    }
  if (strcmp (verb, "signal") == 0)
    return kill ((pid_t) atol (argv[2]), 0) == 0 ? WORKED : refused ("kill");
  if (strcmp (verb, "see") == 0)
    {
      char path[64];

      snprintf (path, sizeof path, "/proc/%ld", atol (argv[2]));
      return access (path, F_OK) == 0 ? WORKED : refused ("access");
    }
  if (strcmp (verb, "env") == 0)
    {
      const char *value = getenv (argv[2]);

      if (value == NULL)
        {
          printf ("unset\n");
          return REFUSED;
        }
      printf ("%s\n", value);
      return WORKED;
    }
  if (strcmp (verb, "forks") == 0)
    {
      long   want = atol (argv[2]);
      pid_t *pids = calloc ((size_t) (want > 0 ? want : 1), sizeof *pids);
      long   n = 0;

      if (pids == NULL)
        return refused ("calloc");
      for (; n < want; n++)
        {
          pid_t pid = fork ();

          if (pid == 0)
            hang ();
          if (pid < 0)
            break;
          pids[n] = pid;
        }
      printf ("%ld\n", n);
      fflush (stdout);
      for (long i = 0; i < n; i++)
        kill (pids[i], SIGKILL);
      for (long i = 0; i < n; i++)
        waitpid (pids[i], NULL, 0);
      free (pids);
      return WORKED;
    }
  if (strcmp (verb, "output") == 0)
    {
      char block[4096];
      long left = atol (argv[2]);

      memset (block, 'x', sizeof block);
      while (left > 0)
        {
          size_t  chunk = left < (long) sizeof block ? (size_t) left : sizeof block;
          ssize_t w = write (STDOUT_FILENO, block, chunk);

          if (w <= 0)
            return refused ("write");
          left -= w;
        }
      return WORKED;
    }
  if (strcmp (verb, "linger") == 0)
    {
      int new_session = argc >= 4 && strcmp (argv[3], "setsid") == 0;

      if (start_hang (argv[0], argv[2], new_session) < 0)
        return refused ("fork");
      /* Give the child time to exec, so the marker is in its cmdline when
       * the target exits. */
      usleep (200 * 1000);
      return WORKED;
    }
  if (strcmp (verb, "tree") == 0)
    {
      if (start_hang (argv[0], argv[2], 0) < 0)
        return refused ("fork");
      {
        char *const hang_argv[] = { argv[0], (char *) "hang", argv[2], NULL };

        execv (argv[0], hang_argv);
      }
      return refused ("execv");
    }
  if (strcmp (verb, "hang") == 0)
    hang ();
  return USAGE;
}
