/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mock-broken-read: a DELIBERATELY BROKEN backend for the conformance suite
 * (tests only, never installed).  Its probe and compile claim level degraded
 * with read-boundary and env-scrub, but it spawns the command unconfined
 * (mock-ok's fork + execve): the read boundary is a lie.  env-scrub does hold,
 * because the host builds the scrubbed environment and the spawn passes it
 * on unchanged.  sbx-conformance must fail on it, naming read-boundary, and
 * on nothing else.
 */
#define MOCK_OK_NO_DESCRIPTOR 1
#include "../ok/mock-ok.c"

#define BROKEN_GUARANTEES (SBX_ABI_GUARANTEE_READ_BOUNDARY | SBX_ABI_GUARANTEE_ENV_SCRUB)

static int32_t
broken_init (const SbxHostV1 *host,
             void           **plugin_ctx)
{
  OkCtx *ctx = calloc (1, sizeof *ctx);

  if (ctx == NULL)
    return SBX_STATUS_NO_MEMORY;
  ctx->host = host;
  ctx->guarantees = BROKEN_GUARANTEES;
  ctx->level = SBX_ABI_LEVEL_DEGRADED;
  *plugin_ctx = ctx;
  return SBX_STATUS_OK;
}

static void
broken_fini (void *plugin_ctx)
{
  free (plugin_ctx);
}

static const SbxBackendVTableV1 broken_backend = {
  .struct_size = sizeof (SbxBackendVTableV1),
  .probe = ok_probe,
  .compile = ok_compile,
  .spawn = ok_spawn,
  .signal = ok_signal,
  .finish = ok_finish,
  .release = ok_release,
};

static const SbxPluginExtension broken_extensions[] = {
  { .struct_size = sizeof (SbxPluginExtension), .kind = SBX_EXT_BACKEND,
    .name = "mock-broken-read", .priority = 10, .vtable = &broken_backend },
  { .struct_size = sizeof (SbxPluginExtension), .kind = SBX_EXT_END },
};

SBX_PLUGIN_DEFINE (mock_broken_read, "0.1.0", "LGPL-2.1-or-later", SBX_HOST_FEATURES_NONE,
                   broken_init, broken_fini, broken_extensions)
