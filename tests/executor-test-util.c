/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "executor-test-util.h"

#include <dirent.h>
#include <errno.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef __linux__
#include <linux/magic.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#endif

const char *
etu_plugin_dir (const char *name)
{
  static char *mock_dirs[32];
  static const char *mock_names[32];
  static GMutex lock;
  const char *dir = NULL;

  if (g_str_equal (name, "unconfined"))
    dir = g_getenv ("SBX_TEST_UNCONFINED_PLUGIN_DIR");
  else if (g_str_equal (name, "jsonl"))
    dir = g_getenv ("SBX_TEST_JSONL_PLUGIN_DIR");
  else if (g_str_equal (name, "linux"))
    dir = g_getenv ("SBX_TEST_LINUX_PLUGIN_DIR");
  else
    {
      const char *mocks = g_getenv ("SBX_TEST_MOCK_PLUGIN_DIR");

      g_assert_nonnull (mocks);
      g_mutex_lock (&lock);
      for (guint i = 0; i < G_N_ELEMENTS (mock_dirs); i++)
        {
          if (mock_names[i] == NULL)
            {
              mock_names[i] = g_strdup (name);
              mock_dirs[i] = g_build_filename (mocks, name, NULL);
            }
          if (g_str_equal (mock_names[i], name))
            {
              dir = mock_dirs[i];
              break;
            }
        }
      g_mutex_unlock (&lock);
    }
  g_assert_nonnull (dir);
  return dir;
}

SbxRegistry *
etu_registry (const char *first_dir,
              ...)
{
  g_autoptr(GPtrArray) dirs = g_ptr_array_new ();
  g_autoptr(GError) error = NULL;
  SbxRegistry *registry;
  va_list args;

  va_start (args, first_dir);
  for (const char *name = first_dir; name != NULL; name = va_arg (args, const char *))
    g_ptr_array_add (dirs, (gpointer) etu_plugin_dir (name));
  va_end (args);
  g_ptr_array_add (dirs, NULL);

  registry = sbx_registry_new_for_directories ((const char *const *) dirs->pdata, &error);
  g_assert_no_error (error);
  g_assert_nonnull (registry);
  return registry;
}

void
etu_tree_init (EtuTree *tree)
{
  tree->tmp = etu_make_tmpdir ("sbx-test-executor-XXXXXX");
  tree->scratch = etu_mkdir (tree->tmp, "scratch");
  tree->ws = etu_mkdir (tree->tmp, "ws");
  tree->scratch_tmp = NULL;
}

/* TRUE when @dir is on a tmpfs. */
static gboolean
is_tmpfs (const char *dir)
{
#ifdef __linux__
  struct statfs sfs;

  return dir != NULL && statfs (dir, &sfs) == 0 && sfs.f_type == TMPFS_MAGIC;
#else
  return FALSE;
#endif
}

gboolean
etu_tree_init_tmpfs (EtuTree  *tree,
                     char    **reason)
{
  const char *candidates[] = { "/dev/shm", g_getenv ("XDG_RUNTIME_DIR") };

  etu_tree_init (tree);
  if (is_tmpfs (tree->tmp))
    return TRUE;
  for (gsize i = 0; i < G_N_ELEMENTS (candidates); i++)
    {
      g_autofree char *template = NULL;
      char *resolved;

      if (!is_tmpfs (candidates[i]) || access (candidates[i], W_OK | X_OK) != 0)
        continue;
      template = g_build_filename (candidates[i], "sbx-test-scratch-XXXXXX", NULL);
      if (g_mkdtemp (template) == NULL)
        continue;
      resolved = realpath (template, NULL);
      g_assert_nonnull (resolved);
      tree->scratch_tmp = g_strdup (resolved);
      free (resolved);
      etu_rm_rf (tree->scratch);
      g_free (tree->scratch);
      tree->scratch = etu_mkdir (tree->scratch_tmp, "scratch");
      return TRUE;
    }
  *reason = g_strdup_printf ("no tmpfs to hold the scratch root: neither the temp dir %s nor "
                             "/dev/shm nor XDG_RUNTIME_DIR (%s) is a tmpfs this user can write",
                             tree->tmp, candidates[1] != NULL ? candidates[1] : "unset");
  etu_tree_clear (tree);
  return FALSE;
}

void
etu_tree_clear (EtuTree *tree)
{
  if (tree->tmp != NULL)
    etu_rm_rf (tree->tmp);
  if (tree->scratch_tmp != NULL)
    etu_rm_rf (tree->scratch_tmp);
  g_clear_pointer (&tree->tmp, g_free);
  g_clear_pointer (&tree->scratch, g_free);
  g_clear_pointer (&tree->ws, g_free);
  g_clear_pointer (&tree->scratch_tmp, g_free);
}

SbxProfile *
etu_profile_unconfined (const char *workspace,
                        SbxAccess   command)
{
  g_autoptr(SbxProfileConfig) config = sbx_profile_config_new ();
  g_autoptr(GError) error = NULL;
  SbxProfile *profile;

  sbx_profile_config_set_workspace (config, workspace, SBX_ACCESS_ALLOW, SBX_ACCESS_ALLOW);
  sbx_profile_config_set_host (config, SBX_ACCESS_ALLOW, SBX_ACCESS_ALLOW);
  sbx_profile_config_set_network (config, SBX_ACCESS_ALLOW);
  sbx_profile_config_set_command (config, command);
  sbx_profile_config_set_home (config, SBX_HOME_ISOLATED);
  sbx_profile_config_set_isolation (config, SBX_ISOLATION_UNCONFINED);
  sbx_profile_config_set_ack_unconfined (config, TRUE);
  profile = sbx_profile_new (config, &error);
  g_assert_no_error (error);
  return profile;
}

SbxProfile *
etu_profile_sandboxed (const char *workspace)
{
  g_autoptr(SbxProfileConfig) config = sbx_profile_config_new ();
  g_autoptr(GError) error = NULL;
  SbxProfile *profile;

  sbx_profile_config_set_workspace (config, workspace, SBX_ACCESS_ALLOW, SBX_ACCESS_ALLOW);
  sbx_profile_config_set_host (config, SBX_ACCESS_DENY, SBX_ACCESS_DENY);
  sbx_profile_config_set_network (config, SBX_ACCESS_DENY);
  sbx_profile_config_set_command (config, SBX_ACCESS_ALLOW);
  sbx_profile_config_set_home (config, SBX_HOME_ISOLATED);
  sbx_profile_config_set_isolation (config, SBX_ISOLATION_SANDBOXED);
  profile = sbx_profile_new (config, &error);
  g_assert_no_error (error);
  return profile;
}

SbxExecutorSetOptions *
etu_options (const char  *scratch,
             int          max_executors,
             SbxRegistry *registry)
{
  SbxExecutorSetOptions *options = sbx_executor_set_options_new ();

  sbx_executor_set_options_set_scratch_root (options, scratch);
  sbx_executor_set_options_set_max_executors (options, max_executors);
  sbx_executor_set_options_set_registry (options, registry);
  return options;
}

static GPtrArray *
fd_names (void)
{
  GPtrArray *names = g_ptr_array_new_with_free_func (g_free);
  DIR *dir = opendir ("/proc/self/fd");
  struct dirent *entry;
  int self_fd;

  g_assert_nonnull (dir);
  self_fd = dirfd (dir);
  while ((entry = readdir (dir)) != NULL)
    {
      char link[512];
      g_autofree char *path = NULL;
      ssize_t n;

      if (entry->d_name[0] == '.' || atoi (entry->d_name) == self_fd)
        continue;
      path = g_strdup_printf ("/proc/self/fd/%s", entry->d_name);
      n = readlink (path, link, sizeof link - 1);
      link[n < 0 ? 0 : n] = '\0';
      g_ptr_array_add (names, g_strdup_printf ("%s -> %s", entry->d_name, link));
    }
  closedir (dir);
  return names;
}

guint
etu_count_fds (void)
{
  g_autoptr(GPtrArray) names = fd_names ();

  return names->len;
}

char *
etu_list_fds (void)
{
  g_autoptr(GPtrArray) names = fd_names ();

  g_ptr_array_add (names, NULL);
  return g_strjoinv ("\n", (char **) names->pdata);
}

guint
etu_count_children (void)
{
  DIR *dir = opendir ("/proc/self/task");
  struct dirent *entry;
  guint n = 0;

  g_assert_nonnull (dir);
  while ((entry = readdir (dir)) != NULL)
    {
      g_autofree char *path = NULL;
      g_autofree char *contents = NULL;
      g_auto(GStrv) pids = NULL;

      if (entry->d_name[0] == '.')
        continue;
      path = g_strdup_printf ("/proc/self/task/%s/children", entry->d_name);
      if (!g_file_get_contents (path, &contents, NULL, NULL))
        continue;
      pids = g_strsplit_set (g_strstrip (contents), " ", -1);
      for (guint i = 0; pids[i] != NULL; i++)
        if (pids[i][0] != '\0')
          n++;
    }
  closedir (dir);
  return n;
}

void
etu_assert_no_children (void)
{
  int status;

  g_assert_cmpint (waitpid (-1, &status, WNOHANG | __WALL), ==, -1);
  g_assert_cmpint (errno, ==, ECHILD);
}

gboolean
etu_pid_is_dead (int pid)
{
  g_autofree char *path = g_strdup_printf ("/proc/%d/stat", pid);
  g_autofree char *contents = NULL;
  const char *paren;

  if (!g_file_get_contents (path, &contents, NULL, NULL))
    return TRUE;
  paren = strrchr (contents, ')');
  return paren != NULL && (paren[2] == 'Z' || paren[2] == 'X');
}

gboolean
etu_wait_for_file (const char *path,
                   guint       timeout_ms)
{
  gint64 deadline = g_get_monotonic_time () + timeout_ms * G_TIME_SPAN_MILLISECOND;

  while (!g_file_test (path, G_FILE_TEST_EXISTS))
    {
      if (g_get_monotonic_time () > deadline)
        return FALSE;
      g_usleep (5 * 1000);
    }
  return TRUE;
}

char *
etu_wait_for_line (const char *path,
                   guint       timeout_ms)
{
  gint64 deadline = g_get_monotonic_time () + timeout_ms * G_TIME_SPAN_MILLISECOND;

  for (;;)
    {
      g_autofree char *text = NULL;

      if (g_file_get_contents (path, &text, NULL, NULL) && g_str_has_suffix (text, "\n"))
        return g_steal_pointer (&text);
      if (g_get_monotonic_time () > deadline)
        return NULL;
      g_usleep (5 * 1000);
    }
}

void
etu_store_result (GObject      *source,
                  GAsyncResult *result,
                  gpointer      data)
{
  GAsyncResult **slot = data;

  *slot = g_object_ref (result);
  g_main_context_wakeup (NULL);
}

GAsyncResult *
etu_wait_async (GAsyncResult **slot)
{
  while (*slot == NULL)
    g_main_context_iteration (NULL, TRUE);
  return *slot;
}

void
etu_warm_up (void)
{
  EtuTree tree = { 0 };
  g_autoptr(SbxRegistry) registry = etu_registry ("unconfined", "jsonl", NULL);
  g_autoptr(SbxProfile) profile = NULL;
  g_autoptr(SbxExecutorSetOptions) options = NULL;
  g_autoptr(SbxExecutorSet) set = NULL;
  g_autoptr(SbxExecutor) executor = NULL;
  g_autoptr(SbxRunResult) result = NULL;
  g_autoptr(GAsyncResult) async_result = NULL;
  g_autoptr(GError) error = NULL;
  const char *argv[] = { "true", NULL };

  etu_tree_init (&tree);
  profile = etu_profile_unconfined (tree.ws, SBX_ACCESS_ALLOW);
  options = etu_options (tree.scratch, 1, registry);
  set = sbx_executor_set_new (profile, options, &error);
  g_assert_no_error (error);
  executor = sbx_executor_set_for_key (set, "warm-up", &error);
  g_assert_no_error (error);
  result = sbx_executor_run (executor, tree.ws, argv, NULL, NULL, &error);
  g_assert_no_error (error);
  g_clear_pointer (&result, sbx_run_result_unref);
  sbx_executor_run_async (executor, tree.ws, argv, NULL, NULL, etu_store_result, &async_result);
  result = sbx_executor_run_finish (executor, etu_wait_async (&async_result), &error);
  g_assert_no_error (error);
  g_assert_true (sbx_executor_set_close (set, NULL, &error));
  etu_tree_clear (&tree);
}

SbxRunResult *
etu_run_limited (SbxExecutor        *executor,
                 const char         *cwd,
                 const char *const  *argv,
                 guint64             max_output,
                 GCancellable       *cancellable,
                 GError            **error)
{
  g_autoptr(SbxRunOptions) options = sbx_run_options_new ();

  sbx_run_options_set_max_output (options, max_output);
  return sbx_executor_run (executor, cwd, argv, options, cancellable, error);
}

void
etu_run_limited_async (SbxExecutor        *executor,
                       const char         *cwd,
                       const char *const  *argv,
                       guint64             max_output,
                       GCancellable       *cancellable,
                       GAsyncReadyCallback callback,
                       gpointer            user_data)
{
  g_autoptr(SbxRunOptions) options = sbx_run_options_new ();

  sbx_run_options_set_max_output (options, max_output);
  sbx_executor_run_async (executor, cwd, argv, options, cancellable, callback, user_data);
}

static SbxRunOptions *
grant_options (const char          *execution_id,
               const char *const   *grants,
               const SbxRunOptions *options)
{
  SbxRunOptions *copy = options != NULL ? sbx_run_options_copy (options) : sbx_run_options_new ();

  sbx_run_options_set_execution_id (copy, execution_id);
  /* A grant transaction even without tokens (the gate then refuses). */
  if (grants == NULL && execution_id == NULL)
    sbx_run_options_set_execution_id (copy, "");
  sbx_run_options_set_grants (copy, grants);
  return copy;
}

SbxRunResult *
etu_run_with_grants (SbxExecutor         *executor,
                     const char          *cwd,
                     const char *const   *argv,
                     const char          *execution_id,
                     const char *const   *grants,
                     const SbxRunOptions *options,
                     GCancellable        *cancellable,
                     GError             **error)
{
  g_autoptr(SbxRunOptions) copy = grant_options (execution_id, grants, options);

  return sbx_executor_run (executor, cwd, argv, copy, cancellable, error);
}

void
etu_run_with_grants_async (SbxExecutor         *executor,
                           const char          *cwd,
                           const char *const   *argv,
                           const char          *execution_id,
                           const char *const   *grants,
                           const SbxRunOptions *options,
                           GCancellable        *cancellable,
                           GAsyncReadyCallback  callback,
                           gpointer             user_data)
{
  g_autoptr(SbxRunOptions) copy = grant_options (execution_id, grants, options);

  sbx_executor_run_async (executor, cwd, argv, copy, cancellable, callback, user_data);
}

/* ------------------------------------------------------------------------- */
/* Temporary trees                                                            */
/* ------------------------------------------------------------------------- */

/* A new directory under the (isolated) temp dir, with symlinks resolved so
 * expected canonical paths can be built from it. */
char *
etu_make_tmpdir (const char *template_name)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp (template_name, &error);
  char *resolved;
  char *copy;

  g_assert_no_error (error);
  resolved = realpath (dir, NULL);
  g_assert_nonnull (resolved);
  copy = g_strdup (resolved);
  free (resolved);
  return copy;
}

char *
etu_mkdir (const char *base,
           const char *relative)
{
  char *path = g_build_filename (base, relative, NULL);

  g_assert_cmpint (g_mkdir_with_parents (path, 0755), ==, 0);
  return path;
}

char *
etu_write_file (const char *base,
                const char *relative,
                const char *contents)
{
  g_autoptr(GError) error = NULL;
  char *path = g_build_filename (base, relative, NULL);

  g_file_set_contents (path, contents, -1, &error);
  g_assert_no_error (error);
  return path;
}

char *
etu_symlink (const char *base,
             const char *relative,
             const char *target)
{
  char *path = g_build_filename (base, relative, NULL);

  g_assert_cmpint (symlink (target, path), ==, 0);
  return path;
}

/* The one recursive delete of the test suite: in process (no rm(1)), no
 * symlink followed, directories made writable first (tests chmod trees),
 * and every removal asserted, so a test cannot leave its tree behind
 * silently.  NULL (a directory never made) is nothing to remove. */
void
etu_rm_rf (const char *path)
{
  struct stat st;

  if (path == NULL || lstat (path, &st) != 0)
    return;
  if (S_ISDIR (st.st_mode))
    {
      g_autoptr(GDir) dir = NULL;
      const char *name;

      /* Make it readable, writable and searchable first (tests may chmod). */
      chmod (path, 0700);
      dir = g_dir_open (path, 0, NULL);
      if (dir != NULL)
        while ((name = g_dir_read_name (dir)) != NULL)
          {
            g_autofree char *child = g_build_filename (path, name, NULL);

            etu_rm_rf (child);
          }
      g_assert_cmpint (rmdir (path), ==, 0);
    }
  else
    g_assert_cmpint (unlink (path), ==, 0);
}

/* ------------------------------------------------------------------------- */
/* The policy builder                                                         */
/* ------------------------------------------------------------------------- */

EtuPolicy *
etu_policy_new (const char *root)
{
  EtuPolicy *tp = g_new0 (EtuPolicy, 1);

  tp->root = g_strdup (root);
  tp->rules = g_array_new (FALSE, TRUE, sizeof (SbxFsRuleV1));
  tp->strings = g_ptr_array_new_with_free_func (g_free);
  tp->net.struct_size = sizeof (SbxNetPolicyV1);
  tp->net.mode = SBX_NET_MODE_OPEN;
  tp->net.tcp_ports = tp->ports;
  tp->limits.struct_size = sizeof (SbxLimitsV1);
  return tp;
}

void
etu_policy_free (EtuPolicy *tp)
{
  if (tp == NULL)
    return;
  g_free (tp->root);
  g_array_unref (tp->rules);
  g_ptr_array_unref (tp->strings);
  g_free (tp);
}

void
etu_policy_add (EtuPolicy  *tp,
                const char *path,
                uint32_t    allow,
                uint32_t    deny,
                uint32_t    flags,
                uint32_t    origin)
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
etu_policy_add_runtime (EtuPolicy *tp)
{
  static const char *const trees[] = { "/bin", "/sbin", "/usr/bin", "/usr/sbin", "/lib", "/lib64",
                                       "/usr/lib", "/usr/lib64", "/usr/libexec" };

  for (guint i = 0; i < G_N_ELEMENTS (trees); i++)
    etu_policy_add (tp, trees[i], SBX_FS_READ | SBX_FS_EXEC, 0, SBX_FS_RULE_OPTIONAL, SBX_FS_ORIGIN_RUNTIME);
  etu_policy_add (tp, "/etc/ld.so.cache", SBX_FS_READ, 0, SBX_FS_RULE_EXACT | SBX_FS_RULE_OPTIONAL,
                  SBX_FS_ORIGIN_RUNTIME);
}

const SbxPolicyV1 *
etu_policy_get (EtuPolicy *tp)
{
  tp->policy.struct_size = sizeof tp->policy;
  tp->policy.fs_rules = (const SbxFsRuleV1 *) (void *) tp->rules->data;
  tp->policy.n_fs_rules = tp->rules->len;
  tp->policy.net = &tp->net;
  tp->policy.limits = &tp->limits;
  return &tp->policy;
}

int
etu_run_sbx_va (EtuTree    *tree,
                const char *backend,
                char      **out,
                char      **err,
                const char *command,
                const char *first,
                va_list     ap)
{
  g_autoptr(GSubprocessLauncher) l = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE
                                                                | G_SUBPROCESS_FLAGS_STDERR_PIPE);
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  g_autoptr(GSubprocess) sp = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *path = g_strjoin (":", g_getenv ("SBX_TEST_LINUX_PLUGIN_DIR"),
                                     g_getenv ("SBX_TEST_EGRESS_HTTP_PLUGIN_DIR"), NULL);
  int status;

  g_assert_nonnull (g_getenv ("SBX_TEST_SBX"));
  g_ptr_array_add (argv, (gpointer) g_getenv ("SBX_TEST_SBX"));
  if (command != NULL)
    g_ptr_array_add (argv, (gpointer) command);
  for (const char *a = first; a != NULL; a = va_arg (ap, const char *))
    g_ptr_array_add (argv, (gpointer) a);
  g_ptr_array_add (argv, NULL);
  g_subprocess_launcher_setenv (l, "SBX_PLUGIN_PATH", path, TRUE);
  if (backend != NULL)
    g_subprocess_launcher_setenv (l, "SBX_BACKEND", backend, TRUE);
  else
    g_subprocess_launcher_unsetenv (l, "SBX_BACKEND");
  g_subprocess_launcher_setenv (l, "TMPDIR", tree->scratch, TRUE);
  g_subprocess_launcher_set_cwd (l, tree->ws);
  sp = g_subprocess_launcher_spawnv (l, (const char *const *) argv->pdata, &error);
  g_assert_no_error (error);
  g_assert_true (g_subprocess_communicate_utf8 (sp, NULL, NULL, out, err, &error));
  g_assert_no_error (error);
  status = g_subprocess_get_if_exited (sp) ? g_subprocess_get_exit_status (sp) : -1;
  g_test_message ("sbx %s %s...: %d\nstdout:\n%s\nstderr:\n%s", command != NULL ? command : "",
                  first != NULL ? first : "", status, *out, *err);
  return status;
}

int
etu_run_sbx (EtuTree    *tree,
             const char *backend,
             char      **out,
             char      **err,
             const char *first,
             ...)
{
  va_list ap;
  int status;

  va_start (ap, first);
  status = etu_run_sbx_va (tree, backend, out, err, NULL, first, ap);
  va_end (ap);
  return status;
}

guint
etu_count (const char *haystack,
           const char *needle)
{
  guint n = 0;

  for (const char *p = strstr (haystack, needle); p != NULL; p = strstr (p + 1, needle))
    n++;
  return n;
}

int
etu_run_outside (const char *command,
                 char      **out)
{
  const char *argv[] = { "/bin/sh", "-c", command, NULL };
  g_autoptr(GError) error = NULL;
  int status = -1;

  g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, out, NULL, &status,
                               &error));
  g_assert_no_error (error);
  return WIFEXITED (status) ? WEXITSTATUS (status) : -1;
}
