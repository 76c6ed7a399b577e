/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The bottom of the Linux spawn path, parent side (sbx-linux-clone.c): the
 * child stacks, descriptors lifted above stdio, the channels a child sends
 * descriptors on and their receiving end, and the vfork clone.  The probe,
 * the spawn, the zygote, the connect supervisor and egress use these; this
 * file uses none of them.  Plain C and libc, no GLib.  Never installed.
 *
 * Not for child code: everything here calls libc (errno, signal masks),
 * which a CLONE_VM child must not touch (sbx-linux-child-private.h).
 */
#pragma once

#include <sys/types.h>

/* The size of each child stack (A, B, the zygote), and the guard page
 * below it. */
#define SBX_LINUX_STACK_SIZE (256 * 1024)
#define SBX_LINUX_GUARD_SIZE 4096

/* @n_stacks child stacks in one mapping, a guard page below each; NULL
 * with errno set.  The top of stack @i (where a clone starts it) is
 * sbx_linux_stack_top (stacks, i).  Freed with the same @n_stacks. */
char *sbx_linux_stacks_new  (int   n_stacks);
void  sbx_linux_stacks_free (char *stacks,
                             int   n_stacks);
char *sbx_linux_stack_top   (char *stacks,
                             int   i);

/* @fd moved to >= 3 (a caller may run with stdio closed), CLOEXEC; -1 when
 * the move failed (@fd is closed then, errno set).  A negative @fd is
 * returned as it is. */
int sbx_linux_fd_above_stdio (int fd);

/* A pipe, or a SOCK_SEQPACKET socket pair (the channels a child sends
 * descriptors on), both ends CLOEXEC and above stdio.  0, or -1 with errno
 * set, both ends -1 and *failed_call naming what failed. */
int sbx_linux_pipe        (int          fds[2],
                           const char **failed_call);
int sbx_linux_seqpacket   (int          fds[2],
                           const char **failed_call);

/* The most descriptors one message on such a channel carries. */
#define SBX_LINUX_MAX_RECEIVED_FDS 2

/* One message from a channel, which the child sent before it exec'd (so it
 * is there now or never: the read does not block): one byte into *byte,
 * and up to @max_fds (<= SBX_LINUX_MAX_RECEIVED_FDS) descriptors into
 * @fds, close-on-exec and above stdio.  Returns how many arrived, or -1
 * with errno set: recvmsg's errno, or EPROTO for no message, a message of
 * other than one byte, truncated control data or more than @max_fds
 * descriptors (every descriptor that came with it is closed then). */
int sbx_linux_receive_fds (int   sock,
                           char *byte,
                           int  *fds,
                           int   max_fds);
/* The same, and *@sender the sending process's pid as we number it, where
 * @sock has SO_PASSCRED set (the kernel adds the sender's credentials);
 * 0 when the message carried none. */
int sbx_linux_receive_fds_from (int    sock,
                                char  *byte,
                                int   *fds,
                                int    max_fds,
                                pid_t *sender);

/* Clones @fn (@arg) on @stack_top with CLONE_VM|CLONE_VFORK|@flags
 * (+SIGCHLD), every signal blocked in the calling thread around the clone
 * (the child resets its handlers before it unblocks any) and errno kept.
 * Returns the pid (the child has exec'd or exited) or -errno; *pidfd_out
 * gets a pidfd when @flags has CLONE_PIDFD. */
pid_t sbx_linux_clone_vfork_on (int   (*fn) (void *),
                                void   *arg,
                                int     flags,
                                char   *stack_top,
                                int    *pidfd_out);

/* The same on a private stack of its own, freed before it returns. */
pid_t sbx_linux_clone_vfork    (int   (*fn) (void *),
                                void   *arg,
                                int     flags,
                                int    *pidfd_out);
