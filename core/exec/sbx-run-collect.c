/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The one run engine (sbx-executor-run.c is its entry points).  A run is an
 * SbxProcess started for it
 * (sbx_process_start_for_run(): the backend's spawn, the pidfd watch with
 * the deadline, the reap and the backend's teardown, the exit event) plus
 * a collect on the thread-default main context, as g_subprocess_communicate()
 * is a process plus a collect:
 *
 *   spawn (stdout/stderr pipes we create, O_CLOEXEC, one shared pipe when
 *          both are captured, so the output keeps the child's write order;
 *          stdin the null device or a caller fd)
 *   -> collect: keep or forward the output up to the limit (past it: the
 *      result is marked truncated and the whole tree is killed); with a PTY,
 *      relay the caller's stdin and window size to the sandbox's terminal
 *   -> the process's watch: the deadline kills the whole tree; the target's
 *      exit is reaped (the rest of the tree killed while the exited target
 *      pins its ids, waitpid, the backend's finish(), egress teardown and
 *      denials, the exit event); the cancellable and the set's close kill
 *      the tree through the process
 *   -> drain what the dead tree left in the pipes (bounded), then the
 *      result: the reap's plus the output.
 *
 * sbx_executor_run() and sbx_prepared_process_run() iterate a private main
 * context pushed for the call, and reap on the calling thread; the _async
 * forms are a GTask on the caller's thread-default context on the same code,
 * with no thread of their own (the teardown runs on the processes' shared
 * reaping pool).  Admission (sbx-executor-admit.c) comes first; a prepared
 * process hands over the admission it holds.
 *
 * With a PTY the target gets a terminal of its own, opened by the backend
 * inside the sandbox (SBX_SPAWN_PTY_SANDBOX), and only bytes cross: what
 * arrives on the stdin descriptor is written to the master, what the master
 * gives (stdout and stderr are one stream there) goes to the stdout
 * descriptor or into the result, counted against the output limit like any
 * output.  The master never leaves the run, so nothing inside can reach the
 * caller's terminal.
 */
#include "sbx-process-impl-private.h"
#include "sbx-process-spawn-private.h"
#include "sbx-process-watch-private.h"
#include "sbx-executor-error-private.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <termios.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "sbx-run-result-private.h"

/* After the tree is gone, how long to keep reading what it left behind when
 * a writer that escaped the backend's teardown (an unconfined daemon) keeps
 * a pipe open. */
#define DRAIN_TIMEOUT_US (500 * G_TIME_SPAN_MILLISECOND)
#define READ_CHUNK 65536

/* ------------------------------------------------------------------------- */
/* The collect                                                                */
/* ------------------------------------------------------------------------- */

typedef enum
{
  STREAM_DIRECT,    /* the child gets the caller's fd itself */
  STREAM_CAPTURE,   /* a pipe we read into the result */
  STREAM_FORWARD,   /* a pipe we read and write on to the caller's fd */
} StreamMode;

typedef struct
{
  StreamMode mode;
  int        read_fd;    /* our end of the pipe (or the master), -1 when none or closed */
  int        dest_fd;    /* FORWARD: where the bytes go */
} Stream;

/* The descriptors the collect's source polls: the two streams, the
 * caller's stdin and resize hook (PTY). */
enum
{
  SLOT_OUT,
  SLOT_ERR,
  SLOT_IN,
  SLOT_RESIZE,
  N_SLOTS
};

typedef struct
{
  int      fd;
  gpointer tag;
} Slot;

typedef struct
{
  GSource          source;
  SbxProcess      *process;      /* strong */
  SbxStartRequest *rr;           /* owned: its fds serve the relay to the end */
  GTask           *task;         /* an async run's, strong until completed */
  SbxRunSync      *sync;         /* a sync run's verdict, or NULL */
  Stream           streams[2];   /* stdout, stderr */
  Slot             slots[N_SLOTS];
  GByteArray      *captured;
  guint64          max_output;   /* 0: unlimited */
  guint64          kept;         /* bytes captured or forwarded so far */
  gboolean         truncated;
  gboolean         stopped;      /* no more output wanted: the tree is being killed */
  /* The sandbox terminal: streams[0] reads its master (the output), and
   * what in_fd gives is written to it (the input). */
  gboolean         pty;
  gboolean         relay_input;  /* FALSE once the target has exited */
  int              in_fd;        /* the caller's; -1 when none or at its end */
  GByteArray      *to_master;    /* read from in_fd, not yet written */
  int              resize_fd;    /* the caller's resize hook; -1 when none or at its end */
  int              size_fd;      /* the terminal whose size is followed, or -1 */
  GCancellable    *cancellable;
  gulong           cancel_id;
  /* A sync run holds the set's barrier until it returns, so the set's close
   * returns after the run did; an async one does not (the close may come
   * from the very main loop that would finish it). */
  SbxSharedGuard  *guard;
  gint             reap_seen;    /* (atomic) set by the reaping thread */
  gboolean         reaped;
  gint64           drain_deadline;
  /* A staged run's stage: handed to the result at the end, or removed
   * when the run gives none. */
  SbxStage        *stage;
} Collect;

/* Writes @len bytes to @fd with SIGPIPE blocked for this thread, so a closed
 * reader is an EPIPE and never kills the host process.  Returns FALSE with
 * errno set on failure. */
static gboolean
write_all_nosigpipe (int         fd,
                     const char *data,
                     gsize       len)
{
  sigset_t block;
  sigset_t old;
  sigset_t pending;
  gboolean was_pending;
  gboolean ok = TRUE;
  int errsv = 0;

  sigemptyset (&block);
  sigaddset (&block, SIGPIPE);
  pthread_sigmask (SIG_BLOCK, &block, &old);
  sigpending (&pending);
  was_pending = sigismember (&pending, SIGPIPE);

  while (len > 0)
    {
      ssize_t n = write (fd, data, len);

      if (n < 0)
        {
          if (errno == EINTR)
            continue;
          if (errno == EAGAIN)
            {
              struct pollfd pfd = { .fd = fd, .events = POLLOUT };

              poll (&pfd, 1, -1);
              continue;
            }
          errsv = errno;
          ok = FALSE;
          break;
        }
      data += n;
      len -= (gsize) n;
    }

  if (errsv == EPIPE && !was_pending)
    {
      struct timespec zero = { 0, 0 };

      while (sigtimedwait (&block, NULL, &zero) < 0 && errno == EINTR)
        ;
    }
  pthread_sigmask (SIG_SETMASK, &old, NULL);
  errno = errsv;
  return ok;
}

/* Points slot @i at @fd with @events (0 or @fd -1: not polled). */
static void
slot_set (Collect      *c,
          int           i,
          int           fd,
          GIOCondition  events)
{
  Slot *slot = &c->slots[i];

  if (slot->tag != NULL && (fd < 0 || events == 0 || fd != slot->fd))
    {
      g_source_remove_unix_fd (&c->source, slot->tag);
      slot->tag = NULL;
    }
  slot->fd = fd;
  if (fd < 0 || events == 0)
    return;
  if (slot->tag == NULL)
    slot->tag = g_source_add_unix_fd (&c->source, fd, events);
  else
    g_source_modify_unix_fd (&c->source, slot->tag, events);
}

static GIOCondition
slot_revents (Collect *c,
              int      i)
{
  return c->slots[i].tag != NULL ? g_source_query_unix_fd (&c->source, c->slots[i].tag) : 0;
}

/* What the source polls now. */
static void
collect_update_slots (Collect *c)
{
  gboolean relaying = c->pty && c->relay_input && c->streams[0].read_fd >= 0;
  GIOCondition out_events = G_IO_IN;

  if (relaying && c->to_master->len > 0)
    out_events |= G_IO_OUT;
  slot_set (c, SLOT_OUT, c->streams[0].read_fd, out_events);
  slot_set (c, SLOT_ERR, c->streams[1].read_fd, G_IO_IN);
  slot_set (c, SLOT_IN, relaying && c->to_master->len == 0 ? c->in_fd : -1, G_IO_IN);
  slot_set (c, SLOT_RESIZE, relaying ? c->resize_fd : -1, G_IO_IN);
}

static void
stream_close (Collect *c,
              int      s)
{
  slot_set (c, s == 0 ? SLOT_OUT : SLOT_ERR, -1, 0);
  if (c->streams[s].read_fd >= 0)
    {
      close (c->streams[s].read_fd);
      c->streams[s].read_fd = -1;
    }
}

/* No more output is wanted: the tree is being killed. */
static void
collect_stop (Collect *c)
{
  c->stopped = TRUE;
  c->relay_input = FALSE;
  stream_close (c, 0);
  stream_close (c, 1);
}

/* Keeps what fits under the limit; past it, kills the tree. */
static void
collect_accept (Collect    *c,
                Stream     *stream,
                int         s,
                const char *data,
                gsize       n)
{
  gsize keep = n;

  if (c->max_output > 0)
    {
      guint64 room = c->max_output - c->kept;

      if ((guint64) n > room)
        keep = (gsize) room;
    }

  if (keep > 0)
    {
      if (stream->mode == STREAM_CAPTURE)
        {
          g_byte_array_append (c->captured, (const guint8 *) data, keep);
        }
      else if (!write_all_nosigpipe (stream->dest_fd, data, keep))
        {
          int errsv = errno;

          /* The reader went away: stop reading this stream, so the child
           * sees EPIPE on its next write, like with a direct pipe. */
          g_debug ("forwarding output to fd %d failed: %s", stream->dest_fd, g_strerror (errsv));
          stream_close (c, s);
        }
      c->kept += keep;
    }

  if (keep < n)
    {
      c->truncated = TRUE;
      g_mutex_lock (&c->process->mutex);
      c->process->truncated = TRUE;
      g_mutex_unlock (&c->process->mutex);
      sbx_process_signal_target (c->process, SIGKILL, NULL);
      sbx_process_kick_watches (c->process);   /* re-kill until it is gone */
      collect_stop (c);
    }
}

/* Reads once from stream @s; at EOF the stream is closed. */
static void
collect_read (Collect *c,
              int      s)
{
  Stream *stream = &c->streams[s];
  char buf[READ_CHUNK];
  ssize_t n;

  do
    n = read (stream->read_fd, buf, sizeof buf);
  while (n < 0 && errno == EINTR);

  if (n < 0 && errno == EAGAIN)
    return;
  if (n <= 0)
    {
      stream_close (c, s);
      return;
    }
  collect_accept (c, stream, s, buf, (gsize) n);
}

/* The terminal's input side: one read from in_fd, kept until the master
 * takes it.  At the end of in_fd (a pipe or file given with a terminal
 * requested) the terminal gets its end-of-file character when it is in
 * canonical mode, so a reading command sees the end too. */
static void
relay_read_input (Collect *c)
{
  char buf[READ_CHUNK];
  ssize_t n;

  do
    n = read (c->in_fd, buf, sizeof buf);
  while (n < 0 && errno == EINTR);
  if (n < 0 && errno == EAGAIN)
    return;
  if (n > 0)
    {
      g_byte_array_append (c->to_master, (const guint8 *) buf, (guint) n);
      return;
    }
  c->in_fd = -1;
  slot_set (c, SLOT_IN, -1, 0);
  if (c->streams[0].read_fd >= 0)
    {
      struct termios tio;

      if (tcgetattr (c->streams[0].read_fd, &tio) == 0 && (tio.c_lflag & ICANON)
          && tio.c_cc[VEOF] != _POSIX_VDISABLE)
        g_byte_array_append (c->to_master, (const guint8 *) &tio.c_cc[VEOF], 1);
    }
}

/* Writes what the master takes now (it is non-blocking: a command that does
 * not read its terminal must not stall the output side). */
static void
relay_write_input (Collect *c)
{
  ssize_t n;

  do
    n = write (c->streams[0].read_fd, c->to_master->data, c->to_master->len);
  while (n < 0 && errno == EINTR);
  if (n < 0 && errno == EAGAIN)
    return;
  if (n < 0)
    {
      /* The terminal is hung up: the input has nowhere to go. */
      g_byte_array_set_size (c->to_master, 0);
      c->in_fd = -1;
      return;
    }
  g_byte_array_remove_range (c->to_master, 0, (guint) n);
}

/* The followed terminal was resized: give the sandbox's terminal the same
 * size.  The kernel sends SIGWINCH to its foreground group only when the
 * size changed; when it did not, the run sends it (the hook's promise:
 * each event is a SIGWINCH, so a caller that wrote over the command's
 * screen, `sbx run --ask`'s question, has a full-screen command redraw). */
static void
relay_resize (Collect *c)
{
  char buf[64];
  struct winsize ws;
  ssize_t n;

  /* One read: the poll said it is readable, so it does not block even on a
   * blocking descriptor; what is left makes the next poll return again.  At
   * its end (or broken) the hook is no longer watched. */
  n = read (c->resize_fd, buf, sizeof buf);
  if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
    {
      c->resize_fd = -1;
      return;
    }
  if (c->size_fd >= 0 && c->streams[0].read_fd >= 0 && ioctl (c->size_fd, TIOCGWINSZ, &ws) == 0)
    {
      struct winsize was;
      pid_t group;

      if (ioctl (c->streams[0].read_fd, TIOCGWINSZ, &was) == 0 && was.ws_row == ws.ws_row
          && was.ws_col == ws.ws_col && was.ws_xpixel == ws.ws_xpixel && was.ws_ypixel == ws.ws_ypixel)
        {
          /* the master's TIOCGPGRP names the sandbox terminal's foreground
           * group, as this process numbers it */
          if (ioctl (c->streams[0].read_fd, TIOCGPGRP, &group) == 0 && group > 1)
            (void) kill (-group, SIGWINCH);
        }
      else
        ioctl (c->streams[0].read_fd, TIOCSWINSZ, &ws);
    }
}

/* Hands a run's verdict (@result or @error, taken) to its caller. */
static void
run_complete (GTask        *task,
              SbxRunSync   *sync,
              SbxRunResult *result,
              GError       *error)
{
  if (sync != NULL)
    {
      sync->result = result;
      sync->error = error;
      sync->done = TRUE;
    }
  else if (result != NULL)
    {
      g_task_return_pointer (task, result, (GDestroyNotify) sbx_run_result_unref);
    }
  else
    {
      g_task_return_error (task, error);
    }
}

/* The run is over: its verdict goes to the caller. */
static void
collect_finish (Collect *c)
{
  SbxProcess *process = c->process;
  const char *argv0 = c->rr->argv[0];
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) output = NULL;
  SbxSuperviseOutcome outcome;

  stream_close (c, 0);
  stream_close (c, 1);
  slot_set (c, SLOT_IN, -1, 0);
  slot_set (c, SLOT_RESIZE, -1, 0);
  if (c->cancel_id != 0)
    g_cancellable_disconnect (c->cancellable, c->cancel_id);
  c->cancel_id = 0;

  g_mutex_lock (&process->mutex);
  outcome = process->outcome;
  if (process->teardown_error != NULL)
    error = g_error_copy (process->teardown_error);
  g_mutex_unlock (&process->mutex);
  if (error == NULL)
    switch (outcome)
      {
      case SBX_SUPERVISE_TIMED_OUT:
        sbx_executor_fail (&error, SBX_EXECUTOR_ERROR_TIMED_OUT,
                           "“%s” passed its timeout or deadline; its process tree was killed",
                           argv0);
        break;
      case SBX_SUPERVISE_CANCELLED:
        sbx_executor_fail (&error, SBX_EXECUTOR_ERROR_CANCELLED,
                           "The run of “%s” was cancelled; its process tree was killed", argv0);
        break;
      case SBX_SUPERVISE_CLOSED:
        sbx_executor_fail (&error, SBX_EXECUTOR_ERROR_CLOSED,
                           "The executor set was closed during the run of “%s”; its process "
                           "tree was killed", argv0);
        break;
      case SBX_SUPERVISE_EXITED:
      default:
        break;
      }

  g_clear_pointer (&c->guard, sbx_shared_guard_release);
  if (c->stage != NULL)
    sbx_executor_stage_end (g_steal_pointer (&c->stage), error == NULL ? process->run_result : NULL);
  if (error == NULL)
    {
      output = g_byte_array_free_to_bytes (g_steal_pointer (&c->captured));
      sbx_run_result_set_output (process->run_result, output, c->truncated);
      run_complete (c->task, c->sync, sbx_run_result_ref (process->run_result), NULL);
    }
  else
    {
      run_complete (c->task, c->sync, NULL, g_steal_pointer (&error));
    }
  g_clear_object (&c->task);
}

static gboolean
collect_dispatch (GSource     *source,
                  GSourceFunc  callback,
                  gpointer     user_data)
{
  Collect *c = (Collect *) source;
  GIOCondition rev[N_SLOTS];

  for (int i = 0; i < N_SLOTS; i++)
    rev[i] = slot_revents (c, i);
  if (!c->reaped && g_atomic_int_get (&c->reap_seen))
    {
      /* What is left on the terminal is output only, and what the dead
       * tree left in the pipes is drained, bounded in time. */
      c->reaped = TRUE;
      c->relay_input = FALSE;
      c->drain_deadline = g_get_monotonic_time () + DRAIN_TIMEOUT_US;
    }

  if (!c->stopped)
    {
      SbxSuperviseOutcome outcome;

      /* Cancelled, timed out or closed: the process is killing the tree. */
      g_mutex_lock (&c->process->mutex);
      outcome = c->process->outcome;
      g_mutex_unlock (&c->process->mutex);
      if (outcome != SBX_SUPERVISE_EXITED)
        collect_stop (c);
    }
  for (int s = 0; s < 2; s++)
    if (c->streams[s].read_fd >= 0 && (rev[s == 0 ? SLOT_OUT : SLOT_ERR] & (G_IO_IN | G_IO_HUP | G_IO_ERR)))
      collect_read (c, s);
  if (c->relay_input && c->resize_fd >= 0 && rev[SLOT_RESIZE] != 0)
    relay_resize (c);
  if (c->relay_input && c->in_fd >= 0 && (rev[SLOT_IN] & (G_IO_IN | G_IO_HUP | G_IO_ERR)))
    relay_read_input (c);
  if (c->relay_input && c->to_master->len > 0 && c->streams[0].read_fd >= 0)
    relay_write_input (c);

  if (c->reaped
      && ((c->streams[0].read_fd < 0 && c->streams[1].read_fd < 0)
          || g_get_monotonic_time () >= c->drain_deadline))
    {
      collect_finish (c);
      return G_SOURCE_REMOVE;
    }
  collect_update_slots (c);
  g_source_set_ready_time (source, c->reaped ? c->drain_deadline : -1);
  /* The reaping thread may have set the ready time between the check of
   * reap_seen above and the line before, whose -1 then erased its wake-up:
   * with the pipes already at their end nothing else would dispatch the
   * source again, and the run would never finish.  reap_seen is set before
   * that thread's wake-up, so reading it after ours closes the gap. */
  if (!c->reaped && g_atomic_int_get (&c->reap_seen))
    g_source_set_ready_time (source, 0);
  return G_SOURCE_CONTINUE;
}

static void
collect_finalize (GSource *source)
{
  Collect *c = (Collect *) source;

  for (int s = 0; s < 2; s++)
    if (c->streams[s].read_fd >= 0)
      close (c->streams[s].read_fd);
  if (c->cancel_id != 0)
    g_cancellable_disconnect (c->cancellable, c->cancel_id);
  g_clear_object (&c->cancellable);
  g_clear_pointer (&c->guard, sbx_shared_guard_release);
  g_clear_object (&c->task);
  g_clear_object (&c->process);
  g_clear_pointer (&c->rr, sbx_start_request_free);
  g_clear_pointer (&c->captured, g_byte_array_unref);
  g_clear_pointer (&c->to_master, g_byte_array_unref);
  if (c->stage != NULL)
    sbx_executor_stage_end (g_steal_pointer (&c->stage), NULL);
}

static GSourceFuncs collect_funcs = {
  .dispatch = collect_dispatch,
  .finalize = collect_finalize,
};

/* The target exited and was reaped (on this thread, the pool or the set's
 * close): the source looks at it on its own thread. */
static void
on_collect_reaped (gpointer data)
{
  Collect *c = data;

  g_atomic_int_set (&c->reap_seen, 1);
  if (!g_source_is_destroyed (&c->source))
    g_source_set_ready_time (&c->source, 0);
  g_source_unref (&c->source);   /* the reference the registration held */
}

static void
on_collect_cancelled (GCancellable *cancellable,
                      gpointer      data)
{
  sbx_process_kill (data, SBX_SUPERVISE_CANCELLED);
  sbx_process_kick_watches (data);   /* re-kill until it is gone */
}

/* Prepares one output stream; *child_fd is what the child gets.  stdout and
 * stderr captured together share one pipe (read through the first stream),
 * so the combined output keeps the child's own write order. */
static gboolean
setup_stream (Stream  *stream,
              int      caller_fd,
              gboolean limited,
              int     *shared_capture_w,
              int     *child_fd,
              GError **error)
{
  int fds[2];

  stream->read_fd = -1;
  stream->dest_fd = caller_fd;
  if (caller_fd >= 0 && !limited)
    {
      stream->mode = STREAM_DIRECT;
      *child_fd = caller_fd;
      return TRUE;
    }
  stream->mode = caller_fd < 0 ? STREAM_CAPTURE : STREAM_FORWARD;
  if (stream->mode == STREAM_CAPTURE && *shared_capture_w >= 0)
    {
      *child_fd = *shared_capture_w;
      return TRUE;
    }

  if (pipe2 (fds, O_CLOEXEC) < 0)
    {
      int errsv = errno;

      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errsv),
                   "Cannot create an output pipe: pipe2: %s", g_strerror (errsv));
      return FALSE;
    }
  fcntl (fds[0], F_SETFL, O_NONBLOCK);
  stream->read_fd = fds[0];
  *child_fd = fds[1];
  if (stream->mode == STREAM_CAPTURE)
    *shared_capture_w = fds[1];
  return TRUE;
}

/* What the process keeps of a run's request: the command, its directory
 * and its terminal, none of the caller's descriptors. */
static SbxStartRequest *
process_request (const SbxStartRequest *rr)
{
  SbxStartRequest *copy = sbx_start_request_new (rr->cwd, (const char *const *) rr->argv, NULL);

  copy->pty = rr->pty;
  copy->rows = rr->rows;
  copy->cols = rr->cols;
  copy->ignored_signals = rr->ignored_signals;
  copy->stage_roots = rr->stage_roots;
  copy->n_stage_roots = rr->n_stage_roots;
  return copy;
}

/* A run that fails before its spawn: the spawn error @error (taken) as the
 * run's error and exit event, @admission cleared, @null_fd closed, @stage
 * (nullable) removed, the caller told. */
static void
refuse_before_spawn (SbxExecutor           *self,
                     const SbxStartRequest *rr,
                     SbxAdmission          *admission,
                     int                    null_fd,
                     SbxStage              *stage,
                     GError                *error,
                     GTask                 *task,
                     SbxRunSync            *sync)
{
  GError *mapped = NULL;
  SbxSuperviseResult none = { 0 };

  if (null_fd >= 0)
    close (null_fd);
  sbx_executor_map_spawn_error (&mapped, error, rr->argv[0]);
  sbx_executor_emit_exit (self, admission, &none, mapped, FALSE);
  sbx_admission_clear (admission);
  if (stage != NULL)
    sbx_executor_stage_end (stage, NULL);
  run_complete (task, sync, NULL, mapped);
}

void
sbx_run_collect_start (SbxExecutor     *self,
                       SbxStartRequest *rr_in,
                       SbxAdmission    *admission,
                       const int        fds[3],
                       int              null_fd,
                       GCancellable    *cancellable,
                       GTask           *task,
                       SbxRunSync      *sync)
{
  gboolean reap_inline = sync != NULL;
  g_autoptr(SbxStartRequest) rr = rr_in;
  g_autoptr(GError) error = NULL;
  Stream streams[2] = { { STREAM_CAPTURE, -1, -1 }, { STREAM_CAPTURE, -1, -1 } };
  int child[3] = { fds[0], -1, -1 };
  int capture_w = -1;
  int out_w = -1;
  int err_w = -1;
  SbxSharedGuard *guard = NULL;
  SbxStage *stage = NULL;
  SbxProcess *process;
  Collect *c;

  /* A staged run is refused before anything is spawned when it cannot be
   * staged, and never runs unstaged. */
  if (rr->staged)
    {
      stage = sbx_executor_stage_begin (self, rr, admission, &error);
      if (stage == NULL)
        {
          refuse_before_spawn (self, rr, admission, null_fd, NULL, g_steal_pointer (&error),
                               task, sync);
          return;
        }
      rr->stage_roots = stage->roots;
      rr->n_stage_roots = stage->n_roots;
    }

  if (rr->pty)
    {
      /* The master is streams[0]'s read end once spawned: forwarded to the
       * stdout descriptor (or captured), counted like pipe output. */
      child[0] = -1;
      streams[0].mode = fds[1] >= 0 ? STREAM_FORWARD : STREAM_CAPTURE;
      streams[0].dest_fd = fds[1];
    }
  else
    {
      gboolean ok = setup_stream (&streams[0], fds[1], rr->max_output > 0, &capture_w, &child[1],
                                  &error);

      if (ok && streams[0].mode != STREAM_DIRECT)
        out_w = child[1];
      ok = ok && setup_stream (&streams[1], fds[2], rr->max_output > 0, &capture_w, &child[2],
                               &error);
      if (ok && streams[1].mode != STREAM_DIRECT && child[2] != child[1])
        err_w = child[2];
      if (!ok)
        {
          for (int s = 0; s < 2; s++)
            if (streams[s].read_fd >= 0)
              close (streams[s].read_fd);
          if (out_w >= 0)
            close (out_w);
          refuse_before_spawn (self, rr, admission, null_fd, stage, g_steal_pointer (&error),
                               task, sync);
          return;
        }
    }

  if (reap_inline)
    guard = sbx_shared_guard_hold (admission->guard);
  /* Our copies of the child's ends go once it has its own. */
  process = sbx_process_start_for_run (self, process_request (rr), admission, child, reap_inline,
                                       &error);
  if (out_w >= 0)
    close (out_w);
  if (err_w >= 0)
    close (err_w);
  if (null_fd >= 0)
    close (null_fd);
  if (process == NULL)
    {
      g_clear_pointer (&guard, sbx_shared_guard_release);
      for (int s = 0; s < 2; s++)
        if (streams[s].read_fd >= 0)
          close (streams[s].read_fd);
      if (stage != NULL)
        sbx_executor_stage_end (stage, NULL);
      run_complete (task, sync, NULL, g_steal_pointer (&error));
      return;
    }

  c = (Collect *) g_source_new (&collect_funcs, sizeof (Collect));
  g_source_set_static_name (&c->source, "SbxExecutor run");
  c->process = process;
  c->stage = stage;
  c->guard = g_steal_pointer (&guard);
  c->task = task != NULL ? g_object_ref (task) : NULL;
  c->sync = sync;
  c->streams[0] = streams[0];
  c->streams[1] = streams[1];
  for (int i = 0; i < N_SLOTS; i++)
    c->slots[i].fd = -1;
  c->captured = g_byte_array_new ();
  c->to_master = g_byte_array_new ();
  c->max_output = rr->max_output;
  c->in_fd = -1;
  c->resize_fd = -1;
  c->size_fd = -1;
  if (rr->pty)
    {
      c->pty = TRUE;
      c->relay_input = TRUE;
      c->in_fd = fds[0];
      c->resize_fd = rr->pty_fds[0];
      /* The size followed is the one named, else that of the caller's
       * terminal: stdin's, else stdout's (a terminal with piped input). */
      c->size_fd = c->resize_fd < 0 ? -1
                   : rr->pty_fds[1] >= 0 ? rr->pty_fds[1]
                   : (fds[0] >= 0 && isatty (fds[0])) ? fds[0] : fds[1];
      /* Our own descriptor of the master, non-blocking: neither side of the
       * relay may stall the other. */
      c->streams[0].read_fd = fcntl (process->pty_master, F_DUPFD_CLOEXEC, 3);
      if (c->streams[0].read_fd >= 0)
        fcntl (c->streams[0].read_fd, F_SETFL,
               fcntl (c->streams[0].read_fd, F_GETFL) | O_NONBLOCK);
      else
        sbx_process_kill (process, SBX_SUPERVISE_CANCELLED);
    }
  c->rr = g_steal_pointer (&rr);
  collect_update_slots (c);
  g_source_attach (&c->source, g_main_context_get_thread_default ());

  sbx_process_on_reaped (process, on_collect_reaped, g_source_ref (&c->source));
  if (cancellable != NULL)
    {
      c->cancellable = g_object_ref (cancellable);
      c->cancel_id = g_cancellable_connect (cancellable, G_CALLBACK (on_collect_cancelled),
                                            process, NULL);
    }
  g_source_unref (&c->source);   /* the context holds it until the run is over */
}
