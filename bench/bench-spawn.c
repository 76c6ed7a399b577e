/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench-spawn: per-spawn cost through the library, compile once, spawn many.
 *
 *   bench-spawn [--runs N] [--warmup N] [--backend NAME] [--plugin-dir DIR]
 *               [--workspace DIR] [-- COMMAND ARG...]
 *
 * Opens one executor set on the embedded default profile (workspace = the
 * current directory unless --workspace), takes one executor, runs COMMAND
 * (default /bin/true) N times with sbx_executor_run() and prints one
 * line:  "<backend> <level> mean <ms> median <ms> min <ms> (<N> runs)".
 * Plugins come from --plugin-dir (repeatable) or SBX_PLUGIN_PATH.
 */
#include <sbx/sbx.h>
#include <glib/gstdio.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int
compare_doubles (const void *a,
                 const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;

  return x < y ? -1 : x > y ? 1 : 0;
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
  g_autoptr(SbxExecutor) executor = NULL;
  g_autofree char *cwd = g_get_current_dir ();
  g_autofree double *times = NULL;
  g_autofree char *scratch = NULL;
  const char *default_argv[] = { "/bin/true", NULL };
  const char *const *command = default_argv;
  const char *backend = NULL;
  const char *workspace = NULL;
  int runs = 200, warmup = 20, i;
  double sum = 0;

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
      else if (strcmp (argv[i], "--") == 0 && i + 1 < argc)
        {
          command = (const char *const *) argv + i + 1;
          break;
        }
      else
        {
          fprintf (stderr, "usage: %s [--runs N] [--warmup N] [--backend NAME] [--plugin-dir DIR]... "
                           "[--workspace DIR] [-- COMMAND ARG...]\n", argv[0]);
          return 2;
        }
    }
  if (runs < 1)
    runs = 1;

  if (plugin_dirs->len > 0)
    {
      g_ptr_array_add (plugin_dirs, NULL);
      registry = sbx_registry_new_for_directories ((const char *const *) plugin_dirs->pdata, &error);
    }
  else
    registry = g_object_ref (sbx_registry_get_default ());
  if (registry == NULL)
    {
      fprintf (stderr, "bench-spawn: %s\n", error->message);
      return 1;
    }
  profile = sbx_profile_new_default (workspace != NULL ? workspace : cwd, &error);
  if (profile == NULL)
    {
      fprintf (stderr, "bench-spawn: %s\n", error->message);
      return 1;
    }
  scratch = g_dir_make_tmp ("sbx-bench-scratch-XXXXXX", &error);
  if (scratch == NULL)
    {
      fprintf (stderr, "bench-spawn: %s\n", error->message);
      return 1;
    }
  options = sbx_executor_set_options_new ();
  sbx_executor_set_options_set_scratch_root (options, scratch);
  sbx_executor_set_options_set_max_executors (options, 1);
  sbx_executor_set_options_set_registry (options, registry);
  if (backend != NULL)
    sbx_executor_set_options_set_backend (options, backend);
  set = sbx_executor_set_new (profile, options, &error);
  if (set == NULL)
    {
      fprintf (stderr, "bench-spawn: %s\n", error->message);
      return 1;
    }
  executor = sbx_executor_set_for_key (set, "bench", &error);
  if (executor == NULL)
    {
      fprintf (stderr, "bench-spawn: %s\n", error->message);
      return 1;
    }

  times = g_new (double, runs);
  for (i = -warmup; i < runs; i++)
    {
      gint64 start = g_get_monotonic_time ();
      g_autoptr(SbxRunResult) result = sbx_executor_run (executor, workspace != NULL ? workspace : cwd,
                                                         command, NULL, NULL, &error);
      gint64 end = g_get_monotonic_time ();

      if (result == NULL || !sbx_run_result_get_success (result))
        {
          fprintf (stderr, "bench-spawn: run failed: %s\n",
                   error != NULL ? error->message : "non-zero exit");
          return 1;
        }
      if (i >= 0)
        {
          times[i] = (double) (end - start) / 1000.0;
          sum += times[i];
        }
    }
  qsort (times, (size_t) runs, sizeof times[0], compare_doubles);
  printf ("%s %s mean %.3f median %.3f min %.3f (%d runs)\n", sbx_executor_set_get_backend_name (set),
          sbx_executor_get_level (executor) == SBX_LEVEL_FULL ? "full"
          : sbx_executor_get_level (executor) == SBX_LEVEL_DEGRADED ? "degraded" : "none",
          sum / runs, times[runs / 2], times[0], runs);
  sbx_executor_set_close (set, NULL, NULL);
  g_rmdir (scratch);
  return 0;
}
