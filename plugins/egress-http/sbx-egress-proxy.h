/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sbx-egress-proxy.h — the http-connect egress route: an HTTP/1.1 forward
 * and CONNECT proxy with per-execution credentials.  Internal to plugins/egress-http; the plugin glue
 * (sbx-egress-http-plugin.c) maps the ABI onto it, and white-box tests drive
 * it directly.
 */
#ifndef SBX_EGRESS_PROXY_H
#define SBX_EGRESS_PROXY_H

#include <gio/gio.h>
#include <sbx/sbx-plugin-abi.h>

G_BEGIN_DECLS

typedef struct _SbxEgressProxy SbxEgressProxy;

typedef struct
{
  guint  max_head_bytes;     /* request/response head limit (64 KiB) */
  guint  head_timeout_ms;    /* a complete request head within (10 s) */
  guint  idle_timeout_ms;    /* a tunnel or forward that moves no byte for this long ends (30 s) */
  guint  upstream_timeout_ms;/* connect + upstream CONNECT handshake (10 s) */
} SbxEgressProxyLimits;

/* @config: "direct" | [ "trusted-address-guarantee " ] "http[s]://[user[:pass]@]host:port".
 * Starts the proxy thread. */
SbxEgressProxy *sbx_egress_proxy_new                (const char                 *config,
                                                     GError                    **error);
/* Stops: closes every listener and connection, ends and joins the thread. */
void            sbx_egress_proxy_free               (SbxEgressProxy             *self);

const char     *sbx_egress_proxy_get_fingerprint    (SbxEgressProxy             *self);
gboolean        sbx_egress_proxy_get_address_guarantee (SbxEgressProxy          *self);

/* @targets: canonical "tcp:host:port" (re-validated), NULL-terminated, or
 * NULL for every target (an empty list: none yet, for a host that asks).
 * Returns the credential (base64url of 32 random
 * bytes; only its SHA-256 is kept). */
char           *sbx_egress_proxy_authorize          (SbxEgressProxy             *self,
                                                     const char                 *execution_id,
                                                     const char *const          *targets,
                                                     GError                    **error);
/* Withdraws @execution_id: its credential stops working and every
 * connection it opened is closed; no other execution's.  Returns the first
 * denial recorded for it (or NULL); FALSE when it was not authorized. */
gboolean        sbx_egress_proxy_revoke             (SbxEgressProxy             *self,
                                                     const char                 *execution_id,
                                                     char                      **denial);
/* From now until its revoke returns, reports every refusal of
 * @execution_id to @sink (copied; SbxEgressVTableV1.watch_denials), under
 * the proxy's lock, so no report is in flight once revoke returned.  With
 * the sink's ask, an approvable CONNECT is held and asked instead (also
 * under the lock; the answer is queued to the proxy's thread).  FALSE
 * when @execution_id is not authorized. */
gboolean        sbx_egress_proxy_watch              (SbxEgressProxy             *self,
                                                     const char                 *execution_id,
                                                     const SbxEgressDenialSinkV1 *sink);
/* Asks @execution_id's host (its sink's ask) about one refusal made
 * outside the proxy (the DNS stub's RESOLVE of @target), under the
 * proxy's lock as the proxy's own asks are (none follows the revoke):
 * TRUE when asked (@answer(@ticket, ...) follows exactly once), FALSE
 * when the execution is gone or its host does not ask. */
gboolean        sbx_egress_proxy_ask                (SbxEgressProxy             *self,
                                                     const char                 *execution_id,
                                                     guint32                     operation,
                                                     const char                 *target,
                                                     const char                 *mechanism,
                                                     const char                 *reason,
                                                     SbxEgressAnswerFunc        *answer,
                                                     void                       *ticket);
/* Records one refusal of @execution_id made outside the proxy (the DNS
 * stub): @operation and @flags as in SbxEgressDenialV1.  Nothing when the
 * execution is not (or no longer) authorized. */
void            sbx_egress_proxy_deny               (SbxEgressProxy             *self,
                                                     const char                 *execution_id,
                                                     guint32                     operation,
                                                     guint32                     flags,
                                                     const char                 *target,
                                                     const char                 *mechanism,
                                                     const char                 *reason);
/* Serves connections arriving on @fd, a listening loopback TCP socket.
 * With @execution_id (an authorized execution), only that execution's
 * credentials authenticate on it and its revoke closes it; NULL serves
 * every execution.  Takes ownership of @fd, also on failure. */
gboolean        sbx_egress_proxy_serve_fd           (SbxEgressProxy             *self,
                                                     const char                 *execution_id,
                                                     int                         fd,
                                                     GError                    **error);

/* Tests and benchmarks. */
void            sbx_egress_proxy_set_limits         (SbxEgressProxy             *self,
                                                     const SbxEgressProxyLimits *limits);
void            sbx_egress_proxy_set_resolver       (SbxEgressProxy             *self,
                                                     GResolver                  *resolver);
/* Tests: where a direct dial to a resolved @address actually goes (the
 * address rules have already been applied to @address).  NULL restores. */
typedef GSocketAddress *(*SbxEgressDialer) (GInetAddress *address,
                                            guint16       port,
                                            gpointer      user_data);
void            sbx_egress_proxy_set_dialer         (SbxEgressProxy             *self,
                                                     SbxEgressDialer             dialer,
                                                     gpointer                    user_data);
guint           sbx_egress_proxy_get_n_connections  (SbxEgressProxy             *self);
/* Number of dial attempts (direct or upstream) so far. */
guint           sbx_egress_proxy_get_n_dials        (SbxEgressProxy             *self);
/* Number of idle relay pipes kept for reuse (bounded); each is two fds. */
guint           sbx_egress_proxy_get_n_pooled_pipes (SbxEgressProxy             *self);

G_END_DECLS

#endif /* SBX_EGRESS_PROXY_H */
