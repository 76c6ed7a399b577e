/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "linux-test-util.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int
run_probe (const Confinement *c, ProbeFunc probe, gconstpointer data)
{
  int pipefd[2];
  int result = PROBE_NO_RESULT;
  int status;
  pid_t pid;
  ssize_t n;

  g_assert_no_errno (pipe2 (pipefd, O_CLOEXEC));
  pid = fork ();
  g_assert_cmpint (pid, >=, 0);
  if (pid == 0)
    {
      int r = 0;

      close (pipefd[0]);
      if (c != NULL && c->before != NULL)
        {
          r = c->before (c->before_data);
          if (r != 0)
            {
              result = PROBE_SETUP_FAILED (r);
              r = -r;
            }
        }
      if (r == 0 && c != NULL && c->plan != NULL)
        {
          const char *step = NULL;

          r = sbx_landlock_plan_apply (c->plan, c->extra, c->n_extra, &step);
          if (r < 0)
            result = PROBE_SETUP_FAILED (-r);
        }
      if (r == 0 && c != NULL && c->program != NULL)
        {
          r = sbx_seccomp_program_apply (c->program);
          if (r < 0)
            result = PROBE_SETUP_FAILED (-r);
        }
      if (r == 0)
        result = probe (data);
      if (write (pipefd[1], &result, sizeof result) != sizeof result)
        _exit (2);
      _exit (0);
    }
  close (pipefd[1]);
  do
    n = read (pipefd[0], &result, sizeof result);
  while (n < 0 && errno == EINTR);
  close (pipefd[0]);
  g_assert_no_errno (TEMP_FAILURE_RETRY (waitpid (pid, &status, 0)) == pid ? 0 : -1);
  if (WIFSIGNALED (status))
    return PROBE_SIGNALED (WTERMSIG (status));
  if (n != sizeof result)
    return PROBE_NO_RESULT;
  return result;
}

const char *
probe_result_name (int result)
{
  static char buf[4][64];
  static int slot;
  char *b = buf[slot++ % 4];

  if (result == 0)
    return "success";
  if (result >= 3000)
    return "no result";
  if (result >= 2000)
    g_snprintf (b, 64, "setup failed (%s)", g_strerror (result - 2000));
  else if (result >= 1000)
    g_snprintf (b, 64, "killed by signal %d", result - 1000);
  else
    g_snprintf (b, 64, "%s (%d)", g_strerror (result), result);
  return b;
}

static void
report_cb (void *data, const char *feature, uint32_t status, const char *detail)
{
  TestReport *r = data;

  g_ptr_array_add (r->entries, g_strdup_printf ("%s|%u|%s", feature, status, detail != NULL ? detail : ""));
}

void
test_report_init (TestReport *r, SbxLinuxReporter *reporter)
{
  r->entries = g_ptr_array_new_with_free_func (g_free);
  reporter->report = report_cb;
  reporter->data = r;
}

void
test_report_clear (TestReport *r)
{
  g_clear_pointer (&r->entries, g_ptr_array_unref);
}

uint32_t
test_report_status (TestReport *r, const char *feature, const char **detail)
{
  size_t n = strlen (feature);

  for (guint i = 0; i < r->entries->len; i++)
    {
      const char *e = g_ptr_array_index (r->entries, i);

      if (strncmp (e, feature, n) == 0 && e[n] == '|')
        {
          if (detail != NULL)
            *detail = strchr (e + n + 1, '|') + 1;
          return (uint32_t) g_ascii_strtoull (e + n + 1, NULL, 10);
        }
    }
  return 0;
}

void
test_report_dump (TestReport *r)
{
  for (guint i = 0; i < r->entries->len; i++)
    g_test_message ("report: %s", (const char *) g_ptr_array_index (r->entries, i));
}
