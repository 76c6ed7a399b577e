/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Reporter "jsonl": an append-only JSON-lines audit log.  The config is the
 * path of the log file.  Each event is one line, written with a single
 * write() on an O_APPEND descriptor, so concurrent emitters (threads of one
 * process, or several processes sharing the file) never interleave within a
 * line.  The file is created 0600.
 *
 * The reporter never alters policy; an error here only makes the host count
 * and log a failure.  It keeps no mutable state besides the descriptor, so
 * emit() may run concurrently on one sink.
 *
 * Plain C against sbx-plugin-abi.h only.
 */
#include <sbx/sbx-plugin-abi.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Every entry point, declared through its ABI typedef (a signature that
 * does not match the slot it fills cannot compile). */
static SbxReporterOpenFunc jsonl_open;
static SbxReporterEmitFunc jsonl_emit;
static SbxReporterCloseFunc jsonl_close;
static SbxPluginInitFunc jsonl_init;
static SbxPluginFiniFunc jsonl_fini;

typedef struct
{
  const SbxHostV1 *host;
} JsonlPlugin;

typedef struct
{
  int fd;
} JsonlSink;

static void
jsonl_fail (JsonlPlugin *plugin,
            SbxHostCall *call,
            int32_t      status,
            const char  *what,
            const char  *path,
            int          err)
{
  char message[1024];

  snprintf (message, sizeof message, "jsonl: %s%s%s%s%s", what,
            path != NULL ? " " : "", path != NULL ? path : "",
            err != 0 ? ": " : "", err != 0 ? strerror (err) : "");
  plugin->host->set_error (call, status, message);
}

static int32_t
jsonl_init (const SbxHostV1 *host,
            void           **plugin_ctx)
{
  JsonlPlugin *plugin;

  if (host == NULL || host->struct_size < SBX_HOST_V1_MIN_SIZE)
    return SBX_STATUS_INVALID;
  plugin = calloc (1, sizeof *plugin);
  if (plugin == NULL)
    return SBX_STATUS_NO_MEMORY;
  plugin->host = host;
  *plugin_ctx = plugin;
  return SBX_STATUS_OK;
}

static void
jsonl_fini (void *plugin_ctx)
{
  free (plugin_ctx);
}

static int32_t
jsonl_open (void        *plugin_ctx,
            SbxHostCall *call,
            const char  *config,
            void       **sink_out)
{
  JsonlPlugin *plugin = plugin_ctx;
  JsonlSink *sink;
  int fd;

  if (config == NULL || config[0] == '\0')
    {
      jsonl_fail (plugin, call, SBX_STATUS_INVALID,
                  "the config must be the path of the log file", NULL, 0);
      return SBX_STATUS_INVALID;
    }
  do
    fd = open (config, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY, 0600);
  while (fd < 0 && errno == EINTR);
  if (fd < 0)
    {
      jsonl_fail (plugin, call, SBX_STATUS_FAILED, "cannot open", config, errno);
      return SBX_STATUS_FAILED;
    }
  sink = calloc (1, sizeof *sink);
  if (sink == NULL)
    {
      close (fd);
      jsonl_fail (plugin, call, SBX_STATUS_NO_MEMORY, "out of memory", NULL, 0);
      return SBX_STATUS_NO_MEMORY;
    }
  sink->fd = fd;
  *sink_out = sink;
  return SBX_STATUS_OK;
}

static int32_t
jsonl_emit (void        *plugin_ctx,
            SbxHostCall *call,
            void        *sink_ptr,
            const char  *event_json,
            size_t       length)
{
  JsonlPlugin *plugin = plugin_ctx;
  JsonlSink *sink = sink_ptr;
  char *line;
  ssize_t written;

  if (sink == NULL || event_json == NULL || length == 0 || event_json[0] != '{')
    {
      jsonl_fail (plugin, call, SBX_STATUS_INVALID, "an event must be one JSON object", NULL, 0);
      return SBX_STATUS_INVALID;
    }
  if (memchr (event_json, '\n', length) != NULL || memchr (event_json, '\0', length) != NULL)
    {
      jsonl_fail (plugin, call, SBX_STATUS_INVALID,
                  "an event must be one line without NUL", NULL, 0);
      return SBX_STATUS_INVALID;
    }

  line = malloc (length + 1);
  if (line == NULL)
    {
      jsonl_fail (plugin, call, SBX_STATUS_NO_MEMORY, "out of memory", NULL, 0);
      return SBX_STATUS_NO_MEMORY;
    }
  memcpy (line, event_json, length);
  line[length] = '\n';

  /* One write per line: O_APPEND makes it atomic with respect to other
   * appenders.  A short write cannot be completed atomically: report it. */
  do
    written = write (sink->fd, line, length + 1);
  while (written < 0 && errno == EINTR);
  free (line);

  if (written < 0)
    {
      jsonl_fail (plugin, call, SBX_STATUS_FAILED, "write failed", NULL, errno);
      return SBX_STATUS_FAILED;
    }
  if ((size_t) written != length + 1)
    {
      jsonl_fail (plugin, call, SBX_STATUS_FAILED, "short write (disk full?)", NULL, 0);
      return SBX_STATUS_FAILED;
    }
  return SBX_STATUS_OK;
}

static void
jsonl_close (void *plugin_ctx,
             void *sink_ptr)
{
  JsonlSink *sink = sink_ptr;

  if (sink == NULL)
    return;
  close (sink->fd);
  free (sink);
}

static const SbxReporterVTableV1 jsonl_vtable = {
  .struct_size = sizeof (SbxReporterVTableV1),
  .open = jsonl_open,
  .emit = jsonl_emit,
  .close = jsonl_close,
};

static const SbxPluginExtension jsonl_extensions[] = {
  {
    .struct_size = sizeof (SbxPluginExtension),
    .kind = SBX_EXT_REPORTER,
    .name = "jsonl",
    .priority = 0,
    .vtable = &jsonl_vtable,
  },
  { .struct_size = sizeof (SbxPluginExtension), .kind = SBX_EXT_END },
};

SBX_PLUGIN_DEFINE (report_jsonl, "0.1.0", "LGPL-2.1-or-later", SBX_HOST_FEATURES_NONE,
                   jsonl_init, jsonl_fini, jsonl_extensions)
