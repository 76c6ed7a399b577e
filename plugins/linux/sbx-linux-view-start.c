/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The view supervisor's start for a rung-1 spawn (direct, through the
 * zygote, or a warm sandbox built ahead of its spawn).  The server must
 * serve while A builds the view (A's binds look their mountpoints up in the
 * FUSE root), so it starts before the clone; A, once it has made the
 * mount, sends the /dev/fuse descriptor, and the kernel adds A's
 * credentials to the message (the server set SO_PASSCRED): FUSE numbers a
 * request's pid in the pid namespace of the process that made the mount,
 * A's, and the server reads tasks through /proc/A/root/proc.  (A warm A
 * has a helper in its pid namespace make the mount and send it, and the
 * spawning process names A to the server: sbx-linux-zygote.c.)  When
 * anything here or in A's mount fails, the spawn fails (a setup step,
 * "view-supervisor-root"): the spec's report promises that attempts
 * outside the view are observed, and a spawn never runs with less than
 * its report says.  A spec whose report says they are not (no FUSE on
 * this host) has no server and keeps the tmpfs root.  (Where this
 * process may mount FUSE itself, the first direct spawn of a spec takes
 * an early root instead: made, served and listed by us while the caller
 * goes on from compile to that spawn, below.)
 */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <gio/gio.h>
#include <sys/stat.h>

#include <sbx/sbx-cleanup.h>

#include "sbx-linux-view-start.h"
#include "sbx-linux-private.h"
#include "sbx-linux-clone.h"

const SbxBackendDenialSinkV1 *
sbx_linux_view_request_sink (const SbxSpawnRequestV1 *request)
{
  if (request == NULL || request->struct_size < SBX_SPAWN_REQUEST_V1_DENIALS_SIZE)
    return NULL;
  return request->denial_sink;
}

SbxViewServer *
sbx_linux_view_start (const SbxLinuxSpec      *spec,
                      const SbxSpawnRequestV1 *request,
                      ChildCtx                *ctx,
                      int                     *child_end,
                      GError                 **error)
{
  const SbxLinuxMountPlan *plan = spec->mounts;
  g_autoptr(SbxViewServer) view = NULL;
  const char *failed_call = NULL;
  int sock[2] = { -1, -1 };

  if (!spec->view_fuse)
    return NULL;
  view = sbx_view_server_new (plan->skeleton, plan->n_skeleton, spec->policy_flags, error);
  if (view == NULL)
    return NULL;
  if (sbx_linux_seqpacket (sock, &failed_call) != 0)
    {
      int saved_errno = errno;

      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno), "%s: %s", failed_call,
                   g_strerror (saved_errno));
      return NULL;
    }
  sbx_view_server_set_sink (view, sbx_linux_view_request_sink (request));
  if (!sbx_view_server_start_receive (view, sbx_steal_fd (&sock[0]), error))
    {
      sbx_clear_fd (&sock[1]);
      return NULL;
    }
  ctx->view_sock = *child_end = sock[1];
  return g_steal_pointer (&view);
}

/* ------------------------------------------------------------------------- */
/* The early root                                                            */
/* ------------------------------------------------------------------------- */

/* Made by A, the FUSE root costs a direct spawn a superblock and about a
 * dozen round trips to the server before the target starts (each lookup
 * A's binds and B's exec make of the skeleton: the root's attributes, one
 * listing per skeleton directory, one read per symlink), every one on the
 * way from the call to the exec.  Where this process may mount FUSE itself
 * (CAP_SYS_ADMIN in its user namespace: root), a thread of ours makes the
 * superblock, starts its server and lists the whole skeleton through it
 * while the spawn is still being prepared (its channels, cgroup and
 * stacks); the kernel keeps every entry (they never expire) and every
 * symlink's target (FUSE_CACHE_SYMLINKS), and A attaches the mount as
 * its root (a detached mount moved into its mount namespace) and finds
 * the skeleton cached.  A is cloned as soon as the server serves: a
 * listing not done by then goes on beside A's setup (a name both look up
 * at once costs one request), and stops once A has exec'd (waiting for
 * it cost a third of spawns 0.2 to 1.4 ms on 2 CPUs).  What differs from a
 * root A made: the requests are numbered in our pid namespace (the server
 * reads /proc directly, and tells our own threads apart,
 * sbx_view_task_is_ours()), and the superblock lives until the server
 * closes its mount (after the sandbox, not in its last process's exit).
 * Anything that fails here leaves the spawn to make its root as before. */
struct _SbxLinuxViewEarly
{
  pid_t               pid;        /* the process whose thread makes it */
  GThread            *thread;
  gint                cancelled;  /* stop: the spec (or the probe, for a spare) is freed, or its spawn is done */
  long                uid, gid;   /* the superblock's owner (the spec's view_uid/view_gid) */
  GMutex              lock;
  GCond               cond;
  const SbxLinuxSpec *spec;       /* NULL: a spare waiting for its spec (lock) */
  gboolean            settled;    /* view and mount_fd are final (lock) */
  SbxViewServer      *view;       /* serving; NULL: not made (lock) */
  int                 mount_fd;
};

/* Set once the superblock could not be made here (EPERM: not root after
 * all, no /dev/fuse): no later spawn of this process tries again. */
static gint early_unavailable;
/* Early roots a spawn took, and spares a spec took
 * (sbx_linux_view_early_n_taken(), sbx_linux_view_early_n_spares_taken(),
 * for tests). */
static gint early_taken;
static gint spares_taken;
/* The spare: an early root's thread started while the probe runs, its
 * superblock made, waiting for the first spec that can use it. */
static SbxLinuxViewEarly *early_spare;

guint
sbx_linux_view_early_n_taken (void)
{
  return (guint) g_atomic_int_get (&early_taken);
}

guint
sbx_linux_view_early_n_spares_taken (void)
{
  return (guint) g_atomic_int_get (&spares_taken);
}

/* Lists each skeleton directory that holds entries, as A would
 * (sbx_linux_child_prime_skeleton()), and reads each symlink once, through
 * @mfd.  Nothing here can fail the spawn: what is not cached is looked up
 * by A as before (or by both at once: the kernel sends one request for a
 * name two callers look up together). */
static void
early_prime (SbxLinuxViewEarly *early, int mfd, const SbxLinuxMountPlan *plan)
{
  char target[4096];

  sbx_linux_child_prime_skeleton (mfd, plan, &early->cancelled);
  for (gsize i = 0; i < plan->n_skeleton && !g_atomic_int_get (&early->cancelled); i++)
    if (plan->skeleton[i].type == S_IFLNK && plan->skeleton[i].path[0] == '/')
      (void) readlinkat (mfd, plan->skeleton[i].path + 1, target, sizeof target);
}

/* Publishes what the thread made (@view NULL: nothing) to the taker. */
static void
early_settle (SbxLinuxViewEarly *early, SbxViewServer *view, int mfd)
{
  g_mutex_lock (&early->lock);
  early->view = view;
  early->mount_fd = mfd;
  early->settled = TRUE;
  g_cond_broadcast (&early->cond);
  g_mutex_unlock (&early->lock);
}

/* The spec the thread serves, once there is one; NULL when it is
 * cancelled first (a spare nobody took). */
static const SbxLinuxSpec *
early_wait_spec (SbxLinuxViewEarly *early)
{
  const SbxLinuxSpec *spec;

  g_mutex_lock (&early->lock);
  while (early->spec == NULL && !g_atomic_int_get (&early->cancelled))
    g_cond_wait (&early->cond, &early->lock);
  spec = early->spec;
  g_mutex_unlock (&early->lock);
  return spec;
}

/* Makes the superblock (and a spare starts the view supervisor's thread),
 * waits for the spec, starts its server and publishes them, then lists
 * the skeleton through a copy of the mount descriptor of its own: the
 * server (the taker's, once taken) may close the original at any time. */
static gpointer
early_main (gpointer data)
{
  SbxLinuxViewEarly *early = data;
  const SbxLinuxSpec *spec;
  g_autoptr(SbxViewServer) view = NULL;
  g_autoptr(GError) error = NULL;
  long dev = -1, mfd;
  int prime_fd;

  mfd = sbx_linux_child_fuse_mount (early->uid, early->gid, 1, &dev);
  if (mfd < 0)
    {
      if (mfd == -EPERM || mfd == -ENOENT || mfd == -ENODEV || mfd == -EACCES)
        g_atomic_int_set (&early_unavailable, 1);
      g_debug ("linux-userns: the early view root: %s", g_strerror ((int) -mfd));
      early_settle (early, NULL, -1);
      return NULL;
    }
  (void) sbx_view_hub_prestart ();
  spec = early_wait_spec (early);
  view = spec == NULL ? NULL
         : sbx_view_server_new (spec->mounts->skeleton, spec->mounts->n_skeleton, spec->policy_flags, &error);
  if (view == NULL || !sbx_view_server_start_device (view, (int) dev, (int) mfd, &error))
    {
      if (view == NULL)
        {
          close ((int) dev);
          close ((int) mfd);
        }
      if (error != NULL)
        g_debug ("linux-userns: the early view root: %s", error->message);
      early_settle (early, NULL, -1);
      return NULL;
    }
  prime_fd = fcntl ((int) mfd, F_DUPFD_CLOEXEC, 3);
  early_settle (early, g_steal_pointer (&view), (int) mfd);   /* the server closes mfd */
  if (prime_fd >= 0)
    {
      early_prime (early, prime_fd, spec->mounts);
      close (prime_fd);
    }
  return NULL;
}

/* An early root's thread for @spec, or a spare (@spec NULL); NULL where it
 * is not tried (not root, or it failed before in this process). */
static SbxLinuxViewEarly *
early_new (const SbxLinuxSpec *spec)
{
  SbxLinuxViewEarly *early;

  if (geteuid () != 0 || g_atomic_int_get (&early_unavailable))
    return NULL;
  early = g_new0 (SbxLinuxViewEarly, 1);
  early->pid = getpid ();
  early->spec = spec;
  early->uid = spec != NULL ? spec->view_uid : (long) geteuid ();
  early->gid = spec != NULL ? spec->view_gid : (long) getegid ();
  early->mount_fd = -1;
  g_mutex_init (&early->lock);
  g_cond_init (&early->cond);
  early->thread = g_thread_try_new ("sbx-view-early", early_main, early, NULL);
  if (early->thread == NULL)
    {
      g_mutex_clear (&early->lock);
      g_cond_clear (&early->cond);
      g_free (early);
      return NULL;
    }
  return early;
}

/* Whether @early is this process's: in the child of a fork() (a spec
 * compiled before it) its thread does not exist, and what it made may
 * have been half made when the process was copied: the child leaves all
 * of it alone (its copies of the descriptors are close-on-exec). */
static gboolean
early_is_ours (SbxLinuxViewEarly *early)
{
  return early->pid == getpid ();
}

void
sbx_linux_view_early_prepare (void)
{
  SbxLinuxViewEarly *spare;

  if (g_atomic_pointer_get (&early_spare) != NULL)
    return;
  spare = early_new (NULL);
  if (spare != NULL && !g_atomic_pointer_compare_and_exchange (&early_spare, NULL, spare))
    sbx_linux_view_early_free (spare);   /* another probe's came first */
}

void
sbx_linux_view_early_drop_spare (void)
{
  SbxLinuxViewEarly *spare = g_atomic_pointer_get (&early_spare);

  if (spare != NULL && early_is_ours (spare)
      && g_atomic_pointer_compare_and_exchange (&early_spare, spare, NULL))
    sbx_linux_view_early_free (spare);
}

SbxLinuxViewEarly *
sbx_linux_view_early_start (const SbxLinuxSpec *spec)
{
  SbxLinuxViewEarly *spare;

  if (!spec->view_fuse || spec->rung != SBX_LINUX_RUNG_USERNS)
    return NULL;
  /* The spare, when it is this process's and made for the spec's owner. */
  spare = g_atomic_pointer_get (&early_spare);
  if (spare != NULL && early_is_ours (spare) && spare->uid == spec->view_uid && spare->gid == spec->view_gid
      && g_atomic_pointer_compare_and_exchange (&early_spare, spare, NULL))
    {
      g_mutex_lock (&spare->lock);
      spare->spec = spec;
      g_cond_broadcast (&spare->cond);
      g_mutex_unlock (&spare->lock);
      g_atomic_int_inc (&spares_taken);
      return spare;
    }
  return early_new (spec);
}

static void
early_join (SbxLinuxViewEarly *early)
{
  if (early->thread != NULL)
    g_thread_join (g_steal_pointer (&early->thread));
}

SbxViewServer *
sbx_linux_view_early_take (SbxLinuxSpec       *spec,
                           ChildCtx           *ctx,
                           SbxLinuxViewEarly **primer)
{
  SbxLinuxViewEarly *early = g_atomic_pointer_get (&spec->early);
  SbxViewServer *view;

  *primer = NULL;
  if (early == NULL || !early_is_ours (early))
    return NULL;
  early = g_atomic_pointer_exchange (&spec->early, NULL);
  if (early == NULL)
    return NULL;   /* another spawn took it */
  g_mutex_lock (&early->lock);
  while (!early->settled)
    g_cond_wait (&early->cond, &early->lock);
  view = g_steal_pointer (&early->view);
  g_mutex_unlock (&early->lock);
  if (view != NULL)
    {
      ctx->view_early = 1;
      ctx->view_early_fd = early->mount_fd;
      g_atomic_int_inc (&early_taken);
    }
  *primer = early;   /* its thread may still be listing */
  return view;
}

void
sbx_linux_view_early_free (SbxLinuxViewEarly *early)
{
  if (early == NULL || !early_is_ours (early))
    return;   /* a fork's child: left alone (early_is_ours()) */
  g_mutex_lock (&early->lock);
  g_atomic_int_set (&early->cancelled, 1);
  g_cond_broadcast (&early->cond);   /* a spare waiting for its spec */
  g_mutex_unlock (&early->lock);
  early_join (early);
  g_clear_pointer (&early->view, sbx_view_server_free);   /* not taken: it and its mount */
  g_mutex_clear (&early->lock);
  g_cond_clear (&early->cond);
  g_free (early);
}
