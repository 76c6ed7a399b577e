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
/* "sbx: run: network target denied: TARGET (REASON)" on stderr. */
void        sbx_run_egress_report_denial  (SbxRunResult     *result);

G_END_DECLS
