/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sbx run --allow-host HOST:PORT... and --upstream-proxy URL
 * (tools/sbx-cmd-run-egress.c): the run's egress route and approvals.
 */
#pragma once

#include <sbx/sbx.h>

G_BEGIN_DECLS

typedef struct
{
  GPtrArray      *targets;   /* canonical "tcp:host:port" of --allow-host */
  SbxEgressRoute *route;     /* (nullable) the run's route */
} SbxRunEgress;

void        sbx_run_egress_clear          (SbxRunEgress     *egress);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (SbxRunEgress, sbx_run_egress_clear)

/* Parses the options: every HOST:PORT (a bracketed IPv6 literal for v6),
 * and the upstream URL, read from the environment variable NAME when given
 * as "env:NAME".  A URL with credentials on sbx's own command line is wiped
 * from its argv strings (other host processes read /proc/PID/cmdline). */
gboolean    sbx_run_egress_parse          (SbxRunEgress     *egress,
                                           char            **allow_hosts,
                                           char             *upstream,
                                           int               argc,
                                           char            **argv,
                                           GError          **error);
/* The network of the run's profile with --allow-host: a Deny network
 * becomes Gated (the targets are then approved one by one); @explicit_deny
 * (--network deny) refuses. */
SbxProfile *sbx_run_egress_profile        (SbxRunEgress     *egress,
                                           SbxProfile       *profile,
                                           gboolean          explicit_deny,
                                           GError          **error);
void        sbx_run_egress_set_options    (SbxRunEgress           *egress,
                                           SbxExecutorSetOptions  *options);
/* The route a Sandboxed profile's Gated network needs when no option gave
 * one: a new direct route, authorized per run for the targets its grants
 * name and nothing else; NULL for any other profile (no route: nothing is
 * created for Allow, Deny or an Unconfined profile), when @approve (the
 * --approve values, nullable) names a network.broad.v1 grant, which the
 * core refuses on a set with a route, and when no loaded plugin serves a
 * direct route (egress-http).  sbx run, its --ask and sbx profile learn
 * use it. */
SbxEgressRoute *sbx_run_egress_gated_route (SbxProfile            *profile,
                                            const char *const     *approve);
/* Makes a run of @executor (of a set with a route) refuse every
 * connection of its Gated network that no grant opens at once, each
 * refusal a denial naming the grant that opens it, instead of failing
 * unseen (sbx run without --ask, sbx profile learn).  Nothing where the
 * executor does not achieve target-network (the route is not kept: rung
 * 2), so no proxy is named to a sandbox that cannot reach it. */
void        sbx_run_egress_observe        (SbxExecutor            *executor,
                                           SbxRunOptions          *options);
/* FALSE when observing would cost @profile's run guarantees: it gates a
 * host socket (an asking run then claims no read, write or network
 * boundary), so sbx run observes it only with --ask, which asks. */
gboolean    sbx_run_egress_may_observe    (SbxProfile             *profile);
/* Mints one network.proxy-target.v1 grant per target when the network is
 * Gated (appended to @tokens, the approvals to @approved); under Allow the
 * route already lets every target through. */
gboolean    sbx_run_egress_mint           (SbxRunEgress     *egress,
                                           SbxExecutor      *executor,
                                           SbxProfile       *profile,
                                           const char       *execution_id,
                                           const char       *command,
                                           const char       *cwd,
                                           GPtrArray        *tokens,
                                           GPtrArray        *approved,
                                           GError          **error);
/* "sbx: run: network target denied: TARGET (REASON)" on stderr, for a
 * route that reports only its first refusal (the run has no denials). */
void        sbx_run_egress_report_denial  (SbxRunResult     *result);

G_END_DECLS
