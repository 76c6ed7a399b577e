/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sbx-egress-forward.h — the listeners of one execution besides the proxy
 * (SbxEgressVTableV1.serve_listeners): the DNS stub's sockets (UDP and
 * TCP, the same answers) and one forwarder per approved target, created by the backend inside the
 * execution's sandbox from the list the host computed (SbxListenV1).
 * Internal to plugins/egress-http.
 *
 * The stub's table is made from the FORWARD entries alone: each one whose
 * target's host is a name (not an IP literal) maps that name to the
 * forwarder's IPv4 address, when its socket arrived.  Every forwarder is
 * served by the route's proxy (sbx_egress_tunnel_serve_fd), so a
 * connection on it is admitted, dialed and relayed as a CONNECT of that
 * execution to that target: a forwarder whose target the execution was not
 * approved for refuses every connection.
 */
#ifndef SBX_EGRESS_FORWARD_H
#define SBX_EGRESS_FORWARD_H

#include <sbx/sbx-plugin-abi.h>

#include "sbx-egress-dns.h"
#include "sbx-egress-proxy.h"

G_BEGIN_DECLS

/* The stub's table for @listens/@fds: lower-case name -> IPv4 address (as
 * sbx_dns_answer takes it).  Never NULL. */
GHashTable *sbx_egress_forward_names (const SbxListenV1 *listens,
                                      const int32_t     *fds,
                                      guint32            n_listens);

/* Serves every fd >= 0 of @fds as @listens says, for @execution_id; the fd
 * of a kind this plugin does not know is closed unserved.  Takes every fd,
 * also on failure; FALSE with @error at the first entry that is invalid
 * (its fd and every later one are closed, earlier ones stay served until
 * the revoke). */
gboolean    sbx_egress_forward_serve (SbxEgressProxy    *proxy,
                                      SbxEgressDns      *dns,
                                      const char        *execution_id,
                                      const SbxListenV1 *listens,
                                      const int32_t     *fds,
                                      guint32            n_listens,
                                      GError           **error);

G_END_DECLS

#endif /* SBX_EGRESS_FORWARD_H */
