/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* mock-egress: an egress extension, "mock-egress", whose start() always
 * fails.  It requires SBX_HOST_FEATURE_EGRESS_V1 (as every egress plugin
 * must): refused by a host that does not implement egress, loaded by one that
 * does; init fails if the host table does not advertise the bit. */
#include "../mock-common.h"

/* Every entry point, declared through its ABI typedef (a signature that
 * does not match the slot it fills cannot compile). */
static SbxEgressStartFunc egress_start;
static SbxEgressAuthorizeFunc egress_authorize;
static SbxEgressServeFunc egress_serve;
static SbxEgressRevokeFunc egress_revoke;
static SbxEgressStopFunc egress_stop;
static SbxPluginInitFunc egress_init;
static SbxPluginFiniFunc egress_fini;

static int32_t
egress_init (const SbxHostV1 *host, void **plugin_ctx)
{
  if ((host->features & SBX_HOST_FEATURE_EGRESS_V1) == 0)
    return SBX_STATUS_UNAVAILABLE;
  *plugin_ctx = (void *) host;
  return SBX_STATUS_OK;
}

static void
egress_fini (void *plugin_ctx)
{
}

/* Egress that never starts. */
static int32_t
egress_start (void *plugin_ctx, SbxHostCall *call, const char *route_config,
              void **route_out, SbxEgressInfoV1 *info)
{
  const SbxHostV1 *host = plugin_ctx;

  host->set_error (call, SBX_STATUS_UNSUPPORTED, "mock-ok-egress: routes are not implemented");
  return SBX_STATUS_UNSUPPORTED;
}

static int32_t
egress_authorize (void *plugin_ctx, SbxHostCall *call, void *route, const char *execution_id,
                  const char *const *targets, char **credential_out)
{
  return SBX_STATUS_UNSUPPORTED;
}

static int32_t
egress_serve (void *plugin_ctx, SbxHostCall *call, void *route, const char *execution_id, int32_t listen_fd)
{
  return SBX_STATUS_UNSUPPORTED;
}

static int32_t
egress_revoke (void *plugin_ctx, void *route, const char *execution_id, char **denial_out)
{
  return SBX_STATUS_UNSUPPORTED;
}

static void
egress_stop (void *plugin_ctx, void *route)
{
}

static const SbxEgressVTableV1 egress = {
  .struct_size = sizeof (SbxEgressVTableV1),
  .start = egress_start,
  .authorize = egress_authorize,
  .serve = egress_serve,
  .revoke = egress_revoke,
  .stop = egress_stop,
};

static const SbxPluginExtension extensions[] = {
  { .struct_size = sizeof (SbxPluginExtension), .kind = SBX_EXT_EGRESS, .name = "mock-egress", .priority = 0,
    .vtable = &egress },
  { 0 },
};

SBX_PLUGIN_DEFINE (mock_egress, "0.1.0", "LGPL-2.1-or-later", SBX_HOST_FEATURE_EGRESS_V1,
                   egress_init, egress_fini, extensions)
