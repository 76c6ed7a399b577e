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
 *
 * The run's other listeners (the DNS stub's UDP socket and the forwarders)
 * follow the proxy's on the same channel, one message each, in the order of
 * the spawn request.  An approved IP literal outside 127.0.0.0/8 and ::1 is
 * first added to lo (RTM_NEWADDR, a /32 or /128, scope host, no DAD), so a
 * connection to it stays inside the namespace and reaches its forwarder.
 */
#include <errno.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <linux/if_addr.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include "sbx-linux-private.h"
#include "sbx-linux-child-private.h"
#include "sbx-linux-egress.h"
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

/* Sends @fd over @channel_fd with the one-byte tag @tag. */
SBX_CHILD_FUNC static long
child_send_fd (int  channel_fd,
               long fd,
               char tag)
{
  struct msghdr msg;
  struct iovec iov;
  struct cmsghdr *cmsg;
  union
  {
    char            buf[CMSG_SPACE (sizeof (int))];
    struct cmsghdr  align;
  } control;
  char byte = tag;
  int *slot;
  long r;

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
  return r < 0 ? r : 0;
}

SBX_CHILD_FUNC long
sbx_linux_child_egress_listen (int      channel_fd,
                               uint16_t port)
{
  struct sockaddr_in addr;
  long fd, r;

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
    r = child_send_fd (channel_fd, fd, 'L');
  sbx_child_close (fd);
  return r < 0 ? r : 0;
}

/* Adds @l's address to lo (ifindex 1 in every fresh namespace). */
SBX_CHILD_FUNC static long
child_add_address (const SbxLinuxEgressListen *l)
{
  union
  {
    uint8_t         bytes[128];
    struct nlmsghdr align;
  } req, ack;
  struct nlmsghdr *nh = &req.align;
  struct ifaddrmsg *ifa;
  struct rtattr *rta;
  struct sockaddr_nl nl;
  unsigned int alen = l->family == SBX_LISTEN_IPV6 ? 16 : 4;
  unsigned int at;
  long fd, r;

  sbx_child_zero (&req, sizeof req);
  sbx_child_zero (&ack, sizeof ack);
  sbx_child_zero (&nl, sizeof nl);
  nl.nl_family = AF_NETLINK;
  nh->nlmsg_type = RTM_NEWADDR;
  nh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_REPLACE;
  nh->nlmsg_seq = 1;
  ifa = (struct ifaddrmsg *) (void *) (req.bytes + NLMSG_HDRLEN);
  ifa->ifa_family = l->family == SBX_LISTEN_IPV6 ? AF_INET6 : AF_INET;
  ifa->ifa_prefixlen = (unsigned char) (alen * 8);
  ifa->ifa_flags = IFA_F_NODAD | IFA_F_PERMANENT;
  ifa->ifa_scope = RT_SCOPE_HOST;
  ifa->ifa_index = 1;
  at = NLMSG_HDRLEN + NLMSG_ALIGN (sizeof (struct ifaddrmsg));
  for (int k = 0; k < 2; k++)
    {
      rta = (struct rtattr *) (void *) (req.bytes + at);
      rta->rta_type = k == 0 ? IFA_LOCAL : IFA_ADDRESS;
      rta->rta_len = (unsigned short) RTA_LENGTH (alen);
      for (unsigned int i = 0; i < alen; i++)
        ((volatile uint8_t *) RTA_DATA (rta))[i] = l->address[i];
      at += RTA_ALIGN (RTA_LENGTH (alen));
    }
  nh->nlmsg_len = at;

  fd = sbx_raw_syscall3 (__NR_socket, AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
  if (fd < 0)
    return fd;
  r = sbx_raw_syscall6 (__NR_sendto, fd, (long) &req, at, 0, (long) &nl, sizeof nl);
  if (r >= 0)
    {
      do
        r = sbx_raw_syscall6 (__NR_recvfrom, fd, (long) &ack, sizeof ack, 0, 0, 0);
      while (r == -EINTR);
    }
  sbx_child_close (fd);
  if (r < 0)
    return r;
  if ((size_t) r < NLMSG_HDRLEN + sizeof (struct nlmsgerr) || ack.align.nlmsg_type != NLMSG_ERROR)
    return -EPROTO;
  r = ((struct nlmsgerr *) (void *) (ack.bytes + NLMSG_HDRLEN))->error;
  return r;
}

SBX_CHILD_FUNC static long
child_bind_listener (const SbxLinuxEgressListen *l)
{
  struct sockaddr_in6 a6;
  struct sockaddr_in a4;
  int dgram = l->kind == SBX_LISTEN_DNS_UDP;
  long fd, r;

  fd = sbx_raw_syscall3 (__NR_socket, l->family == SBX_LISTEN_IPV6 ? AF_INET6 : AF_INET,
                         (dgram ? SOCK_DGRAM : SOCK_STREAM) | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return fd;
  if (l->family == SBX_LISTEN_IPV6)
    {
      sbx_child_zero (&a6, sizeof a6);
      a6.sin6_family = AF_INET6;
      a6.sin6_port = child_port_be (l->port);
      for (int i = 0; i < 16; i++)
        ((volatile uint8_t *) &a6.sin6_addr)[i] = l->address[i];
      r = sbx_raw_syscall3 (__NR_bind, fd, &a6, sizeof a6);
    }
  else
    {
      sbx_child_zero (&a4, sizeof a4);
      a4.sin_family = AF_INET;
      a4.sin_port = child_port_be (l->port);
      for (int i = 0; i < 4; i++)
        ((volatile uint8_t *) &a4.sin_addr.s_addr)[i] = l->address[i];
      r = sbx_raw_syscall3 (__NR_bind, fd, &a4, sizeof a4);
    }
  if (r >= 0 && !dgram)
    r = sbx_raw_syscall2 (__NR_listen, fd, 128);
  if (r < 0)
    {
      sbx_child_close (fd);
      return r;
    }
  return fd;
}

SBX_CHILD_FUNC long
sbx_linux_child_egress_listeners (int                         channel_fd,
                                  const SbxLinuxEgressListen *listens,
                                  int                         n_listens)
{
  long fd, r;

  for (int i = 0; i < n_listens; i++)
    {
      if (listens[i].kind == SBX_LINUX_EGRESS_LISTEN_SKIP)
        continue;
      if (listens[i].flags & SBX_LISTEN_F_ADD_ADDRESS)
        {
          r = child_add_address (&listens[i]);
          if (r < 0 && r != -EEXIST)
            return r;
        }
      fd = child_bind_listener (&listens[i]);
      if (fd < 0)
        return fd;
      r = child_send_fd (channel_fd, fd, 'X');
      sbx_child_close (fd);
      if (r < 0)
        return r;
    }
  return 0;
}

SBX_CHILD_FUNC static long
child_file_tree (const char *path)
{
  struct mount_attr attr;
  long tree, r;

  tree = sbx_raw_syscall3 (__NR_open_tree, AT_FDCWD, path, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
  if (tree < 0)
    return tree;
  sbx_child_zero (&attr, sizeof attr);
  attr.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC;
  r = sbx_raw_syscall5 (__NR_mount_setattr, tree, "", AT_EMPTY_PATH, &attr, sizeof attr);
  if (r < 0)
    {
      sbx_child_close (tree);
      return r;
    }
  return tree;
}

SBX_CHILD_FUNC long
sbx_linux_child_egress_files_open (const char *resolv,
                                   const char *hosts,
                                   long        trees[2])
{
  trees[0] = trees[1] = -1;
  trees[0] = child_file_tree (resolv);
  if (trees[0] < 0)
    return trees[0];
  trees[1] = child_file_tree (hosts);
  if (trees[1] < 0)
    {
      sbx_child_close (trees[0]);
      trees[0] = -1;
      return trees[1];
    }
  return 0;
}

SBX_CHILD_FUNC long
sbx_linux_child_egress_files_attach (long trees[2])
{
  static const char *const targets[2] = { "/etc/resolv.conf", "/etc/hosts" };
  long r = 0, target;

  for (int i = 0; i < 2 && r >= 0; i++)
    {
      /* inside the view now: a symlink there resolves within the view */
      target = sbx_raw_syscall4 (__NR_openat, AT_FDCWD, targets[i], O_PATH | O_CLOEXEC, 0);
      if (target == -ENOENT || target == -ENOTDIR)
        continue;   /* the view has no such file: nothing to replace */
      if (target < 0)
        r = target;
      else
        {
          r = sbx_raw_syscall5 (__NR_move_mount, trees[i], "", target, "",
                                MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH);
          sbx_child_close (target);
        }
    }
  for (int i = 0; i < 2; i++)
    {
      sbx_child_close (trees[i]);
      trees[i] = -1;
    }
  return r;
}
