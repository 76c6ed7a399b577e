/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Starting the view supervisor for a rung-1 spawn or warm sandbox
 * (sbx-linux-view-start.c).  Never installed.
 */
#pragma once

#include <glib.h>

#include <sbx/sbx-plugin-abi.h>
#include "sbx-linux-child-private.h"
#include "sbx-linux-view-server.h"

G_BEGIN_DECLS

/* Before the clone of @ctx's A (spec->view_fuse; directly or by the
 * zygote): the server with the plan's skeleton, the policy's flags and
 * @request's denial sink (@request NULL: a warm sandbox, which gets its
 * spawn's sink when a spawn takes it), already serving its end of a socket
 * pair; A's end goes to ctx->view_sock and *child_end (the caller closes
 * it once A has sent the device or is gone: for an A with a copy of our
 * table, once the clone returned).  NULL when the spawn keeps the tmpfs
 * root (no FUSE here, or anything failed: ctx->view_sock stays -1). */
SbxViewServer *sbx_linux_view_start (const SbxLinuxSpec      *spec,
                                     const SbxSpawnRequestV1 *request,
                                     ChildCtx                *ctx,
                                     int                     *child_end);
/* @request's denial sink, or NULL (none, an older request, or no request). */
const SbxBackendDenialSinkV1 *sbx_linux_view_request_sink (const SbxSpawnRequestV1 *request);

G_END_DECLS
