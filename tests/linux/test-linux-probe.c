/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The Linux plugin keeps what it measured of the host in its plugin
 * context, not in the process: every registry (every init) measures its
 * own, and dropping the registry (fini) closes what the measurement holds
 * open, the sealed init program every spawn execs.
 *
 * Counted through /proc/self/fd: the init program is a memfd named
 * "sbx-init" (or, where vm.memfd_noexec forbids exec from a memfd, an
 * unlinked file named sbx-init-XXXXXX); either link names "sbx-init".
 */
#include <string.h>
#include <unistd.h>

#include "executor-test-util.h"

static guint
count_init_fds (void)
{
  g_autoptr(GDir) dir = g_dir_open ("/proc/self/fd", 0, NULL);
  const char *name;
  guint       n = 0;

  g_assert_nonnull (dir);
  while ((name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *link = g_build_filename ("/proc/self/fd", name, NULL);
      g_autofree char *target = g_file_read_link (link, NULL);

      if (target != NULL && strstr (target, "sbx-init") != NULL)
        n++;
    }
  return n;
}

/* Probes linux-landlock in @registry (the rung every Linux host with the
 * plugin can at least measure); TRUE when the probe succeeded. */
static gboolean
probe_linux (SbxRegistry *registry)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SbxCompileReport) report = sbx_registry_probe_backend (registry, "linux-landlock", NULL, &error);

  if (report == NULL)
    g_test_message ("linux-landlock probe: %s", error->message);
  return report != NULL;
}

static void
test_probe_per_instance (void)
{
  g_autoptr(SbxRegistry) first = NULL;
  g_autoptr(SbxRegistry) second = NULL;
  guint before = count_init_fds ();

  /* Positive control: the count sees an init fd once a probe made one. */
  first = etu_registry ("linux", NULL);
  if (!probe_linux (first) && count_init_fds () == before)
    {
      g_test_skip ("the Linux plugin found no way to exec its init program here");
      return;
    }
  g_assert_cmpuint (count_init_fds (), ==, before + 1);

  /* A second registry measures for itself (a process-wide cache would hand
   * it the first one's facts and fd). */
  second = etu_registry ("linux", NULL);
  g_assert_cmpuint (count_init_fds (), ==, before + 1); /* init measures nothing */
  probe_linux (second);
  g_assert_cmpuint (count_init_fds (), ==, before + 2);

  /* fini closes each instance's own fd, and only that one. */
  g_clear_object (&second);
  g_assert_cmpuint (count_init_fds (), ==, before + 1);
  g_assert_true (probe_linux (first) || count_init_fds () == before + 1);
  g_assert_cmpuint (count_init_fds (), ==, before + 1); /* measured once per instance */
  g_clear_object (&first);
  g_assert_cmpuint (count_init_fds (), ==, before);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
  g_test_add_func ("/linux/probe/per-instance", test_probe_per_instance);
  return g_test_run ();
}
