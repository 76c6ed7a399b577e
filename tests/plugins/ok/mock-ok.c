/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mock-ok: a working TEST DOUBLE backend.  IT CONFINES NOTHING.
 *
 * It claims level FULL and every guarantee it is configured to claim, and it
 * spawns the request as an ordinary child (fork + execve) in a new process
 * group, WITHOUT ANY CONFINEMENT; finish() kills the group.  It exists so
 * the registry and executor logic (selection, compile/spawn/finish plumbing,
 * Sandboxed-profile paths) can be tested without a real backend.  It is
 * built with install: false and must never be installed or shipped: a
 * registry that loaded it would run "sandboxed" commands unconfined.
 *
 * Configuration (read at init, for tests):
 *   SBX_MOCK_OK_GUARANTEES  guarantee bits to claim (strtoull base 0; default 0xff)
 *   SBX_MOCK_OK_LEVEL       level to claim, 0..2 (default 2 = full)
 *
 * Counters: sbx_mock_ok_count("probe" | "compile" | "spawn" | "signal" |
 * "finish" | "release" | "init" | "fini" | "emit") is exported so tests can
 * dlopen(RTLD_NOLOAD) this file and check how often the host called it.
 *
 * It also provides a reporter, "mock-ok-reporter" (config: a file path the
 * events are appended to, one per line; "fail" makes every emit fail).  The
 * egress test double is its own mock (tests/plugins/egress): an egress
 * extension requires SBX_HOST_FEATURE_EGRESS_V1, which this host does not
 * implement yet.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../mock-common.h"

/* Every entry point, declared through its ABI typedef (a signature that
 * does not match the slot it fills cannot compile). */
static SbxBackendProbeFunc ok_probe;
static SbxBackendCompileFunc ok_compile;
static SbxBackendSpawnFunc ok_spawn;
static SbxBackendSignalFunc ok_signal;
static SbxBackendFinishFunc ok_finish;
static SbxBackendReleaseFunc ok_release;
static SbxBackendSupportsGrantClassFunc ok_supports_grant_class;
static SbxReporterOpenFunc ok_reporter_open;
static SbxReporterEmitFunc ok_reporter_emit;
static SbxReporterCloseFunc ok_reporter_close;
static SbxPluginInitFunc ok_init;
static SbxPluginFiniFunc ok_fini;

SBX_PLUGIN_EXPORT unsigned sbx_mock_ok_count (const char *what);
SBX_PLUGIN_EXPORT const char *sbx_mock_ok_last_grants (void);

/* The grant rules (origin GRANT) of the last compiled policy, for the
 * grant tests: "PATH allow=A deny=D exact=E fd=same|none|other;" per rule,
 * where "same" means the rule's fd names the same inode as lstat(PATH).
 * Then "net=MODE dns=0|1 ports=P,...".  Single-threaded use only. */
static char last_grants[4096];

const char *
sbx_mock_ok_last_grants (void)
{
  return last_grants;
}

static void
record_grants (const SbxPolicyV1 *policy)
{
  size_t used = 0;

  last_grants[0] = '\0';
  for (uint32_t i = 0; i < policy->n_fs_rules; i++)
    {
      const SbxFsRuleV1 *r = &policy->fs_rules[i];
      const char *fd_state = "none";
      struct stat a, b;

      if (r->origin != SBX_FS_ORIGIN_GRANT)
        continue;
      if (r->fd >= 0)
        fd_state = fstat (r->fd, &a) == 0 && lstat (r->path, &b) == 0
                   && a.st_dev == b.st_dev && a.st_ino == b.st_ino ? "same" : "other";
      used += (size_t) snprintf (last_grants + used, sizeof last_grants - used,
                                 "%s allow=%u deny=%u exact=%u fd=%s;", r->path, r->allow, r->deny,
                                 (r->flags & SBX_FS_RULE_EXACT) ? 1u : 0u, fd_state);
      if (used >= sizeof last_grants)
        return;
    }
  used += (size_t) snprintf (last_grants + used, sizeof last_grants - used, "net=%u dns=%u ports=",
                             policy->net->mode, (policy->net->flags & SBX_NET_FLAG_DNS) ? 1u : 0u);
  for (uint32_t i = 0; i < policy->net->n_tcp_ports && used < sizeof last_grants; i++)
    used += (size_t) snprintf (last_grants + used, sizeof last_grants - used, "%s%u",
                               i > 0 ? "," : "", policy->net->tcp_ports[i]);
}

static unsigned n_init, n_fini, n_probe, n_compile, n_spawn, n_signal, n_finish, n_release, n_emit;

#define COUNT(counter) __atomic_add_fetch (&(counter), 1, __ATOMIC_SEQ_CST)

unsigned
sbx_mock_ok_count (const char *what)
{
  static const struct { const char *name; unsigned *counter; } counters[] = {
    { "init", &n_init }, { "fini", &n_fini }, { "probe", &n_probe }, { "compile", &n_compile },
    { "spawn", &n_spawn }, { "signal", &n_signal }, { "finish", &n_finish },
    { "release", &n_release }, { "emit", &n_emit },
  };

  for (size_t i = 0; i < sizeof counters / sizeof counters[0]; i++)
    if (strcmp (counters[i].name, what) == 0)
      return __atomic_load_n (counters[i].counter, __ATOMIC_SEQ_CST);
  return (unsigned) -1;
}

typedef struct
{
  const SbxHostV1 *host;
  uint64_t         guarantees;
  uint32_t         level;
} OkCtx;

typedef struct
{
  unsigned magic;
} OkSpec;

#define SPEC_MAGIC     0x5bc0ffeeu
#define SPEC_RELEASED  0xdeadbeefu

typedef struct
{
  pid_t pid;  /* also the process group id */
} OkChild;

static int32_t
ok_init (const SbxHostV1 *host,
         void           **plugin_ctx)
{
  OkCtx *ctx = calloc (1, sizeof *ctx);
  const char *text;

  if (ctx == NULL)
    return SBX_STATUS_NO_MEMORY;
  ctx->host = host;
  ctx->guarantees = 0xff;
  ctx->level = SBX_ABI_LEVEL_FULL;
  if ((text = getenv ("SBX_MOCK_OK_GUARANTEES")) != NULL)
    ctx->guarantees = strtoull (text, NULL, 0) & 0xff;
  if ((text = getenv ("SBX_MOCK_OK_LEVEL")) != NULL)
    ctx->level = (uint32_t) strtoul (text, NULL, 0);
  *plugin_ctx = ctx;
  COUNT (n_init);
  return SBX_STATUS_OK;
}

static void
ok_fini (void *plugin_ctx)
{
  COUNT (n_fini);
  free (plugin_ctx);
}

static int32_t
ok_probe (void             *plugin_ctx,
          SbxHostCall      *call,
          SbxProbeResultV1 *result)
{
  OkCtx *ctx = plugin_ctx;

  COUNT (n_probe);
  ctx->host->report (call, "mock-confinement", SBX_ABI_REPORT_UNENFORCED,
                     "test double: nothing is confined. Hint: never install mock plugins");
  result->level = ctx->level;
  result->guarantees = ctx->guarantees;
  result->flags = 0;
  return SBX_STATUS_OK;
}

static int32_t
ok_compile (void               *plugin_ctx,
            SbxHostCall        *call,
            const SbxPolicyV1  *policy,
            void              **spec_out,
            SbxCompileResultV1 *result)
{
  OkCtx *ctx = plugin_ctx;
  OkSpec *spec;

  COUNT (n_compile);
  if (policy == NULL || policy->struct_size < SBX_POLICY_V1_MIN_SIZE)
    {
      ctx->host->set_error (call, SBX_STATUS_INVALID, "mock-ok: policy struct too small");
      return SBX_STATUS_INVALID;
    }
  spec = malloc (sizeof *spec);
  if (spec == NULL)
    {
      ctx->host->set_error (call, SBX_STATUS_NO_MEMORY, "mock-ok: out of memory");
      return SBX_STATUS_NO_MEMORY;
    }
  spec->magic = SPEC_MAGIC;
  record_grants (policy);
  ctx->host->report (call, "mock-confinement", SBX_ABI_REPORT_UNENFORCED,
                     "test double: the child runs unconfined");
  result->level = ctx->level;
  result->guarantees = ctx->guarantees;
  /* A ports network (network.broad.v1) reaches any address on its ports:
   * like a real backend, the double claims no network bit for it, unless
   * a test asks it to lie (the core must refuse that spec). */
  if (policy->net != NULL && policy->net->mode == SBX_NET_MODE_PORTS
      && getenv ("SBX_MOCK_OK_CLAIM_PORTS_NETWORK") == NULL)
    result->guarantees &= ~(SBX_ABI_GUARANTEE_NETWORK_BOUNDARY | SBX_ABI_GUARANTEE_ADDRESS_NETWORK);
  *spec_out = spec;
  return SBX_STATUS_OK;
}

/* Finds argv[0] the way the ABI says: a name without '/' is looked up in the
 * PATH of the request's environment, never the host's. */
static int32_t
resolve_program (const SbxSpawnRequestV1 *request,
                 char                    *out,
                 size_t                   out_size)
{
  const char *argv0 = request->argv[0];
  const char *path = "/usr/local/bin:/usr/bin:/bin";
  int32_t status = SBX_STATUS_EXEC_NOT_FOUND;
  struct stat st;

  if (strchr (argv0, '/') != NULL)
    {
      if (argv0[0] == '/')
        snprintf (out, out_size, "%s", argv0);
      else
        snprintf (out, out_size, "%s/%s", request->cwd, argv0);
      if (stat (out, &st) != 0)
        return SBX_STATUS_EXEC_NOT_FOUND;
      if (!S_ISREG (st.st_mode) || access (out, X_OK) != 0)
        return SBX_STATUS_EXEC_DENIED;
      return SBX_STATUS_OK;
    }
  for (size_t i = 0; request->envp != NULL && request->envp[i] != NULL; i++)
    if (strncmp (request->envp[i], "PATH=", 5) == 0)
      path = request->envp[i] + 5;
  while (*path != '\0')
    {
      const char *end = strchr (path, ':');
      size_t len = end != NULL ? (size_t) (end - path) : strlen (path);

      if (len > 0)
        {
          snprintf (out, out_size, "%.*s/%s", (int) len, path, argv0);
          if (stat (out, &st) == 0)
            {
              if (S_ISREG (st.st_mode) && access (out, X_OK) == 0)
                return SBX_STATUS_OK;
              status = SBX_STATUS_EXEC_DENIED;
            }
        }
      path += len;
      if (*path == ':')
        path++;
    }
  return status;
}

static int32_t
ok_spawn (void                    *plugin_ctx,
          SbxHostCall             *call,
          void                    *spec_ptr,
          const SbxSpawnRequestV1 *request,
          SbxSpawnResultV1        *result)
{
  OkCtx *ctx = plugin_ctx;
  OkSpec *spec = spec_ptr;
  char program[PATH_MAX];
  char message[PATH_MAX + 128];
  int src[3] = { request->stdin_fd, request->stdout_fd, request->stderr_fd };
  int report_pipe[2];
  int32_t status;
  int child_errno = 0;
  ssize_t n;
  OkChild *child;
  pid_t pid;

  COUNT (n_spawn);
  if (spec == NULL || spec->magic != SPEC_MAGIC)
    {
      ctx->host->set_error (call, SBX_STATUS_INVALID, "mock-ok: spawn on a released spec");
      return SBX_STATUS_INVALID;
    }
  status = resolve_program (request, program, sizeof program);
  if (status != SBX_STATUS_OK)
    {
      snprintf (message, sizeof message, "mock-ok: %s: %s", request->argv[0],
                status == SBX_STATUS_EXEC_NOT_FOUND ? "command not found" : "not executable");
      ctx->host->set_error (call, status, message);
      return status;
    }
  child = calloc (1, sizeof *child);
  if (child == NULL || pipe2 (report_pipe, O_CLOEXEC) != 0)
    {
      free (child);
      ctx->host->set_error (call, SBX_STATUS_FAILED, "mock-ok: pipe2 failed");
      return SBX_STATUS_FAILED;
    }

  pid = fork ();
  if (pid < 0)
    {
      snprintf (message, sizeof message, "mock-ok: fork: %s", strerror (errno));
      close (report_pipe[0]);
      close (report_pipe[1]);
      free (child);
      ctx->host->set_error (call, SBX_STATUS_FAILED, message);
      return SBX_STATUS_FAILED;
    }
  if (pid == 0)
    {
      /* Child: async-signal-safe calls only (the host may be threaded). */
      int moved[3];

      setpgid (0, 0);
      for (int i = 0; i < 3; i++)
        {
          int fd = src[i] >= 0 ? src[i] : open ("/dev/null", O_RDWR | O_CLOEXEC);

          /* Move every source above 2 first, so overlapping targets work. */
          moved[i] = fcntl (fd, F_DUPFD_CLOEXEC, 3);
          if (moved[i] < 0)
            goto fail;
        }
      for (int i = 0; i < 3; i++)
        if (dup2 (moved[i], i) < 0)
          goto fail;
      if (request->cwd != NULL && chdir (request->cwd) != 0)
        goto fail;
      execve (program, (char *const *) request->argv, (char *const *) request->envp);
fail:
      child_errno = errno;
      (void) !write (report_pipe[1], &child_errno, sizeof child_errno);
      _exit (127);
    }

  /* Parent. */
  setpgid (pid, pid);  /* both sides, so signal() works as soon as we return */
  close (report_pipe[1]);
  do
    n = read (report_pipe[0], &child_errno, sizeof child_errno);
  while (n < 0 && errno == EINTR);
  close (report_pipe[0]);
  if (n == (ssize_t) sizeof child_errno)
    {
      int ignored;

      while (waitpid (pid, &ignored, 0) < 0 && errno == EINTR)
        ;
      free (child);
      status = child_errno == ENOENT ? SBX_STATUS_EXEC_NOT_FOUND
             : child_errno == EACCES || child_errno == ENOEXEC ? SBX_STATUS_EXEC_DENIED
             : SBX_STATUS_FAILED;
      snprintf (message, sizeof message, "mock-ok: exec %s: %s", program, strerror (child_errno));
      ctx->host->set_error (call, status, message);
      return status;
    }

  child->pid = pid;
  result->pid = pid;
  result->pidfd = -1;
  result->proxy_listen_fd = -1;
  result->containment = SBX_CONTAINMENT_BEST_EFFORT;
  result->child = child;
  return SBX_STATUS_OK;
}

static int32_t
ok_signal (void   *plugin_ctx,
           void   *child_ptr,
           int32_t signo)
{
  OkChild *child = child_ptr;

  COUNT (n_signal);
  if (child == NULL)
    return SBX_STATUS_INVALID;
  if (kill (-child->pid, signo) != 0 && errno != ESRCH)
    return SBX_STATUS_FAILED;
  return SBX_STATUS_OK;
}

static int32_t
ok_finish (void        *plugin_ctx,
           SbxHostCall *call,
           void        *child_ptr,
           int32_t      wait_status,
           SbxExitV1   *out)
{
  OkChild *child = child_ptr;

  COUNT (n_finish);
  if (child == NULL)
    return SBX_STATUS_INVALID;
  /* The whole group goes, whatever the target left behind. */
  kill (-child->pid, SIGKILL);
  if (WIFSIGNALED (wait_status))
    {
      out->kind = SBX_EXIT_SIGNALED;
      out->signo = WTERMSIG (wait_status);
    }
  else
    {
      out->kind = SBX_EXIT_EXITED;
      out->code = WEXITSTATUS (wait_status);
    }
  free (child);
  return SBX_STATUS_OK;
}

static void
ok_release (void *plugin_ctx,
            void *spec_ptr)
{
  OkSpec *spec = spec_ptr;

  COUNT (n_release);
  if (spec != NULL)
    {
      spec->magic = SPEC_RELEASED;
      free (spec);
    }
}

static uint32_t
ok_supports_grant_class (void       *plugin_ctx,
                         const char *grant_class)
{
  /* A test names one class the double cannot enforce. */
  const char *refused = getenv ("SBX_MOCK_OK_REFUSE_CLASS");

  return refused != NULL && grant_class != NULL && strcmp (refused, grant_class) == 0 ? 0 : 1;
}

/* Reporter. */
typedef struct
{
  int fail;
  int fd;
} OkSink;

static int32_t
ok_reporter_open (void         *plugin_ctx,
                  SbxHostCall  *call,
                  const char   *config,
                  void        **sink_out)
{
  OkCtx *ctx = plugin_ctx;
  OkSink *sink = calloc (1, sizeof *sink);

  if (sink == NULL)
    return SBX_STATUS_NO_MEMORY;
  sink->fd = -1;
  if (config != NULL && strcmp (config, "fail") == 0)
    sink->fail = 1;
  else if (config == NULL || (sink->fd = open (config, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600)) < 0)
    {
      free (sink);
      ctx->host->set_error (call, SBX_STATUS_INVALID, "mock-ok-reporter: config must be a writable file path");
      return SBX_STATUS_INVALID;
    }
  *sink_out = sink;
  return SBX_STATUS_OK;
}

static int32_t
ok_reporter_emit (void        *plugin_ctx,
                  SbxHostCall *call,
                  void        *sink_ptr,
                  const char  *event_json,
                  size_t       length)
{
  OkCtx *ctx = plugin_ctx;
  OkSink *sink = sink_ptr;

  COUNT (n_emit);
  if (sink->fail)
    {
      ctx->host->set_error (call, SBX_STATUS_FAILED, "mock-ok-reporter: configured to fail");
      return SBX_STATUS_FAILED;
    }
  if (write (sink->fd, event_json, length) != (ssize_t) length || write (sink->fd, "\n", 1) != 1)
    return SBX_STATUS_FAILED;
  return SBX_STATUS_OK;
}

static void
ok_reporter_close (void *plugin_ctx,
                   void *sink_ptr)
{
  OkSink *sink = sink_ptr;

  if (sink->fd >= 0)
    close (sink->fd);
  free (sink);
}

/* tests/plugins/broken-read reuses the code above under its own descriptor. */
#ifndef MOCK_OK_NO_DESCRIPTOR
static const SbxBackendVTableV1 ok_backend = {
  .struct_size = sizeof (SbxBackendVTableV1),
  .probe = ok_probe,
  .compile = ok_compile,
  .spawn = ok_spawn,
  .signal = ok_signal,
  .finish = ok_finish,
  .release = ok_release,
  .supports_grant_class = ok_supports_grant_class,
};

static const SbxReporterVTableV1 ok_reporter = {
  .struct_size = sizeof (SbxReporterVTableV1),
  .open = ok_reporter_open,
  .emit = ok_reporter_emit,
  .close = ok_reporter_close,
};

static const SbxPluginExtension ok_extensions[] = {
  { .struct_size = sizeof (SbxPluginExtension), .kind = SBX_EXT_BACKEND, .name = "mock-ok", .priority = 10,
    .vtable = &ok_backend },
  { .struct_size = sizeof (SbxPluginExtension), .kind = SBX_EXT_REPORTER, .name = "mock-ok-reporter", .priority = 0,
    .vtable = &ok_reporter },
  { 0 },
};

SBX_PLUGIN_DEFINE (mock_ok, "0.1.0", "LGPL-2.1-or-later", SBX_HOST_FEATURES_NONE,
                   ok_init, ok_fini, ok_extensions)
#endif /* MOCK_OK_NO_DESCRIPTOR */
