/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Raw system calls for code that runs in a child between clone() and
 * execve().
 *
 * Why not glibc's syscall(): it stores failures in errno, and a child made
 * with CLONE_VM (vfork-style) shares the parent thread's TLS, so every failing
 * call would overwrite the suspended parent thread's errno — and a successful
 * execve() never returns to restore it.  These wrappers touch no memory but
 * their arguments and return -errno in the kernel's convention (a value in
 * [-4095, -1] is an error).
 *
 * Why no_sanitize: the child may run on the parent's memory (CLONE_VM).
 * AddressSanitizer instrumentation of a function allocates "fake stack"
 * frames from per-thread runtime state (detect_stack_use_after_return) and
 * poisons shadow memory; UBSan handlers may print and allocate.  None of that
 * is async-signal-safe, and with a shared address space it corrupts the
 * parent's state.  Every function on the child path therefore carries
 * SBX_CHILD_FUNC and calls only other SBX_CHILD_FUNC functions and these
 * wrappers (never memset/memcpy, which ASan intercepts).
 */
#pragma once

#include <stdint.h>
#include <errno.h>
#include <unistd.h>
#include <sys/syscall.h>

#if defined(__clang__) || (defined(__GNUC__) && __GNUC__ >= 8)
#define SBX_CHILD_FUNC __attribute__ ((no_sanitize ("address", "undefined")))
#else
#define SBX_CHILD_FUNC
#endif

#define SBX_RAW_IS_ERROR(r) ((unsigned long) (r) > (unsigned long) -4096L)

#define SBX_ARCH_SYSCALL_ATTRS SBX_CHILD_FUNC
#include "sbx-syscall-arch.h"

#ifdef SBX_HAVE_ARCH_SYSCALL

SBX_CHILD_FUNC static inline long
sbx_raw_syscall6 (long n, long a1, long a2, long a3, long a4, long a5, long a6)
{
  return sbx_arch_syscall6 (n, a1, a2, a3, a4, a5, a6);
}

#else

/* Fallback for other architectures: glibc's syscall() with errno saved and
 * restored.  Correct for fork-style children (own TLS); CLONE_VM callers on
 * these architectures should add an inline-assembly variant above. */
SBX_CHILD_FUNC static inline long
sbx_raw_syscall6 (long n, long a1, long a2, long a3, long a4, long a5, long a6)
{
  int saved = errno;
  long r = syscall (n, a1, a2, a3, a4, a5, a6);

  if (r == -1)
    r = -errno;
  errno = saved;
  return r;
}

#endif

#define sbx_raw_syscall0(n)                   sbx_raw_syscall6 ((n), 0, 0, 0, 0, 0, 0)
#define sbx_raw_syscall1(n, a)                sbx_raw_syscall6 ((n), (long) (a), 0, 0, 0, 0, 0)
#define sbx_raw_syscall2(n, a, b)             sbx_raw_syscall6 ((n), (long) (a), (long) (b), 0, 0, 0, 0)
#define sbx_raw_syscall3(n, a, b, c)          sbx_raw_syscall6 ((n), (long) (a), (long) (b), (long) (c), 0, 0, 0)
#define sbx_raw_syscall4(n, a, b, c, d)       sbx_raw_syscall6 ((n), (long) (a), (long) (b), (long) (c), (long) (d), 0, 0)
#define sbx_raw_syscall5(n, a, b, c, d, e)    sbx_raw_syscall6 ((n), (long) (a), (long) (b), (long) (c), (long) (d), (long) (e), 0)
