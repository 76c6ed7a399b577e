/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Landlock plan of the Linux backend: policy -> flat rule list (parent, once
 * per executor) -> ruleset (child, every spawn).
 *
 * How the policy becomes Landlock rules
 * -------------------------------------
 * Landlock can only add allows, and a rule on a directory covers its whole
 * subtree.  For every allow rule and every axis (read, exec, write) it grants:
 *
 *  - if no literal deny of that axis lies strictly beneath it (or, for a tree
 *    allow, exactly at it), the allow becomes one rule on its inode;
 *  - otherwise the allow is *carved*: the directory is listed once, now, and
 *    each child that holds no deny becomes its own rule, children that hold a
 *    deny deeper down are descended into, denied children are left out.  This
 *    is sibling enumeration with
 *    snapshot semantics: entries created later directly in a carved directory
 *    get nothing on that axis.
 *
 * ResolveFS precedence (most specific wins per axis, exact over tree, deny
 * wins ties, glob denies override, uncontrolled axis denied) is preserved or
 * narrowed: every emitted rule covers a subtree in which no literal deny of
 * its axis exists, and a more specific allow beneath a deny is emitted from
 * its own entry.
 *
 * Write topology barrier: a writable tree must not be able to rename, replace
 * or link around a node whose read or exec is denied (an allowed inode moved
 * under a protected name, or a protected inode moved to an allowed name that a
 * later snapshot would grant).  So for the write axis every read/exec deny
 * nested in the tree also carves it: the barrier's parent loses directory
 * write, a tree-denied node gets no write from the covering allow.  Departure
 * from upstream (deliberate): upstream also withdraws write from any allow that
 * sits under *any* recursive read deny, which includes the host root "/" of
 * every read-denied profile and would leave no workspace writable.  A more
 * specific writable allow inside a read-denied subtree keeps its write here:
 * it covers no denied node, its parent gets no write (so it cannot be moved),
 * and Landlock's REFER check refuses any link or rename that would give an
 * inode more access than it had at its source.
 *
 * Identity: rules name inodes, not paths.  Top-level targets are pinned with
 * O_PATH fds opened with openat2(RESOLVE_NO_SYMLINKS|RESOLVE_NO_MAGICLINKS)
 * (or dup()ed from the core's identity-checked grant fd).  Carved children
 * are not each held open (a large directory would exhaust RLIMIT_NOFILE);
 * they are recorded as (pinned parent fd, name, device, inode, type) and the
 * child re-opens them with O_NOFOLLOW and skips any whose identity changed.
 * Regular files must have exactly one link (an inode rule would also grant
 * every other name of it), checked at snapshot and before and after the rule
 * is added in the child.  Symlinks are never followed by the enumeration; a
 * policy path that is itself (or runs through) a symlink, such as /bin ->
 * usr/bin, is resolved once here and the rule goes on the resolved target
 * only for the axes the policy also grants there (otherwise the gap is
 * reported).  Devices of the policy get real rules after an S_ISCHR check;
 * block devices, FIFOs and sockets never do.
 *
 * Access sets per axis (no axis implies another):
 *   read  -> READ_FILE (+ READ_DIR on directories)
 *   exec  -> EXECUTE
 *   write -> WRITE_FILE | TRUNCATE; on directories also REMOVE_DIR,
 *            REMOVE_FILE, MAKE_DIR, MAKE_REG, MAKE_SOCK, MAKE_FIFO, MAKE_SYM,
 *            REFER (renames and links between writable directories) and
 *            IOCTL_DEV.  MAKE_CHAR and MAKE_BLOCK are never granted: a
 *            device node created in a writable tree would be a rule-free
 *            path to raw hardware for a caller that still holds CAP_MKNOD.
 *   char devices of the policy: READ_FILE / WRITE_FILE|TRUNCATE per axis,
 *            plus IOCTL_DEV (terminals need it).
 *
 * Errors are G_IO_ERROR: INVALID_ARGUMENT for a malformed policy (defense in
 * depth: the backend re-validates what the core compiled), NOT_SUPPORTED for
 * a request Landlock cannot honour without widening, and the errno mapping
 * for system-call failures.
 */
#include "sbx-landlock.h"
#include "sbx-landlock-compat.h"
#include "sbx-landlock-private.h"
#include <sbx/sbx-fs-resolve.h>
#include "sbx-raw-syscall.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <linux/openat2.h>

#include <gio/gio.h>

/* ------------------------------------------------------------------------- */
/* Access sets                                                                */
/* ------------------------------------------------------------------------- */

static const uint32_t axes[] = { SBX_FS_READ, SBX_FS_EXEC, SBX_FS_WRITE };

static const char *
axis_name (uint32_t axis)
{
  switch (axis)
    {
    case SBX_FS_READ:
      return "read";
    case SBX_FS_EXEC:
      return "execute";
    case SBX_FS_WRITE:
      return "write";
    default:
      return "?";
    }
}

static uint64_t
handled_fs_for_abi (int abi)
{
  uint64_t mask = LL_FS_ABI1;

  if (abi >= 2)
    mask |= LANDLOCK_ACCESS_FS_REFER;
  if (abi >= 3)
    mask |= LANDLOCK_ACCESS_FS_TRUNCATE;
  if (abi >= 5)
    mask |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
  return mask;
}

/* Landlock rights for @axis on an inode of file type @type (S_IFMT bits). */
static uint64_t
axis_rights (uint32_t axis, mode_t type)
{
  gboolean dir = type == S_IFDIR;
  gboolean chr = type == S_IFCHR;

  switch (axis)
    {
    case SBX_FS_READ:
      return (dir ? LL_READ_DIR : LL_READ_FILE) | (chr ? LL_DEVICE_EXTRA : 0);
    case SBX_FS_EXEC:
      return chr ? 0 : LL_EXEC;   /* executing a device is meaningless */
    case SBX_FS_WRITE:
      return (dir ? LL_WRITE_DIR : LL_WRITE_FILE) | (chr ? LL_DEVICE_EXTRA : 0);
    default:
      return 0;
    }
}

/* ------------------------------------------------------------------------- */
/* The plan                                                                   */
/* ------------------------------------------------------------------------- */



int
sbx_landlock_probe_abi (void)
{
  long abi = syscall (__NR_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);

  return abi > 0 ? (int) abi : 0;
}

void
sbx_landlock_plan_free (SbxLandlockPlan *plan)
{
  if (plan == NULL)
    return;
  for (size_t i = 0; i < plan->n_fds; i++)
    close (plan->fds[i]);
  g_free (plan->fds);
  g_free (plan->rules);
  g_free (plan->ports);
  if (plan->names != NULL)
    g_string_chunk_free (plan->names);
  g_free (plan);
}

uint32_t
sbx_landlock_plan_enforces (const SbxLandlockPlan *plan)
{
  g_return_val_if_fail (plan != NULL, 0);
  return plan->enforces;
}

int
sbx_landlock_plan_abi (const SbxLandlockPlan *plan)
{
  g_return_val_if_fail (plan != NULL, 0);
  return plan->abi;
}

uint64_t
sbx_landlock_plan_handled_access_fs (const SbxLandlockPlan *plan)
{
  g_return_val_if_fail (plan != NULL, 0);
  return plan->handled_fs;
}

uint64_t
sbx_landlock_plan_handled_access_net (const SbxLandlockPlan *plan)
{
  g_return_val_if_fail (plan != NULL, 0);
  return plan->handled_net;
}

uint64_t
sbx_landlock_plan_scoped (const SbxLandlockPlan *plan)
{
  g_return_val_if_fail (plan != NULL, 0);
  return plan->scoped;
}

size_t
sbx_landlock_plan_n_rules (const SbxLandlockPlan *plan)
{
  g_return_val_if_fail (plan != NULL, 0);
  return plan->n_rules + plan->n_ports;
}

uint64_t
sbx_landlock_plan_access_read_dir (const SbxLandlockPlan *plan)
{
  g_return_val_if_fail (plan != NULL, 0);
  return LL_READ_DIR & plan->handled_fs;
}

uint64_t
sbx_landlock_plan_access_rw_dir (const SbxLandlockPlan *plan)
{
  g_return_val_if_fail (plan != NULL, 0);
  return (LL_READ_DIR | LL_WRITE_DIR) & plan->handled_fs;
}

uint64_t
sbx_landlock_plan_access_rw_file (const SbxLandlockPlan *plan)
{
  g_return_val_if_fail (plan != NULL, 0);
  return (LL_READ_FILE | LL_WRITE_FILE | LL_DEVICE_EXTRA) & plan->handled_fs;
}

/* ------------------------------------------------------------------------- */
/* Policy entries and the ResolveFS model                                     */
/* ------------------------------------------------------------------------- */

typedef struct
{
  char     *path;
  uint32_t  allow;
  uint32_t  deny;       /* normalised: allow == deny == 0 means deny-all */
  uint32_t  origin;
  int       fd;         /* borrowed from the host (grants), or -1 */
  gboolean  exact;
  gboolean  glob;
  gboolean  optional;
  gboolean  canonical;  /* SBX_FS_RULE_CANONICAL: the core checked it; never re-resolve */
  gboolean  resolved;   /* a symlink path whose target got its own entry */
} LlEntry;

static void
ll_entry_free (gpointer p)
{
  LlEntry *e = p;

  g_free (e->path);
  g_free (e);
}

/* TRUE when @path is strictly beneath @parent (at a '/' boundary). */
static gboolean
path_under (const char *parent, const char *path)
{
  size_t n = strlen (parent);

  if (strcmp (parent, "/") == 0)
    return path[0] == '/' && path[1] != '\0';
  return strncmp (parent, path, n) == 0 && path[n] == '/' && path[n + 1] != '\0';
}

static gboolean
literal_match (const LlEntry *e, const char *path)
{
  if (strcmp (e->path, path) == 0)
    return TRUE;
  return !e->exact && path_under (e->path, path);
}

/* Glob grammar of the policy (the same as the core's
 * sbx_fs_glob_match()): "**" matches any text including '/', '*' any text
 * within one segment, '?' one character other than '/', "[...]" a class of
 * characters and ranges ('!' or '^' negates; a ']' right after the opening
 * is literal); an unclosed '[' is a literal.  Characters are code points (an
 * invalid UTF-8 byte stands for U+FFFD).  A reversed range makes the whole
 * pattern invalid. */

#define GT_LITERAL  0
#define GT_ANY      1   /* ? */
#define GT_STAR     2   /* * */
#define GT_TREE     3   /* ** */
#define GT_CLASS    4

typedef struct
{
  int       kind;
  gunichar  c;
  gboolean  negated;
  guint     first;      /* index of the class's first range pair in ranges */
  guint     n;
} GlobTok;

static gunichar *
utf8_decode (const char *text, gsize *n)
{
  gunichar *out = g_new (gunichar, strlen (text) + 1);
  gsize k = 0;

  while (*text != '\0')
    {
      gunichar c = g_utf8_get_char_validated (text, -1);

      if (c == (gunichar) -1 || c == (gunichar) -2)
        {
          out[k++] = 0xFFFD;
          text++;
        }
      else
        {
          out[k++] = c;
          text = g_utf8_next_char (text);
        }
    }
  *n = k;
  return out;
}

/* Tokens into @toks, class ranges (pairs) into @ranges; FALSE if invalid. */
static gboolean
glob_compile (const gunichar *p, gsize n, GArray *toks, GArray *ranges)
{
  for (gsize i = 0; i < n;)
    {
      GlobTok t = { GT_LITERAL, p[i], FALSE, 0, 0 };

      if (p[i] == '*' && i + 1 < n && p[i + 1] == '*')
        t.kind = GT_TREE, i += 2;
      else if (p[i] == '*')
        t.kind = GT_STAR, i++;
      else if (p[i] == '?')
        t.kind = GT_ANY, i++;
      else if (p[i] == '[')
        {
          gsize j = i + 1, body;

          if (j < n && (p[j] == '!' || p[j] == '^'))
            t.negated = TRUE, j++;
          body = j;
          if (j < n && p[j] == ']')
            j++;
          while (j < n && p[j] != ']')
            j++;
          if (j == n)
            i++;   /* unclosed: literal '[' */
          else
            {
              t.kind = GT_CLASS;
              t.first = ranges->len / 2;
              for (gsize k = body; k < j;)
                {
                  gunichar lo = p[k], hi = p[k];

                  if (k + 2 < j && p[k + 1] == '-')
                    {
                      hi = p[k + 2];
                      if (lo > hi)
                        return FALSE;
                      k += 3;
                    }
                  else
                    k++;
                  g_array_append_val (ranges, lo);
                  g_array_append_val (ranges, hi);
                }
              t.n = ranges->len / 2 - t.first;
              i = j + 1;
            }
        }
      else
        i++;
      g_array_append_val (toks, t);
    }
  return TRUE;
}

static gboolean
glob_tok_matches (const GlobTok *t, const gunichar *ranges, gunichar c)
{
  gboolean in = FALSE;

  switch (t->kind)
    {
    case GT_LITERAL:
      return c == t->c;
    case GT_ANY:
      return c != '/';
    case GT_CLASS:
      for (guint k = 0; k < t->n && !in; k++)
        in = c >= ranges[2 * (t->first + k)] && c <= ranges[2 * (t->first + k) + 1];
      return in != t->negated;
    default:
      return FALSE;
    }
}

/* Deny globs fail closed: an invalid pattern matches everything.  Linear
 * NFA simulation (state i: the first i tokens matched). */
static gboolean
deny_glob_matches (const char *pattern, const char *path)
{
  g_autoptr(GArray) toks = g_array_new (FALSE, FALSE, sizeof (GlobTok));
  g_autoptr(GArray) ranges = g_array_new (FALSE, FALSE, sizeof (gunichar));
  g_autofree gunichar *pat = NULL, *text = NULL;
  g_autofree gboolean *cur = NULL, *nxt = NULL;
  gsize n_pat, n_text;
  guint n;
  const GlobTok *t;

  pat = utf8_decode (pattern, &n_pat);
  if (!glob_compile (pat, n_pat, toks, ranges))
    return TRUE;
  t = (const GlobTok *) (void *) toks->data;
  n = toks->len;
  text = utf8_decode (path, &n_text);
  cur = g_new0 (gboolean, n + 1);
  nxt = g_new0 (gboolean, n + 1);
  cur[0] = TRUE;
  for (guint i = 0; i < n; i++)   /* stars match the empty text */
    if (cur[i] && (t[i].kind == GT_STAR || t[i].kind == GT_TREE))
      cur[i + 1] = TRUE;
  for (gsize k = 0; k < n_text; k++)
    {
      gboolean alive = FALSE;

      for (guint i = 0; i <= n; i++)
        nxt[i] = FALSE;
      for (guint i = 0; i < n; i++)
        {
          if (!cur[i])
            continue;
          if (t[i].kind == GT_TREE || (t[i].kind == GT_STAR && text[k] != '/'))
            nxt[i] = alive = TRUE;
          else if (glob_tok_matches (&t[i], (const gunichar *) (void *) ranges->data, text[k]))
            nxt[i + 1] = alive = TRUE;
        }
      if (!alive)
        return FALSE;
      for (guint i = 0; i < n; i++)
        if (nxt[i] && (t[i].kind == GT_STAR || t[i].kind == GT_TREE))
          nxt[i + 1] = TRUE;
      for (guint i = 0; i <= n; i++)
        cur[i] = nxt[i];
    }
  return cur[n];
}

static int
ll_glob_match (const char *pattern,
               const char *path,
               void       *user_data)
{
  /* deny_glob_matches() already treats a malformed pattern as matching */
  return deny_glob_matches (pattern, path) ? 1 : 0;
}

/* The policy's precedence (sbx_fs_resolve_rules() of <sbx/sbx-fs-resolve.h>,
 * the one implementation the core uses too) at @path over @entries
 * (literal) and @globs (deny only): the SBX_FS_* axes granted. */
static uint32_t
resolve_path (GPtrArray *entries, GPtrArray *globs, const char *path)
{
  g_autofree SbxFsRuleV1 *rules = g_new0 (SbxFsRuleV1, entries->len + globs->len + 1);
  guint n = 0;

  for (guint i = 0; i < entries->len; i++)
    {
      const LlEntry *e = g_ptr_array_index (entries, i);

      rules[n].struct_size = sizeof (SbxFsRuleV1);
      rules[n].flags = e->exact ? SBX_FS_RULE_EXACT : 0;
      rules[n].allow = e->allow;
      rules[n].deny = e->deny;
      rules[n].fd = -1;
      rules[n].path = e->path;
      n++;
    }
  for (guint i = 0; i < globs->len; i++)
    {
      const LlEntry *g = g_ptr_array_index (globs, i);

      rules[n].struct_size = sizeof (SbxFsRuleV1);
      rules[n].flags = SBX_FS_RULE_GLOB;
      rules[n].allow = 0;
      rules[n].deny = g->deny != 0 ? g->deny : SBX_FS_ALL;
      rules[n].fd = -1;
      rules[n].path = g->path;
      n++;
    }
  return sbx_fs_resolve_rules (rules, n, path, SBX_FS_RESOLVE_PATH, ll_glob_match, NULL);
}

/* An absolute, clean path: no empty, "." or ".." components, no trailing '/'. */
static gboolean
path_is_clean (const char *path)
{
  if (path == NULL || path[0] != '/')
    return FALSE;
  if (strcmp (path, "/") == 0)
    return TRUE;
  for (const char *c = path; *c != '\0';)
    {
      const char *next;
      size_t len;

      c++;   /* skip '/' */
      next = strchr (c, '/');
      len = next != NULL ? (size_t) (next - c) : strlen (c);
      if (len == 0 || (len == 1 && c[0] == '.') || (len == 2 && c[0] == '.' && c[1] == '.'))
        return FALSE;
      if (next == NULL)
        break;
      c = next;
    }
  return strlen (path) < PATH_MAX;
}

/* ------------------------------------------------------------------------- */
/* Builder                                                                    */
/* ------------------------------------------------------------------------- */

#define EX_TREE     1  /* denied node and its subtree: skip */
#define EX_EXACT    2  /* denied node only: do not grant it, descend if a directory */
#define EX_BARRIER  3  /* write barrier at a tree read/exec deny: skip a directory
                        * (no write inside it), a file keeps its own write */

typedef struct
{
  const char *path;
  int         kind;
} LlExclude;

typedef struct
{
  SbxLandlockPlan *plan;
  GPtrArray       *entries;       /* LlEntry (literal) */
  GPtrArray       *globs;         /* LlEntry (glob denies) */
  GArray          *rules;         /* LlRule */
  GHashTable      *rule_index;    /* "maj:min:ino" -> index + 1 */
  GHashTable      *pins;          /* path -> fd + 1 (top-level and carved dirs) */
  GArray          *fds;           /* int, owned */
  GPtrArray       *dropped;       /* char*: "path (why)" */
  GPtrArray       *gaps;          /* char*: symlinks whose target is outside the policy */
  uint32_t         carved_axes;
  gboolean         carved_write_deny;  /* a writable tree holds a nested write deny */
  gboolean         literal_deny;       /* a literal deny narrowed an allow */
} Builder;

static void
builder_clear (Builder *b)
{
  g_clear_pointer (&b->entries, g_ptr_array_unref);
  g_clear_pointer (&b->globs, g_ptr_array_unref);
  if (b->rules != NULL)
    g_array_unref (b->rules);
  g_clear_pointer (&b->rule_index, g_hash_table_unref);
  g_clear_pointer (&b->pins, g_hash_table_unref);
  if (b->fds != NULL)
    {
      for (guint i = 0; i < b->fds->len; i++)
        close (g_array_index (b->fds, int, i));
      g_array_unref (b->fds);
    }
  g_clear_pointer (&b->dropped, g_ptr_array_unref);
  g_clear_pointer (&b->gaps, g_ptr_array_unref);
  g_clear_pointer (&b->plan, sbx_landlock_plan_free);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Builder, builder_clear)

static gboolean
set_errno_error (GError **error, int saved_errno, const char *op, const char *path, const char *hint)
{
  g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
               "%s %s: %s%s%s", op, path, g_strerror (saved_errno),
               hint != NULL ? ". Hint: " : "", hint != NULL ? hint : "");
  return FALSE;
}

static void
drop (Builder *b, const char *path, const char *why)
{
  g_autofree char *item = g_strdup_printf ("%s (%s)", path, why);

  /* once per path, not once per axis */
  for (guint i = 0; i < b->dropped->len; i++)
    if (strcmp (g_ptr_array_index (b->dropped, i), item) == 0)
      return;
  g_ptr_array_add (b->dropped, g_steal_pointer (&item));
}

static int
own_fd (Builder *b, int fd)
{
  g_array_append_val (b->fds, fd);
  return fd;
}

static void
stx_of (const struct statx *stx, uint32_t *maj, uint32_t *min, uint64_t *ino, uint32_t *type)
{
  *maj = stx->stx_dev_major;
  *min = stx->stx_dev_minor;
  *ino = stx->stx_ino;
  *type = stx->stx_mode & S_IFMT;
}

/* Record @access on the inode described by @stx, reached through @fd (the
 * inode for RULE_FD, its pinned parent for RULE_NAME).  Rules on one inode are
 * merged (OR), preferring an fd-backed one. */
static void
add_rule (Builder *b, int kind, int fd, const char *name, const struct statx *stx, uint64_t access)
{
  LlRule rule = { 0 };
  g_autofree char *key = NULL;
  gpointer found;

  access &= b->plan->handled_fs;
  stx_of (stx, &rule.dev_major, &rule.dev_minor, &rule.ino, &rule.type);
  if (rule.type != S_IFDIR)
    access &= LL_FILE_RIGHTS;
  if (access == 0)
    return;

  key = g_strdup_printf ("%u:%u:%" G_GUINT64_FORMAT, rule.dev_major, rule.dev_minor, rule.ino);
  found = g_hash_table_lookup (b->rule_index, key);
  if (found != NULL)
    {
      LlRule *existing = &g_array_index (b->rules, LlRule, GPOINTER_TO_UINT (found) - 1);

      existing->access |= access;
      if (existing->kind == RULE_NAME && kind == RULE_FD)
        {
          existing->kind = RULE_FD;
          existing->fd = fd;
          existing->name = NULL;
        }
      return;
    }
  rule.access = access;
  rule.kind = kind;
  rule.fd = fd;
  rule.name = name != NULL ? g_string_chunk_insert_const (b->plan->names, name) : NULL;
  g_array_append_val (b->rules, rule);
  g_hash_table_insert (b->rule_index, g_steal_pointer (&key), GUINT_TO_POINTER (b->rules->len));
}

/* Classify an inode for an emitted rule; returns FALSE (and records why)
 * when no rule may name it. */
static gboolean
inode_ruleable (Builder *b, const char *path, const struct statx *stx, gboolean exact, gboolean top_level)
{
  switch (stx->stx_mode & S_IFMT)
    {
    case S_IFDIR:
      if (exact)
        {
          /* A rule on a directory covers its subtree: an exact directory
           * allow cannot be expressed without widening. */
          drop (b, path, "exact rule on a directory");
          return FALSE;
        }
      return TRUE;
    case S_IFREG:
      if (stx->stx_nlink != 1)
        {
          drop (b, path, "regular file with several hard links");
          return FALSE;
        }
      return TRUE;
    case S_IFCHR:
      if (!top_level)
        {
          /* devices are granted only by the policy's own entries */
          drop (b, path, "character device inside a tree");
          return FALSE;
        }
      return TRUE;
    case S_IFLNK:
      drop (b, path, "symbolic link");
      return FALSE;
    case S_IFBLK:
      drop (b, path, "block device");
      return FALSE;
    case S_IFIFO:
      drop (b, path, "FIFO");
      return FALSE;
    case S_IFSOCK:
      drop (b, path, "socket");
      return FALSE;
    default:
      drop (b, path, "unknown file type");
      return FALSE;
    }
}

static int
statx_fd (int fd, const char *name, int flags, struct statx *stx)
{
  if (statx (fd, name, flags | AT_NO_AUTOMOUNT,
             STATX_TYPE | STATX_MODE | STATX_INO | STATX_NLINK, stx) < 0)
    return -errno;
  return 0;
}

/* Pin @e's target: a dup of the host's fd, or openat2 without following any
 * symlink.  Returns the fd (owned by the builder, shared per path) or a
 * negative errno. */
static int
pin_entry (Builder *b, const LlEntry *e, struct statx *stx)
{
  g_autofree char *key = e->fd >= 0 ? g_strdup_printf ("fd:%d", e->fd) : g_strdup (e->path);
  gpointer cached = g_hash_table_lookup (b->pins, key);
  int fd, r;

  if (cached != NULL)
    fd = GPOINTER_TO_INT (cached) - 1;
  else if (e->fd >= 0)
    {
      fd = fcntl (e->fd, F_DUPFD_CLOEXEC, 3);
      if (fd < 0)
        return -errno;
      own_fd (b, fd);
      g_hash_table_insert (b->pins, g_steal_pointer (&key), GINT_TO_POINTER (fd + 1));
    }
  else
    {
      struct open_how how = {
        .flags = O_PATH | O_CLOEXEC | O_NOFOLLOW,
        .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
      };

      fd = (int) syscall (SYS_openat2, AT_FDCWD, e->path, &how, sizeof how);
      if (fd < 0)
        return -errno;
      own_fd (b, fd);
      g_hash_table_insert (b->pins, g_steal_pointer (&key), GINT_TO_POINTER (fd + 1));
    }
  r = statx_fd (fd, "", AT_EMPTY_PATH, stx);
  if (r < 0)
    return r;
  return fd;
}

/* Pin a child directory found by the enumeration; -1 when it vanished or
 * changed between the listing and now (narrow: it is skipped). */
static int
pin_child_dir (Builder *b, int parent_fd, const char *name, const char *path, const struct statx *seen)
{
  gpointer cached = g_hash_table_lookup (b->pins, path);
  struct statx now;
  int fd;

  if (cached != NULL)
    return GPOINTER_TO_INT (cached) - 1;
  fd = openat (parent_fd, name, O_PATH | O_CLOEXEC | O_NOFOLLOW | O_DIRECTORY);
  if (fd < 0)
    return -1;
  if (statx_fd (fd, "", AT_EMPTY_PATH, &now) < 0 || now.stx_ino != seen->stx_ino ||
      now.stx_dev_major != seen->stx_dev_major || now.stx_dev_minor != seen->stx_dev_minor)
    {
      close (fd);
      return -1;
    }
  own_fd (b, fd);
  g_hash_table_insert (b->pins, g_strdup (path), GINT_TO_POINTER (fd + 1));
  return fd;
}

static char *
child_path (const char *dir, const char *name)
{
  return strcmp (dir, "/") == 0 ? g_strconcat ("/", name, NULL) : g_strconcat (dir, "/", name, NULL);
}

/* Excludes strictly beneath @path. */
static GArray *
excludes_under (GArray *excludes, const char *path)
{
  GArray *nested = g_array_new (FALSE, FALSE, sizeof (LlExclude));

  for (guint i = 0; i < excludes->len; i++)
    {
      LlExclude *x = &g_array_index (excludes, LlExclude, i);

      if (path_under (path, x->path))
        g_array_append_vals (nested, x, 1);
    }
  return nested;
}

/* Sibling enumeration of the directory pinned by @dir_fd (path @dir) for
 * @axis: grant every child that holds no exclude, descend into those that
 * hold one deeper down, leave denied ones out. */
G_DEFINE_AUTOPTR_CLEANUP_FUNC (DIR, closedir)

static gboolean
carve (Builder *b, int dir_fd, const char *dir, uint32_t axis, GArray *excludes, GError **error)
{
  int list_fd;
  g_autoptr(DIR) d = NULL;
  struct dirent *de;

  list_fd = openat (dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (list_fd < 0)
    {
      int saved = errno;

      if (saved == EMFILE || saved == ENFILE || saved == ENOMEM)
        return set_errno_error (error, saved, "open for listing", dir, NULL);
      drop (b, dir, "cannot be listed for a carve-out");
      return TRUE;
    }
  d = fdopendir (list_fd);
  if (d == NULL)
    {
      int saved = errno;

      close (list_fd);
      return set_errno_error (error, saved, "fdopendir", dir, NULL);
    }

  while ((de = readdir (d)) != NULL)
    {
      g_autofree char *path = NULL;
      g_autoptr(GArray) nested = NULL;
      gboolean tree = FALSE, exact = FALSE, barrier = FALSE;
      struct statx stx;

      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
        continue;
      path = child_path (dir, de->d_name);
      for (guint i = 0; i < excludes->len; i++)
        {
          LlExclude *x = &g_array_index (excludes, LlExclude, i);

          if (strcmp (x->path, path) == 0)
            {
              tree = tree || x->kind == EX_TREE;
              exact = exact || x->kind == EX_EXACT;
              barrier = barrier || x->kind == EX_BARRIER;
            }
        }
      if (tree)
        continue;
      if (statx_fd (dir_fd, de->d_name, AT_SYMLINK_NOFOLLOW, &stx) < 0)
        continue;   /* vanished */
      if (S_ISLNK (stx.stx_mode))
        continue;   /* never followed; its target is governed by its own path */
      if (barrier && S_ISDIR (stx.stx_mode))
        continue;

      nested = excludes_under (excludes, path);
      if (exact || nested->len > 0)
        {
          int child_fd;

          if (!S_ISDIR (stx.stx_mode))
            continue;
          child_fd = pin_child_dir (b, dir_fd, de->d_name, path, &stx);
          if (child_fd < 0)
            continue;
          if (!carve (b, child_fd, path, axis, nested, error))
            return FALSE;
          continue;
        }
      if (!inode_ruleable (b, path, &stx, FALSE, FALSE))
        continue;
      add_rule (b, RULE_NAME, dir_fd, de->d_name, &stx, axis_rights (axis, stx.stx_mode & S_IFMT));
    }
  return TRUE;
}

/* Emit the rules of allow @e on @axis. */
static gboolean
emit_allow_axis (Builder *b, const LlEntry *e, uint32_t axis, GError **error)
{
  g_autoptr(GArray) excludes = g_array_new (FALSE, FALSE, sizeof (LlExclude));
  struct statx stx;
  int fd;

  for (guint i = 0; i < b->entries->len; i++)
    {
      const LlEntry *d = g_ptr_array_index (b->entries, i);
      gboolean nested = path_under (e->path, d->path);
      gboolean same = strcmp (e->path, d->path) == 0;

      if (d->deny == 0)
        continue;
      /* deny wins a tie (same path, same shape) */
      if (same && d->exact == e->exact && (d->deny & axis))
        {
          b->literal_deny = TRUE;
          return TRUE;
        }
      if (e->exact)
        continue;   /* nothing lies beneath an exact allow */
      if ((d->deny & axis) && (nested || (same && d->exact)))
        {
          LlExclude x = { d->path, d->exact ? EX_EXACT : EX_TREE };

          g_array_append_val (excludes, x);
          b->literal_deny = TRUE;
          if (axis == SBX_FS_WRITE && e->allow & SBX_FS_WRITE)
            b->carved_write_deny = TRUE;
        }
      else if (axis == SBX_FS_WRITE && (d->deny & (SBX_FS_READ | SBX_FS_EXEC)) && nested)
        {
          /* topology barrier: see the comment at the top */
          LlExclude x = { d->path, d->exact ? 0 : EX_BARRIER };

          g_array_append_val (excludes, x);
        }
    }

  fd = pin_entry (b, e, &stx);
  if (fd < 0)
    {
      switch (-fd)
        {
        case ENOENT:
          if (!e->optional)
            drop (b, e->path, "does not exist");
          return TRUE;
        case ELOOP:
        case EXDEV:
          if (!e->resolved)
            drop (b, e->path, "path runs through a symbolic link");
          return TRUE;
        case EACCES:
        case EPERM:
        case ENOTDIR:
          drop (b, e->path, g_strerror (-fd));
          return TRUE;
        default:
          return set_errno_error (error, -fd, "open", e->path, NULL);
        }
    }

  if (S_ISLNK (stx.stx_mode) && e->resolved)
    return TRUE;   /* O_PATH|O_NOFOLLOW opened the link itself; its target has its own entry */
  if (e->origin == SBX_FS_ORIGIN_DEVICE && !S_ISCHR (stx.stx_mode))
    {
      drop (b, e->path, "device entry is not a character device");
      return TRUE;
    }
  if (excludes->len == 0)
    {
      if (!inode_ruleable (b, e->path, &stx, e->exact, TRUE))
        return TRUE;
      if (S_ISCHR (stx.stx_mode) && axis == SBX_FS_EXEC)
        return TRUE;
      add_rule (b, RULE_FD, fd, NULL, &stx, axis_rights (axis, stx.stx_mode & S_IFMT));
      return TRUE;
    }

  if (!S_ISDIR (stx.stx_mode))
    return TRUE;   /* a deny at a file's own path: nothing to carve */
  b->carved_axes |= axis;
  return carve (b, fd, e->path, axis, excludes, error);
}

/* ------------------------------------------------------------------------- */
/* Symlinked policy paths                                                     */
/* ------------------------------------------------------------------------- */

/* Canonical spelling of @path: realpath() of its longest existing prefix
 * plus the rest.  NULL when nothing resolves differently. */
static char *
canonical_path (const char *path)
{
  g_autofree char *prefix = g_strdup (path);
  GString *rest = g_string_new (NULL);

  for (;;)
    {
      g_autofree char *real = realpath (prefix, NULL);
      char *slash;

      if (real != NULL)
        {
          g_autofree char *joined = NULL;

          if (rest->len == 0)
            joined = g_strdup (real);
          else
            joined = strcmp (real, "/") == 0 ? g_strdup (rest->str) : g_strconcat (real, rest->str, NULL);
          g_string_free (rest, TRUE);
          if (strcmp (joined, path) == 0)
            return NULL;
          return g_steal_pointer (&joined);
        }
      slash = strrchr (prefix, '/');
      if (slash == NULL || slash == prefix)
        break;
      g_string_prepend (rest, slash);
      *slash = '\0';
    }
  g_string_free (rest, TRUE);
  return NULL;
}

static LlEntry *
entry_copy_at (const LlEntry *e, const char *path)
{
  LlEntry *c = g_new0 (LlEntry, 1);

  *c = *e;
  c->path = g_strdup (path);
  c->fd = -1;
  c->resolved = FALSE;
  return c;
}

/* A policy path that runs through a symlink is enforced on its resolved
 * target: denies are copied there (only narrows); allows are copied for the
 * axes the policy grants at the target anyway, the rest is reported. */
static void
resolve_symlinked_entries (Builder *b)
{
  guint n = b->entries->len;
  g_autoptr(GPtrArray) pending = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) pending_entries = g_ptr_array_new ();

  for (guint i = 0; i < n; i++)
    {
      LlEntry *e = g_ptr_array_index (b->entries, i);
      char *canon;

      if (e->fd >= 0 || e->canonical)
        continue;   /* identity-checked by the core: never re-followed */
      canon = canonical_path (e->path);
      if (canon == NULL)
        continue;
      e->resolved = TRUE;
      if (e->deny != 0)
        {
          LlEntry *c = entry_copy_at (e, canon);

          c->allow = 0;
          g_ptr_array_add (b->entries, c);
        }
      if (e->allow != 0)
        {
          g_ptr_array_add (pending, canon);
          g_ptr_array_add (pending_entries, e);
        }
      else
        g_free (canon);
    }

  /* Decide every allow against the policy including the copied denies, but
   * before any copied allow exists. */
  n = b->entries->len;
  for (guint i = 0; i < pending->len; i++)
    {
      LlEntry *e = g_ptr_array_index (pending_entries, i);
      const char *target = g_ptr_array_index (pending, i);
      g_autoptr(GPtrArray) view = g_ptr_array_new ();
      uint32_t granted = 0;

      for (guint j = 0; j < n; j++)
        g_ptr_array_add (view, g_ptr_array_index (b->entries, j));
      granted = e->allow & resolve_path (view, b->globs, target);
      if (granted != e->allow)
        {
          GString *missing = g_string_new (NULL);

          for (guint k = 0; k < G_N_ELEMENTS (axes); k++)
            if ((e->allow & axes[k]) && !(granted & axes[k]))
              g_string_append_printf (missing, "%s%s", missing->len ? "," : "", axis_name (axes[k]));
          g_ptr_array_add (b->gaps, g_strdup_printf ("%s -> %s (%s not granted at the target)",
                                                     e->path, target, missing->str));
          g_string_free (missing, TRUE);
        }
      if (granted != 0)
        {
          LlEntry *c = entry_copy_at (e, target);

          c->allow = granted;
          c->deny = 0;
          g_ptr_array_add (b->entries, c);
        }
    }
}

/* ------------------------------------------------------------------------- */
/* Validation                                                                 */
/* ------------------------------------------------------------------------- */

#define KNOWN_RULE_FLAGS (SBX_FS_RULE_EXACT | SBX_FS_RULE_GLOB | SBX_FS_RULE_CANONICAL | SBX_FS_RULE_OPTIONAL)

static gboolean
load_entries (Builder *b, const SbxPolicyV1 *policy, GError **error)
{
  if (policy->n_fs_rules > 0 && policy->fs_rules == NULL)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   "policy.fs_rules: NULL with n_fs_rules = %u", policy->n_fs_rules);
      return FALSE;
    }
  for (uint32_t i = 0; i < policy->n_fs_rules; i++)
    {
      const SbxFsRuleV1 *r = &policy->fs_rules[i];
      LlEntry *e;

      /* Defense in depth: the backend must not trust the compiler's output. */
      if (r->struct_size < SBX_FS_RULE_V1_MIN_SIZE)
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                       "policy.fs_rules[%u]: struct_size %u < %zu", i, r->struct_size, sizeof (SbxFsRuleV1));
          return FALSE;
        }
      if ((r->flags & ~KNOWN_RULE_FLAGS) || (r->allow & ~SBX_FS_ALL) || (r->deny & ~SBX_FS_ALL))
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                       "policy.fs_rules[%u] (%s): unknown flag or access bits (flags 0x%x, allow 0x%x, deny 0x%x)",
                       i, r->path != NULL ? r->path : "(null)", r->flags, r->allow, r->deny);
          return FALSE;
        }
      if (r->path == NULL || r->path[0] != '/' ||
          (!(r->flags & SBX_FS_RULE_GLOB) && !path_is_clean (r->path)))
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                       "policy.fs_rules[%u].path: \"%s\" is not an absolute clean path",
                       i, r->path != NULL ? r->path : "(null)");
          return FALSE;
        }
      if ((r->flags & SBX_FS_RULE_GLOB) && r->allow != 0)
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                       "policy.fs_rules[%u] (%s): a glob rule may only deny", i, r->path);
          return FALSE;
        }
      if (r->fd >= 0 && (r->flags & SBX_FS_RULE_GLOB))
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                       "policy.fs_rules[%u] (%s): a glob rule cannot carry an fd", i, r->path);
          return FALSE;
        }

      e = g_new0 (LlEntry, 1);
      e->path = g_strdup (r->path);
      e->allow = r->allow;
      e->deny = (r->allow == 0 && r->deny == 0) ? SBX_FS_ALL : r->deny;
      e->origin = r->origin;
      e->fd = r->fd >= 0 ? r->fd : -1;
      e->exact = (r->flags & SBX_FS_RULE_EXACT) != 0;
      e->glob = (r->flags & SBX_FS_RULE_GLOB) != 0;
      e->optional = (r->flags & SBX_FS_RULE_OPTIONAL) != 0;
      e->canonical = (r->flags & SBX_FS_RULE_CANONICAL) != 0;
      if (e->glob)
        g_ptr_array_add (b->globs, e);
      else
        g_ptr_array_add (b->entries, e);
    }
  return TRUE;
}

static gboolean
plan_network (Builder *b, const SbxPolicyV1 *policy, const SbxLandlockOptions *options,
              const SbxLinuxReporter *reporter, GError **error)
{
  SbxLandlockPlan *plan = b->plan;
  const SbxNetPolicyV1 *net = policy->net;
  g_autoptr(GArray) ports = NULL;
  g_autoptr(GString) list = NULL;

  if (net == NULL || net->struct_size < SBX_NET_POLICY_V1_MIN_SIZE)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   "policy.net: missing or struct_size too small for a network plan");
      return FALSE;
    }
  switch (net->mode)
    {
    case SBX_NET_MODE_OPEN:
      return TRUE;
    case SBX_NET_MODE_PROXY:
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                   "policy.net.mode = proxy: Landlock TCP rules cannot restrict the destination address, "
                   "so the proxy port would be reachable on every host; not supported by the Landlock plan "
                   "(never widened)");
      return FALSE;
    case SBX_NET_MODE_DENY:
    case SBX_NET_MODE_PORTS:
      break;
    default:
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   "policy.net.mode: unknown value %u", net->mode);
      return FALSE;
    }

  ports = g_array_new (FALSE, FALSE, sizeof (uint64_t));
  if (net->mode == SBX_NET_MODE_PORTS)
    {
      if (net->n_tcp_ports > 0 && net->tcp_ports == NULL)
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                       "policy.net.tcp_ports: NULL with n_tcp_ports = %u", net->n_tcp_ports);
          return FALSE;
        }
      for (uint32_t i = 0; i <= net->n_tcp_ports; i++)
        {
          uint64_t port;
          gboolean seen = FALSE;

          if (i == net->n_tcp_ports)
            {
              if (!(net->flags & SBX_NET_FLAG_DNS))
                break;
              port = 53;   /* DNS over TCP (the glue forces RES_OPTIONS=use-vc) */
            }
          else
            port = net->tcp_ports[i];
          if (port == 0)
            {
              g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                           "policy.net.tcp_ports[%u]: port 0", i);
              return FALSE;
            }
          for (guint j = 0; j < ports->len; j++)
            seen = seen || g_array_index (ports, uint64_t, j) == port;
          if (!seen)
            g_array_append_val (ports, port);
        }
    }

  if (options->abi < 4)
    {
      g_autofree char *detail =
        g_strdup_printf ("Landlock ABI %d has no TCP rules (needs ABI 4, Linux 6.7); the TCP boundary "
                         "must come from elsewhere (seccomp can deny socket creation). "
                         "Hint: a newer kernel adds Landlock network rules", options->abi);

      sbx_linux_report (reporter, "network-boundary", SBX_ABI_REPORT_UNENFORCED, detail);
      return TRUE;
    }

  plan->handled_net = LANDLOCK_ACCESS_NET_BIND_TCP | LANDLOCK_ACCESS_NET_CONNECT_TCP;
  plan->n_ports = ports->len;
  plan->ports = (uint64_t *) (void *) g_array_free (g_steal_pointer (&ports), FALSE);
  plan->enforces |= SBX_LANDLOCK_ENFORCES_NET;

  list = g_string_new (NULL);
  for (size_t i = 0; i < plan->n_ports; i++)
    g_string_append_printf (list, "%s%" G_GUINT64_FORMAT, i ? "," : "", plan->ports[i]);
  if (plan->n_ports == 0)
    sbx_linux_report (reporter, "network-boundary", SBX_ABI_REPORT_ENFORCED,
                      "Landlock: every TCP connect and bind denied (UDP and other protocols are "
                      "outside Landlock: the seccomp filter handles them)");
  else
    {
      g_autofree char *detail =
        g_strdup_printf ("Landlock: TCP connect only to port(s) %s on any address, every TCP bind denied "
                         "(UDP and other protocols are outside Landlock: the seccomp filter handles them)",
                         list->str);

      sbx_linux_report (reporter, "network-boundary", SBX_ABI_REPORT_ENFORCED, detail);
    }
  return TRUE;
}

static char *
join_limited (GPtrArray *items, guint limit)
{
  GString *s = g_string_new (NULL);

  for (guint i = 0; i < items->len && i < limit; i++)
    g_string_append_printf (s, "%s%s", i ? "; " : "", (const char *) g_ptr_array_index (items, i));
  if (items->len > limit)
    g_string_append_printf (s, "; and %u more", items->len - limit);
  return g_string_free (s, FALSE);
}

SbxLandlockPlan *
sbx_landlock_plan_new (const SbxPolicyV1        *policy,
                       const SbxLandlockOptions *options,
                       const SbxLinuxReporter   *reporter,
                       GError                  **error)
{
  g_auto(Builder) b = { 0 };
  SbxLandlockPlan *plan;
  int kernel_abi;
  gboolean rung2;
  gboolean glob_read = FALSE, glob_write = FALSE;

  g_return_val_if_fail (policy != NULL, NULL);
  g_return_val_if_fail (options != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (policy->struct_size < SBX_POLICY_V1_MIN_SIZE)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   "policy: struct_size %u < %zu", policy->struct_size, sizeof (SbxPolicyV1));
      return NULL;
    }
  if (policy->flags & SBX_POLICY_UNCONFINED)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                           "policy: an Unconfined policy has no Landlock plan");
      return NULL;
    }
  if (options->rung != SBX_LANDLOCK_RUNG_USERNS && options->rung != SBX_LANDLOCK_RUNG_LANDLOCK)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   "options.rung: unknown rung %d", options->rung);
      return NULL;
    }
  kernel_abi = sbx_landlock_probe_abi ();
  if (options->abi < 1 || options->abi > kernel_abi)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                   "Landlock ABI %d requested but the kernel offers %d. Hint: Landlock needs Linux 5.13 "
                   "with CONFIG_SECURITY_LANDLOCK and \"landlock\" in the lsm= boot parameter",
                   options->abi, kernel_abi);
      return NULL;
    }
  rung2 = options->rung == SBX_LANDLOCK_RUNG_LANDLOCK;

  plan = g_new0 (SbxLandlockPlan, 1);
  plan->abi = MIN (options->abi, SBX_LANDLOCK_ABI_MAX);
  plan->rung = options->rung;
  plan->handled_fs = handled_fs_for_abi (plan->abi);
  plan->scoped = plan->abi >= 6 ? (LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | LANDLOCK_SCOPE_SIGNAL) : 0;
  plan->names = g_string_chunk_new (1024);

  b.plan = plan;
  b.entries = g_ptr_array_new_with_free_func (ll_entry_free);
  b.globs = g_ptr_array_new_with_free_func (ll_entry_free);
  b.rules = g_array_new (FALSE, FALSE, sizeof (LlRule));
  b.rule_index = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  b.pins = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  b.fds = g_array_new (FALSE, FALSE, sizeof (int));
  b.dropped = g_ptr_array_new_with_free_func (g_free);
  b.gaps = g_ptr_array_new_with_free_func (g_free);

  if (!load_entries (&b, policy, error))
    return NULL;
  resolve_symlinked_entries (&b);

  /* Rung 1: bind-mount roots cut the path walk; re-grant there. */
  if (options->mount_roots != NULL && options->rung == SBX_LANDLOCK_RUNG_USERNS)
    {
      guint n = b.entries->len;
      g_autoptr(GPtrArray) view = g_ptr_array_new ();

      for (guint j = 0; j < n; j++)
        g_ptr_array_add (view, g_ptr_array_index (b.entries, j));
      for (const char *const *m = options->mount_roots; *m != NULL; m++)
        {
          uint32_t granted = 0;
          LlEntry *c;

          if (!path_is_clean (*m))
            {
              g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                           "options.mount_roots: \"%s\" is not an absolute clean path", *m);
              return NULL;
            }
          granted = resolve_path (view, b.globs, *m);
          if (granted == 0)
            continue;
          c = g_new0 (LlEntry, 1);
          c->path = g_strdup (*m);
          c->allow = granted;
          c->fd = -1;
          c->optional = TRUE;
          g_ptr_array_add (b.entries, c);
        }
    }

  for (guint i = 0; i < b.entries->len; i++)
    {
      const LlEntry *e = g_ptr_array_index (b.entries, i);

      for (guint k = 0; k < G_N_ELEMENTS (axes); k++)
        if ((e->allow & axes[k]) && !emit_allow_axis (&b, e, axes[k], error))
          return NULL;
    }

  if (options->net && !plan_network (&b, policy, options, reporter, error))
    return NULL;

  /* Freeze the rules. */
  plan->n_rules = b.rules->len;
  plan->rules = (LlRule *) (void *) g_array_free (g_steal_pointer (&b.rules), FALSE);
  plan->n_fds = b.fds->len;
  plan->fds = (int *) (void *) g_array_free (g_steal_pointer (&b.fds), FALSE);
  plan->attr_size = plan->abi >= 6 ? 24 : plan->abi >= 4 ? 16 : 8;

  for (guint i = 0; i < b.globs->len; i++)
    {
      const LlEntry *g = g_ptr_array_index (b.globs, i);

      glob_read = glob_read || (g->deny & (SBX_FS_READ | SBX_FS_EXEC));
      glob_write = glob_write || (g->deny & SBX_FS_WRITE);
    }

  /* What the ruleset enforces.  At rung 2 glob denies are not expressible:
   * the axes they deny are not claimed. */
  if (!(rung2 && glob_read))
    plan->enforces |= SBX_LANDLOCK_ENFORCES_READ;
  if (!(rung2 && glob_write))
    plan->enforces |= plan->abi >= 3 ? SBX_LANDLOCK_ENFORCES_WRITE : SBX_LANDLOCK_ENFORCES_WRITE_EXCEPT_TRUNCATE;
  if (plan->scoped != 0)
    plan->enforces |= SBX_LANDLOCK_ENFORCES_SCOPE;

  /* The report. */
  {
    const char *layer = rung2 ? "" : " (Landlock layer under the mount view)";
    g_autofree char *abi_detail = NULL;

    if (rung2)
      {
        if (plan->abi >= 3)
          sbx_linux_report (reporter, "write-boundary", glob_write ? SBX_ABI_REPORT_UNENFORCED : SBX_ABI_REPORT_ENFORCED,
                            glob_write ? "Landlock: glob write denies cannot be expressed" : "Landlock filesystem rules");
        else
          sbx_linux_report (reporter, "write-boundary", SBX_ABI_REPORT_UNENFORCED,
                            "Landlock ABI < 3 cannot mediate truncate(2) or open(O_RDONLY|O_TRUNC); "
                            "the write boundary holds only with the seccomp truncate deny. "
                            "Hint: Linux 6.2 adds LANDLOCK_ACCESS_FS_TRUNCATE");
        sbx_linux_report (reporter, "read-boundary", glob_read ? SBX_ABI_REPORT_UNENFORCED : SBX_ABI_REPORT_ENFORCED,
                          glob_read ? "Landlock: glob read denies cannot be expressed" : "Landlock filesystem rules");
        if (b.literal_deny)
          sbx_linux_report (reporter, "fixed-path-deny", SBX_ABI_REPORT_ENFORCED,
                            "literal denies inside allowed trees enforced by sibling enumeration");
        if (b.globs->len > 0)
          sbx_linux_report (reporter, "glob-deny", SBX_ABI_REPORT_UNENFORCED,
                            "Landlock cannot express glob denies; matching paths keep the access of "
                            "their covering allow");
      }
    if (b.carved_write_deny)
      {
        g_autofree char *detail = g_strdup_printf ("a writable tree holds a nested write deny: its entries that "
                                                   "existed at executor creation stay writable, new entries "
                                                   "directly in a carved directory do not%s", layer);

        sbx_linux_report (reporter, "carveout", SBX_ABI_REPORT_NARROWED, detail);
      }
    if (b.carved_axes != 0)
      {
        GString *list = g_string_new (NULL);
        g_autofree char *detail = NULL;

        for (guint k = 0; k < G_N_ELEMENTS (axes); k++)
          if (b.carved_axes & axes[k])
            g_string_append_printf (list, "%s%s", list->len ? ", " : "", axis_name (axes[k]));
        detail = g_strdup_printf ("%s: authority of carved directories is the snapshot taken at executor "
                                  "creation%s", list->str, layer);
        g_string_free (list, TRUE);
        sbx_linux_report (reporter, "filesystem-axis-snapshot", SBX_ABI_REPORT_NARROWED, detail);
      }
    if (b.dropped->len > 0 || b.gaps->len > 0)
      {
        g_autofree char *dropped = join_limited (b.dropped, 8);
        g_autofree char *gaps = join_limited (b.gaps, 8);
        g_autofree char *detail =
          g_strdup_printf ("%s%s%s%s%s%s", b.dropped->len ? "not granted: " : "", dropped,
                           b.dropped->len && b.gaps->len ? "; " : "",
                           b.gaps->len ? "symbolic links resolved outside the policy: " : "", gaps, layer);

        sbx_linux_report (reporter, "allow-paths", SBX_ABI_REPORT_NARROWED, detail);
      }
    else
      sbx_linux_report (reporter, "allow-paths", SBX_ABI_REPORT_ENFORCED, "every allowed path has a rule");

    if (plan->scoped != 0)
      sbx_linux_report (reporter, "landlock-scoping", SBX_ABI_REPORT_ENFORCED,
                        "abstract unix sockets and signals are scoped to the sandbox");
    else
      sbx_linux_report (reporter, "landlock-scoping", SBX_ABI_REPORT_UNENFORCED,
                        "Landlock ABI < 6: abstract unix sockets and signals outside the sandbox are "
                        "reachable. Hint: Linux 6.12 adds Landlock scoping");

    abi_detail = g_strdup_printf ("%d%s: handled fs 0x%" G_GINT64_MODIFIER "x, net 0x%" G_GINT64_MODIFIER
                                  "x, scoped 0x%" G_GINT64_MODIFIER "x, %zu rules%s%s%s",
                                  plan->abi, kernel_abi > plan->abi ? " (kernel offers more)" : "",
                                  plan->handled_fs, plan->handled_net, plan->scoped,
                                  plan->n_rules + plan->n_ports,
                                  plan->abi < 2 ? "; no REFER: renames and links across directories fail (EXDEV)" : "",
                                  plan->abi < 5 ? "; device ioctls not mediated" : "",
                                  layer);
    sbx_linux_report (reporter, "landlock-abi", SBX_ABI_REPORT_ENFORCED, abi_detail);
  }

  b.plan = NULL;
  return plan;
}
