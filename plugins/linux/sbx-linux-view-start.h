/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Starting the view supervisor for a direct rung-1 spawn
 * (sbx-linux-view-start.c).  Never installed.
 */
#pragma once

#include <glib.h>

#include <sbx/sbx-plugin-abi.h>
#include "sbx-linux-child-private.h"
#include "sbx-linux-view-server.h"

G_BEGIN_DECLS

/* Before a direct clone of @ctx's A (spec->view_fuse): the server with the
 * plan's skeleton, the policy's flags and @request's denial sink, already
 * serving its end of a socket pair; A's end goes to ctx->view_sock and
 * *child_end (the caller closes it once the clone returned).  NULL when
 * the spawn keeps the tmpfs root (no FUSE here, or anything failed:
 * ctx->view_sock stays -1). */
SbxViewServer *sbx_linux_view_start (const SbxLinuxSpec      *spec,
                                     const SbxSpawnRequestV1 *request,
                                     ChildCtx                *ctx,
                                     int                     *child_end);

G_END_DECLS
