/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The contract between the Linux backend (the supervisor side) and sbx-init,
 * the tiny init program that runs inside every sandbox.  Included by the
 * freestanding init (no libc) and by the plugin, so: <stdint.h> only.
 *
 * Command line:  sbx-init MODE TARGET-PID EXIT-FD [IGNORED]
 *   MODE        "1": PID 1 of the sandbox's pid namespace (rung 1);
 *               "2": child subreaper owning the process tree (rung 2);
 *               "p": probe — exit SBX_INIT_PROBE_EXIT at once.
 *   TARGET-PID  the target's pid as init sees it (decimal).
 *   EXIT-FD     write end of the exit-record pipe (decimal).  Also the
 *               lifeline: when the supervisor's read end is gone the pipe
 *               reports POLLERR and init kills the whole tree.
 *   IGNORED     optional: the signals the target started with ignored
 *               (SBX_SPAWN_IGNORED_SIGNALS), decimal, bit N-1 = signal N,
 *               never 0.  init ignores them too and forwards none of them.
 * The environment is empty and no other descriptor is open.
 */
#pragma once

#include <stdint.h>

/* Exit code of "sbx-init p".  Distinct from 0 so that a child that never ran
 * init cannot be mistaken for a working one (upstream used 66 likewise). */
#define SBX_INIT_PROBE_EXIT 66

#define SBX_INIT_EXIT_MAGIC 0x31786273u  /* "sbx1" little-endian */

#define SBX_INIT_KIND_EXITED    1u
#define SBX_INIT_KIND_SIGNALED  2u

/* SbxInitExitRecord.flags */
#define SBX_INIT_FLAG_TREE_EMPTY       1u  /* every descendant was killed and reaped (mode 2) */
#define SBX_INIT_FLAG_SUPERVISOR_LOST  2u  /* the lifeline broke before the target exited */

/* Written once, with one write(2) (smaller than PIPE_BUF, so atomic), right
 * before init exits.  PID 1 of a pid namespace cannot die by most signals, so
 * this record is how a target's signal death reaches the supervisor. */
typedef struct
{
  uint32_t magic;   /* SBX_INIT_EXIT_MAGIC */
  uint32_t kind;    /* SBX_INIT_KIND_* of the target */
  int32_t  code;    /* exit code when EXITED */
  int32_t  signo;   /* terminating signal when SIGNALED */
  uint32_t flags;   /* SBX_INIT_FLAG_* */
  uint32_t reserved;
} SbxInitExitRecord;

/* A real-time signal the supervisor sends to init to have it SIGKILL the
 * whole tree (rung 2, where killing init itself would orphan the tree). */
#define SBX_INIT_SIGNAL_KILL_TREE 40

/* Signals init forwards to the tree (bit n = signal n).  Every other signal
 * sent to init is refused by the backend's signal() (SBX_STATUS_UNSUPPORTED):
 * the kernel drops signals without a handler that reach a pid-namespace init.
 * HUP INT QUIT USR1 USR2 ALRM TERM CONT TSTP TTIN TTOU WINCH. */
#define SBX_INIT_FORWARDED_SIGNALS                                         \
  ((UINT64_C (1) << 1) | (UINT64_C (1) << 2) | (UINT64_C (1) << 3) |       \
   (UINT64_C (1) << 10) | (UINT64_C (1) << 12) | (UINT64_C (1) << 14) |    \
   (UINT64_C (1) << 15) | (UINT64_C (1) << 18) | (UINT64_C (1) << 20) |    \
   (UINT64_C (1) << 21) | (UINT64_C (1) << 22) | (UINT64_C (1) << 28))
