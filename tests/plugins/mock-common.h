/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Shared pieces of the mock plugins (tests only, never installed).  Plain C
 * against sbx-plugin-abi.h, like a real third-party plugin: no GLib.
 */
#pragma once

#include <stdlib.h>
#include <string.h>

#include <sbx/sbx-plugin-abi.h>

/* The host table handed to init; mocks keep it in their context. */
typedef struct
{
  const SbxHostV1 *host;
} MockCtx;

static int32_t
mock_init (const SbxHostV1 *host,
           void           **plugin_ctx)
{
  MockCtx *ctx = calloc (1, sizeof *ctx);

  if (ctx == NULL)
    return SBX_STATUS_NO_MEMORY;
  ctx->host = host;
  *plugin_ctx = ctx;
  return SBX_STATUS_OK;
}

static void
mock_fini (void *plugin_ctx)
{
  free (plugin_ctx);
}

static int32_t
mock_probe_full (void             *plugin_ctx,
                 SbxHostCall      *call,
                 SbxProbeResultV1 *result)
{
  MockCtx *ctx = plugin_ctx;

  ctx->host->report (call, "mock-probe", SBX_ABI_REPORT_UNENFORCED, "test double: nothing is enforced");
  result->level = SBX_ABI_LEVEL_FULL;
  result->guarantees = 0xff;
  result->flags = 0;
  return SBX_STATUS_OK;
}

/* A spec that counts nothing: a heap cell so ASan sees a double release. */
static int32_t
mock_compile_stub (void               *plugin_ctx,
                   SbxHostCall        *call,
                   const SbxPolicyV1  *policy,
                   void              **spec_out,
                   SbxCompileResultV1 *result)
{
  MockCtx *ctx = plugin_ctx;
  int *spec = malloc (sizeof *spec);

  if (spec == NULL)
    {
      ctx->host->set_error (call, SBX_STATUS_NO_MEMORY, "mock: out of memory");
      return SBX_STATUS_NO_MEMORY;
    }
  *spec = 1;
  result->level = SBX_ABI_LEVEL_FULL;
  result->guarantees = policy->required_guarantees;
  *spec_out = spec;
  return SBX_STATUS_OK;
}

static int32_t
mock_spawn_unsupported (void                    *plugin_ctx,
                        SbxHostCall             *call,
                        void                    *spec,
                        const SbxSpawnRequestV1 *request,
                        SbxSpawnResultV1        *result)
{
  MockCtx *ctx = plugin_ctx;

  ctx->host->set_error (call, SBX_STATUS_UNSUPPORTED, "mock: this backend never spawns");
  return SBX_STATUS_UNSUPPORTED;
}

static int32_t
mock_signal_unsupported (void   *plugin_ctx,
                         void   *child,
                         int32_t signo)
{
  return SBX_STATUS_UNSUPPORTED;
}

static int32_t
mock_finish_unsupported (void        *plugin_ctx,
                         SbxHostCall *call,
                         void        *child,
                         int32_t      wait_status,
                         SbxExitV1   *out)
{
  return SBX_STATUS_UNSUPPORTED;
}

static void
mock_release_free (void *plugin_ctx,
                   void *spec)
{
  free (spec);
}

#define MOCK_BACKEND_VTABLE(probe_fn)                                         \
  {                                                                           \
    .struct_size = sizeof (SbxBackendVTableV1),                               \
    .probe = (probe_fn),                                                      \
    .compile = mock_compile_stub,                                             \
    .spawn = mock_spawn_unsupported,                                          \
    .signal = mock_signal_unsupported,                                        \
    .finish = mock_finish_unsupported,                                        \
    .release = mock_release_free,                                             \
  }
