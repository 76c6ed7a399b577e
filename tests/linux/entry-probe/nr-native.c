/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* System call numbers of the native entry path, from the kernel's own header. */
#include <asm/unistd_64.h>
#define SBX_PROBE_NR_BASE 0
#include "sbx-entry-probe-nr.h"

const SbxProbeNr sbx_probe_nr_native[] = {
#define X(n) { #n, __NR_##n },
  SBX_PROBE_CALLS
#undef X
  { 0, 0 },
};
