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
#include "sbx-linux-clone.h"

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

gboolean
sbx_linux_egress_channel_open (int    fds[2],
                               char **error_message)
{
  const char *failed_call = NULL;

  if (sbx_linux_seqpacket (fds, &failed_call) != 0)
    {
      int errsv = errno;

      *error_message = g_strdup_printf ("linux-userns: %s for the egress listener: %s", failed_call,
                                        g_strerror (errsv));
      return FALSE;
    }
  return TRUE;
}

/* One message of one byte and at most one descriptor from the spawn's
 * channel (the child sent everything before the spawn returned): the
 * descriptor, or -1 with *why saying what arrived instead. */
static int
channel_receive_one (int          fd,
                     char         want_tag,
                     const char **why)
{
  char tag = 0;
  int got = -1;
  int n = sbx_linux_receive_fds (fd, &tag, &got, 1);

  if (n < 0)
    {
      *why = g_strerror (errno);
      return -1;
    }
  if (n != 1 || tag != want_tag)
    {
      if (got >= 0)
        close (got);
      *why = "no descriptor";
      return -1;
    }
  return got;
}

int
sbx_linux_egress_channel_receive (int    fd,
                                  char **error_message)
{
  const char *why = NULL;
  int listener, listening = 0, type = 0;
  socklen_t len;

  listener = channel_receive_one (fd, 'L', &why);
  if (listener < 0)
    {
      *error_message = g_strdup_printf ("linux-userns: the sandbox's egress listener did not arrive (%s)", why);
      return -1;
    }
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
      const char *why = NULL;
      int got, type = 0, want;
      socklen_t len;

      if (!listen_kind_known (request->listens[i].kind))
        continue;   /* skipped by the copy: A sends nothing for it */
      got = channel_receive_one (fd, 'X', &why);
      want = request->listens[i].kind == SBX_LISTEN_DNS_UDP ? SOCK_DGRAM : SOCK_STREAM;
      len = sizeof type;
      if (got < 0 || getsockopt (got, SOL_SOCKET, SO_TYPE, &type, &len) != 0 || type != want)
        {
          if (got >= 0)
            close (got);
          sbx_linux_egress_close_listens (request);
          *error_message = g_strdup_printf ("linux-userns: the sandbox's egress listener %d did not arrive (%s)", i,
                                            got >= 0 || why == NULL ? "no descriptor of its kind" : why);
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
