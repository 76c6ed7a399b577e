/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A task's /proc status file: the namespace-relative ids a supervisor
 * reports (see sbx-linux-proc-status.h).
 */
#include "sbx-linux-proc-status.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <glib.h>

int64_t
sbx_linux_status_ns_last (int         dirfd,
                          const char *path,
                          const char *field)
{
  char buf[4096], key[32];
  const char *line;
  int64_t inside = 0;
  ssize_t n;
  int fd = openat (dirfd, path, O_RDONLY | O_CLOEXEC);

  if (fd < 0)
    return 0;
  n = read (fd, buf, sizeof buf - 1);
  close (fd);
  if (n <= 0)
    return 0;
  buf[n] = '\0';
  g_snprintf (key, sizeof key, "\n%s:", field);
  line = strstr (buf, key);
  if (line == NULL)
    return 0;
  for (const char *p = line + strlen (key); *p != '\0' && *p != '\n'; p++)
    if (*p >= '0' && *p <= '9' && (p[-1] == ' ' || p[-1] == '\t'))
      inside = g_ascii_strtoll (p, NULL, 10);
  return inside;
}
