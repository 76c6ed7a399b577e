/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The policy compiler and the filesystem precedence model.
 *
 * A Sandboxed profile becomes, in this order:
 *   1. the fixed runtime closure (runtime_closure[] below, origin RUNTIME);
 *   2. the minimal devices (origin DEVICE);
 *   3. the workspace tree, 4. each additional root, 5. the host root "/":
 *      read Allow gives R|X, otherwise R|X is denied; write Allow gives W,
 *      otherwise W is denied.  Gated counts as denied until a grant arrives;
 *   6. the set's private directory (every executor's HOME, TMPDIR and
 *      state), and every other set's directory found in the same scratch
 *      root, denied whole (origin HOST; the others optional); when the
 *      sandbox can see the scratch root, the root itself denied exactly and
 *      its other entries granted again one by one (scratch_snapshot());
 *   7. the executor's isolated HOME (when the set owns it) and 8. its TMPDIR,
 *      both R|W|X trees, more specific than 6.
 * Network Allow is MODE_OPEN, anything else MODE_DENY.
 *
 * An Unconfined profile becomes "/" R|W|X plus HOME/TMPDIR, MODE_OPEN and
 * SBX_POLICY_UNCONFINED; no runtime closure is named.
 *
 * Every rule carries explicit allow and deny bits (never the implicit
 * "allow == deny == 0 means deny-all" form), fd = -1 and its origin.
 */
#include "sbx-policy-private.h"
#include "sbx-fs-resolve.h"

#include "sbx-path-private.h"

#include <glib/gstdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct _SbxPolicy
{
  SbxPolicyV1    abi;
  SbxNetPolicyV1 net;
  SbxLimitsV1    limits;
  GArray        *rules;     /* SbxFsRuleV1 */
  GPtrArray     *strings;   /* owned strings the view points into */
  GPtrArray     *host_sockets;   /* NULL-terminated, into strings: abi.host_sockets */
};

#define R   SBX_FS_READ
#define X   SBX_FS_EXEC
#define W   SBX_FS_WRITE
#define OPT SBX_FS_RULE_OPTIONAL
#define EXA SBX_FS_RULE_EXACT

/*
 * The Linux runtime closure: what an ordinary program (a shell, coreutils,
 * git, a compiler driver, python) needs to start and run when host read is
 * denied.  Extend it here — one row per path — when a real tool needs more;
 * each row says why it is there.  OPTIONAL rows may be absent on a host and
 * are skipped silently by a backend; a missing non-optional row is an error.
 *
 * The /usr tree already gives R|X to everything below it; the rows under
 * /usr are kept so that narrowing /usr later does not silently drop them.
 */
static const SbxRuntimePath runtime_closure[] = {
  /* Executables and the libraries (and ELF interpreter) they map: exec is
   * needed on libraries too, since mapping PROT_EXEC is an execute access. */
  { "/usr",               R | X, 0,         SBX_FS_ORIGIN_RUNTIME },
  { "/usr/bin",           R | X, OPT,       SBX_FS_ORIGIN_RUNTIME },
  { "/usr/sbin",          R | X, OPT,       SBX_FS_ORIGIN_RUNTIME },
  { "/usr/lib",           R | X, OPT,       SBX_FS_ORIGIN_RUNTIME },
  { "/usr/lib32",         R | X, OPT,       SBX_FS_ORIGIN_RUNTIME },
  { "/usr/lib64",         R | X, OPT,       SBX_FS_ORIGIN_RUNTIME },
  { "/usr/libx32",        R | X, OPT,       SBX_FS_ORIGIN_RUNTIME },
  { "/usr/libexec",       R | X, OPT,       SBX_FS_ORIGIN_RUNTIME },
  /* Pre-usrmerge spellings (symlinks into /usr on merged systems). */
  { "/bin",               R | X, OPT,       SBX_FS_ORIGIN_RUNTIME },
  { "/sbin",              R | X, OPT,       SBX_FS_ORIGIN_RUNTIME },
  { "/lib",               R | X, OPT,       SBX_FS_ORIGIN_RUNTIME },
  { "/lib32",             R | X, OPT,       SBX_FS_ORIGIN_RUNTIME },
  { "/lib64",             R | X, OPT,       SBX_FS_ORIGIN_RUNTIME },
  { "/libx32",            R | X, OPT,       SBX_FS_ORIGIN_RUNTIME },
  /* Locale, zoneinfo, terminfo, git templates, misc data. */
  { "/usr/share",         R,     OPT,       SBX_FS_ORIGIN_RUNTIME },
  /* Debian's alternatives symlinks (cc, awk, python, editor, ...). */
  { "/etc/alternatives",  R,     OPT,       SBX_FS_ORIGIN_RUNTIME },
  /* TLS trust anchors. */
  { "/etc/ssl/certs",     R,     OPT,       SBX_FS_ORIGIN_RUNTIME },
  /* The dynamic loader's cache. */
  { "/etc/ld.so.cache",   R,     EXA | OPT, SBX_FS_ORIGIN_RUNTIME },
  /* Name resolution (libc's NSS, getaddrinfo). */
  { "/etc/hosts",         R,     EXA | OPT, SBX_FS_ORIGIN_RUNTIME },
  { "/etc/resolv.conf",   R,     EXA | OPT, SBX_FS_ORIGIN_RUNTIME },
  { "/etc/nsswitch.conf", R,     EXA | OPT, SBX_FS_ORIGIN_RUNTIME },
  { "/etc/host.conf",     R,     EXA | OPT, SBX_FS_ORIGIN_RUNTIME },
  { "/etc/gai.conf",      R,     EXA | OPT, SBX_FS_ORIGIN_RUNTIME },
  { "/etc/services",      R,     EXA | OPT, SBX_FS_ORIGIN_RUNTIME },
  { "/etc/protocols",     R,     EXA | OPT, SBX_FS_ORIGIN_RUNTIME },
  /* Local time. */
  { "/etc/localtime",     R,     EXA | OPT, SBX_FS_ORIGIN_RUNTIME },
  /* git's system configuration: where host read is denied by Landlock alone
   * (rung 2) an unreadable existing file is EACCES, which git treats as
   * fatal, unlike the ENOENT of a mount view. */
  { "/etc/gitconfig",     R,     EXA | OPT, SBX_FS_ORIGIN_RUNTIME },
  /* Files real programs read at start-up and treat as fatal when they
   * exist but cannot be read: where the view answers a denied host path
   * EACCES (the view supervisor at rung 1, Landlock at rung 2) pip dies on
   * an unreadable /etc/debian_version (its vendored distro module), and
   * Python's locale and ssl modules, sysconfig's site customisation and
   * every os-release reader (systemd-detect-virt, pip, platform) would
   * report a denial on every start.  All are public system facts. */
  { "/etc/debian_version", R,    EXA | OPT, SBX_FS_ORIGIN_RUNTIME },
  { "/etc/os-release",    R,     EXA | OPT, SBX_FS_ORIGIN_RUNTIME },
  { "/etc/locale.alias",  R,     EXA | OPT, SBX_FS_ORIGIN_RUNTIME },
  { "/etc/ssl/openssl.cnf", R,   EXA | OPT, SBX_FS_ORIGIN_RUNTIME },
  { "/etc/python3",       R,     OPT,       SBX_FS_ORIGIN_RUNTIME },
  { "/etc/python3.11",    R,     OPT,       SBX_FS_ORIGIN_RUNTIME },
  /* Package data that programs look up by its /etc name and that bubblewrap
   * shows: each read of a denied one is a denial on every use, though the
   * program carries on.  The table of media types (media-types: Python's
   * mimetypes, mailcap users), file(1)'s local magic (libmagic1: file, and
   * Python's platform.architecture through it) and iproute2's tables of
   * names for numbers (group, rt_tables, rt_protos: `ip link` reads group on
   * every listing).  None names a user, a secret or anything of the host
   * the sandbox's own namespaces do not already show. */
  { "/etc/mime.types",    R,     EXA | OPT, SBX_FS_ORIGIN_RUNTIME },
  { "/etc/magic",         R,     EXA | OPT, SBX_FS_ORIGIN_RUNTIME },
  { "/etc/magic.mime",    R,     EXA | OPT, SBX_FS_ORIGIN_RUNTIME },
  { "/etc/iproute2",      R,     OPT,       SBX_FS_ORIGIN_RUNTIME },
  /* User and group names (id, ls -l, whoami, git). */
  { "/etc/passwd",        R,     EXA | OPT, SBX_FS_ORIGIN_RUNTIME },
  { "/etc/group",         R,     EXA | OPT, SBX_FS_ORIGIN_RUNTIME },
  /* The minimal /dev.  ">/dev/null" must work in every profile. */
  { "/dev/null",          R | W, EXA,       SBX_FS_ORIGIN_DEVICE },
  { "/dev/zero",          R | W, EXA,       SBX_FS_ORIGIN_DEVICE },
  { "/dev/full",          R | W, EXA,       SBX_FS_ORIGIN_DEVICE },
  { "/dev/random",        R | W, EXA,       SBX_FS_ORIGIN_DEVICE },
  { "/dev/urandom",       R | W, EXA,       SBX_FS_ORIGIN_DEVICE },
  { "/dev/tty",           R | W, EXA,       SBX_FS_ORIGIN_DEVICE },
};

#undef R
#undef X
#undef W
#undef OPT
#undef EXA

const SbxRuntimePath *
sbx_policy_runtime_closure (gsize *n_paths)
{
  g_return_val_if_fail (n_paths != NULL, NULL);

  *n_paths = G_N_ELEMENTS (runtime_closure);
  return runtime_closure;
}

static const char *
policy_intern (SbxPolicy  *self,
               const char *text)
{
  char *copy;

  if (text == NULL)
    return NULL;
  copy = g_strdup (text);
  g_ptr_array_add (self->strings, copy);
  return copy;
}

static void
policy_add_rule (SbxPolicy  *self,
                 const char *path,
                 guint32     flags,
                 guint32     allow,
                 guint32     deny,
                 guint32     origin)
{
  SbxFsRuleV1 rule = {
    .struct_size = sizeof (SbxFsRuleV1),
    .flags = flags,
    .allow = allow,
    .deny = deny,
    .origin = origin,
    .fd = -1,
    .path = policy_intern (self, path),
  };

  g_array_append_val (self->rules, rule);
}

/*
 * Adds runtime closure rows.  An exact-file row that is a symbolic link on
 * this host (/etc/resolv.conf -> /run/systemd/resolve/stub-resolv.conf on
 * systemd-resolved machines, /etc/localtime -> zoneinfo) also grants its
 * resolved target, with the same access, exact and optional: the row means
 * "this file must be readable", and backends never follow a symlink in a
 * policy path by themselves (Landlock rules bind inodes; a mount view binds
 * the target).  Only exact rows are resolved: a tree row that is a symlink
 * (/bin -> usr/bin) already names a target the closure covers, and widening
 * a whole tree through a symlink is not something to do implicitly.
 */
char *
sbx_policy_runtime_link_target (const char *path)
{
  GStatBuf st;
  g_autofree char *target = NULL;

  g_return_val_if_fail (path != NULL, NULL);

  if (g_lstat (path, &st) != 0 || !S_ISLNK (st.st_mode))
    return NULL;
  target = realpath (path, NULL);
  if (target == NULL || g_str_equal (target, path))
    return NULL;
  return g_steal_pointer (&target);
}

static void
policy_add_runtime_rows (SbxPolicy            *self,
                         const SbxRuntimePath *rows,
                         gsize                 n_rows)
{
  for (gsize i = 0; i < n_rows; i++)
    {
      g_autofree char *target = NULL;

      policy_add_rule (self, rows[i].path, rows[i].flags, rows[i].allow, 0, rows[i].origin);
      if ((rows[i].flags & SBX_FS_RULE_EXACT) == 0)
        continue;
      target = sbx_policy_runtime_link_target (rows[i].path);
      if (target != NULL)
        policy_add_rule (self, target, rows[i].flags | SBX_FS_RULE_OPTIONAL,
                         rows[i].allow, 0, rows[i].origin);
    }
}

/* A configured root (workspace, additional root, host "/"): Allow opens the
 * axis, Deny and Gated deny it explicitly. */
static void
policy_add_root (SbxPolicy  *self,
                 const char *path,
                 SbxAccess   read,
                 SbxAccess   write,
                 guint32     origin)
{
  guint32 allow = 0;
  guint32 deny = 0;

  if (read == SBX_ACCESS_ALLOW)
    allow |= SBX_FS_READ | SBX_FS_EXEC;
  else
    deny |= SBX_FS_READ | SBX_FS_EXEC;
  if (write == SBX_ACCESS_ALLOW)
    allow |= SBX_FS_WRITE;
  else
    deny |= SBX_FS_WRITE;
  policy_add_rule (self, path, 0, allow, deny, origin);
}

/* The access the profile part of @input gives at @path: the most specific
 * of the workspace and the additional roots that contains it, else the
 * host.  Returns the origin of the covering rule. */
static guint32
input_access_at (const SbxPolicyInput *input,
                 const char           *path,
                 SbxAccess            *read,
                 SbxAccess            *write)
{
  gsize best = 0;
  guint32 origin = SBX_FS_ORIGIN_HOST;

  *read = input->host_read;
  *write = input->host_write;
  if (sbx_path_within (path, input->workspace))
    {
      best = strlen (input->workspace);
      *read = input->workspace_read;
      *write = input->workspace_write;
      origin = SBX_FS_ORIGIN_WORKSPACE;
    }
  for (guint i = 0; i < input->n_roots; i++)
    {
      gsize len = strlen (input->roots[i].path);

      if (len > best && sbx_path_within (path, input->roots[i].path))
        {
          best = len;
          *read = input->roots[i].read;
          *write = input->roots[i].write;
          origin = SBX_FS_ORIGIN_ROOT;
        }
    }
  return origin;
}

/*
 * The scratch snapshot.  Denying the set directories that
 * exist when the executor is created is not enough when the sandbox may see
 * the scratch root: a set created later appears in it (a bind mount shows
 * the live directory).  So a visible scratch root is denied as a tree
 * (nothing can be created directly in it) and each entry listed at
 * creation, set directories excepted, gets the access that covers it again,
 * as a more specific optional tree rule.  Entries created later directly in
 * the scratch root are denied by the policy itself, on every backend.  Not done for the
 * host's socket directories (/tmp, /run, /var/run) when only host access
 * covers them: backends hide those already unless a root names them.
 */
static void
scratch_snapshot (SbxPolicy            *self,
                  const SbxPolicyInput *input,
                  const SbxPolicyDirs  *dirs)
{
  static const char *const socket_dirs[] = { "/tmp", "/run", "/var/run" };
  SbxAccess read, write;
  guint32 origin;

  if (dirs->scratch_root == NULL)
    return;
  origin = input_access_at (input, dirs->scratch_root, &read, &write);
  if (read != SBX_ACCESS_ALLOW && write != SBX_ACCESS_ALLOW)
    return;   /* the sandbox cannot see the scratch root at all */
  if (origin == SBX_FS_ORIGIN_HOST)
    for (guint i = 0; i < G_N_ELEMENTS (socket_dirs); i++)
      if (g_str_equal (dirs->scratch_root, socket_dirs[i]))
        return;
  policy_add_rule (self, dirs->scratch_root, 0, 0, SBX_FS_ALL, origin);
  for (guint i = 0; dirs->scratch_entries != NULL && dirs->scratch_entries[i] != NULL; i++)
    {
      const char *entry = dirs->scratch_entries[i];
      guint32 allow = 0;

      origin = input_access_at (input, entry, &read, &write);
      if (read == SBX_ACCESS_ALLOW)
        allow |= SBX_FS_READ | SBX_FS_EXEC;
      if (write == SBX_ACCESS_ALLOW)
        allow |= SBX_FS_WRITE;
      if (allow == 0)
        continue;
      policy_add_rule (self, entry, SBX_FS_RULE_OPTIONAL, allow, SBX_FS_ALL & ~allow, origin);
    }
}

/**
 * sbx_policy_new:
 * @input: what the profile says
 * @dirs: the executor's HOME, TMPDIR and backend state directory
 *
 * Compiles the effective policy.  Cannot fail: the input is validated by the
 * profile already.
 *
 * Returns: (transfer full): the policy
 */
SbxPolicy *
sbx_policy_new (const SbxPolicyInput *input,
                const SbxPolicyDirs  *dirs)
{
  g_autoptr(SbxPolicy) self = NULL;
  gboolean unconfined;

  g_return_val_if_fail (input != NULL, NULL);
  g_return_val_if_fail (input->workspace != NULL, NULL);
  g_return_val_if_fail (dirs != NULL, NULL);
  g_return_val_if_fail (dirs->home != NULL && dirs->tmpdir != NULL, NULL);
  g_return_val_if_fail (input->n_roots == 0 || input->roots != NULL, NULL);

  unconfined = input->isolation == SBX_ISOLATION_UNCONFINED;
  self = g_new0 (SbxPolicy, 1);
  self->rules = g_array_new (FALSE, TRUE, sizeof (SbxFsRuleV1));
  self->strings = g_ptr_array_new_with_free_func (g_free);

  if (unconfined)
    {
      policy_add_rule (self, "/", 0, SBX_FS_ALL, 0, SBX_FS_ORIGIN_HOST);
    }
  else
    {
      policy_add_runtime_rows (self, runtime_closure, G_N_ELEMENTS (runtime_closure));
      policy_add_root (self, input->workspace, input->workspace_read,
                       input->workspace_write, SBX_FS_ORIGIN_WORKSPACE);
      for (guint i = 0; i < input->n_roots; i++)
        policy_add_root (self, input->roots[i].path, input->roots[i].read,
                         input->roots[i].write, SBX_FS_ORIGIN_ROOT);
      policy_add_root (self, "/", input->host_read, input->host_write,
                       SBX_FS_ORIGIN_HOST);
      /* Sibling executors' HOME/TMPDIR are never part of "the host" this
       * profile may see. */
      if (dirs->set_dir != NULL)
        policy_add_rule (self, dirs->set_dir, 0, 0, SBX_FS_ALL, SBX_FS_ORIGIN_HOST);
      /* Nor are other sets' (other runs, other processes, other users):
       * a workspace that contains the scratch root (a workspace of /tmp)
       * would otherwise expose their HOME and TMPDIR. */
      for (guint i = 0; dirs->other_set_dirs != NULL && dirs->other_set_dirs[i] != NULL; i++)
        policy_add_rule (self, dirs->other_set_dirs[i], SBX_FS_RULE_OPTIONAL, 0, SBX_FS_ALL, SBX_FS_ORIGIN_HOST);
      /* And sets created later: the scratch root is a snapshot. */
      scratch_snapshot (self, input, dirs);
    }
  if (dirs->home_owned)
    policy_add_rule (self, dirs->home, 0, SBX_FS_ALL, 0, SBX_FS_ORIGIN_HOME);
  policy_add_rule (self, dirs->tmpdir, 0, SBX_FS_ALL, 0, SBX_FS_ORIGIN_TMPDIR);

  self->net.struct_size = sizeof (SbxNetPolicyV1);
  self->net.mode = (unconfined || input->network == SBX_ACCESS_ALLOW)
                   ? SBX_NET_MODE_OPEN : SBX_NET_MODE_DENY;
  self->net.proxy_port = 0;
  if (dirs->proxy_port != 0 && !unconfined && input->network != SBX_ACCESS_DENY)
    {
      /* A route: every path out goes through the proxy in the sandbox. */
      self->net.mode = SBX_NET_MODE_PROXY;
      self->net.proxy_port = dirs->proxy_port;
    }

  self->limits.struct_size = sizeof (SbxLimitsV1);
  self->limits.max_processes = input->max_processes;
  self->limits.max_memory_bytes = input->max_memory_bytes;
  self->limits.max_open_files = input->max_open_files;

  self->abi.struct_size = sizeof (SbxPolicyV1);
  self->abi.flags = (unconfined ? SBX_POLICY_UNCONFINED : 0)
                    | (input->unix_sockets ? SBX_POLICY_UNIX_SOCKETS : 0)
                    | (input->denied_paths == SBX_DENIED_PATHS_NOT_FOUND ? SBX_POLICY_DENIED_NOT_FOUND : 0);
  self->abi.required_guarantees = (guint64) input->required;
  self->abi.fs_rules = (const SbxFsRuleV1 *) (void *) self->rules->data;
  self->abi.n_fs_rules = self->rules->len;
  self->abi.net = &self->net;
  self->abi.limits = &self->limits;
  self->abi.workspace = policy_intern (self, input->workspace);
  self->abi.home = policy_intern (self, dirs->home);
  self->abi.tmpdir = policy_intern (self, dirs->tmpdir);
  self->abi.state_dir = policy_intern (self, dirs->state_dir);
  self->host_sockets = g_ptr_array_new ();
  for (guint i = 0; input->host_sockets != NULL && input->host_sockets[i] != NULL; i++)
    g_ptr_array_add (self->host_sockets, (gpointer) policy_intern (self, input->host_sockets[i]));
  g_ptr_array_add (self->host_sockets, NULL);
  self->abi.host_sockets = (const char * const *) self->host_sockets->pdata;

  return g_steal_pointer (&self);
}

/**
 * sbx_policy_new_for_profile:
 * @profile: a valid profile
 * @dirs: the executor's directories
 *
 * Reads @profile through its public getters and compiles it.
 *
 * Returns: (transfer full): the policy
 */
SbxPolicy *
sbx_policy_new_for_profile (SbxProfile          *profile,
                            const SbxPolicyDirs *dirs)
{
  guint n_roots;
  g_autofree SbxPolicyRoot *roots = NULL;
  SbxPolicyInput input = { 0 };

  g_return_val_if_fail (profile != NULL, NULL);

  n_roots = sbx_profile_get_n_roots (profile);
  roots = g_new0 (SbxPolicyRoot, MAX (n_roots, 1));
  for (guint i = 0; i < n_roots; i++)
    {
      roots[i].path = sbx_profile_get_root_path (profile, i);
      roots[i].read = sbx_profile_get_root_read (profile, i);
      roots[i].write = sbx_profile_get_root_write (profile, i);
    }

  input.workspace = sbx_profile_get_workspace_root (profile);
  input.workspace_read = sbx_profile_get_workspace_read (profile);
  input.workspace_write = sbx_profile_get_workspace_write (profile);
  input.host_read = sbx_profile_get_host_read (profile);
  input.host_write = sbx_profile_get_host_write (profile);
  input.network = sbx_profile_get_network (profile);
  input.isolation = sbx_profile_get_isolation (profile);
  input.required = sbx_profile_get_required_guarantees (profile);
  input.roots = roots;
  input.n_roots = n_roots;
  input.max_processes = sbx_profile_get_max_processes (profile);
  input.max_memory_bytes = sbx_profile_get_max_memory (profile);
  input.max_open_files = sbx_profile_get_max_open_files (profile);
  input.unix_sockets = sbx_profile_get_unix_sockets (profile);
  input.denied_paths = sbx_profile_get_denied_paths (profile);
  input.host_sockets = sbx_profile_get_host_sockets (profile);

  return sbx_policy_new (&input, dirs);
}

void
sbx_policy_free (SbxPolicy *self)
{
  if (self == NULL)
    return;
  g_array_unref (self->rules);
  g_clear_pointer (&self->host_sockets, g_ptr_array_unref);
  g_ptr_array_unref (self->strings);
  g_free (self);
}

const SbxPolicyV1 *
sbx_policy_get_abi (SbxPolicy *self)
{
  g_return_val_if_fail (self != NULL, NULL);

  return &self->abi;
}

/* ------------------------------------------------------------------------- */
/* Filesystem precedence (ResolveFS)                                          */
/* ------------------------------------------------------------------------- */

typedef enum
{
  GLOB_LITERAL,
  GLOB_STAR,       /* "*": any text within one segment */
  GLOB_TREE_STAR,  /* "**": any text */
  GLOB_QUESTION,   /* "?": one character other than '/' */
  GLOB_CLASS,      /* "[...]" */
} GlobKind;

typedef struct
{
  gunichar first;
  gunichar last;
} GlobRange;

typedef struct
{
  GlobKind  kind;
  gunichar  literal;
  gboolean  negated;
  guint     first_range;  /* index into the range array */
  guint     n_ranges;
} GlobToken;

/* Decodes one code point; an invalid byte stands for U+FFFD and consumes one
 * byte (as Go's []rune conversion does). */
static gunichar
next_char (const char **p)
{
  gunichar c = g_utf8_get_char_validated (*p, -1);

  if (c == (gunichar) -1 || c == (gunichar) -2)
    {
      (*p)++;
      return 0xFFFD;
    }
  *p = g_utf8_next_char (*p);
  return c;
}

static gunichar *
decode (const char *text,
        gsize      *out_len)
{
  gsize cap = strlen (text) + 1;
  gunichar *chars = g_new (gunichar, cap);
  gsize n = 0;
  const char *p = text;

  while (*p != '\0')
    chars[n++] = next_char (&p);
  *out_len = n;
  return chars;
}

/* Tokenizes @pattern.  Returns FALSE for a malformed pattern. */
static gboolean
glob_parse (const gunichar *pat,
            gsize           n,
            GArray         *tokens,
            GArray         *ranges)
{
  gsize i = 0;

  while (i < n)
    {
      GlobToken token = { .kind = GLOB_LITERAL, .literal = pat[i] };

      if (pat[i] == '*')
        {
          if (i + 1 < n && pat[i + 1] == '*')
            {
              token.kind = GLOB_TREE_STAR;
              i += 2;
            }
          else
            {
              token.kind = GLOB_STAR;
              i++;
            }
        }
      else if (pat[i] == '?')
        {
          token.kind = GLOB_QUESTION;
          i++;
        }
      else if (pat[i] == '[')
        {
          gsize j = i + 1;
          gsize body;
          gboolean negated = FALSE;

          if (j < n && (pat[j] == '!' || pat[j] == '^'))
            {
              negated = TRUE;
              j++;
            }
          body = j;
          if (j < n && pat[j] == ']')
            j++;
          while (j < n && pat[j] != ']')
            j++;
          if (j == n)
            {
              /* Unclosed: a literal '['. */
              i++;
            }
          else
            {
              token.kind = GLOB_CLASS;
              token.negated = negated;
              token.first_range = ranges->len;
              for (gsize k = body; k < j;)
                {
                  GlobRange range;

                  if (k + 2 < j && pat[k + 1] == '-')
                    {
                      if (pat[k] > pat[k + 2])
                        return FALSE;
                      range.first = pat[k];
                      range.last = pat[k + 2];
                      k += 3;
                    }
                  else
                    {
                      range.first = range.last = pat[k];
                      k++;
                    }
                  g_array_append_val (ranges, range);
                }
              token.n_ranges = ranges->len - token.first_range;
              i = j + 1;
            }
        }
      else
        {
          i++;
        }
      g_array_append_val (tokens, token);
    }
  return TRUE;
}

static gboolean
glob_token_matches (const GlobToken *token,
                    const GlobRange *ranges,
                    gunichar         c)
{
  switch (token->kind)
    {
    case GLOB_LITERAL:
      return c == token->literal;
    case GLOB_QUESTION:
      return c != '/';
    case GLOB_CLASS:
      {
        gboolean in = FALSE;

        for (guint k = 0; k < token->n_ranges && !in; k++)
          in = c >= ranges[token->first_range + k].first
               && c <= ranges[token->first_range + k].last;
        return in != token->negated;
      }
    case GLOB_STAR:
    case GLOB_TREE_STAR:
    default:
      return FALSE;
    }
}

/* Marks every state reachable from the active ones without input: a star
 * may match the empty text. */
static void
glob_closure (const GlobToken *tokens,
              guint            n_tokens,
              gboolean        *states)
{
  for (guint i = 0; i < n_tokens; i++)
    if (states[i] && (tokens[i].kind == GLOB_STAR || tokens[i].kind == GLOB_TREE_STAR))
      states[i + 1] = TRUE;
}

gboolean
sbx_fs_glob_match (const char *pattern,
                   const char *path,
                   gboolean   *out_valid)
{
  g_autoptr(GArray) tokens = g_array_new (FALSE, TRUE, sizeof (GlobToken));
  g_autoptr(GArray) ranges = g_array_new (FALSE, TRUE, sizeof (GlobRange));
  g_autofree gunichar *pat = NULL;
  g_autofree gunichar *text = NULL;
  g_autofree gboolean *states = NULL;
  g_autofree gboolean *next = NULL;
  gsize n_pat;
  gsize n_text;
  guint n_tokens;
  const GlobToken *tok;
  const GlobRange *rng;

  g_return_val_if_fail (pattern != NULL && path != NULL, FALSE);

  pat = decode (pattern, &n_pat);
  if (!glob_parse (pat, n_pat, tokens, ranges))
    {
      if (out_valid != NULL)
        *out_valid = FALSE;
      return FALSE;
    }
  if (out_valid != NULL)
    *out_valid = TRUE;

  /* A linear-time NFA simulation: state i means "tokens[0..i) matched". */
  tok = (const GlobToken *) (void *) tokens->data;
  rng = (const GlobRange *) (void *) ranges->data;
  n_tokens = tokens->len;
  text = decode (path, &n_text);
  states = g_new0 (gboolean, n_tokens + 1);
  next = g_new0 (gboolean, n_tokens + 1);
  states[0] = TRUE;
  glob_closure (tok, n_tokens, states);

  for (gsize k = 0; k < n_text; k++)
    {
      gboolean any = FALSE;

      memset (next, 0, sizeof (gboolean) * (n_tokens + 1));
      for (guint i = 0; i < n_tokens; i++)
        {
          if (!states[i])
            continue;
          if (tok[i].kind == GLOB_TREE_STAR
              || (tok[i].kind == GLOB_STAR && text[k] != '/'))
            next[i] = any = TRUE;
          else if (glob_token_matches (&tok[i], rng, text[k]))
            next[i + 1] = any = TRUE;
        }
      if (!any)
        return FALSE;
      glob_closure (tok, n_tokens, next);
      memcpy (states, next, sizeof (gboolean) * (n_tokens + 1));
    }
  return states[n_tokens];
}

static int
policy_glob_match (const char *pattern,
                   const char *path,
                   void       *user_data)
{
  gboolean valid = TRUE;
  gboolean matched = sbx_fs_glob_match (pattern, path, &valid);

  return valid ? (matched ? 1 : 0) : -1;
}

static gboolean
literal_paths_unclean (const SbxFsRuleV1 *rules,
                       gsize              n_rules)
{
  for (gsize i = 0; i < n_rules; i++)
    if ((rules[i].flags & SBX_FS_RULE_GLOB) == 0 && rules[i].path != NULL)
      {
        g_autofree char *clean = sbx_path_clean (rules[i].path);

        if (!g_str_equal (clean, rules[i].path))
          return TRUE;
      }
  return FALSE;
}

/* The one implementation of the precedence model (<sbx/sbx-fs-resolve.h>,
 * installed for plugins), with the core's glob matcher. */
guint32
sbx_fs_resolve (const SbxFsRuleV1 *rules,
                gsize              n_rules,
                const char        *path)
{
  g_autofree char *target = NULL;

  g_return_val_if_fail (n_rules == 0 || rules != NULL, 0);
  g_return_val_if_fail (path != NULL, 0);

  target = sbx_path_clean (path);
  /* The shared model expects clean rule paths (the ABI promises them to
   * plugins); this entry point also serves as the reference model for rules
   * written by hand, so literal paths that are not clean are cleaned in a
   * copy first. */
  if (literal_paths_unclean (rules, n_rules))
    {
      g_autofree SbxFsRuleV1 *copy = g_memdup2 (rules, n_rules * sizeof *rules);
      g_autoptr(GPtrArray) paths = g_ptr_array_new_with_free_func (g_free);

      for (gsize i = 0; i < n_rules; i++)
        if ((copy[i].flags & SBX_FS_RULE_GLOB) == 0 && copy[i].path != NULL)
          {
            copy[i].path = sbx_path_clean (copy[i].path);
            g_ptr_array_add (paths, (char *) copy[i].path);
          }
      return sbx_fs_resolve_rules (copy, n_rules, target, SBX_FS_RESOLVE_PATH, policy_glob_match, NULL);
    }
  return sbx_fs_resolve_rules (rules, n_rules, target, SBX_FS_RESOLVE_PATH, policy_glob_match, NULL);
}
