/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Backend denials (sbx-backend-denials.c): the sink a spawn request carries
 * (SbxSpawnRequestV1.denial_sink), turning each refusal a backend's own
 * mechanism reports into an SbxDenial of the run, with the grant that
 * would open it decided from the profile.  Never installed.
 */
#pragma once

#include <glib.h>
#include "sbx-plugin-abi.h"
#include "sbx-profile.h"
#include "sbx-denial-private.h"
#include "sbx-decision-private.h"

G_BEGIN_DECLS

typedef struct _SbxBackendDenials SbxBackendDenials;

/* A sink feeding @log (referenced) that attributes grants from @profile
 * (referenced).  Heap-allocated: its address is the sink's data, which the
 * backend keeps until finish() of the child returns. */
SbxBackendDenials            *sbx_backend_denials_new  (SbxDenialLog       *log,
                                                        SbxProfile         *profile);
const SbxBackendDenialSinkV1 *sbx_backend_denials_sink (SbxBackendDenials  *self);
void                          sbx_backend_denials_free (SbxBackendDenials  *self);
/* An asking run: the sink gets SbxBackendDenialSinkV1.ask, which puts a
 * refusal naming a grant (a gated host socket) to @broker (referenced)
 * and denies any other at once.  Before the spawn. */
void                          sbx_backend_denials_set_broker (SbxBackendDenials *self,
                                                              SbxDecisionBroker *broker);

/* The SbxDenial of one backend refusal under @profile, or NULL for a
 * record that is not one (unknown operation, no target, too small). */
SbxDenial                    *sbx_backend_denial_new   (const SbxBackendDenialV1 *denial,
                                                        SbxProfile               *profile);

G_END_DECLS
