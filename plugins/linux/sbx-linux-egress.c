/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The Linux backend's side of egress: see sbx-linux-egress.h.
 */
#include "sbx-linux-egress.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "sbx-linux-private.h"

gboolean
sbx_linux_egress_validate (const SbxNetPolicyV1  *net,
                           GError               **error)
{
  if (net->proxy_port == 0)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                           "policy: network mode proxy with proxy_port 0");
      return FALSE;
    }
  if (net->n_tcp_ports != 0)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   "policy: network mode proxy with %u TCP ports (only the proxy is reachable)",
                   net->n_tcp_ports);
      return FALSE;
    }
  return TRUE;
}

const SbxPolicyV1 *
sbx_linux_egress_rung2_policy (const SbxPolicyV1      *policy,
                               SbxPolicyV1            *copy,
                               SbxNetPolicyV1         *net_copy,
                               const SbxLinuxReporter *reporter)
{
  *copy = *policy;
  *net_copy = *policy->net;
  net_copy->mode = SBX_NET_MODE_DENY;
  net_copy->flags = 0;
  net_copy->proxy_port = 0;
  copy->net = net_copy;
  sbx_linux_report (reporter, SBX_ABI_FEATURE_TARGET_NETWORK, SBX_ABI_REPORT_NARROWED,
                    "the egress route's proxy needs a private network namespace (linux-userns); "
                    "without one Landlock cannot keep TCP to the proxy on loopback, so the network "
                    "is closed instead: no target is reachable, and network.proxy-target.v1 grants "
                    "fail closed (target-network does not hold). Hint: allow unprivileged user "
                    "namespaces to get the route");
  return copy;
}

static int
above_stdio (int fd)
{
  int moved;

  if (fd < 0 || fd > 2)
    return fd;
  moved = fcntl (fd, F_DUPFD_CLOEXEC, 3);
  close (fd);
  return moved;
}

gboolean
sbx_linux_egress_channel_open (int    fds[2],
                               char **error_message)
{
  int errsv;

  fds[0] = fds[1] = -1;
  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds) != 0)
    {
      errsv = errno;
      *error_message = g_strdup_printf ("linux-userns: socketpair for the egress listener: %s",
                                        g_strerror (errsv));
      return FALSE;
    }
  fds[0] = above_stdio (fds[0]);
  fds[1] = above_stdio (fds[1]);
  if (fds[0] < 0 || fds[1] < 0)
    {
      errsv = errno;
      if (fds[0] >= 0)
        close (fds[0]);
      if (fds[1] >= 0)
        close (fds[1]);
      fds[0] = fds[1] = -1;
      *error_message = g_strdup_printf ("linux-userns: fcntl(F_DUPFD_CLOEXEC): %s", g_strerror (errsv));
      return FALSE;
    }
  return TRUE;
}

int
sbx_linux_egress_channel_receive (int    fd,
                                  char **error_message)
{
  union
  {
    char           buf[CMSG_SPACE (sizeof (int))];
    struct cmsghdr align;
  } control;
  struct msghdr msg = { 0 };
  struct iovec iov;
  struct cmsghdr *cmsg;
  char byte = 0;
  int listener = -1, listening = 0, type = 0, errsv;
  socklen_t len = sizeof listening;
  ssize_t n;

  memset (&control, 0, sizeof control);
  iov.iov_base = &byte;
  iov.iov_len = 1;
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control.buf;
  msg.msg_controllen = sizeof control.buf;
  do
    n = recvmsg (fd, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
  while (n < 0 && errno == EINTR);
  errsv = errno;
  for (cmsg = CMSG_FIRSTHDR (&msg); n > 0 && cmsg != NULL; cmsg = CMSG_NXTHDR (&msg, cmsg))
    if (cmsg->cmsg_level == SOL_SOCKET && cmsg->cmsg_type == SCM_RIGHTS
        && cmsg->cmsg_len == CMSG_LEN (sizeof (int)))
      memcpy (&listener, CMSG_DATA (cmsg), sizeof listener);
  if (n != 1 || byte != 'L' || listener < 0 || (msg.msg_flags & MSG_CTRUNC))
    {
      if (listener >= 0)
        close (listener);
      *error_message = g_strdup_printf ("linux-userns: the sandbox's egress listener did not arrive (%s)",
                                        n < 0 ? g_strerror (errsv) : "no descriptor");
      return -1;
    }
  listener = above_stdio (listener);
  len = sizeof listening;
  if (listener < 0 || getsockopt (listener, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) != 0 || !listening
      || (len = sizeof type, getsockopt (listener, SOL_SOCKET, SO_TYPE, &type, &len)) != 0 || type != SOCK_STREAM)
    {
      if (listener >= 0)
        close (listener);
      *error_message = g_strdup ("linux-userns: the sandbox's egress listener is not a listening TCP socket");
      return -1;
    }
  return listener;
}
