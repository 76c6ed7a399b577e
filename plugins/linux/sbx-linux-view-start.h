/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Starting the view supervisor for a rung-1 spawn or warm sandbox
 * (sbx-linux-view-start.c).  Never installed.
 */
#pragma once

#include <glib.h>

#include <sbx/sbx-plugin-abi.h>
#include "sbx-linux-private.h"
#include "sbx-linux-child-private.h"
#include "sbx-linux-view-server.h"

G_BEGIN_DECLS

/* Before the clone of @ctx's A (spec->view_fuse; directly or by the
 * zygote): the server with the plan's skeleton, the policy's flags and
 * @request's denial sink (@request NULL: a warm sandbox, which gets its
 * spawn's sink when a spawn takes it), already serving its end of a socket
 * pair; A's end goes to ctx->view_sock and *child_end (the caller closes
 * it once A has sent the device or is gone: for an A with a copy of our
 * table, once the clone returned).  NULL with *@error unset when the
 * spec has no FUSE root (its report says attempts outside the view are
 * not observed: A keeps the tmpfs root); NULL with *@error set when it
 * has one and the server could not start: the spawn fails (a tmpfs root
 * would leave unobserved what the report promises to observe).
 * ctx->view_sock stays -1 either way. */
SbxViewServer *sbx_linux_view_start (const SbxLinuxSpec      *spec,
                                     const SbxSpawnRequestV1 *request,
                                     ChildCtx                *ctx,
                                     int                     *child_end,
                                     GError                 **error);
/* The view's FUSE root made and listed ahead of A while the caller goes
 * on from compile to the spec's first spawn (sbx-linux-view-start.c):
 * only where this process may mount FUSE itself (root), for a spawn that
 * clones its A directly. */

/* Where this process may mount FUSE itself (root): starts a spare early
 * root's thread, which makes the superblock and starts the view
 * supervisor's thread while the probe runs (the caller waits for its
 * child then, and a CPU is free), for the first spec that can use it.
 * Does nothing when there is a spare already. */
void               sbx_linux_view_early_prepare (void);
/* Stops and frees the spare nobody took (the probe is freed). */
void               sbx_linux_view_early_drop_spare (void);
/* Starts making @spec's early root: the spare's, else on a thread of its
 * own; NULL where it is not tried (not rung 1 with the FUSE root, not
 * root, or it failed before in this process).  @spec outlives the
 * result. */
SbxLinuxViewEarly *sbx_linux_view_early_start (const SbxLinuxSpec *spec);
/* Takes @spec's early root (once: the first caller gets it) and waits
 * until its server serves (not for the listing, which goes on while A
 * builds: *@primer gets the thread, for sbx_linux_view_early_free() once
 * A has exec'd or failed); when the root was made: its server (serving,
 * no sink yet) and the mount A attaches (ctx->view_early_fd, the server
 * closes it when it stops).  NULL when there is none, it could not be
 * made, or it is not this process's (a fork's child): the spawn goes the
 * way it would have without it. */
SbxViewServer     *sbx_linux_view_early_take  (SbxLinuxSpec       *spec,
                                               ChildCtx           *ctx,
                                               SbxLinuxViewEarly **primer);
/* Stops its listing, waits for its thread and frees what it made (a spec
 * freed before a spawn took it, or a taken one's primer); a fork's child
 * leaves another process's alone.  NULL is allowed. */
void               sbx_linux_view_early_free  (SbxLinuxViewEarly *early);
/* How many early roots spawns of this process took, and how many of them
 * a spec took from the spare, for tests. */
guint              sbx_linux_view_early_n_taken (void);
guint              sbx_linux_view_early_n_spares_taken (void);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SbxLinuxViewEarly, sbx_linux_view_early_free)

/* @request's denial sink, or NULL (none, an older request, or no request). */
const SbxBackendDenialSinkV1 *sbx_linux_view_request_sink (const SbxSpawnRequestV1 *request);

G_END_DECLS
