/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What sbx-process.c (the SbxProcess object) offers the other modules of a
 * process: whether it has a PTY, and posting a denial as its signal.  Its
 * representation is sbx-process-impl-private.h, its watches and teardown
 * sbx-process-watch-private.h, its start sbx-process-spawn-private.h.
 */
#pragma once

#include "sbx-process.h"
#include "sbx-denial.h"
#include "sbx-decision.h"

G_BEGIN_DECLS

/* Whether the process's stdin and stdout are a PTY master. */
gboolean    sbx_process_has_pty         (SbxProcess *self);

/* SbxDenialLogNotify of a process's egress log: emits
 * SbxProcess::denied for @denial on the spawn-time context (from any
 * thread; never called once the run's execution was revoked, which
 * happens before the process can be finalized). */
void sbx_process_post_denial (SbxDenial *denial,
                              gpointer   data);
/* The decision broker's delivery (SbxProcess::approval-requested). */
void sbx_process_deliver_decision (SbxDecisionRequest *request,
                                   gpointer            data);

G_END_DECLS
