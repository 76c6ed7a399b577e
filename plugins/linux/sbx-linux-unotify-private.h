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

/* The answers to an asking run's held connects (sbx-linux-unotify-ask.c):
 * shared by the sandbox and every ticket the host still holds, so an
 * answer after stop() only frees its ticket. */
typedef struct _SbxUnotifyAsks SbxUnotifyAsks;

/* The most connects one sandbox holds for an answer at a time; past it a
 * refusal is reported and answered as without asking. */
#define SBX_UNOTIFY_MAX_HELD 256

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
  SbxUnotifyAsks  *asks;        /* (nullable) the sink has ask: refusals of host sockets are held */
  guint            n_held;      /* connects handed to the host's ask, not yet drained */
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

/* A refused connect to a host socket that an asking run may still get
 * (sbx-linux-unotify-ask.c): what the refusal would be. */
typedef struct
{
  char       *path;     /* (nullable) (owned) set: hold it instead of refusing */
  const char *reason;
  int         err;      /* the refusal's errno */
  int         sock;     /* the caller's socket (our copy), the holder's */
} SbxUnotifyHeld;

/* sbx-linux-unotify-connect.c */
/* Decides and answers a connect, or (with @held->path set, nothing
 * reported or answered) leaves it for sbx_unotify_hold(). */
void     sbx_unotify_handle_connect             (SbxUnotify                 *u,
                                                 const struct seccomp_notif *req,
                                                 GPtrArray                  *pending,
                                                 SbxUnotifyHeld             *held);
/* TRUE when @p is answered (or its caller gone): drop it. */
gboolean sbx_unotify_pending_step               (SbxUnotify        *u,
                                                 SbxUnotifyPending *p,
                                                 short              revents);

/* Our connect of the caller's socket @sock (taken) to the host socket at
 * @path, resolved in the host's view as a named one is (a granted or
 * approved host socket): answers @id now or adds a pending connect. */
void     sbx_unotify_connect_host_socket        (SbxUnotify *u,
                                                 uint64_t    id,
                                                 int         sock,
                                                 const char *path,
                                                 GPtrArray  *pending);

/* sbx-linux-unotify-ask.c */
/* The sink's ask, if it has one: the asks' state (NULL without). */
SbxUnotifyAsks *sbx_unotify_asks_new                (const SbxBackendDenialSinkV1 *sink);
/* The eventfd written for each answer (the hub polls it). */
int      sbx_unotify_asks_fd                    (SbxUnotifyAsks *asks);
/* Holds the refused unix connect @id of @pid to the host socket @path
 * (@sock taken) and asks the host; the refusal (@reason, -@err) is
 * reported and answered when it says DENY.  FALSE (nothing taken) when
 * the sandbox cannot ask or holds SBX_UNOTIFY_MAX_HELD already. */
gboolean sbx_unotify_hold                       (SbxUnotify *u,
                                                 uint64_t    id,
                                                 pid_t       pid,
                                                 int         sock,
                                                 const char *path,
                                                 const char *reason,
                                                 int         err);
/* Performs or refuses every answered held connect. */
void     sbx_unotify_asks_drain                 (SbxUnotify *u,
                                                 GPtrArray  *pending);
/* stop(): answered ones are dropped, later answers only free their ticket. */
void     sbx_unotify_asks_stop                  (SbxUnotifyAsks *asks);

/* The denial record of a refused unix connect of @pid to @target (its
 * argv[0] read into @argv0; strings borrowed). */
#define SBX_UNOTIFY_ARGV0_MAX 256
void     sbx_unotify_denial_init                (SbxBackendDenialV1 *denial,
                                                 char                argv0[SBX_UNOTIFY_ARGV0_MAX],
                                                 pid_t               pid,
                                                 const char         *target,
                                                 const char         *reason);
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
