/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Process supervision (see sbx-supervise-private.h for the sequence).
 *
 * Threading: everything here runs on the calling thread and touches only
 * the request, the result and fds this call created.  Backend calls are made
 * without any lock held.  No GMainContext is involved.
 */
#include "sbx-supervise-private.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <termios.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* After the tree is gone, how long to keep reading what it left behind when
 * a writer that escaped the backend's teardown (an unconfined daemon) keeps
 * a pipe open. */
#define DRAIN_TIMEOUT_US (500 * G_TIME_SPAN_MILLISECOND)
/* While waiting for a killed target, re-send SIGKILL this often. */
#define REKILL_INTERVAL_MS 1000
/* Without a pidfd, poll for the target's exit this often. */
#define NO_PIDFD_POLL_MS 10
#define READ_CHUNK 65536

static void
close_fd_ptr (int *fd)
{
  if (*fd >= 0)
    {
      int errsv = errno;

      close (*fd);
      *fd = -1;
      errno = errsv;
    }
}

#define sbx_autofd __attribute__((cleanup (close_fd_ptr)))

typedef enum
{
  STREAM_DIRECT,    /* the child gets the caller's fd itself */
  STREAM_CAPTURE,   /* a pipe we read into the result */
  STREAM_FORWARD,   /* a pipe we read and write on to the caller's fd */
} StreamMode;

typedef struct
{
  StreamMode mode;
  int        read_fd;    /* our end of the pipe, -1 when none or closed */
  int        dest_fd;    /* FORWARD: where the bytes go */
} Stream;

typedef struct
{
  const SbxSuperviseRequest *req;
  Stream        streams[2];       /* stdout, stderr */
  GByteArray   *captured;
  guint64       kept;             /* bytes captured or forwarded so far */
  gboolean      truncated;
  gboolean      killing;
  gint64        last_kill;        /* monotonic µs of the last SIGKILL */
  SbxSpawnResultV1 spawn;
  /* The sandbox terminal: streams[0] reads its master (the output), and
   * what in_fd gives is written to it (the input). */
  gboolean      pty;
  gboolean      relay_input;      /* FALSE once the target has exited */
  int           in_fd;            /* the caller's; -1 when none or at its end */
  GByteArray   *to_master;        /* read from in_fd, not yet written */
  int           resize_fd;        /* the caller's resize hook; -1 when none or at its end */
} Supervisor;

void
sbx_supervise_result_clear (SbxSuperviseResult *result)
{
  g_clear_pointer (&result->output, g_bytes_unref);
}

static void
stream_close (Stream *stream)
{
  close_fd_ptr (&stream->read_fd);
}

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

static void
supervisor_kill (Supervisor *sv)
{
  g_autoptr(GError) local_error = NULL;

  sv->last_kill = g_get_monotonic_time ();
  if (!sbx_backend_signal (sv->req->spec, sv->spawn.child, SIGKILL, &local_error))
    {
      /* Defense in depth: the target is our unreaped child, its pid cannot
       * have been reused. */
      g_debug ("backend signal failed (%s); killing pid %" G_GINT64_FORMAT " directly",
               local_error->message, sv->spawn.pid);
      kill ((pid_t) sv->spawn.pid, SIGKILL);
    }
}

static void
supervisor_request_kill (Supervisor *sv)
{
  if (sv->killing)
    return;
  sv->killing = TRUE;
  supervisor_kill (sv);
  /* No more output is wanted. */
  stream_close (&sv->streams[0]);
  stream_close (&sv->streams[1]);
}

/* Keeps what fits under the limit; past it, kills the tree. */
static void
supervisor_accept (Supervisor *sv,
                   Stream     *stream,
                   const char *data,
                   gsize       n)
{
  gsize keep = n;

  if (sv->req->max_output > 0)
    {
      guint64 room = sv->req->max_output - sv->kept;

      if ((guint64) n > room)
        keep = (gsize) room;
    }

  if (keep > 0)
    {
      if (stream->mode == STREAM_CAPTURE)
        {
          g_byte_array_append (sv->captured, (const guint8 *) data, keep);
        }
      else if (!write_all_nosigpipe (stream->dest_fd, data, keep))
        {
          int errsv = errno;

          /* The reader went away: stop reading this stream, so the child
           * sees EPIPE on its next write, like with a direct pipe. */
          g_debug ("forwarding output to fd %d failed: %s", stream->dest_fd, g_strerror (errsv));
          stream_close (stream);
        }
      sv->kept += keep;
    }

  if (keep < n)
    {
      sv->truncated = TRUE;
      supervisor_request_kill (sv);
    }
}

/* Reads once from @stream.  Returns FALSE at EOF (the stream is closed). */
static gboolean
supervisor_read (Supervisor *sv,
                 Stream     *stream)
{
  char buf[READ_CHUNK];
  ssize_t n;

  do
    n = read (stream->read_fd, buf, sizeof buf);
  while (n < 0 && errno == EINTR);

  if (n < 0 && errno == EAGAIN)
    return TRUE;
  if (n <= 0)
    {
      stream_close (stream);
      return FALSE;
    }
  supervisor_accept (sv, stream, buf, (gsize) n);
  return TRUE;
}

/* The terminal's input side: one read from in_fd, kept until the master
 * takes it.  At the end of in_fd (a pipe or file given with a terminal
 * requested) the terminal gets its end-of-file character when it is in
 * canonical mode, so a reading command sees the end too. */
static void
relay_read_input (Supervisor *sv)
{
  char buf[READ_CHUNK];
  ssize_t n;

  do
    n = read (sv->in_fd, buf, sizeof buf);
  while (n < 0 && errno == EINTR);
  if (n < 0 && errno == EAGAIN)
    return;
  if (n > 0)
    {
      g_byte_array_append (sv->to_master, (const guint8 *) buf, (guint) n);
      return;
    }
  sv->in_fd = -1;
  if (sv->streams[0].read_fd >= 0)
    {
      struct termios tio;

      if (tcgetattr (sv->streams[0].read_fd, &tio) == 0 && (tio.c_lflag & ICANON)
          && tio.c_cc[VEOF] != _POSIX_VDISABLE)
        g_byte_array_append (sv->to_master, (const guint8 *) &tio.c_cc[VEOF], 1);
    }
}

/* Writes what the master takes now (it is non-blocking: a command that does
 * not read its terminal must not stall the output side). */
static void
relay_write_input (Supervisor *sv)
{
  ssize_t n;

  do
    n = write (sv->streams[0].read_fd, sv->to_master->data, sv->to_master->len);
  while (n < 0 && errno == EINTR);
  if (n < 0 && errno == EAGAIN)
    return;
  if (n < 0)
    {
      /* The terminal is hung up: the input has nowhere to go. */
      g_byte_array_set_size (sv->to_master, 0);
      sv->in_fd = -1;
      return;
    }
  g_byte_array_remove_range (sv->to_master, 0, (guint) n);
}

/* The followed terminal was resized: give the sandbox's terminal the same
 * size (the kernel then sends SIGWINCH to its foreground group). */
static void
relay_resize (Supervisor *sv)
{
  char buf[64];
  struct winsize ws;

  ssize_t n;

  /* One read: poll said it is readable, so it does not block even on a
   * blocking descriptor; what is left makes the next poll return again.  At
   * its end (or broken) the hook is no longer watched. */
  n = read (sv->resize_fd, buf, sizeof buf);
  if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
    {
      sv->resize_fd = -1;
      return;
    }
  if (sv->req->pty_size_fd >= 0 && sv->streams[0].read_fd >= 0
      && ioctl (sv->req->pty_size_fd, TIOCGWINSZ, &ws) == 0)
    ioctl (sv->streams[0].read_fd, TIOCSWINSZ, &ws);
}

static int
ms_until (gint64 deadline)
{
  gint64 left;

  if (deadline == 0)
    return -1;
  left = deadline - g_get_monotonic_time ();
  if (left <= 0)
    return 0;
  return (int) MIN ((left + 999) / 1000, G_MAXINT);
}

/* Without a pidfd: has the target exited (without reaping it)? */
static gboolean
target_exited_nopidfd (pid_t pid)
{
  siginfo_t info = { 0 };

  if (waitid (P_PID, (id_t) pid, &info, WEXITED | WNOHANG | WNOWAIT) < 0)
    return errno != EINTR;   /* ECHILD: someone else reaped it: stop waiting */
  return info.si_pid == pid;
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

/* Polls the open streams once (up to @timeout ms) and reads what is there.
 * @extra are further fds to wait on; their revents are filled in. */
static int
supervisor_poll (Supervisor    *sv,
                 struct pollfd *extra,
                 nfds_t         n_extra,
                 int            timeout)
{
  struct pollfd pfds[8];
  int idx[2] = { -1, -1 };
  int in_idx = -1;
  int out_idx = -1;
  int resize_idx = -1;
  nfds_t n = 0;
  int rc;

  g_return_val_if_fail (n_extra <= 3, -1);
  for (int s = 0; s < 2; s++)
    if (sv->streams[s].read_fd >= 0)
      {
        idx[s] = (int) n;
        pfds[n++] = (struct pollfd) { .fd = sv->streams[s].read_fd, .events = POLLIN };
      }
  if (sv->pty && sv->relay_input && sv->streams[0].read_fd >= 0)
    {
      if (sv->to_master->len > 0)
        {
          out_idx = (int) n;
          pfds[n++] = (struct pollfd) { .fd = sv->streams[0].read_fd, .events = POLLOUT };
        }
      else if (sv->in_fd >= 0)
        {
          in_idx = (int) n;
          pfds[n++] = (struct pollfd) { .fd = sv->in_fd, .events = POLLIN };
        }
      if (sv->resize_fd >= 0)
        {
          resize_idx = (int) n;
          pfds[n++] = (struct pollfd) { .fd = sv->resize_fd, .events = POLLIN };
        }
    }
  for (nfds_t i = 0; i < n_extra; i++)
    pfds[n++] = extra[i];

  do
    rc = poll (pfds, n, timeout);
  while (rc < 0 && errno == EINTR);
  if (rc < 0)
    return rc;

  for (nfds_t i = 0; i < n_extra; i++)
    extra[i].revents = pfds[n - n_extra + i].revents;
  for (int s = 0; s < 2; s++)
    if (idx[s] >= 0 && sv->streams[s].read_fd >= 0
        && (pfds[idx[s]].revents & (POLLIN | POLLHUP | POLLERR)))
      supervisor_read (sv, &sv->streams[s]);
  if (resize_idx >= 0 && (pfds[resize_idx].revents & (POLLIN | POLLHUP | POLLERR | POLLNVAL)))
    relay_resize (sv);
  if (in_idx >= 0 && sv->in_fd >= 0 && (pfds[in_idx].revents & (POLLIN | POLLHUP | POLLERR)))
    relay_read_input (sv);
  if (sv->to_master->len > 0 && sv->streams[0].read_fd >= 0 && sv->relay_input
      && (out_idx < 0 || (pfds[out_idx].revents & (POLLOUT | POLLHUP | POLLERR))))
    relay_write_input (sv);
  return rc;
}

gboolean
sbx_supervise_run (const SbxSuperviseRequest *req,
                   SbxSuperviseResult        *result,
                   gboolean                  *out_spawned,
                   GError                   **error)
{
  Supervisor sv = { .req = req };
  g_autoptr(GByteArray) captured = g_byte_array_new ();
  g_autoptr(GByteArray) to_master = g_byte_array_new ();
  sbx_autofd int out_w = -1;
  sbx_autofd int err_w = -1;
  sbx_autofd int pidfd = -1;
  int capture_w = -1;
  int child_out = -1;
  int child_err = -1;
  int cancel_fd = -1;
  gboolean exited = FALSE;
  gboolean ok = TRUE;
  gint64 started;
  gint64 drain_deadline;
  SbxSpawnRequestV1 spawn_req = { 0 };
  int status = 0;

  g_return_val_if_fail (req != NULL && req->spec != NULL, FALSE);
  g_return_val_if_fail (req->argv != NULL && req->argv[0] != NULL, FALSE);
  g_return_val_if_fail (result != NULL, FALSE);

  memset (result, 0, sizeof *result);
  if (out_spawned != NULL)
    *out_spawned = FALSE;
  sv.streams[0].read_fd = sv.streams[1].read_fd = -1;
  sv.captured = captured;
  sv.to_master = to_master;
  sv.in_fd = -1;
  sv.resize_fd = -1;

  if (req->pty)
    {
      /* The master is streams[0]'s read end once spawned: forwarded to
       * stdout_fd (or captured), counted like pipe output. */
      sv.pty = TRUE;
      sv.relay_input = TRUE;
      sv.in_fd = req->stdin_fd;
      sv.resize_fd = req->pty_resize_fd;
      sv.streams[0].mode = req->stdout_fd >= 0 ? STREAM_FORWARD : STREAM_CAPTURE;
      sv.streams[0].dest_fd = req->stdout_fd;
      sv.streams[1].mode = STREAM_CAPTURE;
      sv.streams[1].dest_fd = -1;
    }
  else
    {
      /* Our copies of the child's pipe write ends are closed (autofd) once
       * the child has its own. */
      if (!setup_stream (&sv.streams[0], req->stdout_fd, req->max_output > 0, &capture_w,
                         &child_out, error))
        return FALSE;
      if (sv.streams[0].mode != STREAM_DIRECT)
        out_w = child_out;
      if (!setup_stream (&sv.streams[1], req->stderr_fd, req->max_output > 0, &capture_w,
                         &child_err, error))
        {
          stream_close (&sv.streams[0]);
          return FALSE;
        }
      if (sv.streams[1].mode != STREAM_DIRECT && child_err != child_out)
        err_w = child_err;
    }

  spawn_req.struct_size = sizeof spawn_req;
  spawn_req.flags = req->pty ? SBX_SPAWN_PTY_SANDBOX : 0;
  if (req->ignored_signals != 0)
    spawn_req.flags |= SBX_SPAWN_IGNORED_SIGNALS;
  spawn_req.ignored_signals = req->ignored_signals;
  spawn_req.denial_sink = req->denial_sink;
  spawn_req.cwd = req->cwd;
  spawn_req.argv = req->argv;
  spawn_req.envp = req->envp;
  spawn_req.stdin_fd = req->pty ? -1 : req->stdin_fd;
  spawn_req.stdout_fd = child_out;
  spawn_req.stderr_fd = child_err;
  spawn_req.pty_rows = req->pty_rows;
  spawn_req.pty_cols = req->pty_cols;
  spawn_req.listens = req->listens;
  spawn_req.listen_fds = req->listen_fds;
  spawn_req.n_listens = req->n_listens;
  sv.spawn.struct_size = sizeof sv.spawn;
  sv.spawn.pidfd = -1;
  sv.spawn.proxy_listen_fd = -1;
  sv.spawn.pty_master_fd = -1;

  started = g_get_monotonic_time ();
  if (!sbx_backend_spawn (req->spec, &spawn_req, &sv.spawn, error))
    {
      stream_close (&sv.streams[0]);
      stream_close (&sv.streams[1]);
      return FALSE;
    }
  if (out_spawned != NULL)
    *out_spawned = TRUE;
  close_fd_ptr (&out_w);
  close_fd_ptr (&err_w);
  if ((sv.spawn.proxy_listen_fd >= 0 || req->n_listens > 0) && req->proxy_listen_fn != NULL)
    req->proxy_listen_fn (req->proxy_listen_data, sv.spawn.proxy_listen_fd);
  else if (sv.spawn.proxy_listen_fd >= 0)
    close (sv.spawn.proxy_listen_fd);
  if (sv.pty)
    {
      /* Non-blocking: neither side of the relay may stall the other. */
      sv.streams[0].read_fd = sv.spawn.pty_master_fd;
      fcntl (sv.streams[0].read_fd, F_SETFL, fcntl (sv.streams[0].read_fd, F_GETFL) | O_NONBLOCK);
    }
  pidfd = sv.spawn.pidfd;
  if (pidfd < 0)
    pidfd = (int) syscall (SYS_pidfd_open, (pid_t) sv.spawn.pid, 0);

  if (req->cancellable != NULL)
    cancel_fd = g_cancellable_get_fd (req->cancellable);

  /* Supervise until the target exits. */
  while (!exited)
    {
      struct pollfd extra[3];
      nfds_t n = 0;
      int cancel_idx = -1;
      int close_idx = -1;
      int timeout;

      if (pidfd >= 0)
        {
          extra[n++] = (struct pollfd) { .fd = pidfd, .events = POLLIN };
        }
      if (!sv.killing)
        {
          if (cancel_fd >= 0)
            {
              cancel_idx = (int) n;
              extra[n++] = (struct pollfd) { .fd = cancel_fd, .events = POLLIN };
            }
          if (req->close_fd >= 0)
            {
              close_idx = (int) n;
              extra[n++] = (struct pollfd) { .fd = req->close_fd, .events = POLLIN };
            }
          timeout = ms_until (req->deadline);
        }
      else
        {
          timeout = REKILL_INTERVAL_MS;
        }
      if (pidfd < 0 && (timeout < 0 || timeout > NO_PIDFD_POLL_MS))
        timeout = NO_PIDFD_POLL_MS;

      if (supervisor_poll (&sv, extra, n, timeout) < 0)
        {
          int errsv = errno;

          g_warning ("poll failed while supervising pid %" G_GINT64_FORMAT ": %s",
                     sv.spawn.pid, g_strerror (errsv));
          supervisor_request_kill (&sv);
          g_usleep (G_USEC_PER_SEC / 100);
        }

      if (pidfd >= 0)
        exited = (extra[0].revents & (POLLIN | POLLHUP)) != 0;
      else
        exited = target_exited_nopidfd ((pid_t) sv.spawn.pid);
      if (exited)
        break;

      if (!sv.killing)
        {
          if (cancel_idx >= 0 && (extra[cancel_idx].revents & POLLIN))
            result->outcome = SBX_SUPERVISE_CANCELLED;
          else if (close_idx >= 0 && (extra[close_idx].revents & POLLIN))
            result->outcome = SBX_SUPERVISE_CLOSED;
          else if (req->deadline != 0 && g_get_monotonic_time () >= req->deadline)
            result->outcome = SBX_SUPERVISE_TIMED_OUT;
          if (result->outcome != SBX_SUPERVISE_EXITED)
            supervisor_request_kill (&sv);
        }
      else if (g_get_monotonic_time () - sv.last_kill >= REKILL_INTERVAL_MS * 1000)
        {
          supervisor_kill (&sv);
        }
    }

  if (cancel_fd >= 0)
    g_cancellable_release_fd (req->cancellable);
  /* The command is gone: what is left on the terminal is output only. */
  sv.relay_input = FALSE;

  /* The target has exited but is not reaped: it still pins its pid (and its
   * process group), so killing the rest of the tree now cannot hit a
   * recycled id.  finish() then proves the tree gone. */
  supervisor_kill (&sv);
  while (waitpid ((pid_t) sv.spawn.pid, &status, 0) < 0)
    {
      int errsv = errno;

      if (errsv == EINTR)
        continue;
      g_warning ("waitpid(%" G_GINT64_FORMAT ") failed: %s; was SIGCHLD ignored?",
                 sv.spawn.pid, g_strerror (errsv));
      status = W_EXITCODE (0, SIGKILL);
      break;
    }
  result->duration_us = g_get_monotonic_time () - started;
  result->containment = sv.spawn.containment;

  result->exit.struct_size = sizeof result->exit;
  if (!sbx_backend_finish (req->spec, sv.spawn.child, status, &result->exit, error))
    ok = FALSE;

  /* Drain what the dead tree left in the pipes, bounded in time for a writer
   * that escaped the teardown. */
  drain_deadline = g_get_monotonic_time () + DRAIN_TIMEOUT_US;
  while (sv.streams[0].read_fd >= 0 || sv.streams[1].read_fd >= 0)
    {
      int timeout = ms_until (drain_deadline);

      if (timeout == 0 || supervisor_poll (&sv, NULL, 0, timeout) < 0)
        break;
    }
  stream_close (&sv.streams[0]);
  stream_close (&sv.streams[1]);

  result->truncated = sv.truncated;
  result->output = g_byte_array_free_to_bytes (g_steal_pointer (&captured));
  return ok;
}
