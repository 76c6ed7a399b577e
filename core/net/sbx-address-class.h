/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A real include guard, not #pragma once: the build tree holds a copy of
 * each public header (so <sbx/...> works uninstalled) and clang treats the
 * two copies as different files. */
#ifndef SBX_ADDRESS_CLASS_H
#define SBX_ADDRESS_CLASS_H

#if !defined (SBX_INSIDE) && !defined (SBX_COMPILATION)
#error "Only <sbx/sbx.h> can be included directly."
#endif

#include <gio/gio.h>
#include "sbx-version.h"

G_BEGIN_DECLS

/**
 * SbxAddressClass:
 * @SBX_ADDRESS_CLASS_PUBLIC: a globally routable unicast address.
 * @SBX_ADDRESS_CLASS_NON_PUBLIC: an address in one of the special-use
 *   prefixes (loopback, private, link-local, CGNAT, documentation,
 *   benchmarking, multicast, reserved, translation prefixes, ...).  A target
 *   given as a name that resolves to any such address is refused; a target
 *   given as an IP literal in this class is allowed only when the approval
 *   names that exact literal.
 * @SBX_ADDRESS_CLASS_METADATA: a cloud metadata endpoint (169.254.169.254,
 *   fd00:ec2::254, 169.254.170.2, 100.100.100.200, and those IPv4 addresses
 *   inside IPv4-mapped, IPv4-compatible, NAT64 and 6to4 forms).  Never
 *   reachable through an egress route, whatever the approval says.
 *
 * The class of an IP address, as egress routes with the address guarantee
 * judge it.  IPv4-mapped IPv6 addresses are classified as the IPv4 address
 * they carry.  The prefix table is upstream's (tested at every boundary
 * address).
 *
 * Since: 0.1
 */
typedef enum /*< prefix=SBX_ADDRESS_CLASS >*/
{
  SBX_ADDRESS_CLASS_PUBLIC     = 0,
  SBX_ADDRESS_CLASS_NON_PUBLIC = 1,
  SBX_ADDRESS_CLASS_METADATA   = 2,
} SbxAddressClass;

SBX_AVAILABLE_IN_0_1
SbxAddressClass  sbx_address_class_for_address (GInetAddress *address);

G_END_DECLS

#endif /* SBX_ADDRESS_CLASS_H */
