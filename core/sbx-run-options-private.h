/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The sandbox terminal of a run, for the `sbx run` program only.  Never
 * installed, not in the GIR: applications get a terminal through the public
 * run options.  The setter is exported (the program links the shared
 * library) under a name of its own, so it can never clash with a public
 * function.
 *
 * With it, the backend opens the command's terminal inside the sandbox
 * (SBX_SPAWN_PTY_SANDBOX), the command's stdin, stdout and stderr are that
 * terminal, and the run relays bytes between it and the options' stdin and
 * stdout descriptors (sbx-supervise-private.h); the stderr descriptor is not
 * used, and --max-output counts the relayed output.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct _SbxRunOptions SbxRunOptions;

/* @rows x @cols: the initial window size.  @resize_fd: -1, or a
 * non-blocking descriptor that becomes readable when the caller's terminal
 * was resized (the run drains it and copies the size of the stdin
 * descriptor's terminal); it must stay open until the run has finished. */
__attribute__ ((visibility ("default")))
void     sbx_run_options_set_sandbox_terminal (SbxRunOptions       *self,
                                               gboolean             enabled,
                                               guint16              rows,
                                               guint16              cols,
                                               int                  resize_fd);

/* TRUE when a sandbox terminal is asked for, with its settings. */
gboolean sbx_run_options_get_sandbox_terminal (const SbxRunOptions *self,
                                               guint16             *rows,
                                               guint16             *cols,
                                               int                 *resize_fd);

G_END_DECLS
