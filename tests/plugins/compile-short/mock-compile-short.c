/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mock-compile-short: a backend whose probe claims level FULL and every
 * guarantee, but whose compile achieves only ENV_SCRUB.  The executor must
 * then fail closed (SBX_EXECUTOR_SET_ERROR_MISSING_GUARANTEES) and release
 * the spec exactly once.  It never spawns.
 *
 * sbx_mock_compile_short_count ("compile" | "release" | "live") is exported
 * so tests can check the release discipline ("live" = compiled, not yet
 * released).
 */
#include "../mock-common.h"

/* Every entry point, declared through its ABI typedef (a signature that
 * does not match the slot it fills cannot compile). */
static SbxBackendProbeFunc mock_probe_full;
static SbxBackendCompileFunc short_compile;
static SbxBackendSpawnFunc mock_spawn_unsupported;
static SbxBackendSignalFunc mock_signal_unsupported;
static SbxBackendFinishFunc mock_finish_unsupported;
static SbxBackendReleaseFunc short_release;
static SbxPluginInitFunc mock_init;
static SbxPluginFiniFunc mock_fini;

SBX_PLUGIN_EXPORT unsigned sbx_mock_compile_short_count (const char *what);

static unsigned n_compile, n_release;

unsigned
sbx_mock_compile_short_count (const char *what)
{
  unsigned compiled = __atomic_load_n (&n_compile, __ATOMIC_SEQ_CST);
  unsigned released = __atomic_load_n (&n_release, __ATOMIC_SEQ_CST);

  if (strcmp (what, "compile") == 0)
    return compiled;
  if (strcmp (what, "release") == 0)
    return released;
  if (strcmp (what, "live") == 0)
    return compiled - released;
  return (unsigned) -1;
}

static int32_t
short_compile (void               *plugin_ctx,
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
  __atomic_add_fetch (&n_compile, 1, __ATOMIC_SEQ_CST);
  ctx->host->report (call, "mock-short", SBX_ABI_REPORT_UNENFORCED,
                     "test double: compiles to env-scrub only");
  result->level = SBX_ABI_LEVEL_DEGRADED;
  result->guarantees = SBX_ABI_GUARANTEE_ENV_SCRUB;
  *spec_out = spec;
  return SBX_STATUS_OK;
}

static void
short_release (void *plugin_ctx,
               void *spec)
{
  __atomic_add_fetch (&n_release, 1, __ATOMIC_SEQ_CST);
  free (spec);
}

static const SbxBackendVTableV1 vtable = {
  .struct_size = sizeof (SbxBackendVTableV1),
  .probe = mock_probe_full,
  .compile = short_compile,
  .spawn = mock_spawn_unsupported,
  .signal = mock_signal_unsupported,
  .finish = mock_finish_unsupported,
  .release = short_release,
};

static const SbxPluginExtension extensions[] = {
  { .struct_size = sizeof (SbxPluginExtension), .kind = SBX_EXT_BACKEND, .name = "mock-compile-short", .priority = 10,
    .vtable = &vtable },
  { 0 },
};

SBX_PLUGIN_DEFINE (mock_compile_short, "0.1.0", "LGPL-2.1-or-later", SBX_HOST_FEATURES_NONE,
                   mock_init, mock_fini, extensions)
