/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Child code of the egress listener (a child-code unit: the rules of
 * sbx-linux-child-private.h apply; raw system calls, no libc, no TLS).
 *
 * A, in the sandbox's fresh network namespace with loopback up, binds a
 * TCP listener on 127.0.0.1:<proxy port> and passes it to the supervisor
 * over a socketpair (SCM_RIGHTS), then closes its own copy before it clones
 * the target: the listener exists in the supervisor only, where the egress
 * plugin serves it, and it is the only route out of the namespace.  The
 * socket belongs to the namespace it was created in, so connections from
 * the sandbox's loopback arrive on it whichever process holds it.
 */
#include <errno.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "sbx-linux-child-private.h"
#include "sbx-linux-child.h"

/* Network byte order of a port, without htons() (a libc function). */
SBX_CHILD_FUNC static uint16_t
child_port_be (uint16_t port)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  return (uint16_t) (((port & 0xff) << 8) | (port >> 8));
#else
  return port;
#endif
}

SBX_CHILD_FUNC long
sbx_linux_child_egress_listen (int      channel_fd,
                               uint16_t port)
{
  struct sockaddr_in addr;
  struct msghdr msg;
  struct iovec iov;
  struct cmsghdr *cmsg;
  union
  {
    char            buf[CMSG_SPACE (sizeof (int))];
    struct cmsghdr  align;
  } control;
  char byte = 'L';
  long fd, r;
  int *slot;

  fd = sbx_raw_syscall3 (__NR_socket, AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return fd;
  sbx_child_zero (&addr, sizeof addr);
  addr.sin_family = AF_INET;
  addr.sin_port = child_port_be (port);
  ((unsigned char *) &addr.sin_addr.s_addr)[0] = 127;
  ((unsigned char *) &addr.sin_addr.s_addr)[3] = 1;
  r = sbx_raw_syscall3 (__NR_bind, fd, &addr, sizeof addr);
  if (r >= 0)
    r = sbx_raw_syscall2 (__NR_listen, fd, 128);
  if (r >= 0)
    {
      sbx_child_zero (&msg, sizeof msg);
      sbx_child_zero (&control, sizeof control);
      iov.iov_base = &byte;
      iov.iov_len = 1;
      msg.msg_iov = &iov;
      msg.msg_iovlen = 1;
      msg.msg_control = control.buf;
      msg.msg_controllen = sizeof control.buf;
      cmsg = CMSG_FIRSTHDR (&msg);
      cmsg->cmsg_level = SOL_SOCKET;
      cmsg->cmsg_type = SCM_RIGHTS;
      cmsg->cmsg_len = CMSG_LEN (sizeof (int));
      slot = (int *) (void *) CMSG_DATA (cmsg);
      *slot = (int) fd;
      do
        r = sbx_raw_syscall3 (__NR_sendmsg, channel_fd, &msg, MSG_NOSIGNAL);
      while (r == -EINTR);
      if (r >= 0 && r != 1)
        r = -EIO;
    }
  sbx_child_close (fd);
  return r < 0 ? r : 0;
}
