/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sbx run --ask while the command runs (tools/sbx-cmd-run-ask.c): every
 * live question of the run (a connection the Gated network holds no grant
 * for) asked on the terminal, /dev/tty, one at a time.
 */
#pragma once

#include <sbx/sbx.h>

G_BEGIN_DECLS

typedef struct _SbxRunAsk SbxRunAsk;

/* Opens /dev/tty for asking about @command; NULL with @error when sbx has
 * no terminal (--ask is then refused). */
SbxRunAsk  *sbx_run_ask_new           (const char            *command,
                                       GError               **error);
void        sbx_run_ask_free          (SbxRunAsk             *self);
/* The run asks (sbx_run_options_set_ask) and its questions come here, on
 * the thread-default main context (which must run while the command
 * does). */
void        sbx_run_ask_attach        (SbxRunAsk             *self,
                                       SbxRunOptions         *options);
/* The command owns the terminal through its own PTY (the library relays
 * @stdin_fd to it): the command's stdin becomes a pipe that sbx feeds from
 * @stdin_fd, so a question can pause the relay, take its answer from the
 * terminal (raw: one key) and resume.  FALSE (errno set) when the pipe
 * cannot be made. */
gboolean    sbx_run_ask_relay_stdin   (SbxRunAsk             *self,
                                       SbxRunOptions         *options,
                                       int                    stdin_fd);

/* With the PTY relay: after each question, a byte written to @fd (the
 * run's resize hook, sbx_run_options_set_pty_resize_fd) has the command
 * redraw its screen (the run sends it SIGWINCH).  @fd stays the caller's. */
void        sbx_run_ask_set_redraw_fd (SbxRunAsk             *self,
                                       int                    fd);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SbxRunAsk, sbx_run_ask_free)

G_END_DECLS
