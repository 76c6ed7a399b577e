/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The view supervisor's answers, shared by the server
 * (sbx-linux-view-server.c) and its files part (sbx-linux-view-files.c):
 * a reply on the FUSE descriptor, a denial to the spawn's sink, and the
 * refusal of an attempt outside the view (the rules: the server's
 * "Answers").  On the hub's thread, under its lock.
 */
#include "sbx-linux-view-private.h"

#include <errno.h>
#include <string.h>
#include <sys/uio.h>

#include <sbx/sbx-plugin-abi.h>

void
sbx_view_reply (SbxViewServer *self,
                uint64_t       unique,
                int            err,
                const void    *data,
                size_t         len)
{
  struct fuse_out_header out = { 0 };
  struct iovec iov[2];
  ssize_t n;

  out.len = (uint32_t) (sizeof out + (err == 0 ? len : 0));
  out.error = -err;
  out.unique = unique;
  iov[0].iov_base = &out;
  iov[0].iov_len = sizeof out;
  iov[1].iov_base = (void *) data;
  iov[1].iov_len = err == 0 ? len : 0;
  do
    n = writev (self->fuse_fd, iov, iov[1].iov_len > 0 ? 2 : 1);
  while (n < 0 && errno == EINTR);
  /* ENOENT: the request was interrupted and is gone; nothing to do. */
}

void
sbx_view_report (SbxViewServer        *self,
                 const SbxViewAttempt *a)
{
  SbxBackendDenialV1 denial = { 0 };

  atomic_fetch_add (&self->n_denials, 1);
  denial.struct_size = sizeof denial;
  denial.operation = a->op;
  denial.pid = a->nspid;
  denial.target = a->target;
  denial.mechanism = "view-supervisor";
  denial.process = a->process[0] != '\0' ? a->process : NULL;
  denial.reason = NULL;
  if (!g_utf8_validate (a->target, -1, NULL))
    denial.target = "(a path that is not UTF-8)";
  g_mutex_lock (&self->sink_lock);
  if (self->sink.denied != NULL)
    self->sink.denied (self->sink.data, &denial);
  g_mutex_unlock (&self->sink_lock);
}

int
sbx_view_refusal_errno (SbxViewServer        *self,
                        const SbxViewAttempt *a,
                        gboolean              exists)
{
  if (self->policy_flags & SBX_POLICY_DENIED_NOT_FOUND)
    {
      /* Hiding: the answer never depends on existence (or on the task's
       * memory, which it controls): a create that follows our ENOENT gets
       * EACCES from handle_write_request() whether or not the name exists,
       * as a missing name would. */
      return ENOENT;
    }
  if (exists)
    return EACCES;
  return a->op == SBX_ABI_DENIAL_WRITE ? EACCES : ENOENT;
}

void
sbx_view_refuse (SbxViewServer        *self,
                 uint64_t              unique,
                 pid_t                 pid,
                 uint64_t              parent,
                 const char           *name,
                 const SbxViewAttempt *a,
                 gboolean              exists)
{
  int err = sbx_view_refusal_errno (self, a, exists);

  if (!exists && a->op != SBX_ABI_DENIAL_WRITE)
    sbx_view_task_forget (&self->task);   /* nothing reported: keep no descriptor of the task */
  else
    {
      sbx_view_report (self, a);
      if (err == ENOENT)
        {
          /* a create may follow for this name: it is the same attempt */
          self->last_reported.pid = pid;
          self->last_reported.parent = parent;
          g_strlcpy (self->last_reported.name, name, sizeof self->last_reported.name);
        }
    }
  sbx_view_reply (self, unique, err, NULL, 0);
}
