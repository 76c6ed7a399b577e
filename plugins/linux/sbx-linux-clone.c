/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The bottom of the Linux spawn path, parent side: see sbx-linux-clone.h.
 */
#include "sbx-linux-clone.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/socket.h>

#define STACK_SIZE SBX_LINUX_STACK_SIZE
#define GUARD_SIZE SBX_LINUX_GUARD_SIZE

char *
sbx_linux_stacks_new (int n_stacks)
{
  char *mem = mmap (NULL, (size_t) n_stacks * (STACK_SIZE + GUARD_SIZE), PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);

  if (mem == MAP_FAILED)
    return NULL;
  for (int i = 0; i < n_stacks; i++)
    mprotect (mem + (size_t) i * (STACK_SIZE + GUARD_SIZE), GUARD_SIZE, PROT_NONE);
  return mem;
}

void
sbx_linux_stacks_free (char *stacks,
                       int   n_stacks)
{
  if (stacks != NULL)
    munmap (stacks, (size_t) n_stacks * (STACK_SIZE + GUARD_SIZE));
}

char *
sbx_linux_stack_top (char *stacks,
                     int   i)
{
  return stacks + (size_t) (i + 1) * (GUARD_SIZE + STACK_SIZE);
}

int
sbx_linux_fd_above_stdio (int fd)
{
  int moved;

  if (fd < 0 || fd > 2)
    return fd;
  moved = fcntl (fd, F_DUPFD_CLOEXEC, 3);
  if (moved < 0)
    {
      int saved_errno = errno;

      close (fd);
      errno = saved_errno;
      return -1;
    }
  close (fd);
  return moved;
}

/* Both ends of a new pair above stdio; on failure both closed. */
static int
pair_above_stdio (int          fds[2],
                  const char **failed_call)
{
  int saved_errno;

  fds[0] = sbx_linux_fd_above_stdio (fds[0]);
  fds[1] = sbx_linux_fd_above_stdio (fds[1]);
  if (fds[0] >= 0 && fds[1] >= 0)
    return 0;
  saved_errno = errno;
  for (int i = 0; i < 2; i++)
    if (fds[i] >= 0)
      close (fds[i]);
  fds[0] = fds[1] = -1;
  *failed_call = "fcntl(F_DUPFD_CLOEXEC)";
  errno = saved_errno;
  return -1;
}

int
sbx_linux_pipe (int          fds[2],
                const char **failed_call)
{
  if (pipe2 (fds, O_CLOEXEC) != 0)
    {
      fds[0] = fds[1] = -1;
      *failed_call = "pipe2";
      return -1;
    }
  return pair_above_stdio (fds, failed_call);
}

int
sbx_linux_seqpacket (int          fds[2],
                     const char **failed_call)
{
  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds) != 0)
    {
      fds[0] = fds[1] = -1;
      *failed_call = "socketpair";
      return -1;
    }
  return pair_above_stdio (fds, failed_call);
}

int
sbx_linux_receive_fds (int   sock,
                       char *byte,
                       int  *fds,
                       int   max_fds)
{
  return sbx_linux_receive_fds_from (sock, byte, fds, max_fds, NULL);
}

int
sbx_linux_receive_fds_from (int    sock,
                            char  *byte,
                            int   *fds,
                            int    max_fds,
                            pid_t *sender)
{
  union
  {
    struct cmsghdr hdr;
    char           buf[CMSG_SPACE ((SBX_LINUX_MAX_RECEIVED_FDS + 1) * sizeof (int))
                       + CMSG_SPACE (sizeof (struct ucred))];
  } control;
  int got[SBX_LINUX_MAX_RECEIVED_FDS + 1];
  struct msghdr msg = { 0 };
  struct iovec iov;
  int n_got = 0;
  ssize_t n;

  memset (&control, 0, sizeof control);
  *byte = 0;
  if (sender != NULL)
    *sender = 0;
  iov.iov_base = byte;
  iov.iov_len = 1;
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control.buf;
  msg.msg_controllen = sizeof control.buf;
  do
    n = recvmsg (sock, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
  while (n < 0 && errno == EINTR);
  if (n < 0)
    return -1;
  for (struct cmsghdr *cmsg = CMSG_FIRSTHDR (&msg); cmsg != NULL; cmsg = CMSG_NXTHDR (&msg, cmsg))
    if (cmsg->cmsg_level == SOL_SOCKET && cmsg->cmsg_type == SCM_RIGHTS)
      {
        size_t len = (cmsg->cmsg_len - CMSG_LEN (0)) / sizeof (int);

        for (size_t k = 0; k < len && n_got < (int) (sizeof got / sizeof got[0]); k++)
          memcpy (&got[n_got++], CMSG_DATA (cmsg) + k * sizeof (int), sizeof (int));
      }
    else if (cmsg->cmsg_level == SOL_SOCKET && cmsg->cmsg_type == SCM_CREDENTIALS && sender != NULL
             && cmsg->cmsg_len >= CMSG_LEN (sizeof (struct ucred)))
      {
        struct ucred cred;

        memcpy (&cred, CMSG_DATA (cmsg), sizeof cred);
        *sender = cred.pid;
      }
  if (n != 1 || n_got > max_fds || (msg.msg_flags & (MSG_CTRUNC | MSG_TRUNC)))
    {
      for (int k = 0; k < n_got; k++)
        close (got[k]);
      errno = EPROTO;
      return -1;
    }
  for (int k = 0; k < n_got; k++)
    {
      fds[k] = sbx_linux_fd_above_stdio (got[k]);
      if (fds[k] < 0)
        {
          int saved_errno = errno;

          for (int j = 0; j < n_got; j++)
            if (j < k)
              close (fds[j]);
            else if (j > k)
              close (got[j]);
          errno = saved_errno;
          return -1;
        }
    }
  return n_got;
}

pid_t
sbx_linux_clone_vfork_on (int   (*fn) (void *),
                          void   *arg,
                          int     flags,
                          char   *stack_top,
                          int    *pidfd_out)
{
  sigset_t all, old;
  int saved_errno;
  pid_t pid;

  sigfillset (&all);
  pthread_sigmask (SIG_SETMASK, &all, &old);
  saved_errno = errno;
  pid = clone (fn, stack_top, flags | CLONE_VM | CLONE_VFORK | SIGCHLD, arg, pidfd_out);
  if (pid < 0)
    pid = -errno;
  errno = saved_errno;
  pthread_sigmask (SIG_SETMASK, &old, NULL);
  return pid;
}

pid_t
sbx_linux_clone_vfork (int   (*fn) (void *),
                       void   *arg,
                       int     flags,
                       int    *pidfd_out)
{
  char *stacks = sbx_linux_stacks_new (1);
  pid_t pid;

  if (stacks == NULL)
    return -errno;
  pid = sbx_linux_clone_vfork_on (fn, arg, flags, sbx_linux_stack_top (stacks, 0), pidfd_out);
  sbx_linux_stacks_free (stacks, 1);
  return pid;
}
