/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What sbx-executor-ask.c offers: an asking run's live approvals reported
 * when the run ends.  Below the egress host side, which calls it.
 */
#pragma once

#include "sbx-decision-private.h"
#include "sbx-executor-shared-private.h"
#include "sbx-run-result.h"
#include "sbx-profile.h"

G_BEGIN_DECLS

/* An asking run's live approvals (sbx-executor-ask.c), after
 * sbx_egress_run_end(): appended to @result's spent grants (nullable) and
 * one "grant-spent" event each.  Inside an admission. */
void           sbx_executor_report_live_approvals (SbxExecutorShared *shared,
                                                   const char        *key,
                                                   guint64            run_id,
                                                   SbxRunResult      *result,
                                                   SbxDecisionBroker *broker);

/* The question for a name the DNS stub would refuse under a profile whose
 * network is @network, or NULL (not asked: not gated, or not a name).
 * An approval answers the name (the stub's SBX_DNS_APPROVED_ADDRESS, where
 * no forwarder listens) and opens no connection: it spends
 * network.proxy-target.v1 "tcp:NAME:*", the name at any port as far as
 * resolving goes; a connection through the proxy asks for tcp:NAME:PORT. */
SbxDenial     *sbx_ask_resolve_question           (const char        *name,
                                                   SbxAccess          network);
/* Whether @ask asks and @profile gates a host socket the connect
 * supervisor can ask about. */
gboolean       sbx_ask_gates_host_sockets         (SbxAskSettings    *ask,
                                                   SbxProfile        *profile);
/* Whether @ask asks and @profile gates reading some files (host read, the
 * workspace's or a root's): the backend's view supervisor may then ask
 * about a read outside the view (rung 1; the host answers DENY for
 * anything the profile does not gate). */
gboolean       sbx_ask_gates_files                (SbxAskSettings    *ask,
                                                   SbxProfile        *profile);
G_END_DECLS
