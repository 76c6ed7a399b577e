/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* mock-abi-too-new: speaks ABI version SBX_PLUGIN_ABI_VERSION + 1; the host
 * must refuse it before calling init. */
#include "../mock-common.h"

static const SbxBackendVTableV1 backend = MOCK_BACKEND_VTABLE (mock_probe_full);
static const SbxPluginExtension extensions[] = {
  { sizeof (SbxPluginExtension), SBX_EXT_BACKEND, "mock-abi-too-new", 10, 0, &backend },
  { 0 },
};

static int32_t
must_not_init (const SbxHostV1 *host, void **plugin_ctx)
{
  abort ();  /* a host that calls init of this plugin is broken */
}

static const SbxPluginDescriptor descriptor = {
  sizeof (SbxPluginDescriptor), SBX_PLUGIN_ABI_VERSION + 1, SBX_HOST_FEATURES_NONE,
  "mock_abi_too_new", "0.1.0", "LGPL-2.1-or-later", must_not_init, mock_fini, extensions,
};

SBX_PLUGIN_EXPORT const SbxPluginDescriptor *sbx_plugin_mock_abi_too_new_entry (void);
const SbxPluginDescriptor *
sbx_plugin_mock_abi_too_new_entry (void)
{
  return &descriptor;
}
