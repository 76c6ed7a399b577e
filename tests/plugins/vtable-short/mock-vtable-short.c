/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* mock-vtable-short: the backend vtable's struct_size stops before release(). */
#include "../mock-common.h"

/* struct_size stops short of the mandatory release slot. */
static const SbxBackendVTableV1 backend = {
  .struct_size = SBX_BACKEND_VTABLE_V1_MIN_SIZE - sizeof (SbxBackendReleaseFunc *),
  .probe = mock_probe_full,
  .compile = mock_compile_stub,
  .spawn = mock_spawn_unsupported,
  .signal = mock_signal_unsupported,
  .finish = mock_finish_unsupported,
};
static const SbxPluginExtension extensions[] = {
  { .struct_size = sizeof (SbxPluginExtension), .kind = SBX_EXT_BACKEND, .name = "mock-vtable-short", .priority = 10,
    .vtable = &backend },
  { 0 },
};

SBX_PLUGIN_DEFINE (mock_vtable_short, "0.1.0", "LGPL-2.1-or-later", SBX_HOST_FEATURES_NONE,
                   mock_init, mock_fini, extensions)
