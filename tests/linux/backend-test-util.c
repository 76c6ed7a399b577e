/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "backend-test-util.h"
#include "sbx-policy-private.h"
#include "executor-test-util.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/wait.h>

const SbxPluginDescriptor *sbx_plugin_linux_entry (void);

/* ------------------------------------------------------------------------- */
/* Fake host                                                                  */
/* ------------------------------------------------------------------------- */

static void
entry_free (gpointer data)
{
  LinuxTestEntry *e = data;

  g_free (e->feature);
  g_free (e->detail);
  g_free (e);
}

/* The SbxHostCall handed to the plugin is the LinuxTestHost itself. */
static void
host_set_error (SbxHostCall *call,
                int32_t      status,
                const char  *message)
{
  LinuxTestHost *th = (LinuxTestHost *) call;

  g_mutex_lock (&th->lock);
  if (th->error == NULL)
    {
      th->error_status = status;
      th->error = g_strdup (message);
    }
  g_mutex_unlock (&th->lock);
}

static void
host_report (SbxHostCall *call,
             const char  *feature,
             uint32_t     status,
             const char  *detail)
{
  LinuxTestHost *th = (LinuxTestHost *) call;
  LinuxTestEntry *e = g_new0 (LinuxTestEntry, 1);

  g_assert_nonnull (feature);
  e->feature = g_strdup (feature);
  e->status = status;
  e->detail = g_strdup (detail);
  g_ptr_array_add (th->entries, e);
}

static void
host_log (uint32_t    level,
          const char *domain,
          const char *message)
{
  g_test_message ("[%s] %s", domain, message);
}

static void *
host_alloc (size_t size)
{
  return g_malloc (size);
}

static void
host_release (void *ptr)
{
  g_free (ptr);
}

static void
host_reset (LinuxTestHost *th)
{
  g_mutex_lock (&th->lock);
  g_clear_pointer (&th->error, g_free);
  th->error_status = 0;
  g_mutex_unlock (&th->lock);
}

/* ------------------------------------------------------------------------- */
/* Policy builder                                                             */
/* ------------------------------------------------------------------------- */

/* The executor-like preset over the helper library's one policy builder. */
struct _LinuxTestPolicy
{
  EtuPolicy      *base;
  char           *scratch;
  char           *home;
  char           *tmpdir;
  char           *state_dir;
  char           *workspace;
  uint32_t        flags;        /* SbxPolicyV1.flags */
  uint16_t       *ports;        /* net.tcp_ports (MODE_PORTS) */
  char          **host_sockets; /* SbxPolicyV1.host_sockets, or NULL */
};

#define R   SBX_FS_READ
#define X   SBX_FS_EXEC
#define W   SBX_FS_WRITE


static void
add_root_rule (LinuxTestPolicy *self,
               const char      *path,
               int              read,
               int              write,
               uint32_t         origin)
{
  uint32_t allow = 0, deny = 0;

  if (read == 2)
    allow |= R | X;
  else
    deny |= R | X;
  if (write == 2)
    allow |= W;
  else
    deny |= W;
  linux_test_policy_add_rule (self, path, allow, deny, 0, origin);
}

void
linux_test_policy_add_rule (LinuxTestPolicy *self,
                            const char      *path,
                            uint32_t         allow,
                            uint32_t         deny,
                            uint32_t         flags,
                            uint32_t         origin)
{
  /* Paths go in as given (relative ones too: tests feed the backend bad
   * input); the builder's '~' shorthand is never used here. */
  g_assert_true (path[0] != '~');
  etu_policy_add (self->base, path, allow, deny, flags, origin);
}

void
linux_test_policy_add_root (LinuxTestPolicy *self,
                            const char      *path,
                            int              read,
                            int              write)
{
  add_root_rule (self, path, read, write, SBX_FS_ORIGIN_ROOT);
}

LinuxTestPolicy *
linux_test_policy_new (const char *workspace,
                       int         ws_read,
                       int         ws_write,
                       int         host_read,
                       int         host_write)
{
  LinuxTestPolicy *self = g_new0 (LinuxTestPolicy, 1);
  gsize i;
  const SbxRuntimePath *closure;
  gsize n_closure;

  self->scratch = etu_make_tmpdir ("sbx-scratch-XXXXXX");
  self->base = etu_policy_new (self->scratch);
  self->home = g_build_filename (self->scratch, "home", NULL);
  self->tmpdir = g_build_filename (self->scratch, "tmp", NULL);
  self->state_dir = g_build_filename (self->scratch, "state", NULL);
  self->workspace = g_strdup (workspace);
  g_assert_cmpint (g_mkdir (self->home, 0700), ==, 0);
  g_assert_cmpint (g_mkdir (self->tmpdir, 0700), ==, 0);
  g_assert_cmpint (g_mkdir (self->state_dir, 0700), ==, 0);

  /* The executor's own runtime closure (core/plugin/sbx-policy.c), not a copy:
   * these tests exercise what production hands the backend. */
  closure = sbx_policy_runtime_closure (&n_closure);
  for (i = 0; i < n_closure; i++)
    linux_test_policy_add_rule (self, closure[i].path, closure[i].allow, 0, closure[i].flags,
                                closure[i].origin);
  add_root_rule (self, workspace, ws_read, ws_write, SBX_FS_ORIGIN_WORKSPACE);
  add_root_rule (self, "/", host_read, host_write, SBX_FS_ORIGIN_HOST);
  linux_test_policy_add_rule (self, self->home, SBX_FS_ALL, 0, 0, SBX_FS_ORIGIN_HOME);
  linux_test_policy_add_rule (self, self->tmpdir, SBX_FS_ALL, 0, 0, SBX_FS_ORIGIN_TMPDIR);

  self->base->net.mode = SBX_NET_MODE_DENY;
  self->base->net.tcp_ports = NULL;
  return self;
}

#undef R
#undef X
#undef W

void
linux_test_policy_set_net (LinuxTestPolicy *self,
                           uint32_t         mode)
{
  self->base->net.mode = mode;
}

void
linux_test_policy_set_ports (LinuxTestPolicy *self,
                             const uint16_t  *ports,
                             guint            n_ports)
{
  g_free (self->ports);
  self->ports = g_memdup2 (ports, n_ports * sizeof (uint16_t));
  self->base->net.mode = SBX_NET_MODE_PORTS;
  self->base->net.flags |= SBX_NET_FLAG_DNS;
  self->base->net.n_tcp_ports = n_ports;
  self->base->net.tcp_ports = self->ports;
}

void
linux_test_policy_set_limits (LinuxTestPolicy *self,
                              guint64          max_processes,
                              guint64          max_memory,
                              guint64          max_open_files)
{
  self->base->limits.max_processes = max_processes;
  self->base->limits.max_memory_bytes = max_memory;
  self->base->limits.max_open_files = max_open_files;
}

const SbxPolicyV1 *
linux_test_policy_get (LinuxTestPolicy *self)
{
  SbxPolicyV1 *policy = (SbxPolicyV1 *) etu_policy_get (self->base);

  policy->flags = self->flags;
  policy->workspace = self->workspace;
  policy->home = self->home;
  policy->tmpdir = self->tmpdir;
  policy->state_dir = self->state_dir;
  policy->host_sockets = (const char *const *) self->host_sockets;
  return policy;
}

void
linux_test_policy_set_host_sockets (LinuxTestPolicy    *self,
                                    const char * const *paths)
{
  g_strfreev (self->host_sockets);
  self->host_sockets = g_strdupv ((char **) paths);
}

void
linux_test_policy_set_flags (LinuxTestPolicy *self,
                             uint32_t         flags)
{
  self->flags = flags;
}

const char *
linux_test_policy_home (LinuxTestPolicy *self)
{
  return self->home;
}

const char *
linux_test_policy_tmpdir (LinuxTestPolicy *self)
{
  return self->tmpdir;
}

const char *
linux_test_policy_scratch (LinuxTestPolicy *self)
{
  return self->scratch;
}

void
linux_test_policy_free (LinuxTestPolicy *self)
{
  if (self == NULL)
    return;
  etu_rm_rf (self->scratch);
  etu_policy_free (self->base);
  g_free (self->scratch);
  g_free (self->home);
  g_free (self->tmpdir);
  g_free (self->state_dir);
  g_free (self->workspace);
  g_free (self->ports);
  g_strfreev (self->host_sockets);
  g_free (self);
}

/* ------------------------------------------------------------------------- */
/* Backend                                                                    */
/* ------------------------------------------------------------------------- */

static void
backend_denied (void                     *data,
                const SbxBackendDenialV1 *denial)
{
  LinuxTestBackend *self = data;
  static const char *const ops[] = { "read", "write", "exec", "list", "4", "5", "unix-connect" };

  g_mutex_lock (&self->denials_lock);
  g_ptr_array_add (self->denials, g_strdup_printf ("%s|%s|%s|%" G_GINT64_FORMAT,
                                                   denial->operation < G_N_ELEMENTS (ops)
                                                   ? ops[denial->operation] : "?",
                                                   denial->target, denial->mechanism,
                                                   (gint64) denial->pid));
  g_mutex_unlock (&self->denials_lock);
}

GPtrArray *
linux_test_backend_denials (LinuxTestBackend *self)
{
  GPtrArray *out;

  g_mutex_lock (&self->denials_lock);
  out = g_steal_pointer (&self->denials);
  self->denials = g_ptr_array_new_with_free_func (g_free);
  g_mutex_unlock (&self->denials_lock);
  return out;
}

LinuxTestBackend *
linux_test_backend_new (const char *name)
{
  const SbxPluginDescriptor *desc = sbx_plugin_linux_entry ();
  LinuxTestBackend *self = g_new0 (LinuxTestBackend, 1);
  const SbxPluginExtension *ext;

  self->th.host.struct_size = sizeof (SbxHostV1);
  self->th.host.abi_version = SBX_PLUGIN_ABI_VERSION;
  self->th.host.features = 0;
  self->th.host.core_version = "test";
  self->th.host.set_error = host_set_error;
  self->th.host.report = host_report;
  self->th.host.log = host_log;
  self->th.host.alloc = host_alloc;
  self->th.host.release = host_release;
  self->th.entries = g_ptr_array_new_with_free_func (entry_free);
  self->name = g_strdup (name);
  self->denials = g_ptr_array_new_with_free_func (g_free);
  g_mutex_init (&self->denials_lock);
  self->denial_sink.struct_size = sizeof self->denial_sink;
  self->denial_sink.denied = backend_denied;
  self->denial_sink.data = self;

  g_assert_nonnull (desc);
  g_assert_cmpuint (desc->abi_version, ==, SBX_PLUGIN_ABI_VERSION);
  g_assert_cmpstr (desc->name, ==, "linux");
  g_assert_cmpint (desc->init (&self->th.host, &self->plugin_ctx), ==, SBX_STATUS_OK);
  for (ext = desc->extensions; ext->kind != SBX_EXT_END; ext++)
    if (ext->kind == SBX_EXT_BACKEND && strcmp (ext->name, name) == 0)
      self->vtable = ext->vtable;
  g_assert_nonnull (self->vtable);
  return self;
}

void
linux_test_backend_free (LinuxTestBackend *self)
{
  if (self == NULL)
    return;
  if (self->spec != NULL)
    self->vtable->release (self->plugin_ctx, self->spec);
  sbx_plugin_linux_entry ()->fini (self->plugin_ctx);
  g_ptr_array_unref (self->th.entries);
  g_ptr_array_unref (self->denials);
  g_mutex_clear (&self->denials_lock);
  g_free (self->th.error);
  g_free (self->name);
  g_free (self);
}

int32_t
linux_test_backend_probe (LinuxTestBackend *self,
                          SbxProbeResultV1 *result)
{
  memset (result, 0, sizeof *result);
  result->struct_size = sizeof *result;
  host_reset (&self->th);
  g_ptr_array_set_size (self->th.entries, 0);
  return self->vtable->probe (self->plugin_ctx, (SbxHostCall *) &self->th, result);
}

int32_t
linux_test_backend_compile (LinuxTestBackend  *self,
                            const SbxPolicyV1 *policy)
{
  SbxCompileResultV1 result = { sizeof result, 0, 0 };
  int32_t status;

  if (self->spec != NULL)
    {
      self->vtable->release (self->plugin_ctx, self->spec);
      self->spec = NULL;
    }
  host_reset (&self->th);
  g_ptr_array_set_size (self->th.entries, 0);
  status = self->vtable->compile (self->plugin_ctx, (SbxHostCall *) &self->th, policy,
                                  &self->spec, &result);
  if (status == SBX_STATUS_OK)
    {
      g_assert_nonnull (self->spec);
      g_assert_null (self->th.error);
      self->level = result.level;
      self->guarantees = result.guarantees;
    }
  else
    {
      g_assert_nonnull (self->th.error);
      g_test_message ("compile failed (%d): %s", status, self->th.error);
    }
  return status;
}

const LinuxTestEntry *
linux_test_backend_entry (LinuxTestBackend *self,
                          const char       *feature)
{
  guint i;

  for (i = 0; i < self->th.entries->len; i++)
    {
      LinuxTestEntry *e = g_ptr_array_index (self->th.entries, i);

      if (strcmp (e->feature, feature) == 0)
        return e;
    }
  return NULL;
}

void
linux_test_run_free (LinuxTestRun *run)
{
  if (run == NULL)
    return;
  g_free (run->spawn_error);
  g_free (run->finish_error);
  g_free (run->out);
  g_free (run->err);
  g_free (run);
}

/* Reads both pipes to EOF while feeding @input. */
static void
pump (int         in_fd,
      const char *input,
      int         out_fd,
      int         err_fd,
      GString    *out,
      GString    *err)
{
  gsize in_len = input != NULL ? strlen (input) : 0, in_done = 0;
  char buf[4096];

  if (in_fd >= 0 && in_len == 0)
    {
      close (in_fd);
      in_fd = -1;
    }
  while (out_fd >= 0 || err_fd >= 0 || in_fd >= 0)
    {
      struct pollfd pfd[3] = { { out_fd, POLLIN, 0 }, { err_fd, POLLIN, 0 }, { in_fd, POLLOUT, 0 } };
      ssize_t n;

      if (poll (pfd, 3, -1) < 0)
        {
          g_assert_cmpint (errno, ==, EINTR);
          continue;
        }
      if (out_fd >= 0 && pfd[0].revents)
        {
          n = read (out_fd, buf, sizeof buf);
          if (n > 0)
            g_string_append_len (out, buf, n);
          else
            {
              close (out_fd);
              out_fd = -1;
            }
        }
      if (err_fd >= 0 && pfd[1].revents)
        {
          n = read (err_fd, buf, sizeof buf);
          if (n > 0)
            g_string_append_len (err, buf, n);
          else
            {
              close (err_fd);
              err_fd = -1;
            }
        }
      if (in_fd >= 0 && pfd[2].revents)
        {
          n = write (in_fd, input + in_done, in_len - in_done);
          if (n > 0)
            in_done += (gsize) n;
          if (n <= 0 || in_done == in_len)
            {
              close (in_fd);
              in_fd = -1;
            }
        }
    }
}

struct _LinuxTestProc
{
  LinuxTestBackend *backend;
  SbxSpawnResultV1  res;
  int               in_fd;
  int               out_fd;
  int               err_fd;
  GString          *out;
};

LinuxTestProc *
linux_test_backend_start (LinuxTestBackend  *self,
                          LinuxTestPolicy   *policy,
                          const char        *cwd,
                          const char *const *argv,
                          const char *const *envp,
                          int                stdin_fd,
                          uint32_t           flags,
                          LinuxTestRun     **run_out)
{
  return linux_test_backend_start_sink (self, policy, cwd, argv, envp, stdin_fd, flags, &self->denial_sink,
                                        run_out);
}

LinuxTestProc *
linux_test_backend_start_sink (LinuxTestBackend             *self,
                               LinuxTestPolicy              *policy,
                               const char                   *cwd,
                               const char *const            *argv,
                               const char *const            *envp,
                               int                           stdin_fd,
                               uint32_t                      flags,
                               const SbxBackendDenialSinkV1 *sink,
                               LinuxTestRun                **run_out)
{
  LinuxTestProc *proc;
  SbxSpawnRequestV1 req = { 0 };
  SbxSpawnResultV1 res = { 0 };
  g_auto(GStrv) default_env = NULL;
  int in_pipe[2] = { -1, -1 }, out_pipe[2], err_pipe[2];
  int32_t status;

  g_assert_nonnull (self->spec);
  *run_out = NULL;
  if (envp == NULL)
    {
      default_env = g_new0 (char *, 5);
      default_env[0] = g_strdup ("PATH=/usr/local/bin:/usr/bin:/bin");
      default_env[1] = g_strdup_printf ("HOME=%s", linux_test_policy_home (policy));
      default_env[2] = g_strdup_printf ("TMPDIR=%s", linux_test_policy_tmpdir (policy));
      default_env[3] = g_strdup ("LANG=C.UTF-8");
      envp = (const char *const *) default_env;
    }
  if (stdin_fd < 0)
    g_assert_cmpint (pipe2 (in_pipe, O_CLOEXEC), ==, 0);
  g_assert_cmpint (pipe2 (out_pipe, O_CLOEXEC), ==, 0);
  g_assert_cmpint (pipe2 (err_pipe, O_CLOEXEC), ==, 0);
  req.struct_size = sizeof req;
  req.flags = flags;
  req.cwd = cwd;
  req.argv = argv;
  req.envp = envp;
  req.stdin_fd = stdin_fd >= 0 ? stdin_fd : in_pipe[0];
  req.stdout_fd = out_pipe[1];
  req.stderr_fd = err_pipe[1];
  req.denial_sink = sink;
  res.struct_size = sizeof res;
  host_reset (&self->th);
  status = self->vtable->spawn (self->plugin_ctx, (SbxHostCall *) &self->th, self->spec, &req, &res);
  if (in_pipe[0] >= 0)
    close (in_pipe[0]);
  close (out_pipe[1]);
  close (err_pipe[1]);
  if (status != SBX_STATUS_OK)
    {
      LinuxTestRun *run = g_new0 (LinuxTestRun, 1);

      run->spawn_status = status;
      g_mutex_lock (&self->th.lock);
      run->spawn_error = g_strdup (self->th.error != NULL ? self->th.error : "(no message)");
      g_mutex_unlock (&self->th.lock);
      g_test_message ("spawn failed (%d): %s", status, run->spawn_error);
      if (in_pipe[1] >= 0)
        close (in_pipe[1]);
      close (out_pipe[0]);
      close (err_pipe[0]);
      *run_out = run;
      return NULL;
    }
  g_assert_cmpint (res.pid, >, 0);
  g_assert_cmpint (res.pidfd, >=, 0);
  g_assert_cmpint (res.proxy_listen_fd, ==, -1);
  g_assert_nonnull (res.child);
  proc = g_new0 (LinuxTestProc, 1);
  proc->backend = self;
  proc->res = res;
  proc->in_fd = in_pipe[1];
  proc->out_fd = out_pipe[0];
  proc->err_fd = err_pipe[0];
  proc->out = g_string_new (NULL);
  return proc;
}

LinuxTestProc *
linux_test_backend_start_sandbox_pty (LinuxTestBackend  *self,
                                      LinuxTestPolicy   *policy,
                                      const char        *cwd,
                                      const char *const *argv,
                                      guint              rows,
                                      guint              cols,
                                      LinuxTestRun     **run_out)
{
  LinuxTestProc *proc;
  SbxSpawnRequestV1 req = { 0 };
  SbxSpawnResultV1 res = { 0 };
  g_auto(GStrv) env = g_new0 (char *, 6);
  int32_t status;

  g_assert_nonnull (self->spec);
  *run_out = NULL;
  env[0] = g_strdup ("PATH=/usr/local/bin:/usr/bin:/bin");
  env[1] = g_strdup_printf ("HOME=%s", linux_test_policy_home (policy));
  env[2] = g_strdup_printf ("TMPDIR=%s", linux_test_policy_tmpdir (policy));
  env[3] = g_strdup ("LANG=C.UTF-8");
  env[4] = g_strdup ("TERM=dumb");
  req.struct_size = sizeof req;
  req.flags = SBX_SPAWN_PTY_SANDBOX;
  req.cwd = cwd;
  req.argv = argv;
  req.envp = (const char *const *) env;
  req.stdin_fd = req.stdout_fd = req.stderr_fd = -1;
  req.pty_rows = rows;
  req.pty_cols = cols;
  res.struct_size = sizeof res;
  res.pty_master_fd = -1;
  host_reset (&self->th);
  status = self->vtable->spawn (self->plugin_ctx, (SbxHostCall *) &self->th, self->spec, &req, &res);
  if (status != SBX_STATUS_OK)
    {
      LinuxTestRun *run = g_new0 (LinuxTestRun, 1);

      run->spawn_status = status;
      g_mutex_lock (&self->th.lock);
      run->spawn_error = g_strdup (self->th.error != NULL ? self->th.error : "(no message)");
      g_mutex_unlock (&self->th.lock);
      g_test_message ("spawn failed (%d): %s", status, run->spawn_error);
      g_assert_cmpint (res.pty_master_fd, ==, -1);
      *run_out = run;
      return NULL;
    }
  g_assert_cmpint (res.pid, >, 0);
  g_assert_cmpint (res.pidfd, >=, 0);
  g_assert_cmpint (res.pty_master_fd, >, 2);
  g_assert_cmpint (fcntl (res.pty_master_fd, F_GETFD), ==, FD_CLOEXEC);
  proc = g_new0 (LinuxTestProc, 1);
  proc->backend = self;
  proc->res = res;
  proc->in_fd = -1;
  proc->out_fd = res.pty_master_fd;   /* read to EIO: every slave closed */
  proc->err_fd = -1;
  proc->out = g_string_new (NULL);
  return proc;
}

int
linux_test_proc_pty_master (LinuxTestProc *proc)
{
  return proc->res.pty_master_fd;
}

pid_t
linux_test_proc_pid (LinuxTestProc *proc)
{
  return (pid_t) proc->res.pid;
}

void *
linux_test_proc_child (LinuxTestProc *proc)
{
  return proc->res.child;
}

gboolean
linux_test_proc_read_until (LinuxTestProc *proc,
                            const char    *text,
                            int            timeout_ms)
{
  gint64 deadline = g_get_monotonic_time () + (gint64) timeout_ms * 1000;

  while (strstr (proc->out->str, text) == NULL)
    {
      struct pollfd pfd = { proc->out_fd, POLLIN, 0 };
      gint64 left = (deadline - g_get_monotonic_time ()) / 1000;
      char buf[1024];
      ssize_t n;

      if (left <= 0 || poll (&pfd, 1, (int) left) <= 0)
        return FALSE;
      n = read (proc->out_fd, buf, sizeof buf);
      if (n <= 0)
        return FALSE;
      g_string_append_len (proc->out, buf, n);
    }
  return TRUE;
}

LinuxTestRun *
linux_test_proc_wait (LinuxTestProc *proc,
                      const char    *input)
{
  LinuxTestBackend *self = proc->backend;
  LinuxTestRun *run = g_new0 (LinuxTestRun, 1);
  g_autoptr(GString) err = g_string_new (NULL);
  int status = 0;
  pid_t r;

  pump (proc->in_fd, input, proc->out_fd, proc->err_fd, proc->out, err);
  do
    r = waitpid ((pid_t) proc->res.pid, &status, __WALL);
  while (r < 0 && errno == EINTR);
  g_assert_cmpint (r, ==, proc->res.pid);
  close (proc->res.pidfd);
  host_reset (&self->th);
  run->exit.struct_size = sizeof run->exit;
  run->finish_status = self->vtable->finish (self->plugin_ctx, (SbxHostCall *) &self->th,
                                             proc->res.child, status, &run->exit);
  g_mutex_lock (&self->th.lock);
  run->finish_error = g_strdup (self->th.error);
  g_mutex_unlock (&self->th.lock);
  if (run->finish_status != SBX_STATUS_OK)
    g_test_message ("finish failed (%d): %s", run->finish_status, run->finish_error);
  run->out = g_string_free (proc->out, FALSE);
  run->err = g_string_free (g_steal_pointer (&err), FALSE);
  if (run->err[0] != '\0')
    g_test_message ("stderr: %s", run->err);
  g_free (proc);
  return run;
}

LinuxTestRun *
linux_test_backend_run (LinuxTestBackend  *self,
                        LinuxTestPolicy   *policy,
                        const char        *cwd,
                        const char *const *argv,
                        const char *const *envp,
                        const char        *input)
{
  LinuxTestRun *run = NULL;
  LinuxTestProc *proc;

  proc = linux_test_backend_start (self, policy, cwd, argv, envp, -1, 0, &run);
  if (proc == NULL)
    return run;
  return linux_test_proc_wait (proc, input);
}

LinuxTestRun *
linux_test_backend_sh (LinuxTestBackend  *self,
                       LinuxTestPolicy   *policy,
                       const char        *cwd,
                       const char        *script)
{
  const char *argv[] = { "sh", "-c", script, NULL };

  return linux_test_backend_run (self, policy, cwd, argv, NULL, NULL);
}

int
linux_test_host_sh (const char *cwd,
                    const char *script,
                    char      **out)
{
  const char *argv[] = { "/bin/sh", "-c", script, NULL };
  g_autoptr(GError) error = NULL;
  g_autofree char *stdout_buf = NULL;
  int status = 0;

  g_assert_true (g_spawn_sync (cwd, (char **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL,
                               &stdout_buf, NULL, &status, &error));
  g_assert_no_error (error);
  if (out != NULL)
    *out = g_steal_pointer (&stdout_buf);
  if (WIFSIGNALED (status))
    return 128 + WTERMSIG (status);
  return WEXITSTATUS (status);
}

gboolean
linux_test_have_rung (const char *backend_name,
                      char      **why)
{
  g_autoptr(LinuxTestBackend) b = linux_test_backend_new (backend_name);
  SbxProbeResultV1 result;

  if (linux_test_backend_probe (b, &result) == SBX_STATUS_OK)
    return TRUE;
  *why = g_strdup_printf ("%s is unavailable on this host: %s", backend_name, b->th.error);
  return FALSE;
}

void
linux_test_add_both (const char *name,
                     void      (*func) (gconstpointer rung))
{
  static const char *const rungs[] = { "linux-userns", "linux-landlock" };
  gsize i;

  for (i = 0; i < G_N_ELEMENTS (rungs); i++)
    {
      g_autofree char *path = g_strdup_printf ("/linux/%s/%s", rungs[i], name);

      g_test_add_data_func (path, rungs[i], func);
    }
}
