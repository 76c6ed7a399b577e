/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Staged spawns (SBX_SPAWN_STAGED), rung 1: each writable root the host
 * lists becomes an overlay in the sandbox's own user and mount namespace
 * instead of a bind of the host path.  Never installed.
 */
#pragma once

#include "sbx-linux-private.h"

/* One overlay, read by the child (strings borrowed from the request, which
 * outlives the child's exec). */
typedef struct _SbxLinuxStageMount
{
  const char *lower;   /* the host path: the overlay's read-only layer */
  const char *upper;
  const char *work;
} SbxLinuxStageMount;

/* At most this many staged roots per spawn (each is one more Landlock rule
 * B adds for the overlay's root). */
#define SBX_LINUX_MAX_STAGE_ROOTS 8

/* Checks @request's stage roots against @spec's view and returns, per
 * mount op of the view, the overlay replacing that op's bind or NULL (a
 * single allocation: g_free it).  Refuses (NULL, *out_status and
 * *error_message set, naming the path) rung 2, a writable host root, a
 * listed root the view does not show as a writable directory bind, and a
 * writable bind nested in a listed root that is not listed itself: a
 * staged request never runs with a host path writable under it. */
/* The child's side (sbx-linux-child-stage.c), a staged root in A: an
 * overlay of @m over @op's path beneath @rootfd, on top of its read-only
 * bind.  0 or -errno, *step set. */
long sbx_linux_child_stage_mount (long                      rootfd,
                                  const SbxMountOp         *op,
                                  const SbxLinuxStageMount *m,
                                  int                      *step);

const SbxLinuxStageMount **sbx_linux_stage_plan (const SbxLinuxSpec      *spec,
                                                 const SbxSpawnRequestV1 *request,
                                                 int32_t                 *out_status,
                                                 char                   **error_message);
