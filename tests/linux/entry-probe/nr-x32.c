/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* System call numbers of the x32 entry path, from the kernel's own header. */
#define __X32_SYSCALL_BIT 0x40000000L
#include <asm/unistd_x32.h>
#define SBX_PROBE_NR_BASE 0x40000000L
#include "sbx-entry-probe-nr.h"

const SbxProbeNr sbx_probe_nr_x32[] = {
#define X(n) { #n, __NR_##n },
  SBX_PROBE_CALLS
#undef X
  { 0, 0 },
};
