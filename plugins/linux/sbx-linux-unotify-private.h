/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The connect supervisor's parts: sbx-linux-unotify.c (the hub and the
 * spawn's hand-off), sbx-linux-unotify-view.c (answers and the target's
 * view), sbx-linux-unotify-connect.c (connect decisions) and
 * sbx-linux-unotify-chmod.c (set-gid directories); calls go from the first
 * to the others and from the decisions to the view, never back.  Never
 * installed.  Everything here runs on the hub thread with the hub's lock
 * held.
 */
#pragma once

#include <glib.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/un.h>
#include <linux/seccomp.h>

#include "sbx-linux-unotify.h"

/* A blocking caller's unix connect that met a full backlog is retried this
 * often (the kernel would sleep until the listener accepts). */
#define SBX_UNOTIFY_RETRY_MS 5

struct _SbxUnotify
{
  int              listener;
  int              diag;
  pid_t            init_pid;
  SbxUnotifyPolicy policy;
  uint64_t        *tcp_ports;
  char           **host_sockets;
  SbxBackendDenialSinkV1 denials; /* denials.denied NULL: not reported */
  GPtrArray       *pending;     /* SbxUnotifyPending: connects that wait (the hub's, under its lock) */
  gboolean         ended;       /* the listener reported POLLHUP: the sandbox is gone */
};

/* A connect that waits: a TCP connect in progress, or a blocking caller's
 * unix connect that met a full backlog. */
typedef struct
{
  uint64_t           id;
  int                sock;       /* the caller's socket (our copy) */
  int                opath;      /* the pinned target of a retried unix connect, or -1 */
  gboolean           retry;      /* TRUE: retry the connect; FALSE: in progress, poll for POLLOUT */
  struct sockaddr_un addr;       /* what a retry connects to */
  socklen_t          addr_len;
} SbxUnotifyPending;

/* Answers @id with -@err (0: success); ENOENT (the caller is gone) ignored. */
void     sbx_unotify_respond                    (SbxUnotify *u,
                                                 uint64_t    id,
                                                 int         err);
/* TRUE while notification @id is alive (the pid it names is the caller). */
gboolean sbx_unotify_id_valid                   (SbxUnotify *u,
                                                 uint64_t    id);
void     sbx_unotify_pending_free               (gpointer    data);
/* A pidfd of the calling thread (or its process before Linux 6.9), or -1. */
int      sbx_unotify_caller_pidfd               (pid_t       pid);
/* @path made absolute with the target's cwd; NULL when the cwd is gone. */
char    *sbx_unotify_absolute_in_target         (pid_t       pid,
                                                 const char *path);
/* The absolute @path resolved in the target's view: O_PATH or -errno. */
int      sbx_unotify_resolve_in_target          (pid_t       pid,
                                                 const char *path);
int      sbx_unotify_resolve_in_target_nofollow (pid_t       pid,
                                                 const char *path);

/* sbx-linux-unotify-connect.c */
void     sbx_unotify_handle_connect             (SbxUnotify                 *u,
                                                 const struct seccomp_notif *req,
                                                 GPtrArray                  *pending);
/* TRUE when @p is answered (or its caller gone): drop it. */
gboolean sbx_unotify_pending_step               (SbxUnotify        *u,
                                                 SbxUnotifyPending *p,
                                                 short              revents);

/* Reports a refused unix connect of @pid to @target (a path, or "@NAME")
 * through the policy's denial sink, if any. */
void     sbx_unotify_report_denial              (SbxUnotify *u,
                                                 pid_t       pid,
                                                 const char *target,
                                                 const char *reason);

/* sbx-linux-unotify-chmod.c */
void     sbx_unotify_handle_chmod               (SbxUnotify                 *u,
                                                 const struct seccomp_notif *req,
                                                 const char                 *name);
