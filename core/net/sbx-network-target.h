/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A real include guard, not #pragma once: the build tree holds a copy of
 * each public header (so <sbx/...> works uninstalled) and clang treats the
 * two copies as different files. */
#ifndef SBX_NETWORK_TARGET_H
#define SBX_NETWORK_TARGET_H

#if !defined (SBX_INSIDE) && !defined (SBX_COMPILATION)
#error "Only <sbx/sbx.h> can be included directly."
#endif

#include <glib-object.h>
#include "sbx-version.h"

G_BEGIN_DECLS

/**
 * SBX_EGRESS_ROUTE_ERROR:
 *
 * The error domain of network targets and egress routes: a
 * [error@Sbx.EgressRouteError].
 *
 * Since: 0.1
 */
#define SBX_EGRESS_ROUTE_ERROR (sbx_egress_route_error_quark ())

/**
 * SbxEgressRouteError:
 * @SBX_EGRESS_ROUTE_ERROR_INVALID_TARGET: a network target is not
 *   `tcp:HOST:PORT` with a valid host and a port 1-65535.
 * @SBX_EGRESS_ROUTE_ERROR_INVALID_ROUTE: an upstream proxy URL is not
 *   `http[s]://[USER[:PASSWORD]@]HOST:PORT` (messages never repeat the URL,
 *   which may carry a password).
 * @SBX_EGRESS_ROUTE_ERROR_ADDRESS_DENIED: a target resolved to (or is) an
 *   address its class does not allow (upstream's `ErrAddressDenied`).
 * @SBX_EGRESS_ROUTE_ERROR_RESOLUTION_FAILED: a target name did not resolve.
 * @SBX_EGRESS_ROUTE_ERROR_CONNECTION_FAILED: no address of a target accepted
 *   the connection.
 * @SBX_EGRESS_ROUTE_ERROR_UPSTREAM_UNAVAILABLE: the upstream proxy could not
 *   be reached (or its TLS failed).
 * @SBX_EGRESS_ROUTE_ERROR_UPSTREAM_REJECTED: the upstream proxy refused the
 *   request.
 * @SBX_EGRESS_ROUTE_ERROR_TARGET_DENIED: the target is not approved.
 * @SBX_EGRESS_ROUTE_ERROR_ROUTE_DENIED: no configured route serves the
 *   target.
 *
 * Errors of [struct@Sbx.NetworkTarget] and [struct@Sbx.EgressRoute].
 *
 * Since: 0.1
 */
typedef enum /*< prefix=SBX_EGRESS_ROUTE_ERROR >*/
{
  SBX_EGRESS_ROUTE_ERROR_INVALID_TARGET = 1,
  SBX_EGRESS_ROUTE_ERROR_INVALID_ROUTE,
  SBX_EGRESS_ROUTE_ERROR_ADDRESS_DENIED,
  SBX_EGRESS_ROUTE_ERROR_RESOLUTION_FAILED,
  SBX_EGRESS_ROUTE_ERROR_CONNECTION_FAILED,
  SBX_EGRESS_ROUTE_ERROR_UPSTREAM_UNAVAILABLE,
  SBX_EGRESS_ROUTE_ERROR_UPSTREAM_REJECTED,
  SBX_EGRESS_ROUTE_ERROR_TARGET_DENIED,
  SBX_EGRESS_ROUTE_ERROR_ROUTE_DENIED,
} SbxEgressRouteError;

SBX_AVAILABLE_IN_0_1
GQuark sbx_egress_route_error_quark (void);

/**
 * SBX_NETWORK_TARGET_UNPARSEABLE:
 *
 * The target recorded as the denial when a proxy request names no target
 * that can be parsed: `tcp:invalid:1`.
 *
 * Since: 0.1
 */
#define SBX_NETWORK_TARGET_UNPARSEABLE "tcp:invalid:1"

typedef struct _SbxNetworkTarget SbxNetworkTarget;

#define SBX_TYPE_NETWORK_TARGET (sbx_network_target_get_type ())
SBX_AVAILABLE_IN_0_1
GType              sbx_network_target_get_type      (void) G_GNUC_CONST;
SBX_AVAILABLE_IN_0_1
SbxNetworkTarget  *sbx_network_target_parse         (const char        *text,
                                                     GError           **error);
SBX_AVAILABLE_IN_0_1
SbxNetworkTarget  *sbx_network_target_new           (const char        *hostname,
                                                     guint16            port,
                                                     GError           **error);
SBX_AVAILABLE_IN_0_1
SbxNetworkTarget  *sbx_network_target_ref           (SbxNetworkTarget  *self);
SBX_AVAILABLE_IN_0_1
void               sbx_network_target_unref         (SbxNetworkTarget  *self);

SBX_AVAILABLE_IN_0_1
const char        *sbx_network_target_to_string     (SbxNetworkTarget  *self);
SBX_AVAILABLE_IN_0_1
const char        *sbx_network_target_get_transport (SbxNetworkTarget  *self);
SBX_AVAILABLE_IN_0_1
const char        *sbx_network_target_get_hostname  (SbxNetworkTarget  *self);
SBX_AVAILABLE_IN_0_1
guint16            sbx_network_target_get_port      (SbxNetworkTarget  *self);
SBX_AVAILABLE_IN_0_1
const char        *sbx_network_target_get_address   (SbxNetworkTarget  *self);
SBX_AVAILABLE_IN_0_1
gboolean           sbx_network_target_is_ip_literal (SbxNetworkTarget  *self);
SBX_AVAILABLE_IN_0_1
gboolean           sbx_network_target_equal         (SbxNetworkTarget  *a,
                                                     SbxNetworkTarget  *b);
SBX_AVAILABLE_IN_0_1
guint              sbx_network_target_hash          (SbxNetworkTarget  *self);

SBX_AVAILABLE_IN_0_2
gboolean           sbx_network_target_check_reachable (SbxNetworkTarget  *self,
                                                       GError           **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SbxNetworkTarget, sbx_network_target_unref)

G_END_DECLS

#endif /* SBX_NETWORK_TARGET_H */
