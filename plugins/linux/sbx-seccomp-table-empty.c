/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The seccomp table of a build that cannot run its generator (a cross
 * build without an exe_wrapper): no program, so sbx_seccomp_program_new()
 * generates each one at run time with libseccomp.
 */
#include "sbx-seccomp-private.h"

const SbxSeccompPrecompiled sbx_seccomp_precompiled[1] = { { 0 } };
const size_t sbx_seccomp_n_precompiled = 0;
const char sbx_seccomp_rule_names[] = "";
