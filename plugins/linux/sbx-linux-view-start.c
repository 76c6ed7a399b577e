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
 * this host) has no server and keeps the tmpfs root.  (Where this process may mount FUSE
 * itself, the first direct spawn of a spec takes an early root instead:
 * made, served and listed by us while the caller goes on from compile to
 * that spawn, below.)
 */
#include <errno.h>
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
 * symlink's target (FUSE_CACHE_SYMLINKS), and A, cloned once that is
 * done, attaches the mount as its root (a detached mount moved into its
 * mount namespace) and finds the skeleton cached.  What differs from a
 * root A made: the requests are numbered in our pid namespace (the server
 * reads /proc directly, and tells our own threads apart,
 * sbx_view_task_is_ours()), and the superblock lives until the server
 * closes its mount (after the sandbox, not in its last process's exit).
 * Anything that fails here leaves the spawn to make its root as before. */
struct _SbxLinuxViewEarly
{
  pid_t               pid;        /* the process whose thread makes it */
  const SbxLinuxSpec *spec;
  GThread            *thread;
  gint                cancelled;  /* the spec is freed: stop listing */
  SbxViewServer      *view;       /* serving, primed; NULL: not made */
  int                 mount_fd;
};

/* Set once the superblock could not be made here (EPERM: not root after
 * all, no /dev/fuse): no later spawn of this process tries again. */
static gint early_unavailable;
/* Early roots a spawn took (sbx_linux_view_early_n_taken(), for tests). */
static gint early_taken;

guint
sbx_linux_view_early_n_taken (void)
{
  return (guint) g_atomic_int_get (&early_taken);
}

/* Lists each skeleton directory that holds entries, as A would
 * (sbx_linux_child_prime_skeleton()), and reads each symlink once, through
 * @mfd.  Nothing here can fail the spawn: what is not cached is looked up
 * by A as before. */
static void
early_prime (SbxLinuxViewEarly *early, int mfd, const SbxLinuxMountPlan *plan)
{
  char target[4096];

  sbx_linux_child_prime_skeleton (mfd, plan, &early->cancelled);
  for (gsize i = 0; i < plan->n_skeleton && !g_atomic_int_get (&early->cancelled); i++)
    if (plan->skeleton[i].type == S_IFLNK && plan->skeleton[i].path[0] == '/')
      (void) readlinkat (mfd, plan->skeleton[i].path + 1, target, sizeof target);
}

static gpointer
early_main (gpointer data)
{
  SbxLinuxViewEarly *early = data;
  const SbxLinuxSpec *spec = early->spec;
  g_autoptr(SbxViewServer) view = NULL;
  g_autoptr(GError) error = NULL;
  long dev = -1, mfd;

  mfd = sbx_linux_child_fuse_mount (spec->view_uid, spec->view_gid, 1, &dev);
  if (mfd < 0)
    {
      if (mfd == -EPERM || mfd == -ENOENT || mfd == -ENODEV || mfd == -EACCES)
        g_atomic_int_set (&early_unavailable, 1);
      g_debug ("linux-userns: the early view root: %s", g_strerror ((int) -mfd));
      return NULL;
    }
  view = sbx_view_server_new (spec->mounts->skeleton, spec->mounts->n_skeleton, spec->policy_flags, &error);
  if (view == NULL || !sbx_view_server_start_device (view, (int) dev, (int) mfd, &error))
    {
      if (view == NULL)
        {
          close ((int) dev);
          close ((int) mfd);
        }
      g_debug ("linux-userns: the early view root: %s", error != NULL ? error->message : "");
      return NULL;
    }
  early_prime (early, (int) mfd, spec->mounts);
  early->mount_fd = (int) mfd;   /* the server closes it */
  early->view = g_steal_pointer (&view);
  return NULL;
}

SbxLinuxViewEarly *
sbx_linux_view_early_start (const SbxLinuxSpec *spec)
{
  SbxLinuxViewEarly *early;

  if (!spec->view_fuse || spec->rung != SBX_LINUX_RUNG_USERNS || geteuid () != 0
      || g_atomic_int_get (&early_unavailable))
    return NULL;
  early = g_new0 (SbxLinuxViewEarly, 1);
  early->pid = getpid ();
  early->spec = spec;
  early->mount_fd = -1;
  early->thread = g_thread_try_new ("sbx-view-early", early_main, early, NULL);
  if (early->thread == NULL)
    {
      g_free (early);
      return NULL;
    }
  return early;
}

static void
early_join (SbxLinuxViewEarly *early)
{
  if (early->thread != NULL)
    g_thread_join (g_steal_pointer (&early->thread));
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

SbxViewServer *
sbx_linux_view_early_take (SbxLinuxSpec *spec,
                           ChildCtx     *ctx)
{
  SbxLinuxViewEarly *early = g_atomic_pointer_get (&spec->early);
  SbxViewServer *view;

  if (early == NULL || !early_is_ours (early))
    return NULL;
  early = g_atomic_pointer_exchange (&spec->early, NULL);
  if (early == NULL)
    return NULL;   /* another spawn took it */
  early_join (early);
  view = g_steal_pointer (&early->view);
  if (view != NULL)
    {
      ctx->view_early = 1;
      ctx->view_early_fd = early->mount_fd;
      g_atomic_int_inc (&early_taken);
    }
  g_free (early);
  return view;
}

void
sbx_linux_view_early_free (SbxLinuxViewEarly *early)
{
  if (early == NULL || !early_is_ours (early))
    return;   /* a fork's child: left alone (early_is_ours()) */
  g_atomic_int_set (&early->cancelled, 1);
  early_join (early);
  g_clear_pointer (&early->view, sbx_view_server_free);   /* and its mount */
  g_free (early);
}
