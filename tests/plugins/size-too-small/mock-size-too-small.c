/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* mock-size-too-small: the descriptor's struct_size does not cover the
 * extension list; the host must refuse it before calling init. */
#include "../mock-common.h"

static const SbxBackendVTableV1 backend = MOCK_BACKEND_VTABLE (mock_probe_full);
static const SbxPluginExtension extensions[] = {
  { .struct_size = sizeof (SbxPluginExtension), .kind = SBX_EXT_BACKEND, .name = "mock-size-too-small", .priority = 10,
    .vtable = &backend },
  { 0 },
};

static int32_t
must_not_init (const SbxHostV1 *host, void **plugin_ctx)
{
  abort ();
}

static const SbxPluginDescriptor descriptor = {
  .struct_size = offsetof (SbxPluginDescriptor, extensions),
  .abi_version = SBX_PLUGIN_ABI_VERSION,
  .required_host_features = SBX_HOST_FEATURES_NONE,
  .name = "mock_size_too_small",
  .version = "0.1.0",
  .license = "LGPL-2.1-or-later",
  .init = must_not_init,
  .fini = mock_fini,
  .extensions = extensions,
};

SBX_PLUGIN_EXPORT const SbxPluginDescriptor *sbx_plugin_mock_size_too_small_entry (void);
const SbxPluginDescriptor *
sbx_plugin_mock_size_too_small_entry (void)
{
  return &descriptor;
}
