/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The seccomp filter of the Linux backend.  Built once per executor with
 * libseccomp for every architecture this kernel runs (native, 32-bit compat,
 * x32 on x86_64; arm on aarch64), exported to classic BPF at compile time.
 * The child only loads it: sbx_seccomp_program_apply() is a raw
 * seccomp(SECCOMP_SET_MODE_FILTER) call, async-signal-safe.
 */
#pragma once

#include <glib.h>
#include <stdint.h>
#include "sbx-plugin-abi.h"
#include "sbx-linux-report.h"

G_BEGIN_DECLS

typedef struct
{
  int      rung;        /* 1: private user/mount/pid/net namespaces; 2: none */
  uint32_t net_mode;    /* SBX_NET_MODE_* of the policy */
} SbxSeccompOptions;

typedef struct _SbxSeccompProgram SbxSeccompProgram;

/* FALSE from sbx_seccomp_available() means the kernel lacks seccomp filters. */
gboolean           sbx_seccomp_available       (void);
SbxSeccompProgram *sbx_seccomp_program_new     (const SbxSeccompOptions *options,
                                                const SbxLinuxReporter  *reporter,
                                                GError                 **error);
void               sbx_seccomp_program_free    (SbxSeccompProgram       *program);
/* Child side: needs no_new_privs already set.  0 or negative errno. */
int                sbx_seccomp_program_apply   (const SbxSeccompProgram *program);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SbxSeccompProgram, sbx_seccomp_program_free)

G_END_DECLS
