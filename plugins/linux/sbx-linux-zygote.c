/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The zygote of a rung-1 spec, parent side: started at the second spawn of
 * a spec, asked for one A per spawn, reset when it dies, torn down with the
 * spec.  The zygote itself (sbx_linux_child_zygote_main) is child code in
 * sbx-linux-child.c; the spawn path that uses it is sbx-linux-spawn.c.
 * Split from sbx-linux-spawn.c along its seam (the zygote's lifecycle).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "sbx-linux-zygote.h"
#include "sbx-linux-private.h"
#include "sbx-linux-child.h"
#include "sbx-linux-child-private.h"
#include "sbx-linux-clone.h"
#include "sbx-linux-view-start.h"

/* The zygote itself (sbx_linux_child_zygote_main) is child code: sbx-linux-child.c. */
struct _SbxLinuxZygote
{
  GMutex    lock;
  int       state;        /* ZYGOTE_* */
  pid_t     pid;
  int       pidfd;
  int       req[2];       /* supervisor -> zygote: one ChildCtx pointer */
  int       sup_pidfd;    /* pidfd of the supervisor process: the zygote's lifeline */
  int       resp[2];      /* zygote -> supervisor: one byte per request, or a setup error */
  char     *stack;
  ChildCtx *ctx;          /* the zygote's own (template) context */
  int      *tmpfs_fds;
  gint      n_spawns;
  SbxLinuxWarm *warm;     /* the sandbox prepared ahead of need, or NULL */
  gboolean  preparing;    /* one is being built (outside the lock) */
  guint     generation;   /* counts resets: a sandbox built for an earlier zygote is not kept */
};

enum { ZYGOTE_NONE = 0, ZYGOTE_RUNNING, ZYGOTE_FAILED };

SbxLinuxZygote *
sbx_linux_zygote_new (void)
{
  SbxLinuxZygote *z = g_new0 (SbxLinuxZygote, 1);

  g_mutex_init (&z->lock);
  z->pid = -1;
  z->pidfd = -1;
  z->sup_pidfd = -1;
  z->req[0] = z->req[1] = z->resp[0] = z->resp[1] = -1;
  return z;
}

static void
zygote_reset (SbxLinuxZygote *z)
{
  int status;

  /* The warm sandbox first: it lives in the zygote's namespaces. */
  g_clear_pointer (&z->warm, sbx_linux_warm_free);
  /* The zygote shares our descriptor table: closing the write end of its
   * request pipe ends its read() with EOF and it exits. */
  if (z->req[1] >= 0)
    close (z->req[1]);
  if (z->pid > 0)
    {
      if (z->pidfd >= 0)
        syscall (__NR_pidfd_send_signal, z->pidfd, SIGKILL, NULL, 0);
      while (waitpid (z->pid, &status, __WALL) < 0 && errno == EINTR)
        ;
    }
  if (z->pidfd >= 0)
    close (z->pidfd);
  if (z->req[0] >= 0)
    close (z->req[0]);
  if (z->resp[0] >= 0)
    close (z->resp[0]);
  if (z->resp[1] >= 0)
    close (z->resp[1]);
  if (z->sup_pidfd >= 0)
    close (z->sup_pidfd);
  z->sup_pidfd = -1;
  z->req[0] = z->req[1] = z->resp[0] = z->resp[1] = -1;
  z->pid = -1;
  z->pidfd = -1;
  sbx_linux_stacks_free (g_steal_pointer (&z->stack), 1);
  g_clear_pointer (&z->ctx, g_free);
  g_clear_pointer (&z->tmpfs_fds, g_free);
  z->state = ZYGOTE_NONE;
  z->generation++;
}

void
sbx_linux_zygote_free (SbxLinuxZygote *z)
{
  if (z == NULL)
    return;
  zygote_reset (z);
  g_mutex_clear (&z->lock);
  g_free (z);
}

/* Starts the zygote of @spec (z->lock held): its channels, its stack and
 * template context, the clone, then its 'R' (the template view is built).
 * FALSE when any of it fails; zygote_start() resets what is left. */
static gboolean
zygote_try_start (SbxLinuxSpec *spec)
{
  SbxLinuxZygote *z = spec->zygote;
  int flags = CLONE_VM | CLONE_FILES | CLONE_PIDFD | CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWUTS | SIGCHLD;
  char buf[sizeof (SbxLinuxSetupError)];
  const char *failed_call = NULL;
  sigset_t all, old;
  int i, n_slots;
  ssize_t n;

  if (sbx_linux_pipe (z->req, &failed_call) != 0 || sbx_linux_pipe (z->resp, &failed_call) != 0)
    return FALSE;
  z->sup_pidfd = sbx_linux_fd_above_stdio ((int) syscall (__NR_pidfd_open, getpid (), 0));
  if (z->sup_pidfd < 0)
    return FALSE;
  fcntl (z->sup_pidfd, F_SETFD, FD_CLOEXEC);
  z->stack = sbx_linux_stacks_new (1);
  if (z->stack == NULL)
    return FALSE;
  n_slots = spec->mounts->n_tmpfs_slots + 2;
  z->tmpfs_fds = g_new (int, n_slots);
  for (i = 0; i < n_slots; i++)
    z->tmpfs_fds[i] = -1;
  z->ctx = g_new0 (ChildCtx, 1);
  z->ctx->spec = spec;
  z->ctx->template = 1;
  z->ctx->tmpfs_fds = z->tmpfs_fds;
  z->ctx->err_fd = -1;
  z->ctx->egress_fd = -1;
  z->ctx->view_sock = -1;   /* the template keeps a tmpfs root (sbx-linux-view-server.h) */
  z->ctx->z_req_fd = z->req[0];
  z->ctx->z_resp_fd = z->resp[1];
  z->ctx->z_sup_pidfd = z->sup_pidfd;
  for (gsize k = 0; k < spec->mounts->n_ops; k++)
    if (spec->mounts->ops[k].kind == SBX_MOUNT_OP_MASK_FILE)
      z->ctx->needs_empty = 1;
  if (spec->mask_proc)
    z->ctx->needs_empty = 1;   /* the /proc masks use the empty file too */
  if (spec->netns)
    flags |= CLONE_NEWNET;

  /* Not sbx_linux_clone_vfork_on(): the zygote outlives this call (no
   * CLONE_VFORK), so it is cloned without libc (sbx_linux_raw_clone). */
  sigfillset (&all);
  pthread_sigmask (SIG_SETMASK, &all, &old);
  z->pid = (pid_t) sbx_linux_raw_clone ((unsigned long) flags, sbx_linux_stack_top (z->stack, 0),
                                        &z->pidfd, sbx_linux_child_zygote_main, z->ctx);
  pthread_sigmask (SIG_SETMASK, &old, NULL);
  if (z->pid < 0)
    {
      z->pid = -1;
      return FALSE;
    }
  do
    n = read (z->resp[0], buf, sizeof buf);
  while (n < 0 && errno == EINTR);
  return n == 1 && buf[0] == 'R';
}

/* Starts the zygote of @spec (z->lock held).  FALSE: spawn directly. */
static gboolean
zygote_start (SbxLinuxSpec *spec)
{
  SbxLinuxZygote *z = spec->zygote;

  if (zygote_try_start (spec))
    {
      z->state = ZYGOTE_RUNNING;
      return TRUE;
    }
  /* Whatever went wrong, spawns of this spec go the direct way (which
   * reports the failing step itself). */
  zygote_reset (z);
  z->state = ZYGOTE_FAILED;
  return FALSE;
}

gboolean
sbx_linux_zygote_claim_direct (SbxLinuxSpec *spec)
{
#ifdef SBX_LINUX_NO_ZYGOTE
  return TRUE;
#endif
  /* The first spawn of a spec goes directly: a single-shot caller (sbx run)
   * would only pay for the zygote.  A transient spec (one spawn with
   * grants: its view and Landlock rules are wider than the executor's) is
   * always spawned directly, outside any zygote: it has none of its own,
   * and the executor's shared zygote, built for the base spec, is never
   * asked to make a wider view.  A spec whose view root is the view
   * supervisor's FUSE filesystem goes through the zygote too, but its A
   * (ctx->view_sock set by the caller) builds a view of its own over a
   * FUSE root of its own instead of taking the template's tmpfs root
   * (child_az_main): the view supervisor and its denial sink are per
   * spawn. */
  return spec->transient || spec->zygote == NULL || g_atomic_int_add (&spec->zygote->n_spawns, 1) == 0;
}

/* The three outcomes are in sbx-linux-zygote.h. */
int
sbx_linux_zygote_spawn (SbxLinuxSpec *spec,
                        ChildCtx     *ctx)
{
  SbxLinuxZygote *z = spec->zygote;
  int result = SBX_LINUX_ZYGOTE_SPAWN_DIRECT;
  char byte;
  ssize_t n;

  /* Which spawns go directly is sbx_linux_zygote_claim_direct()'s rule,
   * asked (and the spawn counted) by the caller. */
  g_mutex_lock (&z->lock);
  if (z->state == ZYGOTE_RUNNING)
    {
      /* Killed from outside since the last spawn: make a new one. */
      struct pollfd pfd = { z->pidfd, POLLIN, 0 };

      if (poll (&pfd, 1, 0) != 0)
        zygote_reset (z);
    }
  if (z->state == ZYGOTE_NONE)
    zygote_start (spec);
  if (z->state == ZYGOTE_RUNNING)
    {
      struct pollfd pfd[2] = { { z->resp[0], POLLIN, 0 }, { z->pidfd, POLLIN, 0 } };

      ctx->zpid = -EIO;
      result = SBX_LINUX_ZYGOTE_SPAWN_LOST;
      if (write (z->req[1], &ctx, sizeof ctx) == (ssize_t) sizeof ctx)
        {
          while (poll (pfd, 2, -1) < 0 && errno == EINTR)
            ;
          if (pfd[0].revents & POLLIN)
            {
              do
                n = read (z->resp[0], &byte, 1);
              while (n < 0 && errno == EINTR);
              if (n == 1)
                result = SBX_LINUX_ZYGOTE_SPAWN_DONE;
            }
        }
      if (result != SBX_LINUX_ZYGOTE_SPAWN_DONE)
        zygote_reset (z);
    }
  g_mutex_unlock (&z->lock);
  return result;
}

/* ------------------------------------------------------------------------- */
/* The warm sandbox                                                           */
/* ------------------------------------------------------------------------- */

/* One A prepared ahead of need by the zygote for the next spawn of the
 * spec: its cgroup, its namespaces, the view with procfs, devpts and
 * /dev/shm, the pivot; exactly what a spawn through the zygote builds
 * (child_az_main, the same code), only earlier.  It then waits
 * (child_warm_wait) for the request, so a spawn that takes it pays for the
 * request and B's exec alone.  Rules:
 *  - it serves one execution: taken under the zygote's lock and detached
 *    from the zygote before its request is written, never handed back;
 *  - it never outlives the executor: the spec's zygote owns it, and the
 *    zygote's reset (release, executor close, a zygote found dead) kills
 *    and reaps it and destroys its cgroup before the zygote goes;
 *  - while it waits it shares the supervisor's descriptor table, so it
 *    keeps no copy of another spawn's pipes open (they would never reach
 *    EOF); the request's descriptors are in that table when it takes its
 *    private copy;
 *  - one that died or failed to build is discarded, and the spawn goes the
 *    way it would have without it (the zygote, which reports its own
 *    errors);
 *  - with spec->view_fuse it has a view supervisor of its own, started
 *    before the request to the zygote (A's binds look their mountpoints up
 *    in its FUSE root) and with no denial sink: what reaches it while the
 *    sandbox is built or waits is no attempt of any spawn.  The spawn that
 *    takes the sandbox gives the server its sink and frees it at finish()
 *    as a direct spawn's; a sandbox discarded unused frees it after A is
 *    reaped (a server stopped first would fail A's build lookups). */

/* The next byte A says on the ack pipe ('r' built, 'u' holds its own
 * table), or 0 when A died first. */
static char
warm_read_ack (SbxLinuxWarm *w)
{
  struct pollfd pfd[2] = { { w->ack[0], POLLIN, 0 }, { w->pidfd, POLLIN, 0 } };
  char byte = 0;
  ssize_t n;

  while (poll (pfd, 2, -1) < 0 && errno == EINTR)
    ;
  if (!(pfd[0].revents & POLLIN))
    return 0;
  do
    n = read (w->ack[0], &byte, 1);
  while (n < 0 && errno == EINTR);
  return n == 1 ? byte : 0;
}

void
sbx_linux_warm_free (SbxLinuxWarm *w)
{
  int status, i;

  if (w == NULL)
    return;
  /* Not consumed: A is waiting (or building); kill and reap it, once it
   * is built: while it builds it may hold descriptors it opened in the
   * table it shares with us, which a kill then would leave behind. */
  if (w->pid > 0)
    {
      if (!w->ready && w->pidfd >= 0)
        w->ready = warm_read_ack (w) == 'r';
      if (w->pidfd >= 0)
        syscall (__NR_pidfd_send_signal, w->pidfd, SIGKILL, NULL, 0);
      while (waitpid (w->pid, &status, __WALL) < 0 && errno == EINTR)
        ;
    }
  if (w->pidfd >= 0)
    close (w->pidfd);
  if (w->view_end >= 0)
    close (w->view_end);
  g_clear_pointer (&w->view, sbx_view_server_free);
  for (i = 0; i < 2; i++)
    {
      if (w->err_pipe[i] >= 0)
        close (w->err_pipe[i]);
      if (w->exit_pipe[i] >= 0)
        close (w->exit_pipe[i]);
      if (w->go[i] >= 0)
        close (w->go[i]);
      if (w->ack[i] >= 0)
        close (w->ack[i]);
    }
  /* Destroyed after A is reaped: it proves the cgroup empty. */
  g_clear_pointer (&w->cgroup, sbx_cgroup_free);
  sbx_linux_stacks_free (w->stacks, 2);
  g_free (w->tmpfs_fds);
  g_free (w->ctx);
  g_free (w);
}

/* A new warm sandbox for @spec, asked of the running zygote (z->lock
 * held); NULL when anything fails (the next spawn goes through the zygote). */
static SbxLinuxWarm *
warm_new (SbxLinuxSpec *spec)
{
  SbxLinuxZygote *z = spec->zygote;
  g_autoptr(SbxLinuxWarm) w = g_new0 (SbxLinuxWarm, 1);
  struct pollfd pfd[2] = { { z->resp[0], POLLIN, 0 }, { z->pidfd, POLLIN, 0 } };
  const char *failed_call = NULL;
  ChildCtx *ctx;
  int n_slots, i;
  char byte;
  ssize_t n;

  w->pid = -1;
  w->pidfd = -1;
  w->err_pipe[0] = w->err_pipe[1] = w->exit_pipe[0] = w->exit_pipe[1] = -1;
  w->go[0] = w->go[1] = w->ack[0] = w->ack[1] = -1;
  w->view_end = -1;
  if (sbx_linux_pipe (w->err_pipe, &failed_call) != 0 || sbx_linux_pipe (w->exit_pipe, &failed_call) != 0
      || sbx_linux_pipe (w->go, &failed_call) != 0 || sbx_linux_pipe (w->ack, &failed_call) != 0)
    return NULL;
  w->stacks = sbx_linux_stacks_new (2);
  if (w->stacks == NULL)
    return NULL;
  if (spec->cgroup_base != NULL)
    {
      w->cgroup = sbx_cgroup_new (spec->cgroup_base, spec->cgroup_max_pids, spec->cgroup_max_memory,
                                  NULL);
      if (w->cgroup == NULL)
        return NULL;
    }

  ctx = w->ctx = g_new0 (ChildCtx, 1);
  ctx->spec = spec;
  ctx->stack_a_top = sbx_linux_stack_top (w->stacks, 0);
  ctx->stack_b_top = sbx_linux_stack_top (w->stacks, 1);
  n_slots = spec->mounts->n_tmpfs_slots + 2;
  w->tmpfs_fds = g_new (int, n_slots);
  for (i = 0; i < n_slots; i++)
    w->tmpfs_fds[i] = -1;
  ctx->tmpfs_fds = w->tmpfs_fds;
  for (gsize k = 0; k < spec->mounts->n_ops; k++)
    if (spec->mounts->ops[k].kind == SBX_MOUNT_OP_MASK_FILE)
      ctx->needs_empty = 1;
  if (spec->mask_proc)
    ctx->needs_empty = 1;
  if (w->cgroup != NULL)
    ctx->n_cgroup_fds = sbx_cgroup_join_fds (w->cgroup, ctx->cgroup_fds);
  ctx->err_fd = w->err_pipe[1];
  ctx->exit_fd = w->exit_pipe[1];
  ctx->egress_fd = -1;
  ctx->view_sock = -1;
  ctx->pty_sock = -1;
  ctx->stdio[0] = ctx->stdio[1] = ctx->stdio[2] = -1;
  ctx->warm = 1;
  ctx->w_go_fd = w->go[0];
  ctx->w_ack_fd = w->ack[1];
  ctx->z_sup_pidfd = z->sup_pidfd;
  ctx->init_argv[0] = "sbx-init";
  ctx->init_argv[1] = "1";
  ctx->init_argv[2] = NULL;   /* B's pid, filled in by A */
  sbx_child_format_long (ctx->init_fd_buf, ctx->exit_fd);
  ctx->init_argv[3] = ctx->init_fd_buf;
  ctx->init_argv[4] = NULL;   /* the ignored signals: set_request (sbx-linux-spawn.c) */
  ctx->init_argv[5] = NULL;
  ctx->init_envp[0] = NULL;
  ctx->zpid = -EIO;
  ctx->z_pidfd = -1;
  /* Its own view supervisor, serving before A builds (no sink yet); none
   * where the spec has no FUSE root: A takes the template's tmpfs root.
   * One that cannot start makes no warm sandbox (the spawn that would
   * take it fails the same way when it makes its own). */
  {
    g_autoptr(GError) view_error = NULL;

    w->view = sbx_linux_view_start (spec, NULL, ctx, &w->view_end, &view_error);
    if (view_error != NULL)
      {
        g_debug ("linux-userns: no warm sandbox: the view supervisor: %s", view_error->message);
        return NULL;
      }
  }

  if (write (z->req[1], &ctx, sizeof ctx) != (ssize_t) sizeof ctx)
    {
      zygote_reset (z);
      return NULL;
    }
  while (poll (pfd, 2, -1) < 0 && errno == EINTR)
    ;
  n = -1;
  if (pfd[0].revents & POLLIN)
    do
      n = read (z->resp[0], &byte, 1);
    while (n < 0 && errno == EINTR);
  if (n != 1)
    {
      /* The zygote died during the request: A may exist, and its pid and
       * pidfd are in ctx if the clone returned. */
      if (ctx->zpid > 0)
        {
          w->pid = (pid_t) ctx->zpid;
          w->pidfd = ctx->z_pidfd;
        }
      g_clear_pointer (&w, sbx_linux_warm_free);
      zygote_reset (z);
      return NULL;
    }
  if (ctx->zpid <= 0)
    return NULL;
  w->pid = (pid_t) ctx->zpid;
  w->pidfd = ctx->z_pidfd;
  /* The FUSE mount is made by A's helper, which is gone once the view is
   * built: the server reads the sandbox's tasks through A (its PID 1). */
  if (w->view != NULL)
    sbx_view_server_set_sandbox_pid (w->view, w->pid);
  return g_steal_pointer (&w);
}

void
sbx_linux_zygote_prepare_warm (SbxLinuxSpec *spec)
{
  SbxLinuxZygote *z = spec->zygote;

#ifdef SBX_LINUX_NO_ZYGOTE
  return;
#endif
  if (spec->transient || z == NULL)
    return;
  g_autoptr(SbxLinuxWarm) w = NULL;
  guint generation = 0;

  g_mutex_lock (&z->lock);
  if (z->state == ZYGOTE_RUNNING && z->warm == NULL && !z->preparing)
    {
      w = warm_new (spec);
      z->preparing = w != NULL;
      generation = z->generation;
    }
  g_mutex_unlock (&z->lock);
  if (w == NULL)
    return;
  /* Waited for here, outside the lock (other spawns of the spec go on
   * through the zygote meanwhile): until A is built it may hold
   * descriptors in the table it shares with the caller, and a spawn call
   * must return with nothing of its own open but what it returns. */
  w->ready = warm_read_ack (w) == 'r';
  /* Built (or dead): A's helper has sent the device or is gone, and A
   * itself never uses its end of the server's socket pair. */
  if (w->view_end >= 0)
    {
      close (w->view_end);
      w->view_end = -1;
      w->ctx->view_sock = -1;   /* the number may be reused from now on */
    }
  /* A with a server made its FUSE root, or failed its setup (not ready). */
  g_assert (!w->ready || w->view == NULL || w->ctx->view_fuse);
  g_mutex_lock (&z->lock);
  z->preparing = FALSE;
  /* Kept only for the zygote it was asked of: a reset meanwhile closed the
   * supervisor pidfd this A watches as its lifeline. */
  if (w->ready && z->state == ZYGOTE_RUNNING && z->warm == NULL && z->generation == generation)
    z->warm = g_steal_pointer (&w);
  g_mutex_unlock (&z->lock);
}

SbxLinuxWarm *
sbx_linux_zygote_take_warm (SbxLinuxSpec *spec)
{
  SbxLinuxZygote *z = spec->zygote;
  SbxLinuxWarm *w = NULL;

  if (spec->transient || z == NULL)
    return NULL;
  g_mutex_lock (&z->lock);
  w = g_steal_pointer (&z->warm);
  g_mutex_unlock (&z->lock);
  if (w != NULL)
    {
      struct pollfd pfd = { w->pidfd, POLLIN, 0 };

      /* Died while it waited (killed from outside, or its build failed):
       * discard it, the spawn goes through the zygote. */
      if (w->pidfd < 0 || poll (&pfd, 1, 0) != 0)
        g_clear_pointer (&w, sbx_linux_warm_free);
    }
  return w;
}

gboolean
sbx_linux_warm_start (SbxLinuxWarm *w)
{
  ssize_t n;

  do
    n = write (w->go[1], "g", 1);
  while (n < 0 && errno == EINTR);
  if (n != 1)
    return FALSE;
  /* 'r' (built; it may still be building when the request comes) and
   * 'u', or A's death (its build failed, or it was killed): only 'u' lets
   * the caller close its ends. */
  if (!w->ready)
    {
      if (warm_read_ack (w) != 'r')
        return FALSE;
      w->ready = TRUE;
    }
  return warm_read_ack (w) == 'u';
}
