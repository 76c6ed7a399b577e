/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* mock-probe-fails: probe() reports UNAVAILABLE with a message and a hint.
 * With MOCK_PROBE_LOG set, each call appends a line to that file (tests
 * count how often the host probes). */
#include "../mock-common.h"

#include <stdio.h>

static int32_t
failing_probe (void *plugin_ctx, SbxHostCall *call, SbxProbeResultV1 *result)
{
  MockCtx *ctx = plugin_ctx;
  const char *log_path = getenv ("MOCK_PROBE_LOG");

  if (log_path != NULL)
    {
      FILE *log = fopen (log_path, "a");

      if (log != NULL)
        {
          fputs ("probe\n", log);
          fclose (log);
        }
    }
  ctx->host->set_error (call, SBX_STATUS_UNAVAILABLE,
                        "mock mechanism /dev/mock is absent. Hint: load the mock kernel module");
  ctx->host->set_error (call, SBX_STATUS_FAILED, "a second message that must not replace the first");
  return SBX_STATUS_UNAVAILABLE;
}

static const SbxBackendVTableV1 backend = MOCK_BACKEND_VTABLE (failing_probe);
static const SbxPluginExtension extensions[] = {
  { .struct_size = sizeof (SbxPluginExtension), .kind = SBX_EXT_BACKEND, .name = "mock-probe-fails", .priority = 50,
    .vtable = &backend },
  { 0 },
};

SBX_PLUGIN_DEFINE (mock_probe_fails, "0.1.0", "LGPL-2.1-or-later", SBX_HOST_FEATURES_NONE,
                   mock_init, mock_fini, extensions)
