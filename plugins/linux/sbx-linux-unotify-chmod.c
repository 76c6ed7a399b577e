/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The connect supervisor's other duty: set-group-ID on directories
 * (sbx-seccomp.c, add_setgid_dir_rule(), sends chmod-family calls with
 * S_ISGID and without S_ISUID here).
 */
#include "sbx-linux-unotify-private.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <linux/netlink.h>
#include <linux/openat2.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/sockios.h>
#include <linux/unix_diag.h>
#include <poll.h>

#include <gio/gio.h>

/* The target's fsuid and whether it is in group @gid (its fsgid or a
 * supplementary group), from /proc/PID/status.  FALSE when unreadable. */
static gboolean
target_ids (pid_t pid, gid_t gid, uid_t *fsuid, gboolean *in_group)
{
  g_autofree char *path = g_strdup_printf ("/proc/%d/status", (int) pid);
  g_autofree char *text = NULL;
  g_auto(GStrv) lines = NULL;
  gboolean have_uid = FALSE;

  *in_group = FALSE;
  if (!g_file_get_contents (path, &text, NULL, NULL))
    return FALSE;
  lines = g_strsplit (text, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      unsigned long r, e, s, f;

      if (sscanf (lines[i], "Uid: %lu %lu %lu %lu", &r, &e, &s, &f) == 4)
        {
          *fsuid = (uid_t) f;
          have_uid = TRUE;
        }
      else if (sscanf (lines[i], "Gid: %lu %lu %lu %lu", &r, &e, &s, &f) == 4 && (gid_t) f == gid)
        *in_group = TRUE;
      else if (g_str_has_prefix (lines[i], "Groups:"))
        {
          g_auto(GStrv) groups = g_strsplit_set (lines[i] + 7, " \t", -1);

          for (guint k = 0; groups[k] != NULL; k++)
            if (groups[k][0] != '\0' && (gid_t) g_ascii_strtoull (groups[k], NULL, 10) == gid)
              *in_group = TRUE;
        }
    }
  return have_uid;
}

/* chmod, fchmod, fchmodat, fchmodat2 with S_ISGID and without S_ISUID (the
 * filter sends nothing else): performed here on a directory, refused
 * (EPERM) on anything else.  The target is opened without following a
 * final symlink (O_PATH | O_NOFOLLOW; a descriptor's own file for fchmod)
 * and pinned, then checked: a directory, owned by the target's fsuid (the
 * kernel's rule for an unprivileged chmod, which our credentials might
 * bypass), and the set-gid bit dropped as the kernel would when the
 * target is not in the directory's group.  The chmod goes through
 * /proc/self/fd/N of the pinned inode, on the target's own mount, so a
 * read-only mount still refuses (EROFS).  Landlock does not mediate chmod,
 * so this grants nothing a plain chmod of the same directory would not. */
void
sbx_unotify_handle_chmod (SbxUnotify *u, const struct seccomp_notif *req, const char *name)
{
  gboolean by_fd = strcmp (name, "fchmod") == 0;
  gboolean at = strcmp (name, "fchmodat") == 0 || strcmp (name, "fchmodat2") == 0;
  int mode_arg = by_fd || !at ? 1 : 2;
  mode_t mode = (mode_t) (req->data.args[mode_arg] & 07777);
  int fd = -1, err = 0;
  char proc[64];
  struct stat st;
  uid_t fsuid = (uid_t) -1;
  gboolean in_group = FALSE;

  if (by_fd || (at && (int) (uint32_t) req->data.args[0] != AT_FDCWD))
    {
      int pidfd = sbx_unotify_caller_pidfd ((pid_t) req->pid);
      int nr = (int) (uint32_t) req->data.args[0];

      if (pidfd < 0)
        {
          sbx_unotify_respond (u, req->id, ESRCH);
          return;
        }
      fd = (int) syscall (SYS_pidfd_getfd, pidfd, nr, 0);
      close (pidfd);
      if (fd < 0)
        {
          sbx_unotify_respond (u, req->id, EBADF);
          return;
        }
    }
  if (!by_fd)
    {
      char path[PATH_MAX];
      struct iovec local = { path, sizeof path - 1 };
      struct iovec far = { (void *) (uintptr_t) req->data.args[at ? 1 : 0], sizeof path - 1 };
      ssize_t n = process_vm_readv ((pid_t) req->pid, &local, 1, &far, 1, 0);
      int dirfd = fd, target;

      /* a short read ends at the page boundary: the string must end before it */
      if (n <= 0 || memchr (path, '\0', (size_t) n) == NULL)
        {
          if (dirfd >= 0)
            close (dirfd);
          sbx_unotify_respond (u, req->id, n <= 0 ? EFAULT : ENAMETOOLONG);
          return;
        }
      if (dirfd >= 0 && path[0] != '/')
        {
          struct open_how how = { .flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
                                  .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };

          /* relative to the caller's directory: no symlink on the way (its
           * absolute target would be resolved in our view) */
          target = (int) syscall (SYS_openat2, dirfd, path, &how, sizeof how);
          target = target < 0 ? -errno : target;
        }
      else
        {
          g_autofree char *abs = sbx_unotify_absolute_in_target ((pid_t) req->pid, path);

          target = abs == NULL ? -ENOENT : sbx_unotify_resolve_in_target_nofollow ((pid_t) req->pid, abs);
        }
      if (dirfd >= 0)
        close (dirfd);
      if (target < 0)
        {
          sbx_unotify_respond (u, req->id, target == -ELOOP ? EPERM : -target);
          return;
        }
      fd = target;
    }
  if (!sbx_unotify_id_valid (u, req->id))
    {
      close (fd);
      return;
    }
  if (fstat (fd, &st) != 0 || !S_ISDIR (st.st_mode))
    err = EPERM;   /* set-gid on a file, a link or anything else: the set-id rule */
  else if (!target_ids ((pid_t) req->pid, st.st_gid, &fsuid, &in_group) || fsuid != st.st_uid)
    err = EPERM;   /* not the owner: what the kernel answers the target */
  else
    {
      if (!in_group)
        mode &= ~(mode_t) S_ISGID;
      g_snprintf (proc, sizeof proc, "/proc/self/fd/%d", fd);
      err = chmod (proc, mode) == 0 ? 0 : errno;
    }
  close (fd);
  sbx_unotify_respond (u, req->id, err);
}
