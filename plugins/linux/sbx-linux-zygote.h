/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The zygote of a rung-1 spec and its warm sandboxes, parent side
 * (sbx-linux-zygote.c; the zygote itself is child code in
 * sbx-linux-child.c): what the spec (its lifetime) and the spawn path (one
 * A per spawn) ask of it.  Never installed.
 */
#pragma once

#include <glib.h>
#include <sys/types.h>

#include "sbx-linux-cgroup.h"
#include "sbx-linux-child-private.h"
#include "sbx-linux-view-server.h"

G_BEGIN_DECLS

typedef struct _SbxLinuxZygote SbxLinuxZygote;

/* Made with the spec (no process yet), freed with it. */
SbxLinuxZygote *sbx_linux_zygote_new  (void);
void            sbx_linux_zygote_free (SbxLinuxZygote *zygote);

/* Has the spec's zygote clone A for @ctx (ctx->zpid and ctx->z_pidfd
 * set), starting the zygote on the second spawn of the spec; only for a
 * spawn sbx_linux_zygote_claim_direct() did not claim.  DIRECT: no
 * zygote (it could not start), spawn directly; LOST: it died during the
 * request (A may exist: never retried, so a target cannot run twice). */
enum
{
  SBX_LINUX_ZYGOTE_SPAWN_DONE,
  SBX_LINUX_ZYGOTE_SPAWN_DIRECT,
  SBX_LINUX_ZYGOTE_SPAWN_LOST
};
int  sbx_linux_zygote_spawn (SbxLinuxSpec *spec,
                             ChildCtx     *ctx);
/* Counts a spawn of @spec and says whether it clones its A directly (the
 * rule is there); when not, call sbx_linux_zygote_spawn() for it. */
gboolean sbx_linux_zygote_claim_direct   (SbxLinuxSpec *spec);

/* A warm sandbox (sbx-linux-zygote.c, the rules are there): one A the
 * zygote prepared ahead of need, waiting for its one request.  The fields
 * are the spawn's once it is taken. */
typedef struct
{
  ChildCtx  *ctx;          /* its context: the request is filled in here */
  char      *stacks;       /* A's and B's stacks (sbx_linux_stacks_new (2)) */
  int       *tmpfs_fds;
  int        err_pipe[2];
  int        exit_pipe[2];
  int        go[2];        /* supervisor -> A: the request is there */
  int        ack[2];       /* A -> supervisor: 'r' built, 'u' holds its own table */
  gboolean   ready;        /* 'r' was read */
  pid_t      pid;          /* A, or -1 */
  int        pidfd;
  SbxCgroup *cgroup;       /* the sandbox's cgroup (A has joined it), or NULL */
  SbxViewServer *view;     /* its view supervisor (spec->view_fuse), or NULL; no sink until taken */
  int        view_end;     /* A's end of the server's socket pair, until A is built */
} SbxLinuxWarm;

/* Kills and reaps an A still there (pid > 0), destroys the cgroup, closes
 * and frees what is left (the view supervisor after A is reaped). */
void          sbx_linux_warm_free           (SbxLinuxWarm *warm);
/* After a spawn through the zygote: prepares the next sandbox of @spec if
 * none is waiting (no-op without a running zygote). */
void          sbx_linux_zygote_prepare_warm (SbxLinuxSpec *spec);
/* The waiting sandbox of @spec, detached (the caller owns it), or NULL. */
SbxLinuxWarm *sbx_linux_zygote_take_warm    (SbxLinuxSpec *spec);
/* Hands ctx (filled in) to A; TRUE once A holds its own descriptor table
 * (the caller may close its ends), FALSE when A died first. */
gboolean      sbx_linux_warm_start          (SbxLinuxWarm *warm);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SbxLinuxWarm, sbx_linux_warm_free)

G_END_DECLS
