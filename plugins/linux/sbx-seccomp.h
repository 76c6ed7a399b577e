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
#include <sbx/sbx-plugin-abi.h>
#include "sbx-linux-report.h"

G_BEGIN_DECLS

typedef struct
{
  int      rung;        /* 1: private user/mount/pid/net namespaces; 2: none */
  uint32_t net_mode;    /* SBX_NET_MODE_* of the policy */
  /* The Landlock ABI of the ruleset applied with this filter (0 = no
   * Landlock).  At 1..2 Landlock cannot mediate truncation, so the filter
   * denies truncate(2), openat2() and open/openat/creat with O_TRUNC but
   * without write access. */
  int      landlock_abi;
  /* Unless this is TRUE, every connect(2) goes to the connect supervisor
   * and unix sockets are stream or seqpacket only
   * (SBX_SECCOMP_ENFORCES_UNIX_SUPERVISED), on both rungs: a pathname
   * socket inside any root, even a read-only one, reaches a host daemon.
   * TRUE only for a policy with SBX_POLICY_UNIX_SOCKETS (the profile opened
   * them explicitly). */
  gboolean allow_unix_sockets;
  /* The caller's terminal is shared: a standard stream of the target is a
   * terminal the backend did not create for it (sbx run -- cmd | cat from
   * an interactive shell, --no-pty).  The terminal-setting ioctl requests
   * (modes, window size, line discipline, flow control, flushes, breaks,
   * controlling terminal, console redirection, exclusive mode: the
   * caller_terminal_requests[] of sbx-seccomp.c) are refused with EPERM on
   * every descriptor, since a filter cannot tell which descriptor is that
   * terminal (dup(2) and reopening /proc/self/fd/N defeat per-number
   * rules); the reading ones (TCGETS, TIOCGWINSZ, TIOCGPGRP, FIONREAD)
   * stay.  A per-spawn choice: the spec holds both programs
   * (sbx-linux-spec.c) and the spawn picks one (sbx-linux-spawn.c). */
  gboolean caller_terminal_shared;
} SbxSeccompOptions;

/* What a program enforces (sbx_seccomp_program_enforces()). */
#define SBX_SECCOMP_ENFORCES_INET_DENIED      (1u << 0)  /* every AF_INET/AF_INET6 socket() denied */
#define SBX_SECCOMP_ENFORCES_INET_TCP_ONLY    (1u << 1)  /* AF_INET/AF_INET6: plain TCP only (no UDP,
                                                          * raw, SCTP, MPTCP) */
#define SBX_SECCOMP_ENFORCES_UNIX_DENIED      (1u << 2)  /* socket(AF_UNIX) denied (socketpair allowed);
                                                          * no program sets it any more (kept for the
                                                          * table's numbering) */
#define SBX_SECCOMP_ENFORCES_TRUNCATE_DENIED  (1u << 3)  /* truncate(2) and O_TRUNC without write denied */
#define SBX_SECCOMP_ENFORCES_SETID_DENIED     (1u << 4)  /* no call sets S_ISUID/S_ISGID on a file */
#define SBX_SECCOMP_ENFORCES_SYSV_IPC_DENIED  (1u << 5)  /* every SysV IPC call refused (rung 2) */
#define SBX_SECCOMP_ENFORCES_FS_WATCH_DENIED  (1u << 6)  /* inotify and fanotify refused (rung 2) */
#define SBX_SECCOMP_ENFORCES_INET_LISTEN_DENIED (1u << 7)  /* listen(2) refused (ports network: an
                                                            * unbound TCP socket's listen() autobinds,
                                                            * which Landlock's BIND_TCP never sees) */
#define SBX_SECCOMP_ENFORCES_TERMINAL_SETTINGS_DENIED (1u << 8)  /* the terminal-setting ioctl requests
                                                                  * refused on every fd (caller's
                                                                  * terminal shared) */
#define SBX_SECCOMP_ENFORCES_UNIX_SUPERVISED  (1u << 9)  /* connect(2) goes to the supervisor
                                                          * (SECCOMP_RET_USER_NOTIF); unix sockets are
                                                          * stream or seqpacket only.  The filter must be
                                                          * loaded with a listener
                                                          * (sbx_seccomp_program_apply_listener()). */

/* SbxSeccompRule.err of a rule whose calls go to the supervisor. */
#define SBX_SECCOMP_ERR_SUPERVISED (-1)

/* One rule of the program, as added to every architecture's context: the
 * system call (by name), the errno it returns and the argument comparisons
 * (all must hold; op is an enum scmp_compare).  The multiplexers (i386's
 * socketcall and ipc) that are refused as a whole come first, with
 * n_args 0 and multiplexer TRUE.  Tests walk this list on every entry path. */
typedef struct
{
  const char *name;
  int         err;
  gboolean    multiplexer;
  guint       n_args;
  struct
  {
    guint    arg;
    int      op;
    uint64_t mask;     /* SCMP_CMP_MASKED_EQ only */
    uint64_t value;
  } args[3];
} SbxSeccompRule;

typedef struct _SbxSeccompProgram SbxSeccompProgram;

/* FALSE from sbx_seccomp_available() means the kernel lacks seccomp filters. */
gboolean           sbx_seccomp_available       (void);
SbxSeccompProgram *sbx_seccomp_program_new     (const SbxSeccompOptions *options,
                                                const SbxLinuxReporter  *reporter,
                                                GError                 **error);
void               sbx_seccomp_program_free    (SbxSeccompProgram       *program);
uint32_t           sbx_seccomp_program_enforces (const SbxSeccompProgram *program);
/* The classic BPF program (struct sock_filter[*n_insns]), for tests and
 * diagnostics. */
const void        *sbx_seccomp_program_filter  (const SbxSeccompProgram *program,
                                                size_t                  *n_insns);
/* Every rule of the program, in the order added (see SbxSeccompRule). */
const SbxSeccompRule *sbx_seccomp_program_rules (const SbxSeccompProgram *program,
                                                 size_t                  *n_rules);
/* Comma-separated architectures the filter covers, e.g. "x86_64,x86". */
const char        *sbx_seccomp_program_arches  (const SbxSeccompProgram *program);
/* Child side: sets no_new_privs (idempotent) and loads the filter.  0 or
 * negative errno.  Async-signal-safe and errno-neutral like
 * sbx_landlock_plan_apply(). */
int                sbx_seccomp_program_apply   (const SbxSeccompProgram *program);
/* Child side, for a program with SBX_SECCOMP_ENFORCES_UNIX_SUPERVISED: the
 * same, loaded with SECCOMP_FILTER_FLAG_NEW_LISTENER; returns the listener
 * (close-on-exec) or a negative errno.  Without that bit it loads the
 * filter like sbx_seccomp_program_apply() and returns 0. */
int                sbx_seccomp_program_apply_listener (const SbxSeccompProgram *program);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SbxSeccompProgram, sbx_seccomp_program_free)

G_END_DECLS
