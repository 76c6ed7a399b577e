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
