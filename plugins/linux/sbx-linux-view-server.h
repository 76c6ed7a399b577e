/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The view supervisor (sbx-linux-view-server.c): at rung 1 the root of a
 * sandbox's mount view is a FUSE filesystem served here, outside the
 * sandbox, instead of a private tmpfs.  It shows only the view's skeleton
 * (the directories, files and symlinks the mount plan would have created
 * in the tmpfs root); every root of the view is bind-mounted on top of it,
 * so a path inside the view never reaches this server once the kernel has
 * cached its skeleton entries (they never expire).  What reaches it is a
 * lookup of a name the view does not show: an attempt on a host path
 * outside the view.  It answers that lookup EACCES when the host path
 * exists (ENOENT with SBX_POLICY_DENIED_NOT_FOUND, or when it does not
 * exist and the attempt does not create it), never caches the answer, and
 * reports the attempt to the spawn's denial sink: the operation (read,
 * write, exec, list) and the whole host path the system call named, read
 * from the blocked task (/proc/PID/syscall and its memory), or the looked-up
 * path and "read" when that cannot be read.
 *
 * Nothing here is CLONE_VM child code: every server is served by one thread of the
 * spawning process.
 */
#pragma once

#include <glib.h>
#include <stdint.h>
#include <sys/types.h>

#include <sbx/sbx-plugin-abi.h>

G_BEGIN_DECLS

/* One entry of the skeleton, as the view shows it (an absolute, clean
 * path; "/" itself is implied).  A directory's missing ancestors are
 * implied directories.  @type is S_IFDIR, S_IFREG (a mountpoint for a
 * bound file) or S_IFLNK (@link_target, as the symlink reads). */
typedef struct
{
  const char *path;
  mode_t      type;
  const char *link_target;   /* S_IFLNK only; NULL otherwise */
} SbxViewEntry;

typedef struct _SbxViewServer SbxViewServer;

/* A server for one sandbox's view: the skeleton is copied; @policy_flags
 * are the policy's SBX_POLICY_* (only SBX_POLICY_DENIED_NOT_FOUND is
 * read).  NULL with @error set for a malformed skeleton (a relative or
 * unclean path, an entry below a file or symlink, the same path twice). */
SbxViewServer *sbx_view_server_new            (const SbxViewEntry *entries,
                                               size_t              n_entries,
                                               uint32_t            policy_flags,
                                               GError            **error);
/* Where refusals are reported from now on (copied; NULL: nowhere).  May be
 * called while serving (a warm sandbox gets its spawn's sink late);
 * refusals before the first call are not reported.  It waits for a call of
 * the old sink in flight, so it returns with the old sink never called
 * again: never call it holding a lock that sink takes. */
void           sbx_view_server_set_sink       (SbxViewServer                *self,
                                               const SbxBackendDenialSinkV1 *sink);
/* Where the server finds the tasks its requests name.  FUSE numbers a
 * request's pid in the pid namespace of the process that made the mount
 * (the kernel reads it when the superblock is made); at rung 1 that is the
 * sandbox's (child A).  The server learns it from the sender of the
 * /dev/fuse descriptor, which must be the process that made the mount (the
 * kernel adds its credentials to the message): when its pid namespace is
 * not ours, the server reads the tasks through the sandbox's own procfs
 * (/proc/SENDER/root/proc, taken from the dentry cache only once it is the
 * procfs of the sender's namespace, so the server never looks a name up in
 * its own filesystem).  @pid (a process of the sandbox's pid namespace as
 * this process numbers it, e.g. its sbx-init) overrides that; 0: requests
 * are numbered in ours.  May be called at any time. */
void           sbx_view_server_set_sandbox_pid (SbxViewServer *self,
                                                pid_t          pid);
/* Starts serving: the server waits on @sock (taken) for one SCM_RIGHTS
 * message carrying the /dev/fuse descriptor the sandbox opened and
 * mounted (the kernel requires the opener and the mount to share a user
 * namespace, so the child opens it), then answers its requests.  Call it
 * before the sandbox sends (SO_PASSCRED is set on @sock here), and only
 * once.  Returns FALSE with @error set when it cannot start (@sock
 * closed). */
gboolean       sbx_view_server_start_receive  (SbxViewServer *self,
                                               int            sock,
                                               GError       **error);
/* Starts serving a connection this process made itself (@fuse_fd, taken:
 * the /dev/fuse descriptor of a FUSE superblock this process mounted in
 * its own user and pid namespaces, sbx-linux-view-start.c): requests are
 * numbered in our pid namespace, and lookups by threads of this process
 * (the primer, the connect supervisor) are no attempts of the sandbox.
 * @mount_fd (taken, or -1) is the mount's descriptor, closed after the
 * connection when the server stops: while it is open the superblock
 * outlives the sandbox's mount namespace.  Only once, instead of
 * sbx_view_server_start_receive().  FALSE with @error set when it cannot
 * start (both closed). */
gboolean       sbx_view_server_start_device   (SbxViewServer *self,
                                               int            fuse_fd,
                                               int            mount_fd,
                                               GError       **error);
/* Starts the view supervisor's thread of this process ahead of its first
 * server (a spare early root does, while the probe runs); FALSE when it
 * cannot start (a server's start then says why). */
gboolean       sbx_view_hub_prestart          (void);
/* Waits until the view supervisor's thread has closed every mount a
 * stopped server left it (it closes them after the stop, off the stopping
 * caller's way: a FUSE superblock's teardown takes a while), so that
 * nothing of a spec's sandboxes is open once the spec is freed.  Returns
 * at once where this process has no view supervisor's thread. */
void           sbx_view_hub_flush             (void);
/* For a server started with sbx_view_server_start_device(): also waits on
 * @sock (taken) for a /dev/fuse descriptor the sandbox sends when it could
 * not use ours (it made a root of its own), which then replaces ours (its
 * requests numbered as a received one's); the socket's end leaves ours.
 * FALSE when it cannot watch (@sock closed). */
gboolean       sbx_view_server_watch_replacement (SbxViewServer *self,
                                                  int            sock);
/* Stops serving and closes the connection (the sandbox's lookups outside
 * the view then fail with ENOTCONN): no sink call is in flight or made
 * after it returns.  Idempotent. */
void           sbx_view_server_stop           (SbxViewServer *self);
/* Stops (if needed) and frees.  NULL is allowed. */
void           sbx_view_server_free           (SbxViewServer *self);

/* Counters, for the report and tests: requests a process waited for (not
 * the forgets, interrupts and releases the kernel sends on its own
 * schedule), refusals reported. */
uint64_t       sbx_view_server_n_requests     (SbxViewServer *self);
uint64_t       sbx_view_server_n_denials      (SbxViewServer *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SbxViewServer, sbx_view_server_free)

G_END_DECLS
