/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The spawn path of the Linux backend.
 *
 *  supervisor thread                 A (rung 1: PID 1 of the new pid ns)      B (the target)
 *  ---------------------------------------------------------------------------------------------
 *  block signals, pipes
 *  clone(CLONE_VM|CLONE_VFORK [+ns]) -> reset handlers
 *     (suspended)                       rung 1: own id maps, mount view,
 *                                       hostname, lo, pivot_root
 *                                       rung 2: PR_SET_CHILD_SUBREAPER
 *                                       clone(CLONE_VM|CLONE_VFORK) ---------> setsid, stdio, close fds,
 *                                          (suspended)                          chdir, rlimits, Landlock,
 *                                                                               caps dropped, no_new_privs,
 *                                                                               PDEATHSIG, seccomp, execve
 *                                       caps dropped, execveat(sbx-init) <----
 *  <- resumed: read the error pipe
 *     EOF: both exec'd -> OK
 *     a record: step/errno/index -> reap A, report
 *
 * Why CLONE_VM|CLONE_VFORK: no copy of the supervisor's page tables (GLib
 * programs can be large), and the supervisor cannot observe a half-built
 * child.  Like posix_spawn: the child runs only SBX_CHILD_FUNC code with raw
 * system calls on its own stack, with every signal blocked and every handler
 * reset before anything else.  No re-exec of the host program: the caller is
 * arbitrary C.
 *
 * Why A execs sbx-init: A is a copy of the supervisor (memory, environment,
 * descriptors); after the target is running A replaces itself with the tiny
 * embedded init, which holds only the exit-record pipe.  The target's signal
 * death reaches the supervisor through that record (PID 1 cannot easily die
 * by a signal), read in finish().
 *
 * The error channel is a CLOEXEC pipe carrying one fixed SbxLinuxSetupError
 * (step, errno, index of the failing mount op or device).  Its write end is
 * held by A and B only and closes on their execs, so EOF means success.
 *
 * sbx_linux_spawn() is the sequence of these steps: check the request,
 * open the channels, start A (a warm sandbox, or a fresh clone: one
 * SpawnStarted record either way), await the exec verdict, collect what A
 * and B hand over, publish the result.  Every step returns a status; a
 * failure after A exists goes through spawn_abort(), the one abort path,
 * and the descriptors go with their cleanups (<sbx/sbx-cleanup.h>).
 *
 * The stacks, the channels, the descriptor receive and the vfork clone are
 * in sbx-linux-clone.c; the zygote's lifecycle is in sbx-linux-zygote.c,
 * the request check and the setup-error messages in
 * sbx-linux-spawn-error.c, the child side in sbx-linux-child*.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <sbx/sbx-cleanup.h>

#include "sbx-linux-private.h"
#include "sbx-linux-child.h"
#include "sbx-linux-child-private.h"
#include "sbx-linux-clone.h"
#include "sbx-linux-egress.h"
#include "sbx-linux-stage.h"
#include "sbx-linux-unotify.h"
#include "sbx-linux-view-server.h"
#include "sbx-linux-view-start.h"
#include "sbx-linux-zygote.h"
#include "init/sbx-init-proto.h"

/* ------------------------------------------------------------------------- */
/* Parent side                                                                */
/* ------------------------------------------------------------------------- */

struct _SbxLinuxChild
{
  int        rung;
  pid_t      pid;
  int        pidfd;      /* our own reference; the host owns the one it was given */
  int        exit_fd;    /* read end of the exit-record pipe */
  SbxCgroup *cgroup;     /* the sandbox's own cgroup, or NULL */
  SbxUnotify *unotify;   /* the connect supervisor, or NULL */
  SbxViewServer *view;   /* the view supervisor (its FUSE root), or NULL */
};

static const char *
backend_name (const SbxLinuxSpec *spec)
{
  return spec->rung == SBX_LINUX_RUNG_USERNS ? SBX_LINUX_BACKEND_USERNS : SBX_LINUX_BACKEND_LANDLOCK;
}

/* Rung 1 without a proxy: A comes from the spec's zygote (or its warm
 * sandbox) from the second spawn on. */
static gboolean
spawn_uses_zygote (const SbxLinuxSpec *spec)
{
  return spec->rung == SBX_LINUX_RUNG_USERNS && spec->proxy_port == 0;
}

static const char *
find_path_env (const char *const *envp)
{
  for (; *envp != NULL; envp++)
    if (strncmp (*envp, "PATH=", 5) == 0)
      return *envp + 5;
  return NULL;
}

/* @envp with RES_OPTIONS=use-vc (added to an existing RES_OPTIONS). */
static GPtrArray *
envp_with_dns_over_tcp (const char *const *envp)
{
  GPtrArray *out = g_ptr_array_new_with_free_func (g_free);
  gboolean seen = FALSE;

  for (; *envp != NULL; envp++)
    {
      if (!seen && strncmp (*envp, "RES_OPTIONS=", 12) == 0)
        {
          seen = TRUE;
          g_ptr_array_add (out, g_strconcat (*envp, " use-vc", NULL));
        }
      else
        g_ptr_array_add (out, g_strdup (*envp));
    }
  if (!seen)
    g_ptr_array_add (out, g_strdup ("RES_OPTIONS=use-vc"));
  g_ptr_array_add (out, NULL);
  return out;
}

/* The request's part of @ctx: what the target runs, with which stdio; the
 * same for a fresh A and a warm one. */
static void
set_request (ChildCtx                *ctx,
             const SbxLinuxSpec      *spec,
             const SbxSpawnRequestV1 *request,
             GPtrArray               *dns_envp,
             int                      pty_sock,
             int                      unotify_sock)
{
  const SbxBackendDenialSinkV1 *sink = sbx_linux_view_request_sink (request);

  ctx->unotify_sock = unotify_sock;
  /* the condition sbx_view_server_set_sink() keeps an ask under */
  ctx->view_slots = spec->view_fuse && sink != NULL && sink->struct_size >= SBX_BACKEND_DENIAL_SINK_V1_ASK_SIZE
                    && sink->denied != NULL && sink->ask != NULL;
  /* Not ctx->spec: a warm A reads it while it builds (it was set when the
   * warm context was made, to the same spec). */
  ctx->cwd = request->cwd;
  ctx->argv = (char *const *) request->argv;
  ctx->envp = dns_envp != NULL ? (char *const *) dns_envp->pdata : (char *const *) request->envp;
  /* The target's own PATH (rung 1: the entries the view shows,
   * sbx_linux_view_envp()) */
  ctx->path_env = find_path_env ((const char *const *) ctx->envp);
  if (ctx->path_env == NULL)
    ctx->path_env = SBX_SPAWN_DEFAULT_PATH;   /* the ABI's search list without PATH */
  ctx->stdio[0] = request->stdin_fd;
  ctx->stdio[1] = request->stdout_fd;
  ctx->stdio[2] = request->stderr_fd;
  /* The filter of this spawn: the caller's terminal shared, the
   * terminal-setting requests refused (sbx_linux_spawn_shares_terminal()) */
  ctx->seccomp = spec->seccomp_terminal != NULL && sbx_linux_spawn_shares_terminal (request)
                 ? spec->seccomp_terminal : spec->seccomp;
  ctx->pty = (request->flags & SBX_SPAWN_PTY) != 0;
  ctx->pty_sock = -1;
  /* The signals the target starts with ignored; sbx-init gets them as its
   * fourth argument and ignores them too (it never forwards one the
   * command ignores).  init_argv[0..3] are set before this call. */
  ctx->ignored_signals = (request->flags & SBX_SPAWN_IGNORED_SIGNALS) != 0 ? request->ignored_signals : 0;
  if (ctx->ignored_signals != 0)
    {
      g_snprintf (ctx->init_ignored_buf, sizeof ctx->init_ignored_buf, "%" G_GUINT64_FORMAT,
                  (guint64) ctx->ignored_signals);
      ctx->init_argv[4] = ctx->init_ignored_buf;
    }
  else
    ctx->init_argv[4] = NULL;
  ctx->init_argv[5] = NULL;
  if (request->flags & SBX_SPAWN_PTY_SANDBOX)
    {
      ctx->pty_sandbox = 1;
      ctx->pty_sock = pty_sock;
      ctx->pty_rows = (unsigned short) request->pty_rows;
      ctx->pty_cols = (unsigned short) request->pty_cols;
    }
}

/* ------------------------------------------------------------------------- */
/* The steps of a spawn                                                       */
/* ------------------------------------------------------------------------- */

/* The descriptors between the supervisor and A and B: [0] is ours, [1] the
 * child's.  Whatever a step does not hand on is closed by
 * spawn_channels_clear(), on every path. */
typedef struct
{
  int err[2];       /* the setup-error channel: A and B hold [1] until they exec, so EOF is success */
  int exit[2];      /* the exit-record pipe: sbx-init holds [1]; [0] goes to the SbxLinuxChild */
  int egress[2];    /* egress: A sends the proxy listener (and the run's others) on [1] */
  int pty[2];       /* SBX_SPAWN_PTY_SANDBOX: B sends the sandbox terminal's master on [1] */
  int unotify[2];   /* the supervised filter: B sends its seccomp listener on [1] */
} SpawnChannels;

static void
spawn_channels_clear (SpawnChannels *ch)
{
  for (int i = 0; i < 2; i++)
    {
      sbx_clear_fd (&ch->err[i]);
      sbx_clear_fd (&ch->exit[i]);
      sbx_clear_fd (&ch->egress[i]);
      sbx_clear_fd (&ch->pty[i]);
      sbx_clear_fd (&ch->unotify[i]);
    }
}

/* The children's ends, closed once A has exec'd sbx-init or exited (a warm
 * A holds its own copies by then): the error channel can then reach EOF. */
static void
spawn_channels_close_child_ends (SpawnChannels *ch)
{
  sbx_clear_fd (&ch->err[1]);
  sbx_clear_fd (&ch->exit[1]);
  sbx_clear_fd (&ch->egress[1]);
  sbx_clear_fd (&ch->pty[1]);
  sbx_clear_fd (&ch->unotify[1]);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (SpawnChannels, spawn_channels_clear)

/* A started, from a warm sandbox or a fresh clone: what it runs on until
 * both execs, and what must go with it if the spawn fails. */
typedef struct
{
  int                   rung;
  gboolean              exec_ok;    /* the error channel reached EOF: A is sbx-init, B the target */
  pid_t                 pid;        /* A, or -1 (not started, or handed on) */
  int                   pidfd;
  ChildCtx             *ctx;
  int                  *tmpfs_fds;
  char                 *stacks;     /* A's and B's, until both have exec'd */
  SbxCgroup            *cgroup;     /* the sandbox's own cgroup, or NULL */
  SbxLinuxEgressListen *egress_listens;
  SbxViewServer        *view;       /* the view supervisor serving A's FUSE root, or NULL */
  SbxLinuxViewEarly    *primer;     /* the early root's thread, maybe still listing, or NULL */
} SpawnStarted;

/* The one abort path.  Nothing may be left behind: A is killed (rung 1:
 * its namespace dies with it; rung 2 before the exec verdict: B has exited
 * or was killed; rung 2 after it: sbx-init kills and reaps the tree, as
 * sbx_linux_signal() asks it to) and reaped, then its stacks and context
 * freed and its cgroup destroyed (it kills what is left and proves it
 * empty).  Once A is handed on (pid -1) only the memory is freed.
 * Idempotent: it is also the started record's cleanup. */
static void
spawn_abort (SpawnStarted *s)
{
  if (s->pid > 0)
    {
      int signo = s->exec_ok && s->rung == SBX_LINUX_RUNG_LANDLOCK ? SBX_INIT_SIGNAL_KILL_TREE : SIGKILL;
      int wstatus;

      if (s->pidfd >= 0)
        syscall (__NR_pidfd_send_signal, s->pidfd, signo, NULL, 0);
      while (waitpid (s->pid, &wstatus, __WALL) < 0 && errno == EINTR)
        ;
      s->pid = -1;
    }
  sbx_clear_fd (&s->pidfd);
  sbx_linux_stacks_free (g_steal_pointer (&s->stacks), 2);
  g_clear_pointer (&s->ctx, g_free);
  g_clear_pointer (&s->tmpfs_fds, g_free);
  g_clear_pointer (&s->cgroup, sbx_cgroup_free);
  g_clear_pointer (&s->egress_listens, g_free);
  /* The listing ahead of A stops (A has exec'd or is gone), then the
   * server: after A is reaped, the sandbox's lookups are over. */
  g_clear_pointer (&s->primer, sbx_linux_view_early_free);
  g_clear_pointer (&s->view, sbx_view_server_free);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (SpawnStarted, spawn_abort)

/* What A and B hand over after the exec verdict, until the result takes
 * it: the proxy's listener (and the request's other listeners, in
 * request->listen_fds), the connect supervisor, the sandbox terminal's
 * master. */
typedef struct
{
  const SbxSpawnRequestV1 *request;
  int                      proxy_listen_fd;
  SbxUnotify              *unotify;
  int                      pty_master;
} SpawnHandoffs;

static void
spawn_handoffs_clear (SpawnHandoffs *h)
{
  sbx_clear_fd (&h->proxy_listen_fd);
  sbx_clear_fd (&h->pty_master);
  g_clear_pointer (&h->unotify, sbx_unotify_stop);
  if (h->request != NULL)
    sbx_linux_egress_close_listens (h->request);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (SpawnHandoffs, spawn_handoffs_clear)

/* Step 0: what the request asks of this spec, checked before anything is
 * made. */
static int32_t
spawn_check (const SbxLinuxSpec       *spec,
             const SbxSpawnRequestV1  *request,
             const SbxSpawnResultV1   *result,
             char                    **error_message)
{
  if (!sbx_linux_spawn_request_is_valid (request, error_message))
    return SBX_STATUS_INVALID;
  if ((request->flags & SBX_SPAWN_PTY_SANDBOX) && result->struct_size < SBX_SPAWN_RESULT_V1_PTY_SIZE)
    {
      *error_message = g_strdup ("spawn result: too small to carry the sandbox terminal's master");
      return SBX_STATUS_INVALID;
    }
  if ((request->flags & SBX_SPAWN_IGNORED_SIGNALS) && result->struct_size < SBX_SPAWN_RESULT_V1_FLAGS_SIZE)
    {
      *error_message = g_strdup ("spawn result: too small to confirm the ignored signals");
      return SBX_STATUS_INVALID;
    }
  if ((request->flags & SBX_SPAWN_STAGED) && result->struct_size < SBX_SPAWN_RESULT_V1_FLAGS_SIZE)
    {
      *error_message = g_strdup ("spawn result: too small to confirm the staging");
      return SBX_STATUS_INVALID;
    }
  if (spec->probe->init_fd < 0)
    {
      *error_message = g_strdup ("linux: the sandbox init program cannot be executed on this host");
      return SBX_STATUS_UNAVAILABLE;
    }
  return SBX_STATUS_OK;
}

/* Step 1: the channels of the request, for a warm start and a cold one
 * alike: the sandbox terminal's, the connect supervisor's. */
static int32_t
spawn_open_channels (const SbxLinuxSpec       *spec,
                     const SbxSpawnRequestV1  *request,
                     SpawnChannels            *ch,
                     char                    **error_message)
{
  const SbxSeccompProgram *supervised;
  const char *failed_call = NULL;

  if ((request->flags & SBX_SPAWN_PTY_SANDBOX) && sbx_linux_seqpacket (ch->pty, &failed_call) != 0)
    {
      int saved_errno = errno;

      *error_message = g_strdup_printf ("linux: %s for the sandbox terminal: %s", failed_call,
                                        g_strerror (saved_errno));
      return SBX_STATUS_FAILED;
    }
  /* The filter B will load (set_request() picks it the same way) hands
   * connect() to the supervisor: B sends its listener over this pair. */
  supervised = spec->seccomp_terminal != NULL && sbx_linux_spawn_shares_terminal (request)
               ? spec->seccomp_terminal : spec->seccomp;
  if (supervised != NULL && (sbx_seccomp_program_enforces (supervised) & SBX_SECCOMP_ENFORCES_UNIX_SUPERVISED)
      && !sbx_unotify_channel_open (ch->unotify, error_message))
    return SBX_STATUS_FAILED;
  return SBX_STATUS_OK;
}

/* Step 2, warm: the sandbox the zygote prepared ahead of need takes the
 * request (sbx-linux-zygote.c).  FALSE when there is none, or it died:
 * the spawn goes the cold way. */
static gboolean
spawn_start_warm (SbxLinuxSpec            *spec,
                  const SbxSpawnRequestV1 *request,
                  GPtrArray               *dns_envp,
                  SpawnChannels           *ch,
                  SpawnStarted            *started)
{
  g_autoptr(SbxLinuxWarm) warm = NULL;

  if (spawn_uses_zygote (spec))
    warm = sbx_linux_zygote_take_warm (spec);
  if (warm == NULL)
    return FALSE;
  set_request (warm->ctx, spec, request, dns_envp, ch->pty[1], ch->unotify[1]);
  /* Its view supervisor reports this spawn's attempts from now on (before
   * the request: the target's first lookup may follow at once). */
  if (warm->view != NULL)
    sbx_view_server_set_sink (warm->view, sbx_linux_view_request_sink (request));
  if (!sbx_linux_warm_start (warm))
    return FALSE;
  started->view = g_steal_pointer (&warm->view);
  started->ctx = g_steal_pointer (&warm->ctx);
  started->tmpfs_fds = g_steal_pointer (&warm->tmpfs_fds);
  started->cgroup = g_steal_pointer (&warm->cgroup);
  started->stacks = g_steal_pointer (&warm->stacks);
  for (int i = 0; i < 2; i++)
    {
      ch->err[i] = sbx_steal_fd (&warm->err_pipe[i]);
      ch->exit[i] = sbx_steal_fd (&warm->exit_pipe[i]);
    }
  started->pid = warm->pid;
  started->pidfd = sbx_steal_fd (&warm->pidfd);
  warm->pid = -1;
  return TRUE;
}

/* The cold start's context: the spec's, the stacks, the tmpfs slots, the
 * cgroup A joins first, the pipes and the egress channel; then the
 * request. */
static int32_t
spawn_cold_context (SbxLinuxSpec            *spec,
                    const SbxSpawnRequestV1 *request,
                    GPtrArray               *dns_envp,
                    SpawnChannels           *ch,
                    SpawnStarted            *started,
                    char                   **error_message)
{
  ChildCtx *ctx = started->ctx = g_new0 (ChildCtx, 1);
  int n_slots = (spec->mounts != NULL ? spec->mounts->n_tmpfs_slots : 0) + 2;
  const char *failed_call = NULL;

  ctx->spec = spec;
  ctx->egress_fd = -1;
  ctx->view_sock = -1;
  started->tmpfs_fds = g_new (int, n_slots);
  for (int i = 0; i < n_slots; i++)
    started->tmpfs_fds[i] = -1;
  ctx->tmpfs_fds = started->tmpfs_fds;
  if (spec->mounts != NULL)
    for (gsize k = 0; k < spec->mounts->n_ops; k++)
      if (spec->mounts->ops[k].kind == SBX_MOUNT_OP_MASK_FILE)
        ctx->needs_empty = 1;
  if (spec->mask_proc)
    ctx->needs_empty = 1;   /* the /proc masks use the empty file too */
  if (spec->cgroup_base != NULL)
    {
      g_autoptr(GError) cg_error = NULL;

      /* The spec claims these limits: no cgroup, no spawn. */
      started->cgroup = sbx_cgroup_new (spec->cgroup_base, spec->cgroup_max_pids, spec->cgroup_max_memory,
                                        &cg_error);
      if (started->cgroup == NULL)
        {
          *error_message = g_strdup_printf ("%s: the sandbox's cgroup: %s", backend_name (spec),
                                            cg_error->message);
          return SBX_STATUS_FAILED;
        }
      ctx->n_cgroup_fds = sbx_cgroup_join_fds (started->cgroup, ctx->cgroup_fds);
    }

  started->stacks = sbx_linux_stacks_new (2);
  if (started->stacks == NULL)
    {
      int saved_errno = errno;

      *error_message = g_strdup_printf ("linux: mmap of the child stacks: %s", g_strerror (saved_errno));
      return SBX_STATUS_NO_MEMORY;
    }
  ctx->stack_a_top = sbx_linux_stack_top (started->stacks, 0);
  ctx->stack_b_top = sbx_linux_stack_top (started->stacks, 1);

  if (sbx_linux_pipe (ch->err, &failed_call) != 0 || sbx_linux_pipe (ch->exit, &failed_call) != 0)
    {
      int saved_errno = errno;

      *error_message = g_strdup_printf ("linux: %s: %s", failed_call, g_strerror (saved_errno));
      return SBX_STATUS_FAILED;
    }
  ctx->err_fd = ch->err[1];
  ctx->exit_fd = ch->exit[1];
  if (spec->proxy_port != 0)
    {
      /* Egress: a proxy spec never goes through a zygote (sbx-linux-spec.c). */
      if (!sbx_linux_egress_channel_open (ch->egress, error_message))
        return SBX_STATUS_FAILED;
      ctx->egress_fd = ch->egress[1];
      started->egress_listens = sbx_linux_egress_listens_copy (request, &ctx->n_egress_listens, error_message);
      if (ctx->n_egress_listens < 0)
        return SBX_STATUS_FAILED;
      ctx->egress_listens = started->egress_listens;
    }
  ctx->init_argv[0] = "sbx-init";
  ctx->init_argv[1] = spec->rung == SBX_LINUX_RUNG_USERNS ? "1" : "2";
  ctx->init_argv[2] = NULL;   /* B's pid, filled in by A */
  sbx_child_format_long (ctx->init_fd_buf, ctx->exit_fd);
  ctx->init_argv[3] = ctx->init_fd_buf;
  ctx->init_envp[0] = NULL;
  set_request (ctx, spec, request, dns_envp, ch->pty[1], ch->unotify[1]);
  return SBX_STATUS_OK;
}

/* The message of a clone that failed with @clone_errno, with the hint for
 * the usual causes. */
static char *
clone_failure_message (const SbxLinuxSpec *spec,
                       int                 clone_errno)
{
  return g_strdup_printf ("%s: clone: %s.%s", backend_name (spec), g_strerror (clone_errno),
                          clone_errno == ENOSPC
                          ? " Hint: the user or pid namespace limit is reached "
                            "(sysctl user.max_user_namespaces, user.max_pid_namespaces)."
                          : clone_errno == EPERM || clone_errno == EACCES
                          ? " Hint: unprivileged user namespaces are disabled "
                            "(sysctl kernel.unprivileged_userns_clone=1)."
                          : "");
}

/* Step 2, cold: A cloned for the request, through the spec's zygote from
 * its second spawn on (rung 1), else directly on our stacks, which A and B
 * use until they exec (CLONE_VFORK: we resume once A has exec'd sbx-init
 * or exited). */
static int32_t
spawn_start_cold (SbxLinuxSpec                     *spec,
                  const SbxSpawnRequestV1          *request,
                  const SbxLinuxStageMount *const  *stage,
                  GPtrArray                        *dns_envp,
                  SpawnChannels                    *ch,
                  SpawnStarted                     *started,
                  char                            **error_message)
{
  int32_t status = spawn_cold_context (spec, request, dns_envp, ch, started, error_message);
  ChildCtx *ctx = started->ctx;
  int view_end = -1;   /* A's end of the view supervisor's socket pair */
  int flags = CLONE_PIDFD;
  gboolean direct;
  long pid;

  if (status != SBX_STATUS_OK)
    return status;
  ctx->stage = stage;
  if (spec->rung == SBX_LINUX_RUNG_USERNS)
    {
      flags |= CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS;
      if (spec->netns)
        flags |= CLONE_NEWNET;
    }
  direct = spec->rung != SBX_LINUX_RUNG_USERNS || stage != NULL || sbx_linux_zygote_claim_direct (spec);
  /* The view supervisor first, either way: A, direct or the zygote's, has
   * a copy of our table with its end of the socket pair in it (or the
   * early root's mount, direct only), and runs to its exec before the
   * call returns (CLONE_VFORK). */
  if (spec->rung == SBX_LINUX_RUNG_USERNS)
    {
      /* the spec's early root (made at compile), for its first direct spawn */
      if (direct)
        started->view = sbx_linux_view_early_take (spec, ctx, &started->primer);
      if (started->view != NULL)
        {
          const char *failed_call = NULL;
          int sock[2];

          sbx_view_server_set_sink (started->view, sbx_linux_view_request_sink (request));
          /* Where A cannot attach it, A makes a root of its own and sends
           * its device here, as without the early root. */
          if (sbx_linux_seqpacket (sock, &failed_call) == 0)
            {
              if (sbx_view_server_watch_replacement (started->view, sock[0]))
                ctx->view_sock = view_end = sock[1];
              else
                close (sock[1]);
            }
        }
      else
        {
          g_autoptr(GError) view_error = NULL;

          started->view = sbx_linux_view_start (spec, request, ctx, &view_end, &view_error);
          if (view_error != NULL)
            {
              *error_message = g_strdup_printf ("%s: the view supervisor could not start (%s); the "
                                                "compile report promises that attempts outside the "
                                                "view are observed (fs-denials), so the spawn does "
                                                "not run without it",
                                                backend_name (spec), view_error->message);
              return SBX_STATUS_FAILED;
            }
        }
    }
  switch (!direct ? sbx_linux_zygote_spawn (spec, ctx) : SBX_LINUX_ZYGOTE_SPAWN_DIRECT)
    {
    case SBX_LINUX_ZYGOTE_SPAWN_DONE:
      pid = ctx->zpid;   /* or -errno */
      started->pidfd = ctx->z_pidfd;
      break;
    case SBX_LINUX_ZYGOTE_SPAWN_LOST:
      pid = -ECHILD;
      break;
    case SBX_LINUX_ZYGOTE_SPAWN_DIRECT:
    default:
      pid = sbx_linux_clone_vfork_on (sbx_linux_child_a_main, ctx, flags, ctx->stack_a_top, &started->pidfd);
      break;
    }
  sbx_clear_fd (&view_end);
  if (pid < 0)
    {
      *error_message = clone_failure_message (spec, (int) -pid);
      return SBX_STATUS_FAILED;
    }
  started->pid = (pid_t) pid;
  return SBX_STATUS_OK;
}

/* Step 3: A has exec'd sbx-init or exited: the verdict of the error
 * channel.  EOF: both exec'd.  A record: the failing step, described. */
static int32_t
spawn_await_exec (const SbxLinuxSpec       *spec,
                  const SbxSpawnRequestV1  *request,
                  SpawnChannels            *ch,
                  SpawnStarted             *started,
                  char                    **error_message)
{
  SbxLinuxSetupError rec;
  int saved_errno;
  ssize_t n;

  spawn_channels_close_child_ends (ch);
  do
    n = read (ch->err[0], &rec, sizeof rec);
  while (n < 0 && errno == EINTR);
  saved_errno = errno;
  sbx_clear_fd (&ch->err[0]);
  /* EOF or a record: A and B are past their last use of the stacks. */
  sbx_linux_stacks_free (g_steal_pointer (&started->stacks), 2);
  if (n == 0)
    {
      started->exec_ok = TRUE;
      /* A with a server made its FUSE root or failed (a record, below). */
      g_assert (started->view == NULL || started->ctx->view_fuse);
      return SBX_STATUS_OK;
    }
  if (n == (ssize_t) sizeof rec && rec.magic == SBX_LINUX_SETUP_ERROR_MAGIC)
    {
      *error_message = sbx_linux_spawn_describe_failure (spec, request, &rec);
      return sbx_linux_spawn_failure_status (&rec);
    }
  if (n < 0)
    *error_message = g_strdup_printf ("linux: reading the setup error channel: %s", g_strerror (saved_errno));
  else
    *error_message = g_strdup ("linux: malformed record on the setup error channel");
  return SBX_STATUS_FAILED;
}

/* The master B sent, checked to be a pseudo-terminal master; -1 with
 * errno set when none arrived (B sends before it execs, so it is there by
 * now). */
static int
receive_pty_master (int sock)
{
  sbx_autofd int master = -1;
  struct stat st;
  unsigned int ptn;
  char byte;
  int n = sbx_linux_receive_fds (sock, &byte, &master, 1);

  if (n < 0)
    return -1;
  if (n != 1 || fstat (master, &st) != 0 || !S_ISCHR (st.st_mode) || ioctl (master, TIOCGPTN, &ptn) != 0)
    {
      sbx_clear_fd (&master);
      errno = EPROTO;
      return -1;
    }
  return sbx_steal_fd (&master);
}

/* Step 4: what A and B sent before they exec'd (there now or never): the
 * egress listeners, the seccomp listener for the connect supervisor, the
 * sandbox terminal's master.  A spawn that misses one fails: the target
 * would run without its proxy, with every connect unanswered, or without
 * the terminal it was promised. */
static int32_t
spawn_collect_handoffs (const SbxLinuxSpec       *spec,
                        const SbxSpawnRequestV1  *request,
                        SpawnChannels            *ch,
                        const SpawnStarted       *started,
                        SpawnHandoffs            *out,
                        char                    **error_message)
{
  if (ch->egress[0] >= 0)
    {
      out->request = request;   /* its listen_fds are closed with the hand-offs */
      out->proxy_listen_fd = sbx_linux_egress_channel_receive (ch->egress[0], error_message);
      if (out->proxy_listen_fd < 0
          || !sbx_linux_egress_channel_receive_listens (ch->egress[0], request, started->ctx->n_egress_listens,
                                                        error_message))
        return SBX_STATUS_FAILED;
    }
  if (ch->unotify[0] >= 0)
    {
      out->unotify = sbx_linux_unotify_begin (spec, ch->unotify[0], started->pid,
                                              request->struct_size >= SBX_SPAWN_REQUEST_V1_DENIALS_SIZE
                                              ? request->denial_sink : NULL, error_message);
      /* NULL without a message: B's filter got no listener (sbx inside
       * sbx) and the kernel refuses what it would have handed over. */
      if (out->unotify == NULL && *error_message != NULL)
        return SBX_STATUS_FAILED;
    }
  if (ch->pty[0] >= 0)
    {
      out->pty_master = receive_pty_master (ch->pty[0]);
      if (out->pty_master < 0)
        {
          int saved_errno = errno;

          *error_message = g_strdup_printf ("%s: the sandbox terminal's master did not arrive (%s)",
                                            backend_name (spec), g_strerror (saved_errno));
          return SBX_STATUS_FAILED;
        }
    }
  return SBX_STATUS_OK;
}

/* Step 5: the running sandbox handed to the host: the child record (its
 * own pidfd, the exit-record pipe, the cgroup, the supervisor) and the
 * result. */
static void
spawn_publish (const SbxLinuxSpec      *spec,
               const SbxSpawnRequestV1 *request,
               SpawnChannels           *ch,
               SpawnStarted            *started,
               SpawnHandoffs           *handoffs,
               SbxSpawnResultV1        *result)
{
  SbxLinuxChild *child = g_new0 (SbxLinuxChild, 1);

  child->rung = spec->rung;
  child->pid = started->pid;
  child->pidfd = started->pidfd >= 0 ? fcntl (started->pidfd, F_DUPFD_CLOEXEC, 3) : -1;
  child->exit_fd = sbx_steal_fd (&ch->exit[0]);
  fcntl (child->exit_fd, F_SETFL, O_NONBLOCK);
  child->unotify = g_steal_pointer (&handoffs->unotify);
  child->view = g_steal_pointer (&started->view);
  if (started->cgroup != NULL)
    sbx_cgroup_close_procs (started->cgroup);
  child->cgroup = g_steal_pointer (&started->cgroup);

  result->containment = spec->containment;
  result->pid = started->pid;
  result->pidfd = sbx_steal_fd (&started->pidfd);
  result->proxy_listen_fd = sbx_steal_fd (&handoffs->proxy_listen_fd);
  result->child = child;
  if (request->flags & SBX_SPAWN_PTY_SANDBOX)
    result->pty_master_fd = sbx_steal_fd (&handoffs->pty_master);
  if (request->flags & SBX_SPAWN_IGNORED_SIGNALS)
    result->honoured_flags |= SBX_SPAWN_IGNORED_SIGNALS;
  if (request->flags & SBX_SPAWN_STAGED)
    result->honoured_flags |= SBX_SPAWN_STAGED;   /* sbx_linux_stage_plan() accepted it */
  handoffs->request = NULL;   /* the listeners are the host's now */
  started->pid = -1;
}

int32_t
sbx_linux_spawn (SbxLinuxSpec            *spec,
                 const SbxSpawnRequestV1 *request,
                 SbxSpawnResultV1        *result,
                 char                   **error_message)
{
  g_autoptr(GPtrArray) dns_envp = NULL;
  g_auto(SpawnChannels) ch = { { -1, -1 }, { -1, -1 }, { -1, -1 }, { -1, -1 }, { -1, -1 } };
  g_auto(SpawnStarted) started = { spec->rung, FALSE, -1, -1, NULL, NULL, NULL, NULL, NULL, NULL, NULL };
  g_auto(SpawnHandoffs) handoffs = { NULL, -1, NULL, -1 };
  g_autofree const SbxLinuxStageMount **stage = NULL;
  int32_t status;

  status = spawn_check (spec, request, result, error_message);
  if (status != SBX_STATUS_OK)
    return status;
  /* Staged (sbx-linux-stage.c): overlays replace the listed binds in this
   * sandbox only, so it is built fresh (no zygote, no warm sandbox). */
  if (request->flags & SBX_SPAWN_STAGED)
    {
      stage = sbx_linux_stage_plan (spec, request, &status, error_message);
      if (stage == NULL)
        return status;
    }
  /* A ports network has no UDP: glibc's resolver must use TCP.  The copy
   * lives until the child has exec'd (this function's end). */
  if (spec->dns_over_tcp)
    dns_envp = envp_with_dns_over_tcp (request->envp);
  /* TMPDIR and HOME where the view shows them (sbx-linux-tmp.c). */
  dns_envp = sbx_linux_view_envp (spec, g_steal_pointer (&dns_envp), request->envp);
  status = spawn_open_channels (spec, request, &ch, error_message);
  if (status == SBX_STATUS_OK && (stage != NULL || !spawn_start_warm (spec, request, dns_envp, &ch, &started)))
    status = spawn_start_cold (spec, request, stage, dns_envp, &ch, &started, error_message);
  if (status != SBX_STATUS_OK)
    return status;

  status = spawn_await_exec (spec, request, &ch, &started, error_message);
  if (status == SBX_STATUS_OK)
    status = spawn_collect_handoffs (spec, request, &ch, &started, &handoffs, error_message);
  if (status == SBX_STATUS_OK)
    spawn_publish (spec, request, &ch, &started, &handoffs, result);
  else
    spawn_abort (&started);
  /* Failed or not, the next sandbox of the spec is prepared now that this
   * one runs or is gone (off the path from the call to its exec): whether
   * one waits does not depend on how the last spawn went. */
  if (spawn_uses_zygote (spec))
    sbx_linux_zygote_prepare_warm (spec);
  return status;
}

static int
pidfd_signal (SbxLinuxChild *child,
              int            signo)
{
  if (child->pidfd >= 0)
    return (int) syscall (__NR_pidfd_send_signal, child->pidfd, signo, NULL, 0);
  return kill (child->pid, signo);
}

int32_t
sbx_linux_signal (SbxLinuxChild *child,
                  int            signo)
{
  int sent;

  if (child == NULL || signo <= 0 || signo >= 64)
    return SBX_STATUS_INVALID;
  if (signo == SIGKILL)
    {
      /* Rung 1: init's death kills the namespace.  Rung 2: init kills and
       * reaps the tree itself (killing init would orphan it). */
      sent = pidfd_signal (child, child->rung == SBX_LINUX_RUNG_USERNS ? SIGKILL
                                                                       : SBX_INIT_SIGNAL_KILL_TREE);
    }
  else if (SBX_INIT_FORWARDED_SIGNALS & (UINT64_C (1) << signo))
    sent = pidfd_signal (child, signo);
  else
    return SBX_STATUS_UNSUPPORTED;
  if (sent < 0 && errno != ESRCH)
    return SBX_STATUS_FAILED;
  return SBX_STATUS_OK;
}

int32_t
sbx_linux_finish (SbxLinuxChild *child,
                  int            wait_status,
                  SbxExitV1     *out,
                  char         **error_message)
{
  SbxInitExitRecord rec;
  int32_t status = SBX_STATUS_OK;
  gboolean have_record;
  ssize_t n;

  do
    n = read (child->exit_fd, &rec, sizeof rec);
  while (n < 0 && errno == EINTR);
  have_record = n == (ssize_t) sizeof rec && rec.magic == SBX_INIT_EXIT_MAGIC;

  out->struct_size = sizeof *out;
  if (have_record && rec.kind == SBX_INIT_KIND_SIGNALED)
    {
      out->kind = SBX_EXIT_SIGNALED;
      out->code = 0;
      out->signo = rec.signo;
    }
  else if (have_record)
    {
      out->kind = SBX_EXIT_EXITED;
      out->code = rec.code;
      out->signo = 0;
    }
  else if (WIFSIGNALED (wait_status))
    {
      /* Init itself was killed (rung 1: SIGKILL from signal(); the kernel
       * killed the whole namespace with it, the target included). */
      out->kind = SBX_EXIT_SIGNALED;
      out->code = 0;
      out->signo = WTERMSIG (wait_status);
    }
  else
    {
      out->kind = SBX_EXIT_EXITED;
      out->code = WIFEXITED (wait_status) ? WEXITSTATUS (wait_status) : 255;
      out->signo = 0;
      status = SBX_STATUS_FAILED;
      *error_message = g_strdup_printf ("linux: sbx-init ended without an exit record (wait status 0x%x)",
                                        (unsigned) wait_status);
    }

  /* The tree proof.  Rung 1: init has been reaped, and a pid namespace's
   * init is reaped only after every other process of the namespace is gone
   * (the kernel kills and waits for them), so the tree is empty.  Rung 2:
   * init writes TREE_EMPTY only once it has no child left after killing
   * every descendant (all orphans were reparented to it). */
  if (child->rung == SBX_LINUX_RUNG_LANDLOCK
      && !(have_record && (rec.flags & SBX_INIT_FLAG_TREE_EMPTY)))
    {
      status = SBX_STATUS_FAILED;
      g_free (*error_message);
      *error_message = g_strdup_printf ("linux-landlock: the process tree could not be proven empty: "
                                        "sbx-init ended without its proof (wait status 0x%x); "
                                        "descendants may have been reparented outside the sandbox",
                                        (unsigned) wait_status);
    }

  /* Whatever the rung, the cgroup holds every process the sandbox ever
   * started: kill what is left, prove it empty, remove it. */
  if (child->cgroup != NULL)
    {
      g_autoptr(GError) cg_error = NULL;

      if (!sbx_cgroup_destroy (child->cgroup, &cg_error))
        {
          status = SBX_STATUS_FAILED;
          g_free (*error_message);
          *error_message = g_strdup_printf ("linux: %s", cg_error->message);
        }
      sbx_cgroup_free (child->cgroup);
    }
  sbx_unotify_stop (child->unotify);
  /* The tree is gone: no lookup is left, and no denial is reported after
   * this returns. */
  sbx_view_server_free (child->view);
  if (child->pidfd >= 0)
    close (child->pidfd);
  close (child->exit_fd);
  g_free (child);
  return status;
}
