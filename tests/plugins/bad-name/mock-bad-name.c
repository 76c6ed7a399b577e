/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* mock-bad-name: file sbx-plugin-mock-bad-name.so, but the descriptor says
 * "something_else". */
#include "../mock-common.h"

static const SbxBackendVTableV1 backend = MOCK_BACKEND_VTABLE (mock_probe_full);
static const SbxPluginExtension extensions[] = {
  { .struct_size = sizeof (SbxPluginExtension), .kind = SBX_EXT_BACKEND, .name = "mock-bad-name", .priority = 10,
    .vtable = &backend },
  { 0 },
};

static const SbxPluginDescriptor descriptor = {
  .struct_size = sizeof (SbxPluginDescriptor),
  .abi_version = SBX_PLUGIN_ABI_VERSION,
  .required_host_features = SBX_HOST_FEATURES_NONE,
  .name = "something_else",
  .version = "0.1.0",
  .license = "LGPL-2.1-or-later",
  .init = mock_init,
  .fini = mock_fini,
  .extensions = extensions,
};

SBX_PLUGIN_EXPORT const SbxPluginDescriptor *sbx_plugin_mock_bad_name_entry (void);
const SbxPluginDescriptor *
sbx_plugin_mock_bad_name_entry (void)
{
  return &descriptor;
}
