/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* mock-vtable-short: the backend vtable's struct_size stops before release(). */
#include "../mock-common.h"

static const SbxBackendVTableV1 backend = {
  offsetof (SbxBackendVTableV1, release), 0, mock_probe_full, mock_compile_stub,
  mock_spawn_unsupported, mock_signal_unsupported, mock_finish_unsupported, NULL, NULL,
};
static const SbxPluginExtension extensions[] = {
  { sizeof (SbxPluginExtension), SBX_EXT_BACKEND, "mock-vtable-short", 10, 0, &backend },
  { 0 },
};

SBX_PLUGIN_DEFINE (mock_vtable_short, "0.1.0", "LGPL-2.1-or-later", SBX_HOST_FEATURES_NONE,
                   mock_init, mock_fini, extensions)
