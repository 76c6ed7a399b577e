/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The plugin registry: loading policy, descriptor validation, selection,
 * backend wrappers, compile reports and reporter sinks, against the mock
 * plugins of tests/plugins/ (each in its own build directory, found through
 * SBX_TEST_MOCK_PLUGIN_DIR).  One test binary ("registry") from the files of
 * tests/registry/, one per module of core/plugin, sharing the fixtures of
 * tests/registry/registry-test-util.c.
 *
 * Process-global state (the default registry, SBX_PLUGIN_PATH, SBX_BACKEND,
 * a crashing plugin) is tested in subprocesses.  GLib 2.74 has no
 * g_test_trap_subprocess_with_envp(), so each child sets the variables it
 * needs itself before touching the default registry.
 */
#include <sbx/sbx.h>

#include "registry-test-util.h"

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  registry_tests_add_loader ();
  registry_tests_add_select ();
  registry_tests_add_backend ();
  registry_tests_add_report ();

  return g_test_run ();
}
