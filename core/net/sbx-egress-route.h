/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A real include guard, not #pragma once: the build tree holds a copy of
 * each public header (so <sbx/...> works uninstalled) and clang treats the
 * two copies as different files. */
#ifndef SBX_EGRESS_ROUTE_H
#define SBX_EGRESS_ROUTE_H

#if !defined (SBX_INSIDE) && !defined (SBX_COMPILATION)
#error "Only <sbx/sbx.h> can be included directly."
#endif

#include <gio/gio.h>
#include "sbx-version.h"
#include "sbx-network-target.h"

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
GQuark           sbx_egress_route_error_quark          (void);

typedef struct _SbxEgressRoute SbxEgressRoute;

#define SBX_TYPE_EGRESS_ROUTE (sbx_egress_route_get_type ())
SBX_AVAILABLE_IN_0_1
GType            sbx_egress_route_get_type             (void) G_GNUC_CONST;
SBX_AVAILABLE_IN_0_1
SbxEgressRoute  *sbx_egress_route_new_direct           (void);
SBX_AVAILABLE_IN_0_1
SbxEgressRoute  *sbx_egress_route_new_upstream         (const char        *url,
                                                        gboolean           trusted_address_guarantee,
                                                        GError           **error);
SBX_AVAILABLE_IN_0_1
SbxEgressRoute  *sbx_egress_route_with_resolver        (SbxEgressRoute    *self,
                                                        GResolver         *resolver);
SBX_AVAILABLE_IN_0_1
SbxEgressRoute  *sbx_egress_route_ref                  (SbxEgressRoute    *self);
SBX_AVAILABLE_IN_0_1
void             sbx_egress_route_unref                (SbxEgressRoute    *self);

SBX_AVAILABLE_IN_0_1
const char      *sbx_egress_route_get_fingerprint      (SbxEgressRoute    *self);
SBX_AVAILABLE_IN_0_1
const char      *sbx_egress_route_to_string            (SbxEgressRoute    *self);
SBX_AVAILABLE_IN_0_1
gboolean         sbx_egress_route_is_direct            (SbxEgressRoute    *self);
SBX_AVAILABLE_IN_0_1
const char      *sbx_egress_route_get_upstream         (SbxEgressRoute    *self);
SBX_AVAILABLE_IN_0_1
gboolean         sbx_egress_route_get_target_guarantee (SbxEgressRoute    *self);
SBX_AVAILABLE_IN_0_1
gboolean         sbx_egress_route_get_address_guarantee (SbxEgressRoute   *self);
SBX_AVAILABLE_IN_0_1
GList           *sbx_egress_route_resolve_target       (SbxEgressRoute    *self,
                                                        SbxNetworkTarget  *target,
                                                        gboolean           literal_named,
                                                        GCancellable      *cancellable,
                                                        GError           **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SbxEgressRoute, sbx_egress_route_unref)

G_END_DECLS

#endif /* SBX_EGRESS_ROUTE_H */
