/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The view supervisor's start for a direct rung-1 spawn.  The server must
 * serve while A builds the view (A's binds look their mountpoints up in the
 * FUSE root), and it must know the sandbox's pid namespace before it serves:
 * FUSE numbers a request's pid in the namespace of the process that made
 * the mount, A's, so the server reads tasks through /proc/A/root/proc
 * (sbx_view_server_set_sandbox_pid).  A's pid is known to the cloning
 * thread only when the vfork clone returns, after the target has started.
 * So a short-lived thread starts the server: A mounts FUSE, sends the
 * device, writes its pid as we number it, and waits for one byte; the
 * thread sets the pid, starts the server and writes that byte.  When A
 * never gets there (no device: the tmpfs root; a failed step), the cloning
 * thread, back from the clone, writes a 0 pid after A's, and the thread
 * starts nothing.  Closing the go pipe without the byte tells A to build
 * the tmpfs root instead: a spawn never fails for the view supervisor.
 */
#include <errno.h>
#include <unistd.h>

#include <sbx/sbx-cleanup.h>

#include "sbx-linux-view-start.h"
#include "sbx-linux-private.h"
#include "sbx-linux-clone.h"

struct _SbxLinuxViewStart
{
  SbxViewServer *view;
  GThread       *thread;
  gboolean       serving;   /* set by the thread before it returns */
  int            sock[2];   /* [0] the server's (taken when it starts), [1] A's */
  int            pid[2];    /* A (or the cloning thread: 0) -> the thread */
  int            go[2];     /* the thread -> A */
};

static void
view_start_close (SbxLinuxViewStart *start)
{
  for (int i = 0; i < 2; i++)
    {
      sbx_clear_fd (&start->sock[i]);
      sbx_clear_fd (&start->pid[i]);
      sbx_clear_fd (&start->go[i]);
    }
}

static gpointer
view_start_thread (gpointer data)
{
  SbxLinuxViewStart *start = data;
  g_autoptr(GError) error = NULL;
  long pid = 0;
  ssize_t n;

  do
    n = read (start->pid[0], &pid, sizeof pid);
  while (n < 0 && errno == EINTR);
  if (n == (ssize_t) sizeof pid && pid > 0)
    {
      sbx_view_server_set_sandbox_pid (start->view, (pid_t) pid);
      if (sbx_view_server_start_receive (start->view, sbx_steal_fd (&start->sock[0]), &error))
        {
          start->serving = TRUE;
          while (write (start->go[1], "g", 1) < 0 && errno == EINTR)
            ;
        }
      else
        g_debug ("linux-userns: the view supervisor: %s", error->message);
    }
  /* Without the byte, A's read ends with EOF: it builds the tmpfs root. */
  sbx_clear_fd (&start->go[1]);
  return NULL;
}

SbxLinuxViewStart *
sbx_linux_view_start_new (const SbxLinuxSpec      *spec,
                          const SbxSpawnRequestV1 *request,
                          ChildCtx                *ctx)
{
  const SbxLinuxMountPlan *plan = spec->mounts;
  SbxLinuxViewStart *start;
  g_autoptr(GError) error = NULL;
  const char *failed_call = NULL;

  if (!spec->view_fuse)
    return NULL;
  start = g_new0 (SbxLinuxViewStart, 1);
  for (int i = 0; i < 2; i++)
    start->sock[i] = start->pid[i] = start->go[i] = -1;
  start->view = sbx_view_server_new (plan->skeleton, plan->n_skeleton, spec->policy_flags, &error);
  if (start->view == NULL || sbx_linux_seqpacket (start->sock, &failed_call) != 0
      || sbx_linux_pipe (start->pid, &failed_call) != 0 || sbx_linux_pipe (start->go, &failed_call) != 0)
    {
      g_debug ("linux-userns: the view supervisor: %s",
               error != NULL ? error->message : failed_call != NULL ? failed_call : "");
      sbx_linux_view_start_finish (start);
      return NULL;
    }
  sbx_view_server_set_sink (start->view, request->struct_size >= SBX_SPAWN_REQUEST_V1_DENIALS_SIZE
                            ? request->denial_sink : NULL);
  start->thread = g_thread_try_new ("sbx-view-start", view_start_thread, start, &error);
  if (start->thread == NULL)
    {
      g_debug ("linux-userns: the view supervisor: %s", error->message);
      sbx_linux_view_start_finish (start);
      return NULL;
    }
  ctx->view_sock = start->sock[1];
  ctx->view_pid_fd = start->pid[1];
  ctx->view_go_fd = start->go[0];
  ctx->view_go_w = start->go[1];
  return start;
}

SbxViewServer *
sbx_linux_view_start_finish (SbxLinuxViewStart *start)
{
  SbxViewServer *view = NULL;

  if (start == NULL)
    return NULL;
  if (start->thread != NULL)
    {
      long none = 0;

      /* After A's pid, if A wrote one (A has exec'd or exited by now). */
      while (write (start->pid[1], &none, sizeof none) < 0 && errno == EINTR)
        ;
      g_thread_join (start->thread);
    }
  if (start->serving)
    view = g_steal_pointer (&start->view);
  g_clear_pointer (&start->view, sbx_view_server_free);
  view_start_close (start);
  g_free (start);
  return view;
}
