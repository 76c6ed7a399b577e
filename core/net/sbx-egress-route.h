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
