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

/* Receives one message of one byte and at most one descriptor from the
 * spawn's channel (non-blocking: the child sent everything before the
 * spawn returned).  Returns recvmsg's count; *out_fd is -1 when no
 * descriptor arrived whole (a truncated control message counts as none,
 * and one that did arrive is closed); *out_errno is errno after a failure. */
static ssize_t
channel_receive_one (int   fd,
                     char *out_tag,
                     int  *out_fd,
                     int  *out_errno)
{
  union
  {
    char           buf[CMSG_SPACE (sizeof (int))];
    struct cmsghdr align;
  } control;
  struct msghdr msg = { 0 };
  struct iovec iov;
  struct cmsghdr *cmsg;
  ssize_t n;

  *out_tag = 0;
  *out_fd = -1;
  memset (&control, 0, sizeof control);
  iov.iov_base = out_tag;
  iov.iov_len = 1;
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control.buf;
  msg.msg_controllen = sizeof control.buf;
  do
    n = recvmsg (fd, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
  while (n < 0 && errno == EINTR);
  *out_errno = errno;
  for (cmsg = CMSG_FIRSTHDR (&msg); n > 0 && cmsg != NULL; cmsg = CMSG_NXTHDR (&msg, cmsg))
    if (cmsg->cmsg_level == SOL_SOCKET && cmsg->cmsg_type == SCM_RIGHTS
        && cmsg->cmsg_len == CMSG_LEN (sizeof (int)))
      memcpy (out_fd, CMSG_DATA (cmsg), sizeof *out_fd);
  if ((msg.msg_flags & MSG_CTRUNC) && *out_fd >= 0)
    {
      close (*out_fd);
      *out_fd = -1;
    }
  return n;
}

int
sbx_linux_egress_channel_receive (int    fd,
                                  char **error_message)
{
  char byte = 0;
  int listener = -1, listening = 0, type = 0, errsv;
  socklen_t len = sizeof listening;
  ssize_t n;

  n = channel_receive_one (fd, &byte, &listener, &errsv);
  if (n != 1 || byte != 'L' || listener < 0)
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

/* The listener kinds this backend makes a socket for; any other is copied
 * as SBX_LINUX_EGRESS_LISTEN_SKIP, and A sends nothing for it (kinds are
 * additive, see SbxListenV1). */
static gboolean
listen_kind_known (uint32_t kind)
{
  return kind == SBX_LISTEN_DNS_UDP || kind == SBX_LISTEN_FORWARD || kind == SBX_LISTEN_DNS_TCP;
}

SbxLinuxEgressListen *
sbx_linux_egress_listens_copy (const SbxSpawnRequestV1 *request,
                               int                     *n_out,
                               char                   **error_message)
{
  SbxLinuxEgressListen *out;

  *n_out = 0;
  if (request->struct_size < SBX_SPAWN_REQUEST_V1_LISTEN_SIZE || request->n_listens == 0)
    return NULL;
  if (request->listens == NULL || request->listen_fds == NULL || request->n_listens > 8192)
    {
      *n_out = -1;
      *error_message = g_strdup_printf ("spawn request: %u egress listeners without a list or fd array "
                                        "(or more than 8192)", request->n_listens);
      return NULL;
    }
  out = g_new0 (SbxLinuxEgressListen, request->n_listens);
  for (guint32 i = 0; i < request->n_listens; i++)
    {
      const SbxListenV1 *l = &request->listens[i];

      if (l->struct_size < SBX_LISTEN_V1_MIN_SIZE ||
          (l->family != SBX_LISTEN_IPV4 && l->family != SBX_LISTEN_IPV6) || l->port == 0 ||
          (l->flags & ~SBX_LISTEN_F_ADD_ADDRESS) != 0)
        {
          g_free (out);
          *n_out = -1;
          *error_message = g_strdup_printf ("spawn request: egress listener %u is invalid (struct_size %u, "
                                            "kind %u, family %u, port %u, flags 0x%x)", i, l->struct_size,
                                            l->kind, l->family, l->port, l->flags);
          return NULL;
        }
      /* an unknown kind's fd stays -1 */
      out[i].kind = listen_kind_known (l->kind) ? l->kind : SBX_LINUX_EGRESS_LISTEN_SKIP;
      out[i].family = l->family;
      out[i].flags = l->flags;
      out[i].port = l->port;
      memcpy (out[i].address, l->address, sizeof out[i].address);
      request->listen_fds[i] = -1;
    }
  *n_out = (int) request->n_listens;
  return out;
}

void
sbx_linux_egress_close_listens (const SbxSpawnRequestV1 *request)
{
  if (request->struct_size < SBX_SPAWN_REQUEST_V1_LISTEN_SIZE || request->listen_fds == NULL)
    return;
  for (guint32 i = 0; i < request->n_listens; i++)
    if (request->listen_fds[i] >= 0)
      {
        close (request->listen_fds[i]);
        request->listen_fds[i] = -1;
      }
}

gboolean
sbx_linux_egress_channel_receive_listens (int                      fd,
                                          const SbxSpawnRequestV1 *request,
                                          int                      n,
                                          char                   **error_message)
{
  for (int i = 0; i < n; i++)
    {
      char byte = 0;
      int got = -1, type = 0, want, errsv;
      socklen_t len;
      ssize_t r;

      if (!listen_kind_known (request->listens[i].kind))
        continue;   /* skipped by the copy: A sends nothing for it */
      r = channel_receive_one (fd, &byte, &got, &errsv);
      want = request->listens[i].kind == SBX_LISTEN_DNS_UDP ? SOCK_DGRAM : SOCK_STREAM;
      len = sizeof type;
      if (r != 1 || byte != 'X' || got < 0 ||
          (got = above_stdio (got)) < 0 ||
          getsockopt (got, SOL_SOCKET, SO_TYPE, &type, &len) != 0 || type != want)
        {
          if (got >= 0)
            close (got);
          sbx_linux_egress_close_listens (request);
          *error_message = g_strdup_printf ("linux-userns: the sandbox's egress listener %d did not arrive (%s)", i,
                                            r < 0 ? g_strerror (errsv) : "no descriptor of its kind");
          return FALSE;
        }
      request->listen_fds[i] = got;
    }
  return TRUE;
}

/* The sandbox's resolver: the DNS stub alone.  attempts:1 because the stub
 * answers at once (a refusal is final), so a retry only doubles the wait. */
static const char resolv_text[] =
  "# sbx: the sandbox's DNS stub answers the approved names only\n"
  "nameserver 127.0.0.53\n"
  "options attempts:1 timeout:2\n";
/* localhost alone: no host entry may shadow an approved name (the host's
 * /etc/hosts may list any name), and loopback is the sandbox's own. */
static const char hosts_text[] =
  "127.0.0.1\tlocalhost\n"
  "::1\tlocalhost\n"
  "# sbx: the sandbox's own hostname (sbx-linux-hosts.c)\n"
  SBX_LINUX_HOSTNAME_ADDRESS "\tsbx\n";

gboolean
sbx_linux_egress_files_new (SbxLinuxSpec      *spec,
                            const SbxPolicyV1 *policy,
                            GError           **error)
{
  g_autofree char *dir = NULL;
  g_autofree char *resolv = NULL;
  g_autofree char *hosts = NULL;
  int saved_errno;

  dir = g_build_filename (policy->state_dir != NULL ? policy->state_dir : g_get_tmp_dir (),
                          policy->state_dir != NULL ? "linux-egress-XXXXXX" : "sbx-linux-egress-XXXXXX", NULL);
  if (g_mkdtemp_full (dir, 0700) == NULL)
    {
      saved_errno = errno;
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
                   "creating the directory of the sandbox's resolver files under %s: %s",
                   policy->state_dir != NULL ? policy->state_dir : g_get_tmp_dir (), g_strerror (saved_errno));
      return FALSE;
    }
  resolv = g_build_filename (dir, "resolv.conf", NULL);
  hosts = g_build_filename (dir, "hosts", NULL);
  spec->egress_dir = g_steal_pointer (&dir);
  if (!g_file_set_contents_full (resolv, resolv_text, -1, G_FILE_SET_CONTENTS_NONE, 0444, error) ||
      !g_file_set_contents_full (hosts, hosts_text, -1, G_FILE_SET_CONTENTS_NONE, 0444, error))
    {
      unlink (resolv);
      rmdir (spec->egress_dir);
      g_clear_pointer (&spec->egress_dir, g_free);
      return FALSE;
    }
  spec->egress_resolv = g_steal_pointer (&resolv);
  spec->egress_hosts = g_steal_pointer (&hosts);
  return TRUE;
}

void
sbx_linux_egress_files_free (SbxLinuxSpec *spec)
{
  if (spec->egress_resolv != NULL)
    unlink (spec->egress_resolv);
  if (spec->egress_hosts != NULL)
    unlink (spec->egress_hosts);
  if (spec->egress_dir != NULL)
    rmdir (spec->egress_dir);
  g_clear_pointer (&spec->egress_resolv, g_free);
  g_clear_pointer (&spec->egress_hosts, g_free);
  g_clear_pointer (&spec->egress_dir, g_free);
}
