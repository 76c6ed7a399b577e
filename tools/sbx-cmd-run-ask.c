/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sbx run --ask while the command runs: the run asks
 * (sbx_run_options_set_ask) and each question (a connection of a Gated
 * network it holds no grant for) is asked on /dev/tty (stdin when it is a
 * terminal but sbx has no controlling one), one at a time, in
 * sbx's main loop (it never blocks: signals and the run's end are handled
 * while a question is open).  A question withdrawn while it is open (its
 * timeout, the run's end) is said to be so and the next one is asked.
 *
 * When the command owns the terminal through its own PTY, its stdin is a
 * pipe sbx feeds from the terminal: a question pauses that relay, so the
 * answer's key never reaches the command, and resumes it after.  The
 * question is written on a line of its own with the cursor saved; after
 * the answer the line is erased, the cursor restored, and the command gets
 * SIGWINCH through the run's resize hook (sbx_run_ask_set_redraw_fd), so a
 * full-screen command redraws what the question's line scrolled.  Without a PTY the
 * command shares the terminal; a command that reads it too may take the
 * answer's keys (sbx asks anyway; an unanswered question times out).
 */
#include "sbx-cmd-run-ask.h"
#include "sbx-cmds.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <glib-unix.h>

struct _SbxRunAsk
{
  char               *command;
  int                 tty;          /* /dev/tty, read and write */
  GQueue              questions;    /* SbxDecisionRequest (owned refs), not yet asked */
  SbxDecisionRequest *open;         /* (nullable) (owned) the one on the screen */
  guint               answer_source;
  guint               withdrawn_source;
  int                 stdin_fd;     /* the terminal relayed to the command, or -1 */
  int                 relay_fd;     /* the pipe's write end, or -1 */
  guint               relay_source;
  gboolean            raw;          /* the terminal is raw (the PTY relay): one key answers */
  int                 redraw_fd;    /* (not owned) the run's resize hook, or -1 */
};

SbxRunAsk *
sbx_run_ask_new (const char *command,
                 GError    **error)
{
  SbxRunAsk *self;
  int tty = open ("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
  int errsv = errno;

  /* no controlling terminal, but stdin is a terminal: ask on that one */
  if (tty < 0 && isatty (STDIN_FILENO))
    tty = fcntl (STDIN_FILENO, F_DUPFD_CLOEXEC, 3);
  if (tty < 0)
    {

      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errsv),
                   "--ask needs a terminal to ask on while the command runs, and neither /dev/tty "
                   "(%s) nor stdin is one; use --approve CLASS[:TARGET]", g_strerror (errsv));
      return NULL;
    }
  self = g_new0 (SbxRunAsk, 1);
  self->command = g_strdup (command);
  self->tty = tty;
  self->stdin_fd = -1;
  self->relay_fd = -1;
  self->redraw_fd = -1;
  g_queue_init (&self->questions);
  return self;
}

static void
clear_source (guint *id)
{
  if (*id != 0)
    {
      g_source_remove (*id);
      *id = 0;
    }
}

void
sbx_run_ask_free (SbxRunAsk *self)
{
  if (self == NULL)
    return;
  clear_source (&self->answer_source);
  clear_source (&self->withdrawn_source);
  clear_source (&self->relay_source);
  g_queue_clear_full (&self->questions, g_object_unref);
  g_clear_object (&self->open);
  if (self->relay_fd >= 0)
    close (self->relay_fd);
  close (self->tty);
  g_free (self->command);
  g_free (self);
}

static void
say (SbxRunAsk  *self,
     const char *text)
{
  gsize len = strlen (text);

  while (len > 0)
    {
      ssize_t n = write (self->tty, text, len);

      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return;
      text += n;
      len -= (gsize) n;
    }
}

/* ------------------------------------------------------------------------- */
/* The stdin relay                                                            */
/* ------------------------------------------------------------------------- */

static gboolean on_stdin (gint         fd,
                          GIOCondition condition,
                          gpointer     data);

static void
relay_resume (SbxRunAsk *self)
{
  if (self->relay_fd >= 0 && self->relay_source == 0)
    self->relay_source = g_unix_fd_add (self->stdin_fd, G_IO_IN | G_IO_HUP | G_IO_ERR, on_stdin, self);
}

static gboolean
on_stdin (gint         fd,
          GIOCondition condition,
          gpointer     data)
{
  SbxRunAsk *self = data;
  char buf[4096];
  ssize_t n = read (fd, buf, sizeof buf);

  (void) condition;
  if (n < 0 && (errno == EINTR || errno == EAGAIN))
    return G_SOURCE_CONTINUE;
  if (n > 0)
    {
      for (ssize_t off = 0; off < n;)
        {
          ssize_t w = write (self->relay_fd, buf + off, (size_t) (n - off));

          if (w < 0 && errno == EINTR)
            continue;
          if (w < 0)
            break;   /* the command's side is gone: nothing more to relay */
          off += w;
        }
      return G_SOURCE_CONTINUE;
    }
  /* end of sbx's input: the command's too */
  close (self->relay_fd);
  self->relay_fd = -1;
  self->relay_source = 0;
  return G_SOURCE_REMOVE;
}

gboolean
sbx_run_ask_relay_stdin (SbxRunAsk     *self,
                         SbxRunOptions *options,
                         int            stdin_fd)
{
  int fds[2];

  if (pipe2 (fds, O_CLOEXEC) < 0)
    return FALSE;
  /* the library duplicates it for the run; sbx keeps the write end */
  sbx_run_options_set_stdin_fd (options, fds[0]);
  self->stdin_fd = stdin_fd;
  self->relay_fd = fds[1];
  self->raw = TRUE;
  relay_resume (self);
  /* the read end stays open until sbx exits: the run holds its own copy */
  return TRUE;
}

void
sbx_run_ask_set_redraw_fd (SbxRunAsk *self,
                           int        fd)
{
  self->redraw_fd = fd;
}

/* ------------------------------------------------------------------------- */
/* Questions                                                                  */
/* ------------------------------------------------------------------------- */

static void ask_next (SbxRunAsk *self);

static void
close_question (SbxRunAsk  *self,
                const char *outcome)
{
  g_autofree char *line = NULL;

  clear_source (&self->answer_source);
  clear_source (&self->withdrawn_source);
  g_clear_object (&self->open);
  if (self->raw)
    {
      /* the question's line erased, the command's cursor back, and the
       * command asked to redraw (the question's line may have scrolled
       * its screen) */
      line = g_strdup_printf ("%s\r\033[2K\0338", outcome);
      say (self, line);
      if (self->redraw_fd >= 0 && write (self->redraw_fd, "r", 1) < 0 && errno != EAGAIN)
        g_debug ("asking the command to redraw: %s", g_strerror (errno));
    }
  else
    {
      line = g_strdup_printf ("%s\n", outcome);
      say (self, line);
    }
  relay_resume (self);
  ask_next (self);
}

static gboolean
on_answer (gint         fd,
           GIOCondition condition,
           gpointer     data)
{
  SbxRunAsk *self = data;
  char buf[256];
  ssize_t n = read (fd, buf, sizeof buf);
  char key = 0;

  (void) condition;
  if (n < 0 && (errno == EINTR || errno == EAGAIN))
    return G_SOURCE_CONTINUE;
  for (ssize_t i = 0; i < n; i++)
    if (buf[i] != ' ' && buf[i] != '\t')
      {
        key = buf[i];
        break;
      }
  self->answer_source = 0;
  if (key == 'o' || key == 'O' || key == 'y' || key == 'Y')
    {
      sbx_decision_request_allow_once (self->open);
      close_question (self, "allowed once");
    }
  else if (key == 'r' || key == 'R')
    {
      sbx_decision_request_allow_for_run (self->open);
      close_question (self, "allowed for this run");
    }
  else
    {
      sbx_decision_request_deny (self->open);
      close_question (self, "denied");
    }
  return G_SOURCE_REMOVE;
}

/* A question on the screen whose request went away (timed out, the run
 * ended): checked a few times a second while it is open, nothing else. */
static gboolean
on_withdrawn_check (gpointer data)
{
  SbxRunAsk *self = data;

  if (self->open != NULL && sbx_decision_request_is_pending (self->open))
    return G_SOURCE_CONTINUE;
  self->withdrawn_source = 0;
  close_question (self, "no longer asked (timed out, or the command ended): denied");
  return G_SOURCE_REMOVE;
}

static void
ask_next (SbxRunAsk *self)
{
  g_autofree char *question = NULL;
  SbxDenial *denial;

  while (self->open == NULL && !g_queue_is_empty (&self->questions))
    {
      SbxDecisionRequest *request = g_queue_pop_head (&self->questions);

      if (sbx_decision_request_is_pending (request))
        self->open = request;
      else
        g_object_unref (request);
    }
  if (self->open == NULL)
    return;
  /* the command's input waits while the terminal answers sbx */
  clear_source (&self->relay_source);
  denial = sbx_decision_request_get_denial (self->open);
  question = g_strdup_printf ("%ssbx: `%s` wants to %s %s (%s %s). Allow [o]nce, for this [r]un, "
                              "or [N]o? ", self->raw ? "\0337\r\n" : "", self->command,
                              sbx_denial_operation_to_string (sbx_denial_get_operation (denial)),
                              sbx_denial_get_target (denial), sbx_denial_get_grant_class (denial),
                              sbx_denial_get_grant_target (denial));
  say (self, question);
  self->answer_source = g_unix_fd_add (self->tty, G_IO_IN | G_IO_HUP | G_IO_ERR, on_answer, self);
  self->withdrawn_source = g_timeout_add (250, on_withdrawn_check, self);
}

static void
on_request (SbxDecisionRequest *request,
            gpointer            data)
{
  SbxRunAsk *self = data;

  g_queue_push_tail (&self->questions, g_object_ref (request));
  ask_next (self);
}

void
sbx_run_ask_attach (SbxRunAsk     *self,
                    SbxRunOptions *options)
{
  sbx_run_options_set_ask (options, TRUE);
  sbx_run_options_set_decision_func (options, on_request, self, NULL);
}
