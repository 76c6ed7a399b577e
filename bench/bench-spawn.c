/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench-spawn: per-spawn cost through the library, compile once, spawn many,
 * against plain fork+exec of the same program.
 *
 *   bench-spawn [--runs N] [--warmup N] [--backend NAME] [--plugin-dir DIR]
 *               [--workspace DIR] [--stamp PATH] [--threads N]
 *               [--executors N] [--create N] [-- COMMAND ARG...]
 *
 * Opens one executor set on the embedded default profile (workspace = the
 * current directory unless --workspace) and prints "key value" lines:
 *
 *   backend, level             what the set selected
 *   library.roundtrip.*        sbx_executor_run() of COMMAND (default
 *                              /bin/true) through one reused executor, from
 *                              the call to its return (spawn, wait, teardown,
 *                              the result): median, mean, min in ms
 *   plain.roundtrip.*          fork + execve + waitpid of COMMAND
 *   library.exec.*, plain.exec.*
 *                              with --stamp PATH (bench-stamp, inside the
 *                              workspace so the sandbox can run it): from the
 *                              call to the moment the target runs, as the
 *                              target reads CLOCK_MONOTONIC
 *   library.create.*           with --create N: N times, a new executor set
 *                              and its first executor (the compile: mount
 *                              plan, Landlock ruleset, seccomp program; the
 *                              probe is cached after the first), then the
 *                              set closed; median, mean, min in ms
 *   library.throughput, plain.throughput
 *                              with --threads T: T threads spawning COMMAND
 *                              over --executors E executors (default 4), in
 *                              spawns per second; plain: T threads doing
 *                              fork+exec+wait
 *
 * Plugins come from --plugin-dir (repeatable) or SBX_PLUGIN_PATH.  Timing
 * only: nothing here asserts a time.
 */
#include <sbx/sbx.h>
#include <glib/gstdio.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static int
compare_doubles (const void *a,
                 const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;

  return x < y ? -1 : x > y ? 1 : 0;
}

static void
print_stats (const char *key,
             double     *times,
             int         n)
{
  double sum = 0;

  for (int i = 0; i < n; i++)
    sum += times[i];
  qsort (times, (size_t) n, sizeof times[0], compare_doubles);
  printf ("%s.median %.3f\n%s.mean %.3f\n%s.min %.3f\n%s.runs %d\n", key, times[n / 2], key, sum / n, key,
          times[0], key, n);
}

/* fork + execve + waitpid of @argv; with @stamp_out, the target's stdout
 * (bench-stamp's start time) is read into it.  Returns FALSE when the child
 * did not exit 0. */
static gboolean
plain_run (const char *const *argv,
           gint64            *stamp_out)
{
  int fds[2] = { -1, -1 };
  int status = 0;
  pid_t pid;

  if (stamp_out != NULL && pipe (fds) != 0)
    return FALSE;
  pid = fork ();
  if (pid < 0)
    return FALSE;
  if (pid == 0)
    {
      if (stamp_out != NULL)
        {
          dup2 (fds[1], STDOUT_FILENO);
          close (fds[0]);
          close (fds[1]);
        }
      execve (argv[0], (char *const *) argv, environ);
      _exit (127);
    }
  if (stamp_out != NULL)
    {
      char buf[64] = { 0 };
      ssize_t n, got = 0;

      close (fds[1]);
      while (got < (ssize_t) sizeof buf - 1 && (n = read (fds[0], buf + got, sizeof buf - 1 - (size_t) got)) > 0)
        got += n;
      close (fds[0]);
      *stamp_out = g_ascii_strtoll (buf, NULL, 10);
    }
  while (waitpid (pid, &status, 0) < 0)
    ;
  return WIFEXITED (status) && WEXITSTATUS (status) == 0;
}

static gboolean
library_run (SbxExecutor       *executor,
             const char        *cwd,
             const char *const *argv,
             gint64            *stamp_out,
             GError           **error)
{
  g_autoptr(SbxRunResult) result = sbx_executor_run (executor, cwd, argv, NULL, NULL, error);

  if (result == NULL)
    return FALSE;
  if (!sbx_run_result_get_successful (result))
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_FAILED, "the command did not exit 0");
      return FALSE;
    }
  if (stamp_out != NULL)
    {
      gsize len;
      const char *data = g_bytes_get_data (sbx_run_result_get_output (result), &len);
      g_autofree char *text = g_strndup (data, len);

      *stamp_out = g_ascii_strtoll (text, NULL, 10);
      if (*stamp_out <= 0)
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "the stamp program printed \"%s\"", text);
          return FALSE;
        }
    }
  return TRUE;
}

typedef struct
{
  SbxExecutor       *executor;   /* NULL: plain fork+exec */
  const char        *cwd;
  const char *const *argv;
  int                runs;
  gboolean           failed;
} Worker;

static gpointer
worker_main (gpointer data)
{
  Worker *w = data;

  for (int i = 0; i < w->runs && !w->failed; i++)
    {
      g_autoptr(GError) error = NULL;

      if (w->executor != NULL ? !library_run (w->executor, w->cwd, w->argv, NULL, &error)
                              : !plain_run (w->argv, NULL))
        {
          fprintf (stderr, "bench-spawn: threaded run failed: %s\n", error != NULL ? error->message : "exit");
          w->failed = TRUE;
        }
    }
  return NULL;
}

/* @n_threads threads, thread i on @executors[i % n_executors] (plain
 * fork+exec when @executors is NULL), @total runs in all; spawns/second. */
static double
throughput (SbxExecutor      **executors,
            int                n_executors,
            int                n_threads,
            int                total,
            const char        *cwd,
            const char *const *argv,
            gboolean          *failed)
{
  g_autofree Worker *workers = g_new0 (Worker, n_threads);
  g_autofree GThread **threads = g_new0 (GThread *, n_threads);
  gint64 start, end;
  int done = 0;

  for (int i = 0; i < n_threads; i++)
    {
      workers[i].executor = executors != NULL ? executors[i % n_executors] : NULL;
      workers[i].cwd = cwd;
      workers[i].argv = argv;
      workers[i].runs = total / n_threads + (i < total % n_threads ? 1 : 0);
      done += workers[i].runs;
    }
  start = g_get_monotonic_time ();
  for (int i = 0; i < n_threads; i++)
    threads[i] = g_thread_new ("bench", worker_main, &workers[i]);
  for (int i = 0; i < n_threads; i++)
    {
      g_thread_join (threads[i]);
      *failed |= workers[i].failed;
    }
  end = g_get_monotonic_time ();
  return done / ((double) (end - start) / G_USEC_PER_SEC);
}

static int
fail (const char *what,
      GError     *error)
{
  fprintf (stderr, "bench-spawn: %s: %s\n", what, error != NULL ? error->message : "failed");
  return 1;
}

int
main (int argc, char **argv)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) plugin_dirs = g_ptr_array_new ();
  g_autoptr(SbxRegistry) registry = NULL;
  g_autoptr(SbxProfile) profile = NULL;
  g_autoptr(SbxExecutorSetOptions) options = NULL;
  g_autoptr(SbxExecutorSet) set = NULL;
  g_autoptr(GPtrArray) executors = g_ptr_array_new_with_free_func (g_object_unref);
  g_autofree char *cwd = g_get_current_dir ();
  g_autofree double *times = NULL;
  g_autofree char *scratch = NULL;
  const char *default_argv[] = { "/bin/true", NULL };
  const char *const *command = default_argv;
  const char *backend = NULL;
  const char *workspace = NULL;
  const char *stamp = NULL;
  int runs = 200, warmup = 20, n_threads = 0, n_executors = 4, n_create = 0, i;
  SbxExecutor *executor;
  SbxLevel level;

  for (i = 1; i < argc; i++)
    {
      if (strcmp (argv[i], "--runs") == 0 && i + 1 < argc)
        runs = atoi (argv[++i]);
      else if (strcmp (argv[i], "--warmup") == 0 && i + 1 < argc)
        warmup = atoi (argv[++i]);
      else if (strcmp (argv[i], "--backend") == 0 && i + 1 < argc)
        backend = argv[++i];
      else if (strcmp (argv[i], "--plugin-dir") == 0 && i + 1 < argc)
        g_ptr_array_add (plugin_dirs, argv[++i]);
      else if (strcmp (argv[i], "--workspace") == 0 && i + 1 < argc)
        workspace = argv[++i];
      else if (strcmp (argv[i], "--stamp") == 0 && i + 1 < argc)
        stamp = argv[++i];
      else if (strcmp (argv[i], "--threads") == 0 && i + 1 < argc)
        n_threads = atoi (argv[++i]);
      else if (strcmp (argv[i], "--executors") == 0 && i + 1 < argc)
        n_executors = atoi (argv[++i]);
      else if (strcmp (argv[i], "--create") == 0 && i + 1 < argc)
        n_create = atoi (argv[++i]);
      else if (strcmp (argv[i], "--") == 0 && i + 1 < argc)
        {
          command = (const char *const *) argv + i + 1;
          break;
        }
      else
        {
          fprintf (stderr, "usage: %s [--runs N] [--warmup N] [--backend NAME] [--plugin-dir DIR]... "
                           "[--workspace DIR] [--stamp PATH] [--threads N] [--executors N] "
                           "[--create N] [-- COMMAND ARG...]\n", argv[0]);
          return 2;
        }
    }
  runs = MAX (runs, 1);
  warmup = MAX (warmup, 0);
  n_executors = MAX (n_executors, 1);
  if (workspace == NULL)
    workspace = cwd;

  if (plugin_dirs->len > 0)
    {
      g_ptr_array_add (plugin_dirs, NULL);
      registry = sbx_registry_new_for_directories ((const char *const *) plugin_dirs->pdata, &error);
    }
  else
    registry = g_object_ref (sbx_registry_get_default ());
  if (registry == NULL)
    return fail ("registry", error);
  profile = sbx_profile_new_default (workspace, &error);
  if (profile == NULL)
    return fail ("profile", error);
  scratch = g_dir_make_tmp ("sbx-bench-scratch-XXXXXX", &error);
  if (scratch == NULL)
    return fail ("scratch", error);
  options = sbx_executor_set_options_new ();
  sbx_executor_set_options_set_scratch_root (options, scratch);
  sbx_executor_set_options_set_max_executors (options, MAX (n_executors, 1));
  sbx_executor_set_options_set_registry (options, registry);
  if (backend != NULL)
    sbx_executor_set_options_set_backend (options, backend);
  set = sbx_executor_set_new (profile, options, &error);
  if (set == NULL)
    return fail ("executor set", error);
  for (i = 0; i < (n_threads > 0 ? n_executors : 1); i++)
    {
      g_autofree char *key = g_strdup_printf ("bench-%d", i);

      executor = sbx_executor_set_for_key (set, key, &error);
      if (executor == NULL)
        return fail ("executor", error);
      g_ptr_array_add (executors, executor);
    }
  executor = g_ptr_array_index (executors, 0);
  level = sbx_executor_get_level (executor);
  printf ("backend %s\nlevel %s\n", sbx_executor_set_get_backend_name (set),
          level == SBX_LEVEL_FULL ? "full" : level == SBX_LEVEL_DEGRADED ? "degraded" : "none");

  times = g_new (double, MAX (runs, n_create));
  /* Executor creation: a fresh set and its first executor each time. */
  for (i = 0; i < n_create; i++)
    {
      g_autoptr(SbxExecutorSet) fresh = NULL;
      g_autoptr(SbxExecutor) first = NULL;
      gint64 start = g_get_monotonic_time ();

      fresh = sbx_executor_set_new (profile, options, &error);
      if (fresh == NULL)
        return fail ("executor set", error);
      first = sbx_executor_set_for_key (fresh, "create", &error);
      if (first == NULL)
        return fail ("executor", error);
      times[i] = (double) (g_get_monotonic_time () - start) / 1000.0;
      g_clear_object (&first);
      sbx_executor_set_close (fresh, NULL, NULL);
    }
  if (n_create > 0)
    print_stats ("library.create", times, n_create);
  /* Round trip through one reused executor. */
  for (i = -warmup; i < runs; i++)
    {
      gint64 start = g_get_monotonic_time ();

      if (!library_run (executor, workspace, command, NULL, &error))
        return fail ("run", error);
      if (i >= 0)
        times[i] = (double) (g_get_monotonic_time () - start) / 1000.0;
    }
  print_stats ("library.roundtrip", times, runs);
  /* The same program by fork+exec, one after the other. */
  for (i = -warmup; i < runs; i++)
    {
      gint64 start = g_get_monotonic_time ();

      if (!plain_run (command, NULL))
        return fail ("plain run", NULL);
      if (i >= 0)
        times[i] = (double) (g_get_monotonic_time () - start) / 1000.0;
    }
  print_stats ("plain.roundtrip", times, runs);

  if (stamp != NULL)
    {
      const char *stamp_argv[] = { stamp, NULL };

      /* From the call to the moment the target runs, interleaved so both
       * see the same load. */
      g_autofree double *plain_times = g_new (double, runs);

      for (i = -warmup; i < runs; i++)
        {
          gint64 start, target;

          start = g_get_monotonic_time () * 1000;
          if (!library_run (executor, workspace, stamp_argv, &target, &error))
            return fail ("stamp run", error);
          if (i >= 0)
            times[i] = (double) (target - start) / 1e6;
          start = g_get_monotonic_time () * 1000;
          if (!plain_run (stamp_argv, &target))
            return fail ("plain stamp run", NULL);
          if (i >= 0)
            plain_times[i] = (double) (target - start) / 1e6;
        }
      print_stats ("library.exec", times, runs);
      print_stats ("plain.exec", plain_times, runs);
    }

  if (n_threads > 0)
    {
      gboolean failed = FALSE;
      double library_rate, plain_rate;

      library_rate = throughput ((SbxExecutor **) executors->pdata, (int) executors->len, n_threads, runs,
                                 workspace, command, &failed);
      plain_rate = throughput (NULL, 0, n_threads, runs, workspace, command, &failed);
      if (failed)
        return fail ("threaded runs", NULL);
      printf ("library.throughput %.1f\nplain.throughput %.1f\nthreads %d\nexecutors %u\n", library_rate,
              plain_rate, n_threads, executors->len);
    }

  g_clear_pointer (&executors, g_ptr_array_unref);
  sbx_executor_set_close (set, NULL, NULL);
  g_rmdir (scratch);
  return 0;
}
