/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Starting the view supervisor for a direct rung-1 spawn
 * (sbx-linux-view-start.c): the server that answers A's FUSE root, started
 * while the cloning thread waits in vfork, once A has said its pid.
 * Never installed.
 */
#pragma once

#include <glib.h>

#include <sbx/sbx-plugin-abi.h>
#include "sbx-linux-child-private.h"
#include "sbx-linux-view-server.h"

G_BEGIN_DECLS

typedef struct _SbxLinuxViewStart SbxLinuxViewStart;

/* Before a direct clone of @ctx's A (spec->view_fuse): the server with the
 * plan's skeleton, the policy's flags and @request's denial sink, its
 * socket pair, the pid and go pipes (ctx->view_*), and a thread that starts
 * the server once A has sent its pid.  NULL when the spawn keeps the tmpfs
 * root (no FUSE here, or anything failed: ctx->view_sock stays -1). */
SbxLinuxViewStart *sbx_linux_view_start_new    (const SbxLinuxSpec      *spec,
                                                const SbxSpawnRequestV1 *request,
                                                ChildCtx                *ctx);
/* After the clone returned (A exec'd sbx-init or exited): the server,
 * serving, when A mounted the FUSE root and the server started (the
 * caller owns it), else NULL.  Joins the thread, closes the child's ends
 * and frees @start (NULL is allowed). */
SbxViewServer     *sbx_linux_view_start_finish (SbxLinuxViewStart       *start);

G_END_DECLS
