/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The README's library example: run one command under a profile and print
 * what the host enforced.  Built and run by the test suite, so it cannot rot.
 *
 *   run-hello WORKSPACE SCRATCH
 */
#include <sbx/sbx.h>
#include <stdio.h>

static gboolean
run_hello (const char  *workspace,
           const char  *scratch,
           GError     **error)
{
  g_autoptr(SbxProfile) profile = NULL;
  g_autoptr(SbxExecutorSetOptions) options = NULL;
  g_autoptr(SbxExecutorSet) set = NULL;
  g_autoptr(SbxExecutor) executor = NULL;
  g_autoptr(SbxRunResult) result = NULL;
  g_auto(GStrv) guarantees = NULL;
  g_autofree char *joined = NULL;
  GBytes *output;
  const char *const cmd[] = { "sh", "-c", "echo hello from the sandbox", NULL };

  /* The embedded default: workspace read/write, nothing else, no network. */
  profile = sbx_profile_new_default (workspace, error);
  if (profile == NULL)
    return FALSE;

  options = sbx_executor_set_options_new ();
  sbx_executor_set_options_set_scratch_root (options, scratch);
  sbx_executor_set_options_set_max_executors (options, 4);

  /* Selects the strongest backend that can enforce what the profile
   * requires, or fails: a Sandboxed profile never runs unconfined. */
  set = sbx_executor_set_new (profile, options, error);
  if (set == NULL)
    return FALSE;

  executor = sbx_executor_set_for_key (set, "demo", error);
  if (executor == NULL)
    return FALSE;

  result = sbx_executor_run (executor, workspace, cmd, NULL, NULL, error);
  if (result == NULL)
    return FALSE;

  output = sbx_run_result_get_output (result);
  guarantees = sbx_guarantees_to_strv (sbx_executor_get_guarantees (executor));
  joined = g_strjoinv (", ", guarantees);
  printf ("output: %.*s", (int) g_bytes_get_size (output),
          (const char *) g_bytes_get_data (output, NULL));
  printf ("exit code: %d\n", sbx_run_result_get_exit_status (result));
  printf ("level: %s\n", sbx_level_to_string (sbx_executor_get_level (executor)));
  printf ("guarantees: %s\n", joined);

  /* Kills anything still running, removes the set's scratch child. */
  return sbx_executor_set_close (set, NULL, error);
}

int
main (int    argc,
      char **argv)
{
  g_autoptr(GError) error = NULL;

  if (argc != 3)
    {
      fprintf (stderr, "usage: %s WORKSPACE SCRATCH\n", argv[0]);
      return 2;
    }
  if (!run_hello (argv[1], argv[2], &error))
    {
      fprintf (stderr, "run-hello: %s\n", error->message);
      return 1;
    }
  return 0;
}
