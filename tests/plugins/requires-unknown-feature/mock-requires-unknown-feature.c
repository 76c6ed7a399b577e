/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* mock-requires-unknown-feature: requires host feature bit 63, which no host
 * knows; the host must refuse it before calling init. */
#include "../mock-common.h"

static const SbxBackendVTableV1 backend = MOCK_BACKEND_VTABLE (mock_probe_full);
static const SbxPluginExtension extensions[] = {
  { .struct_size = sizeof (SbxPluginExtension), .kind = SBX_EXT_BACKEND, .name = "mock-requires-unknown-feature", .priority = 10,
    .vtable = &backend },
  { 0 },
};

static int32_t
must_not_init (const SbxHostV1 *host, void **plugin_ctx)
{
  abort ();
}

SBX_PLUGIN_DEFINE (mock_requires_unknown_feature, "0.1.0", "LGPL-2.1-or-later",
                   SBX_HOST_FEATURE_RULE_FDS | (UINT64_C (1) << 63), must_not_init, mock_fini, extensions)
