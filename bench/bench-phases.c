/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench-phases: where one `sbx run -- COMMAND` spends its time, phase by
 * phase, in a fresh process as the CLI does it (one set, one executor, one
 * run, the set closed):
 *
 *   plugins    sbx_registry_get_default(): discovering and loading plugins
 *   profile    sbx_profile_new_default(): the embedded default profile
 *   select     sbx_executor_set_new(): probing the backends, selecting one
 *   compile    sbx_executor_set_for_key(): the executor (mount plan, Landlock
 *              ruleset, seccomp program, cgroup, state directories)
 *   run        sbx_executor_run() of COMMAND with the caller's stdio
 *   close      sbx_executor_set_close(): teardown
 *
 * Prints "phase <name> <ms>" lines; bench/run.sh runs it many times and
 * prints the medians.  The process start-up before main() is what the
 * hyperfine figure of `sbx run` has beyond their sum.
 */
#include <sbx/sbx.h>

#include <stdio.h>
#include <unistd.h>

static gint64 last;

static void
phase (const char *name)
{
  gint64 now = g_get_monotonic_time ();

  printf ("phase %s %.3f\n", name, (double) (now - last) / 1000.0);
  last = now;
}

int
main (int argc, char **argv)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SbxProfile) profile = NULL;
  g_autoptr(SbxExecutorSetOptions) options = NULL;
  g_autoptr(SbxExecutorSet) set = NULL;
  g_autoptr(SbxExecutor) executor = NULL;
  g_autoptr(SbxRunOptions) run_options = NULL;
  g_autoptr(SbxRunResult) result = NULL;
  g_autofree char *cwd = g_get_current_dir ();
  const char *default_argv[] = { "/bin/true", NULL };
  const char *const *command = argc > 1 ? (const char *const *) argv + 1 : default_argv;
  SbxRegistry *registry;

  last = g_get_monotonic_time ();
  registry = sbx_registry_get_default ();
  phase ("plugins");
  profile = sbx_profile_new_default (cwd, &error);
  if (profile == NULL)
    goto failed;
  phase ("profile");
  options = sbx_executor_set_options_new ();
  sbx_executor_set_options_set_scratch_root (options, g_get_tmp_dir ());
  sbx_executor_set_options_set_max_executors (options, 1);
  sbx_executor_set_options_set_registry (options, registry);
  set = sbx_executor_set_new (profile, options, &error);
  if (set == NULL)
    goto failed;
  phase ("select");
  executor = sbx_executor_set_for_key (set, "run", &error);
  if (executor == NULL)
    goto failed;
  phase ("compile");
  run_options = sbx_run_options_new ();
  sbx_run_options_set_stdin_fd (run_options, STDIN_FILENO);
  sbx_run_options_set_stdout_fd (run_options, STDOUT_FILENO);
  sbx_run_options_set_stderr_fd (run_options, STDERR_FILENO);
  result = sbx_executor_run (executor, cwd, command, run_options, NULL, &error);
  if (result == NULL)
    goto failed;
  phase ("run");
  g_clear_object (&executor);
  if (!sbx_executor_set_close (set, NULL, &error))
    goto failed;
  phase ("close");
  return sbx_run_result_get_successful (result) ? 0 : 1;

failed:
  fprintf (stderr, "bench-phases: %s\n", error->message);
  return 1;
}
