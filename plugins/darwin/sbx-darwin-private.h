/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The macOS-only part of the darwin-seatbelt backend (sbx-darwin-spawn.c):
 * host check, spec, spawn under sandbox-exec, process-group teardown.
 * Declared everywhere, defined (and called) only when building for macOS.
 */
#ifndef SBX_DARWIN_PRIVATE_H
#define SBX_DARWIN_PRIVATE_H

#include <stddef.h>
#include <stdint.h>

#include <sbx/sbx-plugin-abi.h>
#include "sbx-sbpl.h"

/* The upper bound the probe reports on macOS: what sbx_sbpl_compile() can
 * claim for some policy.  Never AddressNetwork (SBPL cannot scope by
 * address) nor ResourceLimits (no sandbox-wide limits). */
#define SBX_DARWIN_GUARANTEES (SBX_ABI_GUARANTEE_PROCESS_BOUNDARY | SBX_ABI_GUARANTEE_WRITE_BOUNDARY | \
                               SBX_ABI_GUARANTEE_READ_BOUNDARY | SBX_ABI_GUARANTEE_ENV_SCRUB |         \
                               SBX_ABI_GUARANTEE_NETWORK_BOUNDARY | SBX_ABI_GUARANTEE_TARGET_NETWORK)

typedef struct SbxDarwinSpec  SbxDarwinSpec;
typedef struct SbxDarwinChild SbxDarwinChild;

/* 1 when sandbox-exec can be run; else 0 and why in @why. */
int     sbx_darwin_host_usable  (char *why, size_t why_size);
/* realpath(3) of @path, or of its nearest existing ancestor joined with the
 * rest, so denies on paths that do not exist yet still resolve; NULL when
 * nothing changes.  An SbxSbplResolveFunc. */
char   *sbx_darwin_resolve_path (const char *path, void *data);
/* Takes ownership of @profile. */
int32_t sbx_darwin_spec_new     (SbxSbplProfile *profile, void **spec_out, char *err, size_t err_size);
void    sbx_darwin_spec_free    (void *spec);
/* spawn(), signal() and finish() of the vtable; failures go to
 * host->set_error() of @call. */
int32_t sbx_darwin_spawn        (const SbxHostV1 *host, SbxHostCall *call, void *spec,
                                 const SbxSpawnRequestV1 *request, SbxSpawnResultV1 *result);
int32_t sbx_darwin_signal       (void *child, int32_t signo);
int32_t sbx_darwin_finish       (const SbxHostV1 *host, SbxHostCall *call, void *child, int32_t wait_status,
                                 SbxExitV1 *out);

#endif /* SBX_DARWIN_PRIVATE_H */
