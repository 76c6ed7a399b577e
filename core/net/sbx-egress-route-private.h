/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef SBX_EGRESS_ROUTE_PRIVATE_H
#define SBX_EGRESS_ROUTE_PRIVATE_H

#include "sbx-egress-route.h"

G_BEGIN_DECLS

/* The route as the egress plugin's start() takes it (SbxEgressVTableV1):
 * "direct", or the upstream URL with its credentials, prefixed by
 * "trusted-address-guarantee " when the caller vouches for the upstream's
 * address checks.  Contains secrets: hand it only to the plugin, wipe it
 * after (sbx_egress_route_config_free). */
char  *sbx_egress_route_dup_plugin_config (SbxEgressRoute *self);
void   sbx_egress_route_config_free       (char           *config);

G_END_DECLS

#endif /* SBX_EGRESS_ROUTE_PRIVATE_H */
