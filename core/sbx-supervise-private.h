/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Process supervision: one spawn through a backend, from spawn to the
 * backend's finish().  Synchronous, thread-safe, independent of any
 * GMainContext: the calling thread polls the output pipes, the target's
 * pidfd, the cancellable's fd and the set's close fd.
 *
 *   spawn (stdout/stderr pipes we create, O_CLOEXEC; stdin /dev/null or a
 *          caller fd)
 *   -> poll: keep/forward output up to the limit; on overflow, cancel, close
 *      or deadline: kill the whole tree at once (backend signal(SIGKILL))
 *   -> target exited: SIGKILL the rest of the tree while the exited target
 *      still pins its ids, reap it (waitpid, raw status)
 *   -> finish(raw status): the backend tears the tree down and translates the
 *      status; its SbxExitV1 is the truth
 *   -> drain what the dead tree left in the pipes (bounded).
 *
 * With @pty the target gets a terminal of its own, opened by the backend
 * inside the sandbox (SBX_SPAWN_PTY_SANDBOX), and only bytes cross: what
 * arrives on stdin_fd is written to the master, what the master gives
 * (stdout and stderr are one stream there) goes to stdout_fd or into the
 * result, counted against max_output like any output.  The master never
 * leaves this call, so nothing inside can reach the caller's terminal.
 */
#pragma once

#include <gio/gio.h>
#include "sbx-backend-private.h"

G_BEGIN_DECLS

typedef struct
{
  SbxBackendSpec     *spec;
  const char         *cwd;
  const char *const  *argv;
  const char *const  *envp;
  int                 stdin_fd;     /* -1: /dev/null */
  int                 stdout_fd;    /* -1: capture into the result */
  int                 stderr_fd;    /* -1: capture into the result */
  guint64             max_output;   /* 0: unlimited; else combined cap of kept
                                     * (captured or forwarded) bytes */
  gint64              deadline;     /* g_get_monotonic_time() µs, 0: none */
  GCancellable       *cancellable;
  int                 close_fd;     /* readable once the owner closes, or -1 */
  /* Egress: takes the listening socket spawn returned in
   * SbxSpawnResultV1.proxy_listen_fd, right after the spawn; NULL: it is
   * closed unserved. */
  void              (*proxy_listen_fn) (gpointer data,
                                        int      fd);
  gpointer            proxy_listen_data;
  /* Egress: the run's other listeners (SbxSpawnRequestV1.listens); the
   * backend's sockets land in listen_fds, which proxy_listen_fn serves. */
  const SbxListenV1  *listens;
  int32_t            *listen_fds;
  guint32             n_listens;
  /* The sandbox terminal (see above).  stderr_fd is not used with it. */
  gboolean            pty;
  guint16             pty_rows;     /* initial window size */
  guint16             pty_cols;
  guint64             ignored_signals; /* SbxSpawnRequestV1.ignored_signals (0: none) */
  const SbxBackendDenialSinkV1 *denial_sink; /* SbxSpawnRequestV1.denial_sink (nullable) */
  int                 pty_resize_fd; /* readable when the window size changed: read,
                                      * then pty_size_fd's size is copied to the
                                      * terminal; -1: none */
  int                 pty_size_fd;  /* the terminal whose size is followed, or -1 */
} SbxSuperviseRequest;

typedef enum
{
  SBX_SUPERVISE_EXITED,       /* the target ended on its own (or by the output limit) */
  SBX_SUPERVISE_TIMED_OUT,    /* the deadline passed; the tree was killed */
  SBX_SUPERVISE_CANCELLED,    /* the cancellable fired; the tree was killed */
  SBX_SUPERVISE_CLOSED,       /* close_fd fired; the tree was killed */
} SbxSuperviseOutcome;

typedef struct
{
  SbxSuperviseOutcome outcome;
  SbxExitV1           exit;         /* from the backend's finish() */
  gboolean            truncated;    /* output passed the limit; the tree was killed */
  GBytes             *output;       /* captured bytes (owned) */
  guint32             containment;  /* SBX_CONTAINMENT_* */
  gint64              duration_us;  /* spawn to reap */
} SbxSuperviseResult;

void     sbx_supervise_result_clear (SbxSuperviseResult        *result);

/* Runs one child to completion.  FALSE with @error set when the spawn
 * failed (SBX_PLUGIN_ERROR from the backend, nothing left running) or when
 * the backend's finish() could not prove the tree gone (the result is still
 * filled as far as known).  With @out_spawned set TRUE once a child existed. */
gboolean sbx_supervise_run          (const SbxSuperviseRequest *request,
                                     SbxSuperviseResult        *result,
                                     gboolean                  *out_spawned,
                                     GError                   **error);

G_END_DECLS
