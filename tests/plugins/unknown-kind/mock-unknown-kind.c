/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* mock-unknown-kind: declares an extension of kind 9, which no host knows. */
#include "../mock-common.h"

static const SbxBackendVTableV1 backend = MOCK_BACKEND_VTABLE (mock_probe_full);
static const SbxPluginExtension extensions[] = {
  { .struct_size = sizeof (SbxPluginExtension), .kind = SBX_EXT_BACKEND, .name = "mock-unknown-kind", .priority = 10,
    .vtable = &backend },
  { sizeof (SbxPluginExtension), 9, "mock-unknown-kind-x", 10, 0, &backend },
  { 0 },
};

SBX_PLUGIN_DEFINE (mock_unknown_kind, "0.1.0", "LGPL-2.1-or-later", SBX_HOST_FEATURES_NONE,
                   mock_init, mock_fini, extensions)
