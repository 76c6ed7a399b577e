/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A real include guard, not #pragma once: the build tree holds a copy of
 * each public header (so <sbx/...> works uninstalled) and clang treats the
 * two copies as different files. */
#ifndef SBX_GUARANTEES_H
#define SBX_GUARANTEES_H

#if !defined (SBX_INSIDE) && !defined (SBX_COMPILATION)
#error "Only <sbx/sbx.h> can be included directly."
#endif

#include <glib.h>
#include "sbx-version.h"

G_BEGIN_DECLS

/**
 * SbxGuarantees:
 * @SBX_GUARANTEE_NONE: no guarantee.
 * @SBX_GUARANTEE_PROCESS_BOUNDARY: the target cannot see, signal or trace
 *   processes outside its sandbox, and its whole process tree ends with the run.
 * @SBX_GUARANTEE_WRITE_BOUNDARY: writes outside the granted write set are denied.
 * @SBX_GUARANTEE_READ_BOUNDARY: reads outside the granted read set are denied.
 * @SBX_GUARANTEE_ENV_SCRUB: the child environment is rebuilt from an allowlist;
 *   nothing else of the parent's environment reaches it.
 * @SBX_GUARANTEE_NETWORK_BOUNDARY: network egress outside the policy is denied.
 * @SBX_GUARANTEE_ADDRESS_NETWORK: egress is scoped by destination address.
 * @SBX_GUARANTEE_RESOURCE_LIMITS: the sandbox-wide resource limits are enforced.
 * @SBX_GUARANTEE_TARGET_NETWORK: egress is scoped to approved host:port targets.
 *
 * What a backend actually enforced for a spawn.  The bit positions are frozen
 * and equal the `SBX_ABI_GUARANTEE_*` values of
 * the plugin ABI.
 *
 * Since: 0.1
 */
typedef enum /*< flags,prefix=SBX_GUARANTEE >*/
{
  SBX_GUARANTEE_NONE             = 0,
  SBX_GUARANTEE_PROCESS_BOUNDARY = 1 << 0,
  SBX_GUARANTEE_WRITE_BOUNDARY   = 1 << 1,
  SBX_GUARANTEE_READ_BOUNDARY    = 1 << 2,
  SBX_GUARANTEE_ENV_SCRUB        = 1 << 3,
  SBX_GUARANTEE_NETWORK_BOUNDARY = 1 << 4,
  SBX_GUARANTEE_ADDRESS_NETWORK  = 1 << 5,
  SBX_GUARANTEE_RESOURCE_LIMITS  = 1 << 6,
  SBX_GUARANTEE_TARGET_NETWORK   = 1 << 7,
} SbxGuarantees;

/**
 * SBX_GUARANTEES_ALL:
 *
 * Every defined [flags@Sbx.Guarantees] bit.
 *
 * Since: 0.1
 */
#define SBX_GUARANTEES_ALL ((SbxGuarantees) 0xff)

/**
 * SbxLevel:
 * @SBX_LEVEL_NONE: no OS confinement (only an acknowledged Unconfined profile).
 * @SBX_LEVEL_DEGRADED: confined, but with documented narrowings or gaps.
 * @SBX_LEVEL_FULL: the backend's strongest confinement holds.
 *
 * The confinement level a backend reports for a compiled profile.  It is the
 * backend's observation of the host, never computed by the executor.
 *
 * Since: 0.1
 */
typedef enum /*< prefix=SBX_LEVEL >*/
{
  SBX_LEVEL_NONE     = 0,
  SBX_LEVEL_DEGRADED = 1,
  SBX_LEVEL_FULL     = 2,
} SbxLevel;

SBX_AVAILABLE_IN_0_1
const char    *sbx_level_to_string       (SbxLevel       level);
SBX_AVAILABLE_IN_0_1
gboolean       sbx_level_from_string     (const char    *text,
                                          SbxLevel      *out_level);
SBX_AVAILABLE_IN_0_1
const char    *sbx_guarantee_to_string   (SbxGuarantees  guarantee);
SBX_AVAILABLE_IN_0_1
gboolean       sbx_guarantee_from_string (const char    *text,
                                          SbxGuarantees *out_guarantee);
SBX_AVAILABLE_IN_0_1
char         **sbx_guarantees_to_strv    (SbxGuarantees  guarantees);

G_END_DECLS

#endif /* SBX_GUARANTEES_H */
