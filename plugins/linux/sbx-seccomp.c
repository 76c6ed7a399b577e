/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The seccomp program of the Linux backend.
 *
 * Built once per executor with libseccomp for the native architecture and
 * every compat architecture its kernel can run (x86_64: i386; aarch64: arm),
 * exported to classic BPF (libseccomp 2.5 exports only to an fd: a memfd,
 * read back) and kept in the program; a spawn only loads it with one raw
 * seccomp(SECCOMP_SET_MODE_FILTER) call.
 *
 * Architectures: a system call made under an architecture the filter does
 * not list is killed (SECCOMP_RET_KILL_PROCESS).  x32 is not listed: it
 * shares AUDIT_ARCH_X86_64 and is told apart by __X32_SYSCALL_BIT, which
 * libseccomp's x86_64 section sends to the bad-architecture action, so every
 * x32 system call kills the process.  No distribution ships x32 user space
 * and most kernels (this one included) do not even enable it.
 *
 * Errno choices:
 *  - EPERM for system calls a confined process must not make: the answer the
 *    kernel itself gives an unprivileged caller for most of them, and what
 *    container runtimes return, so callers already handle it;
 *  - ENOSYS where the caller should fall back as on an older kernel: clone3
 *    (glibc then uses clone, whose flags the filter can inspect — clone3
 *    passes them in memory a filter cannot read), openat2 when truncation must
 *    be inspected, and system calls newer than libseccomp's table (a
 *    hand-written preamble: whatever a future kernel adds, such as
 *    open_tree_attr of the mount family, is refused until reviewed);
 *  - EAFNOSUPPORT / EPROTONOSUPPORT for socket families and netlink protocols
 *    removed as attack surface (as if the kernel lacked them);
 *  - EACCES for network denials of the policy, matching what Landlock
 *    returns for a denied TCP connect.
 *  No rule kills: none of the refused calls is dangerous to return from.
 *
 * This file is over a thousand lines (about 1,250) because the deny list is
 * the program: roughly half of it is the rules, each with the comment that
 * justifies it, and the other half builds, exports and checks one filter per
 * architecture from those rules.  The rules and their justifications are
 * reviewed together, and the export can only be tested against the rules it
 * exports; the sections below ("The deny list", "Sockets", "Export") are the
 * seams.
 */
#include "sbx-seccomp.h"
#include "sbx-seccomp-private.h"
#include "sbx-raw-syscall.h"

#include <fcntl.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <netinet/in.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/netlink.h>
#include <linux/seccomp.h>
#include <sys/ioctl.h>
#include <seccomp.h>

#include <gio/gio.h>

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif
#ifndef IPPROTO_MPTCP
#define IPPROTO_MPTCP 262
#endif
#ifndef TIOCLINUX
#define TIOCLINUX 0x541C
#endif
#include <asm/termbits.h>   /* TCSETS2 and the other requests of caller_terminal_requests[] */
#ifndef TCSETX
#define TCSETX  0x5433
#define TCSETXF 0x5434
#define TCSETXW 0x5435
#endif
#include <linux/serial.h>   /* struct serial_iso7816 of TIOCSISO7816 */

/* First system call number of the unified table (all our architectures
 * number system calls identically from here on) and the end of the range the
 * unknown-syscall preamble covers (arm's private calls live at 0x0f0000+). */
#define SBX_SECCOMP_UNIFIED_FIRST  424
#define SBX_SECCOMP_PREAMBLE_END   1024

gboolean
sbx_seccomp_available (void)
{
  uint32_t action = SECCOMP_RET_KILL_PROCESS;

  return syscall (__NR_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) == 0;
}

void
sbx_seccomp_program_free (SbxSeccompProgram *program)
{
  if (program == NULL)
    return;
  if (program->precompiled)
    {
      /* filter and arches are the table's; the rules were unpacked */
      g_free (program->rules);
      g_free (program);
      return;
    }
  g_free (program->filter);
  g_free (program->arches);
  g_free (program->rules);
  g_free (program);
}

uint32_t
sbx_seccomp_program_enforces (const SbxSeccompProgram *program)
{
  g_return_val_if_fail (program != NULL, 0);
  return program->enforces;
}

const void *
sbx_seccomp_program_filter (const SbxSeccompProgram *program,
                            size_t                  *n_insns)
{
  g_return_val_if_fail (program != NULL, NULL);
  if (n_insns != NULL)
    *n_insns = program->len;
  return program->filter;
}

const SbxSeccompRule *
sbx_seccomp_program_rules (const SbxSeccompProgram *program,
                           size_t                  *n_rules)
{
  g_return_val_if_fail (program != NULL, NULL);
  if (n_rules != NULL)
    *n_rules = program->n_rules;
  return program->rules;
}

const char *
sbx_seccomp_program_arches (const SbxSeccompProgram *program)
{
  g_return_val_if_fail (program != NULL, NULL);
  return program->arches;
}

/* ------------------------------------------------------------------------- */
/* Rule helpers                                                               */
/* ------------------------------------------------------------------------- */

static const char *arch_name (uint32_t token);

typedef struct
{
  scmp_filter_ctx ctx;
  uint32_t        arch;          /* the one libseccomp architecture of ctx */
  GArray         *record;        /* SbxSeccompRule, or NULL: the first pass records every rule it
                                  * adds, whether or not this architecture has the call */
  GPtrArray      *refused_mux;   /* names of the multiplexers refused whole in ctx */
  GError        **error;
  gboolean        failed;
} Rules;

static void
rule_fail (Rules *r, int rc, const char *name)
{
  if (r->failed)
    return;
  r->failed = TRUE;
  g_set_error (r->error, G_IO_ERROR, g_io_error_from_errno (-rc),
               "seccomp_rule_add (%s, %s): %s", name, arch_name (r->arch), g_strerror (-rc));
}

/* The multiplexer through which @arch reaches @name, when @name has no
 * number of its own there (i386: socket() through socketcall(2), shmget()
 * through ipc(2)); NULL when the call is direct. */
static char *
multiplexer_of (uint32_t arch, const char *name)
{
  int nr = seccomp_syscall_resolve_name_arch (arch, name);
  int mux;

  if (nr >= 0 || nr == __NR_SCMP_ERROR)
    return NULL;
  mux = seccomp_syscall_resolve_name_rewrite (arch, name);
  if (mux < 0)
    return NULL;
  return seccomp_syscall_resolve_num_arch (arch, mux);
}

/* Deny @name with @err, under up to three argument comparisons, on the
 * architecture of @r's context.  The one rule class this must make
 * impossible is a rule that holds on one entry path only:
 *  - a call this architecture lacks entirely (libseccomp knows no number
 *    for it: vm86 on x86_64) is skipped, since there is no path to cover;
 *  - a call this architecture also reaches through a multiplexer whose
 *    arguments lie in memory (libseccomp gives it a negative pseudo number:
 *    socket() on i386, reached by the direct call and by socketcall(2)) is
 *    added (libseccomp emits the direct call's rule with every argument
 *    test) only when that multiplexer is refused whole in this context
 *    (refuse_multiplexer(), which runs first); otherwise the program fails
 *    to build.  Skipping such a call, as an earlier version did by taking
 *    every negative number for "absent", left i386 socket() unfiltered.
 * Every other failure fails the program. */
static void
add_rule (Rules *r, uint32_t action, int err, const char *name, unsigned int n, const struct scmp_arg_cmp *cmp)
{
  int nr, rc;

  if (r->failed)
    return;
  if (r->record != NULL)
    {
      SbxSeccompRule rule = { 0 };

      rule.name = name;
      rule.err = err;
      rule.n_args = MIN (n, G_N_ELEMENTS (rule.args));
      for (guint i = 0; i < rule.n_args; i++)
        {
          rule.args[i].arg = cmp[i].arg;
          rule.args[i].op = cmp[i].op;
          rule.args[i].mask = cmp[i].op == SCMP_CMP_MASKED_EQ ? cmp[i].datum_a : 0;
          rule.args[i].value = cmp[i].op == SCMP_CMP_MASKED_EQ ? cmp[i].datum_b : cmp[i].datum_a;
        }
      g_array_append_val (r->record, rule);
    }
  if (seccomp_syscall_resolve_name_arch (r->arch, name) == __NR_SCMP_ERROR)
    return;   /* does not exist on this architecture (e.g. vm86 on x86_64) */
  if (action == SCMP_ACT_NOTIFY && seccomp_syscall_resolve_name_arch (r->arch, name) < 0)
    {
      g_autofree char *via = multiplexer_of (r->arch, name);

      /* A pseudo number, the call absent on this architecture and reached
       * through no multiplexer (chmod on aarch64, which has fchmodat only):
       * nothing to hand over, and libseccomp refuses a notification rule
       * on a pseudo number (EINVAL).  A call a multiplexer reaches keeps
       * going, to the multiplexer check below. */
      if (via == NULL)
        return;
    }
  {
    g_autofree char *mux = multiplexer_of (r->arch, name);

    if (mux != NULL && !g_ptr_array_find_with_equal_func (r->refused_mux, mux, g_str_equal, NULL))
      {
        r->failed = TRUE;
        g_set_error (r->error, G_IO_ERROR, G_IO_ERROR_FAILED,
                     "seccomp rule for %s on %s: the call is also reached through %s(2), which is not "
                     "refused; the rule would hold on one entry path only", name, arch_name (r->arch), mux);
        return;
      }
  }
  nr = seccomp_syscall_resolve_name (name);
  if (nr == __NR_SCMP_ERROR)
    {
      rule_fail (r, -ENOENT, name);
      return;
    }
  rc = seccomp_rule_add_array (r->ctx, action, nr, n, cmp);
  if (rc < 0)
    rule_fail (r, rc, name);
}

static void
deny (Rules *r, int err, const char *name, unsigned int n, const struct scmp_arg_cmp *cmp)
{
  add_rule (r, SCMP_ACT_ERRNO (err), err, name, n, cmp);
}

/* Hand @name (under the comparisons) to the supervisor: the caller waits
 * while the supervisor decides and answers (SECCOMP_RET_USER_NOTIF).  The
 * same entry-path rules as deny(); recorded with err SBX_SECCOMP_ERR_SUPERVISED. */
static void
supervise (Rules *r, const char *name, unsigned int n, const struct scmp_arg_cmp *cmp)
{
  add_rule (r, SCMP_ACT_NOTIFY, SBX_SECCOMP_ERR_SUPERVISED, name, n, cmp);
}

/* Refuse the multiplexer @name as a whole with @err (on the architectures
 * that have it; elsewhere it is a pseudo number and nothing to do).  Must
 * run before any rule on a call it multiplexes: libseccomp would otherwise
 * turn each such rule into a multiplexer rule without its argument tests. */
static void
refuse_multiplexer (Rules *r, int err, const char *name)
{
  int rc;

  if (r->failed)
    return;
  if (r->record != NULL)
    {
      SbxSeccompRule rule = { 0 };

      rule.name = name;
      rule.err = err;
      rule.multiplexer = TRUE;
      g_array_append_val (r->record, rule);
    }
  if (seccomp_syscall_resolve_name_arch (r->arch, name) < 0)
    return;
  rc = seccomp_rule_add (r->ctx, SCMP_ACT_ERRNO (err), seccomp_syscall_resolve_name (name), 0);
  if (rc < 0)
    {
      rule_fail (r, rc, name);
      return;
    }
  g_ptr_array_add (r->refused_mux, (gpointer) name);
}

#define DENY0(r, err, name) deny ((r), (err), (name), 0, NULL)
#define DENY_ARGS(r, err, name, ...)                                               \
  do {                                                                             \
    const struct scmp_arg_cmp cmp_[] = { __VA_ARGS__ };                            \
    deny ((r), (err), (name), G_N_ELEMENTS (cmp_), cmp_);                          \
  } while (0)

/* Compare the low 32 bits of an int argument: the kernel truncates a
 * 64-bit register to int, so a full-width equality could be bypassed by
 * setting the upper half. */
#define ARG32_EQ(i, v)        SCMP_CMP ((i), SCMP_CMP_MASKED_EQ, 0xffffffffULL, (uint64_t) (v))
#define ARG_BITS(i, mask, v)  SCMP_CMP ((i), SCMP_CMP_MASKED_EQ, (uint64_t) (mask), (uint64_t) (v))

/* ------------------------------------------------------------------------- */
/* The deny list                                                              */
/* ------------------------------------------------------------------------- */

typedef struct
{
  const char *name;
  int         err;
} Denied;

/* Unconditional denies, one justification each. */
static const Denied unconditional[] = {
  /* namespaces: joining one escapes the sandbox's own (clone/unshare below) */
  { "setns", EPERM },
  /* clone3 takes its flags in memory the filter cannot read; ENOSYS makes
   * glibc fall back to clone(), whose namespace flags are filtered */
  { "clone3", ENOSYS },
  /* mount family: rearranging the view (rung 1) or remounting writable */
  { "mount", EPERM },
  { "umount", EPERM },
  { "umount2", EPERM },
  { "pivot_root", EPERM },
  { "move_mount", EPERM },
  { "open_tree", EPERM },
  { "fsopen", EPERM },
  { "fsmount", EPERM },
  { "fsconfig", EPERM },
  { "fspick", EPERM },
  { "mount_setattr", EPERM },
  /* chroot: pointless inside the view, a classic step in escapes */
  { "chroot", EPERM },
  /* kernel keyrings are per uid, not per sandbox: they hold the caller's
   * credentials (Kerberos tickets, fscrypt keys) */
  { "keyctl", EPERM },
  { "add_key", EPERM },
  { "request_key", EPERM },
  /* bpf: verifier and map attack surface, and tracing of the host */
  { "bpf", EPERM },
  /* perf_event_open: side channels and a long history of kernel bugs */
  { "perf_event_open", EPERM },
  /* userfaultfd: turns kernel races into reliable exploits */
  { "userfaultfd", EPERM },
  /* tracing and memory access of other processes: at rung 2 the sandbox
   * shares the pid namespace with the caller's other processes (Landlock
   * already scopes ptrace; this is defense in depth, and kernels before 4.8
   * let a tracer rewrite system calls after the filter ran) */
  { "ptrace", EPERM },
  { "process_vm_readv", EPERM },
  { "process_vm_writev", EPERM },
  /* pidfd_getfd steals descriptors from another process */
  { "pidfd_getfd", EPERM },
  /* kcmp compares kernel objects of other processes (pointer ordering leak) */
  { "kcmp", EPERM },
  /* io_uring performs reads, writes, opens and connects itself, outside
   * this filter's view */
  { "io_uring_setup", EPERM },
  { "io_uring_enter", EPERM },
  { "io_uring_register", EPERM },
  /* file handles bypass path resolution (the "shocker" escape) and leak
   * inode identities */
  { "open_by_handle_at", EPERM },
  { "name_to_handle_at", EPERM },
  /* kernel modules, kexec, reboot, swap, accounting, quotas, port I/O:
   * privileged host administration, refused even if a capability leaked */
  { "init_module", EPERM },
  { "finit_module", EPERM },
  { "delete_module", EPERM },
  { "kexec_load", EPERM },
  { "kexec_file_load", EPERM },
  { "reboot", EPERM },
  { "swapon", EPERM },
  { "swapoff", EPERM },
  { "acct", EPERM },
  { "quotactl", EPERM },
  { "quotactl_fd", EPERM },
  { "iopl", EPERM },
  { "ioperm", EPERM },
  /* syslog: the kernel log leaks addresses and host activity */
  { "syslog", EPERM },
  /* obsolete interfaces nothing in a sandbox needs: lookup_dcookie
   * (oprofile), vhangup (revokes a terminal), nfsservctl (removed),
   * uselib (a.out loader that skips execve's checks), vm86 (i386 real mode),
   * modify_ldt (16-bit segments; a recurring source of x86 bugs) */
  { "lookup_dcookie", EPERM },
  { "vhangup", EPERM },
  { "nfsservctl", EPERM },
  { "uselib", EPERM },
  { "vm86", EPERM },
  { "vm86old", EPERM },
  { "modify_ldt", EPERM },
};

/* Namespace flags of clone(2) (CLONE_NEWTIME shares its bit with the exit
 * signal there and is only valid for unshare/clone3). */
static const uint64_t clone_ns_flags[] = {
  CLONE_NEWNS, CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWIPC,
  CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET,
};

static void
add_namespace_rules (Rules *r)
{
  /* new namespaces: a user namespace grants every capability inside it and
   * with them the kernel's least-tested code paths; the others only make
   * sense with one */
  for (guint i = 0; i < G_N_ELEMENTS (clone_ns_flags); i++)
    DENY_ARGS (r, EPERM, "clone", ARG_BITS (0, clone_ns_flags[i], clone_ns_flags[i]));
  for (guint i = 0; i < G_N_ELEMENTS (clone_ns_flags); i++)
    DENY_ARGS (r, EPERM, "unshare", ARG_BITS (0, clone_ns_flags[i], clone_ns_flags[i]));
  DENY_ARGS (r, EPERM, "unshare", ARG_BITS (0, CLONE_NEWTIME, CLONE_NEWTIME));
}

static void
add_device_rules (Rules *r)
{
  /* device nodes: mknod of a character or block device is a path to raw
   * hardware for a caller that still holds CAP_MKNOD; FIFOs, sockets and
   * regular files stay allowed */
  DENY_ARGS (r, EPERM, "mknod", ARG_BITS (1, S_IFMT, S_IFCHR));
  DENY_ARGS (r, EPERM, "mknod", ARG_BITS (1, S_IFMT, S_IFBLK));
  DENY_ARGS (r, EPERM, "mknodat", ARG_BITS (2, S_IFMT, S_IFCHR));
  DENY_ARGS (r, EPERM, "mknodat", ARG_BITS (2, S_IFMT, S_IFBLK));

  /* terminal injection: TIOCSTI pushes input into the terminal the user
   * types into; TIOCLINUX can read a virtual console's screen and select
   * text.  The request is an unsigned int: compare the low 32 bits. */
  DENY_ARGS (r, EPERM, "ioctl", ARG32_EQ (1, TIOCSTI));
  DENY_ARGS (r, EPERM, "ioctl", ARG32_EQ (1, TIOCLINUX));
}

/* The caller's terminal shared (SbxSeccompOptions.caller_terminal_shared):
 * the terminal-setting requests, refused with EPERM on every descriptor.
 * The target's standard streams were opened by the caller, before any
 * Landlock rule (LANDLOCK_ACCESS_FS_IOCTL_DEV covers only files the target
 * opens itself), and they share the caller's open file description: what a
 * request changes on them stays changed on the caller's terminal after the
 * run (a shell left without echo, at 1x1, with other control characters or
 * line discipline).  A filter sees descriptor numbers, not files, and a
 * descriptor can be renumbered (dup2) or the terminal reopened through
 * /proc/self/fd/N, so the requests are refused on every descriptor, also on
 * a terminal the target opens itself; the requests that only read (TCGETS,
 * TCGETS2, TIOCGWINSZ, TIOCGPGRP, TIOCGSID, TIOCGETD, TIOCOUTQ, FIONREAD)
 * and those on the descriptor's own flags (FIONBIO, FIOASYNC, FIOCLEX: what
 * fcntl(2) does anyway) stay.  Left out: TIOCSPTLCK and TIOCGPTPEER act on a
 * pseudo-terminal master (unlockpt() of a terminal the target creates), and
 * a caller's terminal reaches the target as a slave or a real device.
 * TCSBRK is refused only with a zero argument (a break; tcdrain() passes
 * 1).  The request is an unsigned int: the low 32 bits are compared. */
static const unsigned long caller_terminal_requests[] = {
  TCSETS, TCSETSW, TCSETSF,                /* modes (tcsetattr) */
  TCSETA, TCSETAW, TCSETAF,                /* modes, System V struct termio */
  TCSETS2, TCSETSW2, TCSETSF2,             /* modes with arbitrary speeds */
  TCSETX, TCSETXF, TCSETXW,                /* extended modes (termiox) */
  TIOCSLCKTRMIOS,                          /* locked modes */
  TIOCSWINSZ,                              /* window size */
  TIOCSETD,                                /* line discipline */
  TCXONC, TCFLSH,                          /* flow control (output stopped), flushing typed input */
  TCSBRKP, TIOCSBRK, TIOCCBRK,             /* breaks (TCSBRK below) */
  TIOCEXCL, TIOCNXCL,                      /* exclusive mode: nobody else could open it */
  TIOCSCTTY, TIOCSPGRP,                    /* controlling terminal, foreground group */
  TIOCCONS,                                /* console output redirected to it */
  TIOCVHANGUP,                             /* hang it up */
  TIOCSIG, TIOCPKT,                        /* signals to its foreground group, packet mode */
  TIOCMBIS, TIOCMBIC, TIOCMSET,            /* modem lines */
  TIOCSSOFTCAR, TIOCSSERIAL, TIOCSRS485, TIOCSISO7816,
  TIOCSERCONFIG, TIOCSERSWILD, TIOCSERSETMULTI,   /* serial line settings */
};

static void
add_terminal_rules (Rules *r)
{
  for (guint i = 0; i < G_N_ELEMENTS (caller_terminal_requests); i++)
    DENY_ARGS (r, EPERM, "ioctl", ARG32_EQ (1, caller_terminal_requests[i]));
  DENY_ARGS (r, EPERM, "ioctl", ARG32_EQ (1, TCSBRK), SCMP_A2 (SCMP_CMP_EQ, 0));
  /* A virtual console: every keyboard/display (KD*, 0x4Bxx) and
   * console-switching (VT_*, 0x56xx) request; their setting ones need the
   * console as the controlling terminal or CAP_SYS_TTY_CONFIG already */
  DENY_ARGS (r, EPERM, "ioctl", ARG_BITS (1, 0xffffff00u, 0x4b00u));
  DENY_ARGS (r, EPERM, "ioctl", ARG_BITS (1, 0xffffff00u, 0x5600u));
}

/* Set-user-ID and set-group-ID bits.  A file the sandbox marks set-id runs
 * with its owner's (a root caller's: uid 0's) privileges for anyone on the
 * host who can reach it; nosuid protects only the sandbox's own mounts.  So
 * no call that sets a mode may carry S_ISUID or S_ISGID, whatever the
 * caller's uid, on both rungs:
 *  - the chmod family: chmod, fchmod, fchmodat, fchmodat2 (mode argument);
 *  - creating opens: open/openat with O_CREAT or O_TMPFILE, creat, and
 *    mknod/mknodat (a regular file by mknod takes its mode bits too);
 *  - openat2 passes mode and flags in struct open_how, in memory a filter
 *    cannot read: refused with ENOSYS for every policy (callers fall back to
 *    openat, as on kernels before 5.6).
 * The kernel strips S_ISGID by itself only in some cases (a creator outside
 * the file's group without CAP_FSETID), never S_ISUID; chown and writes
 * clear both, which cannot add a bit.  mkdir is left alone: S_ISUID means
 * nothing on a directory and S_ISGID there only picks the group of new
 * entries (the kernel copies it from the parent regardless of the argument),
 * neither runs anything with more privilege.  EPERM, what the kernel answers
 * a caller not allowed to set the bit. */
static const struct
{
  const char *name;
  int         mode_arg;
  int         flags_arg;   /* -1: the call always creates (or sets) */
  gboolean    supervised_setgid;   /* set-gid alone goes to the supervisor (add_setgid_dir_rule()) */
} setid_calls[] = {
  { "chmod", 1, -1, TRUE },
  { "fchmod", 1, -1, TRUE },
  { "fchmodat", 2, -1, TRUE },
  { "fchmodat2", 2, -1, TRUE },
  { "mknod", 1, -1, FALSE },
  { "mknodat", 2, -1, FALSE },
  { "creat", 1, -1, FALSE },
  { "open", 2, 1, FALSE },
  { "openat", 3, 2, FALSE },
};

#ifndef __O_TMPFILE
#define __O_TMPFILE (O_TMPFILE & ~O_DIRECTORY)
#endif

/* Set-group-ID on a directory grants nothing on exec: it only makes new
 * entries inherit the directory's group (git init --shared=group,
 * core.sharedRepository).  A chmod-family call with S_ISGID and without
 * S_ISUID goes to the supervisor where the filter has one (with the
 * connect rules, add_unix_supervised_rules()): it opens the target without
 * following a link, in the target's view, and performs the chmod itself
 * only on a directory the target owns on a writable mount, refusing
 * everything else with EPERM (sbx-linux-unotify.c).  S_ISUID keeps its
 * EPERM rule (a disjoint comparison: both bits set is refused by it). */
static void
add_setgid_dir_rule (Rules *r, const char *name, int mode_arg)
{
  const struct scmp_arg_cmp cmp[] = { ARG_BITS (mode_arg, S_ISUID | S_ISGID, S_ISGID) };

  supervise (r, name, G_N_ELEMENTS (cmp), cmp);
}

static void
add_setid_rules (Rules *r, const SbxSeccompOptions *options)
{
  static const uint64_t bits[] = { S_ISUID, S_ISGID };
  static const uint64_t creating[] = { O_CREAT, __O_TMPFILE };

  DENY0 (r, ENOSYS, "openat2");
  for (guint i = 0; i < G_N_ELEMENTS (setid_calls); i++)
    for (guint b = 0; b < G_N_ELEMENTS (bits); b++)
      {
        if (bits[b] == S_ISGID && setid_calls[i].supervised_setgid && !options->allow_unix_sockets)
          {
            add_setgid_dir_rule (r, setid_calls[i].name, setid_calls[i].mode_arg);
            continue;
          }
        if (setid_calls[i].flags_arg < 0)
          {
            DENY_ARGS (r, EPERM, setid_calls[i].name, ARG_BITS (setid_calls[i].mode_arg, bits[b], bits[b]));
            continue;
          }
        for (guint c = 0; c < G_N_ELEMENTS (creating); c++)
          DENY_ARGS (r, EPERM, setid_calls[i].name,
                     ARG_BITS (setid_calls[i].flags_arg, creating[c], creating[c]),
                     ARG_BITS (setid_calls[i].mode_arg, bits[b], bits[b]));
      }
}

/* Rung 2 only: the host's SysV IPC namespace is shared (rung 1 has a
 * private one).  A segment, queue or semaphore set of another process of the
 * same user (mode 0600 is only a uid check) would be readable and writable.
 * Every SysV call is refused; on i386 the ipc(2) multiplexer is refused
 * whole with the same errno (build_context()).  POSIX shared memory
 * (shm_open under /dev/shm) is a file: at rung 2 the host's /dev/shm is a
 * path like any other, which Landlock's rules govern. */
static const char *const sysv_calls[] = {
  "shmget", "shmat", "shmdt", "shmctl",
  "msgget", "msgsnd", "msgrcv", "msgctl",
  "semget", "semop", "semtimedop", "semtimedop_time64", "semctl",
};

/* Rung 2 only: Landlock does not mediate inotify or fanotify marks, which
 * need only read permission on the inode by mode: a watch on a directory
 * the target may not list reports the names of files the host creates and
 * opens there.  The queues' creation is refused with ENOSYS, as on a kernel
 * without them (GLib, tail and editors fall back to polling), the marks with
 * EPERM (a queue cannot reach the sandbox from outside; defense in depth). */
static const Denied fs_watch_calls[] = {
  { "inotify_init", ENOSYS },
  { "inotify_init1", ENOSYS },
  { "inotify_add_watch", EPERM },
  { "fanotify_init", ENOSYS },
  { "fanotify_mark", EPERM },
};

static void
add_truncate_rules (Rules *r)
{
  /* Landlock ABI < 3 cannot mediate truncation (LANDLOCK_ACCESS_FS_TRUNCATE
   * is ABI 3): truncate(2) by path, and open with O_TRUNC but without write
   * access (O_RDONLY or the ioctl-only access mode 3), would let a read-only
   * file be emptied.  openat2, whose flags lie in memory, is refused for
   * every policy (add_setid_rules()).  ftruncate needs a descriptor opened
   * for writing, which Landlock already checked. */
  DENY0 (r, EPERM, "truncate");
  DENY0 (r, EPERM, "truncate64");
  DENY_ARGS (r, EPERM, "open", ARG_BITS (1, O_ACCMODE | O_TRUNC, O_RDONLY | O_TRUNC));
  DENY_ARGS (r, EPERM, "open", ARG_BITS (1, O_ACCMODE | O_TRUNC, O_ACCMODE | O_TRUNC));
  DENY_ARGS (r, EPERM, "openat", ARG_BITS (2, O_ACCMODE | O_TRUNC, O_RDONLY | O_TRUNC));
  DENY_ARGS (r, EPERM, "openat", ARG_BITS (2, O_ACCMODE | O_TRUNC, O_ACCMODE | O_TRUNC));
}

/* ------------------------------------------------------------------------- */
/* Sockets                                                                    */
/* ------------------------------------------------------------------------- */

#define SOCK_TYPE_MASK_BITS 0xf

/* Unix sockets under the supervisor (sbx-linux-unotify.c), both rungs,
 * unless the policy opened them (SBX_POLICY_UNIX_SOCKETS):
 *  - connect(2) of every socket goes to the supervisor, which reads the
 *    address once, resolves a pathname in the target's own view, decides
 *    (the sandbox's own socket, a host socket the policy names, or EACCES)
 *    and connects the caller's socket itself: the filter cannot tell a unix
 *    socket from a TCP one (the descriptor is a number, the address lies in
 *    memory), so TCP connects pass through it too and it applies the
 *    policy's TCP port rules there (Landlock's, which its own connect does
 *    not inherit).  It never lets the kernel re-run the call
 *    (SECCOMP_USER_NOTIF_FLAG_CONTINUE would re-read memory another thread
 *    can change);
 *  - only stream and sequenced-packet unix sockets exist (socket() and
 *    socketpair(); EACCES otherwise): a datagram socket names its receiver
 *    on every sendto()/sendmsg(), whose msghdr a filter cannot read, and a
 *    host daemon's datagram socket (/dev/log, journald, sd_notify) would
 *    take it.  A stream socket refuses a send address (EOPNOTSUPP or
 *    EISCONN) and a sequenced-packet one ignores it, so connect() is their
 *    only way to a peer.  (SOCK_RAW is a datagram socket in the unix
 *    family.)
 * i386 reaches connect, socket and socketpair directly (socketcall is
 * refused whole), and the same rules are added there. */
static void
add_unix_supervised_rules (Rules *r, uint32_t *enforces)
{
  for (int type = 0; type <= SOCK_TYPE_MASK_BITS; type++)
    {
      if (type == SOCK_STREAM || type == SOCK_SEQPACKET)
        continue;
      DENY_ARGS (r, EACCES, "socket", ARG32_EQ (0, AF_UNIX), ARG_BITS (1, SOCK_TYPE_MASK_BITS, type));
      DENY_ARGS (r, EACCES, "socketpair", ARG32_EQ (0, AF_UNIX), ARG_BITS (1, SOCK_TYPE_MASK_BITS, type));
    }
  supervise (r, "connect", 0, NULL);
  *enforces |= SBX_SECCOMP_ENFORCES_UNIX_SUPERVISED;
}

static void
add_socket_rules (Rules *r, const SbxSeccompOptions *options, uint32_t *enforces)
{
  static const int inet_families[] = { AF_INET, AF_INET6 };
  gboolean inet_denied = FALSE, tcp_only = FALSE;

  /* Order matters for libseccomp 2.5: range comparisons (GE) on an argument
   * must be added before masked equalities on it, or it reports EEXIST. */

  /* Families: only unix, inet, inet6 and netlink.  The rest (packet, vsock
   * — a path out of any network namespace to the hypervisor —, bluetooth,
   * can, tipc, rds, alg, xdp ...) is attack surface whose modules an
   * unprivileged socket() can auto-load.  Any value with the upper 32 bits
   * set is >= 64 and denied too. */
  DENY_ARGS (r, EAFNOSUPPORT, "socket", SCMP_A0 (SCMP_CMP_GE, 64));
  for (int family = 0; family < 64; family++)
    {
      if (family == AF_UNIX || family == AF_INET || family == AF_INET6 || family == AF_NETLINK)
        continue;
      DENY_ARGS (r, EAFNOSUPPORT, "socket", ARG32_EQ (0, family));
    }

  /* Netlink: only NETLINK_ROUTE (getaddrinfo's address-family check,
   * getifaddrs).  sock_diag would list the host's sockets at rung 2,
   * uevents and audit leak host activity, generic netlink reaches many
   * drivers. */
  DENY_ARGS (r, EPROTONOSUPPORT, "socket", ARG32_EQ (0, AF_NETLINK), SCMP_A2 (SCMP_CMP_GE, 1));

  /* Unix sockets, both rungs: connecting to a pathname socket needs only
   * write permission on the socket inode, which a read-only mount does not
   * remove, and Landlock (ABI <= 7) does not mediate connect().  A host
   * daemon listening inside any root (tmux, ssh ControlMaster, gpg-agent,
   * an editor, the session bus at rung 2) would run code outside the
   * sandbox.  Every connect goes to the supervisor, which lets the sandbox
   * reach its own sockets and the host sockets the policy names
   * (add_unix_supervised_rules()).  Only a policy that opened unix sockets
   * explicitly (SBX_POLICY_UNIX_SOCKETS) skips it. */
  if (!options->allow_unix_sockets)
    add_unix_supervised_rules (r, enforces);

  for (guint i = 0; i < G_N_ELEMENTS (inet_families); i++)
    {
      int family = inet_families[i];

      if (options->rung == 2 && options->net_mode == SBX_NET_MODE_DENY)
        {
          /* Landlock covers TCP only: every inet socket is refused */
          DENY_ARGS (r, EACCES, "socket", ARG32_EQ (0, family));
          inet_denied = TRUE;
          continue;
        }
      /* Ports (a network.broad.v1 grant) run in the host network namespace
       * at both rungs. */
      if (options->net_mode != SBX_NET_MODE_OPEN
          && (options->rung == 2 || options->net_mode == SBX_NET_MODE_PORTS))
        {
          /* ports (and proxy): Landlock scopes TCP connects by port; UDP,
           * raw, SCTP (SOCK_SEQPACKET or IPPROTO_SCTP), DCCP and MPTCP
           * (IPPROTO_MPTCP with SOCK_STREAM) are outside it */
          DENY_ARGS (r, EACCES, "socket", ARG32_EQ (0, family), SCMP_A2 (SCMP_CMP_GE, IPPROTO_TCP + 1));
          for (int type = 0; type <= SOCK_TYPE_MASK_BITS; type++)
            if (type != SOCK_STREAM)
              DENY_ARGS (r, EACCES, "socket", ARG32_EQ (0, family), ARG_BITS (1, SOCK_TYPE_MASK_BITS, type));
          for (int proto = 1; proto < IPPROTO_TCP; proto++)
            DENY_ARGS (r, EACCES, "socket", ARG32_EQ (0, family), ARG32_EQ (2, proto));
          tcp_only = TRUE;
          continue;
        }
      /* open network, or rung 1 (private network namespace): raw and
       * packet sockets need CAP_NET_RAW and are never needed */
      DENY_ARGS (r, EPERM, "socket", ARG32_EQ (0, family), ARG_BITS (1, SOCK_TYPE_MASK_BITS, SOCK_RAW));
      DENY_ARGS (r, EPERM, "socket", ARG32_EQ (0, family), ARG_BITS (1, SOCK_TYPE_MASK_BITS, SOCK_PACKET));
    }
  /* Ports: Landlock refuses TCP bind(2) but never sees the implicit bind of
   * listen(2) on an unbound socket, which would accept connections from
   * anywhere on an ephemeral port.  listen() is refused whatever the
   * socket (seccomp cannot see a socket's family here). */
  if (options->net_mode == SBX_NET_MODE_PORTS)
    {
      DENY0 (r, EACCES, "listen");
      *enforces |= SBX_SECCOMP_ENFORCES_INET_LISTEN_DENIED;
    }
  if (inet_denied)
    *enforces |= SBX_SECCOMP_ENFORCES_INET_DENIED;
  if (tcp_only)
    *enforces |= SBX_SECCOMP_ENFORCES_INET_TCP_ONLY;
}

/* ------------------------------------------------------------------------- */
/* Export                                                                     */
/* ------------------------------------------------------------------------- */

/* libseccomp 2.5 exports only to a file descriptor. */
static gboolean
export_bpf (scmp_filter_ctx ctx, GByteArray *out, GError **error)
{
  int fd = memfd_create ("sbx-seccomp", MFD_CLOEXEC);
  int rc, saved;
  off_t size;

  if (fd < 0)
    {
      saved = errno;
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved), "memfd_create: %s", g_strerror (saved));
      return FALSE;
    }
  rc = seccomp_export_bpf (ctx, fd);
  if (rc < 0)
    {
      close (fd);
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (-rc), "seccomp_export_bpf: %s", g_strerror (-rc));
      return FALSE;
    }
  size = lseek (fd, 0, SEEK_END);
  if (size <= 0 || size % sizeof (struct sock_filter) != 0 || lseek (fd, 0, SEEK_SET) != 0)
    {
      close (fd);
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "seccomp_export_bpf: unexpected size %lld",
                   (long long) size);
      return FALSE;
    }
  g_byte_array_set_size (out, (guint) size);
  for (off_t done = 0; done < size;)
    {
      ssize_t n = TEMP_FAILURE_RETRY (pread (fd, out->data + done, (size_t) (size - done), done));

      if (n <= 0)
        {
          saved = n < 0 ? errno : EIO;
          close (fd);
          g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved), "read exported filter: %s",
                       g_strerror (saved));
          return FALSE;
        }
      done += n;
    }
  close (fd);
  return TRUE;
}


/* Highest system call number libseccomp knows for @arch in the unified
 * range. */
static int
max_known_syscall (uint32_t arch)
{
  int max = SBX_SECCOMP_UNIFIED_FIRST - 1;

  for (int nr = SBX_SECCOMP_UNIFIED_FIRST; nr < SBX_SECCOMP_PREAMBLE_END; nr++)
    {
      char *name = seccomp_syscall_resolve_num_arch (arch, nr);

      if (name != NULL)
        max = nr;
      free (name);
    }
  return max;
}

/* A tiny assembler for the hand-written preamble: jumps name labels, which
 * are resolved (and range-checked) at the end. */
#define L_NONE   (-1)
#define L_OUT    0
#define L_ENOSYS 1
#define L_EPERM  2
#define L_PERS   3
#define L_ARCH0  4   /* + architecture index */
#define L_COUNT  8

typedef struct
{
  GArray *insns;     /* struct sock_filter */
  GArray *targets;   /* int[3] per insn: jt label, jf label, ja label */
  int     labels[L_COUNT];
} Bpf;

static void
bpf_emit (Bpf *b, uint16_t code, uint32_t k, int jt, int jf)
{
  struct sock_filter insn = { code, 0, 0, k };
  int t[3] = { jt, jf, L_NONE };

  if (code == (BPF_JMP | BPF_JA | BPF_K))
    t[0] = L_NONE, t[1] = L_NONE, t[2] = jt;
  g_array_append_val (b->insns, insn);
  g_array_append_vals (b->targets, t, 3);
}

static gboolean
bpf_resolve (Bpf *b)
{
  for (guint pc = 0; pc < b->insns->len; pc++)
    {
      struct sock_filter *insn = &g_array_index (b->insns, struct sock_filter, pc);
      const int *t = &g_array_index (b->targets, int, pc * 3);

      for (int j = 0; j < 3; j++)
        {
          long off;

          if (t[j] == L_NONE)
            continue;
          off = (long) b->labels[t[j]] - (long) pc - 1;
          if (b->labels[t[j]] < 0 || off < 0 || (j < 2 && off > 255))
            return FALSE;
          if (j == 0)
            insn->jt = (uint8_t) off;
          else if (j == 1)
            insn->jf = (uint8_t) off;
          else
            insn->k = (uint32_t) off;
        }
    }
  return TRUE;
}

/* Offset of the low 32 bits of args[0] in struct seccomp_data. */
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define ARG0_LO (offsetof (struct seccomp_data, args) + 4)
#else
#define ARG0_LO (offsetof (struct seccomp_data, args))
#endif

/* The preamble, for each of our architectures:
 *  - system calls numbered past the last one libseccomp knows (and below
 *    SBX_SECCOMP_PREAMBLE_END) get ENOSYS;
 *  - personality(): flags that weaken the process's own hardening and
 *    persist across execve are refused with EPERM: READ_IMPLIES_EXEC (every
 *    readable mapping executable), ADDR_NO_RANDOMIZE (no ASLR),
 *    MMAP_PAGE_ZERO (page 0 mapped, turning kernel NULL dereferences into
 *    exploits).  personality(0xffffffff) only queries and stays allowed.  The
 *    kernel takes an unsigned int, so only the low 32 bits are tested.  (In
 *    libseccomp, which allows one comparison per argument, this took 93
 *    rules: "flag set and bit b clear" for every other bit b.)
 * Prepending is safe: libseccomp's program uses only forward jumps relative
 * to its own instructions and reloads what it tests. */
static gboolean
build_preamble (GArray *prog, const uint32_t *audit_arches, const int *personality_nrs, guint n_arches,
                uint32_t first_unknown)
{
  Bpf b = { prog, g_array_new (FALSE, FALSE, sizeof (int)), { 0 } };
  gboolean ok;

  for (int i = 0; i < L_COUNT; i++)
    b.labels[i] = -1;

  bpf_emit (&b, BPF_LD | BPF_W | BPF_ABS, offsetof (struct seccomp_data, arch), L_NONE, L_NONE);
  for (guint i = 0; i < n_arches; i++)
    bpf_emit (&b, BPF_JMP | BPF_JEQ | BPF_K, audit_arches[i], L_ARCH0 + (int) i, L_NONE);
  bpf_emit (&b, BPF_JMP | BPF_JA | BPF_K, 0, L_OUT, L_NONE);
  for (guint i = 0; i < n_arches; i++)
    {
      b.labels[L_ARCH0 + i] = (int) prog->len;
      bpf_emit (&b, BPF_LD | BPF_W | BPF_ABS, offsetof (struct seccomp_data, nr), L_NONE, L_NONE);
      bpf_emit (&b, BPF_JMP | BPF_JGE | BPF_K, SBX_SECCOMP_PREAMBLE_END, L_OUT, L_NONE);
      bpf_emit (&b, BPF_JMP | BPF_JGE | BPF_K, first_unknown, L_ENOSYS, L_NONE);
      bpf_emit (&b, BPF_JMP | BPF_JEQ | BPF_K, (uint32_t) personality_nrs[i], L_PERS, L_OUT);
    }
  b.labels[L_PERS] = (int) prog->len;
  bpf_emit (&b, BPF_LD | BPF_W | BPF_ABS, ARG0_LO, L_NONE, L_NONE);
  bpf_emit (&b, BPF_JMP | BPF_JEQ | BPF_K, 0xffffffffu, L_OUT, L_NONE);
  bpf_emit (&b, BPF_JMP | BPF_JSET | BPF_K, READ_IMPLIES_EXEC | ADDR_NO_RANDOMIZE | MMAP_PAGE_ZERO, L_EPERM, L_OUT);
  b.labels[L_ENOSYS] = (int) prog->len;
  bpf_emit (&b, BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA), L_NONE, L_NONE);
  b.labels[L_EPERM] = (int) prog->len;
  bpf_emit (&b, BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA), L_NONE, L_NONE);
  b.labels[L_OUT] = (int) prog->len;
  ok = bpf_resolve (&b);
  g_array_unref (b.targets);
  return ok;
}

static const char *
arch_name (uint32_t token)
{
  switch (token)
    {
    case SCMP_ARCH_X86_64:
      return "x86_64";
    case SCMP_ARCH_X86:
      return "x86";
    case SCMP_ARCH_AARCH64:
      return "aarch64";
    case SCMP_ARCH_ARM:
      return "arm";
    default:
      return "other";
    }
}

/* A filter context for @arch alone, with every rule. */
static gboolean
build_context (Rules                   *r,
               uint32_t                 arch,
               GArray                  *record,
               const SbxSeccompOptions *options,
               uint32_t                *enforces,
               GError                 **error)
{
  int rc;

  r->ctx = seccomp_init (SCMP_ACT_ALLOW);
  r->arch = arch;
  r->record = record;
  r->refused_mux = g_ptr_array_new ();
  r->error = error;
  if (r->ctx == NULL)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_FAILED, "seccomp_init failed");
      return FALSE;
    }
  /* Unknown architecture (and x32) kills the whole process, not a thread. */
  rc = seccomp_attr_set (r->ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
  if (rc == 0)
    rc = seccomp_attr_set (r->ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);   /* binary tree by syscall number */
  if (rc == 0 && arch != seccomp_arch_native ())
    {
      rc = seccomp_arch_add (r->ctx, arch);
      if (rc == 0)
        rc = seccomp_arch_remove (r->ctx, SCMP_ARCH_NATIVE);
    }
  if (rc < 0)
    {
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (-rc), "seccomp setup (%s): %s",
                   arch_name (arch), g_strerror (-rc));
      return FALSE;
    }

  /* Every rule below is added to every architecture's context by the same
   * code, and deny() refuses to add one that a multiplexer would bypass.
   * The multiplexers come first (see refuse_multiplexer()):
   *  - socketcall(2) (i386): its arguments are in memory, so the family and
   *    type of a socket cannot be checked there.  Refused with ENOSYS on
   *    both rungs; the direct socket calls (Linux 4.3+), which the filter
   *    inspects like the native ones, stay.  musl and glibc built for
   *    kernels >= 4.3 use them; an i386 glibc built for older kernels loses
   *    sockets (reported as compat-sockets);
   *  - ipc(2) (i386): every SysV call goes through it on older i386 libcs;
   *    at rung 2, where SysV IPC is refused, it is refused whole with the
   *    same errno.  At rung 1 (a private IPC namespace) no SysV rule exists
   *    and ipc(2) stays. */
  refuse_multiplexer (r, ENOSYS, "socketcall");
  if (options->rung == 2)
    refuse_multiplexer (r, EPERM, "ipc");

  for (guint i = 0; i < G_N_ELEMENTS (unconditional); i++)
    DENY0 (r, unconditional[i].err, unconditional[i].name);
  add_namespace_rules (r);
  add_device_rules (r);
  if (options->caller_terminal_shared)
    {
      add_terminal_rules (r);
      *enforces |= SBX_SECCOMP_ENFORCES_TERMINAL_SETTINGS_DENIED;
    }
  add_setid_rules (r, options);
  *enforces |= SBX_SECCOMP_ENFORCES_SETID_DENIED;
  if (options->landlock_abi >= 1 && options->landlock_abi < 3)
    {
      add_truncate_rules (r);
      *enforces |= SBX_SECCOMP_ENFORCES_TRUNCATE_DENIED;
    }
  if (options->rung == 2)
    {
      for (guint i = 0; i < G_N_ELEMENTS (sysv_calls); i++)
        DENY0 (r, EPERM, sysv_calls[i]);
      *enforces |= SBX_SECCOMP_ENFORCES_SYSV_IPC_DENIED;
      for (guint i = 0; i < G_N_ELEMENTS (fs_watch_calls); i++)
        DENY0 (r, fs_watch_calls[i].err, fs_watch_calls[i].name);
      *enforces |= SBX_SECCOMP_ENFORCES_FS_WATCH_DENIED;
    }
  add_socket_rules (r, options, enforces);
  g_clear_pointer (&r->refused_mux, g_ptr_array_unref);
  return !r->failed;
}

/* The options as the rules read them.  build_context() and the rule
 * helpers look at nothing else, so two options with the same normal form
 * get the same program, and the normal form is the key of the build-time
 * table.  A new field of SbxSeccompOptions must be normalised here and
 * enumerated by sbx-seccomp-gen.c; the assertion makes adding one without
 * doing so a build error. */
G_STATIC_ASSERT (sizeof (SbxSeccompOptions) == 5 * sizeof (uint32_t));

static void
normalize_options (const SbxSeccompOptions *options,
                   SbxSeccompOptions       *normal)
{
  memset (normal, 0, sizeof *normal);
  normal->rung = options->rung;
  normal->net_mode = options->net_mode;
  /* build_context() asks only whether 1 <= landlock_abi < 3 */
  normal->landlock_abi = options->landlock_abi >= 1 && options->landlock_abi < 3 ? 1 : 0;
  normal->allow_unix_sockets = options->allow_unix_sockets ? TRUE : FALSE;
  normal->caller_terminal_shared = options->caller_terminal_shared ? TRUE : FALSE;
}

static gboolean
check_options (const SbxSeccompOptions *options,
               GError                 **error)
{
  if (options->rung != 1 && options->rung != 2)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT, "seccomp options.rung: unknown rung %d",
                   options->rung);
      return FALSE;
    }
  if (options->net_mode > SBX_NET_MODE_PROXY)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT, "seccomp options.net_mode: unknown mode %u",
                   options->net_mode);
      return FALSE;
    }
  return TRUE;
}

SbxSeccompProgram *
sbx_seccomp_program_generate (const SbxSeccompOptions *options,
                              GError                 **error)
{
  g_autoptr(SbxSeccompProgram) program = NULL;
  g_autoptr(GByteArray) exported = NULL;
  g_autoptr(GArray) prog = NULL;
  g_autoptr(GString) arches = NULL;
  g_autoptr(GArray) rules = NULL;
  SbxSeccompOptions normal;
  uint32_t native, compat = 0;
  uint32_t audit_arches[2];
  int personality_nrs[2];
  guint n_audit = 0;
  uint32_t enforces = 0;
  int first_unknown;
  Rules native_rules = { 0 }, compat_rules = { 0 };
  int rc;

  g_return_val_if_fail (options != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!check_options (options, error))
    return NULL;
  normalize_options (options, &normal);

  native = seccomp_arch_native ();
  switch (native)
    {
    case SCMP_ARCH_X86_64:
      compat = SCMP_ARCH_X86;
      audit_arches[n_audit++] = AUDIT_ARCH_X86_64;
      audit_arches[n_audit++] = AUDIT_ARCH_I386;
      break;
    case SCMP_ARCH_AARCH64:
      compat = SCMP_ARCH_ARM;
      audit_arches[n_audit++] = AUDIT_ARCH_AARCH64;
      audit_arches[n_audit++] = AUDIT_ARCH_ARM;
      break;
    default:
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                   "seccomp: native architecture 0x%x is not supported by sbx (x86_64 and aarch64 are)", native);
      return NULL;
    }

  /* One context per architecture, built by the same code and merged before
   * export; the first pass records the rules (sbx_seccomp_program_rules()).
   * The same errno on every path: socketcall(2), which would merge socket()
   * rules of different errnos, is refused before any of them. */
  rules = g_array_new (FALSE, TRUE, sizeof (SbxSeccompRule));
  if (!build_context (&native_rules, native, rules, &normal, &enforces, error) ||
      !build_context (&compat_rules, compat, NULL, &normal, &enforces, error))
    {
      g_clear_pointer (&native_rules.refused_mux, g_ptr_array_unref);
      g_clear_pointer (&compat_rules.refused_mux, g_ptr_array_unref);
      if (native_rules.ctx != NULL)
        seccomp_release (native_rules.ctx);
      if (compat_rules.ctx != NULL)
        seccomp_release (compat_rules.ctx);
      return NULL;
    }
  rc = seccomp_merge (native_rules.ctx, compat_rules.ctx);   /* consumes compat on success */
  if (rc < 0)
    {
      seccomp_release (native_rules.ctx);
      seccomp_release (compat_rules.ctx);
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (-rc), "seccomp_merge: %s", g_strerror (-rc));
      return NULL;
    }

  exported = g_byte_array_new ();
  if (!export_bpf (native_rules.ctx, exported, error))
    {
      seccomp_release (native_rules.ctx);
      return NULL;
    }
  seccomp_release (native_rules.ctx);

  first_unknown = MAX (max_known_syscall (native), max_known_syscall (compat)) + 1;
  prog = g_array_new (FALSE, FALSE, sizeof (struct sock_filter));
  personality_nrs[0] = seccomp_syscall_resolve_name_arch (native, "personality");
  personality_nrs[1] = seccomp_syscall_resolve_name_arch (compat, "personality");
  if (personality_nrs[0] < 0 || personality_nrs[1] < 0 ||
      !build_preamble (prog, audit_arches, personality_nrs, n_audit, (uint32_t) first_unknown))
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_FAILED, "seccomp: cannot assemble the preamble");
      return NULL;
    }
  g_array_append_vals (prog, exported->data, exported->len / sizeof (struct sock_filter));
  if (prog->len > BPF_MAXINSNS)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "seccomp filter too long: %u instructions (max %d)",
                   prog->len, BPF_MAXINSNS);
      return NULL;
    }

  program = g_new0 (SbxSeccompProgram, 1);
  program->len = (unsigned short) prog->len;
  program->filter = (struct sock_filter *) (void *) g_array_free (g_steal_pointer (&prog), FALSE);
  program->enforces = enforces;
  program->n_rules = rules->len;
  program->rules = (SbxSeccompRule *) (void *) g_array_free (g_steal_pointer (&rules), FALSE);
  arches = g_string_new (arch_name (native));
  g_string_append_printf (arches, ",%s", arch_name (compat));
  program->arches = g_strdup (arches->str);
  program->native_arch = native;
  program->last_known = first_unknown - 1;
  return g_steal_pointer (&program);
}

/* What sbx_seccomp_program_new() checks before it uses a program of the
 * build-time table: a classic BPF program the kernel's own checks would
 * accept (length, every jump inside the program and forward, the last
 * instruction a return) whose first instruction loads the architecture
 * word, so the filter starts with the architecture dispatch.  The kernel
 * checks again when the child loads it; this catches a damaged table in
 * the parent, where the error can name it. */
gboolean
sbx_seccomp_check_filter (const struct sock_filter *filter,
                          size_t                    len,
                          GError                  **error)
{
  if (len == 0 || len > BPF_MAXINSNS)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "seccomp table: %zu instructions (1..%d)", len,
                   BPF_MAXINSNS);
      return FALSE;
    }
  if (filter[0].code != (BPF_LD | BPF_W | BPF_ABS) || filter[0].k != offsetof (struct seccomp_data, arch))
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_FAILED,
                           "seccomp table: the program does not start by loading the architecture");
      return FALSE;
    }
  if (BPF_CLASS (filter[len - 1].code) != BPF_RET)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_FAILED,
                           "seccomp table: the program does not end with a return");
      return FALSE;
    }
  for (size_t pc = 0; pc < len; pc++)
    {
      const struct sock_filter *insn = &filter[pc];

      if (BPF_CLASS (insn->code) != BPF_JMP)
        continue;
      if (BPF_OP (insn->code) == BPF_JA ? (size_t) insn->k >= len - pc - 1
                                        : (size_t) MAX (insn->jt, insn->jf) >= len - pc - 1)
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED,
                       "seccomp table: instruction %zu jumps past the end of the program", pc);
          return FALSE;
        }
    }
  return TRUE;
}

#ifndef SBX_SECCOMP_GENERATOR
/* The build-time table's program for @normal (normalised options), or NULL
 * when the table has none for it or was built for another architecture;
 * FALSE with @error when the table's program fails
 * sbx_seccomp_check_filter(). */
static gboolean
lookup_precompiled (const SbxSeccompOptions *normal,
                    SbxSeccompProgram      **out,
                    GError                 **error)
{
  *out = NULL;
  for (size_t i = 0; i < sbx_seccomp_n_precompiled; i++)
    {
      const SbxSeccompPrecompiled *entry = &sbx_seccomp_precompiled[i];
      SbxSeccompProgram *program;

      if (entry->rung != normal->rung || entry->net_mode != normal->net_mode ||
          entry->landlock_abi != normal->landlock_abi || entry->allow_unix_sockets != normal->allow_unix_sockets ||
          entry->caller_terminal_shared != normal->caller_terminal_shared)
        continue;
      if (entry->native_arch != seccomp_arch_native ())
        return TRUE;
      if (!sbx_seccomp_check_filter (entry->filter, entry->len, error))
        return FALSE;
      program = g_new0 (SbxSeccompProgram, 1);
      program->filter = (struct sock_filter *) entry->filter;
      program->len = entry->len;
      program->enforces = entry->enforces;
      program->arches = (char *) entry->arches;
      program->rules = g_new0 (SbxSeccompRule, MAX (entry->n_rules, 1));
      program->n_rules = entry->n_rules;
      for (size_t r = 0; r < entry->n_rules; r++)
        {
          const SbxSeccompPackedRule *packed = &entry->rules[r];
          SbxSeccompRule *rule = &program->rules[r];

          rule->name = sbx_seccomp_rule_names + packed->name;
          rule->err = packed->err;
          rule->multiplexer = packed->multiplexer != 0;
          rule->n_args = MIN (packed->n_args, G_N_ELEMENTS (rule->args));
          for (guint a = 0; a < G_N_ELEMENTS (rule->args); a++)
            {
              rule->args[a].arg = packed->args[a].arg;
              rule->args[a].op = packed->args[a].op;
              rule->args[a].mask = packed->args[a].mask;
              rule->args[a].value = packed->args[a].value;
            }
        }
      program->native_arch = entry->native_arch;
      program->last_known = entry->last_known;
      program->precompiled = TRUE;
      *out = program;
      return TRUE;
    }
  return TRUE;
}
#endif

gboolean
sbx_seccomp_program_is_precompiled (const SbxSeccompProgram *program)
{
  g_return_val_if_fail (program != NULL, FALSE);
  return program->precompiled;
}

void
sbx_seccomp_program_report (const SbxSeccompProgram *program,
                            const SbxLinuxReporter  *reporter)
{
  uint32_t enforces = program->enforces;

  {
    g_autofree char *detail =
      g_strdup_printf ("architectures %s%s, unknown architectures killed; %u BPF instructions; denies new "
                       "namespaces, the mount family, keyrings, bpf, perf_event_open, userfaultfd, ptrace and "
                       "process_vm_*, io_uring, file handles, module/kexec/reboot/swap/acct/quota/ioport calls, "
                       "TIOCSTI/TIOCLINUX, device mknod, set-id mode bits, personality flags that weaken "
                       "hardening, and system calls newer than %d (ENOSYS); every rule holds on every entry "
                       "path (i386 socketcall refused whole)",
                       program->arches, program->native_arch == SCMP_ARCH_X86_64 ? " (x32 killed)" : "",
                       program->len, program->last_known);

    sbx_linux_report (reporter, "seccomp", SBX_ABI_REPORT_ENFORCED, detail);
  }
  sbx_linux_report (reporter, "ptrace", SBX_ABI_REPORT_NARROWED,
                    "ptrace and process_vm_* return EPERM: debuggers and strace do not work inside the sandbox");
  sbx_linux_report (reporter, "socket-families", SBX_ABI_REPORT_NARROWED,
                    (enforces & SBX_SECCOMP_ENFORCES_UNIX_DENIED)
                    ? "only inet, inet6 and netlink-route sockets can be created (unix: socketpair only)"
                    : (enforces & SBX_SECCOMP_ENFORCES_UNIX_SUPERVISED)
                    ? "only unix (stream and seqpacket), inet, inet6 and netlink-route sockets can be created"
                    : "only unix, inet, inet6 and netlink-route sockets can be created");
  if (program->native_arch == SCMP_ARCH_X86_64)
    sbx_linux_report (reporter, "compat-sockets", SBX_ABI_REPORT_NARROWED,
                      "32-bit x86: socketcall(2) returns ENOSYS (its arguments are in memory a filter "
                      "cannot read); the direct socket system calls are filtered like the native ones, so "
                      "32-bit programs whose libc still uses socketcall cannot use sockets");
  if (enforces & SBX_SECCOMP_ENFORCES_UNIX_SUPERVISED)
    sbx_linux_report (reporter, SBX_ABI_FEATURE_UNIX_SOCKETS, SBX_ABI_REPORT_NARROWED,
                      "every connect(2) is decided by the supervisor (seccomp user notification; the "
                      "supervisor resolves the path in the sandbox's view and connects the socket itself): "
                      "the sandbox's own unix sockets are reachable (a pathname socket a sandbox process "
                      "bound, an abstract name in the sandbox's own network namespace or held by a sandbox "
                      "process); every host socket is refused (EACCES), a host daemon's socket inside the "
                      "workspace or a read-only root included. Unix datagram sockets are refused (EACCES: a "
                      "send address cannot be mediated). Landlock below ABI 9 "
                      "(LANDLOCK_ACCESS_FS_RESOLVE_UNIX) cannot do this itself. The profile member "
                      "\"unix-sockets\": \"allow\" opens every socket");
  if (enforces & SBX_SECCOMP_ENFORCES_UNIX_DENIED)
    sbx_linux_report (reporter, SBX_ABI_FEATURE_UNIX_SOCKETS, SBX_ABI_REPORT_NARROWED,
                      "socket(AF_UNIX) returns EACCES, socketpair() works: a host daemon's pathname socket "
                      "inside any root, even a read-only one, would accept a connection, and Landlock below "
                      "ABI 9 (LANDLOCK_ACCESS_FS_RESOLVE_UNIX) cannot mediate connect(). The profile member "
                      "\"unix-sockets\": \"allow\" opens them");
  /* With the supervisor, a set-gid chmod of a directory is performed by it
   * (add_setgid_dir_rule()): the entry says so, since a reader of "no file"
   * would take git init --shared=group for refused. */
  sbx_linux_report (reporter, "set-id-files", SBX_ABI_REPORT_ENFORCED,
                    (enforces & SBX_SECCOMP_ENFORCES_UNIX_SUPERVISED)
                    ? "no file gets a set-user-ID or set-group-ID bit from inside (chmod family, creating "
                      "open/openat/creat, mknod: EPERM; openat2: ENOSYS, its mode is in memory), whatever the "
                      "caller's uid; set-group-ID on a directory the target owns on a writable mount is set "
                      "by the supervisor (it grants nothing on exec: new entries inherit the group)"
                    : "no file or directory gets a set-user-ID or set-group-ID bit from inside (chmod family, "
                      "creating open/openat/creat, mknod: EPERM; openat2: ENOSYS, its mode is in memory), "
                      "whatever the caller's uid");
  if (enforces & SBX_SECCOMP_ENFORCES_SYSV_IPC_DENIED)
    sbx_linux_report (reporter, "sysv-ipc", SBX_ABI_REPORT_NARROWED,
                      "no IPC namespace at rung 2: every SysV shared memory, message queue and semaphore call "
                      "returns EPERM (ipc(2) too), so the host's segments of the same user stay out of reach; "
                      "POSIX shared memory (shm_open) works where the filesystem rules allow /dev/shm, the "
                      "host's at this rung");
  if (enforces & SBX_SECCOMP_ENFORCES_FS_WATCH_DENIED)
    sbx_linux_report (reporter, "fs-watch", SBX_ABI_REPORT_NARROWED,
                      "inotify and fanotify are refused at rung 2 (queues: ENOSYS, marks: EPERM): Landlock "
                      "does not mediate marks, which would report names in directories the target cannot "
                      "list; file watchers fall back to polling");
  if (enforces & SBX_SECCOMP_ENFORCES_INET_DENIED)
    sbx_linux_report (reporter, "network-sockets", SBX_ABI_REPORT_ENFORCED,
                      "every AF_INET/AF_INET6 socket is refused (EACCES), UDP included");
  else if (enforces & SBX_SECCOMP_ENFORCES_INET_TCP_ONLY)
    sbx_linux_report (reporter, "network-sockets", SBX_ABI_REPORT_NARROWED,
                      "only plain TCP sockets: UDP (DNS over UDP included), raw, SCTP, DCCP and MPTCP are "
                      "refused (EACCES)");
  if (enforces & SBX_SECCOMP_ENFORCES_INET_LISTEN_DENIED)
    sbx_linux_report (reporter, "listen", SBX_ABI_REPORT_NARROWED,
                      "listen(2) returns EACCES for every socket (unix ones too): with TCP ports open, "
                      "a listen() on an unbound socket would bind an ephemeral port Landlock never sees");
  if (enforces & SBX_SECCOMP_ENFORCES_TRUNCATE_DENIED)
    sbx_linux_report (reporter, "truncate", SBX_ABI_REPORT_NARROWED,
                      "Landlock ABI < 3: truncate(2), openat2() and open(O_TRUNC) without write access are "
                      "refused");
}

SbxSeccompProgram *
sbx_seccomp_program_new (const SbxSeccompOptions *options,
                         const SbxLinuxReporter  *reporter,
                         GError                 **error)
{
  g_autoptr(SbxSeccompProgram) program = NULL;

  g_return_val_if_fail (options != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!check_options (options, error))
    return NULL;
#ifndef SBX_SECCOMP_GENERATOR
  {
    SbxSeccompOptions normal;

    normalize_options (options, &normal);
    if (!lookup_precompiled (&normal, &program, error))
      return NULL;
  }
#endif
  if (program == NULL)
    program = sbx_seccomp_program_generate (options, error);
  if (program == NULL)
    return NULL;
  sbx_seccomp_program_report (program, reporter);
  return g_steal_pointer (&program);
}
