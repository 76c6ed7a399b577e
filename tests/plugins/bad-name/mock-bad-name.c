/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* mock-bad-name: file sbx-plugin-mock-bad-name.so, but the descriptor says
 * "something_else". */
#include "../mock-common.h"

static const SbxBackendVTableV1 backend = MOCK_BACKEND_VTABLE (mock_probe_full);
static const SbxPluginExtension extensions[] = {
  { sizeof (SbxPluginExtension), SBX_EXT_BACKEND, "mock-bad-name", 10, 0, &backend },
  { 0 },
};

static const SbxPluginDescriptor descriptor = {
  sizeof (SbxPluginDescriptor), SBX_PLUGIN_ABI_VERSION, SBX_HOST_FEATURES_NONE,
  "something_else", "0.1.0", "LGPL-2.1-or-later", mock_init, mock_fini, extensions,
};

SBX_PLUGIN_EXPORT const SbxPluginDescriptor *sbx_plugin_mock_bad_name_entry (void);
const SbxPluginDescriptor *
sbx_plugin_mock_bad_name_entry (void)
{
  return &descriptor;
}
