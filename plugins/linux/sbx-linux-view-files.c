/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The view supervisor's live file approvals (docs/linux-backend.md, "Reads
 * approved while running"): a read of a host file outside the rung-1 view
 * that the host approves while the tool runs (SbxBackendAskFunc) is served
 * through one of the view's file slots (sbx-linux-view-slots.h), since
 * Landlock's domain, made before the tool ran, lets it read those inodes
 * and no other file of the FUSE root.
 *
 * Rules:
 *  - only a read by an open-type call of an existing regular host file is
 *    asked; the host decides whether it is a question (only a path the
 *    profile gates; anything else is answered DENY at once).  Nothing but
 *    reading that file is ever served: the view is read-only and noexec,
 *    a directory node on the way lists nothing and shows nothing else;
 *  - a held lookup (or open of a slot) stays unanswered: the task sleeps in
 *    its system call, the hub serves every other request; an answer, from
 *    any thread, takes only the asks' own lock and writes an eventfd the
 *    hub polls (the hub calls ask with its lock held);
 *  - a slot opens the host file by exactly the approved path (no symlink
 *    anywhere, O_RDONLY), as the caller, only while it is the inode that
 *    was approved; what an open reads is bound to the open, not the slot;
 *  - ONCE serves one open by the thread whose read was asked; any other
 *    open of the slot is asked again.  FOR_RUN serves every open of the
 *    path until the run ends.  A slot is rebound only when nothing of it
 *    is open, held or approved;
 *  - DENY, a timeout, the run ending, no free slot or more than MAX_HELD
 *    held: refused exactly as without asking.  An interrupted held request
 *    is answered EINTR at once (the end of a run never waits for a
 *    question); a ticket answered after the server stopped is freed.
 */
#include "sbx-linux-view-private.h"
#include "sbx-linux-ask-queue.h"

#include <sbx/sbx-cleanup.h>
#include <sbx/sbx-plugin-abi.h>

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <linux/openat2.h>

/* Requests held at once per sandbox (each a task asleep in a system call);
 * past it, refused as without asking. */
#define MAX_HELD 64
/* Host files open through slots at once per sandbox. */
#define MAX_OPENS 256
/* Directory nodes shown on the way to approved files, per sandbox. */
#define MAX_DIRS 4096
/* The most one READ answers (the kernel asks for at most 32 pages). */
#define READ_MAX (128 * 1024)
/* An approved ONCE no open used (a call that looked the path up and then
 * did not open it) holds its slot at most this long. */
#define ONCE_UNUSED_US (30 * G_USEC_PER_SEC)

typedef struct
{
  SbxAskQueue   *queue;       /* (owned) */
  uint64_t       unique;
  pid_t          tid;         /* the thread in the system call (FUSE's numbering) */
  uint64_t       parent;      /* LOOKUP: the parent node; OPEN: the slot's node */
  gboolean       open;        /* a FUSE_OPEN of a slot, not a lookup */
  int            slot;        /* OPEN: its slot */
  char          *name;        /* LOOKUP: the name looked up */
  char          *looked_up;   /* LOOKUP: its whole path */
  uint32_t       decision;    /* SBX_ABI_DECISION_*, once answered */
  gboolean       cancelled;   /* (hub) interrupted: answered already */
  SbxViewAttempt a;
} Held;

typedef struct
{
  char       *path;        /* the approved host path; NULL: free */
  struct stat st;          /* the file as approved */
  gboolean    run;         /* FOR_RUN: every open of @path is served */
  pid_t       once_tid;    /* ONCE: the thread whose read was approved, 0: none */
  gboolean    once_used;   /* ... and that open came */
  gint64      bound_at;    /* monotonic, when ONCE was approved */
  guint       n_open;
  guint       n_held;      /* held opens of this slot */
  gboolean    shown;       /* its name answered its one lookup */
} Slot;

typedef struct
{
  uint64_t fh;
  int      fd;
  int      slot;
} Open;

struct _SbxViewFiles
{
  guint       first;        /* slot 0's node id */
  SbxViewWatchFunc watch;
  Slot        slots[SBX_VIEW_N_SLOTS];
  GPtrArray  *dirs;         /* char*: directory node i is first + N_SLOTS + i */
  GHashTable *dir_ids;      /* path -> i + 1 (keys owned by @dirs) */
  GHashTable *opens;        /* &Open.fh -> Open* (owned) */
  uint64_t    next_fh;
  GHashTable *held;         /* &Held.unique -> Held* (not owned: a ticket is the host's until answered) */
  guint       n_held;       /* tickets not yet drained */
  SbxAskQueue *asks;        /* answered Held; made at the first question, stopped with the server */
  struct
  {
    pid_t    tid;
    uint64_t parent;
    char    *looked_up;
  }           last_denied;  /* the last held lookup refused */
};

static void
held_free (gpointer data)
{
  Held *h = data;

  g_free (h->name);
  g_free (h->looked_up);
  sbx_ask_queue_unref (h->queue);
  g_free (h);
}

static void
open_free (gpointer data)
{
  Open *o = data;

  close (o->fd);
  g_free (o);
}

SbxViewFiles *
sbx_view_files_new (guint            first_nodeid,
                    SbxViewWatchFunc watch)
{
  SbxViewFiles *files = g_new0 (SbxViewFiles, 1);

  files->first = first_nodeid;
  files->watch = watch;
  files->dirs = g_ptr_array_new_with_free_func (g_free);
  files->dir_ids = g_hash_table_new (g_str_hash, g_str_equal);
  files->opens = g_hash_table_new_full (g_int64_hash, g_int64_equal, NULL, open_free);
  files->held = g_hash_table_new (g_int64_hash, g_int64_equal);
  return files;
}

int
sbx_view_files_fd (SbxViewFiles *files)
{
  return files->asks != NULL ? sbx_ask_queue_fd (files->asks) : -1;
}

void
sbx_view_files_free (SbxViewFiles *files)
{
  if (files == NULL)
    return;
  if (files->asks != NULL)
    {
      sbx_ask_queue_stop (files->asks, held_free);
      sbx_ask_queue_unref (files->asks);
    }
  for (guint i = 0; i < SBX_VIEW_N_SLOTS; i++)
    g_free (files->slots[i].path);
  g_free (files->last_denied.looked_up);
  g_hash_table_unref (files->held);
  g_hash_table_unref (files->opens);
  g_hash_table_unref (files->dir_ids);
  g_ptr_array_unref (files->dirs);
  g_free (files);
}

/* ------------------------------------------------------------------------- */
/* Nodes                                                                     */
/* ------------------------------------------------------------------------- */

static void
base_attr (SbxViewServer *self, uint64_t nodeid, struct fuse_attr *attr)
{
  memset (attr, 0, sizeof *attr);
  attr->ino = nodeid;
  attr->atime = attr->mtime = attr->ctime = (uint64_t) self->born.tv_sec;
  attr->atimensec = attr->mtimensec = attr->ctimensec = (uint32_t) self->born.tv_nsec;
  attr->uid = self->uid;
  attr->gid = self->gid;
  attr->blksize = 4096;
}

/* A slot is always a regular file (a node whose type changed would be
 * made a bad inode, and Landlock's rule is on this one): the bound file's
 * size, times and read bits, owned as every node of the view. */
static void
slot_attr (SbxViewServer *self, int i, struct fuse_attr *attr)
{
  const Slot *s = &self->files->slots[i];

  base_attr (self, self->files->first + (guint) i, attr);
  attr->mode = S_IFREG;
  attr->nlink = 1;
  if (s->path == NULL)
    return;
  attr->mode |= s->st.st_mode & 0444;
  attr->size = (uint64_t) s->st.st_size;
  attr->blocks = (uint64_t) s->st.st_blocks;
  attr->atime = (uint64_t) s->st.st_atim.tv_sec;
  attr->atimensec = (uint32_t) s->st.st_atim.tv_nsec;
  attr->mtime = (uint64_t) s->st.st_mtim.tv_sec;
  attr->mtimensec = (uint32_t) s->st.st_mtim.tv_nsec;
  attr->ctime = (uint64_t) s->st.st_ctim.tv_sec;
  attr->ctimensec = (uint32_t) s->st.st_ctim.tv_nsec;
}

static void
dir_attr (SbxViewServer *self, uint64_t nodeid, struct fuse_attr *attr)
{
  base_attr (self, nodeid, attr);
  attr->mode = S_IFDIR | 0555;
  attr->nlink = 2;
  attr->size = 4096;
}

/* Timeouts 0: the kernel asks again at its next walk. */
static void
reply_slot_entry (SbxViewServer *self, uint64_t unique, int i)
{
  struct fuse_entry_out e = { 0 };

  e.nodeid = self->files->first + (guint) i;
  slot_attr (self, i, &e.attr);
  sbx_view_reply (self, unique, 0, &e, sizeof e);
}

/* The directory node of @path (made when new); 0 past MAX_DIRS. */
static uint64_t
dir_node (SbxViewFiles *files, const char *path)
{
  gpointer found = g_hash_table_lookup (files->dir_ids, path);
  char *copy;

  if (found != NULL)
    return files->first + SBX_VIEW_N_SLOTS + GPOINTER_TO_UINT (found) - 1;
  if (files->dirs->len >= MAX_DIRS)
    return 0;
  copy = g_strdup (path);
  g_ptr_array_add (files->dirs, copy);
  g_hash_table_insert (files->dir_ids, copy, GUINT_TO_POINTER (files->dirs->len));
  return files->first + SBX_VIEW_N_SLOTS + files->dirs->len - 1;
}

/* The lookup of @looked_up on the way to @target, approved through slot
 * @i: the slot when it is the file, else the directory node of that
 * path.  FALSE (nothing answered) when no node can be had. */
static gboolean
reply_approved (SbxViewServer *self, uint64_t unique, const char *looked_up, const char *target, int i)
{
  struct fuse_entry_out e = { 0 };

  if (strcmp (looked_up, target) == 0)
    {
      reply_slot_entry (self, unique, i);
      return TRUE;
    }
  if (!sbx_view_path_at_or_below (target, looked_up))
    return FALSE;
  e.nodeid = dir_node (self->files, looked_up);
  if (e.nodeid == 0)
    return FALSE;
  dir_attr (self, e.nodeid, &e.attr);
  sbx_view_reply (self, unique, 0, &e, sizeof e);
  return TRUE;
}

/* ------------------------------------------------------------------------- */
/* Slots                                                                     */
/* ------------------------------------------------------------------------- */

static gboolean
slot_serves (const Slot *s, pid_t tid)
{
  return s->path != NULL && (s->run || (s->once_tid == tid && !s->once_used));
}

/* The slot bound to @path that serves @tid's open, or -1. */
static int
slot_for (SbxViewFiles *files, const char *path, pid_t tid)
{
  for (int i = 0; i < SBX_VIEW_N_SLOTS; i++)
    if (slot_serves (&files->slots[i], tid) && strcmp (files->slots[i].path, path) == 0)
      return i;
  return -1;
}

/* Nothing of it open, held or approved: it may show another file. */
static gboolean
slot_free (const Slot *s, gint64 now)
{
  if (!s->shown || s->n_open > 0 || s->n_held > 0)
    return FALSE;
  if (s->path == NULL)
    return TRUE;
  return !s->run && (s->once_used || now - s->bound_at > ONCE_UNUSED_US);
}

/* The slot an approval of @path for @tid takes (a slot already bound to
 * @path for the run, else a free one), or -1. */
static int
slot_to_bind (SbxViewFiles *files, const char *path)
{
  gint64 now = g_get_monotonic_time ();
  int best = -1;

  for (int i = 0; i < SBX_VIEW_N_SLOTS; i++)
    {
      const Slot *s = &files->slots[i];

      if (s->path != NULL && s->run && strcmp (s->path, path) == 0)
        return i;
      if (best < 0 && slot_free (s, now))
        best = i;
    }
  return best;
}

static void
slot_unbind (Slot *s)
{
  g_clear_pointer (&s->path, g_free);
  s->run = FALSE;
  s->once_tid = 0;
  s->once_used = FALSE;
}

/* Binds slot @i to @path (@st: its lstat) for @tid's next open (ONCE) or
 * for the run. */
static void
slot_bind (Slot *s, const char *path, const struct stat *st, pid_t tid, gboolean run)
{
  if (s->path == NULL || strcmp (s->path, path) != 0)
    {
      slot_unbind (s);
      s->path = g_strdup (path);
    }
  if (s->n_open == 0)
    s->st = *st;
  if (run)
    s->run = TRUE;
  else
    {
      s->once_tid = tid;
      s->once_used = FALSE;
      s->bound_at = g_get_monotonic_time ();
    }
}

static atomic_uint_fast64_t slot_lookups;

guint64
sbx_view_files_slot_lookups (void)
{
  return atomic_load (&slot_lookups);
}

gboolean
sbx_view_files_slot_name (SbxViewServer               *self,
                          const struct fuse_in_header *h,
                          const char                  *name)
{
  SbxViewFiles *files = self->files;
  const char *digits;
  gboolean can_ask;
  guint64 i;

  if (!g_str_has_prefix (name, SBX_VIEW_SLOT_PREFIX))
    return FALSE;
  digits = name + strlen (SBX_VIEW_SLOT_PREFIX);
  if (!g_ascii_string_to_unsigned (digits, 10, 0, SBX_VIEW_N_SLOTS - 1, &i, NULL)
      || (digits[0] == '0' && digits[1] != '\0') || digits[0] == '+' || digits[0] == '-')
    return FALSE;
  atomic_fetch_add (&slot_lookups, 1);
  g_mutex_lock (&self->sink_lock);
  can_ask = self->sink.ask != NULL;
  g_mutex_unlock (&self->sink_lock);
  /* Shown once, to the child adding its Landlock rule before the target
   * runs; never again (a name that is not there), so the target cannot
   * reach a slot by its name. */
  if (files == NULL || files->slots[i].shown || !can_ask)
    {
      sbx_view_reply (self, h->unique, ENOENT, NULL, 0);
      return TRUE;
    }
  files->slots[i].shown = TRUE;
  reply_slot_entry (self, h->unique, (int) i);
  return TRUE;
}

/* ------------------------------------------------------------------------- */
/* Questions                                                                 */
/* ------------------------------------------------------------------------- */

/* SbxBackendAnswerFunc: from any thread, maybe inside ask (hub lock held). */
static void
held_answered (void    *ticket,
               uint32_t decision)
{
  Held *h = ticket;

  h->decision = decision;
  if (!sbx_ask_queue_push (h->queue, h))
    held_free (h);   /* the server stopped */
}

static SbxAskQueue *
asks_ensure (SbxViewServer *self)
{
  SbxViewFiles *files = self->files;
  SbxAskQueue *asks;

  if (files->asks != NULL)
    return files->asks;
  asks = sbx_ask_queue_new ();
  if (asks == NULL)
    return NULL;
  if (!files->watch (self, sbx_ask_queue_fd (asks)))
    {
      sbx_ask_queue_unref (asks);
      return NULL;   /* no way to hear answers (a server not started): never ask */
    }
  files->asks = asks;
  return asks;
}

/* Holds request @unique of @tid and asks the host about @a (a read of
 * an existing regular file); FALSE (nothing held) when it cannot be asked. */
static gboolean
hold (SbxViewServer *self, uint64_t unique, pid_t tid, const SbxViewAttempt *a, Held *proto)
{
  SbxViewFiles *files = self->files;
  SbxBackendDenialV1 request = { 0 };
  SbxAskQueue *asks;
  Held *h;

  if (files->n_held >= MAX_HELD || !g_utf8_validate (a->target, -1, NULL))
    return FALSE;
  asks = asks_ensure (self);
  if (asks == NULL)
    return FALSE;
  h = g_new0 (Held, 1);
  *h = *proto;
  h->unique = unique;
  h->tid = tid;
  h->a = *a;
  h->queue = sbx_ask_queue_ref (asks);
  request.struct_size = sizeof request;
  request.operation = SBX_ABI_DENIAL_READ;
  request.pid = a->nspid;
  request.target = h->a.target;
  request.mechanism = "view-supervisor";
  request.process = h->a.process[0] != '\0' && g_utf8_validate (h->a.process, -1, NULL) ? h->a.process : NULL;
  g_mutex_lock (&self->sink_lock);
  if (self->sink.ask == NULL)
    {
      g_mutex_unlock (&self->sink_lock);
      h->name = h->looked_up = NULL;
      held_free (h);
      return FALSE;
    }
  files->n_held++;
  if (h->open)
    files->slots[h->slot].n_held++;
  g_hash_table_insert (files->held, &h->unique, h);
  self->sink.ask (self->sink.data, &request, held_answered, h);
  g_mutex_unlock (&self->sink_lock);
  return TRUE;
}

/* A read of an existing regular file by an open-type call, outside the
 * view: the kind of attempt that is asked. */
static gboolean
askable (const SbxViewAttempt *a, const struct stat *st, gboolean exists)
{
  return a->op == SBX_ABI_DENIAL_READ && a->open_call && exists && S_ISREG (st->st_mode);
}

gboolean
sbx_view_files_lookup (SbxViewServer               *self,
                       const struct fuse_in_header *h,
                       const char                  *name,
                       const char                  *looked_up,
                       const SbxViewAttempt        *a,
                       const struct stat           *st,
                       gboolean                     exists)
{
  SbxViewFiles *files = self->files;
  Held proto = { 0 };
  int i;

  if (files == NULL || a->op != SBX_ABI_DENIAL_READ || !exists || !S_ISREG (st->st_mode)
      || !sbx_view_path_at_or_below (a->target, looked_up))
    return FALSE;
  i = slot_for (files, a->target, (pid_t) h->pid);
  if (i >= 0 && (a->open_call || files->slots[i].run))
    {
      /* approved already: this thread's ONCE (its open), or the path for
       * the run (then also its metadata: stat, access) */
      if (files->slots[i].n_open == 0)
        files->slots[i].st = *st;
      return reply_approved (self, h->unique, looked_up, a->target, i);
    }
  if (!askable (a, st, exists))
    return FALSE;
  if (files->last_denied.tid == (pid_t) h->pid && files->last_denied.parent == h->nodeid
      && g_strcmp0 (files->last_denied.looked_up, looked_up) == 0)
    {
      /* The same thread's next lookup of the name just refused: the
       * kernel's fresh lookup after the failed revalidation of a cached
       * name (a directory node of an earlier approval), in the same
       * system call.  Refused again, not asked twice, and not reported
       * twice: it is the same attempt, whose denial is counted already. */
      files->last_denied.tid = 0;
      sbx_view_task_forget (&self->task);
      sbx_view_reply (self, h->unique, sbx_view_refusal_errno (self, a, exists), NULL, 0);
      return TRUE;
    }
  files->last_denied.tid = 0;
  if (slot_to_bind (files, a->target) < 0)
    return FALSE;   /* no slot could show it: refused as without asking */
  proto.parent = h->nodeid;
  proto.slot = -1;
  proto.name = g_strdup (name);
  proto.looked_up = g_strdup (looked_up);
  if (hold (self, h->unique, (pid_t) h->pid, a, &proto))
    return TRUE;
  g_free (proto.name);
  g_free (proto.looked_up);
  return FALSE;
}

void
sbx_view_files_interrupt (SbxViewServer *self,
                          const uint8_t *body,
                          size_t         len)
{
  const struct fuse_interrupt_in *in = (const void *) body;
  Held *h;

  if (self->files == NULL || len < sizeof *in)
    return;
  h = g_hash_table_lookup (self->files->held, &in->unique);
  if (h == NULL)
    return;   /* answered already, or not ours */
  g_hash_table_remove (self->files->held, &h->unique);
  h->cancelled = TRUE;
  sbx_view_reply (self, h->unique, EINTR, NULL, 0);
}

/* ------------------------------------------------------------------------- */
/* Serving                                                                   */
/* ------------------------------------------------------------------------- */

/* Exactly @path, no symlink on the way, for reading only, as the caller. */
static int
open_exact (const char *path)
{
  struct open_how how = { 0 };
  int fd;

  how.flags = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;
  how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  fd = (int) syscall (SYS_openat2, AT_FDCWD, path, &how, sizeof how);
  if (fd < 0 && errno == ENOSYS)
    fd = -1;   /* no openat2: an intermediate symlink could not be refused, so nothing is opened */
  return fd;
}

/* Opens slot @i's file for @tid; 0 with *@fh, or an errno. */
static int
slot_open (SbxViewFiles *files, int i, pid_t tid, uint64_t *fh)
{
  Slot *s = &files->slots[i];
  struct stat st;
  Open *o;
  int fd;

  if (!slot_serves (s, tid))
    return EACCES;
  if (g_hash_table_size (files->opens) >= MAX_OPENS)
    return EMFILE;
  fd = open_exact (s->path);
  if (fd < 0)
    return EACCES;
  if (fstat (fd, &st) != 0 || !S_ISREG (st.st_mode) || st.st_dev != s->st.st_dev || st.st_ino != s->st.st_ino)
    {
      close (fd);   /* not the file that was approved any more */
      return EACCES;
    }
  if (!s->run)
    s->once_used = TRUE;
  s->n_open++;
  o = g_new0 (Open, 1);
  o->fh = ++files->next_fh;
  o->fd = fd;
  o->slot = i;
  g_hash_table_insert (files->opens, &o->fh, o);
  *fh = o->fh;
  return 0;
}

static void
reply_open (SbxViewServer *self, uint64_t unique, uint64_t fh)
{
  struct fuse_open_out out = { 0 };

  out.fh = fh;
  out.open_flags = FOPEN_DIRECT_IO;   /* no page cache: every read comes here, to this open */
  sbx_view_reply (self, unique, 0, &out, sizeof out);
}

/* A refused read (or @op) of @path by @tid, reported; EACCES. */
static void
refuse_open (SbxViewServer *self, uint64_t unique, pid_t tid, uint32_t op, const char *path, int err)
{
  SbxViewAttempt a;

  if (path != NULL)
    {
      sbx_view_task_identify (&self->task, tid, &a);
      a.op = op;
      g_strlcpy (a.target, path, sizeof a.target);
      sbx_view_report (self, &a);
    }
  sbx_view_reply (self, unique, err, NULL, 0);
}

static void
handle_slot_open (SbxViewServer *self, const struct fuse_in_header *h, int i, const uint8_t *body, size_t len)
{
  const struct fuse_open_in *in = (const void *) body;
  SbxViewFiles *files = self->files;
  Slot *s = &files->slots[i];
  uint32_t op;
  uint64_t fh = 0;
  int err;

  if (len < sizeof *in)
    {
      sbx_view_reply (self, h->unique, EINVAL, NULL, 0);
      return;
    }
  if (s->path == NULL)
    {
      sbx_view_reply (self, h->unique, EACCES, NULL, 0);
      return;
    }
  op = sbx_view_open_operation (in->flags);
  if (op != SBX_ABI_DENIAL_READ)
    {
      refuse_open (self, h->unique, (pid_t) h->pid, op, s->path, EACCES);
      return;
    }
  if (!slot_serves (s, (pid_t) h->pid))
    {
      /* a second open after ONCE, another thread, a reopen through
       * /proc/PID/fd: a read of that file again, asked again */
      SbxViewAttempt a;
      Held proto = { 0 };

      sbx_view_task_identify (&self->task, (pid_t) h->pid, &a);
      a.op = SBX_ABI_DENIAL_READ;
      a.open_call = TRUE;
      g_strlcpy (a.target, s->path, sizeof a.target);
      proto.open = TRUE;
      proto.slot = i;
      proto.parent = h->nodeid;
      if (!hold (self, h->unique, (pid_t) h->pid, &a, &proto))
        refuse_open (self, h->unique, (pid_t) h->pid, SBX_ABI_DENIAL_READ, s->path, EACCES);
      return;
    }
  err = slot_open (files, i, (pid_t) h->pid, &fh);
  if (err != 0)
    refuse_open (self, h->unique, (pid_t) h->pid, SBX_ABI_DENIAL_READ, err == EACCES ? s->path : NULL, err);
  else
    reply_open (self, h->unique, fh);
}

static void
handle_slot_read (SbxViewServer *self, const struct fuse_in_header *h, int i, const uint8_t *body, size_t len)
{
  const struct fuse_read_in *in = (const void *) body;
  g_autofree uint8_t *buf = NULL;
  size_t size, have = 0;
  Open *o;

  if (len < sizeof *in)
    {
      sbx_view_reply (self, h->unique, EINVAL, NULL, 0);
      return;
    }
  o = g_hash_table_lookup (self->files->opens, &in->fh);
  if (o == NULL || o->slot != i || in->offset > (uint64_t) G_MAXINT64)
    {
      sbx_view_reply (self, h->unique, EBADF, NULL, 0);
      return;
    }
  size = MIN ((size_t) in->size, (size_t) READ_MAX);
  buf = g_malloc (MAX (size, 1));
  while (have < size)
    {
      ssize_t n = pread (o->fd, buf + have, size - have, (off_t) (in->offset + have));

      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0 && have == 0)
        {
          sbx_view_reply (self, h->unique, errno, NULL, 0);
          return;
        }
      if (n <= 0)
        break;
      have += (size_t) n;
    }
  sbx_view_reply (self, h->unique, 0, buf, have);
}

static void
handle_slot_release (SbxViewServer *self, const struct fuse_in_header *h, int i, const uint8_t *body, size_t len)
{
  const struct fuse_release_in *in = (const void *) body;
  SbxViewFiles *files = self->files;
  Open *o;

  if (len >= sizeof *in && (o = g_hash_table_lookup (files->opens, &in->fh)) != NULL && o->slot == i)
    {
      Slot *s = &files->slots[i];

      g_hash_table_remove (files->opens, &in->fh);
      s->n_open--;
      if (s->n_open == 0 && s->n_held == 0 && !s->run && s->once_used)
        slot_unbind (s);
    }
  sbx_view_reply (self, h->unique, 0, NULL, 0);
}

/* A lookup below directory node @d (on the way to an approved file). */
static void
handle_dir_lookup (SbxViewServer *self, const struct fuse_in_header *h, guint d, const uint8_t *body, size_t len)
{
  const uint8_t *nul = memchr (body, '\0', len);
  char looked_up[PATH_MAX + 256];
  const char *dir = g_ptr_array_index (self->files->dirs, d);
  SbxViewAttempt a;
  struct stat st;
  gboolean exists;

  if (nul == NULL || nul == body || (size_t) (nul - body) > 255 || memchr (body, '/', (size_t) (nul - body)) != NULL
      || strcmp ((const char *) body, ".") == 0 || strcmp ((const char *) body, "..") == 0)
    {
      sbx_view_reply (self, h->unique, EINVAL, NULL, 0);
      return;
    }
  g_snprintf (looked_up, sizeof looked_up, "%s/%s", dir, (const char *) body);
  if (sbx_view_task_is_ours (&self->task, (pid_t) h->pid))
    {
      /* sbx's own connect supervisor: the answer the view gives */
      sbx_view_reply (self, h->unique,
                      (self->policy_flags & SBX_POLICY_DENIED_NOT_FOUND) || lstat (looked_up, &st) != 0
                             ? ENOENT : EACCES, NULL, 0);
      return;
    }
  sbx_view_task_classify (&self->task, (pid_t) h->pid, looked_up, &a);
  exists = lstat (a.target, &st) == 0;
  if (!sbx_view_files_lookup (self, h, (const char *) body, looked_up, &a, &st, exists))
    sbx_view_refuse (self, h->unique, (pid_t) h->pid, h->nodeid, (const char *) body, &a, exists);
}

static void
handle_access (SbxViewServer *self, const struct fuse_in_header *h, const uint8_t *body, size_t len)
{
  const struct fuse_access_in *in = (const void *) body;

  if (len < sizeof *in)
    sbx_view_reply (self, h->unique, EINVAL, NULL, 0);
  else
    sbx_view_reply (self, h->unique, (in->mask & (W_OK | X_OK)) ? EACCES : 0, NULL, 0);
}

void
sbx_view_files_handle (SbxViewServer               *self,
                       const struct fuse_in_header *h,
                       const uint8_t               *body,
                       size_t                       len)
{
  SbxViewFiles *files = self->files;
  struct fuse_attr_out attr = { 0 };
  uint64_t id;

  if (files == NULL || h->nodeid < files->first
      || (id = h->nodeid - files->first) >= SBX_VIEW_N_SLOTS + (uint64_t) files->dirs->len)
    {
      sbx_view_reply (self, h->unique, ESTALE, NULL, 0);
      return;
    }
  if (id < SBX_VIEW_N_SLOTS)
    switch (h->opcode)
      {
      case FUSE_GETATTR:
        slot_attr (self, (int) id, &attr.attr);
        sbx_view_reply (self, h->unique, 0, &attr, sizeof attr);
        return;
      case FUSE_OPEN:
        handle_slot_open (self, h, (int) id, body, len);
        return;
      case FUSE_READ:
        handle_slot_read (self, h, (int) id, body, len);
        return;
      case FUSE_RELEASE:
        handle_slot_release (self, h, (int) id, body, len);
        return;
      case FUSE_FLUSH:
        sbx_view_reply (self, h->unique, 0, NULL, 0);
        return;
      case FUSE_ACCESS:
        handle_access (self, h, body, len);
        return;
      case FUSE_LOOKUP:
      case FUSE_OPENDIR:
      case FUSE_READDIR:
      case FUSE_READDIRPLUS:
        sbx_view_reply (self, h->unique, ENOTDIR, NULL, 0);
        return;
      default:
        break;
      }
  else
    switch (h->opcode)
      {
      case FUSE_GETATTR:
        dir_attr (self, h->nodeid, &attr.attr);
        sbx_view_reply (self, h->unique, 0, &attr, sizeof attr);
        return;
      case FUSE_LOOKUP:
        handle_dir_lookup (self, h, (guint) (id - SBX_VIEW_N_SLOTS), body, len);
        return;
      case FUSE_OPENDIR:
      case FUSE_READDIR:   /* the kernel sends no OPENDIR once answered ENOSYS */
      case FUSE_READDIRPLUS:
        /* a listing is never served: only the approved read's lookups */
        refuse_open (self, h->unique, (pid_t) h->pid, SBX_ABI_DENIAL_LIST,
                     g_ptr_array_index (files->dirs, id - SBX_VIEW_N_SLOTS), EACCES);
        return;
      case FUSE_ACCESS:
        handle_access (self, h, body, len);
        return;
      case FUSE_RELEASEDIR:
        sbx_view_reply (self, h->unique, 0, NULL, 0);
        return;
      default:
        break;
      }
  /* Nothing else is served here: the view is read-only (a change is
   * refused), and the kernel sends nothing else for such nodes (a readlink,
   * an open of a directory) but garbage: ENOSYS. */
  switch (h->opcode)
    {
    case FUSE_SETATTR:
    case FUSE_SETXATTR:
    case FUSE_REMOVEXATTR:
    case FUSE_WRITE:
    case FUSE_FALLOCATE:
    case FUSE_CREATE:
    case FUSE_MKNOD:
    case FUSE_MKDIR:
    case FUSE_UNLINK:
    case FUSE_RMDIR:
    case FUSE_RENAME:
    case FUSE_RENAME2:
    case FUSE_LINK:
    case FUSE_SYMLINK:
    case FUSE_TMPFILE:
      sbx_view_reply (self, h->unique, EACCES, NULL, 0);
      break;
    default:
      sbx_view_reply (self, h->unique, ENOSYS, NULL, 0);
      break;
    }
}

/* ------------------------------------------------------------------------- */
/* Answers                                                                   */
/* ------------------------------------------------------------------------- */

/* An approved held request: TRUE when answered as approved. */
static gboolean
approve (SbxViewServer *self, Held *h)
{
  SbxViewFiles *files = self->files;
  gboolean run = h->decision == SBX_ABI_DECISION_FOR_RUN;
  struct stat st;
  uint64_t fh = 0;
  int i;

  if (h->decision != SBX_ABI_DECISION_ONCE && !run)
    return FALSE;
  if (lstat (h->a.target, &st) != 0 || !S_ISREG (st.st_mode))
    return FALSE;
  if (h->open)
    {
      /* the open of a slot: served by that slot while it still shows
       * the approved path (held opens keep it from being rebound) */
      Slot *s = &files->slots[h->slot];

      if (s->path == NULL || strcmp (s->path, h->a.target) != 0)
        return FALSE;
      slot_bind (s, h->a.target, &st, h->tid, run);
      if (slot_open (files, h->slot, h->tid, &fh) != 0)
        return FALSE;
      reply_open (self, h->unique, fh);
      return TRUE;
    }
  i = slot_to_bind (files, h->a.target);
  if (i < 0)
    return FALSE;
  slot_bind (&files->slots[i], h->a.target, &st, h->tid, run);
  return reply_approved (self, h->unique, h->looked_up, h->a.target, i);
}

void
sbx_view_files_drain (SbxViewServer *self)
{
  SbxViewFiles *files = self->files;
  GQueue answered = G_QUEUE_INIT;
  Held *h;

  if (files == NULL || files->asks == NULL)
    return;
  sbx_ask_queue_take (files->asks, &answered);
  while ((h = g_queue_pop_head (&answered)) != NULL)
    {
      files->n_held--;
      if (h->open)
        files->slots[h->slot].n_held--;
      if (h->cancelled)
        ;   /* interrupted: answered EINTR already */
      else
        {
          g_hash_table_remove (files->held, &h->unique);
          if (!approve (self, h))
            {
              struct stat st;

              /* refused exactly as without asking */
              if (h->open)
                refuse_open (self, h->unique, h->tid, SBX_ABI_DENIAL_READ, h->a.target, EACCES);
              else
                {
                  files->last_denied.tid = h->tid;
                  files->last_denied.parent = h->parent;
                  g_free (files->last_denied.looked_up);
                  files->last_denied.looked_up = g_strdup (h->looked_up);
                  sbx_view_refuse (self, h->unique, h->tid, h->parent, h->name, &h->a,
                                   lstat (h->a.target, &st) == 0);
                }
            }
        }
      held_free (h);
    }
}
