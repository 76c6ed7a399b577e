/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "sbx-address-class.h"
#include "sbx-netrules-private.h"

G_STATIC_ASSERT ((int) SBX_ADDRESS_CLASS_PUBLIC == (int) SBX_NETRULES_CLASS_PUBLIC);
G_STATIC_ASSERT ((int) SBX_ADDRESS_CLASS_NON_PUBLIC == (int) SBX_NETRULES_CLASS_NON_PUBLIC);
G_STATIC_ASSERT ((int) SBX_ADDRESS_CLASS_METADATA == (int) SBX_NETRULES_CLASS_METADATA);

/**
 * sbx_address_class_for_address:
 * @address: an IPv4 or IPv6 address
 *
 * Classifies @address (IPv4-mapped IPv6 addresses as the IPv4 address they
 * carry).
 *
 * Returns: the class of @address
 *
 * Since: 0.1
 */
SbxAddressClass
sbx_address_class_for_address (GInetAddress *address)
{
  g_return_val_if_fail (G_IS_INET_ADDRESS (address), SBX_ADDRESS_CLASS_METADATA);
  return (SbxAddressClass) sbx_netrules_classify (address);
}
