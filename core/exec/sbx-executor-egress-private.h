/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Executor sets with an egress route: the host side of
 * SBX_HOST_FEATURE_EGRESS_V1 and SBX_HOST_FEATURE_PROXY_LISTEN_FD
 * (sbx-executor-egress.c).  Never installed.
 *
 * One SbxEgress per executor set: the route started in the egress
 * extension the set's options name (plugins/egress-http's "http-connect" by
 * default).  The executors of the set use it like this:
 *
 *  - policy: a profile whose network is Allow or Gated gets the network
 *    mode PROXY on loopback port SBX_EGRESS_PROXY_PORT (the backend puts a
 *    listener there inside the sandbox and hands it back from spawn);
 *    Network=Deny keeps MODE_DENY (nothing to route);
 *  - guarantees: address-network holds only when the backend reports
 *    target-network and the route has the address guarantee;
 *  - grants bind the route's fingerprint, and network.proxy-target.v1 is
 *    supported only with a route;
 *  - each run that may use the network is one authorized execution
 *    (SbxEgressRun): a Network=Allow run under a fresh "route-..." id for
 *    every target, a run with proxy-target grants under its own execution
 *    id for exactly those targets.  The child gets the proxy URL (with that
 *    execution's credential) in HTTP_PROXY, HTTPS_PROXY, ALL_PROXY and their
 *    lowercase forms, NO_PROXY and no_proxy empty; the listener the backend
 *    returns is served for that execution only; the end of the run revokes
 *    it and keeps its first denial.  A run that is not authorized gets no
 *    proxy variables and its listener is closed unserved;
 *  - for clients that ignore the proxy variables
 *    (SBX_HOST_FEATURE_EGRESS_LISTENERS), every authorized run also asks
 *    the backend for the DNS stub's sockets (UDP and TCP
 *    SBX_EGRESS_DNS_ADDRESS:53, the only resolver of the sandbox; the TCP
 *    one listed last) and, for a run with a target list,
 *    one forwarder per target: a name gets its own address in
 *    127.83.0.0/16 (the stub answers the name with it; every port of a
 *    name shares it), an IP literal a forwarder on that literal (added to
 *    the sandbox's lo unless it is in 127.0.0.0/8 or ::1).  A run
 *    authorized for every target (Network=Allow without an allowance) has
 *    the stub, which then refuses every name: its approvals have no port
 *    list to put forwarders on, so only the proxy leads out.  Never a
 *    forwarder for a metadata literal, an IPv6 link-local, multicast or
 *    IPv4-mapped literal, or one that would take the proxy's own
 *    127.0.0.1:SBX_EGRESS_PROXY_PORT or the stub's
 *    SBX_EGRESS_DNS_ADDRESS:53.
 *
 * Thread safety: everything may be called from any thread.  The route is
 * stopped by sbx_egress_close() (the set's close, after every admission has
 * left) or by the last unref.
 */
#pragma once

#include <glib.h>
#include "sbx-egress-route.h"
#include "sbx-guarantees.h"
#include "sbx-profile.h"
#include "sbx-registry.h"
#include "sbx-run-result.h"
#include "sbx-executor-shared-private.h"
#include "sbx-plugin-egress.h"      /* SbxEgressDenialV1, SbxListenV1 */
#include "sbx-denial-private.h"
#include "sbx-decision-private.h"

G_BEGIN_DECLS

/* The loopback port the proxy listens on inside every sandbox (each one
 * has its own network namespace, so one fixed port serves them all). */
#define SBX_EGRESS_PROXY_PORT 3128
/* The egress extension an executor set uses when its options name none. */
#define SBX_EGRESS_DEFAULT_EXTENSION "http-connect"
/* The DNS stub's address inside every sandbox (port 53, UDP and TCP). */
#define SBX_EGRESS_DNS_ADDRESS "127.0.0.53"
/* At most this many forwarders per run (the rest of the targets stay
 * reachable through the proxy only). */
#define SBX_EGRESS_MAX_FORWARDERS 4096

typedef struct _SbxEgress SbxEgress;

/* Starts @route in egress extension @extension (NULL: the default) of
 * @registry for an executor set of @profile.  Refused for an Unconfined
 * profile (nothing would keep its network to the route).  The plugin's
 * fingerprint must equal the route's. */
SbxEgress     *sbx_egress_start                 (SbxRegistry     *registry,
                                                 const char      *extension,
                                                 SbxEgressRoute  *route,
                                                 SbxProfile      *profile,
                                                 GError         **error);
SbxEgress     *sbx_egress_ref                   (SbxEgress       *self);
void           sbx_egress_unref                 (SbxEgress       *self);
/* Stops the route (idempotent); later authorizations fail. */
void           sbx_egress_close                 (SbxEgress       *self);

/* The following accept @self == NULL (a set without a route). */

/* The proxy port of the policy for @profile: 0 for no route or a network
 * that is Deny. */
guint16        sbx_egress_policy_proxy_port     (SbxEgress       *self,
                                                 SbxProfile      *profile);
/* What a proxied policy must achieve on top of the profile's requirements:
 * network-boundary (a backend that leaves the network open next to the
 * proxy would make the route decorative).  0 without a proxy. */
SbxGuarantees  sbx_egress_required_guarantees   (SbxEgress       *self,
                                                 SbxProfile      *profile);
/* The route fingerprint grants bind: SBX_GRANT_ROUTE_DIRECT without a route. */
const char    *sbx_egress_grant_route           (SbxEgress       *self);
/* Route composition of the backend's @bits (upstream §6.5): with a route
 * (and a network that is not Deny), address-network holds only when
 * target-network does and the route has the address guarantee.  With
 * @report (unfrozen), adds an "egress-route" entry and sets the report's
 * guarantees to the result. */
SbxGuarantees  sbx_egress_compose_guarantees    (SbxEgress        *self,
                                                 SbxProfile       *profile,
                                                 SbxCompileReport *report,
                                                 SbxGuarantees     bits);

typedef struct
{
  SbxEgress *egress;        /* (nullable) (owned) */
  char      *execution_id;  /* (nullable) the authorized execution */
  char     **envp;          /* (nullable) the child environment with the proxy variables */
  char      *denial_target; /* (nullable) the first denied target, after end */
  char      *denial_reason; /* (nullable) */
  gint       served;        /* (atomic) listeners handed to the route */
  /* The run's other listeners (the stub and the forwarders), asked of the
   * backend through SbxSpawnRequestV1.listens. */
  GArray    *listens;       /* (nullable) SbxListenV1; targets point into listen_targets */
  GPtrArray *listen_targets;/* (nullable) (element-type utf8) */
  int32_t   *listen_fds;    /* (nullable) the backend's sockets, -1 when none; taken by serve */
  /* Every refusal of the execution (SbxEgressVTableV1.watch_denials), from
   * begin until end; NULL when the run is not authorized or the plugin
   * reports only the first denial. */
  SbxDenialLog *denials;    /* (nullable) (owned) */
  gpointer   watch;         /* (nullable) (owned) the sink's data: the run moves, it does not */
  /* An asking run's questions (sbx_run_options_set_ask): its approvals
   * are spent grants; closed (every pending question denied) before the
   * execution is revoked. */
  SbxDecisionBroker *broker;/* (nullable) (owned) */
} SbxEgressRun;

/* Authorizes one run: with @targets (NULL-terminated, non-empty) @execution_id
 * for exactly those; without them, when @profile's network is Allow, a fresh
 * "route-..." execution for every target; when it is Gated and the run
 * asks (@ask), @execution_id (a fresh "route-..." one when NULL) for no
 * target yet, every connection asked; otherwise nothing (TRUE, envp
 * NULL).  With @ask and a Gated network, the plugin's refusals of
 * approvable targets become questions delivered on @ask_context.  @env is
 * the executor's environment.  Without a route, nothing, except that an
 * asking run whose profile gates a host socket gets its broker either way
 * (the backend asks through it).  On FALSE nothing is left authorized. */
gboolean       sbx_egress_run_begin             (SbxEgressRun       *run,
                                                 SbxEgress          *egress,
                                                 SbxProfile         *profile,
                                                 const char         *execution_id,
                                                 const char *const  *targets,
                                                 const char *const  *env,
                                                 SbxAskSettings     *ask,
                                                 GMainContext       *ask_context,
                                                 GError            **error);
/* The denial for one refusal an egress plugin reported for a run whose
 * profile's network is @network: CONNECT targets drop "tcp:", and an
 * approvable refusal names the network.proxy-target.v1 grant that would
 * open it unless the profile denies network.  NULL for an unknown
 * operation. */
SbxDenial     *sbx_egress_denial_new            (const SbxEgressDenialV1 *denial,
                                                 SbxAccess          network);
/* The spawn request's listener list for @run (NULL / 0 without any). */
void           sbx_egress_run_spawn_listens     (SbxEgressRun       *run,
                                                 const SbxListenV1 **listens,
                                                 int32_t           **fds,
                                                 guint32            *n_listens);
/* The spawn's listener hook (sbx-process-spawn.c): takes @fd; serves it
 * for the run's execution, or closes it.  The run's other listeners
 * (sbx_egress_run_spawn_listens) are served or closed with it. */
void           sbx_egress_run_serve             (gpointer            data,
                                                 int                 fd);
/* Revokes the execution (its tunnels and listener end) and keeps its first
 * denial.  Idempotent. */
void           sbx_egress_run_end               (SbxEgressRun       *run);
void           sbx_egress_run_clear             (SbxEgressRun       *run);

/* The run's first denial: into @result (nullable: the run did not produce
 * one) and, as a "network-denied" event, to the set's reporters.  Inside an
 * admission. */
void           sbx_executor_report_network_denial (SbxExecutorShared *shared,
                                                   const char        *key,
                                                   guint64            run_id,
                                                   SbxRunResult      *result,
                                                   const char        *target,
                                                   const char        *reason);

/* Every refusal of the run, after sbx_egress_run_end(): into @result
 * (nullable) and, one "denied" event per distinct denial (and a
 * "denials-dropped" one when the log overflowed), to the set's reporters.
 * Nothing when the run kept no log.  Inside an admission. */
void           sbx_executor_report_denials      (SbxExecutorShared *shared,
                                                 const char        *key,
                                                 guint64            run_id,
                                                 SbxRunResult      *result,
                                                 SbxEgressRun      *run);

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (SbxEgressRun, sbx_egress_run_clear)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SbxEgress, sbx_egress_unref)

G_END_DECLS
