/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The connect supervisor's answers and its view of the target (the rules
 * are at the top of sbx-linux-unotify.c): answering a notification,
 * checking it is still alive, a pidfd of the calling thread, and a path
 * resolved as the target's own root and cwd name it.
 */
#include "sbx-linux-unotify-private.h"
#include "sbx-linux-proc-status.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>

#include <glib.h>

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif

void
sbx_unotify_respond (SbxUnotify *u, uint64_t id, int err)
{
  struct seccomp_notif_resp resp;

  memset (&resp, 0, sizeof resp);
  resp.id = id;
  resp.error = err > 0 ? -err : err;
  resp.val = 0;
  /* ENOENT: the caller is gone or was interrupted; nothing to answer. */
  (void) ioctl (u->listener, SECCOMP_IOCTL_NOTIF_SEND, &resp);
}

gboolean
sbx_unotify_id_valid (SbxUnotify *u, uint64_t id)
{
  return ioctl (u->listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0;
}

int
sbx_unotify_caller_pidfd (pid_t pid)
{
  int fd = (int) syscall (SYS_pidfd_open, pid, PIDFD_THREAD);

  if (fd < 0 && errno == EINVAL)
    fd = (int) syscall (SYS_pidfd_open, pid, 0);   /* before Linux 6.9: a thread-group leader only */
  return fd;
}

/* @path without its empty and "." components ("/ws/./a//b.sock" is
 * "/ws/a/b.sock": the same file whatever the links on the way, so the
 * denial, its grant and a host-sockets entry name it alike); ".." is kept:
 * removing it by text would change the path where a component is a
 * symlink. */
static char *
drop_dot_components (const char *path)
{
  g_auto(GStrv) parts = g_strsplit (path, "/", -1);
  GString *out = g_string_new (NULL);

  for (guint i = 0; parts[i] != NULL; i++)
    if (parts[i][0] != '\0' && strcmp (parts[i], ".") != 0)
      g_string_append_printf (out, "/%s", parts[i]);
  if (out->len == 0)
    g_string_append_c (out, '/');
  return g_string_free (out, FALSE);
}

/* @path as the target passed it, made absolute with the target's cwd (as
 * its own view names it), its empty and "." components dropped; NULL when
 * the cwd is gone. */
char *
sbx_unotify_absolute_in_target (pid_t pid, const char *path)
{
  char proc[64], cwd[PATH_MAX];
  g_autofree char *joined = NULL;
  ssize_t n;

  if (path[0] == '/')
    return drop_dot_components (path);
  g_snprintf (proc, sizeof proc, "/proc/%d/cwd", (int) pid);
  n = readlink (proc, cwd, sizeof cwd - 1);
  if (n <= 0)
    return NULL;
  cwd[n] = '\0';
  if (cwd[0] != '/' || g_str_has_suffix (cwd, " (deleted)"))
    return NULL;
  joined = g_build_filename (cwd, path, NULL);
  return drop_dot_components (joined);
}

/* The absolute @path resolved in the target's view (its root, with ".."
 * and absolute symlinks kept inside it): an O_PATH descriptor or -errno. */
int
sbx_unotify_resolve_in_target (pid_t pid, const char *path)
{
  char proc[64];
  struct open_how how = { 0 };
  int root, fd, saved;

  g_snprintf (proc, sizeof proc, "/proc/%d/root", (int) pid);
  root = open (proc, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (root < 0)
    return -errno;
  how.flags = O_PATH | O_CLOEXEC;
  how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
  fd = (int) syscall (SYS_openat2, root, path, &how, sizeof how);
  saved = errno;
  close (root);
  return fd < 0 ? -saved : fd;
}

/* Like sbx_unotify_resolve_in_target(), without following a final symlink. */
int
sbx_unotify_resolve_in_target_nofollow (pid_t pid, const char *path)
{
  char proc[64];
  struct open_how how = { 0 };
  int root, fd, saved;

  g_snprintf (proc, sizeof proc, "/proc/%d/root", (int) pid);
  root = open (proc, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (root < 0)
    return -errno;
  how.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC;
  how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
  fd = (int) syscall (SYS_openat2, root, path, &how, sizeof how);
  saved = errno;
  close (root);
  return fd < 0 ? -saved : fd;
}

/* The pid as the caller's own pid namespace (the sandbox's) numbers it;
 * 0 when unknown. */
static gint64
pid_inside (pid_t pid)
{
  char path[64];

  g_snprintf (path, sizeof path, "/proc/%d/status", (int) pid);
  return sbx_linux_status_ns_last (AT_FDCWD, path, "NSpid");
}

void
sbx_unotify_denial_init (SbxBackendDenialV1 *denial,
                         char                argv0[SBX_UNOTIFY_ARGV0_MAX],
                         pid_t               pid,
                         const char         *target,
                         const char         *reason)
{
  char path[64];
  ssize_t n = -1;
  int fd;

  memset (denial, 0, sizeof *denial);
  /* argv[0] as the process set it (its first NUL-terminated string). */
  g_snprintf (path, sizeof path, "/proc/%d/cmdline", (int) pid);
  fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd >= 0)
    {
      n = read (fd, argv0, SBX_UNOTIFY_ARGV0_MAX - 1);
      close (fd);
    }
  argv0[n > 0 ? n : 0] = '\0';
  denial->struct_size = sizeof *denial;
  denial->operation = SBX_ABI_DENIAL_UNIX_CONNECT;
  denial->pid = pid_inside (pid);
  denial->target = target;
  denial->mechanism = "connect-supervisor";
  denial->process = argv0[0] != '\0' ? argv0 : NULL;
  denial->reason = reason;
}

void
sbx_unotify_report_denial (SbxUnotify *u,
                           pid_t       pid,
                           const char *target,
                           const char *reason)
{
  SbxBackendDenialV1 denial;
  char argv0[SBX_UNOTIFY_ARGV0_MAX];

  if (u->denials.denied == NULL)
    return;
  sbx_unotify_denial_init (&denial, argv0, pid, target, reason);
  u->denials.denied (u->denials.data, &denial);
}
