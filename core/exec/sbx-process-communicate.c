/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * SbxProcess: communicate() and its twins, on top of the process's streams
 * and wait_async() (sbx-process.c): write stdin, read stdout and stderr to
 * their end and wait, all on the caller's thread-default main context; the
 * sync forms run that on a private context.
 */
#include "sbx-process-private.h"

#include <string.h>

/* ------------------------------------------------------------------------- */
/* Communicate                                                                */
/* ------------------------------------------------------------------------- */

typedef struct
{
  GBytes             *stdin_buf;
  GMemoryOutputStream *out;
  GMemoryOutputStream *err;
  guint               pending;
  GError             *io_error;
  GError             *wait_error;
  gboolean            waited;
} Communicate;

static void
communicate_free (gpointer data)
{
  Communicate *c = data;

  g_clear_pointer (&c->stdin_buf, g_bytes_unref);
  g_clear_object (&c->out);
  g_clear_object (&c->err);
  g_clear_error (&c->io_error);
  g_clear_error (&c->wait_error);
  g_free (c);
}

static void
communicate_step_done (GTask *task)
{
  Communicate *c = g_task_get_task_data (task);

  if (--c->pending > 0)
    return;
  if (c->wait_error != NULL)
    g_task_return_error (task, g_steal_pointer (&c->wait_error));
  else if (c->io_error != NULL)
    g_task_return_error (task, g_steal_pointer (&c->io_error));
  else
    g_task_return_boolean (task, TRUE);
  g_object_unref (task);
}

static void
communicate_record (Communicate *c,
                    GError      *error)
{
  if (error == NULL)
    return;
  if (c->io_error == NULL)
    c->io_error = error;
  else
    g_error_free (error);
}

static void
on_communicate_spliced (GObject      *source,
                        GAsyncResult *result,
                        gpointer      data)
{
  GTask *task = data;
  Communicate *c = g_task_get_task_data (task);
  SbxProcess *self = g_task_get_source_object (task);
  GInputStream *pipe = G_OUTPUT_STREAM (source) == G_OUTPUT_STREAM (c->out)
                       ? sbx_process_get_stdout_pipe (self) : sbx_process_get_stderr_pipe (self);
  GError *error = NULL;

  if (g_output_stream_splice_finish (G_OUTPUT_STREAM (source), result, &error) < 0)
    communicate_record (c, error);
  /* Both ends closed here, not by the splice (see communicate_close_stdin). */
  g_input_stream_close (pipe, NULL, NULL);
  g_output_stream_close (G_OUTPUT_STREAM (source), NULL, NULL);
  communicate_step_done (task);
}

/* Closes the stdin pipe as one step of @task.  A pipe's close never
 * blocks, so it is closed on this thread: GLib's close_async() of a pipe
 * stream runs on its thread pool, whose thread lets go of the operation (and
 * with it of the caller's main context) only after the caller was called
 * back; a sync communicate()'s private context, and its descriptor, would
 * then be freed on that thread after communicate() returned. */
static void
communicate_close_stdin (GTask         *task,
                         GOutputStream *stdin_pipe)
{
  GError *error = NULL;

  if (!g_output_stream_close (stdin_pipe, NULL, &error)
      && !g_error_matches (error, G_IO_ERROR, G_IO_ERROR_BROKEN_PIPE))
    communicate_record (g_task_get_task_data (task), error);
  else
    g_clear_error (&error);
  communicate_step_done (task);
}

static void
on_communicate_written (GObject      *source,
                        GAsyncResult *result,
                        gpointer      data)
{
  GTask *task = data;
  GError *error = NULL;

  /* A process that exits without reading all of its input is not an
   * error of the exchange. */
  if (!g_output_stream_write_bytes_finish (G_OUTPUT_STREAM (source), result, &error)
      && !g_error_matches (error, G_IO_ERROR, G_IO_ERROR_BROKEN_PIPE))
    communicate_record (g_task_get_task_data (task), error);
  else
    g_clear_error (&error);
  communicate_close_stdin (task, G_OUTPUT_STREAM (source));
}

static void
on_communicate_waited (GObject      *source,
                       GAsyncResult *result,
                       gpointer      data)
{
  GTask *task = data;
  Communicate *c = g_task_get_task_data (task);

  sbx_process_wait_finish (SBX_PROCESS (source), result, &c->wait_error);
  communicate_step_done (task);
}

static void
communicate_start (SbxProcess          *self,
                   GBytes              *stdin_buf,
                   GCancellable        *cancellable,
                   gpointer             source_tag,
                   GAsyncReadyCallback  callback,
                   gpointer             user_data)
{
  GTask *task = g_task_new (self, cancellable, callback, user_data);
  Communicate *c = g_new0 (Communicate, 1);
  /* The splice closes neither end: on_communicate_spliced() does. */
  GOutputStreamSpliceFlags flags = G_OUTPUT_STREAM_SPLICE_NONE;

  g_task_set_source_tag (task, source_tag);
  g_task_set_check_cancellable (task, FALSE);
  g_task_set_task_data (task, c, communicate_free);
  /* One reference for the steps, dropped by the last one. */
  c->pending = 1;

  if (sbx_process_get_stdin_pipe (self) != NULL)
    {
      c->pending++;
      if (stdin_buf != NULL)
        {
          c->stdin_buf = g_bytes_ref (stdin_buf);
          g_output_stream_write_bytes_async (sbx_process_get_stdin_pipe (self), stdin_buf, G_PRIORITY_DEFAULT,
                                             cancellable, on_communicate_written, task);
        }
      else if (!sbx_process_has_pty (self))
        communicate_close_stdin (task, sbx_process_get_stdin_pipe (self));
      else
        c->pending--;   /* a PTY master stays open: closing it hangs up */
    }
  if (sbx_process_get_stdout_pipe (self) != NULL)
    {
      c->pending++;
      c->out = G_MEMORY_OUTPUT_STREAM (g_memory_output_stream_new_resizable ());
      g_output_stream_splice_async (G_OUTPUT_STREAM (c->out), sbx_process_get_stdout_pipe (self), flags,
                                    G_PRIORITY_DEFAULT, cancellable, on_communicate_spliced, task);
    }
  if (sbx_process_get_stderr_pipe (self) != NULL)
    {
      c->pending++;
      c->err = G_MEMORY_OUTPUT_STREAM (g_memory_output_stream_new_resizable ());
      g_output_stream_splice_async (G_OUTPUT_STREAM (c->err), sbx_process_get_stderr_pipe (self), flags,
                                    G_PRIORITY_DEFAULT, cancellable, on_communicate_spliced, task);
    }
  c->pending++;
  sbx_process_wait_async (self, cancellable, on_communicate_waited, task);
  communicate_step_done (task);
}

static gboolean
communicate_finish (SbxProcess    *self,
                    GAsyncResult  *result,
                    gpointer       source_tag,
                    GBytes       **stdout_buf,
                    GBytes       **stderr_buf,
                    GError       **error)
{
  Communicate *c;

  g_return_val_if_fail (SBX_IS_PROCESS (self), FALSE);
  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);
  g_return_val_if_fail (g_async_result_is_tagged (result, source_tag), FALSE);

  c = g_task_get_task_data (G_TASK (result));
  if (!g_task_propagate_boolean (G_TASK (result), error))
    return FALSE;
  if (stdout_buf != NULL)
    *stdout_buf = c->out != NULL ? g_memory_output_stream_steal_as_bytes (c->out) : NULL;
  if (stderr_buf != NULL)
    *stderr_buf = c->err != NULL ? g_memory_output_stream_steal_as_bytes (c->err) : NULL;
  return TRUE;
}

/**
 * sbx_process_communicate_async:
 * @self: a [class@Sbx.Process]
 * @stdin_buf: (nullable): what to write to stdin before closing it; %NULL
 *   closes it at once
 * @cancellable: (nullable): cancelling it kills the whole process tree
 * @callback: (scope async): called once the process has exited and its
 *   output is read
 * @user_data: data for @callback
 *
 * Writes @stdin_buf, reads stdout and stderr to their end and waits for the
 * process, all on the caller's thread-default main context.
 *
 * Since: 0.1
 */
void
sbx_process_communicate_async (SbxProcess          *self,
                               GBytes              *stdin_buf,
                               GCancellable        *cancellable,
                               GAsyncReadyCallback  callback,
                               gpointer             user_data)
{
  g_return_if_fail (SBX_IS_PROCESS (self));

  communicate_start (self, stdin_buf, cancellable, sbx_process_communicate_async, callback,
                     user_data);
}

/**
 * sbx_process_communicate_finish:
 * @self: a [class@Sbx.Process]
 * @result: the result passed to the callback
 * @stdout_buf: (out) (optional) (transfer full) (nullable): what the process
 *   wrote to stdout, %NULL when stdout is not a pipe
 * @stderr_buf: (out) (optional) (transfer full) (nullable): what it wrote to
 *   stderr, %NULL when stderr is not a pipe
 * @error: return location for an error
 *
 * Finishes [method@Sbx.Process.communicate_async].
 *
 * Returns: as [method@Sbx.Process.wait], or %FALSE on an I/O error
 *
 * Since: 0.1
 */
gboolean
sbx_process_communicate_finish (SbxProcess    *self,
                                GAsyncResult  *result,
                                GBytes       **stdout_buf,
                                GBytes       **stderr_buf,
                                GError       **error)
{
  return communicate_finish (self, result, sbx_process_communicate_async, stdout_buf, stderr_buf,
                             error);
}

static void
store_result (GObject      *source,
              GAsyncResult *result,
              gpointer      data)
{
  *(GAsyncResult **) data = g_object_ref (result);
}

/* Runs communicate_async on a private main context until it completes. */
static GAsyncResult *
communicate_private (SbxProcess   *self,
                     GBytes       *stdin_buf,
                     GCancellable *cancellable,
                     gpointer      source_tag)
{
  g_autoptr(GMainContext) context = g_main_context_new ();
  GAsyncResult *result = NULL;

  g_main_context_push_thread_default (context);
  communicate_start (self, stdin_buf, cancellable, source_tag, store_result, &result);
  while (result == NULL)
    g_main_context_iteration (context, TRUE);
  g_main_context_pop_thread_default (context);
  return result;
}

/**
 * sbx_process_communicate:
 * @self: a [class@Sbx.Process]
 * @stdin_buf: (nullable): what to write to stdin before closing it
 * @cancellable: (nullable): cancelling it kills the whole process tree
 * @stdout_buf: (out) (optional) (transfer full) (nullable): stdout's bytes
 * @stderr_buf: (out) (optional) (transfer full) (nullable): stderr's bytes
 * @error: return location for an error
 *
 * Synchronous [method@Sbx.Process.communicate_async] (on a private main
 * context).
 *
 * Returns: as [method@Sbx.Process.communicate_finish]
 *
 * Since: 0.1
 */
gboolean
sbx_process_communicate (SbxProcess    *self,
                         GBytes        *stdin_buf,
                         GCancellable  *cancellable,
                         GBytes       **stdout_buf,
                         GBytes       **stderr_buf,
                         GError       **error)
{
  g_autoptr(GAsyncResult) result = NULL;

  g_return_val_if_fail (SBX_IS_PROCESS (self), FALSE);

  result = communicate_private (self, stdin_buf, cancellable, sbx_process_communicate_async);
  return communicate_finish (self, result, sbx_process_communicate_async, stdout_buf, stderr_buf,
                             error);
}

static gboolean
bytes_to_utf8 (GBytes      *bytes,
               const char  *what,
               char       **out,
               GError     **error)
{
  gsize len = 0;
  const char *data;

  if (out == NULL)
    return TRUE;
  *out = NULL;
  if (bytes == NULL)
    return TRUE;
  data = g_bytes_get_data (bytes, &len);
  if (!g_utf8_validate_len (data, len, NULL))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "The process's %s is not valid UTF-8",
                   what);
      return FALSE;
    }
  *out = g_strndup (data, len);
  return TRUE;
}

static gboolean
communicate_utf8_finish (SbxProcess    *self,
                         GAsyncResult  *result,
                         gpointer       source_tag,
                         char         **stdout_buf,
                         char         **stderr_buf,
                         GError       **error)
{
  g_autoptr(GBytes) out = NULL;
  g_autoptr(GBytes) err = NULL;

  if (stdout_buf != NULL)
    *stdout_buf = NULL;
  if (stderr_buf != NULL)
    *stderr_buf = NULL;
  if (!communicate_finish (self, result, source_tag, &out, &err, error))
    return FALSE;
  if (!bytes_to_utf8 (out, "stdout", stdout_buf, error))
    return FALSE;
  if (!bytes_to_utf8 (err, "stderr", stderr_buf, error))
    {
      if (stdout_buf != NULL)
        g_clear_pointer (stdout_buf, g_free);
      return FALSE;
    }
  return TRUE;
}

/**
 * sbx_process_communicate_utf8_async:
 * @self: a [class@Sbx.Process]
 * @stdin_buf: (nullable): text to write to stdin before closing it
 * @cancellable: (nullable): cancelling it kills the whole process tree
 * @callback: (scope async): called once the process has exited and its
 *   output is read
 * @user_data: data for @callback
 *
 * [method@Sbx.Process.communicate_async] for text.
 *
 * Since: 0.1
 */
void
sbx_process_communicate_utf8_async (SbxProcess          *self,
                                    const char          *stdin_buf,
                                    GCancellable        *cancellable,
                                    GAsyncReadyCallback  callback,
                                    gpointer             user_data)
{
  g_autoptr(GBytes) bytes = NULL;

  g_return_if_fail (SBX_IS_PROCESS (self));

  if (stdin_buf != NULL)
    bytes = g_bytes_new (stdin_buf, strlen (stdin_buf));
  communicate_start (self, bytes, cancellable, sbx_process_communicate_utf8_async, callback,
                     user_data);
}

/**
 * sbx_process_communicate_utf8_finish:
 * @self: a [class@Sbx.Process]
 * @result: the result passed to the callback
 * @stdout_buf: (out) (optional) (transfer full) (nullable): stdout's text
 * @stderr_buf: (out) (optional) (transfer full) (nullable): stderr's text
 * @error: return location for an error
 *
 * Finishes [method@Sbx.Process.communicate_utf8_async]; output that is not
 * valid UTF-8 fails with %G_IO_ERROR_FAILED.
 *
 * Returns: as [method@Sbx.Process.communicate_finish]
 *
 * Since: 0.1
 */
gboolean
sbx_process_communicate_utf8_finish (SbxProcess    *self,
                                     GAsyncResult  *result,
                                     char         **stdout_buf,
                                     char         **stderr_buf,
                                     GError       **error)
{
  return communicate_utf8_finish (self, result, sbx_process_communicate_utf8_async, stdout_buf,
                                  stderr_buf, error);
}

/**
 * sbx_process_communicate_utf8:
 * @self: a [class@Sbx.Process]
 * @stdin_buf: (nullable): text to write to stdin before closing it
 * @cancellable: (nullable): cancelling it kills the whole process tree
 * @stdout_buf: (out) (optional) (transfer full) (nullable): stdout's text
 * @stderr_buf: (out) (optional) (transfer full) (nullable): stderr's text
 * @error: return location for an error
 *
 * Synchronous [method@Sbx.Process.communicate_utf8_async].
 *
 * Returns: as [method@Sbx.Process.communicate_finish]
 *
 * Since: 0.1
 */
gboolean
sbx_process_communicate_utf8 (SbxProcess    *self,
                              const char    *stdin_buf,
                              GCancellable  *cancellable,
                              char         **stdout_buf,
                              char         **stderr_buf,
                              GError       **error)
{
  g_autoptr(GBytes) bytes = NULL;
  g_autoptr(GAsyncResult) result = NULL;

  g_return_val_if_fail (SBX_IS_PROCESS (self), FALSE);

  if (stdin_buf != NULL)
    bytes = g_bytes_new (stdin_buf, strlen (stdin_buf));
  result = communicate_private (self, bytes, cancellable, sbx_process_communicate_utf8_async);
  return communicate_utf8_finish (self, result, sbx_process_communicate_utf8_async, stdout_buf,
                                  stderr_buf, error);
}
