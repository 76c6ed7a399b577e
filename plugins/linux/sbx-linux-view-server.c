/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The view supervisor (see sbx-linux-view-server.h for what it is for):
 * the raw FUSE protocol (<linux/fuse.h>, no libfuse) over the /dev/fuse
 * descriptor the sandbox sends (or one we made, the early root).
 *
 * A server's life (made, started, served by the hub, stopped, freed) is
 * sbx-linux-view-hub.c's; this file answers one request at a time.
 *
 * LOCKING: @sink_lock protects @sink; the hub holds it across a sink call,
 * so after set_sink() returns the old sink is neither in flight nor
 * called again.  hub.lock is held while the hub handles an event and while
 * a server is registered or unregistered: stop() unregisters under it, so
 * after it returns no event of that server is being handled or will be
 * (the hub finds a server by its id, never by a pointer an event kept).
 * The counters are atomics.  The FUSE descriptor, the task cache and the
 * request buffer are touched only under hub.lock.
 *
 * Answers (the rules in one place):
 *  - a skeleton entry: found, with entry and attribute timeouts the kernel
 *    treats as forever, so it never asks again.  A skeleton name is never
 *    answered negatively: a failed revalidation of a mountpoint's dentry
 *    would detach every mount below it;
 *  - another name under a skeleton directory (an attempt on a host path
 *    outside the view): classified from the blocked task
 *    (sbx-linux-view-task.c), then EACCES when the target exists on the
 *    host and a denial; when it does not exist, EACCES and a write denial
 *    for an operation that would create it, else ENOENT and no denial
 *    (there is nothing to grant).  With SBX_POLICY_DENIED_NOT_FOUND always
 *    ENOENT (the same reports): existence never shows, and a create that
 *    follows gets EACCES as for a missing name.  The answer depends on the
 *    host and the request only through the target's existence; what the
 *    task's memory says can change which path is reported, never whether
 *    anything is allowed.
 *    Always an error reply: the kernel caches no negative entry, so every
 *    attempt reaches us and is counted;
 *  - a request that would change a skeleton node: EACCES and a write
 *    denial of the path it names (a create after our ENOENT for the same
 *    name and task was reported by its lookup already);
 *  - the view's own reads (getattr, readdir, readlink, statfs, access):
 *    answered from the skeleton; anything else ENOSYS.
 */
#include "sbx-linux-view-server.h"
#include "sbx-linux-view-private.h"

#include <sbx/sbx-cleanup.h>

#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <linux/fuse.h>

#include <gio/gio.h>

/* "Forever" for entry and attribute timeouts: 136 years, well inside what
 * the kernel converts to jiffies without overflow. */
#define FOREVER_S UINT32_MAX

static inline SbxViewNode *
node_at (SbxViewServer *self, guint i)
{
  return &g_array_index (self->skel.nodes, SbxViewNode, i);
}


/* ------------------------------------------------------------------------- */
/* Denials                                                                   */
/* ------------------------------------------------------------------------- */

void
sbx_view_server_set_sink (SbxViewServer                *self,
                          const SbxBackendDenialSinkV1 *sink)
{
  g_return_if_fail (self != NULL);
  g_mutex_lock (&self->sink_lock);
  memset (&self->sink, 0, sizeof self->sink);
  if (sink != NULL && sink->struct_size >= SBX_BACKEND_DENIAL_SINK_V1_MIN_SIZE)
    {
      self->sink.struct_size = sizeof self->sink;
      self->sink.denied = sink->denied;
      self->sink.data = sink->data;
      if (sink->struct_size >= SBX_BACKEND_DENIAL_SINK_V1_ASK_SIZE && sink->denied != NULL)
        self->sink.ask = sink->ask;
    }
  g_mutex_unlock (&self->sink_lock);
}

static inline void
report (SbxViewServer *self, const SbxViewAttempt *a)
{
  sbx_view_report (self, a);
}

/* A write denial of @path by the task of @h (a request on a skeleton node). */
static void
report_write (SbxViewServer *self, const struct fuse_in_header *h, const char *path)
{
  SbxViewAttempt a;

  sbx_view_task_identify (&self->task, (pid_t) h->pid, &a);
  a.op = SBX_ABI_DENIAL_WRITE;
  g_strlcpy (a.target, path, sizeof a.target);
  report (self, &a);
}

/* ------------------------------------------------------------------------- */
/* Replies                                                                   */
/* ------------------------------------------------------------------------- */

static inline void
reply (SbxViewServer *self, uint64_t unique, int err, const void *data, size_t len)
{
  sbx_view_reply (self, unique, err, data, len);
}

static void
fill_attr (SbxViewServer *self, guint idx, struct fuse_attr *attr)
{
  SbxViewNode *n = node_at (self, idx);

  memset (attr, 0, sizeof *attr);
  attr->ino = idx + 1;
  attr->atime = attr->mtime = attr->ctime = (uint64_t) self->born.tv_sec;
  attr->atimensec = attr->mtimensec = attr->ctimensec = (uint32_t) self->born.tv_nsec;
  attr->uid = self->uid;
  attr->gid = self->gid;
  attr->blksize = 4096;
  switch (n->type)
    {
    case S_IFDIR:
      attr->mode = S_IFDIR | 0755;
      attr->nlink = 2 + n->n_subdirs;
      attr->size = 4096;
      break;
    case S_IFLNK:
      attr->mode = S_IFLNK | 0777;
      attr->nlink = 1;
      attr->size = strlen (n->link_target);
      break;
    default:
      attr->mode = S_IFREG | 0644;
      attr->nlink = 1;
      break;
    }
}

static void
reply_entry (SbxViewServer *self, uint64_t unique, guint idx)
{
  struct fuse_entry_out e = { 0 };

  e.nodeid = idx + 1;
  e.entry_valid = e.attr_valid = FOREVER_S;
  fill_attr (self, idx, &e.attr);
  reply (self, unique, 0, &e, sizeof e);
}

/* ------------------------------------------------------------------------- */
/* Requests                                                                  */
/* ------------------------------------------------------------------------- */

/* The request's node, or FALSE (answered ESTALE) for an id we never gave. */
static gboolean
request_node (SbxViewServer *self, const struct fuse_in_header *h, guint *idx)
{
  if (h->nodeid < 1 || h->nodeid > self->skel.nodes->len)
    {
      reply (self, h->unique, ESTALE, NULL, 0);
      return FALSE;
    }
  *idx = (guint) (h->nodeid - 1);
  return TRUE;
}

/* A NUL-terminated name at @body (@len bytes left), one component. */
static const char *
request_name (const uint8_t *body, size_t len)
{
  const uint8_t *nul = memchr (body, '\0', len);
  size_t n;

  if (nul == NULL)
    return NULL;
  n = (size_t) (nul - body);
  if (n == 0 || n > 255 || memchr (body, '/', n) != NULL)
    return NULL;
  return (const char *) body;
}

/* parent path + "/" + name, into @out (PATH_MAX + 256 at least). */
static void
child_path (SbxViewServer *self, guint parent, const char *name, char *out, size_t size)
{
  const char *dir = node_at (self, parent)->path;

  g_snprintf (out, size, "%s/%s", strcmp (dir, "/") == 0 ? "" : dir, name);
}

static void
handle_lookup (SbxViewServer *self, const struct fuse_in_header *h, const uint8_t *body, size_t len)
{
  char looked_up[PATH_MAX + 256];
  const char *name = request_name (body, len);
  SbxViewAttempt a;
  gpointer found;
  struct stat st;
  gboolean exists;
  guint parent;

  if (!request_node (self, h, &parent))
    return;
  if (name == NULL || node_at (self, parent)->type != S_IFDIR)
    {
      reply (self, h->unique, name == NULL ? EINVAL : ENOTDIR, NULL, 0);
      return;
    }
  if (strcmp (name, ".") == 0 || strcmp (name, "..") == 0)
    {
      reply_entry (self, h->unique, name[1] == '\0' ? parent : node_at (self, parent)->parent);
      return;
    }
  child_path (self, parent, name, looked_up, sizeof looked_up);
  found = g_hash_table_lookup (self->skel.by_path, looked_up);
  if (found != NULL)
    {
      reply_entry (self, h->unique, GPOINTER_TO_UINT (found) - 1);
      return;
    }
  if (parent == 0 && sbx_view_files_slot_name (self, h, name))
    return;
  /* A lookup by a thread of ours (sbx_view_task_is_ours(): the connect
   * supervisor resolving a socket path in the sandbox's view), never a
   * process of the sandbox.  It gets the answer the view gives, and is no
   * attempt of the sandbox's. */
  if (sbx_view_task_is_ours (&self->task, (pid_t) h->pid))
    {
      reply (self, h->unique,
             (self->policy_flags & SBX_POLICY_DENIED_NOT_FOUND) || lstat (looked_up, &st) != 0 ? ENOENT : EACCES,
             NULL, 0);
      return;
    }
  /* A name the host lacks too: the answer is ENOENT and nothing is
   * reported unless the call writes (sbx_view_refuse()), so when its
   * number and flags say it does not, neither its path nor its process
   * is read (every process the sandbox starts looks up a missing
   * /etc/ld.so.preload, and tools probe many missing names). */
  if (lstat (looked_up, &st) != 0 && (errno == ENOENT || errno == ENOTDIR)
      && !sbx_view_task_may_write (&self->task, (pid_t) h->pid))
    {
      sbx_view_task_forget (&self->task);   /* as sbx_view_refuse() for a missing read */
      reply (self, h->unique, ENOENT, NULL, 0);
      return;
    }
  /* An attempt outside the view: asked (a read the host may approve while
   * the tool runs, sbx-linux-view-files.c), or refused. */
  sbx_view_task_classify (&self->task, (pid_t) h->pid, looked_up, &a);
  exists = lstat (a.target, &st) == 0;
  if (sbx_view_files_lookup (self, h, name, looked_up, &a, &st, exists))
    return;
  sbx_view_refuse (self, h->unique, (pid_t) h->pid, h->nodeid, name, &a, exists);
}

static void
handle_getattr (SbxViewServer *self, const struct fuse_in_header *h)
{
  struct fuse_attr_out out = { 0 };
  guint idx;

  if (!request_node (self, h, &idx))
    return;
  out.attr_valid = FOREVER_S;
  fill_attr (self, idx, &out.attr);
  reply (self, h->unique, 0, &out, sizeof out);
}

static void
handle_readlink (SbxViewServer *self, const struct fuse_in_header *h)
{
  guint idx;
  SbxViewNode *n;

  if (!request_node (self, h, &idx))
    return;
  n = node_at (self, idx);
  if (n->type != S_IFLNK)
    reply (self, h->unique, EINVAL, NULL, 0);
  else
    reply (self, h->unique, 0, n->link_target, strlen (n->link_target));
}

static void
handle_open (SbxViewServer *self, const struct fuse_in_header *h, const uint8_t *body, size_t len, gboolean dir)
{
  struct fuse_open_out out = { 0 };
  const struct fuse_open_in *in = (const void *) body;
  guint idx;

  if (!request_node (self, h, &idx))
    return;
  if (len < sizeof *in)
    {
      reply (self, h->unique, EINVAL, NULL, 0);
      return;
    }
  /* A directory holds nothing per open: where the kernel can do without
   * OPENDIR (FUSE_NO_OPENDIR_SUPPORT), ENOSYS tells it to stop sending it
   * (and its RELEASEDIR), a round trip less per directory opened. */
  if (dir && self->no_opendir && node_at (self, idx)->type == S_IFDIR)
    {
      reply (self, h->unique, ENOSYS, NULL, 0);
      return;
    }
  if ((node_at (self, idx)->type == S_IFDIR) != dir)
    {
      reply (self, h->unique, dir ? ENOTDIR : EISDIR, NULL, 0);
      return;
    }
  if (sbx_view_open_operation (in->flags) == SBX_ABI_DENIAL_WRITE)
    {
      report_write (self, h, node_at (self, idx)->path);
      reply (self, h->unique, EACCES, NULL, 0);
      return;
    }
  /* A skeleton file reads as the empty file the tmpfs had. */
  out.fh = h->nodeid;
  out.open_flags = dir ? FOPEN_KEEP_CACHE : FOPEN_DIRECT_IO;
  reply (self, h->unique, 0, &out, sizeof out);
}

/* READDIR and READDIRPLUS (@plus): the entries of a skeleton directory.
 * With @plus each entry carries the lookup's answer, so one request
 * teaches the kernel a whole directory of the skeleton: A lists each
 * skeleton directory once before it mounts under it
 * (sbx-linux-child-mount.c), instead of a lookup per mountpoint. */
static void
handle_readdir (SbxViewServer *self, const struct fuse_in_header *h, const uint8_t *body, size_t len,
                gboolean plus)
{
  const struct fuse_read_in *in = (const void *) body;
  uint8_t out[16384];
  size_t used = 0, size;
  guint idx;
  SbxViewNode *n;

  if (!request_node (self, h, &idx))
    return;
  if (len < sizeof *in || node_at (self, idx)->type != S_IFDIR)
    {
      reply (self, h->unique, len < sizeof *in ? EINVAL : ENOTDIR, NULL, 0);
      return;
    }
  n = node_at (self, idx);
  size = MIN ((size_t) in->size, sizeof out);
  /* Entry k: 0 ".", 1 "..", 2 + i the i-th child; the offset of an entry
   * is the index of the one after it. */
  for (uint64_t k = in->offset; k < 2 + (uint64_t) n->children->len; k++)
    {
      guint target = k == 0 ? idx : k == 1 ? n->parent : g_array_index (n->children, guint, k - 2);
      const char *name = k == 0 ? "." : k == 1 ? ".." : node_at (self, target)->name;
      size_t namelen = strlen (name);
      size_t entlen = FUSE_DIRENT_ALIGN (FUSE_NAME_OFFSET + namelen);
      size_t head = plus ? offsetof (struct fuse_direntplus, dirent) : 0;
      struct fuse_dirent *d = (struct fuse_dirent *) (void *) (out + used + head);

      if (used + head + entlen > size)
        break;
      memset (out + used, 0, head + entlen);
      /* "." and ".." carry no answer (nodeid 0: the kernel links neither) */
      if (plus && k >= 2)
        {
          struct fuse_entry_out *e = (struct fuse_entry_out *) (void *) (out + used);

          e->nodeid = target + 1;
          e->entry_valid = e->attr_valid = FOREVER_S;
          fill_attr (self, target, &e->attr);
        }
      d->ino = target + 1;
      d->off = k + 1;
      d->namelen = (uint32_t) namelen;
      d->type = node_at (self, target)->type >> 12;
      memcpy (d->name, name, namelen);
      used += head + entlen;
    }
  reply (self, h->unique, 0, out, used);
}

static void
handle_statfs (SbxViewServer *self, const struct fuse_in_header *h)
{
  struct fuse_statfs_out out = { 0 };

  out.st.bsize = 4096;
  out.st.frsize = 4096;
  out.st.namelen = 255;
  out.st.files = self->skel.nodes->len;
  reply (self, h->unique, 0, &out, sizeof out);
}

static void
handle_access (SbxViewServer *self, const struct fuse_in_header *h, const uint8_t *body, size_t len)
{
  const struct fuse_access_in *in = (const void *) body;
  guint idx;

  if (!request_node (self, h, &idx))
    return;
  if (len < sizeof *in)
    reply (self, h->unique, EINVAL, NULL, 0);
  else
    reply (self, h->unique, (in->mask & W_OK) ? EACCES : 0, NULL, 0);
}

/* A request that would change the skeleton: EACCES, and a write denial of
 * the path it names.  @name_off: where the name is in @body for requests
 * that name a child of the node (-1: the node itself). */
static void
handle_write_request (SbxViewServer *self, const struct fuse_in_header *h, const uint8_t *body, size_t len,
                      ssize_t name_off)
{
  char path[PATH_MAX + 256];
  guint idx;

  if (!request_node (self, h, &idx))
    return;
  if (name_off >= 0)
    {
      const char *name = (size_t) name_off <= len ? request_name (body + name_off, len - (size_t) name_off)
                                                  : NULL;

      if (name == NULL)
        {
          reply (self, h->unique, EINVAL, NULL, 0);
          return;
        }
      if (self->last_reported.pid == (pid_t) h->pid && self->last_reported.parent == h->nodeid
          && strcmp (self->last_reported.name, name) == 0)
        {
          /* its lookup was reported (answered ENOENT to hide the host path) */
          self->last_reported.pid = 0;
          reply (self, h->unique, EACCES, NULL, 0);
          return;
        }
      child_path (self, idx, name, path, sizeof path);
    }
  else
    g_strlcpy (path, node_at (self, idx)->path, sizeof path);
  report_write (self, h, path);
  reply (self, h->unique, EACCES, NULL, 0);
}

static gboolean
handle_init (SbxViewServer *self, const struct fuse_in_header *h, const uint8_t *body, size_t len)
{
  const struct fuse_init_in *in = (const void *) body;
  struct fuse_init_out out = { 0 };

  if (len < 16 || in->major != FUSE_KERNEL_VERSION)
    {
      /* A kernel of another major version: refuse; it ends the connection. */
      reply (self, h->unique, EPROTO, NULL, 0);
      return FALSE;
    }
  out.major = FUSE_KERNEL_VERSION;
  out.minor = MIN (in->minor, FUSE_KERNEL_MINOR_VERSION);
  out.max_readahead = 0;
  /* READDIRPLUS always (not the kernel's heuristic): a listing of the
   * skeleton is its lookups too.  Where the kernel offers it, OPENDIR is
   * answered ENOSYS (handle_open).  FUSE_PARALLEL_DIROPS: lookups of
   * distinct names of one directory are not serialized by the kernel, so
   * a lookup held for a question (sbx-linux-view-files.c) makes only the
   * lookups of that same name wait. */
  out.flags = in->flags & (FUSE_CACHE_SYMLINKS | FUSE_DO_READDIRPLUS | FUSE_PARALLEL_DIROPS);
  self->no_opendir = (in->flags & FUSE_NO_OPENDIR_SUPPORT) != 0;
  out.max_background = 1;
  out.congestion_threshold = 1;
  out.max_write = 4096;
  out.time_gran = 1;
  self->initialized = TRUE;
  reply (self, h->unique, 0, &out, in->minor < 23 ? FUSE_COMPAT_22_INIT_OUT_SIZE : sizeof out);
  return TRUE;
}

/* One request of @len bytes in self->buf; FALSE: the connection is over. */
gboolean
sbx_view_server_handle_request (SbxViewServer *self,
                                size_t         len)
{
  const struct fuse_in_header *h = (const void *) self->buf;
  const uint8_t *body = self->buf + sizeof *h;
  size_t blen;

  if (len < sizeof *h || h->len != len)
    return TRUE;   /* the kernel never sends this: drop it rather than guess */
  /* Counted: the requests a process's own system call waits for; not the
   * forgets, interrupts and releases the kernel sends on its own schedule
   * (a release of a directory closed earlier may come at any time). */
  if (h->opcode != FUSE_FORGET && h->opcode != FUSE_BATCH_FORGET && h->opcode != FUSE_INTERRUPT
      && h->opcode != FUSE_RELEASE && h->opcode != FUSE_RELEASEDIR)
    atomic_fetch_add (&self->n_requests, 1);
  blen = len - sizeof *h;
  if (!self->initialized && h->opcode != FUSE_INIT)
    {
      reply (self, h->unique, EIO, NULL, 0);
      return TRUE;
    }
  /* The files part's nodes (slots, directories to an approved file); the
   * requests that name no node or get no reply stay below. */
  if (h->nodeid > self->skel.nodes->len && h->opcode != FUSE_INIT && h->opcode != FUSE_FORGET
      && h->opcode != FUSE_BATCH_FORGET && h->opcode != FUSE_INTERRUPT && h->opcode != FUSE_DESTROY)
    {
      sbx_view_files_handle (self, h, body, blen);
      return TRUE;
    }
  if (h->opcode == FUSE_INTERRUPT)
    sbx_view_files_interrupt (self, body, blen);
  switch (h->opcode)
    {
    case FUSE_INIT:
      return handle_init (self, h, body, blen);
    case FUSE_LOOKUP:
      handle_lookup (self, h, body, blen);
      break;
    case FUSE_FORGET:
    case FUSE_BATCH_FORGET:
    case FUSE_INTERRUPT:
      break;   /* no reply; the skeleton is never freed, every request answered at once */
    case FUSE_GETATTR:
      handle_getattr (self, h);
      break;
    case FUSE_READLINK:
      handle_readlink (self, h);
      break;
    case FUSE_OPENDIR:
      handle_open (self, h, body, blen, TRUE);
      break;
    case FUSE_OPEN:
      handle_open (self, h, body, blen, FALSE);
      break;
    case FUSE_READDIR:
    case FUSE_READDIRPLUS:
      handle_readdir (self, h, body, blen, h->opcode == FUSE_READDIRPLUS);
      break;
    case FUSE_READ:
    case FUSE_RELEASE:
    case FUSE_RELEASEDIR:
    case FUSE_DESTROY:
      reply (self, h->unique, 0, NULL, 0);   /* READ: a skeleton file is empty */
      break;
    case FUSE_STATFS:
      handle_statfs (self, h);
      break;
    case FUSE_ACCESS:
      handle_access (self, h, body, blen);
      break;
    case FUSE_MKDIR:
      handle_write_request (self, h, body, blen, sizeof (struct fuse_mkdir_in));
      break;
    case FUSE_MKNOD:
      handle_write_request (self, h, body, blen, sizeof (struct fuse_mknod_in));
      break;
    case FUSE_CREATE:
      handle_write_request (self, h, body, blen, sizeof (struct fuse_create_in));
      break;
    case FUSE_UNLINK:
    case FUSE_RMDIR:
      handle_write_request (self, h, body, blen, 0);
      break;
    case FUSE_RENAME:
      handle_write_request (self, h, body, blen, sizeof (struct fuse_rename_in));
      break;
    case FUSE_RENAME2:
      handle_write_request (self, h, body, blen, sizeof (struct fuse_rename2_in));
      break;
    case FUSE_LINK:
      handle_write_request (self, h, body, blen, sizeof (struct fuse_link_in));
      break;
    case FUSE_SYMLINK:
      handle_write_request (self, h, body, blen, 0);   /* the link's name comes first, then its target */
      break;
    case FUSE_SETATTR:
    case FUSE_SETXATTR:
    case FUSE_REMOVEXATTR:
    case FUSE_WRITE:
    case FUSE_FALLOCATE:
    case FUSE_TMPFILE:
      handle_write_request (self, h, body, blen, -1);
      break;
    default:
      reply (self, h->unique, ENOSYS, NULL, 0);
      break;
    }
  return TRUE;
}

void
sbx_view_server_feed (SbxViewServer *self,
                      int            reply_fd,
                      const void    *request,
                      size_t         len)
{
  g_return_if_fail (self != NULL && !self->started && self->fuse_fd < 0);
  if (self->buf == NULL)
    self->buf = g_malloc (SBX_VIEW_REQUEST_BUF);
  memcpy (self->buf, request, MIN (len, (size_t) SBX_VIEW_REQUEST_BUF));
  self->fuse_fd = reply_fd;
  (void) sbx_view_server_handle_request (self, MIN (len, (size_t) SBX_VIEW_REQUEST_BUF));
  self->fuse_fd = -1;
}


uint64_t
sbx_view_server_n_requests (SbxViewServer *self)
{
  g_return_val_if_fail (self != NULL, 0);
  return atomic_load (&self->n_requests);
}

uint64_t
sbx_view_server_n_denials (SbxViewServer *self)
{
  g_return_val_if_fail (self != NULL, 0);
  return atomic_load (&self->n_denials);
}
