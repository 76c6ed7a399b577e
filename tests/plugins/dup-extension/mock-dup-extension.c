/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* mock-dup-extension: declares a backend called "mock-ok"; loaded after
 * mock-ok, it must be refused before init (extension names are unique per
 * registry).  Alone, it loads. */
#include "../mock-common.h"

static const SbxBackendVTableV1 backend = MOCK_BACKEND_VTABLE (mock_probe_full);
static const SbxPluginExtension extensions[] = {
  { .struct_size = sizeof (SbxPluginExtension), .kind = SBX_EXT_BACKEND, .name = "mock-ok", .priority = 500,
    .vtable = &backend },
  { 0 },
};

SBX_PLUGIN_DEFINE (mock_dup_extension, "0.1.0", "LGPL-2.1-or-later", SBX_HOST_FEATURES_NONE,
                   mock_init, mock_fini, extensions)
