/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* mock-probe-segfaults: probe() writes to an unmapped low address.  The host
 * must die naming this plugin ("sbx: plugin 'mock-probe-segfaults' crashed
 * in probe ..."). */
#include "../mock-common.h"

__attribute__ ((no_sanitize ("address", "undefined")))
static int32_t
crashing_probe (void *plugin_ctx, SbxHostCall *call, SbxProbeResultV1 *result)
{
  /* Not NULL itself, so UBSan's null check does not intercept it first: the
   * point is a real SIGSEGV. */
  volatile uintptr_t address = 16;

  *(volatile int *) address = 1;
  return SBX_STATUS_OK;
}

static const SbxBackendVTableV1 backend = MOCK_BACKEND_VTABLE (crashing_probe);
static const SbxPluginExtension extensions[] = {
  { .struct_size = sizeof (SbxPluginExtension), .kind = SBX_EXT_BACKEND, .name = "mock-probe-segfaults", .priority = 1000,
    .vtable = &backend },
  { 0 },
};

SBX_PLUGIN_DEFINE (mock_probe_segfaults, "0.1.0", "LGPL-2.1-or-later", SBX_HOST_FEATURES_NONE,
                   mock_init, mock_fini, extensions)
