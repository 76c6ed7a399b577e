/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sbx-egress-tunnel.h — raw tunnels through the http-connect route, for
 * clients that speak no HTTP (the DNS stub's forwarders).  Internal to
 * plugins/egress-http.
 *
 * A raw tunnel is a CONNECT tunnel without the CONNECT: the execution and
 * the target are known from where the connection arrived, not from a
 * request head.  Every rule of the route still holds:
 *  - the execution must be authorized and the target approved for it (or it
 *    was authorized for every target); otherwise the client socket is
 *    closed, no dial is made and the execution's first denial is recorded;
 *  - address rules: a name resolving to any non-public address is refused, a
 *    non-public IP literal only when the approval names it, metadata never
 *    (a refusal is a recorded denial, the client socket is closed);
 *  - the route: direct, or the upstream proxy's CONNECT with its
 *    credentials; never a direct connection on an upstream route;
 *  - limits: the dial is bounded by the head timeout, the relay by the idle
 *    timeout;
 *  - revoking the execution closes its raw tunnels and listeners, and no
 *    other execution's.
 * Failures after the call returns are not reported to the caller: the client
 * socket is closed (a forwarder's client sees a reset or EOF, as from a
 * refused connection).  Bytes the client sent before the tunnel is up are
 * relayed first.  Both calls may be made from any thread.
 */
#ifndef SBX_EGRESS_TUNNEL_H
#define SBX_EGRESS_TUNNEL_H

#include "sbx-egress-proxy.h"

G_BEGIN_DECLS

/* Opens a raw tunnel for @execution_id to @target (canonical
 * "tcp:HOST:PORT", as authorize takes it) through the route and relays it
 * with @client_fd, a connected stream socket.  Takes ownership of
 * @client_fd, also on failure.  FALSE (and @error) when @target is not
 * canonical, @execution_id is not authorized or the proxy is closing; the
 * approval itself is judged on the proxy thread as described above. */
gboolean sbx_egress_tunnel_open     (SbxEgressProxy *proxy,
                                     const char     *execution_id,
                                     const char     *target,
                                     int             client_fd,
                                     GError        **error);

/* Serves @listen_fd, a listening stream socket (any address: a forwarder
 * listens on an approved literal's address inside the sandbox), for
 * @execution_id: every connection accepted on it is a raw tunnel to
 * @target.  The listener is closed when the execution is revoked or the
 * proxy stops.  Takes ownership of @listen_fd, also on failure.  FALSE (and
 * @error) as for sbx_egress_tunnel_open(), or when @listen_fd is not a
 * listening stream socket. */
gboolean sbx_egress_tunnel_serve_fd (SbxEgressProxy *proxy,
                                     const char     *execution_id,
                                     const char     *target,
                                     int             listen_fd,
                                     GError        **error);

G_END_DECLS

#endif /* SBX_EGRESS_TUNNEL_H */
