/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench-startup: start-up commands timed interleaved, so that a change in
 * the machine's load during the measurement hits every command alike.
 * hyperfine runs one command's runs, then the next command's: on a shared
 * host whose load drifts, its ratios of one command to another move with
 * the drift (the same build gave 1.5 and 1.9 for one ratio in two runs).
 * Here round r runs every command once, in an order rotated by r, and each
 * run is timed twice: wall time (posix_spawn to the end of wait4) and the
 * CPU time the kernel charged to the process and its children (user +
 * system, from wait4's rusage), which waiting for a CPU does not inflate.
 *
 * Usage: bench-startup RUNS WARMUP NAME COMMAND [NAME COMMAND]...
 * COMMAND is split on spaces (no quoting).  Prints one line per command:
 *   startup NAME WALL_MEDIAN_MS CPU_MEDIAN_MS WALL_MIN_MS
 * (the minimum: the run least disturbed by the host's other work).
 * stdout and stderr of the commands go to /dev/null; a command that fails
 * (non-zero exit) stops the benchmark with a message.
 */
#include <glib.h>

#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

typedef struct
{
  const char *name;
  char      **argv;
  GArray     *wall;  /* double, ms */
  GArray     *cpu;   /* double, ms */
} Command;

static double
now_ms (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (double) ts.tv_sec * 1000.0 + (double) ts.tv_nsec / 1e6;
}

static double
timeval_ms (const struct timeval *tv)
{
  return (double) tv->tv_sec * 1000.0 + (double) tv->tv_usec / 1000.0;
}

static int
compare_doubles (gconstpointer a,
                 gconstpointer b)
{
  double x = *(const double *) a, y = *(const double *) b;

  return x < y ? -1 : x > y ? 1 : 0;
}

static double
median (GArray *values)
{
  g_array_sort (values, compare_doubles);
  return g_array_index (values, double, values->len / 2);
}

/* Runs @command once; returns FALSE (with a message) when it failed. */
static gboolean
run_once (Command *command,
          gboolean record)
{
  posix_spawn_file_actions_t actions;
  struct rusage usage;
  double start, end;
  pid_t pid;
  int status, rc;

  posix_spawn_file_actions_init (&actions);
  posix_spawn_file_actions_addopen (&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen (&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  start = now_ms ();
  rc = posix_spawn (&pid, command->argv[0], &actions, NULL, command->argv, environ);
  posix_spawn_file_actions_destroy (&actions);
  if (rc != 0)
    {
      fprintf (stderr, "bench-startup: %s: cannot run %s: %s\n", command->name, command->argv[0], strerror (rc));
      return FALSE;
    }
  if (wait4 (pid, &status, 0, &usage) != pid)
    {
      perror ("bench-startup: wait4");
      return FALSE;
    }
  end = now_ms ();
  if (!WIFEXITED (status) || WEXITSTATUS (status) != 0)
    {
      fprintf (stderr, "bench-startup: %s: %s exited with status 0x%x\n", command->name, command->argv[0], status);
      return FALSE;
    }
  if (record)
    {
      double wall = end - start;
      double cpu = timeval_ms (&usage.ru_utime) + timeval_ms (&usage.ru_stime);

      g_array_append_val (command->wall, wall);
      g_array_append_val (command->cpu, cpu);
    }
  return TRUE;
}

int
main (int    argc,
      char **argv)
{
  g_autoptr(GPtrArray) commands = g_ptr_array_new ();
  long runs, warmup;

  if (argc < 5 || (argc - 3) % 2 != 0)
    {
      fprintf (stderr, "Usage: bench-startup RUNS WARMUP NAME COMMAND [NAME COMMAND]...\n");
      return 2;
    }
  runs = strtol (argv[1], NULL, 10);
  warmup = strtol (argv[2], NULL, 10);
  if (runs < 1 || warmup < 0)
    {
      fprintf (stderr, "bench-startup: RUNS must be at least 1 and WARMUP at least 0\n");
      return 2;
    }
  for (int i = 3; i + 1 < argc; i += 2)
    {
      Command *command = g_new0 (Command, 1);

      command->name = argv[i];
      command->argv = g_strsplit (argv[i + 1], " ", -1);
      command->wall = g_array_new (FALSE, FALSE, sizeof (double));
      command->cpu = g_array_new (FALSE, FALSE, sizeof (double));
      g_ptr_array_add (commands, command);
    }

  for (long round = 0; round < warmup + runs; round++)
    for (guint k = 0; k < commands->len; k++)
      {
        Command *command = commands->pdata[(k + (guint) round) % commands->len];

        if (!run_once (command, round >= warmup))
          return 1;
      }

  for (guint k = 0; k < commands->len; k++)
    {
      Command *command = commands->pdata[k];

      double wall = median (command->wall);   /* sorts: the minimum is then the first */
      double cpu = median (command->cpu);

      printf ("startup %s %.3f %.3f %.3f\n", command->name, wall, cpu, g_array_index (command->wall, double, 0));
    }
  return 0;
}
