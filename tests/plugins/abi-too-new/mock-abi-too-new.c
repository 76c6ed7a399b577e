/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* mock-abi-too-new: speaks ABI version SBX_PLUGIN_ABI_VERSION + 1; the host
 * must refuse it before calling init. */
#include "../mock-common.h"

static const SbxBackendVTableV1 backend = MOCK_BACKEND_VTABLE (mock_probe_full);
static const SbxPluginExtension extensions[] = {
  { .struct_size = sizeof (SbxPluginExtension), .kind = SBX_EXT_BACKEND, .name = "mock-abi-too-new", .priority = 10,
    .vtable = &backend },
  { 0 },
};

static int32_t
must_not_init (const SbxHostV1 *host, void **plugin_ctx)
{
  abort ();  /* a host that calls init of this plugin is broken */
}

static const SbxPluginDescriptor descriptor = {
  .struct_size = sizeof (SbxPluginDescriptor),
  .abi_version = SBX_PLUGIN_ABI_VERSION + 1,
  .required_host_features = SBX_HOST_FEATURES_NONE,
  .name = "mock_abi_too_new",
  .version = "0.1.0",
  .license = "LGPL-2.1-or-later",
  .init = must_not_init,
  .fini = mock_fini,
  .extensions = extensions,
};

SBX_PLUGIN_EXPORT const SbxPluginDescriptor *sbx_plugin_mock_abi_too_new_entry (void);
const SbxPluginDescriptor *
sbx_plugin_mock_abi_too_new_entry (void)
{
  return &descriptor;
}
