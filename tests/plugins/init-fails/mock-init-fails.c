/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* mock-init-fails: a valid descriptor whose init reports UNAVAILABLE. */
#include "../mock-common.h"

static const SbxBackendVTableV1 backend = MOCK_BACKEND_VTABLE (mock_probe_full);
static const SbxPluginExtension extensions[] = {
  { .struct_size = sizeof (SbxPluginExtension), .kind = SBX_EXT_BACKEND, .name = "mock-init-fails", .priority = 10,
    .vtable = &backend },
  { 0 },
};

static int32_t
failing_init (const SbxHostV1 *host, void **plugin_ctx)
{
  host->log (SBX_LOG_INFO, "mock-init-fails", "mock-init-fails: refusing to initialise (test)");
  return SBX_STATUS_UNAVAILABLE;
}

static void
must_not_fini (void *plugin_ctx)
{
  abort ();  /* fini after a failed init is a host bug */
}

SBX_PLUGIN_DEFINE (mock_init_fails, "0.1.0", "LGPL-2.1-or-later", SBX_HOST_FEATURES_NONE,
                   failing_init, must_not_fini, extensions)
