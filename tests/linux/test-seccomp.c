/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The seccomp program (plugins/linux/sbx-seccomp.c).
 *
 * Two kinds of proof:
 *  - live: a forked child loads the filter and makes the call; the same call
 *    in a child without the filter is the positive control and must not give
 *    the filter's answer (arguments are chosen so the kernel fails early with
 *    EBADF/EFAULT/... when unfiltered);
 *  - exact: the exported classic BPF program is run through a small
 *    interpreter for every denied system call on every architecture of the
 *    filter (including ones this machine cannot execute), and for the calls
 *    that must stay allowed.
 * A live row whose control happens to give the same errno under this uid
 * (e.g. EPERM for an unprivileged caller) is logged; its exact row still
 * checks it, and the root run of the suite checks it live.
 *
 * These are the cases of one module, the seccomp program (sbx-seccomp.c): one GTest
 * binary per concept, so it is over a thousand lines.
 */
#include "linux-test-util.h"
#include "sbx-landlock-compat.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <pty.h>
#include <sys/personality.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/keyctl.h>
#include <linux/netlink.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <unistd.h>
#include <gio/gio.h>

#ifndef IPPROTO_MPTCP
#define IPPROTO_MPTCP 262
#endif
#ifndef TIOCLINUX
#define TIOCLINUX 0x541C
#endif
#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif
/* The kernel's struct termios2 and its requests (asm/termbits.h, which
 * cannot be included next to <termios.h>), by value. */
typedef struct
{
  tcflag_t c_iflag, c_oflag, c_cflag, c_lflag;
  cc_t     c_line;
  cc_t     c_cc[19];
  speed_t  c_ispeed, c_ospeed;
} KernelTermios2;
G_STATIC_ASSERT (sizeof (KernelTermios2) == 44);
#define K_TCGETS2  0x802c542aUL
#define K_TCSETS2  0x402c542bUL
#define K_TCSETSW2 0x402c542cUL
#define K_TCSETSF2 0x402c542dUL

static SbxSeccompProgram *
program_for_shape (int rung, uint32_t net_mode, int landlock_abi, gboolean allow_unix, gboolean terminal,
                   TestReport *report)
{
  SbxSeccompOptions options = { rung, net_mode, landlock_abi, allow_unix, terminal };
  SbxLinuxReporter reporter;
  g_autoptr(GError) error = NULL;
  SbxSeccompProgram *program;

  test_report_init (report, &reporter);
  program = sbx_seccomp_program_new (&options, &reporter, &error);
  g_assert_no_error (error);
  g_assert_nonnull (program);
  test_report_dump (report);
  return program;
}

static SbxSeccompProgram *
program_for_unix (int rung, uint32_t net_mode, int landlock_abi, gboolean allow_unix, TestReport *report)
{
  return program_for_shape (rung, net_mode, landlock_abi, allow_unix, FALSE, report);
}

static SbxSeccompProgram *
program_for (int rung, uint32_t net_mode, int landlock_abi, TestReport *report)
{
  return program_for_unix (rung, net_mode, landlock_abi, FALSE, report);
}

static gboolean
need_seccomp (void)
{
  if (!sbx_seccomp_available ())
    {
      g_test_skip ("seccomp filters are not available on this kernel");
      return FALSE;
    }
  return TRUE;
}

/* ------------------------------------------------------------------------- */
/* A classic BPF interpreter (the subset seccomp allows)                      */
/* ------------------------------------------------------------------------- */

static uint32_t
bpf_run (const struct sock_filter *f, size_t len, const struct seccomp_data *d)
{
  uint32_t a = 0, x = 0, mem[BPF_MEMWORDS] = { 0 };

  for (size_t pc = 0; pc < len; pc++)
    {
      const struct sock_filter *i = &f[pc];
      uint32_t src = BPF_SRC (i->code) == BPF_X ? x : i->k;

      switch (BPF_CLASS (i->code))
        {
        case BPF_LD:
          if (i->code == (BPF_LD | BPF_W | BPF_ABS))
            {
              g_assert_cmpuint (i->k % 4, ==, 0);
              g_assert_cmpuint (i->k, <, sizeof *d);
              memcpy (&a, (const char *) d + i->k, 4);
            }
          else if (i->code == (BPF_LD | BPF_IMM))
            a = i->k;
          else if (i->code == (BPF_LD | BPF_MEM))
            a = mem[i->k];
          else
            g_error ("unsupported BPF_LD 0x%x", i->code);
          break;
        case BPF_LDX:
          if (i->code == (BPF_LDX | BPF_IMM))
            x = i->k;
          else if (i->code == (BPF_LDX | BPF_MEM))
            x = mem[i->k];
          else
            g_error ("unsupported BPF_LDX 0x%x", i->code);
          break;
        case BPF_ST:
          mem[i->k] = a;
          break;
        case BPF_STX:
          mem[i->k] = x;
          break;
        case BPF_ALU:
          switch (BPF_OP (i->code))
            {
            case BPF_AND: a &= src; break;
            case BPF_OR: a |= src; break;
            case BPF_ADD: a += src; break;
            case BPF_SUB: a -= src; break;
            case BPF_LSH: a <<= src; break;
            case BPF_RSH: a >>= src; break;
            case BPF_NEG: a = -a; break;
            default: g_error ("unsupported BPF_ALU 0x%x", i->code);
            }
          break;
        case BPF_JMP:
          switch (BPF_OP (i->code))
            {
            case BPF_JA: pc += i->k; break;
            case BPF_JEQ: pc += a == src ? i->jt : i->jf; break;
            case BPF_JGT: pc += a > src ? i->jt : i->jf; break;
            case BPF_JGE: pc += a >= src ? i->jt : i->jf; break;
            case BPF_JSET: pc += (a & src) ? i->jt : i->jf; break;
            default: g_error ("unsupported BPF_JMP 0x%x", i->code);
            }
          break;
        case BPF_RET:
          return BPF_RVAL (i->code) == BPF_A ? a : i->k;
        case BPF_MISC:
          if (BPF_MISCOP (i->code) == BPF_TAX)
            x = a;
          else
            a = x;
          break;
        default:
          g_error ("unsupported BPF class 0x%x", i->code);
        }
    }
  g_error ("BPF program fell off its end");
  return 0;
}

typedef struct
{
  uint32_t    audit;
  uint32_t    token;   /* libseccomp */
  const char *name;
} Arch;

static const Arch *
filter_arches (guint *n)
{
  static const Arch x86[] = {
    { AUDIT_ARCH_X86_64, SCMP_ARCH_X86_64, "x86_64" },
    { AUDIT_ARCH_I386, SCMP_ARCH_X86, "x86" },
  };
  static const Arch arm[] = {
    { AUDIT_ARCH_AARCH64, SCMP_ARCH_AARCH64, "aarch64" },
    { AUDIT_ARCH_ARM, SCMP_ARCH_ARM, "arm" },
  };

  *n = 2;
  return seccomp_arch_native () == SCMP_ARCH_X86_64 ? x86 : arm;
}

static uint32_t
run_filter (const SbxSeccompProgram *program, uint32_t audit, int nr,
            uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3)
{
  struct seccomp_data d = { 0 };
  size_t len;
  const struct sock_filter *f = sbx_seccomp_program_filter (program, &len);

  d.nr = nr;
  d.arch = audit;
  d.args[0] = a0;
  d.args[1] = a1;
  d.args[2] = a2;
  d.args[3] = a3;
  return bpf_run (f, len, &d);
}

#define ERR(e) (SECCOMP_RET_ERRNO | (e))
#define ALLOW  SECCOMP_RET_ALLOW
#define NOTIFY SECCOMP_RET_USER_NOTIF
#define ANY_ERRNO 0xffffffffu   /* some SECCOMP_RET_ERRNO: several rules match */

static gboolean
action_matches (uint32_t got, uint32_t expected)
{
  if (expected == ANY_ERRNO)
    return (got & SECCOMP_RET_ACTION_FULL) == SECCOMP_RET_ERRNO;
  return got == expected;
}

typedef struct
{
  const char *name;
  uint64_t    a0, a1, a2;
  uint32_t    action;
} ExactRow;

/* Verdicts of the default program (rung 2, network deny, Landlock ABI >= 3)
 * for every architecture where the system call exists. */
static const ExactRow exact_rows[] = {
  { "setns", 0, 0, 0, ERR (EPERM) },
  { "clone3", 0, 0, 0, ERR (ENOSYS) },
  { "mount", 0, 0, 0, ERR (EPERM) },
  { "umount", 0, 0, 0, ERR (EPERM) },
  { "umount2", 0, 0, 0, ERR (EPERM) },
  { "pivot_root", 0, 0, 0, ERR (EPERM) },
  { "move_mount", 0, 0, 0, ERR (EPERM) },
  { "open_tree", 0, 0, 0, ERR (EPERM) },
  { "fsopen", 0, 0, 0, ERR (EPERM) },
  { "fsmount", 0, 0, 0, ERR (EPERM) },
  { "fsconfig", 0, 0, 0, ERR (EPERM) },
  { "fspick", 0, 0, 0, ERR (EPERM) },
  { "mount_setattr", 0, 0, 0, ERR (EPERM) },
  { "chroot", 0, 0, 0, ERR (EPERM) },
  { "keyctl", 0, 0, 0, ERR (EPERM) },
  { "add_key", 0, 0, 0, ERR (EPERM) },
  { "request_key", 0, 0, 0, ERR (EPERM) },
  { "bpf", 0, 0, 0, ERR (EPERM) },
  { "perf_event_open", 0, 0, 0, ERR (EPERM) },
  { "userfaultfd", 0, 0, 0, ERR (EPERM) },
  { "ptrace", 0, 0, 0, ERR (EPERM) },
  { "process_vm_readv", 0, 0, 0, ERR (EPERM) },
  { "process_vm_writev", 0, 0, 0, ERR (EPERM) },
  { "pidfd_getfd", 0, 0, 0, ERR (EPERM) },
  { "kcmp", 0, 0, 0, ERR (EPERM) },
  { "io_uring_setup", 0, 0, 0, ERR (EPERM) },
  { "io_uring_enter", 0, 0, 0, ERR (EPERM) },
  { "io_uring_register", 0, 0, 0, ERR (EPERM) },
  { "open_by_handle_at", 0, 0, 0, ERR (EPERM) },
  { "name_to_handle_at", 0, 0, 0, ERR (EPERM) },
  { "init_module", 0, 0, 0, ERR (EPERM) },
  { "finit_module", 0, 0, 0, ERR (EPERM) },
  { "delete_module", 0, 0, 0, ERR (EPERM) },
  { "kexec_load", 0, 0, 0, ERR (EPERM) },
  { "kexec_file_load", 0, 0, 0, ERR (EPERM) },
  { "reboot", 0, 0, 0, ERR (EPERM) },
  { "swapon", 0, 0, 0, ERR (EPERM) },
  { "swapoff", 0, 0, 0, ERR (EPERM) },
  { "acct", 0, 0, 0, ERR (EPERM) },
  { "quotactl", 0, 0, 0, ERR (EPERM) },
  { "quotactl_fd", 0, 0, 0, ERR (EPERM) },
  { "iopl", 0, 0, 0, ERR (EPERM) },
  { "ioperm", 0, 0, 0, ERR (EPERM) },
  { "syslog", 0, 0, 0, ERR (EPERM) },
  { "lookup_dcookie", 0, 0, 0, ERR (EPERM) },
  { "vhangup", 0, 0, 0, ERR (EPERM) },
  { "nfsservctl", 0, 0, 0, ERR (EPERM) },
  { "uselib", 0, 0, 0, ERR (EPERM) },
  { "vm86", 0, 0, 0, ERR (EPERM) },
  { "vm86old", 0, 0, 0, ERR (EPERM) },
  { "modify_ldt", 0, 0, 0, ERR (EPERM) },
  /* namespaces by flag */
  { "clone", CLONE_NEWUSER | SIGCHLD, 0, 0, ERR (EPERM) },
  { "clone", CLONE_NEWNET, 0, 0, ERR (EPERM) },
  { "clone", CLONE_NEWNS, 0, 0, ERR (EPERM) },
  { "clone", CLONE_NEWPID, 0, 0, ERR (EPERM) },
  { "clone", CLONE_NEWIPC, 0, 0, ERR (EPERM) },
  { "clone", CLONE_NEWUTS, 0, 0, ERR (EPERM) },
  { "clone", CLONE_NEWCGROUP, 0, 0, ERR (EPERM) },
  { "clone", SIGCHLD, 0, 0, ALLOW },
  { "clone", CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM |
    CLONE_SETTLS | CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID, 0, 0, ALLOW },
  { "unshare", CLONE_NEWUSER, 0, 0, ERR (EPERM) },
  { "unshare", CLONE_NEWTIME, 0, 0, ERR (EPERM) },
  { "unshare", CLONE_NEWNS | CLONE_FS, 0, 0, ERR (EPERM) },
  { "unshare", CLONE_FILES | CLONE_FS, 0, 0, ALLOW },
  /* personality */
  { "personality", READ_IMPLIES_EXEC, 0, 0, ERR (EPERM) },
  { "personality", ADDR_NO_RANDOMIZE, 0, 0, ERR (EPERM) },
  { "personality", MMAP_PAGE_ZERO, 0, 0, ERR (EPERM) },
  { "personality", READ_IMPLIES_EXEC | 0x80000000u, 0, 0, ERR (EPERM) },
  { "personality", 0xfffffffeu, 0, 0, ERR (EPERM) },
  { "personality", 0x7fffffffu, 0, 0, ERR (EPERM) },
  { "personality", 0xffffffffu & ~(uint64_t) READ_IMPLIES_EXEC, 0, 0, ERR (EPERM) },
  { "personality", 0xffffffffu, 0, 0, ALLOW },
  { "personality", 0x1ffffffffULL, 0, 0, ALLOW },
  { "personality", PER_LINUX, 0, 0, ALLOW },
  { "personality", PER_LINUX32, 0, 0, ALLOW },
  /* terminals: the request's upper half is ignored by the kernel */
  { "ioctl", 0, TIOCSTI, 0, ERR (EPERM) },
  { "ioctl", 0, TIOCSTI | (1ULL << 32), 0, ERR (EPERM) },
  { "ioctl", 0, TIOCLINUX, 0, ERR (EPERM) },
  { "ioctl", 0, TCGETS, 0, ALLOW },
  { "ioctl", 0, TIOCSWINSZ, 0, ALLOW },
  /* device nodes */
  { "mknodat", AT_FDCWD, 0, S_IFCHR | 0600, ERR (EPERM) },
  { "mknodat", AT_FDCWD, 0, S_IFBLK | 0600, ERR (EPERM) },
  { "mknodat", AT_FDCWD, 0, S_IFIFO | 0600, ALLOW },
  { "mknodat", AT_FDCWD, 0, S_IFREG | 0600, ALLOW },
  { "mknod", 0, S_IFCHR | 0600, 0, ERR (EPERM) },
  /* sockets (rung 2, network deny) */
  { "socket", AF_INET, SOCK_STREAM, 0, ERR (EACCES) },
  { "socket", AF_INET6, SOCK_DGRAM, 0, ERR (EACCES) },
  /* the kernel truncates the family to int: this is AF_INET */
  { "socket", AF_INET | (1ULL << 32), SOCK_STREAM, 0, ANY_ERRNO },
  /* unix sockets: stream and seqpacket only; every connect to the supervisor */
  { "socket", AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ALLOW },
  { "socket", AF_UNIX, SOCK_SEQPACKET, 0, ALLOW },
  { "socket", AF_UNIX, SOCK_DGRAM, 0, ERR (EACCES) },
  { "socket", AF_UNIX, SOCK_RAW, 0, ERR (EACCES) },
  { "socketpair", AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, ERR (EACCES) },
  { "connect", 3, 0, 0, NOTIFY },
  { "socket", AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE, ALLOW },
  { "socket", AF_NETLINK, SOCK_RAW, NETLINK_SOCK_DIAG, ERR (EPROTONOSUPPORT) },
  { "socket", AF_NETLINK, SOCK_RAW, NETLINK_KOBJECT_UEVENT, ERR (EPROTONOSUPPORT) },
  { "socket", AF_PACKET, SOCK_RAW, 0, ERR (EAFNOSUPPORT) },
  { "socket", AF_VSOCK, SOCK_STREAM, 0, ERR (EAFNOSUPPORT) },
  { "socket", AF_BLUETOOTH, SOCK_STREAM, 0, ERR (EAFNOSUPPORT) },
  { "socket", AF_ALG, SOCK_SEQPACKET, 0, ERR (EAFNOSUPPORT) },
  { "socket", 63, SOCK_STREAM, 0, ERR (EAFNOSUPPORT) },
  { "socket", 4096, SOCK_STREAM, 0, ERR (EAFNOSUPPORT) },
  { "socketpair", AF_UNIX, SOCK_STREAM, 0, ALLOW },
  /* everyday calls */
  { "read", 0, 0, 0, ALLOW },
  { "openat", AT_FDCWD, 0, O_RDONLY | O_TRUNC, ALLOW },
  { "truncate", 0, 0, 0, ALLOW },
  /* openat2 carries its mode in memory (set-id bits): ENOSYS for every policy */
  { "openat2", 0, 0, 0, ERR (ENOSYS) },
  /* set-id mode bits, both rungs */
  { "chmod", 0, S_ISUID | 0755, 0, ERR (EPERM) },
  { "chmod", 0, S_ISGID | 0755, 0, NOTIFY },   /* a directory: the supervisor decides */
  { "chmod", 0, S_ISUID | S_ISGID | 0755, 0, ERR (EPERM) },
  { "chmod", 0, 0755 | 01000, 0, ALLOW },
  { "fchmod", 3, 06755, 0, ERR (EPERM) },
  { "fchmod", 3, 0644, 0, ALLOW },
  { "fchmodat", AT_FDCWD, 0, S_ISGID | 0700, NOTIFY },
  { "fchmodat", AT_FDCWD, 0, S_ISUID | S_ISGID | 0700, ERR (EPERM) },
  { "fchmodat", AT_FDCWD, 0, 0700, ALLOW },
  { "fchmodat2", AT_FDCWD, 0, S_ISUID, ERR (EPERM) },
  { "fchmodat2", AT_FDCWD, 0, 0777, ALLOW },
  { "creat", 0, S_ISUID | 0755, 0, ERR (EPERM) },
  { "creat", 0, 0755, 0, ALLOW },
  { "open", 0, O_WRONLY | O_CREAT, S_ISUID | 0755, ERR (EPERM) },
  { "open", 0, O_WRONLY | O_CREAT | O_EXCL, S_ISGID | 0755, ERR (EPERM) },
  { "open", 0, O_RDWR | O_TMPFILE, S_ISUID | 0700, ERR (EPERM) },
  { "open", 0, O_WRONLY | O_CREAT, 0755, ALLOW },
  { "open", 0, O_RDONLY, 06755, ALLOW },   /* not creating: the mode is ignored */
  { "mknodat", AT_FDCWD, 0, S_IFREG | S_ISUID | 0755, ERR (EPERM) },
  { "mknod", 0, S_IFREG | S_ISGID | 0755, 0, ERR (EPERM) },
  /* rung 2: SysV IPC (ipc(2) on i386) and inotify/fanotify */
  { "shmget", 0, 4096, 0600, ERR (EPERM) },
  { "shmat", 0, 0, 0, ERR (EPERM) },
  { "msgget", 0, 0, 0, ERR (EPERM) },
  { "semget", 0, 1, 0, ERR (EPERM) },
  { "semop", 0, 0, 0, ERR (EPERM) },
  { "ipc", 23, 0, 4096, ERR (EPERM) },
  { "inotify_init1", 0, 0, 0, ERR (ENOSYS) },
  { "inotify_add_watch", 3, 0, 0, ERR (EPERM) },
  { "fanotify_init", 0, 0, 0, ERR (ENOSYS) },
  { "fanotify_mark", 3, 0, 0, ERR (EPERM) },
  /* socketcall (i386): refused whole, every sub-call */
  { "socketcall", 1, 0, 0, ERR (ENOSYS) },
  { "socketcall", 8, 0, 0, ERR (ENOSYS) },
  /* POSIX shared memory is a file */
  { "memfd_create", 0, 0, 0, ALLOW },
  { "execve", 0, 0, 0, ALLOW },
  { "landlock_create_ruleset", 0, 0, 0, ALLOW },
  { "seccomp", 0, 0, 0, ALLOW },
  { "getpid", 0, 0, 0, ALLOW },
};

/* System calls of our architectures that only x86 has: port I/O, the LDT,
 * and i386's socketcall and ipc multiplexers (ARM EABI has direct socket
 * and SysV calls only).  Absent from an aarch64 filter by nature, so a row
 * for them checks x86 filters only (aarch64 CI phase). */
static gboolean
x86_only_syscall (const char *name)
{
  return strcmp (name, "iopl") == 0 || strcmp (name, "ioperm") == 0 || strcmp (name, "modify_ldt") == 0
         || strcmp (name, "socketcall") == 0 || strcmp (name, "ipc") == 0;
}

static gboolean
filter_has_x86 (const Arch *arches,
                guint       n_arches)
{
  for (guint a = 0; a < n_arches; a++)
    if (arches[a].audit == AUDIT_ARCH_X86_64 || arches[a].audit == AUDIT_ARCH_I386)
      return TRUE;
  return FALSE;
}

static void
test_exact_default (void)
{
  g_autoptr(SbxSeccompProgram) program = NULL;
  TestReport report;
  const Arch *arches;
  guint n_arches;
  guint checked = 0;

  program = program_for (2, SBX_NET_MODE_DENY, 7, &report);
  arches = filter_arches (&n_arches);
  for (guint i = 0; i < G_N_ELEMENTS (exact_rows); i++)
    {
      const ExactRow *row = &exact_rows[i];
      gboolean somewhere = FALSE;

      for (guint a = 0; a < n_arches; a++)
        {
          int nr = seccomp_syscall_resolve_name_arch (arches[a].token, row->name);
          uint32_t got;

          if (nr < 0)
            continue;
          somewhere = TRUE;
          uint32_t want = row->action;

          got = run_filter (program, arches[a].audit, nr, row->a0, row->a1, row->a2, 0);
          /* i386 answers every socket() denial with EACCES (sbx-seccomp.c:
           * its socketcall makes errnos collide); ARM compat has a real
           * socket(2) with the native answers, so its rows are checked as
           * they stand. */
          if (arches[a].audit == AUDIT_ARCH_I386 && strcmp (row->name, "socket") == 0
              && (want & SECCOMP_RET_ACTION_FULL) == SECCOMP_RET_ERRNO)
            want = ERR (EACCES);
          if (!action_matches (got, want))
            g_error ("%s(%#" G_GINT64_MODIFIER "x, %#" G_GINT64_MODIFIER "x, %#" G_GINT64_MODIFIER "x) on %s: "
                     "action 0x%x, expected 0x%x", row->name, row->a0, row->a1, row->a2, arches[a].name, got,
                     want);
          checked++;
        }
      if (!somewhere && strcmp (row->name, "vm86") != 0 && strcmp (row->name, "vm86old") != 0 &&
          strcmp (row->name, "umount") != 0 && !(x86_only_syscall (row->name) && !filter_has_x86 (arches, n_arches)))
        g_error ("%s exists on no architecture of the filter", row->name);
    }
  g_test_message ("%u verdicts checked", checked);
  test_report_clear (&report);
}

static void
test_exact_arch_guards (void)
{
  g_autoptr(SbxSeccompProgram) program = NULL;
  TestReport report;
  const Arch *arches;
  guint n;
  const char *detail = NULL;

  program = program_for (2, SBX_NET_MODE_DENY, 7, &report);
  arches = filter_arches (&n);

  /* an architecture the filter does not list is killed */
  g_assert_cmphex (run_filter (program, AUDIT_ARCH_MIPS, 1, 0, 0, 0, 0), ==, SECCOMP_RET_KILL_PROCESS);
  g_assert_cmphex (run_filter (program, AUDIT_ARCH_PPC64LE, 1, 0, 0, 0, 0), ==, SECCOMP_RET_KILL_PROCESS);
  if (seccomp_arch_native () == SCMP_ARCH_X86_64)
    {
      /* x32 shares AUDIT_ARCH_X86_64 and is told apart by __X32_SYSCALL_BIT */
      g_assert_cmphex (run_filter (program, AUDIT_ARCH_X86_64, 0x40000000 | 39, 0, 0, 0, 0), ==,
                       SECCOMP_RET_KILL_PROCESS);
      g_assert_cmphex (run_filter (program, AUDIT_ARCH_X86_64, 0x40000000 | 41, AF_INET, 0, 0, 0), ==,
                       SECCOMP_RET_KILL_PROCESS);
      g_assert_nonnull (strstr (sbx_seccomp_program_arches (program), "x86_64"));
      g_assert_nonnull (strstr (sbx_seccomp_program_arches (program), "x86"));
      g_assert_cmpuint (test_report_status (&report, "seccomp", &detail), ==, SBX_ABI_REPORT_ENFORCED);
      g_assert_nonnull (strstr (detail, "x32 killed"));
    }
  /* system calls newer than libseccomp's table: ENOSYS on every listed
   * architecture (open_tree_attr of the mount family is one), but not past
   * the unified range (arm's private calls) */
  for (guint a = 0; a < n; a++)
    {
      g_assert_cmphex (run_filter (program, arches[a].audit, 467, 0, 0, 0, 0), ==, ERR (ENOSYS));
      g_assert_cmphex (run_filter (program, arches[a].audit, 1023, 0, 0, 0, 0), ==, ERR (ENOSYS));
      g_assert_cmphex (run_filter (program, arches[a].audit, 0xf0005, 0, 0, 0, 0), ==, ALLOW);
    }
  test_report_clear (&report);
}

typedef struct
{
  int      rung;
  uint32_t mode;
  int      family;
  int      type;
  int      proto;
  uint32_t action;
} SocketRow;

static void
test_exact_socket_matrix (void)
{
  static const SocketRow rows[] = {
    /* rung 2, ports: TCP only */
    { 2, SBX_NET_MODE_PORTS, AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, ALLOW },
    { 2, SBX_NET_MODE_PORTS, AF_INET6, SOCK_STREAM, IPPROTO_TCP, ALLOW },
    { 2, SBX_NET_MODE_PORTS, AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0, ERR (EACCES) },
    { 2, SBX_NET_MODE_PORTS, AF_INET, SOCK_DGRAM, IPPROTO_ICMP, ERR (EACCES) },
    { 2, SBX_NET_MODE_PORTS, AF_INET, SOCK_RAW, IPPROTO_TCP, ERR (EACCES) },
    { 2, SBX_NET_MODE_PORTS, AF_INET, SOCK_STREAM, IPPROTO_MPTCP, ERR (EACCES) },
    { 2, SBX_NET_MODE_PORTS, AF_INET, SOCK_STREAM, IPPROTO_SCTP, ERR (EACCES) },
    { 2, SBX_NET_MODE_PORTS, AF_INET6, SOCK_SEQPACKET, IPPROTO_SCTP, ERR (EACCES) },
    { 2, SBX_NET_MODE_PORTS, AF_INET6, SOCK_DCCP, 0, ERR (EACCES) },
    { 2, SBX_NET_MODE_PORTS, AF_INET, SOCK_STREAM, IPPROTO_UDP, ERR (EACCES) },
    { 2, SBX_NET_MODE_PORTS, AF_UNIX, SOCK_STREAM, 0, ALLOW },
    { 2, SBX_NET_MODE_PROXY, AF_INET, SOCK_DGRAM, 0, ERR (EACCES) },
    /* rung 2, open: everything but raw/packet */
    { 2, SBX_NET_MODE_OPEN, AF_INET, SOCK_DGRAM, 0, ALLOW },
    { 2, SBX_NET_MODE_OPEN, AF_INET6, SOCK_DGRAM, IPPROTO_ICMPV6, ALLOW },
    { 2, SBX_NET_MODE_OPEN, AF_INET, SOCK_STREAM, IPPROTO_MPTCP, ALLOW },
    { 2, SBX_NET_MODE_OPEN, AF_INET, SOCK_RAW, IPPROTO_ICMP, ERR (EPERM) },
    { 2, SBX_NET_MODE_OPEN, AF_INET, SOCK_PACKET, 0, ERR (EPERM) },
    { 2, SBX_NET_MODE_OPEN, AF_UNIX, SOCK_DGRAM, 0, ERR (EACCES) },
    /* rung 1: the private network namespace is the boundary */
    { 1, SBX_NET_MODE_DENY, AF_INET, SOCK_DGRAM, 0, ALLOW },
    { 1, SBX_NET_MODE_DENY, AF_INET, SOCK_STREAM, 0, ALLOW },
    { 1, SBX_NET_MODE_DENY, AF_INET6, SOCK_RAW, 0, ERR (EPERM) },
    /* unix sockets: stream and seqpacket only, on both rungs, unless the policy opens them */
    { 1, SBX_NET_MODE_DENY, AF_UNIX, SOCK_STREAM, 0, ALLOW },
    { 1, SBX_NET_MODE_OPEN, AF_UNIX, SOCK_DGRAM, 0, ERR (EACCES) },
    { 1, SBX_NET_MODE_DENY, AF_PACKET, SOCK_RAW, 0, ERR (EAFNOSUPPORT) },
    { 1, SBX_NET_MODE_OPEN, AF_NETLINK, SOCK_RAW, NETLINK_AUDIT, ERR (EPROTONOSUPPORT) },
  };
  const Arch *arches;
  guint n;

  arches = filter_arches (&n);
  for (guint i = 0; i < G_N_ELEMENTS (rows); i++)
    {
      g_autoptr(SbxSeccompProgram) program = NULL;
      TestReport report;
      int nr = seccomp_syscall_resolve_name_arch (arches[0].token, "socket");
      uint32_t got;

      program = program_for (rows[i].rung, rows[i].mode, 7, &report);
      got = run_filter (program, arches[0].audit, nr, (uint64_t) rows[i].family, (uint64_t) rows[i].type,
                        (uint64_t) rows[i].proto, 0);
      if (got != rows[i].action)
        g_error ("row %u: rung %d mode %u socket(%d, %#x, %d): action 0x%x, expected 0x%x", i, rows[i].rung,
                 rows[i].mode, rows[i].family, rows[i].type, rows[i].proto, got, rows[i].action);
      test_report_clear (&report);
    }
}

/* ---- every rule of the program, on every architecture ---- */

static gboolean
rule_matches (const SbxSeccompRule *rule, const uint64_t *args)
{
  for (guint i = 0; i < rule->n_args; i++)
    {
      uint64_t a = args[rule->args[i].arg];

      switch (rule->args[i].op)
        {
        case SCMP_CMP_MASKED_EQ:
          if ((a & rule->args[i].mask) != rule->args[i].value)
            return FALSE;
          break;
        case SCMP_CMP_EQ:
          if (a != rule->args[i].value)
            return FALSE;
          break;
        case SCMP_CMP_GE:
          if (a < rule->args[i].value)
            return FALSE;
          break;
        default:
          g_error ("rule %s: comparison %d not modelled by the test", rule->name, rule->args[i].op);
        }
    }
  return TRUE;
}

/* The direct number of @name on @arch when libseccomp gives it a pseudo
 * number (multiplexed there), or -1 when only the multiplexer reaches it. */
static int
direct_number (uint32_t arch, const char *name)
{
  for (int nr = 0; nr < 1024; nr++)
    {
      g_autofree char *n = seccomp_syscall_resolve_num_arch (arch, nr);

      if (n != NULL && strcmp (n, name) == 0)
        return nr;
    }
  return -1;
}

static void
walk_program_rules (int rung, uint32_t mode, int abi, gboolean allow_unix, gboolean terminal)
{
  g_autoptr(SbxSeccompProgram) program = NULL;
  TestReport report;
  const SbxSeccompRule *rules;
  size_t n_rules;
  const Arch *arches;
  guint n_arches, checked = 0, via_mux = 0;

  program = program_for_shape (rung, mode, abi, allow_unix, terminal, &report);
  rules = sbx_seccomp_program_rules (program, &n_rules);
  g_assert_cmpuint (n_rules, >, 100);
  arches = filter_arches (&n_arches);
  for (size_t i = 0; i < n_rules; i++)
    {
      const SbxSeccompRule *rule = &rules[i];
      uint64_t args[6] = { 0 };
      gboolean somewhere = FALSE;

      for (guint k = 0; k < rule->n_args; k++)
        args[rule->args[k].arg] = rule->args[k].value;

      for (guint a = 0; a < n_arches; a++)
        {
          int nr = seccomp_syscall_resolve_name_arch (arches[a].token, rule->name);
          uint32_t got;
          gboolean ok = FALSE;

          if (nr == __NR_SCMP_ERROR)
            continue;
          if (rule->multiplexer)
            {
              if (nr < 0)
                continue;   /* not a system call of this architecture */
              somewhere = TRUE;
              /* refused whole: every sub-call, whatever its memory holds */
              for (uint64_t call = 0; call <= 24; call++)
                g_assert_cmphex (run_filter (program, arches[a].audit, nr, call, 0, 0, 0), ==, ERR (rule->err));
              checked++;
              continue;
            }
          if (nr < 0 && seccomp_syscall_resolve_name_rewrite (arches[a].token, rule->name) < 0)
            continue;   /* a pseudo number without a multiplexer: absent here (umount on x86_64) */
          somewhere = TRUE;
          if (nr < 0)
            {
              /* multiplexed here: its multiplexer must be refused whole */
              int mux = seccomp_syscall_resolve_name_rewrite (arches[a].token, rule->name);
              g_autofree char *mux_name = seccomp_syscall_resolve_num_arch (arches[a].token, mux);
              gboolean refused = FALSE;

              g_assert_nonnull (mux_name);
              for (size_t j = 0; j < n_rules; j++)
                if (rules[j].multiplexer && strcmp (rules[j].name, mux_name) == 0)
                  refused = TRUE;
              if (!refused)
                g_error ("%s on %s is reached through %s, which the program does not refuse", rule->name,
                         arches[a].name, mux_name);
              g_assert_cmphex (run_filter (program, arches[a].audit, mux, 1, args[0], args[1], args[2]) &
                               SECCOMP_RET_ACTION_FULL, ==, SECCOMP_RET_ERRNO);
              via_mux++;
              nr = direct_number (arches[a].token, rule->name);
              if (nr < 0)
                continue;   /* no direct call (semop on i386): the multiplexer is the only path */
            }
          got = run_filter (program, arches[a].audit, nr, args[0], args[1], args[2], args[3]);
          /* several rules may match the same arguments: any of their errnos */
          for (size_t j = 0; j < n_rules && !ok; j++)
            if (!rules[j].multiplexer && strcmp (rules[j].name, rule->name) == 0 && rule_matches (&rules[j], args) &&
                got == (rules[j].err == SBX_SECCOMP_ERR_SUPERVISED ? NOTIFY : ERR (rules[j].err)))
              ok = TRUE;
          if (!ok)
            g_error ("rung %d mode %u abi %d%s: rule %zu %s(%#" G_GINT64_MODIFIER "x, %#" G_GINT64_MODIFIER "x, %#"
                     G_GINT64_MODIFIER "x, %#" G_GINT64_MODIFIER "x) on %s (nr %d): action 0x%x, expected "
                                       "errno %d", rung, mode, abi, allow_unix ? " allow-unix" : "", i, rule->name, args[0], args[1],
                     args[2], args[3], arches[a].name, nr, got, rule->err);
          checked++;
          /* the x32 entry of the same call is killed, whatever it is */
          if (arches[a].audit == AUDIT_ARCH_X86_64)
            g_assert_cmphex (run_filter (program, AUDIT_ARCH_X86_64, 0x40000000 | nr, args[0], args[1], args[2],
                                         args[3]), ==, SECCOMP_RET_KILL_PROCESS);
        }
      if (!somewhere && strcmp (rule->name, "vm86") != 0 && strcmp (rule->name, "vm86old") != 0 &&
          strcmp (rule->name, "umount") != 0 && strcmp (rule->name, "semtimedop_time64") != 0)
        g_error ("rule for %s: the call exists on no architecture of the filter", rule->name);
    }
  g_test_message ("rung %d mode %u abi %d%s: %zu rules, %u verdicts, %u through a refused multiplexer", rung, mode,
                  abi, allow_unix ? " allow-unix" : "", n_rules, checked, via_mux);
  test_report_clear (&report);
}

static void
test_exact_every_rule (void)
{
  static const uint32_t modes[] = { SBX_NET_MODE_DENY, SBX_NET_MODE_OPEN, SBX_NET_MODE_PORTS, SBX_NET_MODE_PROXY };

  for (int rung = 1; rung <= 2; rung++)
    for (guint m = 0; m < G_N_ELEMENTS (modes); m++)
      for (int allow = 0; allow <= 1; allow++)
        walk_program_rules (rung, modes[m], 7, allow, FALSE);
  walk_program_rules (2, SBX_NET_MODE_DENY, 2, FALSE, FALSE);
  /* the caller's terminal shared: the terminal-setting requests too */
  for (int rung = 1; rung <= 2; rung++)
    walk_program_rules (rung, SBX_NET_MODE_DENY, 7, FALSE, TRUE);
}

static void
test_reports_and_bits (void)
{
  struct
  {
    int rung;
    uint32_t mode;
    int abi;
    uint32_t bits;
    gboolean allow_unix;
  } rows[] = {
#define R2 (SBX_SECCOMP_ENFORCES_SETID_DENIED | SBX_SECCOMP_ENFORCES_SYSV_IPC_DENIED | \
            SBX_SECCOMP_ENFORCES_FS_WATCH_DENIED)
#define R1 SBX_SECCOMP_ENFORCES_SETID_DENIED
    { 2, SBX_NET_MODE_DENY, 7, R2 | SBX_SECCOMP_ENFORCES_INET_DENIED | SBX_SECCOMP_ENFORCES_UNIX_SUPERVISED },
    { 2, SBX_NET_MODE_PORTS, 7, R2 | SBX_SECCOMP_ENFORCES_INET_TCP_ONLY | SBX_SECCOMP_ENFORCES_UNIX_SUPERVISED |
      SBX_SECCOMP_ENFORCES_INET_LISTEN_DENIED },
    /* ports at rung 1: the host network namespace, so TCP only too */
    { 1, SBX_NET_MODE_PORTS, 7, R1 | SBX_SECCOMP_ENFORCES_INET_TCP_ONLY | SBX_SECCOMP_ENFORCES_UNIX_SUPERVISED |
      SBX_SECCOMP_ENFORCES_INET_LISTEN_DENIED },
    { 2, SBX_NET_MODE_OPEN, 7, R2 | SBX_SECCOMP_ENFORCES_UNIX_SUPERVISED },
    { 2, SBX_NET_MODE_DENY, 7, R2 | SBX_SECCOMP_ENFORCES_INET_DENIED, TRUE },
    { 1, SBX_NET_MODE_DENY, 7, R1 | SBX_SECCOMP_ENFORCES_UNIX_SUPERVISED },
    { 1, SBX_NET_MODE_DENY, 7, R1, TRUE },
    { 1, SBX_NET_MODE_DENY, 2, R1 | SBX_SECCOMP_ENFORCES_TRUNCATE_DENIED, TRUE },
    { 1, SBX_NET_MODE_OPEN, 7, R1 | SBX_SECCOMP_ENFORCES_UNIX_SUPERVISED },
    { 2, SBX_NET_MODE_DENY, 1, R2 | SBX_SECCOMP_ENFORCES_INET_DENIED | SBX_SECCOMP_ENFORCES_UNIX_SUPERVISED |
      SBX_SECCOMP_ENFORCES_TRUNCATE_DENIED },
#undef R1
#undef R2
  };

  for (guint i = 0; i < G_N_ELEMENTS (rows); i++)
    {
      g_autoptr(SbxSeccompProgram) program = NULL;
      TestReport report;

      program = program_for_unix (rows[i].rung, rows[i].mode, rows[i].abi, rows[i].allow_unix, &report);
      g_assert_cmphex (sbx_seccomp_program_enforces (program), ==, rows[i].bits);
      {
        const char *detail = NULL;

        /* the set-gid directories the supervisor performs are said where
         * it does, and directories are named refused where it does not */
        g_assert_cmpuint (test_report_status (&report, "set-id-files", &detail), ==, SBX_ABI_REPORT_ENFORCED);
        g_assert_nonnull (detail);
        if (rows[i].bits & SBX_SECCOMP_ENFORCES_UNIX_SUPERVISED)
          g_assert_nonnull (strstr (detail, "set-group-ID on a directory the target owns"));
        else
          g_assert_nonnull (strstr (detail, "no file or directory gets"));
      }
      g_assert_cmpuint (test_report_status (&report, "sysv-ipc", NULL), ==,
                        rows[i].rung == 2 ? SBX_ABI_REPORT_NARROWED : 0);
      g_assert_cmpuint (test_report_status (&report, "fs-watch", NULL), ==,
                        rows[i].rung == 2 ? SBX_ABI_REPORT_NARROWED : 0);
      g_assert_cmpuint (test_report_status (&report, "seccomp", NULL), ==, SBX_ABI_REPORT_ENFORCED);
      g_assert_cmpuint (test_report_status (&report, "unix-sockets", NULL), ==,
                        (rows[i].bits & SBX_SECCOMP_ENFORCES_UNIX_SUPERVISED) ? SBX_ABI_REPORT_NARROWED : 0);
      g_assert_cmpuint (test_report_status (&report, "truncate", NULL), ==,
                        (rows[i].bits & SBX_SECCOMP_ENFORCES_TRUNCATE_DENIED) ? SBX_ABI_REPORT_NARROWED : 0);
      test_report_clear (&report);
    }

  {
    SbxSeccompOptions bad = { 3, SBX_NET_MODE_DENY, 0, FALSE };
    SbxSeccompOptions bad_mode = { 2, 17, 0, FALSE };
    g_autoptr(GError) error = NULL, error2 = NULL;

    g_assert_null (sbx_seccomp_program_new (&bad, NULL, &error));
    g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT);
    g_assert_null (sbx_seccomp_program_new (&bad_mode, NULL, &error2));
    g_assert_error (error2, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT);
  }
}

/* ------------------------------------------------------------------------- */
/* Live                                                                       */
/* ------------------------------------------------------------------------- */

typedef long (*Call) (void);

static long call_setns (void) { return syscall (SYS_setns, -1, 0); }
static long call_mount (void) { return syscall (SYS_mount, NULL, NULL, NULL, 0, NULL); }
static long call_umount2 (void) { return syscall (SYS_umount2, NULL, 0); }
static long call_pivot_root (void) { return syscall (SYS_pivot_root, NULL, NULL); }
static long call_move_mount (void) { return syscall (SYS_move_mount, -1, NULL, -1, NULL, 0); }
static long call_open_tree (void) { return syscall (SYS_open_tree, -1, NULL, 0); }
static long call_fsopen (void) { return syscall (SYS_fsopen, NULL, 0); }
static long call_fsmount (void) { return syscall (SYS_fsmount, -1, 0, 0); }
static long call_fsconfig (void) { return syscall (SYS_fsconfig, -1, 0, NULL, NULL, 0); }
static long call_fspick (void) { return syscall (SYS_fspick, -1, NULL, 0); }
static long call_mount_setattr (void) { return syscall (SYS_mount_setattr, -1, NULL, 0, NULL, 0); }
static long call_open_tree_attr (void) { return syscall (467, -1, NULL, 0, NULL, 0); }
static long call_chroot (void) { return syscall (SYS_chroot, NULL); }
static long call_keyctl (void) { return syscall (SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0); }
static long call_add_key (void) { return syscall (SYS_add_key, NULL, NULL, NULL, 0, 0); }
static long call_request_key (void) { return syscall (SYS_request_key, NULL, NULL, NULL, 0); }
static long call_bpf (void) { return syscall (SYS_bpf, -1, NULL, 0); }
static long call_perf (void) { return syscall (SYS_perf_event_open, NULL, 0, -1, -1, 0); }
static long call_userfaultfd (void) { return syscall (SYS_userfaultfd, ~0); }
static long call_ptrace (void) { return syscall (SYS_ptrace, 2 /* PEEKDATA */, -1, NULL, NULL); }
static long call_vm_readv (void) { return syscall (SYS_process_vm_readv, getpid (), NULL, 0, NULL, 0, 0); }
static long call_vm_writev (void) { return syscall (SYS_process_vm_writev, getpid (), NULL, 0, NULL, 0, 0); }
static long call_pidfd_getfd (void) { return syscall (SYS_pidfd_getfd, -1, 0, 0); }
static long call_kcmp (void) { return syscall (SYS_kcmp, getpid (), getpid (), 0, 0, 0); }
static long call_uring_setup (void) { return syscall (SYS_io_uring_setup, 1, NULL); }
static long call_uring_enter (void) { return syscall (SYS_io_uring_enter, -1, 0, 0, 0, NULL, 0); }
static long call_uring_register (void) { return syscall (SYS_io_uring_register, -1, 0, NULL, 0); }
static long call_open_by_handle (void) { return syscall (SYS_open_by_handle_at, -1, NULL, 0); }
static long call_name_to_handle (void) { return syscall (SYS_name_to_handle_at, AT_FDCWD, "/", NULL, NULL, 0); }
static long call_init_module (void) { return syscall (SYS_init_module, NULL, 0, NULL); }
static long call_finit_module (void) { return syscall (SYS_finit_module, -1, NULL, 0); }
static long call_delete_module (void) { return syscall (SYS_delete_module, NULL, 0); }
static long call_kexec_load (void) { return syscall (SYS_kexec_load, 0, 0, NULL, 0); }
static long call_kexec_file (void) { return syscall (SYS_kexec_file_load, -1, -1, 0, NULL, 0); }
static long call_reboot (void) { return syscall (SYS_reboot, 0, 0, 0, NULL); }
static long call_swapon (void) { return syscall (SYS_swapon, NULL, 0); }
static long call_swapoff (void) { return syscall (SYS_swapoff, NULL); }
static long call_acct (void) { return syscall (SYS_acct, "/nonexistent/sbx-acct"); }
static long call_quotactl (void) { return syscall (SYS_quotactl, 0, NULL, 0, NULL); }
static long call_quotactl_fd (void) { return syscall (SYS_quotactl_fd, -1, 0, 0, NULL); }
#ifdef SYS_iopl
static long call_iopl (void) { return syscall (SYS_iopl, 4); }
static long call_ioperm (void) { return syscall (SYS_ioperm, 0x10000, 1, 1); }
#endif
static long call_syslog (void) { return syscall (SYS_syslog, 99, NULL, 0); }
#ifdef SYS_lookup_dcookie
static long call_lookup_dcookie (void) { return syscall (SYS_lookup_dcookie, 0, NULL, 0); }
#endif
#ifdef SYS_nfsservctl
static long call_nfsservctl (void) { return syscall (SYS_nfsservctl, 0, NULL, NULL); }
#endif
#ifdef SYS_uselib
static long call_uselib (void) { return syscall (SYS_uselib, NULL); }
#endif
#ifdef SYS_modify_ldt
static long call_modify_ldt (void) { return syscall (SYS_modify_ldt, 0, NULL, 0); }
#endif
static long call_clone3 (void) { return syscall (SYS_clone3, NULL, 0); }
static long call_personality_rie (void) { return syscall (SYS_personality, READ_IMPLIES_EXEC); }
static long call_personality_norand (void) { return syscall (SYS_personality, ADDR_NO_RANDOMIZE); }
static long call_mknod_chr (void) { return syscall (SYS_mknodat, AT_FDCWD, "/nonexistent/sbx", S_IFCHR | 0600, 0); }
static long call_mknod_blk (void) { return syscall (SYS_mknodat, AT_FDCWD, "/nonexistent/sbx", S_IFBLK | 0600, 0); }

static long
call_tiocsti (void)
{
  char c = 'x';
  int fd = open ("/dev/null", O_RDONLY | O_CLOEXEC);
  long r = syscall (SYS_ioctl, fd, TIOCSTI, &c);
  int e = errno;

  close (fd);
  errno = e;
  return r;
}

static long
call_tiocsti_high (void)
{
  char c = 'x';
  int fd = open ("/dev/null", O_RDONLY | O_CLOEXEC);
  long r = syscall (SYS_ioctl, fd, (unsigned long) TIOCSTI | (1UL << 32), &c);
  int e = errno;

  close (fd);
  errno = e;
  return r;
}

static long
call_tioclinux (void)
{
  char c = 0;
  int fd = open ("/dev/null", O_RDONLY | O_CLOEXEC);
  long r = syscall (SYS_ioctl, fd, TIOCLINUX, &c);
  int e = errno;

  close (fd);
  errno = e;
  return r;
}

static long
call_clone_newuser (void)
{
  long r = syscall (SYS_clone, CLONE_NEWUSER | SIGCHLD, NULL, NULL, NULL, NULL);

  if (r == 0)
    _exit (0);
  if (r > 0)
    {
      waitpid ((pid_t) r, NULL, 0);
      return 0;
    }
  return r;
}

static long
call_unshare_newuser (void)
{
  return syscall (SYS_unshare, CLONE_NEWUSER);
}

typedef struct
{
  const char *name;
  Call        call;
  int         expected;
} LiveRow;

static const LiveRow live_rows[] = {
  { "setns", call_setns, EPERM },
  { "mount", call_mount, EPERM },
  { "umount2", call_umount2, EPERM },
  { "pivot_root", call_pivot_root, EPERM },
  { "move_mount", call_move_mount, EPERM },
  { "open_tree", call_open_tree, EPERM },
  { "fsopen", call_fsopen, EPERM },
  { "fsmount", call_fsmount, EPERM },
  { "fsconfig", call_fsconfig, EPERM },
  { "fspick", call_fspick, EPERM },
  { "mount_setattr", call_mount_setattr, EPERM },
  { "open_tree_attr (newer than libseccomp)", call_open_tree_attr, ENOSYS },
  { "chroot", call_chroot, EPERM },
  { "keyctl", call_keyctl, EPERM },
  { "add_key", call_add_key, EPERM },
  { "request_key", call_request_key, EPERM },
  { "bpf", call_bpf, EPERM },
  { "perf_event_open", call_perf, EPERM },
  { "userfaultfd", call_userfaultfd, EPERM },
  { "ptrace", call_ptrace, EPERM },
  { "process_vm_readv", call_vm_readv, EPERM },
  { "process_vm_writev", call_vm_writev, EPERM },
  { "pidfd_getfd", call_pidfd_getfd, EPERM },
  { "kcmp", call_kcmp, EPERM },
  { "io_uring_setup", call_uring_setup, EPERM },
  { "io_uring_enter", call_uring_enter, EPERM },
  { "io_uring_register", call_uring_register, EPERM },
  { "open_by_handle_at", call_open_by_handle, EPERM },
  { "name_to_handle_at", call_name_to_handle, EPERM },
  { "init_module", call_init_module, EPERM },
  { "finit_module", call_finit_module, EPERM },
  { "delete_module", call_delete_module, EPERM },
  { "kexec_load", call_kexec_load, EPERM },
  { "kexec_file_load", call_kexec_file, EPERM },
  { "reboot", call_reboot, EPERM },
  { "swapon", call_swapon, EPERM },
  { "swapoff", call_swapoff, EPERM },
  { "acct", call_acct, EPERM },
  { "quotactl", call_quotactl, EPERM },
  { "quotactl_fd", call_quotactl_fd, EPERM },
#ifdef SYS_iopl
  { "iopl", call_iopl, EPERM },
  { "ioperm", call_ioperm, EPERM },
#endif
  { "syslog", call_syslog, EPERM },
#ifdef SYS_lookup_dcookie
  { "lookup_dcookie", call_lookup_dcookie, EPERM },
#endif
#ifdef SYS_nfsservctl
  { "nfsservctl", call_nfsservctl, EPERM },
#endif
#ifdef SYS_uselib
  { "uselib", call_uselib, EPERM },
#endif
#ifdef SYS_modify_ldt
  { "modify_ldt", call_modify_ldt, EPERM },
#endif
  { "clone3", call_clone3, ENOSYS },
  { "clone(CLONE_NEWUSER)", call_clone_newuser, EPERM },
  { "unshare(CLONE_NEWUSER)", call_unshare_newuser, EPERM },
  { "personality(READ_IMPLIES_EXEC)", call_personality_rie, EPERM },
  { "personality(ADDR_NO_RANDOMIZE)", call_personality_norand, EPERM },
  { "ioctl(TIOCSTI)", call_tiocsti, EPERM },
  { "ioctl(TIOCSTI | 1 << 32)", call_tiocsti_high, EPERM },
  { "ioctl(TIOCLINUX)", call_tioclinux, EPERM },
  { "mknodat(S_IFCHR)", call_mknod_chr, EPERM },
  { "mknodat(S_IFBLK)", call_mknod_blk, EPERM },
};

static int
probe_call (gconstpointer data)
{
  const LiveRow *row = data;
  long r = row->call ();

  return r < 0 ? errno : 0;
}

static void
test_live_denials (void)
{
  g_autoptr(SbxSeccompProgram) program = NULL;
  TestReport report;
  Confinement c = { 0 };
  guint distinguished = 0;

  if (!need_seccomp ())
    return;
  program = program_for (2, SBX_NET_MODE_DENY, 7, &report);
  c.program = program;
  for (guint i = 0; i < G_N_ELEMENTS (live_rows); i++)
    {
      const LiveRow *row = &live_rows[i];
      int filtered = run_probe (&c, probe_call, row);
      int control = run_probe (NULL, probe_call, row);

      g_test_message ("%-36s filtered: %-28s unfiltered: %s", row->name, probe_result_name (filtered),
                      probe_result_name (control));
      if (filtered != row->expected)
        {
          g_autofree char *msg = g_strdup_printf ("%s: filtered %s, expected %s", row->name,
                                                  probe_result_name (filtered), probe_result_name (row->expected));
          g_assertion_message (G_LOG_DOMAIN, __FILE__, __LINE__, G_STRFUNC, msg);
        }
      g_assert_cmpint (control, <, 1000);   /* the control ran and returned */
      if (control != row->expected)
        distinguished++;
      else
        g_test_message ("  (control gives the same errno as uid %d; the exact test covers it)", (int) getuid ());
    }
  /* the bulk of the rows must be live-distinguishable under any uid */
  g_assert_cmpuint (distinguished, >=, G_N_ELEMENTS (live_rows) * 3 / 4);
  test_report_clear (&report);
}

static int
probe_fork (gconstpointer data)
{
  pid_t pid = fork ();
  int status;

  if (pid < 0)
    return errno;
  if (pid == 0)
    _exit (0);
  return waitpid (pid, &status, 0) == pid && WIFEXITED (status) ? 0 : ECHILD;
}

static int
probe_personality_query (gconstpointer data)
{
  return personality (0xffffffff) < 0 ? errno : 0;
}

static void
test_live_allowed (void)
{
  g_autoptr(SbxSeccompProgram) program = NULL;
  TestReport report;
  Confinement c = { 0 };

  if (!need_seccomp ())
    return;
  program = program_for (2, SBX_NET_MODE_DENY, 7, &report);
  c.program = program;
  /* plain fork (clone without namespace flags) and the personality query */
  assert_probe (run_probe (&c, probe_fork, NULL), 0);
  assert_probe (run_probe (&c, probe_personality_query, NULL), 0);
  test_report_clear (&report);
}

/* ---- sockets ---- */

typedef struct
{
  int family, type, proto;
} SockArgs;

static int
probe_socket (gconstpointer data)
{
  const SockArgs *s = data;
  int fd = socket (s->family, s->type | SOCK_CLOEXEC, s->proto);

  if (fd < 0)
    return errno;
  close (fd);
  return 0;
}

static int
probe_socketpair (gconstpointer data)
{
  int sv[2];

  if (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
    return errno;
  close (sv[0]);
  close (sv[1]);
  return 0;
}

static void
test_live_sockets (void)
{
  static const SockArgs udp = { AF_INET, SOCK_DGRAM, 0 }, tcp = { AF_INET, SOCK_STREAM, 0 };
  static const SockArgs tcp6 = { AF_INET6, SOCK_STREAM, 0 }, mptcp = { AF_INET, SOCK_STREAM, IPPROTO_MPTCP };
  static const SockArgs unx_dgram = { AF_UNIX, SOCK_DGRAM, 0 };
  static const SockArgs unx = { AF_UNIX, SOCK_STREAM, 0 }, nl_route = { AF_NETLINK, SOCK_RAW, NETLINK_ROUTE };
  static const SockArgs nl_diag = { AF_NETLINK, SOCK_RAW, NETLINK_SOCK_DIAG };
  static const SockArgs packet = { AF_PACKET, SOCK_RAW, 0 };
  g_autoptr(SbxSeccompProgram) deny = NULL, ports = NULL, rung1 = NULL;
  TestReport r1, r2, r3;
  Confinement cd = { 0 }, cp = { 0 }, c1 = { 0 };

  if (!need_seccomp ())
    return;
  deny = program_for (2, SBX_NET_MODE_DENY, 7, &r1);
  ports = program_for (2, SBX_NET_MODE_PORTS, 7, &r2);
  rung1 = program_for (1, SBX_NET_MODE_DENY, 7, &r3);
  cd.program = deny;
  cp.program = ports;
  c1.program = rung1;

  /* rung 2, deny: no inet socket at all (Landlock covers TCP only) */
  assert_probe (run_probe (&cd, probe_socket, &udp), EACCES);
  assert_probe (run_probe (&cd, probe_socket, &tcp), EACCES);
  assert_probe (run_probe (NULL, probe_socket, &udp), 0);
  assert_probe (run_probe (NULL, probe_socket, &tcp), 0);
  /* rung 2: unix datagram sockets refused, stream ones and socketpair allowed */
  assert_probe (run_probe (&cd, probe_socket, &unx), 0);
  assert_probe (run_probe (&cd, probe_socket, &unx_dgram), EACCES);
  assert_probe (run_probe (NULL, probe_socket, &unx_dgram), 0);
  assert_probe (run_probe (&cd, probe_socketpair, NULL), 0);
  /* netlink: route only */
  assert_probe (run_probe (&cd, probe_socket, &nl_route), 0);
  assert_probe (run_probe (&cd, probe_socket, &nl_diag), EPROTONOSUPPORT);
  assert_probe (run_probe (NULL, probe_socket, &nl_diag), 0);
  /* packet sockets: never */
  assert_probe (run_probe (&cd, probe_socket, &packet), EAFNOSUPPORT);
  g_assert_cmpint (run_probe (NULL, probe_socket, &packet), !=, EAFNOSUPPORT);
  /* rung 2, ports: plain TCP only */
  assert_probe (run_probe (&cp, probe_socket, &tcp), 0);
  assert_probe (run_probe (&cp, probe_socket, &tcp6), 0);
  assert_probe (run_probe (&cp, probe_socket, &udp), EACCES);
  assert_probe (run_probe (&cp, probe_socket, &mptcp), EACCES);
  g_assert_cmpint (run_probe (NULL, probe_socket, &mptcp), !=, EACCES);
  /* rung 1: the network namespace is the boundary; unix datagram sockets
   * are refused there too unless the policy opens them (stream ones and
   * socketpair stay; their connects go to the supervisor) */
  assert_probe (run_probe (&c1, probe_socket, &udp), 0);
  assert_probe (run_probe (&c1, probe_socket, &unx), 0);
  assert_probe (run_probe (&c1, probe_socket, &unx_dgram), EACCES);
  assert_probe (run_probe (&c1, probe_socketpair, NULL), 0);
  assert_probe (run_probe (&c1, probe_socket, &packet), EAFNOSUPPORT);
  {
    g_autoptr(SbxSeccompProgram) rung1_unix = NULL, rung2_unix = NULL;
    TestReport r4, r5;
    Confinement c1u = { 0 }, c2u = { 0 };

    rung1_unix = program_for_unix (1, SBX_NET_MODE_DENY, 7, TRUE, &r4);
    rung2_unix = program_for_unix (2, SBX_NET_MODE_DENY, 7, TRUE, &r5);
    c1u.program = rung1_unix;
    c2u.program = rung2_unix;
    assert_probe (run_probe (&c1u, probe_socket, &unx), 0);
    assert_probe (run_probe (&c2u, probe_socket, &unx), 0);
    assert_probe (run_probe (&c2u, probe_socket, &unx_dgram), 0);
    assert_probe (run_probe (&c2u, probe_socket, &udp), EACCES);
    test_report_clear (&r4);
    test_report_clear (&r5);
  }

  test_report_clear (&r1);
  test_report_clear (&r2);
  test_report_clear (&r3);
}

/* ---- compat architectures ---- */

#if defined(__x86_64__)
static long
x32_getpid (void)
{
  long ret;

  __asm__ volatile ("syscall" : "=a" (ret) : "a" (0x40000000L | 39) : "rcx", "r11", "memory");
  return ret;
}

/* An i386 system call from 64-bit code (int 0x80). */
static long
i386_syscall2 (long nr, long a, long b)
{
  long ret;

  __asm__ volatile ("int $0x80"
                    : "=a" (ret)
                    : "a" (nr), "b" (a), "c" (b)
                    : "r8", "r9", "r10", "r11", "memory");
  return ret;
}

static int
probe_x32 (gconstpointer data)
{
  long r = x32_getpid ();

  return r < 0 ? (int) -r : 0;
}

static int
probe_i386_setns (gconstpointer data)
{
  long r = i386_syscall2 (346 /* i386 setns */, -1, 0);

  return r < 0 ? (int) -r : 0;
}

static int
probe_i386_getpid (gconstpointer data)
{
  long r = i386_syscall2 (20 /* i386 getpid */, 0, 0);

  return r < 0 ? (int) -r : 0;
}
#endif

static void
test_live_compat_arches (void)
{
#if defined(__x86_64__)
  g_autoptr(SbxSeccompProgram) program = NULL;
  TestReport report;
  Confinement c = { 0 };
  int control;

  if (!need_seccomp ())
    return;
  program = program_for (2, SBX_NET_MODE_DENY, 7, &report);
  c.program = program;

  /* x32: killed outright, while the unfiltered call returns */
  control = run_probe (NULL, probe_x32, NULL);
  g_test_message ("x32 getpid unfiltered: %s", probe_result_name (control));
  g_assert_cmpint (control, <, 1000);
  assert_probe (run_probe (&c, probe_x32, NULL), PROBE_SIGNALED (SIGSYS));

  /* i386 through int 0x80 */
  control = run_probe (NULL, probe_i386_setns, NULL);
  if (control >= 1000 || control == ENOSYS)
    {
      g_autofree char *why = g_strdup_printf ("no i386 emulation on this kernel (int 0x80: %s)",
                                              probe_result_name (control));

      g_test_skip (why);
      test_report_clear (&report);
      return;
    }
  assert_probe (control, EBADF);
  assert_probe (run_probe (&c, probe_i386_setns, NULL), EPERM);
  assert_probe (run_probe (&c, probe_i386_getpid, NULL), 0);
  test_report_clear (&report);
#else
  g_test_skip ("compat probes are written for x86_64 only; the exact test covers the filter");
#endif
}

/* ---- Landlock ABI < 3: truncation ---- */

static int
probe_truncate (gconstpointer data)
{
  return truncate (data, 0) < 0 ? errno : 0;
}

static int
probe_open_trunc_rdonly (gconstpointer data)
{
  int fd = open (data, O_RDONLY | O_TRUNC | O_CLOEXEC);

  if (fd < 0)
    return errno;
  close (fd);
  return 0;
}

static int
probe_read_ok (gconstpointer data)
{
  char c;
  int fd = open (data, O_RDONLY | O_CLOEXEC);
  int r;

  if (fd < 0)
    return errno;
  r = read (fd, &c, 1) < 0 ? errno : 0;
  close (fd);
  return r;
}

static void
test_truncate_gap_closed (void)
{
  g_autofree char *root = NULL, *ro = NULL, *f = NULL;
  g_autoptr(EtuPolicy) tp = NULL;
  g_autoptr(SbxLandlockPlan) plan = NULL;
  g_autoptr(SbxSeccompProgram) program = NULL;
  SbxLandlockOptions options = { 2, SBX_LANDLOCK_RUNG_LANDLOCK, FALSE, NULL };
  g_autoptr(GError) error = NULL;
  TestReport report;
  Confinement ll = { 0 }, both = { 0 };

  if (!need_seccomp ())
    return;
  if (sbx_landlock_probe_abi () < 2)
    {
      g_test_skip ("Landlock ABI 2 is not available to simulate");
      return;
    }
  root = scratch_new ();
  ro = path_join (root, "ro");
  g_assert_no_errno (g_mkdir_with_parents (ro, 0755));
  f = path_join (ro, "f");
  write_file (f, "precious\n");
  tp = etu_policy_new (root);
  etu_policy_add (tp, "/", 0, SBX_FS_ALL, 0, SBX_FS_ORIGIN_HOST);
  etu_policy_add (tp, "~/ro", SBX_FS_READ, SBX_FS_WRITE, 0, SBX_FS_ORIGIN_ROOT);
  plan = sbx_landlock_plan_new (etu_policy_get (tp), &options, NULL, &error);
  g_assert_no_error (error);
  program = program_for (2, SBX_NET_MODE_DENY, 2, &report);
  ll.plan = plan;
  both.plan = plan;
  both.program = program;

  /* Landlock ABI 2 alone lets a read-only file be emptied ... */
  assert_probe (run_probe (&ll, probe_truncate, f), 0);
  write_file (f, "precious\n");
  assert_probe (run_probe (&ll, probe_open_trunc_rdonly, f), 0);
  write_file (f, "precious\n");
  /* ... the seccomp program built for that ABI refuses it */
  assert_probe (run_probe (&both, probe_truncate, f), EPERM);
  assert_probe (run_probe (&both, probe_open_trunc_rdonly, f), EPERM);
  assert_probe (run_probe (&both, probe_read_ok, f), 0);
  {
    g_autofree char *contents = NULL;

    g_assert_true (g_file_get_contents (f, &contents, NULL, NULL));
    g_assert_cmpstr (contents, ==, "precious\n");
  }

  test_report_clear (&report);
  g_clear_pointer (&plan, sbx_landlock_plan_free);
  scratch_free (g_steal_pointer (&root));
}

/* ---- the caller's terminal shared ---- */

/* Terminal requests, listed independently of sbx-seccomp.c's table: refused (setting) or not (reading, or the
 * descriptor's own flags) when the caller's terminal is shared, and every
 * one allowed by the normal program (except TIOCSTI, refused everywhere). */
typedef struct
{
  const char   *name;
  unsigned long request;
  uint64_t      arg;
  gboolean      refused;
} TermRow;

static const TermRow term_rows[] = {
  { "TCSETS", TCSETS, 0, TRUE },
  { "TCSETSW", TCSETSW, 0, TRUE },
  { "TCSETSF", TCSETSF, 0, TRUE },
  { "TCSETA", TCSETA, 0, TRUE },
  { "TCSETAW", TCSETAW, 0, TRUE },
  { "TCSETAF", TCSETAF, 0, TRUE },
  { "TCSETS2", K_TCSETS2, 0, TRUE },
  { "TCSETSW2", K_TCSETSW2, 0, TRUE },
  { "TCSETSF2", K_TCSETSF2, 0, TRUE },
  { "TIOCSWINSZ", TIOCSWINSZ, 0, TRUE },
  { "TIOCSETD", TIOCSETD, 0, TRUE },
  { "TCFLSH", TCFLSH, TCIFLUSH, TRUE },
  { "TCXONC", TCXONC, TCOOFF, TRUE },
  { "TCSBRK (break)", TCSBRK, 0, TRUE },
  { "TCSBRKP", TCSBRKP, 0, TRUE },
  { "TIOCSBRK", TIOCSBRK, 0, TRUE },
  { "TIOCCBRK", TIOCCBRK, 0, TRUE },
  { "TIOCEXCL", TIOCEXCL, 0, TRUE },
  { "TIOCNXCL", TIOCNXCL, 0, TRUE },
  { "TIOCSCTTY", TIOCSCTTY, 1, TRUE },
  { "TIOCSPGRP", TIOCSPGRP, 0, TRUE },
  { "TIOCCONS", TIOCCONS, 0, TRUE },
  { "TIOCVHANGUP", TIOCVHANGUP, 0, TRUE },
  { "TIOCSLCKTRMIOS", TIOCSLCKTRMIOS, 0, TRUE },
  { "TIOCSIG", TIOCSIG, SIGINT, TRUE },
  { "TIOCPKT", TIOCPKT, 0, TRUE },
  { "TIOCMSET", TIOCMSET, 0, TRUE },
  { "TIOCMBIS", TIOCMBIS, 0, TRUE },
  { "TIOCMBIC", TIOCMBIC, 0, TRUE },
  { "TIOCSSOFTCAR", TIOCSSOFTCAR, 0, TRUE },
  { "TIOCSSERIAL", TIOCSSERIAL, 0, TRUE },
  { "TIOCSRS485", TIOCSRS485, 0, TRUE },
  { "KDSETMODE", 0x4B3A, 0, TRUE },
  { "KDSKBMODE", 0x4B45, 0, TRUE },
  { "VT_ACTIVATE", 0x5606, 1, TRUE },
  { "TCGETS", TCGETS, 0, FALSE },
  { "TCGETS2", K_TCGETS2, 0, FALSE },
  { "TIOCGWINSZ", TIOCGWINSZ, 0, FALSE },
  { "TIOCGPGRP", TIOCGPGRP, 0, FALSE },
  { "TIOCGSID", TIOCGSID, 0, FALSE },
  { "TIOCGETD", TIOCGETD, 0, FALSE },
  { "TIOCOUTQ", TIOCOUTQ, 0, FALSE },
  { "FIONREAD", FIONREAD, 0, FALSE },
  { "FIONBIO", FIONBIO, 0, FALSE },
  { "FIOCLEX", FIOCLEX, 0, FALSE },
  { "TCSBRK (tcdrain)", TCSBRK, 1, FALSE },
  { "TIOCSPTLCK", TIOCSPTLCK, 0, FALSE },
  { "TIOCGPTPEER", TIOCGPTPEER, 0, FALSE },
};

/* Every row on every architecture of the filter, with the request's upper
 * half set too (the kernel ignores it), for both programs of both rungs. */
static void
test_exact_caller_terminal (void)
{
  const Arch *arches;
  guint n_arches, checked = 0;

  arches = filter_arches (&n_arches);
  for (int rung = 1; rung <= 2; rung++)
    for (int shared = 0; shared <= 1; shared++)
      {
        g_autoptr(SbxSeccompProgram) program = NULL;
        TestReport report;

        program = program_for_shape (rung, SBX_NET_MODE_DENY, 7, FALSE, shared, &report);
        g_assert_cmpint ((sbx_seccomp_program_enforces (program) & SBX_SECCOMP_ENFORCES_TERMINAL_SETTINGS_DENIED)
                         != 0, ==, shared);
        for (guint a = 0; a < n_arches; a++)
          {
            int nr = seccomp_syscall_resolve_name_arch (arches[a].token, "ioctl");

            g_assert_cmpint (nr, >=, 0);
            for (guint i = 0; i < G_N_ELEMENTS (term_rows); i++)
              for (int high = 0; high <= 1; high++)
                {
                  uint64_t request = term_rows[i].request | (high ? 1ULL << 32 : 0);
                  uint32_t want = shared && term_rows[i].refused ? ERR (EPERM) : ALLOW;
                  uint32_t got = run_filter (program, arches[a].audit, nr, 0, request, term_rows[i].arg, 0);

                  if (!action_matches (got, want))
                    g_error ("rung %d%s: ioctl(%s%s) on %s: action 0x%x, expected 0x%x", rung,
                             shared ? " caller's terminal shared" : "", term_rows[i].name, high ? " | 1 << 32" : "",
                             arches[a].name, got, want);
                  checked++;
                }
          }
        test_report_clear (&report);
      }
  g_assert_cmpuint (checked, ==, 2 * 2 * n_arches * G_N_ELEMENTS (term_rows) * 2);
}

typedef struct
{
  int           fd;        /* the "caller's terminal": a pty slave of the test */
  const TermRow *row;
} TermProbe;

/* The row's request on the terminal, with an argument that changes it:
 * modes with echo off and another interrupt character, a 1x1 window. */
static int
probe_terminal (gconstpointer data)
{
  const TermProbe *p = data;
  struct termios t;
  KernelTermios2 t2;
  struct winsize ws = { 1, 1, 0, 0 };
  int zero = 0;
  long r;

  memset (&t, 0, sizeof t);
  memset (&t2, 0, sizeof t2);
  if (ioctl (p->fd, TCGETS, &t) != 0 || ioctl (p->fd, K_TCGETS2, &t2) != 0)
    return 1000 + errno;
  t.c_lflag &= ~(tcflag_t) ECHO;
  t.c_cc[VINTR] = 'x';
  t2.c_lflag &= ~(tcflag_t) ECHO;
  switch (p->row->request)
    {
    case TCSETS:
    case TCSETSW:
    case TCSETSF:
      r = syscall (SYS_ioctl, p->fd, p->row->request, &t);
      break;
    case K_TCSETS2:
      r = syscall (SYS_ioctl, p->fd, p->row->request, &t2);
      break;
    case TIOCSWINSZ:
      r = syscall (SYS_ioctl, p->fd, p->row->request, &ws);
      break;
    case TIOCSETD:
      r = syscall (SYS_ioctl, p->fd, p->row->request, &zero);   /* N_TTY */
      break;
    default:
      r = syscall (SYS_ioctl, p->fd, p->row->request, (unsigned long) p->row->arg);
      break;
    }
  return r < 0 ? errno : 0;
}

typedef struct
{
  struct termios t;
  struct winsize ws;
} TermState;

static void
term_state (int fd, TermState *st)
{
  memset (st, 0, sizeof *st);
  g_assert_cmpint (ioctl (fd, TCGETS, &st->t), ==, 0);
  g_assert_cmpint (ioctl (fd, TIOCGWINSZ, &st->ws), ==, 0);
}

/* Live, on a pty pair the test creates: under the shared program every
 * setting request the kernel would perform returns EPERM and the
 * terminal's modes and window size are byte for byte what they were; the
 * same request without the filter (the positive control) changes them. */
static void
test_live_caller_terminal (void)
{
  static const unsigned long live[] = { TCSETS, TCSETSW, TCSETSF, K_TCSETS2, TIOCSWINSZ, TIOCSETD, TCFLSH,
                                        TCXONC, TIOCEXCL, TIOCNXCL };
  g_autoptr(SbxSeccompProgram) program = NULL;
  TestReport report;
  Confinement c = { 0 };
  int master = -1, slave = -1;
  struct winsize ws = { 24, 80, 0, 0 };
  TermState before, after;
  guint changed = 0;

  if (!need_seccomp ())
    return;
  g_assert_cmpint (openpty (&master, &slave, NULL, NULL, &ws), ==, 0);
  program = program_for_shape (2, SBX_NET_MODE_DENY, 7, FALSE, TRUE, &report);
  c.program = program;
  for (guint i = 0; i < G_N_ELEMENTS (term_rows); i++)
    {
      TermProbe p = { slave, &term_rows[i] };
      gboolean is_live = FALSE;
      int filtered, control;

      for (guint k = 0; k < G_N_ELEMENTS (live); k++)
        is_live |= live[k] == term_rows[i].request;
      if (!is_live)
        continue;
      term_state (slave, &before);
      filtered = run_probe (&c, probe_terminal, &p);
      term_state (slave, &after);
      g_assert_cmpint (filtered, ==, EPERM);
      g_assert_cmpmem (&before, sizeof before, &after, sizeof after);
      control = run_probe (NULL, probe_terminal, &p);
      g_test_message ("%-12s filtered: %s, unfiltered: %s", term_rows[i].name, probe_result_name (filtered),
                      probe_result_name (control));
      g_assert_cmpint (control, ==, 0);
      term_state (slave, &after);
      if (memcmp (&before, &after, sizeof before) != 0)
        changed++;
      /* back to the state before the control */
      g_assert_cmpint (ioctl (slave, TCSETS, &before.t), ==, 0);
      g_assert_cmpint (ioctl (slave, TIOCSWINSZ, &before.ws), ==, 0);
      g_assert_cmpint (ioctl (slave, TCXONC, TCOON), ==, 0);
      g_assert_cmpint (ioctl (slave, TIOCNXCL), ==, 0);
    }
  /* the mode and window-size controls changed what the filter kept */
  g_assert_cmpuint (changed, >=, 5);
  /* reading stays: modes, window size, pending input, tcdrain */
  for (guint i = 0; i < G_N_ELEMENTS (term_rows); i++)
    if (term_rows[i].request == TCGETS || term_rows[i].request == TIOCGWINSZ || term_rows[i].request == FIONREAD
        || (term_rows[i].request == TCSBRK && term_rows[i].arg == 1))
      {
        TermProbe p = { slave, &term_rows[i] };
        int n = 0;
        TermRow fionread = term_rows[i];

        if (term_rows[i].request == FIONREAD)
          {
            fionread.arg = (uint64_t) (uintptr_t) &n;
            p.row = &fionread;
          }
        else if (term_rows[i].request != TCSBRK)
          continue;   /* TCGETS, TIOCGWINSZ: probe_terminal itself reads both first */
        assert_probe (run_probe (&c, probe_terminal, &p), 0);
      }
  close (slave);
  close (master);
  test_report_clear (&report);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
  /* Under qemu-user (the aarch64 CI phase) seccomp(2) does not reach a
   * kernel, so libseccomp would detect API level 1 and refuse
   * SCMP_ACT_KILL_PROCESS; the phase runs only the verdict cases (the BPF
   * interpreter above) and states the level a current kernel has. */
  if (g_getenv ("SBX_TEST_SECCOMP_API_LEVEL") != NULL)
    g_assert_cmpint (seccomp_api_set ((unsigned int) g_ascii_strtoull (g_getenv ("SBX_TEST_SECCOMP_API_LEVEL"),
                                                                       NULL, 10)), ==, 0);

  g_test_add_func ("/seccomp/exact/default-program", test_exact_default);
  g_test_add_func ("/seccomp/exact/arch-guards", test_exact_arch_guards);
  g_test_add_func ("/seccomp/exact/socket-matrix", test_exact_socket_matrix);
  g_test_add_func ("/seccomp/exact/every-rule-every-arch", test_exact_every_rule);
  g_test_add_func ("/seccomp/program/reports-and-bits", test_reports_and_bits);
  g_test_add_func ("/seccomp/live/denials", test_live_denials);
  g_test_add_func ("/seccomp/live/allowed", test_live_allowed);
  g_test_add_func ("/seccomp/live/sockets", test_live_sockets);
  g_test_add_func ("/seccomp/live/compat-arches", test_live_compat_arches);
  g_test_add_func ("/seccomp/live/truncate-gap-closed", test_truncate_gap_closed);
  g_test_add_func ("/seccomp/exact/caller-terminal", test_exact_caller_terminal);
  g_test_add_func ("/seccomp/live/caller-terminal", test_live_caller_terminal);
  return g_test_run ();
}
