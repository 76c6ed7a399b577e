/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mock-prio: several backends, declared out of priority order, to test
 * selection order, vetoes and the isolation rules:
 *   mock-prio-unconfined  100  level none, unconfined-only, env-scrub
 *   mock-prio-none         40  level none (not unconfined-only), all bits
 *   mock-prio-low         -10  full, all bits
 *   mock-prio-high         30  full, all bits
 *   mock-prio-mid          20  full, all bits
 * None of them spawns.
 */
#include "../mock-common.h"

static int32_t
probe_unconfined (void *plugin_ctx, SbxHostCall *call, SbxProbeResultV1 *result)
{
  result->level = SBX_ABI_LEVEL_NONE;
  result->guarantees = SBX_ABI_GUARANTEE_ENV_SCRUB;
  result->flags = SBX_PROBE_UNCONFINED_ONLY;
  return SBX_STATUS_OK;
}

static int32_t
probe_none (void *plugin_ctx, SbxHostCall *call, SbxProbeResultV1 *result)
{
  result->level = SBX_ABI_LEVEL_NONE;
  result->guarantees = 0xff;
  return SBX_STATUS_OK;
}

static const SbxBackendVTableV1 unconfined = MOCK_BACKEND_VTABLE (probe_unconfined);
static const SbxBackendVTableV1 none = MOCK_BACKEND_VTABLE (probe_none);
static const SbxBackendVTableV1 full = MOCK_BACKEND_VTABLE (mock_probe_full);

static const SbxPluginExtension extensions[] = {
  { .struct_size = sizeof (SbxPluginExtension), .kind = SBX_EXT_BACKEND, .name = "mock-prio-low", .priority = -10,
    .vtable = &full },
  { .struct_size = sizeof (SbxPluginExtension), .kind = SBX_EXT_BACKEND, .name = "mock-prio-high", .priority = 30,
    .vtable = &full },
  { .struct_size = sizeof (SbxPluginExtension), .kind = SBX_EXT_BACKEND, .name = "mock-prio-unconfined", .priority = 100,
    .vtable = &unconfined },
  { .struct_size = sizeof (SbxPluginExtension), .kind = SBX_EXT_BACKEND, .name = "mock-prio-mid", .priority = 20,
    .vtable = &full },
  { .struct_size = sizeof (SbxPluginExtension), .kind = SBX_EXT_BACKEND, .name = "mock-prio-none", .priority = 40,
    .vtable = &none },
  { 0 },
};

SBX_PLUGIN_DEFINE (mock_prio, "0.1.0", "LGPL-2.1-or-later", SBX_HOST_FEATURES_NONE,
                   mock_init, mock_fini, extensions)
