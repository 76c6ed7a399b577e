/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* mock-size-too-small: the descriptor's struct_size does not cover the
 * extension list; the host must refuse it before calling init. */
#include "../mock-common.h"

static const SbxBackendVTableV1 backend = MOCK_BACKEND_VTABLE (mock_probe_full);
static const SbxPluginExtension extensions[] = {
  { sizeof (SbxPluginExtension), SBX_EXT_BACKEND, "mock-size-too-small", 10, 0, &backend },
  { 0 },
};

static int32_t
must_not_init (const SbxHostV1 *host, void **plugin_ctx)
{
  abort ();
}

static const SbxPluginDescriptor descriptor = {
  offsetof (SbxPluginDescriptor, extensions), SBX_PLUGIN_ABI_VERSION, SBX_HOST_FEATURES_NONE,
  "mock_size_too_small", "0.1.0", "LGPL-2.1-or-later", must_not_init, mock_fini, extensions,
};

SBX_PLUGIN_EXPORT const SbxPluginDescriptor *sbx_plugin_mock_size_too_small_entry (void);
const SbxPluginDescriptor *
sbx_plugin_mock_size_too_small_entry (void)
{
  return &descriptor;
}
