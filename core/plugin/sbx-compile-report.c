/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "sbx-compile-report.h"
#include "sbx-compile-report-private.h"

#include <json-glib/json-glib.h>

#include "sbx-plugin-abi.h"

G_STATIC_ASSERT (SBX_REPORT_STATUS_ENFORCED == SBX_ABI_REPORT_ENFORCED);
G_STATIC_ASSERT (SBX_REPORT_STATUS_NARROWED == SBX_ABI_REPORT_NARROWED);
G_STATIC_ASSERT (SBX_REPORT_STATUS_UNENFORCED == SBX_ABI_REPORT_UNENFORCED);
G_STATIC_ASSERT (SBX_REPORT_STATUS_WIDENED == SBX_ABI_REPORT_WIDENED);
G_STATIC_ASSERT (SBX_REPORT_STATUS_VACUOUS == SBX_ABI_REPORT_VACUOUS);

typedef struct
{
  char            *feature;
  SbxReportStatus  status;
  char            *detail;   /* (nullable) */
} ReportEntry;

typedef struct
{
  char *backend;
  char *reason;
} RejectedCandidate;

typedef struct
{
  char *kind;    /* "workspace" or "root" */
  char *path;    /* the resolved path the root became */
  char *read;
  char *write;
} ReportRoot;

/**
 * SbxCompileReport:
 *
 * What a backend did with a profile: the backend chosen, the level and the
 * guarantees it achieved, the guarantees the profile required, one entry per
 * feature (enforced, narrowed, unenforced, widened or vacuous, with details
 * and hints), and every candidate backend that was rejected during selection
 * together with the reason.
 *
 * A report is an immutable, reference-counted value once handed out by the
 * library; it can be shared between threads.
 *
 * Since: 0.1
 */
struct _SbxCompileReport
{
  gatomicrefcount  ref_count;
  gboolean         frozen;
  char            *backend;      /* (nullable) */
  SbxLevel         level;
  SbxGuarantees    guarantees;
  SbxGuarantees    required;
  SbxReportScope   scope;
  GArray          *entries;      /* of ReportEntry */
  GArray          *rejected;     /* of RejectedCandidate */
  GArray          *roots;        /* of ReportRoot */
};

G_DEFINE_BOXED_TYPE (SbxCompileReport, sbx_compile_report,
                     sbx_compile_report_ref, sbx_compile_report_unref)

static const char *const status_names[] = {
  NULL, "enforced", "narrowed", "unenforced", "widened", "vacuous",
};

static const char *const scope_names[] = { "none", "executor", "run" };

static void
report_entry_clear (gpointer data)
{
  ReportEntry *entry = data;

  g_clear_pointer (&entry->feature, g_free);
  g_clear_pointer (&entry->detail, g_free);
}

static void
report_root_clear (gpointer data)
{
  ReportRoot *root = data;

  g_clear_pointer (&root->kind, g_free);
  g_clear_pointer (&root->path, g_free);
  g_clear_pointer (&root->read, g_free);
  g_clear_pointer (&root->write, g_free);
}

static void
rejected_clear (gpointer data)
{
  RejectedCandidate *rejected = data;

  g_clear_pointer (&rejected->backend, g_free);
  g_clear_pointer (&rejected->reason, g_free);
}

/* Copies text that may come from a plugin: valid UTF-8, at most
 * SBX_COMPILE_REPORT_MAX_TEXT bytes (cut at a character boundary). */
static char *
sanitize_text (const char *text)
{
  g_autofree char *valid = NULL;
  const char *end;

  if (text == NULL)
    return NULL;
  valid = g_utf8_make_valid (text, -1);
  if (strlen (valid) <= SBX_COMPILE_REPORT_MAX_TEXT)
    return g_steal_pointer (&valid);
  end = g_utf8_find_prev_char (valid, valid + SBX_COMPILE_REPORT_MAX_TEXT + 1);
  return g_strndup (valid, end - valid);
}

SbxCompileReport *
sbx_compile_report_new (void)
{
  SbxCompileReport *self = g_new0 (SbxCompileReport, 1);

  g_atomic_ref_count_init (&self->ref_count);
  self->level = SBX_LEVEL_NONE;
  self->entries = g_array_new (FALSE, TRUE, sizeof (ReportEntry));
  g_array_set_clear_func (self->entries, report_entry_clear);
  self->rejected = g_array_new (FALSE, TRUE, sizeof (RejectedCandidate));
  g_array_set_clear_func (self->rejected, rejected_clear);
  self->roots = g_array_new (FALSE, TRUE, sizeof (ReportRoot));
  g_array_set_clear_func (self->roots, report_root_clear);
  return self;
}

/**
 * sbx_compile_report_ref:
 * @self: a [struct@Sbx.CompileReport]
 *
 * Takes a reference on @self.
 *
 * Returns: (transfer full): @self
 *
 * Since: 0.1
 */
SbxCompileReport *
sbx_compile_report_ref (SbxCompileReport *self)
{
  g_return_val_if_fail (self != NULL, NULL);

  g_atomic_ref_count_inc (&self->ref_count);
  return self;
}

/**
 * sbx_compile_report_unref:
 * @self: (transfer full): a [struct@Sbx.CompileReport]
 *
 * Drops a reference on @self; the last one frees it.
 *
 * Since: 0.1
 */
void
sbx_compile_report_unref (SbxCompileReport *self)
{
  g_return_if_fail (self != NULL);

  if (!g_atomic_ref_count_dec (&self->ref_count))
    return;
  g_free (self->backend);
  g_array_unref (self->entries);
  g_array_unref (self->rejected);
  g_array_unref (self->roots);
  g_free (self);
}

gboolean
sbx_compile_report_add_entry (SbxCompileReport *self,
                              const char       *feature,
                              SbxReportStatus   status,
                              const char       *detail)
{
  ReportEntry entry = { NULL, status, NULL };

  g_return_val_if_fail (self != NULL, FALSE);
  g_return_val_if_fail (!self->frozen, FALSE);
  g_return_val_if_fail (feature != NULL, FALSE);
  g_return_val_if_fail (status >= SBX_REPORT_STATUS_ENFORCED && status <= SBX_REPORT_STATUS_VACUOUS, FALSE);

  if (self->entries->len >= SBX_COMPILE_REPORT_MAX_ENTRIES)
    return FALSE;
  entry.feature = sanitize_text (feature);
  entry.detail = sanitize_text (detail);
  g_array_append_val (self->entries, entry);
  return TRUE;
}

void
sbx_compile_report_set_backend (SbxCompileReport *self,
                                const char       *backend)
{
  g_return_if_fail (self != NULL);
  g_return_if_fail (!self->frozen);

  g_free (self->backend);
  self->backend = sanitize_text (backend);
}

void
sbx_compile_report_set_level (SbxCompileReport *self,
                              SbxLevel          level)
{
  g_return_if_fail (self != NULL);
  g_return_if_fail (!self->frozen);
  g_return_if_fail (level <= SBX_LEVEL_FULL);

  self->level = level;
}

void
sbx_compile_report_set_guarantees (SbxCompileReport *self,
                                   SbxGuarantees     guarantees)
{
  g_return_if_fail (self != NULL);
  g_return_if_fail (!self->frozen);

  self->guarantees = guarantees & SBX_GUARANTEES_ALL;
}

void
sbx_compile_report_set_required (SbxCompileReport *self,
                                 SbxGuarantees     required)
{
  g_return_if_fail (self != NULL);
  g_return_if_fail (!self->frozen);

  self->required = required & SBX_GUARANTEES_ALL;
}

void
sbx_compile_report_set_scope (SbxCompileReport *self,
                              SbxReportScope    scope)
{
  g_return_if_fail (self != NULL);
  g_return_if_fail (!self->frozen);
  g_return_if_fail ((guint) scope < G_N_ELEMENTS (scope_names));

  self->scope = scope;
}

SbxCompileReport *
sbx_compile_report_dup (SbxCompileReport *self)
{
  SbxCompileReport *copy;

  g_return_val_if_fail (self != NULL, NULL);

  copy = sbx_compile_report_new ();
  copy->backend = g_strdup (self->backend);
  copy->level = self->level;
  copy->guarantees = self->guarantees;
  copy->required = self->required;
  copy->scope = self->scope;
  sbx_compile_report_append_entries (copy, self);
  for (guint i = 0; i < self->rejected->len; i++)
    {
      const RejectedCandidate *r = &g_array_index (self->rejected, RejectedCandidate, i);
      RejectedCandidate c = { g_strdup (r->backend), g_strdup (r->reason) };

      g_array_append_val (copy->rejected, c);
    }
  for (guint i = 0; i < self->roots->len; i++)
    {
      const ReportRoot *r = &g_array_index (self->roots, ReportRoot, i);
      ReportRoot c = { g_strdup (r->kind), g_strdup (r->path), g_strdup (r->read),
                       g_strdup (r->write) };

      g_array_append_val (copy->roots, c);
    }
  return copy;
}

void
sbx_compile_report_add_rejected (SbxCompileReport *self,
                                 const char       *backend,
                                 const char       *reason)
{
  RejectedCandidate rejected;

  g_return_if_fail (self != NULL);
  g_return_if_fail (!self->frozen);
  g_return_if_fail (backend != NULL);
  g_return_if_fail (reason != NULL);

  rejected.backend = sanitize_text (backend);
  rejected.reason = sanitize_text (reason);
  g_array_append_val (self->rejected, rejected);
}

void
sbx_compile_report_add_root (SbxCompileReport *self,
                             const char       *kind,
                             const char       *path,
                             SbxAccess         read,
                             SbxAccess         write)
{
  ReportRoot root;

  g_return_if_fail (self != NULL);
  g_return_if_fail (!self->frozen);
  g_return_if_fail (kind != NULL && path != NULL);

  root.kind = g_strdup (kind);
  root.path = g_utf8_make_valid (path, -1);
  root.read = g_strdup (sbx_access_to_string (read));
  root.write = g_strdup (sbx_access_to_string (write));
  g_array_append_val (self->roots, root);
}

/**
 * sbx_compile_report_get_n_roots:
 * @self: a [struct@Sbx.CompileReport]
 *
 * Returns how many roots the report lists: the workspace first, then every
 * additional root, each as the resolved path it became.
 *
 * Returns: the number of roots
 *
 * Since: 0.1
 */
guint
sbx_compile_report_get_n_roots (SbxCompileReport *self)
{
  g_return_val_if_fail (self != NULL, 0);

  return self->roots->len;
}

/**
 * sbx_compile_report_get_root_kind:
 * @self: a [struct@Sbx.CompileReport]
 * @index: less than [method@Sbx.CompileReport.get_n_roots]
 *
 * Returns whether root @index is the workspace ("workspace") or an
 * additional root ("root").
 *
 * Returns: (transfer none): the kind
 *
 * Since: 0.1
 */
const char *
sbx_compile_report_get_root_kind (SbxCompileReport *self,
                                  guint             index)
{
  g_return_val_if_fail (self != NULL, NULL);
  g_return_val_if_fail (index < self->roots->len, NULL);

  return g_array_index (self->roots, ReportRoot, index).kind;
}

/**
 * sbx_compile_report_get_root_path:
 * @self: a [struct@Sbx.CompileReport]
 * @index: less than [method@Sbx.CompileReport.get_n_roots]
 *
 * Returns the resolved path root @index became (every symbolic link
 * followed when the profile was built), which is what the sandbox sees.
 *
 * Returns: (transfer none): the path
 *
 * Since: 0.1
 */
const char *
sbx_compile_report_get_root_path (SbxCompileReport *self,
                                  guint             index)
{
  g_return_val_if_fail (self != NULL, NULL);
  g_return_val_if_fail (index < self->roots->len, NULL);

  return g_array_index (self->roots, ReportRoot, index).path;
}

void
sbx_compile_report_append_entries (SbxCompileReport *self,
                                   SbxCompileReport *from)
{
  g_return_if_fail (self != NULL);
  g_return_if_fail (from != NULL);
  g_return_if_fail (self != from);

  for (guint i = 0; i < from->entries->len; i++)
    {
      const ReportEntry *entry = &g_array_index (from->entries, ReportEntry, i);

      if (!sbx_compile_report_add_entry (self, entry->feature, entry->status, entry->detail))
        break;
    }
}

void
sbx_compile_report_freeze (SbxCompileReport *self)
{
  g_return_if_fail (self != NULL);

  self->frozen = TRUE;
}

gboolean
sbx_compile_report_is_frozen (SbxCompileReport *self)
{
  g_return_val_if_fail (self != NULL, FALSE);

  return self->frozen;
}

/**
 * sbx_compile_report_get_backend:
 * @self: a [struct@Sbx.CompileReport]
 *
 * Returns the name of the backend extension that compiled the profile, such
 * as "linux-userns".
 *
 * Returns: (transfer none) (nullable): the backend name, or %NULL when no
 *   backend was selected
 *
 * Since: 0.1
 */
const char *
sbx_compile_report_get_backend (SbxCompileReport *self)
{
  g_return_val_if_fail (self != NULL, NULL);

  return self->backend;
}

/**
 * sbx_compile_report_get_level:
 * @self: a [struct@Sbx.CompileReport]
 *
 * Returns the confinement level the backend reported.
 *
 * Returns: the level
 *
 * Since: 0.1
 */
SbxLevel
sbx_compile_report_get_level (SbxCompileReport *self)
{
  g_return_val_if_fail (self != NULL, SBX_LEVEL_NONE);

  return self->level;
}

/**
 * sbx_compile_report_get_guarantees:
 * @self: a [struct@Sbx.CompileReport]
 *
 * Returns the guarantees the backend achieved.
 *
 * Returns: the achieved guarantees
 *
 * Since: 0.1
 */
SbxGuarantees
sbx_compile_report_get_guarantees (SbxCompileReport *self)
{
  g_return_val_if_fail (self != NULL, SBX_GUARANTEE_NONE);

  return self->guarantees;
}

/**
 * sbx_compile_report_get_required:
 * @self: a [struct@Sbx.CompileReport]
 *
 * Returns the guarantees the profile required.
 *
 * Returns: the required guarantees
 *
 * Since: 0.1
 */
SbxGuarantees
sbx_compile_report_get_required (SbxCompileReport *self)
{
  g_return_val_if_fail (self != NULL, SBX_GUARANTEE_NONE);

  return self->required;
}

/**
 * sbx_compile_report_get_scope:
 * @self: a [struct@Sbx.CompileReport]
 *
 * Returns which report @self is: an executor's (what a run without grants
 * gets), one run's (what held for that spawn, after its grants and egress
 * route), or neither.  A wrapper that decides on a run's guarantees reads
 * the run's report, never the executor's.
 *
 * Returns: the scope
 *
 * Since: 0.2
 */
SbxReportScope
sbx_compile_report_get_scope (SbxCompileReport *self)
{
  g_return_val_if_fail (self != NULL, SBX_REPORT_SCOPE_NONE);

  return self->scope;
}

/**
 * sbx_compile_report_get_n_entries:
 * @self: a [struct@Sbx.CompileReport]
 *
 * Returns the number of feature entries.
 *
 * Returns: the number of entries
 *
 * Since: 0.1
 */
guint
sbx_compile_report_get_n_entries (SbxCompileReport *self)
{
  g_return_val_if_fail (self != NULL, 0);

  return self->entries->len;
}

static const ReportEntry *
get_entry (SbxCompileReport *self,
           guint             index)
{
  if (index >= self->entries->len)
    return NULL;
  return &g_array_index (self->entries, ReportEntry, index);
}

/**
 * sbx_compile_report_get_entry_feature:
 * @self: a [struct@Sbx.CompileReport]
 * @index: an entry index, less than [method@Sbx.CompileReport.get_n_entries]
 *
 * Returns the feature name of entry @index, a lower-case dash-separated
 * word such as "write-boundary".
 *
 * Returns: (transfer none): the feature name
 *
 * Since: 0.1
 */
const char *
sbx_compile_report_get_entry_feature (SbxCompileReport *self,
                                      guint             index)
{
  const ReportEntry *entry;

  g_return_val_if_fail (self != NULL, NULL);
  entry = get_entry (self, index);
  g_return_val_if_fail (entry != NULL, NULL);

  return entry->feature;
}

/**
 * sbx_compile_report_get_entry_status:
 * @self: a [struct@Sbx.CompileReport]
 * @index: an entry index, less than [method@Sbx.CompileReport.get_n_entries]
 *
 * Returns the status of entry @index.
 *
 * Returns: the status
 *
 * Since: 0.1
 */
SbxReportStatus
sbx_compile_report_get_entry_status (SbxCompileReport *self,
                                     guint             index)
{
  const ReportEntry *entry;

  g_return_val_if_fail (self != NULL, SBX_REPORT_STATUS_UNENFORCED);
  entry = get_entry (self, index);
  g_return_val_if_fail (entry != NULL, SBX_REPORT_STATUS_UNENFORCED);

  return entry->status;
}

/**
 * sbx_compile_report_get_entry_detail:
 * @self: a [struct@Sbx.CompileReport]
 * @index: an entry index, less than [method@Sbx.CompileReport.get_n_entries]
 *
 * Returns the free-text detail of entry @index; a missing mechanism carries a
 * "Hint: ..." here.
 *
 * Returns: (transfer none) (nullable): the detail
 *
 * Since: 0.1
 */
const char *
sbx_compile_report_get_entry_detail (SbxCompileReport *self,
                                     guint             index)
{
  const ReportEntry *entry;

  g_return_val_if_fail (self != NULL, NULL);
  entry = get_entry (self, index);
  g_return_val_if_fail (entry != NULL, NULL);

  return entry->detail;
}

/**
 * sbx_compile_report_get_n_rejected:
 * @self: a [struct@Sbx.CompileReport]
 *
 * Returns the number of candidate backends (and refused plugins) that
 * selection rejected before settling on [method@Sbx.CompileReport.get_backend].
 *
 * Returns: the number of rejected candidates
 *
 * Since: 0.1
 */
guint
sbx_compile_report_get_n_rejected (SbxCompileReport *self)
{
  g_return_val_if_fail (self != NULL, 0);

  return self->rejected->len;
}

/**
 * sbx_compile_report_get_rejected_name:
 * @self: a [struct@Sbx.CompileReport]
 * @index: less than [method@Sbx.CompileReport.get_n_rejected]
 *
 * Returns the name of rejected candidate @index: a backend extension name, or
 * for a plugin refused at load time, the plugin's name.
 *
 * Returns: (transfer none): the name
 *
 * Since: 0.1
 */
const char *
sbx_compile_report_get_rejected_name (SbxCompileReport *self,
                                      guint             index)
{
  g_return_val_if_fail (self != NULL, NULL);
  g_return_val_if_fail (index < self->rejected->len, NULL);

  return g_array_index (self->rejected, RejectedCandidate, index).backend;
}

/**
 * sbx_compile_report_get_rejected_reason:
 * @self: a [struct@Sbx.CompileReport]
 * @index: less than [method@Sbx.CompileReport.get_n_rejected]
 *
 * Returns why candidate @index was rejected.
 *
 * Returns: (transfer none): the reason
 *
 * Since: 0.1
 */
const char *
sbx_compile_report_get_rejected_reason (SbxCompileReport *self,
                                        guint             index)
{
  g_return_val_if_fail (self != NULL, NULL);
  g_return_val_if_fail (index < self->rejected->len, NULL);

  return g_array_index (self->rejected, RejectedCandidate, index).reason;
}

/**
 * sbx_report_status_to_string:
 * @status: a [enum@Sbx.ReportStatus]
 *
 * Returns the lower-case name of @status ("enforced", "narrowed",
 * "unenforced", "widened", "vacuous").
 *
 * Returns: (transfer none) (nullable): the name, or %NULL for a value outside
 *   the enumeration
 *
 * Since: 0.1
 */
const char *
sbx_report_status_to_string (SbxReportStatus status)
{
  if ((guint) status >= G_N_ELEMENTS (status_names))
    return NULL;
  return status_names[status];
}

/**
 * sbx_report_scope_to_string:
 * @scope: a [enum@Sbx.ReportScope]
 *
 * Returns the string form of @scope: "none", "executor" or "run" (the JSON
 * member "scope").
 *
 * Returns: (nullable): the name, or %NULL for a value that is not a scope
 *
 * Since: 0.2
 */
const char *
sbx_report_scope_to_string (SbxReportScope scope)
{
  if ((guint) scope >= G_N_ELEMENTS (scope_names))
    return NULL;
  return scope_names[scope];
}

static void
add_guarantees_array (JsonBuilder   *builder,
                      const char    *member,
                      SbxGuarantees  guarantees)
{
  g_auto(GStrv) names = sbx_guarantees_to_strv (guarantees);

  json_builder_set_member_name (builder, member);
  json_builder_begin_array (builder);
  for (guint i = 0; names[i] != NULL; i++)
    json_builder_add_string_value (builder, names[i]);
  json_builder_end_array (builder);
}

JsonNode *
sbx_compile_report_to_json_node (SbxCompileReport *self)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "schema");
  json_builder_add_int_value (builder, SBX_COMPILE_REPORT_SCHEMA);
  json_builder_set_member_name (builder, "scope");
  json_builder_add_string_value (builder, sbx_report_scope_to_string (self->scope));
  json_builder_set_member_name (builder, "backend");
  if (self->backend != NULL)
    json_builder_add_string_value (builder, self->backend);
  else
    json_builder_add_null_value (builder);
  json_builder_set_member_name (builder, "level");
  json_builder_add_string_value (builder, sbx_level_to_string (self->level));
  add_guarantees_array (builder, "guarantees", self->guarantees);
  add_guarantees_array (builder, "required", self->required);

  json_builder_set_member_name (builder, "entries");
  json_builder_begin_array (builder);
  for (guint i = 0; i < self->entries->len; i++)
    {
      const ReportEntry *entry = &g_array_index (self->entries, ReportEntry, i);

      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "feature");
      json_builder_add_string_value (builder, entry->feature);
      json_builder_set_member_name (builder, "status");
      json_builder_add_string_value (builder, sbx_report_status_to_string (entry->status));
      json_builder_set_member_name (builder, "detail");
      if (entry->detail != NULL)
        json_builder_add_string_value (builder, entry->detail);
      else
        json_builder_add_null_value (builder);
      json_builder_end_object (builder);
    }
  json_builder_end_array (builder);

  json_builder_set_member_name (builder, "roots");
  json_builder_begin_array (builder);
  for (guint i = 0; i < self->roots->len; i++)
    {
      const ReportRoot *root = &g_array_index (self->roots, ReportRoot, i);

      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "kind");
      json_builder_add_string_value (builder, root->kind);
      json_builder_set_member_name (builder, "path");
      json_builder_add_string_value (builder, root->path);
      json_builder_set_member_name (builder, "read");
      json_builder_add_string_value (builder, root->read);
      json_builder_set_member_name (builder, "write");
      json_builder_add_string_value (builder, root->write);
      json_builder_end_object (builder);
    }
  json_builder_end_array (builder);

  json_builder_set_member_name (builder, "rejected");
  json_builder_begin_array (builder);
  for (guint i = 0; i < self->rejected->len; i++)
    {
      const RejectedCandidate *rejected = &g_array_index (self->rejected, RejectedCandidate, i);

      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "backend");
      json_builder_add_string_value (builder, rejected->backend);
      json_builder_set_member_name (builder, "reason");
      json_builder_add_string_value (builder, rejected->reason);
      json_builder_end_object (builder);
    }
  json_builder_end_array (builder);
  json_builder_end_object (builder);

  return json_builder_get_root (builder);
}

/**
 * sbx_compile_report_to_json:
 * @self: a [struct@Sbx.CompileReport]
 *
 * Serializes @self as one JSON object on one line, with the same field names
 * as the C API:
 *
 * ```json
 * {"schema":1,"scope":"run","backend":"linux-userns","level":"full",
 *  "guarantees":["process-boundary",...],"required":["env-scrub",...],
 *  "entries":[{"feature":"write-boundary","status":"enforced","detail":null}],
 *  "roots":[{"kind":"workspace","path":"/src/app","read":"allow","write":"allow"}],
 *  "rejected":[{"backend":"...","reason":"..."}]}
 * ```
 *
 * "scope" says which report this is (see [enum@Sbx.ReportScope]):
 * "executor" for an executor's (what a run without grants gets), "run" for
 * one spawn's (after its grants and egress route), "none" for a report of
 * neither.  "backend" is null when no backend was selected.  "roots" lists the
 * workspace and every additional root as the resolved path each became
 * (symbolic links followed when the profile was built), with its access;
 * it is empty in a report that belongs to no executor.  The "schema" number is
 * independent of the plugin ABI version.
 *
 * Returns: (transfer full): the JSON text, without a trailing newline
 *
 * Since: 0.1
 */
char *
sbx_compile_report_to_json (SbxCompileReport *self)
{
  g_autoptr(JsonNode) root = NULL;

  g_return_val_if_fail (self != NULL, NULL);

  root = sbx_compile_report_to_json_node (self);
  return json_to_string (root, FALSE);
}

static void
append_guarantees_text (GString       *out,
                        const char    *label,
                        SbxGuarantees  guarantees)
{
  g_auto(GStrv) names = sbx_guarantees_to_strv (guarantees);
  g_autofree char *joined = g_strjoinv (", ", names);

  g_string_append_printf (out, "%-11s %s\n", label, names[0] != NULL ? joined : "(none)");
}

/**
 * sbx_compile_report_to_text:
 * @self: a [struct@Sbx.CompileReport]
 *
 * Renders @self for humans (what `sbx run --report` prints): a first line
 * saying which report it is (its [enum@Sbx.ReportScope]), the backend and
 * level, the achieved and required guarantees, one line per entry, the
 * roots as the resolved paths they became, and the rejected candidates with
 * their reasons.  The layout may change between
 * versions; use [method@Sbx.CompileReport.to_json] for machines.
 *
 * Returns: (transfer full): the text, ending with a newline
 *
 * Since: 0.1
 */
char *
sbx_compile_report_to_text (SbxCompileReport *self)
{
  GString *out;
  SbxGuarantees missing;

  g_return_val_if_fail (self != NULL, NULL);

  out = g_string_new (NULL);
  g_string_append_printf (out, "%-11s %s\n", "report:",
                          self->scope == SBX_REPORT_SCOPE_RUN
                          ? "run (what held for this run, after its grants and egress route)"
                          : self->scope == SBX_REPORT_SCOPE_EXECUTOR
                          ? "executor (what a run without grants gets)"
                          : "none (the report of no executor and no run)");
  g_string_append_printf (out, "%-11s %s\n", "backend:", self->backend != NULL ? self->backend : "(none selected)");
  g_string_append_printf (out, "%-11s %s\n", "level:", sbx_level_to_string (self->level));
  append_guarantees_text (out, "guarantees:", self->guarantees);
  append_guarantees_text (out, "required:", self->required);
  missing = self->required & ~self->guarantees;
  if (self->backend != NULL && missing != 0)
    append_guarantees_text (out, "MISSING:", missing);

  if (self->entries->len > 0)
    g_string_append (out, "entries:\n");
  for (guint i = 0; i < self->entries->len; i++)
    {
      const ReportEntry *entry = &g_array_index (self->entries, ReportEntry, i);

      g_string_append_printf (out, "  %-10s %s", sbx_report_status_to_string (entry->status), entry->feature);
      if (entry->detail != NULL && entry->detail[0] != '\0')
        g_string_append_printf (out, ": %s", entry->detail);
      g_string_append_c (out, '\n');
    }

  if (self->roots->len > 0)
    g_string_append (out, "roots:\n");
  for (guint i = 0; i < self->roots->len; i++)
    {
      const ReportRoot *root = &g_array_index (self->roots, ReportRoot, i);

      g_string_append_printf (out, "  %-10s %s (read %s, write %s)\n", root->kind, root->path,
                              root->read, root->write);
    }

  if (self->rejected->len > 0)
    g_string_append (out, "rejected:\n");
  for (guint i = 0; i < self->rejected->len; i++)
    {
      const RejectedCandidate *rejected = &g_array_index (self->rejected, RejectedCandidate, i);

      g_string_append_printf (out, "  %s: %s\n", rejected->backend, rejected->reason);
    }

  return g_string_free (out, FALSE);
}
