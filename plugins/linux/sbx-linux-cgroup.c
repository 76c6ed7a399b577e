/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One cgroup per sandbox: sandbox-wide process and memory limits that hold
 * for root too (uid 0 is exempt from RLIMIT_NPROC, and rlimits are per
 * process anyway).  See sbx-linux-cgroup.h for the shape; the rules:
 *
 *  - Measured, never assumed: a mechanism is used only when its files are
 *    there and writable, every limit is read back after it is written, and
 *    a failure at spawn fails the spawn (the spec claimed the limit).
 *  - A joins before the target starts: the supervisor opens each
 *    join file (join_file: v1 "tasks", v2 "cgroup.procs") and A writes "0"
 *    into them first thing
 *    (sbx-linux-cgroup-child.h), so nothing of the sandbox ever runs
 *    outside.  This works the same on v1 and v2 and for both clone paths
 *    (direct and through the zygote), where CLONE_INTO_CGROUP would need
 *    clone3 on each and does not exist on v1.
 *  - Teardown proves emptiness: cgroup.kill (v2), or freeze and SIGKILL
 *    everything listed until a successful read of cgroup.procs is empty; a
 *    read error is never taken for empty.
 *  - Nothing is left: the directories are removed by destroy(), and those
 *    of dead supervisors by the next compile (reap_stale).
 *
 * LOCKING: the process-wide base is made once under base_lock; a base is
 * immutable afterwards except @seq (atomic).  SbxCgroup objects belong to
 * one spawn and are never shared.
 *
 * This file is over a thousand lines (about 1,200): the host discovery, the
 * base, the per-sandbox cgroups and the reaping of leftovers are four stages
 * of one lifecycle, and all four go through the file helpers below (read,
 * write and read back, the fake-populate seam the tests use), which are the
 * rules "measured, never assumed" and "a read error is never empty" in code.
 * Splitting the stages would publish those helpers to every file; the seam,
 * if one is wanted, is "The host" (it only reads) against the rest.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <gio/gio.h>

#include "sbx-linux-cgroup.h"

#define SUPERVISOR_LEAF "sbx-supervisor"
#define PIDS_MAX_LIMIT  4194304u   /* the kernel's PID_MAX_LIMIT on 64-bit */
#define EMPTY_WAIT_MS   3000
#define SCOPE_TIMEOUT_MS 10000

/* ------------------------------------------------------------------------- */
/* Files                                                                      */
/* ------------------------------------------------------------------------- */

/* The contents of @path, stripped; NULL with errno set. */
static char *
read_text (const char *path)
{
  g_autoptr(GError) error = NULL;
  char *contents = NULL;

  if (!g_file_get_contents (path, &contents, NULL, &error))
    {
      errno = error->domain == G_FILE_ERROR && error->code == G_FILE_ERROR_NOENT ? ENOENT : EIO;
      if (error->domain == G_FILE_ERROR && error->code == G_FILE_ERROR_ACCES)
        errno = EACCES;
      return NULL;
    }
  return g_strstrip (contents);
}

/* One write(2) of @text to the existing file @path (cgroup interface files
 * take a value per write; O_TRUNC as a shell's ">" does, which cgroupfs
 * ignores and a fake tree needs).  0 or an errno value. */
static int
write_text (const char *path,
            const char *text)
{
  size_t len = strlen (text);
  ssize_t n;
  int fd, saved;

  fd = open (path, O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (fd < 0)
    return errno;
  do
    n = write (fd, text, len);
  while (n < 0 && errno == EINTR);
  saved = n < 0 ? errno : (size_t) n != len ? EIO : 0;
  close (fd);
  return saved;
}

static gboolean
write_text_error (const char  *dir,
                  const char  *file,
                  const char  *text,
                  GError     **error)
{
  g_autofree char *path = g_build_filename (dir, file, NULL);
  int err = write_text (path, text);

  if (err != 0)
    {
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (err),
                   "cgroup: writing '%s' to %s: %s", text, path, g_strerror (err));
      return FALSE;
    }
  return TRUE;
}

/* Does the whitespace-separated list @list contain @word (a leading '+' on
 * the list's items ignored)? */
static gboolean
list_has (const char *list,
          const char *word)
{
  g_auto(GStrv) items = NULL;

  if (list == NULL)
    return FALSE;
  items = g_strsplit_set (list, " \t\n", -1);
  for (gsize i = 0; items[i] != NULL; i++)
    if (strcmp (items[i][0] == '+' ? items[i] + 1 : items[i], word) == 0)
      return TRUE;
  return FALSE;
}

static gboolean
file_has (const char *dir,
          const char *file,
          const char *word)
{
  g_autofree char *path = g_build_filename (dir, file, NULL);
  g_autofree char *text = read_text (path);

  return list_has (text, word);
}

static gboolean
exists_in (const char *dir,
           const char *file)
{
  g_autofree char *path = g_build_filename (dir, file, NULL);

  return access (path, F_OK) == 0;
}

/* With a fake tree (tests), a new directory gets the interface files the
 * kernel would create in it. */
static void
fake_populate (const char        *dir,
               const char *const *files)
{
  for (gsize i = 0; files[i] != NULL; i++)
    {
      g_autofree char *path = g_build_filename (dir, files[i], NULL);

      g_file_set_contents (path, strcmp (files[i], "pids.max") == 0 ? "max\n" : "", -1, NULL);
    }
}

static void
fake_depopulate (const char *dir)
{
  g_autoptr(GDir) d = g_dir_open (dir, 0, NULL);
  const char *name;

  while (d != NULL && (name = g_dir_read_name (d)) != NULL)
    {
      g_autofree char *path = g_build_filename (dir, name, NULL);

      unlink (path);
    }
}

/* ------------------------------------------------------------------------- */
/* The host                                                                   */
/* ------------------------------------------------------------------------- */

/* Unescapes the octal escapes of /proc/self/mounts (\040 for a space). */
static char *
mounts_unescape (const char *s)
{
  GString *out = g_string_new (NULL);

  for (; *s != '\0'; s++)
    {
      if (s[0] == '\\' && g_ascii_isdigit (s[1]) && g_ascii_isdigit (s[2]) && g_ascii_isdigit (s[3]))
        {
          g_string_append_c (out, (char) (((s[1] - '0') << 6) | ((s[2] - '0') << 3) | (s[3] - '0')));
          s += 3;
        }
      else
        g_string_append_c (out, *s);
    }
  return g_string_free (out, FALSE);
}

/* Our relative path in the hierarchy whose /proc/self/cgroup line has
 * controllers @controllers ("" for v2's "0::"), NULL when absent. */
static char *
self_cgroup_rel (const char *self_cgroup,
                 const char *controller,
                 gboolean    v2)
{
  g_autofree char *text = read_text (self_cgroup);
  g_auto(GStrv) lines = NULL;

  if (text == NULL)
    return NULL;
  lines = g_strsplit (text, "\n", -1);
  for (gsize i = 0; lines[i] != NULL; i++)
    {
      g_auto(GStrv) f = g_strsplit (lines[i], ":", 3);

      if (g_strv_length (f) != 3)
        continue;
      if (v2 && strcmp (f[0], "0") == 0 && f[1][0] == '\0')
        return g_strdup (f[2]);
      if (!v2 && f[1][0] != '\0')
        {
          g_auto(GStrv) ctrls = g_strsplit (f[1], ",", -1);

          for (gsize k = 0; ctrls[k] != NULL; k++)
            if (strcmp (ctrls[k], controller) == 0)
              return g_strdup (f[2]);
        }
    }
  return NULL;
}

static char *
join_rel (const char *mount,
          const char *rel)
{
  if (rel == NULL || strcmp (rel, "/") == 0 || rel[0] == '\0')
    return g_strdup (mount);
  /* A cgroup path of another cgroup namespace shows as "/.." prefixes: not
   * ours to use. */
  if (strstr (rel, "/..") != NULL)
    return NULL;
  return g_build_filename (mount, rel, NULL);
}

/* TRUE when this process is in the initial user namespace (its uid map is
 * the identity over the whole range). */
static gboolean
in_initial_userns (void)
{
  g_autofree char *map = read_text ("/proc/self/uid_map");
  guint64 inside = 1, outside = 1, count = 0;

  return map != NULL
         && sscanf (map, "%" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT,
                    &inside, &outside, &count) == 3
         && inside == 0 && outside == 0 && count == G_GUINT64_CONSTANT (4294967295)
         && strchr (map, '\n') == NULL;   /* read_text strips: one line */
}

/* Whether this process may create cgroups in @dir and move processes into
 * them.  Asked of the kernel (access(2)) for root too: a uid 0 that is not
 * the host's (sbx run inside a user namespace: a Flatpak app, a program sbx
 * itself runs, unshare -r) has no capability over the host's cgroup files,
 * whose owner its namespace does not map.  A fake tree decides "as root" by
 * existence alone (its files belong to the test's user). */
static gboolean
dir_writable (const SbxCgroupHost *host,
              const char          *dir)
{
  g_autofree char *procs = g_build_filename (dir, "cgroup.procs", NULL);

  if (host->paths.fake_fs && host->root)
    return access (dir, F_OK) == 0;
  return access (dir, W_OK) == 0 && access (procs, W_OK) == 0;
}

static void
host_read_v2 (SbxCgroupHost *host)
{
  g_autofree char *rel = NULL;

  if (host->v2_mount == NULL)
    return;
  rel = self_cgroup_rel (host->paths.self_cgroup, NULL, TRUE);
  g_clear_pointer (&host->v2_dir, g_free);
  host->v2_dir = rel != NULL ? join_rel (host->v2_mount, rel) : NULL;
  host->v2_pids = host->v2_memory = host->v2_enabled = host->v2_writable = FALSE;
  if (host->v2_dir == NULL)
    return;
  host->v2_pids = file_has (host->v2_dir, "cgroup.controllers", "pids");
  host->v2_memory = file_has (host->v2_dir, "cgroup.controllers", "memory");
  host->v2_enabled = file_has (host->v2_dir, "cgroup.subtree_control", "pids")
                     && file_has (host->v2_dir, "cgroup.subtree_control", "memory");
  host->v2_writable = dir_writable (host, host->v2_dir);
}

static char *
user_bus_address (void)
{
  const char *env = g_getenv ("DBUS_SESSION_BUS_ADDRESS");
  const char *runtime = g_getenv ("XDG_RUNTIME_DIR");
  g_autofree char *path = NULL;

  if (env != NULL && env[0] != '\0')
    return g_strdup (env);
  if (runtime == NULL || runtime[0] != '/')
    return NULL;
  path = g_build_filename (runtime, "bus", NULL);
  if (access (path, F_OK) != 0)
    return NULL;
  return g_strdup_printf ("unix:path=%s", path);
}

SbxCgroupHost *
sbx_cgroup_host_new (const SbxCgroupPaths *paths)
{
  SbxCgroupHost *host = g_new0 (SbxCgroupHost, 1);
  g_autofree char *mounts = NULL;
  g_auto(GStrv) lines = NULL;

  host->paths.mounts = g_strdup (paths != NULL && paths->mounts != NULL ? paths->mounts
                                                                        : "/proc/self/mounts");
  host->paths.self_cgroup = g_strdup (paths != NULL && paths->self_cgroup != NULL ? paths->self_cgroup
                                                                                  : "/proc/self/cgroup");
  host->paths.fake_fs = paths != NULL && paths->fake_fs;
  host->paths.as_root = paths != NULL && paths->fake_fs && paths->as_root;
  /* Root for cgroups is the host's root: a uid 0 in another user namespace
   * takes the unprivileged paths (a delegated subtree, a user scope). */
  host->root = host->paths.fake_fs ? host->paths.as_root : geteuid () == 0 && in_initial_userns ();
  if (paths != NULL && paths->bus_address != NULL)
    host->bus_address = g_strdup (paths->bus_address);
  else if (paths == NULL || !paths->fake_fs)
    host->bus_address = user_bus_address ();
  host->paths.bus_address = host->bus_address;

  mounts = read_text (host->paths.mounts);
  lines = g_strsplit (mounts != NULL ? mounts : "", "\n", -1);
  for (gsize i = 0; lines[i] != NULL; i++)
    {
      g_auto(GStrv) f = g_strsplit (lines[i], " ", -1);
      g_autofree char *rel = NULL;

      if (g_strv_length (f) < 4)
        continue;
      if (strcmp (f[2], "cgroup2") == 0 && host->v2_mount == NULL)
        host->v2_mount = mounts_unescape (f[1]);
      else if (strcmp (f[2], "cgroup") == 0)
        {
          static const char *const wanted[] = { "pids", "memory", "freezer" };
          g_autofree char *options = g_strdelimit (g_strdup (f[3]), ",", ' ');

          for (gsize k = 0; k < G_N_ELEMENTS (wanted); k++)
            {
              char **slot = k == 0 ? &host->v1_pids : k == 1 ? &host->v1_memory : &host->v1_freezer;
              g_autofree char *mnt = NULL;

              if (*slot != NULL || !list_has (options, wanted[k]))
                continue;
              rel = self_cgroup_rel (host->paths.self_cgroup, wanted[k], FALSE);
              if (rel == NULL)
                continue;
              mnt = mounts_unescape (f[1]);
              *slot = join_rel (mnt, rel);
              if (k == 1)
                host->v1_memory_mount = g_strdup (mnt);
              g_clear_pointer (&rel, g_free);
            }
        }
    }
  host_read_v2 (host);
  host->v2_offered = host->v2_mount != NULL
                     && file_has (host->v2_mount, "cgroup.controllers", "pids")
                     && file_has (host->v2_mount, "cgroup.controllers", "memory");
  host->v1_writable = host->v1_pids != NULL && host->v1_memory != NULL
                      && dir_writable (host, host->v1_pids)
                      && dir_writable (host, host->v1_memory);
  return host;
}

void
sbx_cgroup_host_free (SbxCgroupHost *host)
{
  if (host == NULL)
    return;
  g_free (host->v2_mount);
  g_free (host->v2_dir);
  g_free (host->v1_pids);
  g_free (host->v1_memory);
  g_free (host->v1_memory_mount);
  g_free (host->v1_freezer);
  g_free (host->bus_address);
  g_free ((char *) host->paths.mounts);
  g_free ((char *) host->paths.self_cgroup);
  g_free (host);
}

gboolean
sbx_cgroup_host_v2_usable_by_root (const SbxCgroupHost *host)
{
  return host->v2_dir != NULL && host->v2_pids && host->v2_memory && host->v2_writable;
}

gboolean
sbx_cgroup_host_v1_usable (const SbxCgroupHost *host)
{
  return host->v1_pids != NULL && host->v1_memory != NULL && host->v1_writable;
}

char *
sbx_cgroup_host_describe (const SbxCgroupHost *host,
                          gboolean             for_root)
{
  if (for_root)
    {
      /* What the host's root gets: the controllers there, and, when this
       * process is that root, cgroups it may create (a caller that is not
       * root cannot test root's writability: availability is the answer). */
      gboolean v2 = host->v2_dir != NULL && host->v2_pids && host->v2_memory;
      gboolean v1 = host->v1_pids != NULL && host->v1_memory != NULL;

      if (v2 && (!host->root || sbx_cgroup_host_v2_usable_by_root (host)))
        return g_strdup_printf ("cgroup v2: a cgroup per sandbox under %s with pids.max and "
                                "memory.max (the supervisor moves into its leaf %s)",
                                host->v2_dir, SUPERVISOR_LEAF);
      if (v1 && (!host->root || sbx_cgroup_host_v1_usable (host)))
        return g_strdup_printf ("cgroup v1: a cgroup per sandbox in the pids (%s) and memory (%s) "
                                "hierarchies%s%s, pids.max and memory.limit_in_bytes",
                                host->v1_pids, host->v1_memory,
                                host->v1_freezer != NULL ? ", frozen before it is killed via " : "",
                                host->v1_freezer != NULL ? host->v1_freezer : "");
      if (v2 || v1)
        return g_strdup ("none: the pids and memory controllers are there but this root may not "
                         "create cgroups under its own (rlimit fallback): a read-only cgroup mount. "
                         "Hint: give the supervisor a writable cgroup hierarchy or a delegated "
                         "cgroup v2 subtree");
      return g_strdup ("none: neither cgroup v2 nor cgroup v1 offers both the pids and the memory "
                       "controller here (rlimit fallback). Hint: mount the v1 pids and memory "
                       "controllers, or boot with systemd.unified_cgroup_hierarchy=1");
    }
  if (host->v2_dir != NULL && host->v2_pids && host->v2_memory && host->v2_writable && !host->root)
    return g_strdup_printf ("a delegated cgroup v2 subtree: %s", host->v2_dir);
  if (host->v2_offered && host->bus_address != NULL)
    return g_strdup_printf ("a transient systemd user scope with Delegate=yes, asked over D-Bus "
                            "(%s), if the user manager delegates the pids and memory controllers",
                            host->bus_address);
  return g_strdup_printf ("none: rlimit fallback (RLIMIT_NPROC in the sandbox's own user namespace "
                          "at rung 1, RLIMIT_DATA per process): %s. Hint: a systemd user session "
                          "on a cgroup v2 host (it delegates a subtree), or a cgroup v2 subtree "
                          "with the pids and memory controllers delegated to the user",
                          host->v2_mount == NULL ? "no cgroup v2 hierarchy"
                          : !host->v2_offered
                          ? "the cgroup v2 hierarchy offers no pids and memory controllers here"
                          : "no delegated subtree and no systemd user bus");
}

/* ------------------------------------------------------------------------- */
/* The base                                                                   */
/* ------------------------------------------------------------------------- */

/* Field 22 of /proc/PID/stat (start time in clock ticks), 0 when gone. */
static guint64
process_start_time (pid_t pid)
{
  g_autofree char *path = g_strdup_printf ("/proc/%d/stat", (int) pid);
  g_autofree char *text = read_text (path);
  const char *p;
  int field = 2;

  if (text == NULL || (p = strrchr (text, ')')) == NULL)
    return 0;
  for (p++; *p != '\0' && field < 22; p++)
    if (*p == ' ')
      field++;
  return g_ascii_strtoull (p, NULL, 10);
}

static guint64
pid_ns_inode (void)
{
  struct stat st;

  return stat ("/proc/self/ns/pid", &st) == 0 ? (guint64) st.st_ino : 0;
}

static void
base_set_failure (SbxCgroupBase *base,
                  char          *failure)
{
  base->mode = SBX_CGROUP_NONE;
  for (int i = 0; i < SBX_CGROUP_MAX_DIRS; i++)
    g_clear_pointer (&base->dirs[i], g_free);
  base->n_dirs = 0;
  g_free (base->failure);
  base->failure = failure;
}

/* Makes @dir (our own v2 cgroup, writable) a base: the pids and memory
 * controllers enabled in its subtree_control, which needs it to hold no
 * process (except the root cgroup, @is_root), so the supervisor first moves
 * into the leaf sbx-supervisor. */
static gboolean
v2_prepare (SbxCgroupBase  *base,
            const char     *dir,
            gboolean        is_root,
            gboolean        enabled,
            GError        **error)
{
  g_autofree char *leaf = g_build_filename (dir, SUPERVISOR_LEAF, NULL);
  g_autofree char *pid = g_strdup_printf ("%d", (int) getpid ());
  g_autoptr(GError) local_error = NULL;

  if (!enabled && is_root)
    {
      if (!write_text_error (dir, "cgroup.subtree_control", "+pids +memory", error))
        return FALSE;
    }
  else if (!enabled)
    {
      if (mkdir (leaf, 0755) != 0 && errno != EEXIST)
        {
          int saved = errno;

          g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved),
                       "cgroup: creating %s: %s", leaf, g_strerror (saved));
          return FALSE;
        }
      if (base->fake_fs)
        fake_populate (leaf, (const char *const[]) { "cgroup.procs", NULL });
      if (!write_text_error (leaf, "cgroup.procs", pid, error))
        return FALSE;
      if (!write_text_error (dir, "cgroup.subtree_control", "+pids +memory", &local_error))
        {
          /* Back where we were (EBUSY: other processes share our cgroup). */
          write_text_error (dir, "cgroup.procs", pid, NULL);
          if (base->fake_fs)
            fake_depopulate (leaf);
          rmdir (leaf);
          g_propagate_prefixed_error (error, g_steal_pointer (&local_error), "%s",
                                      g_error_matches (local_error, G_IO_ERROR, G_IO_ERROR_BUSY)
                                      ? "other processes share this cgroup: " : "");
          return FALSE;
        }
    }
  if (!file_has (dir, "cgroup.subtree_control", "pids")
      || !file_has (dir, "cgroup.subtree_control", "memory"))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED,
                   "cgroup: %s/cgroup.subtree_control does not list pids and memory after "
                   "enabling them", dir);
      return FALSE;
    }
  base->mode = SBX_CGROUP_V2;
  base->dirs[0] = g_strdup (dir);
  base->n_dirs = 1;
  return TRUE;
}

/* ---- the systemd user manager ---- */

typedef struct
{
  GMainContext *context;
  char         *job;        /* the job to wait for, once known */
  GPtrArray    *removed;    /* "job\tresult" of every JobRemoved seen */
  gboolean      timed_out;
} ScopeWait;

static void
on_job_removed (GDBusConnection *connection,
                const char      *sender,
                const char      *path,
                const char      *iface,
                const char      *signal,
                GVariant        *params,
                gpointer         data)
{
  ScopeWait *wait = data;
  guint32 id;
  const char *job, *unit, *result;

  if (!g_variant_is_of_type (params, G_VARIANT_TYPE ("(uoss)")))
    return;
  g_variant_get (params, "(u&o&s&s)", &id, &job, &unit, &result);
  g_ptr_array_add (wait->removed, g_strdup_printf ("%s\t%s", job, result));
  g_main_context_wakeup (wait->context);
}

static gboolean
on_scope_timeout (gpointer data)
{
  ScopeWait *wait = data;

  wait->timed_out = TRUE;
  return G_SOURCE_REMOVE;
}

/* The result of @wait's job once JobRemoved named it, else NULL. */
static const char *
scope_job_result (ScopeWait *wait)
{
  gsize len = wait->job != NULL ? strlen (wait->job) : 0;

  for (guint i = 0; wait->job != NULL && i < wait->removed->len; i++)
    {
      const char *line = g_ptr_array_index (wait->removed, i);

      if (strncmp (line, wait->job, len) == 0 && line[len] == '\t')
        return line + len + 1;
    }
  return NULL;
}

/* Asks the systemd user manager at @address for a transient scope holding
 * this process, with Delegate=yes, and waits for its job to finish. */
static gboolean
request_scope (const char  *address,
               const char  *unit,
               GError     **error)
{
  g_autoptr(GMainContext) context = g_main_context_new ();
  g_autoptr(GDBusConnection) conn = NULL;
  g_autoptr(GVariant) reply = NULL;
  g_autoptr(GPtrArray) removed = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *description = g_strdup_printf ("sbx sandboxes of process %d", (int) getpid ());
  ScopeWait wait = { context, NULL, removed, FALSE };
  GVariantBuilder props;
  GSource *timeout;
  guint sub;
  const char *result = NULL;
  gboolean ok = FALSE;

  /* A private connection on a private context: nothing of the caller's
   * main loop or session bus connection is touched. */
  g_main_context_push_thread_default (context);
  conn = g_dbus_connection_new_for_address_sync (address,
                                                 G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT
                                                 | G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION,
                                                 NULL, NULL, error);
  if (conn == NULL)
    {
      g_main_context_pop_thread_default (context);
      g_prefix_error (error, "cgroup: connecting to the systemd user manager at %s: ", address);
      return FALSE;
    }
  sub = g_dbus_connection_signal_subscribe (conn, NULL, "org.freedesktop.systemd1.Manager",
                                            "JobRemoved", "/org/freedesktop/systemd1", NULL,
                                            G_DBUS_SIGNAL_FLAGS_NONE, on_job_removed, &wait, NULL);

  g_variant_builder_init (&props, G_VARIANT_TYPE ("a(sv)"));
  g_variant_builder_add (&props, "(sv)", "Description", g_variant_new_string (description));
  g_variant_builder_add (&props, "(sv)", "PIDs",
                         g_variant_new_fixed_array (G_VARIANT_TYPE_UINT32,
                                                    (guint32[]) { (guint32) getpid () }, 1,
                                                    sizeof (guint32)));
  g_variant_builder_add (&props, "(sv)", "Delegate", g_variant_new_boolean (TRUE));
  g_variant_builder_add (&props, "(sv)", "CollectMode", g_variant_new_string ("inactive-or-failed"));
  reply = g_dbus_connection_call_sync (conn, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                                       "org.freedesktop.systemd1.Manager", "StartTransientUnit",
                                       g_variant_new ("(ssa(sv)a(sa(sv)))", unit, "fail", &props, NULL),
                                       G_VARIANT_TYPE ("(o)"), G_DBUS_CALL_FLAGS_NONE,
                                       SCOPE_TIMEOUT_MS, NULL, error);
  if (reply == NULL)
    g_prefix_error (error, "cgroup: StartTransientUnit(%s) on the systemd user manager: ", unit);
  else
    {
      g_variant_get (reply, "(o)", &wait.job);
      timeout = g_timeout_source_new (SCOPE_TIMEOUT_MS);
      g_source_set_callback (timeout, on_scope_timeout, &wait, NULL);
      g_source_attach (timeout, context);
      while ((result = scope_job_result (&wait)) == NULL && !wait.timed_out)
        g_main_context_iteration (context, TRUE);
      g_source_destroy (timeout);
      g_source_unref (timeout);
      if (result == NULL)
        g_set_error (error, G_IO_ERROR, G_IO_ERROR_TIMED_OUT,
                     "cgroup: the systemd user manager did not finish job %s for %s within %d ms",
                     wait.job, unit, SCOPE_TIMEOUT_MS);
      else if (strcmp (result, "done") != 0)
        g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED,
                     "cgroup: the systemd user manager's job for %s ended '%s'", unit, result);
      else
        ok = TRUE;
    }
  g_dbus_connection_signal_unsubscribe (conn, sub);
  g_dbus_connection_close_sync (conn, NULL, NULL);
  g_clear_object (&conn);
  /* Drop what the closed connection still queued on our context. */
  while (g_main_context_iteration (context, FALSE))
    ;
  g_main_context_pop_thread_default (context);
  g_free (wait.job);
  return ok;
}

static void
base_init_prefix (SbxCgroupBase *base)
{
  base->prefix = g_strdup_printf ("sbx-%" G_GUINT64_FORMAT "-%d-%" G_GUINT64_FORMAT "-",
                                  pid_ns_inode (), (int) getpid (), process_start_time (getpid ()));
}

SbxCgroupBase *
sbx_cgroup_base_new (const SbxCgroupHost *host)
{
  SbxCgroupBase *base = g_new0 (SbxCgroupBase, 1);
  g_autoptr(GError) error = NULL;

  base->fake_fs = host->paths.fake_fs;
  base_init_prefix (base);

  if (host->root && sbx_cgroup_host_v2_usable_by_root (host))
    {
      if (v2_prepare (base, host->v2_dir, strcmp (host->v2_dir, host->v2_mount) == 0,
                      host->v2_enabled, &error))
        base->mechanism = g_strdup_printf ("cgroup v2 (a cgroup per sandbox under %s)", host->v2_dir);
      else
        base_set_failure (base, g_strdup_printf ("cgroup v2 at %s cannot be used: %s. Hint: run the "
                                                 "supervisor in a cgroup of its own (systemd-run "
                                                 "--scope -p Delegate=yes)", host->v2_dir,
                                                 error->message));
      return base;
    }
  if (host->root && sbx_cgroup_host_v1_usable (host))
    {
      base->mode = SBX_CGROUP_V1;
      base->dirs[0] = g_strdup (host->v1_pids);
      base->dirs[1] = g_strdup (host->v1_memory);
      base->dirs[2] = g_strdup (host->v1_freezer);
      base->v1_memory_mount = g_strdup (host->v1_memory_mount);
      base->n_dirs = host->v1_freezer != NULL ? 3 : 2;
      base->memsw = exists_in (host->v1_memory, "memory.memsw.limit_in_bytes");
      base->mechanism = g_strdup_printf ("cgroup v1 (a cgroup per sandbox in the pids and memory%s "
                                         "hierarchies, under %s and %s)",
                                         host->v1_freezer != NULL ? " and freezer" : "",
                                         host->v1_pids, host->v1_memory);
      return base;
    }
  if (host->root)
    {
      base_set_failure (base, sbx_cgroup_host_describe (host, TRUE));
      return base;
    }

  /* Unprivileged: a delegated v2 subtree we are in, else a scope asked from
   * the systemd user manager, else nothing (rlimit fallback). */
  if (host->v2_dir != NULL && host->v2_pids && host->v2_memory && host->v2_writable)
    {
      if (v2_prepare (base, host->v2_dir, FALSE, host->v2_enabled, &error))
        base->mechanism = g_strdup_printf ("cgroup v2, the delegated subtree %s", host->v2_dir);
      else
        base_set_failure (base, g_strdup_printf ("rlimit fallback: the delegated cgroup v2 subtree "
                                                 "%s cannot be used: %s", host->v2_dir,
                                                 error->message));
      return base;
    }
  /* Asking moves this process into a new scope: only when the hierarchy
   * has the controllers a delegated scope could get. */
  if (host->v2_offered && host->bus_address != NULL)
    {
      g_autoptr(SbxCgroupHost) after = NULL;
      SbxCgroupPaths paths = host->paths;
      g_autofree char *unit = NULL;
      guint32 nonce = g_random_int ();

      unit = g_strdup_printf ("sbx-%d-%08x.scope", (int) getpid (), nonce);
      if (!request_scope (host->bus_address, unit, &error))
        {
          base_set_failure (base, g_strdup_printf ("rlimit fallback: %s", error->message));
          return base;
        }
      base->scope_unit = g_strdup (unit);
      after = sbx_cgroup_host_new (&paths);
      if (after->v2_dir == NULL || !g_str_has_suffix (after->v2_dir, unit))
        {
          base_set_failure (base, g_strdup_printf ("rlimit fallback: the systemd user manager "
                                                   "started %s, but this process is in %s",
                                                   unit, after->v2_dir != NULL ? after->v2_dir : "no cgroup v2 cgroup"));
          return base;
        }
      if (!(after->v2_pids && after->v2_memory && after->v2_writable))
        {
          base_set_failure (base, g_strdup_printf ("rlimit fallback: the scope %s (%s) is not "
                                                   "delegated with the pids and memory controllers. "
                                                   "Hint: systemctl edit user@.service with "
                                                   "Delegate=pids memory", unit, after->v2_dir));
          return base;
        }
      if (v2_prepare (base, after->v2_dir, FALSE, after->v2_enabled, &error))
        base->mechanism = g_strdup_printf ("cgroup v2, the transient scope %s delegated by the "
                                           "systemd user manager (%s)", unit, after->v2_dir);
      else
        base_set_failure (base, g_strdup_printf ("rlimit fallback: the scope %s cannot be used: %s",
                                                 unit, error->message));
      return base;
    }
  base_set_failure (base, sbx_cgroup_host_describe (host, FALSE));
  return base;
}

void
sbx_cgroup_base_free (SbxCgroupBase *base)
{
  if (base == NULL)
    return;
  for (int i = 0; i < SBX_CGROUP_MAX_DIRS; i++)
    g_free (base->dirs[i]);
  g_free (base->scope_unit);
  g_free (base->mechanism);
  g_free (base->failure);
  g_free (base->prefix);
  g_free (base->v1_memory_mount);
  g_free (base);
}

/* Process-wide, unlike the probe (kept per plugin instance): the base
 * describes where this process itself was put (it may move the supervisor
 * into a leaf cgroup or a transient scope, which can happen only once per
 * process), so every plugin context must share the one base; the mutex
 * makes the first use thread-safe and the base is never freed. */
const SbxCgroupBase *
sbx_cgroup_base_get (void)
{
  static GMutex base_lock;
  static SbxCgroupBase *base;   /* (owned) for the life of the process */
  const SbxCgroupBase *result;

  g_mutex_lock (&base_lock);
  if (base == NULL)
    {
      g_autoptr(SbxCgroupHost) host = sbx_cgroup_host_new (NULL);

      base = sbx_cgroup_base_new (host);
    }
  result = base;
  g_mutex_unlock (&base_lock);
  return result;
}

/* ------------------------------------------------------------------------- */
/* Per sandbox                                                                */
/* ------------------------------------------------------------------------- */

struct _SbxCgroup
{
  int       mode;
  gboolean  fake_fs;
  char     *dirs[SBX_CGROUP_MAX_DIRS];   /* v1: pids, memory, freezer (or NULL) */
  int       n_dirs;
  int       join_fds[SBX_CGROUP_MAX_DIRS];
  gboolean  destroyed;
};

static SbxCgroup *
cgroup_for_name (const SbxCgroupBase *base,
                 const char          *name)
{
  SbxCgroup *cg = g_new0 (SbxCgroup, 1);

  cg->mode = base->mode;
  cg->fake_fs = base->fake_fs;
  for (int i = 0; i < base->n_dirs; i++)
    if (base->dirs[i] != NULL)
      cg->dirs[cg->n_dirs++] = g_build_filename (base->dirs[i], name, NULL);
  for (int i = 0; i < SBX_CGROUP_MAX_DIRS; i++)
    cg->join_fds[i] = -1;
  return cg;
}

static const char *const fake_v2_files[] = { "cgroup.procs", "cgroup.kill", "cgroup.freeze",
                                             "pids.max", "memory.max", "memory.swap.max", NULL };
static const char *const fake_v1_files[] = { "cgroup.procs", "tasks", "pids.max", "memory.limit_in_bytes",
                                             "memory.memsw.limit_in_bytes", "freezer.state", NULL };

/* The file A joins through, by writing "0" (itself) into it.
 *  - cgroup v1: "tasks", which moves one thread.  A is a process of one
 *    thread (cloned without CLONE_THREAD, and it starts none), so moving
 *    that thread moves the whole process, exactly as cgroup.procs would.
 *    The difference is the cost: moving a whole thread group takes the
 *    kernel's global threadgroup lock for writing, whose first writer after
 *    a quiet spell waits out an RCU grace period (9 to 21 ms measured on the
 *    development VM), while a single thread moving itself skips that lock
 *    (Linux 5.15 and later; older kernels take it either way, so the move
 *    is the same, only slower).
 *  - cgroup v2: "cgroup.procs": cgroup.threads moves threads only inside one
 *    threaded subtree, and each sandbox's cgroup is a domain of its own. */
static const char *
join_file (int mode)
{
  return mode == SBX_CGROUP_V1 ? "tasks" : "cgroup.procs";
}

/* Writes @value to @dir/@file and reads it back: the kernel stores memory
 * limits in pages, so a byte value may read back rounded down by less than
 * a page; anything else is a failure. */
static gboolean
write_limit (const char  *dir,
             const char  *file,
             guint64      value,
             gboolean     pages,
             GError     **error)
{
  g_autofree char *text = NULL;
  g_autofree char *path = g_build_filename (dir, file, NULL);
  g_autofree char *back = NULL;
  guint64 page = (guint64) sysconf (_SC_PAGESIZE);
  guint64 read_value;
  char *end = NULL;

  if (!pages && value >= PIDS_MAX_LIMIT)
    text = g_strdup ("max");   /* the kernel never runs more tasks than this anyway */
  else
    text = g_strdup_printf ("%" G_GUINT64_FORMAT, value);
  if (!write_text_error (dir, file, text, error))
    return FALSE;
  back = read_text (path);
  if (back == NULL)
    {
      int saved = errno;

      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved),
                   "cgroup: reading back %s: %s", path, g_strerror (saved));
      return FALSE;
    }
  if (strcmp (text, "max") == 0 && strcmp (back, "max") == 0)
    return TRUE;
  read_value = g_ascii_strtoull (back, &end, 10);
  if (end == back || *end != '\0' || read_value > value
      || value - read_value >= (pages ? page : 1))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED,
                   "cgroup: %s reads back '%s' after '%s' was written", path, back, text);
      return FALSE;
    }
  return TRUE;
}

static gboolean
cgroup_mkdirs (SbxCgroup  *cg,
               GError    **error)
{
  for (int i = 0; i < cg->n_dirs; i++)
    {
      if (mkdir (cg->dirs[i], 0755) != 0)
        {
          int saved = errno;

          g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved),
                       "cgroup: creating %s: %s", cg->dirs[i], g_strerror (saved));
          /* Only what we created is removed. */
          for (int k = i; k < cg->n_dirs; k++)
            g_clear_pointer (&cg->dirs[k], g_free);
          cg->n_dirs = i;
          return FALSE;
        }
      if (cg->fake_fs)
        fake_populate (cg->dirs[i], cg->mode == SBX_CGROUP_V2 ? fake_v2_files : fake_v1_files);
    }
  return TRUE;
}

SbxCgroup *
sbx_cgroup_new (const SbxCgroupBase *base,
                guint64              max_pids,
                guint64              max_memory,
                GError             **error)
{
  g_autofree char *name = NULL;
  g_autoptr(SbxCgroup) cg = NULL;

  g_return_val_if_fail (base != NULL, NULL);
  if (base->mode == SBX_CGROUP_NONE)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED, "cgroup: %s", base->failure);
      return NULL;
    }
  name = g_strdup_printf ("%s%u", base->prefix, (guint) g_atomic_int_add (&((SbxCgroupBase *) base)->seq, 1));
  cg = cgroup_for_name (base, name);
  if (!cgroup_mkdirs (cg, error))
    return NULL;

  if (cg->mode == SBX_CGROUP_V2)
    {
      if (max_pids > 0 && !write_limit (cg->dirs[0], "pids.max", max_pids, FALSE, error))
        return NULL;
      if (max_memory > 0)
        {
          if (!write_limit (cg->dirs[0], "memory.max", max_memory, TRUE, error))
            return NULL;
          /* Swap would let the sandbox hold more than memory.max. */
          if (exists_in (cg->dirs[0], "memory.swap.max")
              && !write_limit (cg->dirs[0], "memory.swap.max", 0, TRUE, error))
            return NULL;
        }
    }
  else
    {
      if (max_pids > 0 && !write_limit (cg->dirs[0], "pids.max", max_pids, FALSE, error))
        return NULL;
      if (max_memory > 0)
        {
          /* memsw (memory + swap) must stay >= the memory limit: memory first. */
          if (!write_limit (cg->dirs[1], "memory.limit_in_bytes", max_memory, TRUE, error))
            return NULL;
          if (base->memsw
              && !write_limit (cg->dirs[1], "memory.memsw.limit_in_bytes", max_memory, TRUE, error))
            return NULL;
        }
    }

  for (int i = 0; i < cg->n_dirs; i++)
    {
      g_autofree char *join = g_build_filename (cg->dirs[i], join_file (cg->mode), NULL);

      cg->join_fds[i] = open (join, O_WRONLY | O_CLOEXEC);
      if (cg->join_fds[i] < 0)
        {
          int saved = errno;

          g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved),
                       "cgroup: opening %s: %s", join, g_strerror (saved));
          return NULL;
        }
      if (cg->join_fds[i] <= 2)
        {
          int moved = fcntl (cg->join_fds[i], F_DUPFD_CLOEXEC, 3);

          close (cg->join_fds[i]);
          cg->join_fds[i] = moved;
          if (moved < 0)
            {
              int saved = errno;

              g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved),
                           "cgroup: fcntl(F_DUPFD_CLOEXEC) of %s: %s", join, g_strerror (saved));
              return NULL;
            }
        }
    }
  return g_steal_pointer (&cg);
}

int
sbx_cgroup_join_fds (SbxCgroup *cg,
                     int        fds[SBX_CGROUP_MAX_DIRS])
{
  int n = 0;

  for (int i = 0; i < cg->n_dirs; i++)
    if (cg->join_fds[i] >= 0)
      fds[n++] = cg->join_fds[i];
  return n;
}

void
sbx_cgroup_close_procs (SbxCgroup *cg)
{
  for (int i = 0; i < SBX_CGROUP_MAX_DIRS; i++)
    if (cg->join_fds[i] >= 0)
      {
        close (cg->join_fds[i]);
        cg->join_fds[i] = -1;
      }
}

const char *
sbx_cgroup_get_path (SbxCgroup *cg)
{
  return cg->n_dirs > 0 ? cg->dirs[0] : NULL;
}

/* SIGKILLs every pid listed in @dir/cgroup.procs.  Returns how many were
 * listed, or -1 when the file could not be read (never taken for empty).
 * A cgroup directory that does not exist has no members (the kernel refuses
 * to remove one that has): 0.  That is the case of a stale cgroup whose
 * creator sat in another v1 memory cgroup than this process, from whose
 * base the memory path is derived: without it every reap waited the whole
 * EMPTY_WAIT_MS for a directory that is not there, on every run. */
static int
kill_listed (const char *dir)
{
  g_autofree char *path = g_build_filename (dir, "cgroup.procs", NULL);
  g_autofree char *text = read_text (path);
  g_auto(GStrv) pids = NULL;
  struct stat st;
  int n = 0;

  if (text == NULL)
    return lstat (dir, &st) != 0 && errno == ENOENT ? 0 : -1;
  pids = g_strsplit (text, "\n", -1);
  for (gsize i = 0; pids[i] != NULL; i++)
    {
      gint64 pid = g_ascii_strtoll (pids[i], NULL, 10);

      if (pid <= 0)
        continue;
      n++;
      kill ((pid_t) pid, SIGKILL);
    }
  return n;
}

static void
sleep_ms (int ms)
{
  g_usleep ((gulong) ms * 1000);
}

static gboolean
v1_freeze (const char *freezer)
{
  g_autofree char *path = g_build_filename (freezer, "freezer.state", NULL);

  if (write_text (path, "FROZEN") != 0)
    return FALSE;
  for (int i = 0; i < 200; i++)
    {
      g_autofree char *state = read_text (path);

      if (state == NULL || strcmp (state, "FROZEN") == 0)
        return state != NULL;
      sleep_ms (5);
    }
  return FALSE;
}

/* TRUE when a successful read of every directory's cgroup.procs listed no
 * process (kill_listed, which kills whatever it lists).  The usual case at
 * teardown: the supervisor has reaped A, and with it the whole tree, before
 * it destroys the cgroup.  Then there is nothing to freeze: no member is
 * left to fork, and none can join, because the join descriptors are closed
 * and only the supervisor held them.  Freezing costs more than the rest of
 * the teardown together: each transition of the first frozen cgroup flips
 * the kernel's freezer static key, which patches code on every CPU. */
static gboolean
v1_listed_empty (SbxCgroup *cg)
{
  for (int i = 0; i < cg->n_dirs; i++)
    if (kill_listed (cg->dirs[i]) != 0)
      return FALSE;
  return TRUE;
}

gboolean
sbx_cgroup_destroy (SbxCgroup  *cg,
                    GError    **error)
{
  const char *procs_dir;
  gboolean killed_all = FALSE;
  int listed = -1;

  if (cg->destroyed)
    return TRUE;
  sbx_cgroup_close_procs (cg);
  if (cg->n_dirs == 0)
    {
      cg->destroyed = TRUE;
      return TRUE;
    }
  procs_dir = cg->dirs[0];

  if (cg->mode == SBX_CGROUP_V2)
    {
      /* cgroup.kill (Linux >= 5.14) kills every process, including those
       * forked meanwhile; without it, freeze first so none can fork. */
      if (!cg->fake_fs && write_text_error (cg->dirs[0], "cgroup.kill", "1", NULL))
        killed_all = TRUE;
      else if (!cg->fake_fs)
        write_text_error (cg->dirs[0], "cgroup.freeze", "1", NULL);
      else
        killed_all = write_text_error (cg->dirs[0], "cgroup.kill", "1", NULL);
      if (!killed_all)
        kill_listed (cg->dirs[0]);
      if (!killed_all && !cg->fake_fs)
        write_text_error (cg->dirs[0], "cgroup.freeze", "0", NULL);
    }
  else if (cg->n_dirs == 3 && !cg->fake_fs && !v1_listed_empty (cg) && v1_freeze (cg->dirs[2]))
    {
      /* Frozen: nothing forks while we list and kill; thawed, they die. */
      g_autofree char *state = g_build_filename (cg->dirs[2], "freezer.state", NULL);

      kill_listed (cg->dirs[2]);
      write_text (state, "THAWED");
    }

  /* Until a successful read shows it empty; killing again what is listed
   * (v1 without freezer: a process may have forked meanwhile). */
  for (int waited = 0; waited <= EMPTY_WAIT_MS; waited += 5)
    {
      listed = kill_listed (procs_dir);
      for (int i = 1; listed == 0 && i < cg->n_dirs; i++)
        listed = kill_listed (cg->dirs[i]);
      if (listed == 0)
        break;
      sleep_ms (5);
    }
  if (listed != 0)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_BUSY,
                   "cgroup: %s could not be proven empty (%s)", procs_dir,
                   listed < 0 ? "cgroup.procs cannot be read" : "processes remain after SIGKILL");
      return FALSE;
    }

  for (int i = 0; i < cg->n_dirs; i++)
    {
      int r = -1, saved = 0;

      if (cg->fake_fs)
        fake_depopulate (cg->dirs[i]);
      /* An emptied cgroup may stay busy for a moment while its last tasks
       * finish exiting. */
      for (int tries = 0; tries < 400; tries++)
        {
          r = rmdir (cg->dirs[i]);
          saved = errno;
          if (r == 0 || saved == ENOENT || saved != EBUSY)
            break;
          sleep_ms (5);
        }
      if (r != 0 && saved != ENOENT)
        {
          g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved),
                       "cgroup: removing %s: %s", cg->dirs[i], g_strerror (saved));
          return FALSE;
        }
    }
  cg->destroyed = TRUE;
  return TRUE;
}

void
sbx_cgroup_free (SbxCgroup *cg)
{
  if (cg == NULL)
    return;
  sbx_cgroup_destroy (cg, NULL);
  sbx_cgroup_close_procs (cg);
  for (int i = 0; i < SBX_CGROUP_MAX_DIRS; i++)
    g_free (cg->dirs[i]);
  g_free (cg);
}

/* ------------------------------------------------------------------------- */
/* Leftovers of dead supervisors                                              */
/* ------------------------------------------------------------------------- */

/* TRUE when @name is a per-sandbox cgroup's name (as sbx_cgroup_new names
 * them), with its owner's pid namespace, pid and start time. */
static gboolean
parse_sandbox_name (const char *name,
                    guint64    *ns,
                    int        *pid,
                    guint64    *start)
{
  int consumed = 0;
  unsigned seq = 0;

  return g_str_has_prefix (name, "sbx-")
         && sscanf (name, "sbx-%" G_GUINT64_FORMAT "-%d-%" G_GUINT64_FORMAT "-%u%n",
                    ns, pid, start, &seq, &consumed) == 4
         && name[consumed] == '\0';
}

/* TRUE when the supervisor (@ns, @pid, @start) of a per-sandbox cgroup is
 * gone.  Another pid namespace's supervisor cannot be judged from here; a
 * live owner (same pid, same start time) keeps its cgroups. */
static gboolean
owner_gone (guint64 ns,
            int     pid,
            guint64 start,
            guint64 our_ns)
{
  return ns == our_ns && pid > 0 && process_start_time (pid) != start;
}

static gboolean
stale_name (const char *name,
            guint64     our_ns)
{
  guint64 ns = 0, start = 0;
  int pid = 0;

  return parse_sandbox_name (name, &ns, &pid, &start) && owner_gone (ns, pid, start, our_ns);
}

#define MEMORY_SEARCH_DEPTH 16

/* Adds to @found (name -> path) every stale per-sandbox directory at or
 * below @dir in the v1 memory hierarchy.  Per-sandbox cgroups (named as
 * sbx_cgroup_new names them) have no children, so the search does not
 * descend into them; it descends into every other directory.  cgroupfs has no
 * symbolic links; d_type is always given there. */
static void
find_stale_memory (const char *dir,
                   int         depth,
                   guint64     our_ns,
                   GHashTable *found)
{
  DIR *d;
  struct dirent *de;

  if (depth > MEMORY_SEARCH_DEPTH || (d = opendir (dir)) == NULL)
    return;
  while ((de = readdir (d)) != NULL)
    {
      g_autofree char *path = NULL;
      struct stat st;
      guint64 ns, start;
      int pid;

      if (de->d_name[0] == '.')
        continue;
      /* Every cgroup holds a few dozen control files: typed from d_type,
       * not one stat each. */
      if (de->d_type != DT_DIR
          && (de->d_type != DT_UNKNOWN || fstatat (dirfd (d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0
              || !S_ISDIR (st.st_mode)))
        continue;
      path = g_build_filename (dir, de->d_name, NULL);
      if (!parse_sandbox_name (de->d_name, &ns, &pid, &start))
        find_stale_memory (path, depth + 1, our_ns, found);
      else if (owner_gone (ns, pid, start, our_ns))
        g_hash_table_replace (found, g_strdup (de->d_name), g_steal_pointer (&path));
    }
  closedir (d);
}

/* Destroys the cgroup @name of a dead supervisor, its memory directory at
 * @memory_dir when it is known to lie elsewhere than under our base. */
static gboolean
reap_one (const SbxCgroupBase *base,
          const char          *name,
          const char          *memory_dir)
{
  g_autoptr(SbxCgroup) cg = cgroup_for_name (base, name);

  if (memory_dir != NULL && base->mode == SBX_CGROUP_V1)
    {
      g_free (cg->dirs[1]);
      cg->dirs[1] = g_strdup (memory_dir);
    }
  return sbx_cgroup_destroy (cg, NULL);
}

guint
sbx_cgroup_base_reap_stale (const SbxCgroupBase *base)
{
  g_autoptr(GDir) dir = NULL;
  g_autoptr(GPtrArray) stale = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GHashTable) memory = NULL;
  guint64 our_ns = pid_ns_inode ();
  const char *name;
  guint reaped = 0;

  if (base->mode == SBX_CGROUP_NONE || base->dirs[0] == NULL)
    return 0;
  dir = g_dir_open (base->dirs[0], 0, NULL);
  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    if (stale_name (name, our_ns))
      g_ptr_array_add (stale, g_strdup (name));
  if (stale->len == 0)
    return 0;

  /* v1: the memory directories of the dead, wherever they sat; those with
   * no pids directory left are reaped too (memory only). */
  if (base->mode == SBX_CGROUP_V1 && base->v1_memory_mount != NULL)
    {
      memory = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
      find_stale_memory (base->v1_memory_mount, 0, our_ns, memory);
    }
  for (guint i = 0; i < stale->len; i++)
    {
      const char *stale_one = g_ptr_array_index (stale, i);
      const char *memory_dir = memory != NULL ? g_hash_table_lookup (memory, stale_one) : NULL;

      if (reap_one (base, stale_one, memory_dir))
        reaped++;
      if (memory != NULL)
        g_hash_table_remove (memory, stale_one);
    }
  if (memory != NULL)
    {
      GHashTableIter iter;
      gpointer key, value;

      g_hash_table_iter_init (&iter, memory);
      while (g_hash_table_iter_next (&iter, &key, &value))
        if (reap_one (base, key, value))
          reaped++;
    }
  return reaped;
}
