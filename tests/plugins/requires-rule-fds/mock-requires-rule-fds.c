/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* mock-requires-rule-fds: requires SBX_HOST_FEATURE_RULE_FDS, a bit the
 * header defines but this host does not implement (it never pins rule fds).
 * The host must refuse it before init; a host that implements the bit loads
 * it, and init fails unless the host table advertises the bit. */
#include "../mock-common.h"

static const SbxBackendVTableV1 backend = MOCK_BACKEND_VTABLE (mock_probe_full);
static const SbxPluginExtension extensions[] = {
  { .struct_size = sizeof (SbxPluginExtension), .kind = SBX_EXT_BACKEND, .name = "mock-requires-rule-fds", .priority = 10,
    .vtable = &backend },
  { 0 },
};

static int32_t
rule_fds_init (const SbxHostV1 *host, void **plugin_ctx)
{
  if ((host->features & SBX_HOST_FEATURE_RULE_FDS) == 0)
    return SBX_STATUS_UNAVAILABLE;
  return mock_init (host, plugin_ctx);
}

SBX_PLUGIN_DEFINE (mock_requires_rule_fds, "0.1.0", "LGPL-2.1-or-later", SBX_HOST_FEATURE_RULE_FDS,
                   rule_fds_init, mock_fini, extensions)
