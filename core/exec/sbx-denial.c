/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * LOCKING: SbxDenialLog.mutex protects its entries, index, dropped count
 * and notify pair.  The notify function is called with no lock held (it
 * may emit signals or post to a main context).  A SbxDenial is immutable
 * once shared: the log keeps its own mutable counts next to it and copies
 * on snapshot.
 */
#include "sbx-denial-private.h"

/**
 * SbxDenial:
 *
 * One refusal of the sandbox, as data a person or an agent can act on: the
 * operation the tool tried ([enum@Sbx.DenialOperation]), its target (a path,
 * `host:port`, a host name, a socket path or the command), the process that
 * tried it when known, the mechanism that refused it (a short word:
 * `egress-proxy`, `dns-stub`, `forwarder`, `command-gate`,
 * `connect-supervisor`, `view-supervisor`, `landlock-audit`), how many times
 * it was tried (repeats are merged into one denial), and the grant that
 * would open it — its class and target exactly as `sbx run --approve
 * CLASS:TARGET` and [method@Sbx.Executor.issue_grant] take them — or, when
 * no grant can, the reason ("the profile denies network").
 *
 * A run's denials reach the application as the
 * [signal@Sbx.Process::denied] signal while the tool runs, and as
 * [method@Sbx.RunResult.get_denials] after it ends; reporter plugins get
 * one `denied` event per distinct denial.
 *
 * Which refusals are observed: network targets the egress route refuses
 * (the proxy, the DNS stub and the forwarders: unapproved targets,
 * metadata and non-public addresses), command starts the profile gates
 * or denies, host unix sockets the Linux connect supervisor refuses, and
 * reads, writes, execs and listings of host paths outside the profile
 * where the backend observes them (the compile report's `fs-denials`
 * entry says whether it does).  For a filesystem denial the grant is
 * decided from the profile and the path: the exact grant
 * (`filesystem.path.read.v1`, `filesystem.path.write.v1`) of an existing
 * single-link file; otherwise the tree grant of the root covering the
 * path, or the host grant, and the reason says that it opens more; none
 * when the profile denies the dimension ("the profile denies host
 * write").  What the program itself is told (`EACCES` or `ENOENT`) is the
 * profile's choice ([enum@Sbx.DeniedPaths]).
 *
 * Immutable and reference counted; safe to share between threads.
 *
 * Since: 0.2
 */
struct _SbxDenial
{
  gatomicrefcount     ref;
  SbxDenialOperation  operation;
  char               *target;
  char              **argv;          /* (nullable) */
  gint64              pid;           /* 0: unknown */
  char               *process_name;  /* (nullable) */
  char               *mechanism;
  guint64             count;
  char               *grant_class;   /* (nullable) */
  char               *grant_target;  /* (nullable) */
  char               *reason;        /* (nullable) */
};

G_DEFINE_BOXED_TYPE (SbxDenial, sbx_denial, sbx_denial_ref, sbx_denial_unref)

SbxDenial *
sbx_denial_new (SbxDenialOperation operation,
                const char        *target,
                const char        *mechanism,
                const char        *grant_class,
                const char        *grant_target,
                const char        *reason)
{
  SbxDenial *self;

  g_return_val_if_fail (target != NULL, NULL);
  g_return_val_if_fail (mechanism != NULL, NULL);
  g_return_val_if_fail ((grant_class == NULL) == (grant_target == NULL), NULL);

  self = g_new0 (SbxDenial, 1);
  g_atomic_ref_count_init (&self->ref);
  self->operation = operation;
  self->target = g_strdup (target);
  self->mechanism = g_strdup (mechanism);
  self->count = 1;
  self->grant_class = g_strdup (grant_class);
  self->grant_target = g_strdup (grant_target);
  self->reason = g_strdup (reason);
  return self;
}

void
sbx_denial_set_process (SbxDenial         *self,
                        gint64             pid,
                        const char        *process_name,
                        const char *const *argv)
{
  self->pid = pid;
  g_free (self->process_name);
  self->process_name = g_strdup (process_name);
  g_strfreev (self->argv);
  self->argv = argv != NULL ? g_strdupv ((char **) argv) : NULL;
}

static SbxDenial *
denial_copy_with_count (SbxDenial *src,
                        guint64    count)
{
  SbxDenial *copy = sbx_denial_new (src->operation, src->target, src->mechanism,
                                    src->grant_class, src->grant_target, src->reason);

  sbx_denial_set_process (copy, src->pid, src->process_name, (const char *const *) src->argv);
  copy->count = count;
  return copy;
}

/**
 * sbx_denial_ref:
 * @self: a [struct@Sbx.Denial]
 *
 * Takes a reference.
 *
 * Returns: (transfer full): @self
 *
 * Since: 0.2
 */
SbxDenial *
sbx_denial_ref (SbxDenial *self)
{
  g_return_val_if_fail (self != NULL, NULL);

  g_atomic_ref_count_inc (&self->ref);
  return self;
}

/**
 * sbx_denial_unref:
 * @self: (transfer full): a [struct@Sbx.Denial]
 *
 * Drops a reference; the last one frees the denial.
 *
 * Since: 0.2
 */
void
sbx_denial_unref (SbxDenial *self)
{
  g_return_if_fail (self != NULL);

  if (!g_atomic_ref_count_dec (&self->ref))
    return;
  g_free (self->target);
  g_strfreev (self->argv);
  g_free (self->process_name);
  g_free (self->mechanism);
  g_free (self->grant_class);
  g_free (self->grant_target);
  g_free (self->reason);
  g_free (self);
}

/**
 * sbx_denial_get_operation:
 * @self: a [struct@Sbx.Denial]
 *
 * Returns what the tool tried.
 *
 * Returns: the operation
 *
 * Since: 0.2
 */
SbxDenialOperation
sbx_denial_get_operation (SbxDenial *self)
{
  g_return_val_if_fail (self != NULL, SBX_DENIAL_OPERATION_READ);

  return self->operation;
}

/**
 * sbx_denial_get_target:
 * @self: a [struct@Sbx.Denial]
 *
 * Returns what the operation was aimed at: `host:port` for a connection
 * (an IPv6 literal in brackets), the host name for a resolution, the
 * command (as named to the run) for a command start, a path for the
 * filesystem and unix-socket operations.
 *
 * Returns: (transfer none): the target
 *
 * Since: 0.2
 */
const char *
sbx_denial_get_target (SbxDenial *self)
{
  g_return_val_if_fail (self != NULL, NULL);

  return self->target;
}

/**
 * sbx_denial_get_argv:
 * @self: a [struct@Sbx.Denial]
 *
 * Returns the full command line of a command-start denial.
 *
 * Returns: (transfer none) (nullable) (array zero-terminated=1): the argument
 *   vector, or %NULL for other operations
 *
 * Since: 0.2
 */
const char *const *
sbx_denial_get_argv (SbxDenial *self)
{
  g_return_val_if_fail (self != NULL, NULL);

  return (const char *const *) self->argv;
}

/**
 * sbx_denial_get_pid:
 * @self: a [struct@Sbx.Denial]
 *
 * Returns the process inside the sandbox that tried the operation, as the
 * host sees its pid.  Mechanisms outside the sandbox (the egress proxy, the
 * DNS stub) do not learn it.
 *
 * Returns: the pid, or 0 when unknown
 *
 * Since: 0.2
 */
gint64
sbx_denial_get_pid (SbxDenial *self)
{
  g_return_val_if_fail (self != NULL, 0);

  return self->pid;
}

/**
 * sbx_denial_get_process_name:
 * @self: a [struct@Sbx.Denial]
 *
 * Returns argv[0] of the process that tried the operation, when known.
 *
 * Returns: (transfer none) (nullable): the process's argv[0], or %NULL
 *
 * Since: 0.2
 */
const char *
sbx_denial_get_process_name (SbxDenial *self)
{
  g_return_val_if_fail (self != NULL, NULL);

  return self->process_name;
}

/**
 * sbx_denial_get_mechanism:
 * @self: a [struct@Sbx.Denial]
 *
 * Returns the part of the sandbox that refused, as a short word:
 * `egress-proxy`, `dns-stub`, `forwarder`, `command-gate`,
 * `connect-supervisor`, `view-supervisor` (a host path outside the mount
 * view), `landlock-audit`, or `backend` for another backend's mechanism.
 *
 * Returns: (transfer none): the mechanism
 *
 * Since: 0.2
 */
const char *
sbx_denial_get_mechanism (SbxDenial *self)
{
  g_return_val_if_fail (self != NULL, NULL);

  return self->mechanism;
}

/**
 * sbx_denial_get_count:
 * @self: a [struct@Sbx.Denial]
 *
 * Returns how many times the operation was refused: repeats of the same
 * operation on the same target by the same mechanism are merged into one
 * denial.  The denial a [signal@Sbx.Process::denied] handler receives is
 * the first occurrence (count 1); the run result has the totals.
 *
 * Returns: the number of refusals, at least 1
 *
 * Since: 0.2
 */
guint64
sbx_denial_get_count (SbxDenial *self)
{
  g_return_val_if_fail (self != NULL, 0);

  return self->count;
}

/**
 * sbx_denial_get_grant_class:
 * @self: a [struct@Sbx.Denial]
 *
 * Returns the class of the grant that would open this access on a later
 * run (`network.proxy-target.v1`, `command.start.v1`,
 * `filesystem.path.read.v1`), as
 * [method@Sbx.Executor.issue_grant] and `sbx run --approve CLASS:TARGET`
 * take it.  %NULL when no grant can: [method@Sbx.Denial.get_reason] says
 * why.
 *
 * Returns: (transfer none) (nullable): the grant class, or %NULL
 *
 * Since: 0.2
 */
const char *
sbx_denial_get_grant_class (SbxDenial *self)
{
  g_return_val_if_fail (self != NULL, NULL);

  return self->grant_class;
}

/**
 * sbx_denial_get_grant_target:
 * @self: a [struct@Sbx.Denial]
 *
 * Returns the target of the grant that would open this access (for
 * example `tcp:example.com:443`, or the command path), exactly as
 * [method@Sbx.Executor.issue_grant] takes it; set exactly when
 * [method@Sbx.Denial.get_grant_class] is.
 *
 * Returns: (transfer none) (nullable): the grant target, or %NULL
 *
 * Since: 0.2
 */
const char *
sbx_denial_get_grant_target (SbxDenial *self)
{
  g_return_val_if_fail (self != NULL, NULL);

  return self->grant_target;
}

/**
 * sbx_denial_get_reason:
 * @self: a [struct@Sbx.Denial]
 *
 * Returns why the access was refused, in words: "network is gated", "the
 * profile denies network", "a metadata address".  When no grant can open
 * the access, this says why.
 *
 * Returns: (transfer none) (nullable): the reason, or %NULL
 *
 * Since: 0.2
 */
const char *
sbx_denial_get_reason (SbxDenial *self)
{
  g_return_val_if_fail (self != NULL, NULL);

  return self->reason;
}

/**
 * sbx_denial_to_string:
 * @self: a [struct@Sbx.Denial]
 *
 * Describes the denial in one line an agent can act on, as `sbx run`
 * prints it after "sbx: ": `denied connect example.com:443 (network is
 * gated); --approve network.proxy-target.v1:tcp:example.com:443 would open
 * it`, or `denied connect example.com:443 (the profile denies network)`
 * when no grant can.  A count above one is appended to the reason as
 * ` [N times]`.
 *
 * Returns: (transfer full): the line, without a newline
 *
 * Since: 0.2
 */
char *
sbx_denial_to_string (SbxDenial *self)
{
  GString *line;

  g_return_val_if_fail (self != NULL, NULL);

  line = g_string_new ("denied ");
  g_string_append_printf (line, "%s %s", sbx_denial_operation_to_string (self->operation),
                          self->target);
  if (self->reason != NULL)
    g_string_append_printf (line, " (%s)", self->reason);
  if (self->count > 1)
    g_string_append_printf (line, " [%" G_GUINT64_FORMAT " times]", self->count);
  if (self->grant_class != NULL)
    g_string_append_printf (line, "; --approve %s:%s would open it", self->grant_class,
                            self->grant_target);
  return g_string_free (line, FALSE);
}

/**
 * sbx_denial_operation_to_string:
 * @operation: a [enum@Sbx.DenialOperation]
 *
 * Returns the operation's word, as the CLI and the reporters' `denied`
 * events spell it: `read`, `write`, `exec`, `list`, `connect`, `resolve`,
 * `unix-connect` or `command-start`.
 *
 * Returns: (transfer none): the word, or "unknown" for a value this
 *   version does not define
 *
 * Since: 0.2
 */
const char *
sbx_denial_operation_to_string (SbxDenialOperation operation)
{
  switch (operation)
    {
    case SBX_DENIAL_OPERATION_READ:
      return "read";
    case SBX_DENIAL_OPERATION_WRITE:
      return "write";
    case SBX_DENIAL_OPERATION_EXEC:
      return "exec";
    case SBX_DENIAL_OPERATION_LIST:
      return "list";
    case SBX_DENIAL_OPERATION_CONNECT:
      return "connect";
    case SBX_DENIAL_OPERATION_RESOLVE:
      return "resolve";
    case SBX_DENIAL_OPERATION_UNIX_CONNECT:
      return "unix-connect";
    case SBX_DENIAL_OPERATION_COMMAND_START:
      return "command-start";
    default:
      return "unknown";
    }
}

void
sbx_denial_add_json_members (SbxDenial   *self,
                             JsonBuilder *builder)
{
  json_builder_set_member_name (builder, "operation");
  json_builder_add_string_value (builder, sbx_denial_operation_to_string (self->operation));
  json_builder_set_member_name (builder, "target");
  json_builder_add_string_value (builder, self->target);
  json_builder_set_member_name (builder, "mechanism");
  json_builder_add_string_value (builder, self->mechanism);
  json_builder_set_member_name (builder, "count");
  json_builder_add_int_value (builder, (gint64) MIN (self->count, (guint64) G_MAXINT64));
  if (self->grant_class != NULL)
    {
      json_builder_set_member_name (builder, "grant_class");
      json_builder_add_string_value (builder, self->grant_class);
      json_builder_set_member_name (builder, "grant_target");
      json_builder_add_string_value (builder, self->grant_target);
    }
  if (self->reason != NULL)
    {
      json_builder_set_member_name (builder, "reason");
      json_builder_add_string_value (builder, self->reason);
    }
  if (self->pid > 0)
    {
      json_builder_set_member_name (builder, "pid");
      json_builder_add_int_value (builder, self->pid);
    }
  if (self->process_name != NULL)
    {
      json_builder_set_member_name (builder, "process");
      json_builder_add_string_value (builder, self->process_name);
    }
  if (self->argv != NULL)
    {
      json_builder_set_member_name (builder, "argv");
      json_builder_begin_array (builder);
      for (char **a = self->argv; *a != NULL; a++)
        json_builder_add_string_value (builder, *a);
      json_builder_end_array (builder);
    }
}

/* ------------------------------------------------------------------------- */
/* The log of one run                                                         */
/* ------------------------------------------------------------------------- */

typedef struct
{
  SbxDenial *denial;   /* (owned) the first occurrence */
  guint64    count;
} LogEntry;

struct _SbxDenialLog
{
  gatomicrefcount    ref;
  GMutex             mutex;
  GArray            *entries;   /* of LogEntry, in the order first seen */
  GHashTable        *index;     /* key (owned) -> entry index + 1 */
  guint64            dropped;
  SbxDenialLogNotify notify;
  gpointer           notify_data;
};

SbxDenialLog *
sbx_denial_log_new (void)
{
  SbxDenialLog *self = g_new0 (SbxDenialLog, 1);

  g_atomic_ref_count_init (&self->ref);
  g_mutex_init (&self->mutex);
  self->entries = g_array_new (FALSE, FALSE, sizeof (LogEntry));
  self->index = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  return self;
}

SbxDenialLog *
sbx_denial_log_ref (SbxDenialLog *self)
{
  g_atomic_ref_count_inc (&self->ref);
  return self;
}

void
sbx_denial_log_unref (SbxDenialLog *self)
{
  if (!g_atomic_ref_count_dec (&self->ref))
    return;
  for (guint i = 0; i < self->entries->len; i++)
    sbx_denial_unref (g_array_index (self->entries, LogEntry, i).denial);
  g_array_unref (self->entries);
  g_hash_table_unref (self->index);
  g_mutex_clear (&self->mutex);
  g_free (self);
}

void
sbx_denial_log_set_notify (SbxDenialLog      *self,
                           SbxDenialLogNotify notify,
                           gpointer           user_data)
{
  g_mutex_lock (&self->mutex);
  self->notify = notify;
  self->notify_data = user_data;
  g_mutex_unlock (&self->mutex);
}

void
sbx_denial_log_add (SbxDenialLog *self,
                    SbxDenial    *denial)
{
  /* The key: operation, mechanism, target (NUL cannot occur in any). */
  g_autofree char *key = g_strdup_printf ("%d\x1f%s\x1f%s", (int) denial->operation,
                                          denial->mechanism, denial->target);
  gpointer found;
  SbxDenialLogNotify notify = NULL;
  gpointer notify_data = NULL;

  g_mutex_lock (&self->mutex);
  found = g_hash_table_lookup (self->index, key);
  if (found != NULL)
    {
      LogEntry *entry = &g_array_index (self->entries, LogEntry, GPOINTER_TO_UINT (found) - 1);

      if (entry->count < G_MAXUINT64)
        entry->count++;
    }
  else if (self->entries->len >= SBX_DENIAL_LOG_MAX_ENTRIES)
    {
      if (self->dropped < G_MAXUINT64)
        self->dropped++;
    }
  else
    {
      LogEntry entry = { sbx_denial_ref (denial), 1 };

      g_array_append_val (self->entries, entry);
      g_hash_table_insert (self->index, g_steal_pointer (&key),
                           GUINT_TO_POINTER (self->entries->len));
      notify = self->notify;
      notify_data = self->notify_data;
    }
  g_mutex_unlock (&self->mutex);
  /* The denial handed on is the first occurrence (count 1) and shared from
   * now on: immutable. */
  if (notify != NULL)
    notify (denial, notify_data);
}

GPtrArray *
sbx_denial_log_snapshot (SbxDenialLog *self)
{
  GPtrArray *out = g_ptr_array_new_with_free_func ((GDestroyNotify) sbx_denial_unref);

  g_mutex_lock (&self->mutex);
  for (guint i = 0; i < self->entries->len; i++)
    {
      LogEntry *entry = &g_array_index (self->entries, LogEntry, i);

      g_ptr_array_add (out, denial_copy_with_count (entry->denial, entry->count));
    }
  g_mutex_unlock (&self->mutex);
  return out;
}

guint64
sbx_denial_log_get_dropped (SbxDenialLog *self)
{
  guint64 dropped;

  g_mutex_lock (&self->mutex);
  dropped = self->dropped;
  g_mutex_unlock (&self->mutex);
  return dropped;
}
