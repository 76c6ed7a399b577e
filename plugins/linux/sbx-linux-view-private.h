/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The view supervisor's parts: sbx-linux-view-server.c (the FUSE protocol
 * and the thread), sbx-linux-view-skeleton.c (what the view shows),
 * sbx-linux-view-task.c (reads the blocked task behind a denied lookup) and
 * sbx-linux-view-classify.c (pure: which system call, which operation,
 * which paths; lexical path cleaning).  Calls go from the server to the
 * skeleton and the task reader, and from those to the classifier, never
 * back.  Never installed; everything here runs on the server's
 * thread, except where a function says it is pure.
 */
#pragma once

#include <glib.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <linux/fuse.h>

#include "sbx-linux-view-server.h"
#include "sbx-linux-view-slots.h"

/* sbx-linux-view-skeleton.c: what the view shows.  Node i is FUSE node
 * id i + 1; node 0 is the root, its own parent. */
typedef struct
{
  char       *path;          /* absolute, clean; "/" for the root */
  const char *name;          /* the last component, in @path */
  guint       parent;        /* index */
  mode_t      type;          /* S_IFDIR, S_IFREG or S_IFLNK */
  char       *link_target;
  GArray     *children;      /* guint indices, directories only */
  guint       n_subdirs;
  gboolean    explicit;      /* an entry of the caller's, not only implied */
} SbxViewNode;

typedef struct
{
  GArray     *nodes;         /* SbxViewNode */
  GHashTable *by_path;       /* path -> index + 1 (keys owned by @nodes) */
} SbxViewSkeleton;

/* Builds @self from @entries (see sbx_view_server_new()); FALSE with
 * @error set naming the entry at fault.  Clear it either way. */
gboolean sbx_view_skeleton_build    (SbxViewSkeleton    *self,
                                     const SbxViewEntry *entries,
                                     size_t              n_entries,
                                     GError            **error);
void     sbx_view_skeleton_clear    (SbxViewSkeleton    *self);

/* Which system call entry a blocked task used (its numbering). */
typedef enum
{
  SBX_VIEW_ABI_NATIVE,
  SBX_VIEW_ABI_I386,   /* int $0x80 / sysenter on x86_64 */
  SBX_VIEW_ABI_X32,    /* syscall with __X32_SYSCALL_BIT */
  SBX_VIEW_N_ABIS
} SbxViewAbi;

/* An operation a call is classified as: SBX_ABI_DENIAL_READ/WRITE/EXEC/LIST,
 * or SBX_VIEW_OP_FROM_FLAGS (open-type: decided by its flags). */
#define SBX_VIEW_OP_FROM_FLAGS 0xffu

/* Where a call's path arguments are: up to two (rename, link), each a
 * path argument index and the index of its directory descriptor argument
 * (-1: relative to the cwd, as AT_FDCWD). */
typedef struct
{
  uint32_t op;            /* SBX_ABI_DENIAL_* or SBX_VIEW_OP_FROM_FLAGS */
  int      n_paths;
  int8_t   path_arg[2];
  int8_t   dirfd_arg[2];
  int8_t   flags_arg;     /* open flags (FROM_FLAGS), or -1 */
  gboolean flags_in_how;  /* openat2: @flags_arg points at a struct open_how */
} SbxViewCall;

/* One line of /proc/PID/syscall of a task blocked in a system call. */
typedef struct
{
  long     nr;
  uint64_t args[6];
  uint64_t sp;
  uint64_t pc;
} SbxViewSyscall;

/* Big enough for a cwd (PATH_MAX) joined to a path (PATH_MAX). */
#define SBX_VIEW_PATH_BUF (2 * PATH_MAX + 2)

/* sbx-linux-view-classify.c (pure) */
/* The call @nr of @abi, or FALSE when no path call of that number is
 * known (the table is built once, from libseccomp's names). */
gboolean sbx_view_classify_call     (SbxViewAbi   abi,
                                     long         nr,
                                     SbxViewCall *out);
/* The operation open flags ask for: O_WRONLY, O_RDWR, O_CREAT or O_TRUNC
 * write, else O_DIRECTORY list, else read. */
uint32_t sbx_view_open_operation    (uint64_t     flags);
/* Parses /proc/PID/syscall's text (NUL-terminated); FALSE when the task is
 * not blocked in a system call ("running", "-1 ..."), or garbage. */
gboolean sbx_view_parse_syscall     (const char     *text,
                                     SbxViewSyscall *out);
/* Which entry the two bytes before @pc show (syscall, int $0x80,
 * sysenter), with @nr's x32 bit; FALSE when they show none. */
gboolean sbx_view_abi_from_insn     (const uint8_t insn[2],
                                     long          nr,
                                     SbxViewAbi   *out);
/* @path (absolute) cleaned lexically in place: repeated and trailing
 * slashes, "." and ".." (at the root, ".." stays at the root).  FALSE
 * when @path is not absolute. */
gboolean sbx_view_clean_path        (char *path);
/* TRUE when the clean absolute @path is @prefix or lies below it. */
gboolean sbx_view_path_at_or_below  (const char *path,
                                     const char *prefix);

/* sbx-linux-view-task.c: the blocked task of a request, cached between
 * requests from the same task (its /proc directory, syscall and mem files,
 * its pid as its sandbox numbers it). */
typedef struct
{
  int     proc_root;   /* the procfs the request pids are numbered in (owned), or -1 */
  pid_t   proc_root_for; /* the sandbox_pid @proc_root was taken for */
  /* 0: requests are numbered in our pid namespace (/proc); else in this
   * process's (as we number it), read through the procfs below its root.
   * Written by set_sandbox_pid() from any thread, or from the sender of
   * the FUSE descriptor. */
  atomic_int sandbox_pid;
  pid_t   pid;         /* the cached task, 0: none */
  int     dir;         /* /proc/PID, O_PATH */
  int     syscall_fd;  /* /proc/PID/syscall, or -1 (each opened at its first read) */
  int     mem_fd;      /* /proc/PID/mem, or -1 */
  int     cmdline_fd;  /* /proc/PID/cmdline, or -1 */
  int64_t nspid;       /* the pid inside the sandbox, 0: unknown */
  gboolean nspid_read; /* /proc/PID/status was read for @nspid */
} SbxViewTask;

typedef struct
{
  uint32_t op;                        /* SBX_ABI_DENIAL_* */
  char     target[SBX_VIEW_PATH_BUF]; /* clean absolute host path */
  int64_t  nspid;
  char     process[256];              /* argv[0] or comm; "" unknown */
  gboolean open_call;                 /* an open-type call (open, openat, openat2) named @target */
} SbxViewAttempt;

void     sbx_view_task_init        (SbxViewTask *task);
/* The process @mounter (in our pid namespace) made the FUSE mount: when
 * its pid namespace is not ours, FUSE numbers the requests in its, and the
 * tasks are read through its procfs (unless set_sandbox_pid() chose). */
void     sbx_view_task_set_mounter (SbxViewTask *task,
                                    pid_t        mounter);
void     sbx_view_task_clear       (SbxViewTask *task);
/* Closes the cached descriptors of the last task read (its /proc files),
 * keeping the procfs: a lookup nobody reports (a name missing on the host,
 * as ld.so's /etc/ld.so.preload at every exec) must not keep four
 * descriptors per live sandbox. */
void     sbx_view_task_forget      (SbxViewTask *task);
/* What @pid was doing when it looked up @looked_up (clean, absolute):
 * the operation and whole path its system call named when that lies at
 * or below @looked_up, else SBX_ABI_DENIAL_READ on @looked_up.  Also its
 * pid inside the sandbox and its name.  Never fails. */
void     sbx_view_task_classify    (SbxViewTask    *task,
                                    pid_t           pid,
                                    const char     *looked_up,
                                    SbxViewAttempt *out);
/* Whether the system call @pid is blocked in could be one that writes
 * (creates, renames, links, removes, opens for writing): FALSE only when
 * sbx_view_task_classify() would certainly give no write (the call is
 * known and does not write, or it cannot be read: then classify falls
 * back to a read).  Reads the call's number and flags alone, no path and
 * no process name: the cheap question for a name the host lacks too,
 * where only a write is reported. */
gboolean sbx_view_task_may_write   (SbxViewTask *task,
                                    pid_t        pid);
/* Whether request pid @pid is a thread of this process (sbx's own:
 * the connect supervisor resolving a socket path through the sandbox's
 * view, the primer listing the skeleton), never a process of the sandbox:
 * 0 where the requests are numbered in the sandbox's pid namespace (it
 * cannot see us), our own thread's id where they are numbered in ours. */
gboolean sbx_view_task_is_ours     (SbxViewTask *task,
                                    pid_t        pid);
/* Only the pid and name of @pid (for requests that name their path). */
void     sbx_view_task_identify    (SbxViewTask    *task,
                                    pid_t           pid,
                                    SbxViewAttempt *out);

/* The largest request we take whole: a page of write data is more than we
 * negotiate, and an xattr value is at most 64 KiB. */
#define SBX_VIEW_REQUEST_BUF (FUSE_MIN_READ_BUFFER + 65536)

/* sbx-linux-view-server.c: one request of @len bytes in self->buf, under
 * the hub's lock (sbx-linux-view-hub.c); FALSE: the connection is over. */
gboolean sbx_view_server_handle_request (SbxViewServer *self,
                                         size_t         len);
/* sbx-linux-view-hub.c: the SbxViewWatchFunc every server's files part
 * gets (adds its eventfd to the hub's set, under hub.lock). */
gboolean sbx_view_hub_watch             (SbxViewServer *self,
                                         int            fd);

/* sbx-linux-view-server.c, for tests: one request of @len bytes handled as
 * if read from the FUSE descriptor, answered on @reply_fd, by a server that
 * is not started (the garbage cases need no kernel to send them). */
void     sbx_view_server_feed      (SbxViewServer *self,
                                    int            reply_fd,
                                    const void    *request,
                                    size_t         len);

/* sbx-linux-view-files.c: reads approved while the tool runs, served
 * through the slots (sbx-linux-view-slots.h).  Node ids after the
 * skeleton's: the slots, then the directories leading to an approved file
 * (shown only to the lookups of its approved read). */
typedef struct _SbxViewFiles SbxViewFiles;

/* The server: what sbx-linux-view-server.c serves and the files part reads
 * (all of it on the hub's thread, under its lock; see the server's LOCKING
 * comment for @sink). */
struct _SbxViewServer
{
  SbxViewSkeleton skel;
  uint32_t       policy_flags;
  uid_t          uid;
  gid_t          gid;
  struct timespec born;

  GMutex                 sink_lock;
  SbxBackendDenialSinkV1 sink;   /* sink.denied NULL: nowhere; sink.ask NULL: never asks */

  gboolean       started;
  guint64        hub_id;     /* 0: not registered with the hub */
  pid_t          hub_pid;    /* the process whose hub registered it */
  int            sock;       /* until the FUSE descriptor arrives */
  int            fuse_fd;
  int            mount_fd;   /* sbx_view_server_start_device(): the mount we made, or -1 */
  atomic_uint_fast64_t n_requests;
  atomic_uint_fast64_t n_denials;

  /* The thread's own */
  gboolean       initialized;
  gboolean       no_opendir;  /* the kernel skips OPENDIR once we answer ENOSYS */
  SbxViewTask    task;
  uint8_t       *buf;
  struct
  {
    pid_t    pid;
    uint64_t parent;
    char     name[256];
  }              last_reported;   /* the last denied lookup answered ENOENT */
  SbxViewFiles  *files;
};

/* sbx-linux-view-answer.c: answers the server and the files part give */
void     sbx_view_reply            (SbxViewServer *self,
                                    uint64_t       unique,
                                    int            err,
                                    const void    *data,
                                    size_t         len);
/* A refusal to the spawn's denial sink (counted). */
void     sbx_view_report           (SbxViewServer        *self,
                                    const SbxViewAttempt *a);
/* The errno a refused lookup of @a answers (@exists: the target does). */
int      sbx_view_refusal_errno    (SbxViewServer        *self,
                                    const SbxViewAttempt *a,
                                    gboolean              exists);
/* The answer a refused attempt on @name below node @parent gets, as
 * without asking (sbx-linux-view-server.c, "Answers"): reported, then
 * EACCES or ENOENT. */
void     sbx_view_refuse           (SbxViewServer        *self,
                                    uint64_t              unique,
                                    pid_t                 pid,
                                    uint64_t              parent,
                                    const char           *name,
                                    const SbxViewAttempt *a,
                                    gboolean              exists);

/* How the files part is woken for answers: adds @fd (its eventfd) to the
 * hub's set, whose events call sbx_view_files_drain(); FALSE when it
 * cannot (then nothing is asked).  The server's, given at creation. */
typedef gboolean (*SbxViewWatchFunc) (SbxViewServer *self,
                                      int            fd);

/* sbx-linux-view-files.c */
SbxViewFiles *sbx_view_files_new   (guint            first_nodeid,
                                    SbxViewWatchFunc watch);
/* The eventfd the hub watches for answers, or -1 (nothing asked yet). */
int      sbx_view_files_fd         (SbxViewFiles *files);
/* The hub's lock is held (or the server is not started), the eventfd out
 * of its set.  Answers that come later only free their tickets. */
void     sbx_view_files_free       (SbxViewFiles *files);
/* A lookup at the root of a slot's name: TRUE when @name is one (then
 * answered: the slot the first time, while the host can ask; else ENOENT). */
gboolean sbx_view_files_slot_name  (SbxViewServer                *self,
                                    const struct fuse_in_header *h,
                                    const char                  *name);
/* How many lookups of a slot's name this process's servers have had, for
 * tests: a spawn whose sink cannot ask makes none (sbx-linux-child.c). */
guint64  sbx_view_files_slot_lookups (void);
/* An attempt @a outside the view (a lookup of @name, whose whole path is
 * @looked_up, below @parent): TRUE when answered or held here (an approved
 * read, or one asked); FALSE: answer it as without asking. */
gboolean sbx_view_files_lookup     (SbxViewServer                *self,
                                    const struct fuse_in_header *h,
                                    const char                  *name,
                                    const char                  *looked_up,
                                    const SbxViewAttempt        *a,
                                    const struct stat           *st,
                                    gboolean                     exists);
/* A request on a node of the files part (h->nodeid past the skeleton's),
 * answered. */
void     sbx_view_files_handle     (SbxViewServer                *self,
                                    const struct fuse_in_header *h,
                                    const uint8_t               *body,
                                    size_t                       len);
/* FUSE_INTERRUPT of a held lookup: answered EINTR now. */
void     sbx_view_files_interrupt  (SbxViewServer                *self,
                                    const uint8_t               *body,
                                    size_t                       len);
/* The host's answers that came (the eventfd was written). */
void     sbx_view_files_drain      (SbxViewServer *self);
