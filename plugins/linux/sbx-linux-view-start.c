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
 * anything here fails, A builds the tmpfs root as before: a spawn never
 * fails for the view supervisor.
 */
#include <errno.h>

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
                      int                     *child_end)
{
  const SbxLinuxMountPlan *plan = spec->mounts;
  g_autoptr(SbxViewServer) view = NULL;
  g_autoptr(GError) error = NULL;
  const char *failed_call = NULL;
  int sock[2] = { -1, -1 };

  if (!spec->view_fuse)
    return NULL;
  view = sbx_view_server_new (plan->skeleton, plan->n_skeleton, spec->policy_flags, &error);
  if (view == NULL || sbx_linux_seqpacket (sock, &failed_call) != 0)
    {
      g_debug ("linux-userns: the view supervisor: %s",
               error != NULL ? error->message : failed_call != NULL ? failed_call : "");
      return NULL;
    }
  sbx_view_server_set_sink (view, sbx_linux_view_request_sink (request));
  if (!sbx_view_server_start_receive (view, sbx_steal_fd (&sock[0]), &error))
    {
      g_debug ("linux-userns: the view supervisor: %s", error->message);
      sbx_clear_fd (&sock[1]);
      return NULL;
    }
  ctx->view_sock = *child_end = sock[1];
  return g_steal_pointer (&view);
}
