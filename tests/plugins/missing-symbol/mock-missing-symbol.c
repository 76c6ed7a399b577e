/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* mock-missing-symbol: references a function nothing defines.  With
 * RTLD_NOW the load itself fails (not the first call). */
#include "../mock-common.h"

extern int sbx_mock_symbol_that_does_not_exist (void);

static int32_t
probe_calls_missing (void *plugin_ctx, SbxHostCall *call, SbxProbeResultV1 *result)
{
  result->level = (uint32_t) sbx_mock_symbol_that_does_not_exist ();
  return SBX_STATUS_OK;
}

static const SbxBackendVTableV1 backend = MOCK_BACKEND_VTABLE (probe_calls_missing);
static const SbxPluginExtension extensions[] = {
  { .struct_size = sizeof (SbxPluginExtension), .kind = SBX_EXT_BACKEND, .name = "mock-missing-symbol", .priority = 10,
    .vtable = &backend },
  { 0 },
};

SBX_PLUGIN_DEFINE (mock_missing_symbol, "0.1.0", "LGPL-2.1-or-later", SBX_HOST_FEATURES_NONE,
                   mock_init, mock_fini, extensions)
