/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A real include guard, not #pragma once: the build tree holds a copy of
 * each public header (so <sbx/...> works uninstalled) and clang treats the
 * two copies as different files. */
#ifndef SBX_H
#define SBX_H

#define SBX_INSIDE

#include "sbx-version.h"
#include "sbx-guarantees.h"
#include "sbx-profile.h"
#include "sbx-compile-report.h"
#include "sbx-registry.h"
#include "sbx-executor-set-options.h"
#include "sbx-executor-set.h"
#include "sbx-grant.h"
#include "sbx-executor.h"
#include "sbx-run-options.h"
#include "sbx-decision.h"
#include "sbx-denial.h"
#include "sbx-run-result.h"
#include "sbx-process.h"
#include "sbx-prepared-process.h"
#include "sbx-changes.h"
#include "sbx-network-target.h"
#include "sbx-address-class.h"
#include "sbx-egress-route.h"
#include "sbx-enum-types.h"

#undef SBX_INSIDE

#endif /* SBX_H */
