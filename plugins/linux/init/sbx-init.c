/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sbx-init — the init of a Linux sandbox (see sbx-init-proto.h).
 *
 * Why a separate program: the sandbox's first child is a copy of the
 * supervisor (it was cloned from an arbitrary, possibly multithreaded GLib
 * program).  Instead of living on with a copy of the supervisor's memory,
 * environment and descriptors, it execs this program, which holds nothing but
 * the exit-record pipe.  The plugin embeds the binary and execs it from a
 * sealed memfd, so nothing on the host filesystem can be swapped in.
 *
 * What it does:
 *  - reaps every child (orphans are reparented to it: PID 1 of the pid
 *    namespace at rung 1, PR_SET_CHILD_SUBREAPER at rung 2);
 *  - forwards HUP INT QUIT USR1 USR2 ALRM TERM CONT TSTP TTIN TTOU WINCH to
 *    the tree, except those the target started with ignored (IGNORED:
 *    init ignores them as well) (rung 1: kill(-1) reaches every process of the namespace but
 *    init; rung 2: the target's process group and every direct child);
 *  - on SBX_INIT_SIGNAL_KILL_TREE, or when the supervisor's end of the exit
 *    pipe is gone (the lifeline), SIGKILLs the whole tree;
 *  - when the target exits: at rung 2 kills and reaps every remaining
 *    descendant until none is left, then writes one SbxInitExitRecord and
 *    exits with the target's code (128+N for signal N).  At rung 1 the kernel
 *    kills the rest of the namespace when init exits.
 *
 * Built freestanding (no libc, a few hundred bytes of code) on x86_64 and
 * aarch64; elsewhere against static glibc (SBX_INIT_LIBC).  Never built with
 * sanitizers.  It allocates nothing and uses only the stack and .bss.
 */
#include <stddef.h>
#include <stdint.h>
#include <asm/unistd.h>
#include <linux/fcntl.h>
#include <linux/prctl.h>
#include <linux/signalfd.h>
#include <linux/wait.h>

#include "sbx-init-proto.h"

#define SIGHUP_    1
#define SIGKILL_   9
#define SIGCHLD_  17
#define POLLIN_   0x001
#define POLLERR_  0x008
#define POLLHUP_  0x010
#define EINTR_     4
#define ECHILD_   10
#define SIG_SETMASK_ 2
#define SA_RESTORER_ 0x04000000

struct sbx_pollfd
{
  int   fd;
  short events;
  short revents;
};

struct sbx_sigaction
{
  void        (*handler) (int);
  unsigned long flags;
  void        (*restorer) (void);
  uint64_t      mask;
};

#ifdef SBX_INIT_LIBC

#include <unistd.h>
#include <errno.h>

static long
sys6 (long n, long a, long b, long c, long d, long e, long f)
{
  long r = syscall (n, a, b, c, d, e, f);
  return r == -1 ? -errno : r;
}

#else

#include "sbx-syscall-arch.h"
#ifndef SBX_HAVE_ARCH_SYSCALL
#error "sbx-init: no freestanding syscall shim for this architecture; build with -DSBX_INIT_LIBC"
#endif
#define sys6 sbx_arch_syscall6

#endif

#define sys0(n)                sys6 ((n), 0, 0, 0, 0, 0, 0)
#define sys1(n, a)             sys6 ((n), (long) (a), 0, 0, 0, 0, 0)
#define sys2(n, a, b)          sys6 ((n), (long) (a), (long) (b), 0, 0, 0, 0)
#define sys3(n, a, b, c)       sys6 ((n), (long) (a), (long) (b), (long) (c), 0, 0, 0)
#define sys4(n, a, b, c, d)    sys6 ((n), (long) (a), (long) (b), (long) (c), (long) (d), 0, 0)
#define sys5(n, a, b, c, d, e) sys6 ((n), (long) (a), (long) (b), (long) (c), (long) (d), (long) (e), 0)

static void __attribute__ ((noreturn))
die (int code)
{
  for (;;)
    sys1 (__NR_exit_group, code);
}

/* The handler never runs: every signal stays blocked and is read from the
 * signalfd.  It exists because a pid-namespace init drops signals whose
 * disposition is SIG_DFL, even when they are blocked. */
static void
noop_handler (int signo)
{
  (void) signo;
}

#if defined(__x86_64__) && !defined(SBX_INIT_LIBC)
/* x86_64 requires SA_RESTORER; the trampoline calls rt_sigreturn. */
void sbx_init_restorer (void);
__asm__ (".text\n"
         ".type sbx_init_restorer,@function\n"
         "sbx_init_restorer:\n"
         "  mov $15, %rax\n"
         "  syscall\n"
         "  hlt\n");
#define RESTORER_FLAGS SA_RESTORER_
#define RESTORER sbx_init_restorer
#else
#define RESTORER_FLAGS 0
#define RESTORER 0
#endif

/* Decimal, unsigned, all 64 bits (signal 64 is bit 63); 0 on anything else. */
static uint64_t
parse_u64 (const char *s)
{
  uint64_t v = 0;

  for (; *s; s++)
    {
      if (*s < '0' || *s > '9' || v > (~UINT64_C (0) - 9) / 10)
        return 0;
      v = v * 10 + (uint64_t) (*s - '0');
    }
  return v;
}

static long
parse_long (const char *s)
{
  long v = 0;
  int neg = 0;

  if (s == 0 || *s == 0)
    return -1;
  if (*s == '-')
    {
      neg = 1;
      s++;
    }
  for (; *s; s++)
    {
      if (*s < '0' || *s > '9')
        return -1;
      v = v * 10 + (*s - '0');
    }
  return neg ? -v : v;
}

static char *
format_long (char *end, long v)
{
  *--end = 0;
  do
    {
      *--end = (char) ('0' + v % 10);
      v /= 10;
    }
  while (v > 0);
  return end;
}

static int mode;
static long target;
static int exit_fd;
static int have_status;
static int target_status;
static char children_buf[65536];

/* Reaps every child that has exited; remembers the target's status. */
static void
reap (void)
{
  for (;;)
    {
      int st = 0;
      long pid = sys4 (__NR_wait4, -1, &st, WNOHANG | __WALL, 0);

      if (pid == -EINTR_)
        continue;
      if (pid <= 0)
        return;
      if (pid == target && !have_status)
        {
          have_status = 1;
          target_status = st;
        }
    }
}

/* Mode 2: reads the pids of our direct children into children_buf.  Returns
 * the number of bytes, 0 when none, < 0 on error. */
static long
read_children (void)
{
  char path[96] = "/proc/";
  char num[24];
  char *p = path + 6;
  const char *s;
  long self = sys0 (__NR_getpid);
  long fd, n, total = 0;

  for (s = format_long (num + sizeof num, self); *s; s++)
    *p++ = *s;
  for (s = "/task/"; *s; s++)
    *p++ = *s;
  for (s = format_long (num + sizeof num, self); *s; s++)
    *p++ = *s;
  for (s = "/children"; *s; s++)
    *p++ = *s;
  *p = 0;

  fd = sys4 (__NR_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC, 0);
  if (fd < 0)
    return fd;
  for (;;)
    {
      n = sys3 (__NR_read, fd, children_buf + total, sizeof children_buf - 1 - total);
      if (n == -EINTR_)
        continue;
      if (n <= 0)
        break;
      total += n;
      if (total >= (long) sizeof children_buf - 1)
        break;
    }
  sys1 (__NR_close, fd);
  children_buf[total] = 0;
  return n < 0 ? n : total;
}

/* Mode 2: sends @signo to every direct child listed in children_buf. */
static void
signal_children (int signo)
{
  const char *s = children_buf;

  while (*s)
    {
      long pid = 0;

      while (*s == ' ' || *s == '\n')
        s++;
      if (*s < '0' || *s > '9')
        break;
      while (*s >= '0' && *s <= '9')
        pid = pid * 10 + (*s++ - '0');
      if (pid > 0)
        sys2 (__NR_kill, pid, signo);
    }
}

/* SIGKILLs every process of the tree and reaps until none is left.  Mode 1:
 * kill(-1) from a pid-namespace init reaches every other process of the
 * namespace.  Mode 2: orphans of the tree are reparented to us (subreaper), so
 * the tree is empty exactly when we have no child left; a process killed
 * while it forks loses the fork, and its orphans show up in the next round. */
static void
kill_tree (void)
{
  for (;;)
    {
      int st = 0;
      long pid;

      if (mode == 1)
        sys2 (__NR_kill, -1, SIGKILL_);
      else if (read_children () > 0)
        signal_children (SIGKILL_);
      else if (!have_status)
        /* No children list (CONFIG_PROC_CHILDREN off): the target's group,
         * whose number stays reserved while the target is unreaped. */
        sys2 (__NR_kill, -target, SIGKILL_);

      /* Wait for one to die, then look again. */
      pid = sys4 (__NR_wait4, -1, &st, __WALL, 0);
      if (pid == -ECHILD_)
        return;
      if (pid == target && !have_status)
        {
          have_status = 1;
          target_status = st;
        }
    }
}

static void __attribute__ ((noreturn))
finish (uint32_t flags)
{
  SbxInitExitRecord rec;
  int code;
  int sig = target_status & 0x7f;

  rec.magic = SBX_INIT_EXIT_MAGIC;
  rec.flags = flags;
  rec.reserved = 0;
  if (!have_status)
    {
      /* The target vanished without a status we saw (lifeline broken). */
      rec.kind = SBX_INIT_KIND_SIGNALED;
      rec.code = 0;
      rec.signo = SIGKILL_;
      code = 128 + SIGKILL_;
    }
  else if (sig == 0)
    {
      rec.kind = SBX_INIT_KIND_EXITED;
      rec.code = (target_status >> 8) & 0xff;
      rec.signo = 0;
      code = rec.code;
    }
  else
    {
      rec.kind = SBX_INIT_KIND_SIGNALED;
      rec.code = 0;
      rec.signo = sig;
      code = 128 + sig;
    }
  while (sys3 (__NR_write, exit_fd, &rec, sizeof rec) == -EINTR_)
    ;
  die (code);
}

static void
forward (int signo)
{
  if (mode == 1)
    {
      sys2 (__NR_kill, -1, signo);
      return;
    }
  /* The target's session and process group (it called setsid), then every
   * direct child, which covers orphans that made their own groups. */
  if (!have_status)
    sys2 (__NR_kill, -target, signo);
  if (read_children () > 0)
    signal_children (signo);
}

int init_main (long *sp);

int
init_main (long *sp)
{
  long argc = sp[0];
  char **argv = (char **) (sp + 1);
  uint64_t all = ~UINT64_C (0);
  uint64_t watched = SBX_INIT_FORWARDED_SIGNALS | (UINT64_C (1) << SIGCHLD_)
                     | (UINT64_C (1) << SBX_INIT_SIGNAL_KILL_TREE);
  uint64_t ignored = 0;
  struct sbx_signalfd_set { uint64_t bits; } sfd_set;
  struct sbx_sigaction sa;
  long sfd;
  int signo;

  if (argc >= 2 && argv[1][0] == 'p' && argv[1][1] == 0)
    die (SBX_INIT_PROBE_EXIT);
  if (argc != 4 && argc != 5)
    die (127);
  mode = argv[1][0] == '1' ? 1 : argv[1][0] == '2' ? 2 : 0;
  target = parse_long (argv[2]);
  exit_fd = (int) parse_long (argv[3]);
  if (argc == 5)
    {
      ignored = parse_u64 (argv[4]);
      if (ignored == 0)
        die (127);
    }
  if (mode == 0 || target <= 0 || exit_fd < 0)
    die (127);

  /* Nothing may ptrace or core-dump init. */
  sys5 (__NR_prctl, PR_SET_DUMPABLE, 0, 0, 0, 0);

  /* Signal n is bit n-1 in the kernel's sigset. */
  sys4 (__NR_rt_sigprocmask, SIG_SETMASK_, &all, 0, 8);
  sa.handler = noop_handler;
  sa.flags = RESTORER_FLAGS;
  sa.restorer = RESTORER;
  sa.mask = all;
  sfd_set.bits = 0;
  for (signo = 1; signo < 64; signo++)
    {
      if (!(watched & (UINT64_C (1) << signo)))
        continue;
      if (signo != SIGCHLD_ && signo != SBX_INIT_SIGNAL_KILL_TREE && (ignored & (UINT64_C (1) << (signo - 1))))
        {
          /* The command ignores it: init does too (a pending or later one
           * is discarded), so it never reaches the rest of the tree from
           * here, as a plain wrapper's child ignoring it would not pass it
           * on.  Not watched: it never wakes the loop. */
          struct sbx_sigaction ign = { (void (*) (int)) 1, RESTORER_FLAGS, RESTORER, 0 };

          sys4 (__NR_rt_sigaction, signo, &ign, 0, 8);
          continue;
        }
      sys4 (__NR_rt_sigaction, signo, &sa, 0, 8);
      sfd_set.bits |= UINT64_C (1) << (signo - 1);
    }
  sfd = sys4 (__NR_signalfd4, -1, &sfd_set, 8, SFD_CLOEXEC);
  if (sfd < 0)
    die (127);

  for (;;)
    {
      struct sbx_pollfd pfd[2];
      struct signalfd_siginfo info[16];
      long n, i;

      reap ();
      if (have_status)
        {
          if (mode == 2)
            kill_tree ();
          finish (mode == 2 ? SBX_INIT_FLAG_TREE_EMPTY : 0);
        }

      pfd[0].fd = (int) sfd;
      pfd[0].events = POLLIN_;
      pfd[0].revents = 0;
      pfd[1].fd = exit_fd;
      pfd[1].events = 0;    /* POLLERR: the supervisor's read end is gone */
      pfd[1].revents = 0;
      n = sys5 (__NR_ppoll, pfd, 2, 0, 0, 8);
      if (n == -EINTR_)
        continue;
      if (n < 0)
        die (127);
      if (pfd[1].revents & (POLLERR_ | POLLHUP_))
        {
          kill_tree ();
          finish (SBX_INIT_FLAG_SUPERVISOR_LOST | (mode == 2 ? SBX_INIT_FLAG_TREE_EMPTY : 0));
        }
      if (!(pfd[0].revents & POLLIN_))
        continue;
      n = sys3 (__NR_read, sfd, info, sizeof info);
      if (n <= 0)
        continue;
      for (i = 0; i < n / (long) sizeof info[0]; i++)
        {
          int s = (int) info[i].ssi_signo;

          if (s == SIGCHLD_)
            continue;   /* reaped at the top of the loop */
          if (s == SBX_INIT_SIGNAL_KILL_TREE)
            kill_tree ();
          else
            forward (s);
        }
    }
}

#ifdef SBX_INIT_LIBC

int
main (int argc, char **argv)
{
  long frame[64];
  int i;

  frame[0] = argc;
  for (i = 0; i < argc && i < 62; i++)
    frame[1 + i] = (long) argv[i];
  frame[1 + i] = 0;
  return init_main (frame);
}

#elif defined(__x86_64__)

__asm__ (".text\n"
         ".global _start\n"
         "_start:\n"
         "  xor %rbp, %rbp\n"
         "  mov %rsp, %rdi\n"
         "  and $-16, %rsp\n"
         "  call init_main\n"
         "  hlt\n");

#elif defined(__aarch64__)

__asm__ (".text\n"
         ".global _start\n"
         "_start:\n"
         "  mov x29, #0\n"
         "  mov x30, #0\n"
         "  mov x0, sp\n"
         "  and sp, x0, #-16\n"
         "  bl init_main\n"
         "  brk #0\n");

#endif
