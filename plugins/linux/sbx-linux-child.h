/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Helpers for code that runs between clone() and execve() in the Linux
 * backend's children (probe children, sandbox init-to-be "A" and target "B").
 *
 * Those children are created with CLONE_VM|CLONE_VFORK on a private stack:
 * they share the supervisor's memory while the cloning thread is suspended.
 * So, like posix_spawn's child: raw system calls only (sbx-raw-syscall.h:
 * no errno, no libc), no allocation, no locks, no stdio, no GLib; every
 * function carries SBX_CHILD_FUNC (no ASan/UBSan instrumentation: ASan's
 * fake stacks and shadow poisoning are per-thread runtime state of the
 * parent) and string helpers are plain loops through volatile pointers so
 * the compiler cannot turn them into calls to memcpy/strlen, which ASan
 * intercepts.  Everything a child needs is computed by the parent first.
 */
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/mount.h>
#include <linux/openat2.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include "sbx-raw-syscall.h"

#ifndef AT_RECURSIVE
#define AT_RECURSIVE 0x8000
#endif
#ifndef MNT_DETACH
#define MNT_DETACH 2
#endif
#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

/* The kernel's struct sigaction (not glibc's). */
struct sbx_kernel_sigaction
{
  void        (*handler) (int);
  unsigned long flags;
  void        (*restorer) (void);
  uint64_t      mask;
};

SBX_CHILD_FUNC static inline size_t
sbx_child_strlen (const char *s)
{
  const volatile char *p = s;
  size_t n = 0;

  while (p[n] != '\0')
    n++;
  return n;
}

SBX_CHILD_FUNC static inline int
sbx_child_has_slash (const char *s)
{
  const volatile char *p = s;

  for (; *p != '\0'; p++)
    if (*p == '/')
      return 1;
  return 0;
}

SBX_CHILD_FUNC static inline void
sbx_child_zero (void *dst,
                size_t n)
{
  volatile unsigned char *d = dst;
  size_t i;

  for (i = 0; i < n; i++)
    d[i] = 0;
}

/* Appends @src to @dst (capacity @cap, current length *len).  0 or -ENAMETOOLONG. */
SBX_CHILD_FUNC static inline int
sbx_child_append (char       *dst,
                  size_t      cap,
                  size_t     *len,
                  const char *src,
                  size_t      n)
{
  volatile char *d = dst;
  const volatile char *s = src;
  size_t i;

  if (*len + n + 1 > cap)
    return -ENAMETOOLONG;
  for (i = 0; i < n; i++)
    d[*len + i] = s[i];
  *len += n;
  d[*len] = '\0';
  return 0;
}

/* Formats a non-negative number into @buf (at least 24 bytes). */
SBX_CHILD_FUNC static inline void
sbx_child_format_long (char *buf,
                       long  v)
{
  char tmp[24];
  volatile char *out = buf;
  int n = 0, i;

  do
    {
      tmp[n++] = (char) ('0' + v % 10);
      v /= 10;
    }
  while (v > 0 && n < 23);
  for (i = 0; i < n; i++)
    out[i] = tmp[n - 1 - i];
  out[n] = '\0';
}

SBX_CHILD_FUNC static inline long
sbx_child_openat2 (int         dirfd,
                   const char *path,
                   uint64_t    flags,
                   uint64_t    resolve)
{
  struct open_how how;

  sbx_child_zero (&how, sizeof how);
  how.flags = flags;
  how.resolve = resolve;
  return sbx_raw_syscall4 (__NR_openat2, dirfd, path, &how, sizeof how);
}

SBX_CHILD_FUNC static inline void
sbx_child_close (long fd)
{
  if (fd >= 0)
    sbx_raw_syscall1 (__NR_close, fd);
}

/* Writes @len bytes of @data to the file at @path (for /proc/self/uid_map and friends). */
SBX_CHILD_FUNC static inline long
sbx_child_write_file (const char *path,
                      const char *data,
                      size_t      len)
{
  long fd = sbx_raw_syscall4 (__NR_openat, AT_FDCWD, path, O_WRONLY | O_CLOEXEC, 0);
  long r;

  if (fd < 0)
    return fd;
  do
    r = sbx_raw_syscall3 (__NR_write, fd, data, len);
  while (r == -EINTR);
  sbx_child_close (fd);
  if (r >= 0 && (size_t) r != len)
    r = -EIO;
  return r < 0 ? r : 0;
}

/* Every handler back to SIG_DFL (the children inherit the supervisor's
 * handlers, which point into its code and would run on its memory).  The
 * signal mask stays as the parent set it (all blocked) until the target's
 * execve. */
SBX_CHILD_FUNC static inline void
sbx_child_reset_signals (void)
{
  struct sbx_kernel_sigaction sa;
  int signo;

  sbx_child_zero (&sa, sizeof sa);
  for (signo = 1; signo <= 64; signo++)
    {
      if (signo == SIGKILL || signo == SIGSTOP)
        continue;
      sbx_raw_syscall4 (__NR_rt_sigaction, signo, &sa, 0, 8);
    }
}

/* SIG_IGN for each signal of @mask (bit N-1: signal N), which execve
 * keeps: the target inherits what its caller ignored
 * (SBX_SPAWN_IGNORED_SIGNALS).  SIGKILL and SIGSTOP are never in it (the
 * spawn request was validated). */
SBX_CHILD_FUNC static inline long
sbx_child_ignore_signals (uint64_t mask)
{
  struct sbx_kernel_sigaction sa;
  int signo;
  long r;

  sbx_child_zero (&sa, sizeof sa);
  /* SIG_IGN: the kernel's value 1 (no libc header in child code) */
  sa.handler = (void (*) (int)) 1;
  for (signo = 1; signo <= 64; signo++)
    {
      if (!(mask & ((uint64_t) 1 << (signo - 1))))
        continue;
      r = sbx_raw_syscall4 (__NR_rt_sigaction, signo, &sa, 0, 8);
      if (r < 0)
        return r;
    }
  return 0;
}

SBX_CHILD_FUNC static inline long
sbx_child_set_sigmask (uint64_t mask)
{
  return sbx_raw_syscall4 (__NR_rt_sigprocmask, SIG_SETMASK, &mask, 0, 8);
}

/* A fresh filesystem instance of @fstype (fsopen/fsconfig), created but
 * not mounted.  @options: NULL-terminated key, value pairs (a NULL value
 * sets the key as a flag).  Returns the filesystem context fd or -errno. */
SBX_CHILD_FUNC static inline long
sbx_child_fscreate (const char        *fstype,
                    const char *const *options)
{
  long fsfd, r;
  size_t i;

  fsfd = sbx_raw_syscall2 (__NR_fsopen, fstype, FSOPEN_CLOEXEC);
  if (fsfd < 0)
    return fsfd;
  for (i = 0; options != NULL && options[i] != NULL; i += 2)
    {
      r = sbx_raw_syscall5 (__NR_fsconfig, fsfd, options[i + 1] != 0 ? FSCONFIG_SET_STRING : FSCONFIG_SET_FLAG,
                            options[i], options[i + 1], 0);
      if (r < 0)
        {
          sbx_child_close (fsfd);
          return r;
        }
    }
  r = sbx_raw_syscall5 (__NR_fsconfig, fsfd, FSCONFIG_CMD_CREATE, 0, 0, 0);
  if (r < 0)
    {
      sbx_child_close (fsfd);
      return r;
    }
  return fsfd;
}

/* The same instance as a mount fd (fsmount), not yet attached, or -errno. */
SBX_CHILD_FUNC static inline long
sbx_child_fsmount (const char        *fstype,
                   const char *const *options,
                   unsigned int       attr)
{
  long fsfd, mfd;

  fsfd = sbx_child_fscreate (fstype, options);
  if (fsfd < 0)
    return fsfd;
  mfd = sbx_raw_syscall3 (__NR_fsmount, fsfd, FSMOUNT_CLOEXEC, attr);
  sbx_child_close (fsfd);
  return mfd;
}

/* mount_setattr() on the mount (tree) @fd. */
SBX_CHILD_FUNC static inline long
sbx_child_setattr (long         fd,
                   uint64_t     attr_set,
                   uint64_t     propagation,
                   int          recursive)
{
  struct mount_attr attr;

  sbx_child_zero (&attr, sizeof attr);
  attr.attr_set = attr_set;
  attr.propagation = propagation;
  return sbx_raw_syscall5 (__NR_mount_setattr, fd, "",
                           AT_EMPTY_PATH | (recursive ? AT_RECURSIVE : 0),
                           &attr, sizeof attr);
}

/* Attaches the detached mount @mfd on the location @target_fd names. */
SBX_CHILD_FUNC static inline long
sbx_child_attach (long mfd,
                  long target_fd)
{
  return sbx_raw_syscall5 (__NR_move_mount, mfd, "", target_fd, "",
                           MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH);
}

/* Brings "lo" up in a fresh network namespace (127.0.0.1 and ::1 come with it). */
SBX_CHILD_FUNC static inline long
sbx_child_loopback_up (void)
{
  struct ifreq ifr;
  long fd, r;

  fd = sbx_raw_syscall3 (__NR_socket, AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return fd;
  sbx_child_zero (&ifr, sizeof ifr);
  ifr.ifr_name[0] = 'l';
  ifr.ifr_name[1] = 'o';
  r = sbx_raw_syscall3 (__NR_ioctl, fd, SIOCGIFFLAGS, &ifr);
  if (r >= 0)
    {
      ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
      r = sbx_raw_syscall3 (__NR_ioctl, fd, SIOCSIFFLAGS, &ifr);
    }
  sbx_child_close (fd);
  return r;
}

/* Sends @fds (n <= 2) to the supervisor over @sock (SCM_RIGHTS), one byte
 * of payload (n == 0: the byte alone).  0 or -errno. */
SBX_CHILD_FUNC static inline long
sbx_child_send_fds (int        sock,
                    const int *fds,
                    int        n)
{
  struct msghdr msg;
  struct iovec iov;
  union
  {
    struct cmsghdr hdr;
    char           buf[CMSG_SPACE (2 * sizeof (int))];
  } control;
  struct cmsghdr *cmsg;
  char byte = 'U';
  long r;
  int i;

  sbx_child_zero (&msg, sizeof msg);
  sbx_child_zero (&control, sizeof control);
  iov.iov_base = &byte;
  iov.iov_len = 1;
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  if (n == 0)
    {
      /* the byte alone: "no descriptor to hand over" */
      do
        r = sbx_raw_syscall3 (__NR_sendmsg, sock, &msg, MSG_NOSIGNAL);
      while (r == -EINTR);
      return r < 0 ? r : 0;
    }
  msg.msg_control = control.buf;
  msg.msg_controllen = CMSG_SPACE (n * sizeof (int));
  cmsg = &control.hdr;
  cmsg->cmsg_level = SOL_SOCKET;
  cmsg->cmsg_type = SCM_RIGHTS;
  cmsg->cmsg_len = CMSG_LEN (n * sizeof (int));
  for (i = 0; i < n; i++)
    ((int *) (void *) CMSG_DATA (cmsg))[i] = fds[i];
  do
    r = sbx_raw_syscall3 (__NR_sendmsg, sock, &msg, MSG_NOSIGNAL);
  while (r == -EINTR);
  return r < 0 ? r : 0;
}

SBX_CHILD_FUNC static inline __attribute__ ((noreturn)) void
sbx_child_exit (int code)
{
  for (;;)
    sbx_raw_syscall1 (__NR_exit_group, code);
}
