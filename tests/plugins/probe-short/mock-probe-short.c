/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* mock-probe-short: a high-priority backend whose probe reports level FULL
 * but only env-scrub and process-boundary: fewer guarantees than any
 * Sandboxed profile requires (read/write/network boundaries). */
#include "../mock-common.h"

static int32_t
short_probe (void *plugin_ctx, SbxHostCall *call, SbxProbeResultV1 *result)
{
  MockCtx *ctx = plugin_ctx;

  ctx->host->report (call, "write-boundary", SBX_ABI_REPORT_UNENFORCED,
                     "mock: no filesystem confinement. Hint: this is a test double");
  result->level = SBX_ABI_LEVEL_FULL;
  result->guarantees = SBX_ABI_GUARANTEE_ENV_SCRUB | SBX_ABI_GUARANTEE_PROCESS_BOUNDARY;
  return SBX_STATUS_OK;
}

static const SbxBackendVTableV1 backend = MOCK_BACKEND_VTABLE (short_probe);
static const SbxPluginExtension extensions[] = {
  { .struct_size = sizeof (SbxPluginExtension), .kind = SBX_EXT_BACKEND, .name = "mock-probe-short", .priority = 100,
    .vtable = &backend },
  { 0 },
};

SBX_PLUGIN_DEFINE (mock_probe_short, "0.1.0", "LGPL-2.1-or-later", SBX_HOST_FEATURES_NONE,
                   mock_init, mock_fini, extensions)
