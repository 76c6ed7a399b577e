/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Whether Landlock's refusals at rung 2 can be observed here, and the
 * "fs-denials" report entry (see sbx-linux-audit.h for the conditions and
 * why the backend never changes the host's audit state).
 */
#include "sbx-linux-audit.h"

#include <errno.h>
#include <poll.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <linux/audit.h>
#include <linux/netlink.h>

#include <glib.h>
#include <sbx/sbx-cleanup.h>
#include <sbx/sbx-plugin-abi.h>

/* Landlock logs refusals from this ABI on (landlock_restrict_self()'s
 * LANDLOCK_RESTRICT_SELF_LOG_* flags came with it). */
#define LANDLOCK_ABI_AUDIT 7

/* How long the kernel may take to answer AUDIT_GET (it replies from a
 * kernel thread, so the answer can follow the send by a scheduling delay). */
#define AUDIT_GET_TIMEOUT_MS 2000

/* Joins the read-log multicast group on a throwaway socket: the kernel's
 * own check of CAP_AUDIT_READ.  Returns 0 or the errno; *no_socket when
 * the socket itself could not be made. */
static int
try_join_readlog (gboolean *no_socket)
{
  struct sockaddr_nl addr = { .nl_family = AF_NETLINK };
  sbx_autofd int fd = socket (AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_AUDIT);

  *no_socket = fd < 0;
  if (fd < 0)
    return errno;
  addr.nl_groups = 1u << (AUDIT_NLGRP_READLOG - 1);
  if (bind (fd, (struct sockaddr *) &addr, sizeof addr) < 0)
    return errno;
  /* Closed at once: no record is ever read from it. */
  return 0;
}

static gint64
now_ms (void)
{
  return g_get_monotonic_time () / 1000;
}

/* One datagram of the kernel's answer: 1 with *enabled set, 0 when it
 * holds none of ours, or -errno. */
static int
parse_status_reply (const char *buf,
                    ssize_t     len,
                    uint32_t    seq,
                    uint32_t   *enabled)
{
  for (const struct nlmsghdr *h = (const struct nlmsghdr *) buf; NLMSG_OK (h, (size_t) len);
       h = NLMSG_NEXT (h, len))
    {
      if (h->nlmsg_seq != seq)
        continue;
      if (h->nlmsg_type == NLMSG_ERROR)
        {
          const struct nlmsgerr *e = NLMSG_DATA (h);

          if (h->nlmsg_len < NLMSG_LENGTH (sizeof *e))
            return -EBADMSG;
          if (e->error != 0)
            return e->error;
          continue;   /* an acknowledgement: the status follows */
        }
      if (h->nlmsg_type == AUDIT_GET)
        {
          const size_t need = offsetof (struct audit_status, enabled) + sizeof (uint32_t);
          const char *payload = NLMSG_DATA (h);

          if (h->nlmsg_len < NLMSG_LENGTH (need))
            return -EBADMSG;
          memcpy (enabled, payload + offsetof (struct audit_status, enabled), sizeof *enabled);
          return 1;
        }
    }
  return 0;
}

/* Asks the kernel whether audit is enabled (AUDIT_GET; needs
 * CAP_AUDIT_CONTROL in the initial pid namespace).  Returns 0 with
 * *enabled set, or the errno. */
static int
read_audit_enabled (uint32_t *enabled)
{
  struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
  struct nlmsghdr req = { 0 };
  const uint32_t seq = 1;
  sbx_autofd int fd = socket (AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_AUDIT);
  gint64 deadline = now_ms () + AUDIT_GET_TIMEOUT_MS;

  if (fd < 0)
    return errno;
  req.nlmsg_len = NLMSG_LENGTH (0);
  req.nlmsg_type = AUDIT_GET;
  req.nlmsg_flags = NLM_F_REQUEST;
  req.nlmsg_seq = seq;
  if (TEMP_FAILURE_RETRY (sendto (fd, &req, req.nlmsg_len, 0, (struct sockaddr *) &kernel,
                                  sizeof kernel)) < 0)
    return errno;
  for (;;)
    {
      char buf[8192] __attribute__ ((aligned (NLMSG_ALIGNTO)));
      struct sockaddr_nl from = { 0 };
      socklen_t from_len = sizeof from;
      struct pollfd pfd = { .fd = fd, .events = POLLIN };
      gint64 left = deadline - now_ms ();
      ssize_t n;
      int r;

      if (left <= 0)
        return ETIMEDOUT;
      r = poll (&pfd, 1, (int) left);
      if (r < 0 && errno == EINTR)
        continue;
      if (r < 0)
        return errno;
      if (r == 0)
        return ETIMEDOUT;
      n = TEMP_FAILURE_RETRY (recvfrom (fd, buf, sizeof buf, MSG_DONTWAIT, (struct sockaddr *) &from,
                                        &from_len));
      if (n < 0 && errno == EAGAIN)
        continue;
      if (n < 0)
        return errno;
      /* Only the kernel (port 0) answers for audit. */
      if (from_len != sizeof from || from.nl_pid != 0)
        continue;
      r = parse_status_reply (buf, n, seq, enabled);
      if (r < 0)
        return -r;
      if (r == 1)
        return 0;
    }
}

void
sbx_linux_audit_measure (int            landlock_abi,
                         SbxLinuxAudit *out)
{
  gboolean no_socket = FALSE;
  uint32_t enabled = 0;
  int err;

  memset (out, 0, sizeof *out);
  out->landlock_abi = landlock_abi;
  if (landlock_abi < LANDLOCK_ABI_AUDIT)
    {
      out->host = SBX_LINUX_AUDIT_LANDLOCK_OLD;
      return;
    }
  err = try_join_readlog (&no_socket);
  if (err != 0)
    {
      out->err = err;
      if (no_socket)
        out->host = err == EPROTONOSUPPORT ? SBX_LINUX_AUDIT_ABSENT : SBX_LINUX_AUDIT_NO_SOCKET;
      else
        out->host = err == EPERM ? SBX_LINUX_AUDIT_NO_CAP : SBX_LINUX_AUDIT_NO_GROUP;
      return;
    }
  err = read_audit_enabled (&enabled);
  if (err != 0)
    {
      out->err = err;
      out->host = SBX_LINUX_AUDIT_STATE_UNKNOWN;
      return;
    }
  out->host = enabled == 0 ? SBX_LINUX_AUDIT_DISABLED : SBX_LINUX_AUDIT_READABLE;
}

/* What a refused path does for the target, whatever the reason. */
/* Nothing at this rung holds an attempt, so a file is never asked either. */
#define UNREPORTED "; Landlock still refuses a path outside the policy with EACCES, unreported, and files are " \
  "not asked while running at this rung"

char *
sbx_linux_audit_detail (const SbxLinuxAudit *audit,
                        uint32_t            *status)
{
  *status = SBX_ABI_REPORT_UNENFORCED;
  switch ((SbxLinuxAuditHost) audit->host)
    {
    case SBX_LINUX_AUDIT_LANDLOCK_OLD:
      return g_strdup_printf ("not observed: Landlock ABI %d < 7 logs no refusal" UNREPORTED,
                              audit->landlock_abi);
    case SBX_LINUX_AUDIT_ABSENT:
      return g_strdup_printf ("not observed: audit records, where Landlock logs its refusals, cannot be "
                              "read here (NETLINK_AUDIT: %s: a kernel without audit, or the filter of a "
                              "sandbox around this one)" UNREPORTED, g_strerror (audit->err));
    case SBX_LINUX_AUDIT_NO_SOCKET:
      return g_strdup_printf ("not observed: the audit netlink socket could not be opened (%s)"
                              UNREPORTED, g_strerror (audit->err));
    case SBX_LINUX_AUDIT_NO_CAP:
      return g_strdup ("not observed: reading audit records needs CAP_AUDIT_READ (root on the host), "
                       "which this caller lacks" UNREPORTED);
    case SBX_LINUX_AUDIT_NO_GROUP:
      return g_strdup_printf ("not observed: the audit read-log group could not be joined (%s)"
                              UNREPORTED, g_strerror (audit->err));
    case SBX_LINUX_AUDIT_STATE_UNKNOWN:
      return g_strdup_printf ("not observed: the kernel's audit state could not be read (AUDIT_GET: %s)"
                              UNREPORTED, g_strerror (audit->err));
    case SBX_LINUX_AUDIT_DISABLED:
      return g_strdup ("not observed: the kernel's audit is disabled, and Landlock logs refusals only "
                       "through it (sbx does not enable it: it is a setting of the whole host)"
                       UNREPORTED);
    case SBX_LINUX_AUDIT_READABLE:
      return g_strdup_printf ("not observed: the backend does not read Landlock's audit records "
                              "(here the kernel's audit is enabled, Landlock is ABI %d and this caller "
                              "may join the audit read-log group)" UNREPORTED, audit->landlock_abi);
    default:
      return g_strdup ("not observed" UNREPORTED);
    }
}

void
sbx_linux_audit_report (int                     landlock_abi,
                        const SbxLinuxReporter *reporter)
{
  SbxLinuxAudit audit;
  uint32_t status;
  g_autofree char *detail = NULL;

  sbx_linux_audit_measure (landlock_abi, &audit);
  detail = sbx_linux_audit_detail (&audit, &status);
  sbx_linux_report (reporter, SBX_LINUX_FEATURE_FS_DENIALS, status, detail);
}
