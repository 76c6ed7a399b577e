/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "linux-test-util.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
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

TestPolicy *
test_policy_new (const char *root)
{
  TestPolicy *tp = g_new0 (TestPolicy, 1);

  tp->root = g_strdup (root);
  tp->rules = g_array_new (FALSE, TRUE, sizeof (SbxFsRuleV1));
  tp->strings = g_ptr_array_new_with_free_func (g_free);
  tp->net.struct_size = sizeof (SbxNetPolicyV1);
  tp->net.mode = SBX_NET_MODE_OPEN;
  tp->net.tcp_ports = tp->ports;
  return tp;
}

void
test_policy_free (TestPolicy *tp)
{
  g_free (tp->root);
  g_array_unref (tp->rules);
  g_ptr_array_unref (tp->strings);
  g_free (tp);
}

void
test_policy_add (TestPolicy *tp, const char *path, uint32_t allow, uint32_t deny, uint32_t flags, uint32_t origin)
{
  SbxFsRuleV1 rule = { 0 };
  char *full;

  if (path[0] == '~')
    full = path[1] == '\0' ? g_strdup (tp->root) : g_strconcat (tp->root, path + 1, NULL);
  else
    full = g_strdup (path);
  g_ptr_array_add (tp->strings, full);
  rule.struct_size = sizeof rule;
  rule.flags = flags;
  rule.allow = allow;
  rule.deny = deny;
  rule.origin = origin;
  rule.fd = -1;
  rule.path = full;
  g_array_append_val (tp->rules, rule);
}

void
test_policy_add_runtime (TestPolicy *tp)
{
  static const char *const trees[] = { "/bin", "/sbin", "/usr/bin", "/usr/sbin", "/lib", "/lib64",
                                       "/usr/lib", "/usr/lib64", "/usr/libexec" };

  for (guint i = 0; i < G_N_ELEMENTS (trees); i++)
    test_policy_add (tp, trees[i], SBX_FS_READ | SBX_FS_EXEC, 0, SBX_FS_RULE_OPTIONAL, SBX_FS_ORIGIN_RUNTIME);
  test_policy_add (tp, "/etc/ld.so.cache", SBX_FS_READ, 0, SBX_FS_RULE_EXACT | SBX_FS_RULE_OPTIONAL,
                   SBX_FS_ORIGIN_RUNTIME);
}

const SbxPolicyV1 *
test_policy_get (TestPolicy *tp)
{
  tp->policy.struct_size = sizeof tp->policy;
  tp->policy.fs_rules = (const SbxFsRuleV1 *) (void *) tp->rules->data;
  tp->policy.n_fs_rules = tp->rules->len;
  tp->policy.net = &tp->net;
  return &tp->policy;
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

char *
scratch_new (void)
{
  g_autoptr(GError) error = NULL;
  char *dir = g_dir_make_tmp ("sbx-lsm-XXXXXX", &error);
  char *real;

  g_assert_no_error (error);
  /* policies hold canonical paths */
  real = realpath (dir, NULL);
  g_assert_nonnull (real);
  g_free (dir);
  dir = g_strdup (real);
  free (real);
  return dir;
}

static int
rm_one (const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
  if (flag == FTW_DP)
    return rmdir (path) < 0 ? -1 : 0;
  return unlink (path) < 0 ? -1 : 0;
}

void
scratch_free (char *dir)
{
  if (dir == NULL)
    return;
  /* make every directory writable again (tests chmod some) */
  g_assert_no_errno (nftw (dir, rm_one, 16, FTW_DEPTH | FTW_PHYS));
  g_free (dir);
}

void
write_file (const char *path, const char *contents)
{
  g_autoptr(GError) error = NULL;

  g_file_set_contents (path, contents, -1, &error);
  g_assert_no_error (error);
}

char *
path_join (const char *a, const char *b)
{
  return g_build_filename (a, b, NULL);
}
