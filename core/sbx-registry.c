/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The plugin registry: finds plugin files, checks their permissions, loads
 * and validates them, registers their extensions, selects a backend for a
 * profile and opens reporter sinks.
 *
 * LOCKING
 *
 *  - SbxRegistry.lock protects the registry's lists: directories, plugins,
 *    extensions, and the two name tables (plugin_names, extension_names),
 *    which hold every published name plus the names reserved by a load in
 *    progress.  Records in those lists are immutable once published, so a
 *    pointer read under the lock stays valid for the registry's lifetime.
 *  - SbxBackend.probe_lock (sbx-backend.c) protects one backend's probe
 *    cache.  It is a leaf lock.
 *  - guard_lock (sbx-plugin-host.c) protects the crash guard's counter and
 *    saved signal dispositions.  It is a leaf lock.
 *  - Lock order: SbxRegistry.lock before SbxBackend.probe_lock; in practice
 *    they are never nested, because...
 *  - ...no lock is held across a plugin call (entry/init/probe/compile/
 *    spawn/signal/finish/release/open/emit/close).  Loading reserves the
 *    plugin's names under the lock, releases it, calls init, then re-locks to
 *    publish.  Selection copies the candidate list (with references) under
 *    the lock, releases it, probes, and publishes each probe result in the
 *    backend's own cache under probe_lock.
 *  - The default registry pointer is set once with g_once_init_enter().
 */
#include "sbx-registry.h"
#include "sbx-registry-private.h"
#include "sbx-plugin-private.h"
#include "sbx-compile-report-private.h"
#include "sbx-policy-private.h"
#include "sbx-enum-types.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib/gstdio.h>
#include <json-glib/json-glib.h>

#define PLUGIN_FILE_PREFIX    "sbx-plugin-"
#define PLUGIN_FILE_SUFFIX    ".so"
#define MAX_NAME_LENGTH       64
#define MAX_EXTENSIONS        64
#define MAX_EXTENSION_STRIDE  4096
#define MAX_DESCRIPTOR_TEXT   256

/**
 * sbx_plugin_error_quark:
 *
 * Returns the error domain of [error@Sbx.PluginError].
 *
 * Returns: the quark
 *
 * Since: 0.1
 */
G_DEFINE_QUARK (sbx-plugin-error-quark, sbx_plugin_error)

/* ------------------------------------------------------------------------- */
/* Records                                                                    */
/* ------------------------------------------------------------------------- */

typedef struct
{
  char   *path;
  GError *error;  /* (nullable) */
} DirectoryRecord;

typedef struct
{
  SbxExtensionKind  kind;
  char             *name;
  int               priority;
  SbxPlugin        *plugin;   /* (owned) */
  const void       *vtable;   /* points into the (resident) plugin */
  SbxBackend       *backend;  /* (owned) (nullable) for kind BACKEND */
} ExtensionRecord;

struct _SbxRegistry
{
  GObject     parent_instance;

  GStrv       initial_dirs;     /* construct-only */
  gboolean    tolerant;         /* the default registry: directory errors are listed, not fatal */

  GMutex      lock;
  GPtrArray  *directories;      /* (locked lock) of DirectoryRecord */
  GPtrArray  *plugins;          /* (locked lock) of SbxPlugin, loaded and refused */
  GPtrArray  *extensions;       /* (locked lock) of ExtensionRecord */
  GHashTable *plugin_names;     /* (locked lock) name -> path, published or reserved */
  GHashTable *extension_names;  /* (locked lock) name -> plugin name, published or reserved */
  SbxHostV1   host;             /* immutable after construction: the table plugin init gets,
                                 * advertising host.features (SBX_HOST_FEATURES_IMPLEMENTED) */
};

static void sbx_registry_initable_iface_init (GInitableIface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (SbxRegistry, sbx_registry, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (G_TYPE_INITABLE, sbx_registry_initable_iface_init))

enum
{
  PROP_0,
  PROP_DIRECTORIES,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static SbxPlugin *
sbx_plugin_new (const char *path,
                const char *name)
{
  SbxPlugin *plugin = g_new0 (SbxPlugin, 1);

  g_atomic_ref_count_init (&plugin->ref_count);
  plugin->path = g_strdup (path);
  plugin->name = g_strdup (name);
  plugin->state = SBX_PLUGIN_STATE_REFUSED;
  return plugin;
}

SbxPlugin *
sbx_plugin_ref (SbxPlugin *plugin)
{
  g_return_val_if_fail (plugin != NULL, NULL);

  g_atomic_ref_count_inc (&plugin->ref_count);
  return plugin;
}

void
sbx_plugin_unref (SbxPlugin *plugin)
{
  g_return_if_fail (plugin != NULL);

  if (!g_atomic_ref_count_dec (&plugin->ref_count))
    return;
  /* fini of this registry's plugin_ctx; the code itself stays mapped: a
   * plugin that initialised is never dlclose'd (it may have started threads
   * or registered callbacks we cannot see). */
  if (plugin->initialised && plugin->desc->fini != NULL)
    plugin->desc->fini (plugin->ctx);
  g_free (plugin->path);
  g_free (plugin->name);
  g_free (plugin->version);
  g_free (plugin->license);
  g_clear_error (&plugin->error);
  g_free (plugin);
}

static void
directory_record_free (gpointer data)
{
  DirectoryRecord *record = data;

  g_free (record->path);
  g_clear_error (&record->error);
  g_free (record);
}

static void
extension_record_free (gpointer data)
{
  ExtensionRecord *record = data;

  g_clear_pointer (&record->backend, sbx_backend_unref);
  sbx_plugin_unref (record->plugin);
  g_free (record->name);
  g_free (record);
}

/* ------------------------------------------------------------------------- */
/* Names and file safety                                                      */
/* ------------------------------------------------------------------------- */

/* Lowercase words of [a-z0-9] joined by single dashes, at most 64 bytes. */
static gboolean
name_is_well_formed (const char *name)
{
  gsize len;

  if (name == NULL)
    return FALSE;
  len = strnlen (name, MAX_NAME_LENGTH + 1);
  if (len == 0 || len > MAX_NAME_LENGTH || name[0] == '-' || name[len - 1] == '-')
    return FALSE;
  for (gsize i = 0; i < len; i++)
    {
      if (name[i] == '-')
        {
          if (name[i + 1] == '-')
            return FALSE;
        }
      else if (!g_ascii_islower (name[i]) && !g_ascii_isdigit (name[i]))
        return FALSE;
    }
  return TRUE;
}

/* "sbx-plugin-mock-ok.so" -> "mock-ok"; NULL unless the file name has the
 * plugin prefix and suffix (other files in a plugin directory are ignored). */
static char *
plugin_name_from_file (const char *file_name)
{
  gsize len = strlen (file_name);
  gsize prefix = strlen (PLUGIN_FILE_PREFIX);
  gsize suffix = strlen (PLUGIN_FILE_SUFFIX);

  if (len <= prefix + suffix ||
      !g_str_has_prefix (file_name, PLUGIN_FILE_PREFIX) ||
      !g_str_has_suffix (file_name, PLUGIN_FILE_SUFFIX))
    return NULL;
  return g_strndup (file_name + prefix, len - prefix - suffix);
}

gboolean
sbx_registry_check_file_safety (const struct stat  *st,
                                const char         *path,
                                gboolean            want_directory,
                                uid_t               euid,
                                GError            **error)
{
  unsigned mode = (unsigned) (st->st_mode & 07777);

  if (want_directory && !S_ISDIR (st->st_mode))
    return sbx_set_plugin_error (error, SBX_PLUGIN_ERROR_LOAD_FAILED,
                                 "plugin directory '%s' is not a directory", path);
  if (!want_directory && !S_ISREG (st->st_mode))
    return sbx_set_plugin_error (error, SBX_PLUGIN_ERROR_UNSAFE_PERMISSIONS,
                                 "plugin file '%s' is not a regular file", path);
  if (st->st_uid != 0 && st->st_uid != euid)
    return sbx_set_plugin_error (error, SBX_PLUGIN_ERROR_UNSAFE_PERMISSIONS,
                                 "plugin %s '%s' is owned by uid %u, not by root or the current user (uid %u); refused. "
                                 "Hint: chown root %s",
                                 want_directory ? "directory" : "file", path,
                                 (unsigned) st->st_uid, (unsigned) euid, path);
  if ((st->st_mode & (S_IWGRP | S_IWOTH)) != 0)
    return sbx_set_plugin_error (error, SBX_PLUGIN_ERROR_UNSAFE_PERMISSIONS,
                                 "plugin %s '%s' is writable by %s (mode %04o); refused. Hint: chmod go-w %s",
                                 want_directory ? "directory" : "file", path,
                                 (st->st_mode & S_IWGRP) != 0 && (st->st_mode & S_IWOTH) != 0 ? "group and others"
                                 : (st->st_mode & S_IWGRP) != 0 ? "its group" : "others",
                                 mode, path);
  return TRUE;
}

gboolean
sbx_set_plugin_error (GError         **error,
                      SbxPluginError   code,
                      const char      *format,
                      ...)
{
  va_list args;

  if (error == NULL)
    return FALSE;
  va_start (args, format);
  *error = g_error_new_valist (SBX_PLUGIN_ERROR, code, format, args);
  va_end (args);
  return FALSE;
}

/* ------------------------------------------------------------------------- */
/* Descriptor validation                                                      */
/* ------------------------------------------------------------------------- */

typedef struct
{
  SbxExtensionKind  kind;
  const char       *name;
  int               priority;
  const void       *vtable;
} ExtensionView;

static gboolean
descriptor_text_ok (const char *text)
{
  return text != NULL && text[0] != '\0' &&
         strnlen (text, MAX_DESCRIPTOR_TEXT + 1) <= MAX_DESCRIPTOR_TEXT &&
         g_utf8_validate (text, -1, NULL);
}

/* Checks that a vtable is large enough for its mandatory functions and that
 * they are all set.  @vtable starts with struct_size in every kind. */
static gboolean
validate_vtable (const char        *plugin,
                 const ExtensionView *ext,
                 GError           **error)
{
  const uint32_t *struct_size = ext->vtable;

  switch (ext->kind)
    {
    case SBX_EXTENSION_KIND_BACKEND:
      {
        const SbxBackendVTableV1 *vt = ext->vtable;

        if (!SBX_ABI_HAS (vt, SbxBackendVTableV1, release))
          break;
        if (vt->probe == NULL || vt->compile == NULL || vt->spawn == NULL ||
            vt->signal == NULL || vt->finish == NULL || vt->release == NULL)
          return sbx_set_plugin_error (error, SBX_PLUGIN_ERROR_INVALID_DESCRIPTOR,
                                       "plugin '%s': backend '%s' lacks a mandatory function "
                                       "(probe, compile, spawn, signal, finish and release are required)",
                                       plugin, ext->name);
        return TRUE;
      }
    case SBX_EXTENSION_KIND_EGRESS:
      {
        const SbxEgressVTableV1 *vt = ext->vtable;

        if (!SBX_ABI_HAS (vt, SbxEgressVTableV1, stop))
          break;
        if (vt->start == NULL || vt->authorize == NULL || vt->serve == NULL ||
            vt->revoke == NULL || vt->stop == NULL)
          return sbx_set_plugin_error (error, SBX_PLUGIN_ERROR_INVALID_DESCRIPTOR,
                                       "plugin '%s': egress '%s' lacks a mandatory function "
                                       "(start, authorize, serve, revoke and stop are required)",
                                       plugin, ext->name);
        return TRUE;
      }
    case SBX_EXTENSION_KIND_REPORTER:
      {
        const SbxReporterVTableV1 *vt = ext->vtable;

        if (!SBX_ABI_HAS (vt, SbxReporterVTableV1, close))
          break;
        if (vt->open == NULL || vt->emit == NULL || vt->close == NULL)
          return sbx_set_plugin_error (error, SBX_PLUGIN_ERROR_INVALID_DESCRIPTOR,
                                       "plugin '%s': reporter '%s' lacks a mandatory function "
                                       "(open, emit and close are required)",
                                       plugin, ext->name);
        return TRUE;
      }
    default:
      return sbx_set_plugin_error (error, SBX_PLUGIN_ERROR_INVALID_DESCRIPTOR,
                                   "plugin '%s': extension '%s' has unknown kind %u",
                                   plugin, ext->name, (unsigned) ext->kind);
    }
  return sbx_set_plugin_error (error, SBX_PLUGIN_ERROR_INVALID_DESCRIPTOR,
                               "plugin '%s': the vtable of extension '%s' is too small "
                               "(struct_size %u does not cover the mandatory functions)",
                               plugin, ext->name, (unsigned) *struct_size);
}

/* "rule-fds, proxy-listen-fd" for the defined bits of @bits. */
static char *
host_feature_names (uint64_t bits)
{
  static const struct { uint64_t bit; const char *name; } names[] = {
    { SBX_HOST_FEATURE_RULE_FDS, "rule-fds" },
    { SBX_HOST_FEATURE_PROXY_LISTEN_FD, "proxy-listen-fd" },
    { SBX_HOST_FEATURE_EGRESS_V1, "egress-v1" },
  };
  g_autoptr(GString) out = g_string_new (NULL);

  for (gsize i = 0; i < G_N_ELEMENTS (names); i++)
    if (bits & names[i].bit)
      g_string_append_printf (out, "%s%s", out->len > 0 ? ", " : "", names[i].name);
  return g_string_free (g_steal_pointer (&out), FALSE);
}

/* Validates everything the host will read from @desc before any call into
 * the plugin other than the entry function.  Fills @views. */
static gboolean
validate_descriptor (const SbxPluginDescriptor  *desc,
                     const char                 *file_name,
                     const char                 *plugin,
                     uint64_t                    implemented,
                     GArray                     *views,
                     GError                    **error)
{
  g_autofree char *dashed = NULL;
  g_autoptr(GHashTable) seen = NULL;
  const char *base;
  uint32_t stride;
  uint64_t unknown;

  if (desc == NULL)
    return sbx_set_plugin_error (error, SBX_PLUGIN_ERROR_INVALID_DESCRIPTOR,
                                 "plugin '%s': the entry function returned no descriptor", plugin);
  /* struct_size and abi_version sit at offsets 0 and 4 in every ABI version. */
  if (desc->abi_version != SBX_PLUGIN_ABI_VERSION)
    return sbx_set_plugin_error (error, SBX_PLUGIN_ERROR_ABI_MISMATCH,
                                 "plugin '%s' speaks plugin ABI version %u; this library speaks version %u. "
                                 "Hint: rebuild the plugin against this version of sbx-plugin-1",
                                 plugin, (unsigned) desc->abi_version, (unsigned) SBX_PLUGIN_ABI_VERSION);
  if (desc->struct_size < SBX_PLUGIN_DESCRIPTOR_MIN_SIZE)
    return sbx_set_plugin_error (error, SBX_PLUGIN_ERROR_INVALID_DESCRIPTOR,
                                 "plugin '%s': descriptor struct_size %u is smaller than the minimum %u",
                                 plugin, (unsigned) desc->struct_size, (unsigned) SBX_PLUGIN_DESCRIPTOR_MIN_SIZE);
  /* required_host_features must be a subset of what this host implements
   * (and advertises), not merely of the bits it knows. */
  unknown = desc->required_host_features & ~SBX_HOST_FEATURES_KNOWN;
  if (unknown != 0)
    return sbx_set_plugin_error (error, SBX_PLUGIN_ERROR_MISSING_HOST_FEATURE,
                                 "plugin '%s' requires host features 0x%" G_GINT64_MODIFIER "x that this library "
                                 "does not know (it knows 0x%" G_GINT64_MODIFIER "x). Hint: update libsbx-1",
                                 plugin, (guint64) unknown, (guint64) SBX_HOST_FEATURES_KNOWN);
  if ((desc->required_host_features & ~implemented) != 0)
    {
      g_autofree char *names = host_feature_names (desc->required_host_features & ~implemented);

      return sbx_set_plugin_error (error, SBX_PLUGIN_ERROR_MISSING_HOST_FEATURE,
                                   "plugin '%s' requires host features 0x%" G_GINT64_MODIFIER "x (%s) that this "
                                   "library does not implement (it implements 0x%" G_GINT64_MODIFIER "x)",
                                   plugin, (guint64) (desc->required_host_features & ~implemented), names,
                                   (guint64) implemented);
    }
  if (desc->name == NULL || strnlen (desc->name, MAX_NAME_LENGTH + 1) > MAX_NAME_LENGTH)
    return sbx_set_plugin_error (error, SBX_PLUGIN_ERROR_INVALID_DESCRIPTOR,
                                 "plugin '%s': the descriptor has no name or an over-long one", plugin);
  /* SBX_PLUGIN_DEFINE spells the name as a C identifier (mock_ok); the file
   * spells it with dashes (sbx-plugin-mock-ok.so). */
  dashed = g_strdelimit (g_strdup (desc->name), "_", '-');
  if (!g_str_equal (dashed, plugin))
    return sbx_set_plugin_error (error, SBX_PLUGIN_ERROR_INVALID_DESCRIPTOR,
                                 "plugin file '%s' holds a descriptor named '%s'; the name must match the file name",
                                 file_name, desc->name);
  if (!descriptor_text_ok (desc->version))
    return sbx_set_plugin_error (error, SBX_PLUGIN_ERROR_INVALID_DESCRIPTOR,
                                 "plugin '%s': the descriptor's version is missing, empty or not UTF-8", plugin);
  if (!descriptor_text_ok (desc->license))
    return sbx_set_plugin_error (error, SBX_PLUGIN_ERROR_INVALID_DESCRIPTOR,
                                 "plugin '%s': the descriptor's license is missing, empty or not UTF-8", plugin);
  if (desc->extensions == NULL)
    return sbx_set_plugin_error (error, SBX_PLUGIN_ERROR_INVALID_DESCRIPTOR,
                                 "plugin '%s': the descriptor has no extension list", plugin);

  /* The list is an array of the plugin's SbxPluginExtension, whose size may
   * grow in later versions: walk it with the stride the plugin declares in
   * its first entry.  The terminator is recognised by kind == SBX_EXT_END
   * (a zeroed entry), which sits at offset 4 in every version. */
  base = (const char *) desc->extensions;
  if (desc->extensions[0].kind == SBX_EXT_END)
    return sbx_set_plugin_error (error, SBX_PLUGIN_ERROR_INVALID_DESCRIPTOR,
                                 "plugin '%s' declares no extensions", plugin);
  stride = desc->extensions[0].struct_size;
  if (stride < sizeof (SbxPluginExtension) || stride > MAX_EXTENSION_STRIDE || stride % sizeof (void *) != 0)
    return sbx_set_plugin_error (error, SBX_PLUGIN_ERROR_INVALID_DESCRIPTOR,
                                 "plugin '%s': extension struct_size %u is invalid (at least %u, a multiple of %u)",
                                 plugin, (unsigned) stride, (unsigned) sizeof (SbxPluginExtension),
                                 (unsigned) sizeof (void *));

  seen = g_hash_table_new (g_str_hash, g_str_equal);
  for (guint i = 0;; i++)
    {
      const SbxPluginExtension *ext = (const SbxPluginExtension *) (const void *) (base + (gsize) i * stride);
      ExtensionView view;

      if (ext->kind == SBX_EXT_END)
        break;
      if (i >= MAX_EXTENSIONS)
        return sbx_set_plugin_error (error, SBX_PLUGIN_ERROR_INVALID_DESCRIPTOR,
                                     "plugin '%s' declares more than %u extensions (unterminated list?)",
                                     plugin, (unsigned) MAX_EXTENSIONS);
      if (ext->struct_size != stride)
        return sbx_set_plugin_error (error, SBX_PLUGIN_ERROR_INVALID_DESCRIPTOR,
                                     "plugin '%s': extension #%u has struct_size %u, the first one %u",
                                     plugin, i, (unsigned) ext->struct_size, (unsigned) stride);
      if (!name_is_well_formed (ext->name))
        return sbx_set_plugin_error (error, SBX_PLUGIN_ERROR_INVALID_DESCRIPTOR,
                                     "plugin '%s': extension #%u has a malformed name "
                                     "(lowercase words joined with dashes, at most %u bytes)",
                                     plugin, i, (unsigned) MAX_NAME_LENGTH);
      if (ext->kind != SBX_EXT_BACKEND && ext->kind != SBX_EXT_EGRESS && ext->kind != SBX_EXT_REPORTER)
        return sbx_set_plugin_error (error, SBX_PLUGIN_ERROR_INVALID_DESCRIPTOR,
                                     "plugin '%s': extension '%s' has unknown kind %u",
                                     plugin, ext->name, (unsigned) ext->kind);
      if (ext->vtable == NULL)
        return sbx_set_plugin_error (error, SBX_PLUGIN_ERROR_INVALID_DESCRIPTOR,
                                     "plugin '%s': extension '%s' has no vtable", plugin, ext->name);
      if (ext->kind == SBX_EXT_EGRESS && (desc->required_host_features & SBX_HOST_FEATURE_EGRESS_V1) == 0)
        return sbx_set_plugin_error (error, SBX_PLUGIN_ERROR_INVALID_DESCRIPTOR,
                                     "plugin '%s': egress extension '%s' is listed but the descriptor does not "
                                     "require SBX_HOST_FEATURE_EGRESS_V1 (the egress vtable is provisional)",
                                     plugin, ext->name);
      if (!g_hash_table_add (seen, (gpointer) ext->name))
        return sbx_set_plugin_error (error, SBX_PLUGIN_ERROR_INVALID_DESCRIPTOR,
                                     "plugin '%s' declares extension '%s' twice", plugin, ext->name);
      view.kind = (SbxExtensionKind) ext->kind;
      view.name = ext->name;
      view.priority = ext->priority;
      view.vtable = ext->vtable;
      if (!validate_vtable (plugin, &view, error))
        return FALSE;
      g_array_append_val (views, view);
    }
  return TRUE;
}

/* ------------------------------------------------------------------------- */
/* Loading                                                                    */
/* ------------------------------------------------------------------------- */

static void
refuse (SbxPlugin *plugin,
        GError    *error)
{
  g_clear_error (&plugin->error);
  plugin->error = error;
  plugin->state = SBX_PLUGIN_STATE_REFUSED;
}

static void
release_names (SbxRegistry *self,
               const char  *plugin_name,
               GArray      *views)
{
  g_mutex_lock (&self->lock);
  if (plugin_name != NULL)
    g_hash_table_remove (self->plugin_names, plugin_name);
  for (guint i = 0; views != NULL && i < views->len; i++)
    g_hash_table_remove (self->extension_names, g_array_index (views, ExtensionView, i).name);
  g_mutex_unlock (&self->lock);
}

/*
 * dlopen()s @path, which was opened as @fd and checked with fstat (owner,
 * mode, regular file).  The path is loaded, not /proc/self/fd/N: glibc
 * matches dlopen() names against already-loaded objects before it compares
 * file identities, so a recycled fd number would hand back a different,
 * earlier plugin.  The window between the check and the load is closed by
 * the directory check (only root or the current user can replace a file in
 * a directory that passed it) and verified: after loading, the path must
 * still name the inode we checked, or the plugin is refused.
 */
static void *
dlopen_checked (int          fd,
                const char  *path,
                char       **out_error)
{
  struct stat checked, now;
  void *handle;

  if (fstat (fd, &checked) != 0)
    {
      int saved_errno = errno;

      *out_error = g_strdup_printf ("fstat: %s", g_strerror (saved_errno));
      return NULL;
    }
  dlerror ();
  handle = dlopen (path, RTLD_NOW | RTLD_LOCAL);
  if (handle == NULL)
    {
      const char *message = dlerror ();

      *out_error = g_strdup (message != NULL ? message : "unknown dlopen error");
      return NULL;
    }
  if (stat (path, &now) != 0 || now.st_dev != checked.st_dev || now.st_ino != checked.st_ino)
    {
      dlclose (handle);
      *out_error = g_strdup ("the file was replaced while it was being loaded");
      return NULL;
    }
  return handle;
}

/* Loads one plugin file.  Always returns a record: loaded, or refused with
 * the reason.  @extensions_out receives the records to publish. */
static SbxPlugin *
load_plugin (SbxRegistry *self,
             int          dirfd,
             const char  *dir,
             const char  *file_name,
             GPtrArray   *extensions_out)
{
  g_autofree char *path = g_build_filename (dir, file_name, NULL);
  g_autofree char *name = plugin_name_from_file (file_name);
  g_autofree char *symbol = NULL;
  g_autofree char *dl_error = NULL;
  g_autoptr(GArray) views = g_array_new (FALSE, FALSE, sizeof (ExtensionView));
  g_autoptr(SbxPlugin) plugin = sbx_plugin_new (path, name);
  GError *error = NULL;
  const SbxPluginDescriptor *desc;
  SbxPluginEntryFunc entry;
  SbxCrashGuard guard;
  struct stat st;
  int32_t status;
  void *ctx = NULL;
  int fd;

  if (!name_is_well_formed (name))
    {
      refuse (plugin, g_error_new (SBX_PLUGIN_ERROR, SBX_PLUGIN_ERROR_LOAD_FAILED,
                                   "plugin file '%s': '%s' is not a well-formed plugin name "
                                   "(lowercase words joined with dashes)", path, name));
      return g_steal_pointer (&plugin);
    }

  fd = openat (dirfd, file_name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
  if (fd < 0)
    {
      int saved_errno = errno;

      if (saved_errno == ELOOP)
        refuse (plugin, g_error_new (SBX_PLUGIN_ERROR, SBX_PLUGIN_ERROR_UNSAFE_PERMISSIONS,
                                     "plugin file '%s' is a symbolic link; refused (install the file itself)", path));
      else
        refuse (plugin, g_error_new (SBX_PLUGIN_ERROR, SBX_PLUGIN_ERROR_LOAD_FAILED,
                                     "cannot open plugin file '%s': %s", path, g_strerror (saved_errno)));
      return g_steal_pointer (&plugin);
    }
  if (fstat (fd, &st) != 0)
    {
      int saved_errno = errno;

      close (fd);
      refuse (plugin, g_error_new (SBX_PLUGIN_ERROR, SBX_PLUGIN_ERROR_LOAD_FAILED,
                                   "cannot stat plugin file '%s': %s", path, g_strerror (saved_errno)));
      return g_steal_pointer (&plugin);
    }
  if (!sbx_registry_check_file_safety (&st, path, FALSE, geteuid (), &error))
    {
      close (fd);
      refuse (plugin, error);
      return g_steal_pointer (&plugin);
    }

  /* Reserve the plugin name: the first directory that provides it wins. */
  g_mutex_lock (&self->lock);
  if (g_hash_table_contains (self->plugin_names, name))
    {
      error = g_error_new (SBX_PLUGIN_ERROR, SBX_PLUGIN_ERROR_LOAD_FAILED,
                           "plugin '%s' at '%s' ignored: a plugin of that name is already loaded from '%s'",
                           name, path, (const char *) g_hash_table_lookup (self->plugin_names, name));
      g_mutex_unlock (&self->lock);
      close (fd);
      refuse (plugin, error);
      return g_steal_pointer (&plugin);
    }
  g_hash_table_insert (self->plugin_names, g_strdup (name), g_strdup (path));
  g_mutex_unlock (&self->lock);

  plugin->dl_handle = dlopen_checked (fd, path, &dl_error);
  close (fd);
  if (plugin->dl_handle == NULL)
    {
      release_names (self, name, NULL);
      refuse (plugin, g_error_new (SBX_PLUGIN_ERROR, SBX_PLUGIN_ERROR_LOAD_FAILED,
                                   "cannot load plugin '%s' from '%s': %s", name, path, dl_error));
      return g_steal_pointer (&plugin);
    }

  symbol = g_strdup_printf ("sbx_plugin_%s_entry", name);
  g_strdelimit (symbol, "-", '_');
  entry = (SbxPluginEntryFunc) dlsym (plugin->dl_handle, symbol);
  if (entry == NULL)
    {
      dlclose (g_steal_pointer (&plugin->dl_handle));
      release_names (self, name, NULL);
      refuse (plugin, g_error_new (SBX_PLUGIN_ERROR, SBX_PLUGIN_ERROR_LOAD_FAILED,
                                   "plugin '%s' ('%s') does not export its entry symbol %s",
                                   name, path, symbol));
      return g_steal_pointer (&plugin);
    }

  sbx_crash_guard_enter (&guard, name, "entry", NULL);
  desc = entry ();
  sbx_crash_guard_leave (&guard);

  if (!validate_descriptor (desc, file_name, name, self->host.features, views, &error))
    {
      dlclose (g_steal_pointer (&plugin->dl_handle));
      release_names (self, name, NULL);
      refuse (plugin, error);
      return g_steal_pointer (&plugin);
    }
  plugin->desc = desc;
  plugin->version = g_strdup (desc->version);
  plugin->license = g_strdup (desc->license);

  /* Reserve the extension names: unique across the whole registry. */
  g_mutex_lock (&self->lock);
  for (guint i = 0; i < views->len && error == NULL; i++)
    {
      const char *ext_name = g_array_index (views, ExtensionView, i).name;
      const char *owner = g_hash_table_lookup (self->extension_names, ext_name);

      if (owner != NULL)
        {
          error = g_error_new (SBX_PLUGIN_ERROR, SBX_PLUGIN_ERROR_INVALID_DESCRIPTOR,
                               "plugin '%s' declares extension '%s', which plugin '%s' already registered",
                               name, ext_name, owner);
          for (guint j = 0; j < i; j++)
            g_hash_table_remove (self->extension_names, g_array_index (views, ExtensionView, j).name);
        }
      else
        g_hash_table_insert (self->extension_names, g_strdup (ext_name), g_strdup (name));
    }
  g_mutex_unlock (&self->lock);
  if (error != NULL)
    {
      plugin->desc = NULL;
      dlclose (g_steal_pointer (&plugin->dl_handle));
      release_names (self, name, NULL);
      refuse (plugin, error);
      return g_steal_pointer (&plugin);
    }

  /* init, without any lock held. */
  status = SBX_STATUS_OK;
  if (desc->init != NULL)
    {
      sbx_crash_guard_enter (&guard, name, "init", NULL);
      status = desc->init (&self->host, &ctx);
      sbx_crash_guard_leave (&guard);
    }
  if (status != SBX_STATUS_OK)
    {
      /* Kept mapped: init ran and may have left anything behind. */
      release_names (self, name, views);
      refuse (plugin, g_error_new (SBX_PLUGIN_ERROR, SBX_PLUGIN_ERROR_INIT_FAILED,
                                   "plugin '%s' ('%s'): init failed with status %d (%s)",
                                   name, path, (int) status, sbx_status_to_string (status)));
      return g_steal_pointer (&plugin);
    }
  plugin->ctx = ctx;
  plugin->initialised = TRUE;
  plugin->state = SBX_PLUGIN_STATE_LOADED;

  for (guint i = 0; i < views->len; i++)
    {
      const ExtensionView *view = &g_array_index (views, ExtensionView, i);
      ExtensionRecord *record = g_new0 (ExtensionRecord, 1);

      record->kind = view->kind;
      record->name = g_strdup (view->name);
      record->priority = view->priority;
      record->plugin = sbx_plugin_ref (plugin);
      record->vtable = view->vtable;
      g_ptr_array_add (extensions_out, record);
    }
  return g_steal_pointer (&plugin);
}

static int
compare_strings (gconstpointer a,
                 gconstpointer b)
{
  return strcmp (*(const char *const *) a, *(const char *const *) b);
}

/* Loads every sbx-plugin-*.so of the directory open as @dirfd, in name
 * order, and publishes each plugin (loaded or refused) and its extensions. */
static void
load_directory_entries (SbxRegistry *self,
                        int          dirfd,
                        const char  *dir,
                        GPtrArray   *names)
{
  g_ptr_array_sort (names, compare_strings);
  for (guint i = 0; i < names->len; i++)
    {
      g_autoptr(GPtrArray) extensions = g_ptr_array_new_with_free_func (extension_record_free);
      SbxPlugin *plugin = load_plugin (self, dirfd, dir, names->pdata[i], extensions);

      g_mutex_lock (&self->lock);
      g_ptr_array_add (self->plugins, plugin);
      for (guint j = 0; j < extensions->len; j++)
        {
          ExtensionRecord *ext = extensions->pdata[j];

          if (ext->kind == SBX_EXTENSION_KIND_BACKEND)
            ext->backend = sbx_backend_new (ext->plugin, ext->name, ext->priority,
                                            self->extensions->len, ext->vtable);
          g_ptr_array_add (self->extensions, ext);
        }
      /* Ownership moved to self->extensions. */
      g_ptr_array_set_free_func (extensions, NULL);
      g_mutex_unlock (&self->lock);
    }
}

/* Opens and checks @dir, then loads its plugins.  Returns FALSE only when
 * the directory itself cannot be used. */
static gboolean
search_directory (SbxRegistry  *self,
                  const char   *dir,
                  GError      **error)
{
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  struct dirent *dent;
  struct stat st;
  DIR *stream;
  int dirfd;
  int list_fd;

  if (!g_path_is_absolute (dir))
    return sbx_set_plugin_error (error, SBX_PLUGIN_ERROR_LOAD_FAILED,
                                 "plugin directory '%s' is not an absolute path; ignored", dir);
  dirfd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOCTTY);
  if (dirfd < 0)
    {
      int saved_errno = errno;

      return sbx_set_plugin_error (error, SBX_PLUGIN_ERROR_LOAD_FAILED,
                                   "cannot open plugin directory '%s': %s", dir, g_strerror (saved_errno));
    }
  if (fstat (dirfd, &st) != 0)
    {
      int saved_errno = errno;

      close (dirfd);
      return sbx_set_plugin_error (error, SBX_PLUGIN_ERROR_LOAD_FAILED,
                                   "cannot stat plugin directory '%s': %s", dir, g_strerror (saved_errno));
    }
  if (!sbx_registry_check_file_safety (&st, dir, TRUE, geteuid (), error))
    {
      close (dirfd);
      return FALSE;
    }

  list_fd = dup (dirfd);
  stream = list_fd >= 0 ? fdopendir (list_fd) : NULL;
  if (stream == NULL)
    {
      int saved_errno = errno;

      if (list_fd >= 0)
        close (list_fd);
      close (dirfd);
      return sbx_set_plugin_error (error, SBX_PLUGIN_ERROR_LOAD_FAILED,
                                   "cannot list plugin directory '%s': %s", dir, g_strerror (saved_errno));
    }
  while ((dent = readdir (stream)) != NULL)
    if (g_str_has_prefix (dent->d_name, PLUGIN_FILE_PREFIX) && g_str_has_suffix (dent->d_name, PLUGIN_FILE_SUFFIX))
      g_ptr_array_add (names, g_strdup (dent->d_name));
  closedir (stream);

  load_directory_entries (self, dirfd, dir, names);
  close (dirfd);
  return TRUE;
}

/* Searches @dir and records it (with its error, if any) in the listing. */
static gboolean
load_directory (SbxRegistry  *self,
                const char   *dir,
                GError      **error)
{
  DirectoryRecord *record = g_new0 (DirectoryRecord, 1);
  GError *local_error = NULL;
  gboolean ok;

  record->path = g_strdup (dir);
  ok = search_directory (self, dir, &local_error);
  if (!ok)
    record->error = g_error_copy (local_error);
  g_mutex_lock (&self->lock);
  g_ptr_array_add (self->directories, record);
  g_mutex_unlock (&self->lock);
  if (!ok)
    g_propagate_error (error, local_error);
  return ok;
}

/* ------------------------------------------------------------------------- */
/* GObject                                                                    */
/* ------------------------------------------------------------------------- */

static void
sbx_registry_finalize (GObject *object)
{
  SbxRegistry *self = SBX_REGISTRY (object);

  g_ptr_array_unref (self->extensions);
  g_ptr_array_unref (self->plugins);
  g_ptr_array_unref (self->directories);
  g_hash_table_unref (self->plugin_names);
  g_hash_table_unref (self->extension_names);
  g_strfreev (self->initial_dirs);
  g_mutex_clear (&self->lock);

  G_OBJECT_CLASS (sbx_registry_parent_class)->finalize (object);
}

static void
sbx_registry_get_property (GObject    *object,
                           guint       prop_id,
                           GValue     *value,
                           GParamSpec *pspec)
{
  SbxRegistry *self = SBX_REGISTRY (object);

  switch (prop_id)
    {
    case PROP_DIRECTORIES:
      g_value_set_boxed (value, self->initial_dirs);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
sbx_registry_set_property (GObject      *object,
                           guint         prop_id,
                           const GValue *value,
                           GParamSpec   *pspec)
{
  SbxRegistry *self = SBX_REGISTRY (object);

  switch (prop_id)
    {
    case PROP_DIRECTORIES:
      g_strfreev (self->initial_dirs);
      self->initial_dirs = g_value_dup_boxed (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
sbx_registry_class_init (SbxRegistryClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = sbx_registry_finalize;
  object_class->get_property = sbx_registry_get_property;
  object_class->set_property = sbx_registry_set_property;

  /**
   * SbxRegistry:directories: (type GStrv)
   *
   * The plugin directories loaded at construction, in order.
   *
   * Since: 0.1
   */
  properties[PROP_DIRECTORIES] =
    g_param_spec_boxed ("directories", NULL, NULL, G_TYPE_STRV,
                        G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
sbx_registry_init (SbxRegistry *self)
{
  g_mutex_init (&self->lock);
  self->directories = g_ptr_array_new_with_free_func (directory_record_free);
  self->plugins = g_ptr_array_new_with_free_func ((GDestroyNotify) sbx_plugin_unref);
  self->extensions = g_ptr_array_new_with_free_func (extension_record_free);
  self->plugin_names = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  self->extension_names = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  self->host = *sbx_host_table ();
  self->host.features = SBX_HOST_FEATURES_IMPLEMENTED;
}

static gboolean
sbx_registry_initable_init (GInitable     *initable,
                            GCancellable  *cancellable,
                            GError       **error)
{
  SbxRegistry *self = SBX_REGISTRY (initable);

  for (guint i = 0; self->initial_dirs != NULL && self->initial_dirs[i] != NULL; i++)
    {
      g_autoptr(GError) local_error = NULL;

      if (!load_directory (self, self->initial_dirs[i], &local_error) && !self->tolerant)
        {
          g_propagate_error (error, g_steal_pointer (&local_error));
          return FALSE;
        }
    }
  return TRUE;
}

static void
sbx_registry_initable_iface_init (GInitableIface *iface)
{
  iface->init = sbx_registry_initable_init;
}

/* ------------------------------------------------------------------------- */
/* Construction                                                               */
/* ------------------------------------------------------------------------- */

char **
sbx_registry_compute_default_directories (const char *plugindir,
                                          const char *plugin_path,
                                          gboolean    secure)
{
  g_autoptr(GStrvBuilder) builder = g_strv_builder_new ();
  g_autoptr(GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);
  g_auto(GStrv) entries = NULL;

  /* SBX_PLUGIN_PATH first (like GIO_EXTRA_MODULES): a build tree's plugins
   * shadow installed ones of the same name.  Never for a setuid/AT_SECURE
   * process: its environment belongs to a less privileged caller. */
  if (!secure && plugin_path != NULL)
    {
      entries = g_strsplit (plugin_path, G_SEARCHPATH_SEPARATOR_S, -1);
      for (guint i = 0; entries[i] != NULL; i++)
        if (entries[i][0] != '\0' && g_hash_table_add (seen, entries[i]))
          g_strv_builder_add (builder, entries[i]);
    }
  if (plugindir != NULL && plugindir[0] != '\0' && !g_hash_table_contains (seen, plugindir))
    g_strv_builder_add (builder, plugindir);
  return g_strv_builder_end (builder);
}

gboolean
sbx_registry_is_secure_execution (void)
{
  return getauxval (AT_SECURE) != 0;
}

SbxRegistry *
sbx_registry_new_tolerant (const char *const *dirs)
{
  g_autoptr(SbxRegistry) self = g_object_new (SBX_TYPE_REGISTRY, "directories", dirs, NULL);

  self->tolerant = TRUE;
  /* Tolerant: directory problems are listed, never fatal. */
  if (!g_initable_init (G_INITABLE (self), NULL, NULL))
    g_return_val_if_reached (NULL);
  return g_steal_pointer (&self);
}

/**
 * sbx_registry_get_default:
 *
 * Returns the process-wide registry, creating it on first use.
 *
 * It loads, in this order, the directories of the colon-separated
 * `SBX_PLUGIN_PATH` environment variable and the compiled-in plugin directory
 * (`$libdir/sbx-1/plugins`).  `SBX_PLUGIN_PATH` is ignored when the process
 * runs with `AT_SECURE` (setuid, setgid, file capabilities).  When two
 * directories hold a plugin of the same name, the first one wins.  A missing
 * or refused directory does not make this fail; it is listed with its error
 * (see [method@Sbx.Registry.get_directory_error]).
 *
 * Returns: (transfer none): the default registry
 *
 * Since: 0.1
 */
SbxRegistry *
sbx_registry_get_default (void)
{
  static SbxRegistry *default_registry; /* (owned) (atomic) */

  if (g_once_init_enter (&default_registry))
    {
      g_auto(GStrv) dirs = sbx_registry_compute_default_directories (SBX_PLUGINDIR,
                                                                     g_getenv ("SBX_PLUGIN_PATH"),
                                                                     sbx_registry_is_secure_execution ());

      g_once_init_leave (&default_registry, sbx_registry_new_tolerant ((const char *const *) dirs));
    }
  return default_registry;
}

/**
 * sbx_registry_new_for_directories:
 * @dirs: (array zero-terminated=1) (element-type filename): absolute plugin
 *   directories, searched in order
 * @error: return location for a [error@Sbx.PluginError]
 *
 * Creates a registry that loads exactly the plugins of @dirs; the environment
 * (`SBX_PLUGIN_PATH`) plays no part.  Plugins that are refused (unsafe
 * permissions, invalid descriptor, failed init, ...) do not make this fail:
 * they are listed with the reason.
 *
 * Returns: (transfer full) (nullable): a new registry, or %NULL when one of
 *   @dirs cannot be used (missing, not absolute, not a directory, or writable
 *   by group/others or owned by another user:
 *   %SBX_PLUGIN_ERROR_UNSAFE_PERMISSIONS)
 *
 * Since: 0.1
 */
SbxRegistry *
sbx_registry_new_for_directories (const char *const  *dirs,
                                  GError            **error)
{
  g_return_val_if_fail (dirs != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return g_initable_new (SBX_TYPE_REGISTRY, NULL, error, "directories", dirs, NULL);
}

SbxRegistry *
sbx_registry_new_with_host_features (const char *const  *dirs,
                                     uint64_t            features,
                                     GError            **error)
{
  g_autoptr(SbxRegistry) self = NULL;

  g_return_val_if_fail (dirs != NULL, NULL);
  g_return_val_if_fail ((features & ~SBX_HOST_FEATURES_KNOWN) == 0, NULL);

  self = g_initable_new (SBX_TYPE_REGISTRY, NULL, error, NULL);
  if (self == NULL)
    return NULL;
  self->host.features = features;
  for (gsize i = 0; dirs[i] != NULL; i++)
    if (!sbx_registry_add_directory (self, dirs[i], error))
      return NULL;
  return g_steal_pointer (&self);
}

/**
 * sbx_registry_add_directory:
 * @self: a [class@Sbx.Registry]
 * @dir: (type filename): an absolute plugin directory
 * @error: return location for a [error@Sbx.PluginError]
 *
 * Loads the plugins of @dir into @self.  Safe to call while other threads
 * use the registry; plugins are never unloaded.
 *
 * Returns: %TRUE when @dir could be searched (its plugins may still have
 *   been refused individually; they are listed with the reason)
 *
 * Since: 0.1
 */
gboolean
sbx_registry_add_directory (SbxRegistry  *self,
                            const char   *dir,
                            GError      **error)
{
  g_return_val_if_fail (SBX_IS_REGISTRY (self), FALSE);
  g_return_val_if_fail (dir != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  return load_directory (self, dir, error);
}

/* ------------------------------------------------------------------------- */
/* Listing                                                                    */
/* ------------------------------------------------------------------------- */

static gpointer
locked_index (SbxRegistry *self,
              GPtrArray   *array,
              guint        index)
{
  gpointer item = NULL;

  g_mutex_lock (&self->lock);
  if (index < array->len)
    item = array->pdata[index];
  g_mutex_unlock (&self->lock);
  return item;
}

static guint
locked_len (SbxRegistry *self,
            GPtrArray   *array)
{
  guint len;

  g_mutex_lock (&self->lock);
  len = array->len;
  g_mutex_unlock (&self->lock);
  return len;
}

/**
 * sbx_registry_get_n_directories:
 * @self: a [class@Sbx.Registry]
 *
 * Returns the number of plugin directories searched so far.
 *
 * Returns: the number of directories
 *
 * Since: 0.1
 */
guint
sbx_registry_get_n_directories (SbxRegistry *self)
{
  g_return_val_if_fail (SBX_IS_REGISTRY (self), 0);

  return locked_len (self, self->directories);
}

/**
 * sbx_registry_get_directory_path:
 * @self: a [class@Sbx.Registry]
 * @index: less than [method@Sbx.Registry.get_n_directories]
 *
 * Returns the path of directory @index, in search order.
 *
 * Returns: (transfer none) (type filename): the path
 *
 * Since: 0.1
 */
const char *
sbx_registry_get_directory_path (SbxRegistry *self,
                                 guint        index)
{
  DirectoryRecord *record;

  g_return_val_if_fail (SBX_IS_REGISTRY (self), NULL);
  record = locked_index (self, self->directories, index);
  g_return_val_if_fail (record != NULL, NULL);

  return record->path;
}

/**
 * sbx_registry_get_directory_error:
 * @self: a [class@Sbx.Registry]
 * @index: less than [method@Sbx.Registry.get_n_directories]
 *
 * Returns why directory @index could not be searched (missing, not a
 * directory, unsafe permissions), or %NULL when it was searched.
 *
 * Returns: (transfer none) (nullable): the error
 *
 * Since: 0.1
 */
const GError *
sbx_registry_get_directory_error (SbxRegistry *self,
                                  guint        index)
{
  DirectoryRecord *record;

  g_return_val_if_fail (SBX_IS_REGISTRY (self), NULL);
  record = locked_index (self, self->directories, index);
  g_return_val_if_fail (record != NULL, NULL);

  return record->error;
}

/**
 * sbx_registry_get_n_plugins:
 * @self: a [class@Sbx.Registry]
 *
 * Returns the number of plugin files found, loaded or refused.
 *
 * Returns: the number of plugins
 *
 * Since: 0.1
 */
guint
sbx_registry_get_n_plugins (SbxRegistry *self)
{
  g_return_val_if_fail (SBX_IS_REGISTRY (self), 0);

  return locked_len (self, self->plugins);
}

static SbxPlugin *
get_plugin (SbxRegistry *self,
            guint        index)
{
  return locked_index (self, self->plugins, index);
}

/**
 * sbx_registry_get_plugin_name:
 * @self: a [class@Sbx.Registry]
 * @index: less than [method@Sbx.Registry.get_n_plugins]
 *
 * Returns the name of plugin @index, derived from its file name
 * (`sbx-plugin-NAME.so`).
 *
 * Returns: (transfer none): the name
 *
 * Since: 0.1
 */
const char *
sbx_registry_get_plugin_name (SbxRegistry *self,
                              guint        index)
{
  SbxPlugin *plugin;

  g_return_val_if_fail (SBX_IS_REGISTRY (self), NULL);
  plugin = get_plugin (self, index);
  g_return_val_if_fail (plugin != NULL, NULL);

  return plugin->name;
}

/**
 * sbx_registry_get_plugin_path:
 * @self: a [class@Sbx.Registry]
 * @index: less than [method@Sbx.Registry.get_n_plugins]
 *
 * Returns the file of plugin @index.
 *
 * Returns: (transfer none) (type filename): the path
 *
 * Since: 0.1
 */
const char *
sbx_registry_get_plugin_path (SbxRegistry *self,
                              guint        index)
{
  SbxPlugin *plugin;

  g_return_val_if_fail (SBX_IS_REGISTRY (self), NULL);
  plugin = get_plugin (self, index);
  g_return_val_if_fail (plugin != NULL, NULL);

  return plugin->path;
}

/**
 * sbx_registry_get_plugin_version:
 * @self: a [class@Sbx.Registry]
 * @index: less than [method@Sbx.Registry.get_n_plugins]
 *
 * Returns the version plugin @index declares.
 *
 * Returns: (transfer none) (nullable): the version, or %NULL when the plugin
 *   was refused before its descriptor was validated
 *
 * Since: 0.1
 */
const char *
sbx_registry_get_plugin_version (SbxRegistry *self,
                                 guint        index)
{
  SbxPlugin *plugin;

  g_return_val_if_fail (SBX_IS_REGISTRY (self), NULL);
  plugin = get_plugin (self, index);
  g_return_val_if_fail (plugin != NULL, NULL);

  return plugin->version;
}

/**
 * sbx_registry_get_plugin_license:
 * @self: a [class@Sbx.Registry]
 * @index: less than [method@Sbx.Registry.get_n_plugins]
 *
 * Returns the SPDX license identifier plugin @index declares.
 *
 * Returns: (transfer none) (nullable): the license, or %NULL when the plugin
 *   was refused before its descriptor was validated
 *
 * Since: 0.1
 */
const char *
sbx_registry_get_plugin_license (SbxRegistry *self,
                                 guint        index)
{
  SbxPlugin *plugin;

  g_return_val_if_fail (SBX_IS_REGISTRY (self), NULL);
  plugin = get_plugin (self, index);
  g_return_val_if_fail (plugin != NULL, NULL);

  return plugin->license;
}

/**
 * sbx_registry_get_plugin_state:
 * @self: a [class@Sbx.Registry]
 * @index: less than [method@Sbx.Registry.get_n_plugins]
 *
 * Returns whether plugin @index is loaded or was refused.
 *
 * Returns: the state
 *
 * Since: 0.1
 */
SbxPluginState
sbx_registry_get_plugin_state (SbxRegistry *self,
                               guint        index)
{
  SbxPlugin *plugin;

  g_return_val_if_fail (SBX_IS_REGISTRY (self), SBX_PLUGIN_STATE_REFUSED);
  plugin = get_plugin (self, index);
  g_return_val_if_fail (plugin != NULL, SBX_PLUGIN_STATE_REFUSED);

  return plugin->state;
}

/**
 * sbx_registry_get_plugin_error:
 * @self: a [class@Sbx.Registry]
 * @index: less than [method@Sbx.Registry.get_n_plugins]
 *
 * Returns why plugin @index was refused: a [error@Sbx.PluginError] whose
 * message names the plugin, the file and the fault (for permissions, the
 * mode).
 *
 * Returns: (transfer none) (nullable): the error, or %NULL for a loaded
 *   plugin
 *
 * Since: 0.1
 */
const GError *
sbx_registry_get_plugin_error (SbxRegistry *self,
                               guint        index)
{
  SbxPlugin *plugin;

  g_return_val_if_fail (SBX_IS_REGISTRY (self), NULL);
  plugin = get_plugin (self, index);
  g_return_val_if_fail (plugin != NULL, NULL);

  return plugin->error;
}

/**
 * sbx_registry_get_n_extensions:
 * @self: a [class@Sbx.Registry]
 *
 * Returns the number of registered extensions (backends, egress routes and
 * reporters) of loaded plugins.
 *
 * Returns: the number of extensions
 *
 * Since: 0.1
 */
guint
sbx_registry_get_n_extensions (SbxRegistry *self)
{
  g_return_val_if_fail (SBX_IS_REGISTRY (self), 0);

  return locked_len (self, self->extensions);
}

static ExtensionRecord *
get_extension (SbxRegistry *self,
               guint        index)
{
  return locked_index (self, self->extensions, index);
}

/**
 * sbx_registry_get_extension_name:
 * @self: a [class@Sbx.Registry]
 * @index: less than [method@Sbx.Registry.get_n_extensions]
 *
 * Returns the name of extension @index ("linux-userns").  Names are unique
 * across the registry.
 *
 * Returns: (transfer none): the name
 *
 * Since: 0.1
 */
const char *
sbx_registry_get_extension_name (SbxRegistry *self,
                                 guint        index)
{
  ExtensionRecord *ext;

  g_return_val_if_fail (SBX_IS_REGISTRY (self), NULL);
  ext = get_extension (self, index);
  g_return_val_if_fail (ext != NULL, NULL);

  return ext->name;
}

/**
 * sbx_registry_get_extension_kind:
 * @self: a [class@Sbx.Registry]
 * @index: less than [method@Sbx.Registry.get_n_extensions]
 *
 * Returns the kind of extension @index.
 *
 * Returns: the kind
 *
 * Since: 0.1
 */
SbxExtensionKind
sbx_registry_get_extension_kind (SbxRegistry *self,
                                 guint        index)
{
  ExtensionRecord *ext;

  g_return_val_if_fail (SBX_IS_REGISTRY (self), SBX_EXTENSION_KIND_BACKEND);
  ext = get_extension (self, index);
  g_return_val_if_fail (ext != NULL, SBX_EXTENSION_KIND_BACKEND);

  return ext->kind;
}

/**
 * sbx_registry_get_extension_plugin:
 * @self: a [class@Sbx.Registry]
 * @index: less than [method@Sbx.Registry.get_n_extensions]
 *
 * Returns the name of the plugin that provides extension @index.
 *
 * Returns: (transfer none): the plugin name
 *
 * Since: 0.1
 */
const char *
sbx_registry_get_extension_plugin (SbxRegistry *self,
                                   guint        index)
{
  ExtensionRecord *ext;

  g_return_val_if_fail (SBX_IS_REGISTRY (self), NULL);
  ext = get_extension (self, index);
  g_return_val_if_fail (ext != NULL, NULL);

  return ext->plugin->name;
}

/**
 * sbx_registry_get_extension_priority:
 * @self: a [class@Sbx.Registry]
 * @index: less than [method@Sbx.Registry.get_n_extensions]
 *
 * Returns the priority of extension @index; higher is tried first,
 * negative means last resort.
 *
 * Returns: the priority
 *
 * Since: 0.1
 */
int
sbx_registry_get_extension_priority (SbxRegistry *self,
                                     guint        index)
{
  ExtensionRecord *ext;

  g_return_val_if_fail (SBX_IS_REGISTRY (self), 0);
  ext = get_extension (self, index);
  g_return_val_if_fail (ext != NULL, 0);

  return ext->priority;
}

SbxBackend *
sbx_registry_lookup_backend (SbxRegistry *self,
                             const char  *name)
{
  SbxBackend *backend = NULL;

  g_return_val_if_fail (SBX_IS_REGISTRY (self), NULL);
  g_return_val_if_fail (name != NULL, NULL);

  g_mutex_lock (&self->lock);
  for (guint i = 0; i < self->extensions->len && backend == NULL; i++)
    {
      ExtensionRecord *ext = self->extensions->pdata[i];

      if (ext->kind == SBX_EXTENSION_KIND_BACKEND && g_str_equal (ext->name, name))
        backend = sbx_backend_ref (ext->backend);
    }
  g_mutex_unlock (&self->lock);
  return backend;
}

/**
 * sbx_registry_probe_backend:
 * @self: a [class@Sbx.Registry]
 * @name: a backend extension name
 * @out_unconfined_only: (out) (optional): whether the backend accepts only
 *   acknowledged Unconfined profiles
 * @error: return location for a [error@Sbx.PluginError]
 *
 * Probes backend @name (once per registry: a successful probe is cached)
 * and returns what it measured on this host: a report whose level and
 * guarantees are the backend's best on this host, with one entry per
 * mechanism (a missing one carries a "Hint: ..." in its detail).  Its
 * "required" set is empty.
 *
 * Returns: (transfer full) (nullable): the probe report, or %NULL with
 *   @error set when there is no such backend or its probe failed
 *
 * Since: 0.1
 */
SbxCompileReport *
sbx_registry_probe_backend (SbxRegistry  *self,
                            const char   *name,
                            gboolean     *out_unconfined_only,
                            GError      **error)
{
  g_autoptr(SbxBackend) backend = NULL;
  SbxCompileReport *report = NULL;

  g_return_val_if_fail (SBX_IS_REGISTRY (self), NULL);
  g_return_val_if_fail (name != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  backend = sbx_registry_lookup_backend (self, name);
  if (backend == NULL)
    {
      sbx_set_plugin_error (error, SBX_PLUGIN_ERROR_BACKEND_UNAVAILABLE,
                            "no loaded backend is called '%s'", name);
      return NULL;
    }
  if (!sbx_backend_probe (backend, &report, error))
    return NULL;
  if (out_unconfined_only != NULL)
    *out_unconfined_only = sbx_backend_is_unconfined_only (backend);
  return report;
}

/* ------------------------------------------------------------------------- */
/* Selection                                                                  */
/* ------------------------------------------------------------------------- */

typedef struct
{
  gboolean  help;
  char     *select;   /* (nullable) */
  GStrv     vetoes;
} ForcedBackend;

static void
forced_backend_clear (ForcedBackend *forced)
{
  g_clear_pointer (&forced->select, g_free);
  g_clear_pointer (&forced->vetoes, g_strfreev);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (ForcedBackend, forced_backend_clear)

/* SBX_BACKEND syntax: a comma-separated list of items.  "name" selects that
 * backend (at most one); "-name" or "!name" vetoes one; "help" lists the
 * candidates.  Empty means unset. */
static gboolean
parse_forced_backend (const char     *value,
                      ForcedBackend  *forced,
                      GError        **error)
{
  g_auto(GStrv) items = NULL;
  g_autoptr(GStrvBuilder) vetoes = g_strv_builder_new ();

  memset (forced, 0, sizeof *forced);
  if (value != NULL)
    items = g_strsplit (value, ",", -1);
  for (guint i = 0; items != NULL && items[i] != NULL; i++)
    {
      const char *item = g_strstrip (items[i]);

      if (item[0] == '\0')
        continue;
      if (g_str_equal (item, "help"))
        forced->help = TRUE;
      else if (item[0] == '-' || item[0] == '!')
        {
          if (!name_is_well_formed (item + 1))
            return sbx_set_plugin_error (error, SBX_PLUGIN_ERROR_BACKEND_UNAVAILABLE,
                                         "SBX_BACKEND='%s': '%s' is not a backend name to veto", value, item);
          g_strv_builder_add (vetoes, item + 1);
        }
      else
        {
          if (!name_is_well_formed (item))
            return sbx_set_plugin_error (error, SBX_PLUGIN_ERROR_BACKEND_UNAVAILABLE,
                                         "SBX_BACKEND='%s': '%s' is not a backend name", value, item);
          if (forced->select != NULL)
            return sbx_set_plugin_error (error, SBX_PLUGIN_ERROR_BACKEND_UNAVAILABLE,
                                         "SBX_BACKEND='%s' selects more than one backend", value);
          forced->select = g_strdup (item);
        }
    }
  forced->vetoes = g_strv_builder_end (vetoes);
  return TRUE;
}

static int
compare_backends (gconstpointer a,
                  gconstpointer b)
{
  SbxBackend *x = *(SbxBackend *const *) a;
  SbxBackend *y = *(SbxBackend *const *) b;
  int px = sbx_backend_get_priority (x);
  int py = sbx_backend_get_priority (y);

  if (px != py)
    return px > py ? -1 : 1;
  return sbx_backend_get_load_index (x) < sbx_backend_get_load_index (y) ? -1 : 1;
}

/* Copies, under the lock, the backends in selection order and the refused
 * plugins. */
static void
snapshot_candidates (SbxRegistry  *self,
                     GPtrArray   **out_backends,
                     GPtrArray   **out_refused)
{
  GPtrArray *backends = g_ptr_array_new_with_free_func ((GDestroyNotify) sbx_backend_unref);
  GPtrArray *refused = g_ptr_array_new_with_free_func ((GDestroyNotify) sbx_plugin_unref);

  g_mutex_lock (&self->lock);
  for (guint i = 0; i < self->extensions->len; i++)
    {
      ExtensionRecord *ext = self->extensions->pdata[i];

      if (ext->kind == SBX_EXTENSION_KIND_BACKEND)
        g_ptr_array_add (backends, sbx_backend_ref (ext->backend));
    }
  for (guint i = 0; i < self->plugins->len; i++)
    {
      SbxPlugin *plugin = self->plugins->pdata[i];

      if (plugin->state == SBX_PLUGIN_STATE_REFUSED)
        g_ptr_array_add (refused, sbx_plugin_ref (plugin));
    }
  g_mutex_unlock (&self->lock);

  g_ptr_array_sort (backends, compare_backends);
  *out_backends = backends;
  *out_refused = refused;
}

/* Decides whether a probed backend fits.  Returns NULL when it does, else the
 * reason (transfer full). */
static char *
check_candidate (SbxBackend                *backend,
                 const SbxBackendSelection *selection)
{
  SbxLevel level = sbx_backend_get_probe_level (backend);
  SbxGuarantees guarantees = sbx_backend_get_probe_guarantees (backend);
  gboolean unconfined_only = sbx_backend_is_unconfined_only (backend);
  SbxGuarantees missing;

  if (selection->unconfined && !unconfined_only)
    return g_strdup ("not an unconfined-only backend; an Unconfined profile runs only on one "
                     "(it would otherwise look confined when it is not)");
  if (!selection->unconfined)
    {
      if (unconfined_only)
        return g_strdup ("unconfined-only backend: never used for a Sandboxed profile");
      if (level < SBX_LEVEL_DEGRADED)
        return g_strdup_printf ("level %s on this host; a Sandboxed profile needs degraded or full",
                                sbx_level_to_string (level));
    }
  missing = selection->required_guarantees & ~guarantees;
  if (missing != 0)
    {
      g_auto(GStrv) names = sbx_guarantees_to_strv (missing);
      g_autofree char *joined = g_strjoinv (", ", names);

      return g_strdup_printf ("missing required guarantees: %s (level %s)", joined, sbx_level_to_string (level));
    }
  return NULL;
}

static char *
describe_candidate (SbxBackend *backend)
{
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) names = NULL;
  g_autofree char *joined = NULL;

  if (!sbx_backend_probe (backend, NULL, &error))
    return g_strdup_printf ("%s (plugin %s, priority %d): %s",
                            sbx_backend_get_name (backend), sbx_backend_get_plugin_name (backend),
                            sbx_backend_get_priority (backend), error->message);
  names = sbx_guarantees_to_strv (sbx_backend_get_probe_guarantees (backend));
  joined = g_strjoinv (", ", names);
  return g_strdup_printf ("%s (plugin %s, priority %d): level %s%s, guarantees [%s]",
                          sbx_backend_get_name (backend), sbx_backend_get_plugin_name (backend),
                          sbx_backend_get_priority (backend),
                          sbx_level_to_string (sbx_backend_get_probe_level (backend)),
                          sbx_backend_is_unconfined_only (backend) ? ", unconfined-only" : "",
                          joined);
}

/*
 * SBX_BACKEND=help: every candidate is probed and listed — in the error
 * message (which `sbx run` prints before exiting 125) and as "rejected"
 * entries of the report — and selection then FAILS with
 * SBX_PLUGIN_ERROR_BACKEND_UNAVAILABLE.  Unlike GIO's print_help we do not
 * continue with the default choice: someone asking which backends exist
 * should not have their command run under a backend they did not pick, and
 * the library never prints on its own (R6).
 */
static SbxBackend *
select_help (GPtrArray        *backends,
             SbxCompileReport *report,
             GError          **error)
{
  g_autoptr(GString) listing = g_string_new ("SBX_BACKEND=help: candidates in priority order:");

  for (guint i = 0; i < backends->len; i++)
    {
      g_autofree char *line = describe_candidate (backends->pdata[i]);

      g_string_append_printf (listing, "\n  %s", line);
      sbx_compile_report_add_rejected (report, sbx_backend_get_name (backends->pdata[i]),
                                       "SBX_BACKEND=help: listed, not selected");
    }
  if (backends->len == 0)
    g_string_append (listing, "\n  (no backend plugin is loaded)");
  g_string_append (listing, "\nNo backend was selected. Unset SBX_BACKEND, or set it to one of these names "
                            "(or to -NAME to veto one).");
  sbx_set_plugin_error (error, SBX_PLUGIN_ERROR_BACKEND_UNAVAILABLE, "%s", listing->str);
  return NULL;
}

SbxBackend *
sbx_registry_select_backend (SbxRegistry               *self,
                             const SbxBackendSelection *selection,
                             SbxCompileReport          *report,
                             GError                   **error)
{
  g_autoptr(SbxCompileReport) local_report = NULL;
  g_autoptr(GPtrArray) backends = NULL;
  g_autoptr(GPtrArray) refused = NULL;
  g_autoptr(GString) reasons = g_string_new (NULL);
  g_auto(ForcedBackend) forced = { 0 };
  const char *forced_text;
  gboolean found_selected = FALSE;

  g_return_val_if_fail (SBX_IS_REGISTRY (self), NULL);
  g_return_val_if_fail (selection != NULL, NULL);
  g_return_val_if_fail (report == NULL || !sbx_compile_report_is_frozen (report), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (report == NULL)
    report = local_report = sbx_compile_report_new ();
  sbx_compile_report_set_required (report, selection->required_guarantees);

  forced_text = selection->forced_backend != NULL ? selection->forced_backend : g_getenv ("SBX_BACKEND");
  if (!parse_forced_backend (forced_text, &forced, error))
    return NULL;

  snapshot_candidates (self, &backends, &refused);

  /* Refused plugins are candidates that never made it: say so. */
  for (guint i = 0; i < refused->len; i++)
    {
      SbxPlugin *plugin = refused->pdata[i];
      g_autofree char *reason = g_strdup_printf ("plugin refused at load: %s", plugin->error->message);

      sbx_compile_report_add_rejected (report, plugin->name, reason);
    }

  if (forced.help)
    return select_help (backends, report, error);

  for (guint i = 0; i < backends->len && forced.select != NULL; i++)
    if (g_str_equal (sbx_backend_get_name (backends->pdata[i]), forced.select))
      found_selected = TRUE;
  if (forced.select != NULL && !found_selected)
    {
      g_autoptr(GString) loaded = g_string_new (NULL);

      for (guint i = 0; i < backends->len; i++)
        g_string_append_printf (loaded, "%s%s", i > 0 ? ", " : "", sbx_backend_get_name (backends->pdata[i]));
      sbx_compile_report_add_rejected (report, forced.select, "SBX_BACKEND names it, but no loaded plugin provides it");
      sbx_set_plugin_error (error, SBX_PLUGIN_ERROR_BACKEND_UNAVAILABLE,
                            "SBX_BACKEND=%s: no loaded plugin provides a backend of that name "
                            "(loaded backends: %s); there is no fallback to another backend",
                            forced.select, loaded->len > 0 ? loaded->str : "none");
      return NULL;
    }

  for (guint i = 0; i < backends->len; i++)
    {
      SbxBackend *backend = backends->pdata[i];
      const char *name = sbx_backend_get_name (backend);
      g_autoptr(GError) probe_error = NULL;
      g_autofree char *reason = NULL;

      if (forced.select != NULL && !g_str_equal (name, forced.select))
        reason = g_strdup_printf ("not selected (SBX_BACKEND=%s)", forced.select);
      else if (forced.vetoes != NULL && g_strv_contains ((const char *const *) forced.vetoes, name))
        reason = g_strdup ("vetoed by SBX_BACKEND");
      else if (!sbx_backend_probe (backend, NULL, &probe_error))
        reason = g_strdup (probe_error->message);  /* "plugin 'P', extension 'E': probe failed: ..." */
      else
        reason = check_candidate (backend, selection);

      if (reason == NULL)
        {
          sbx_compile_report_set_backend (report, name);
          sbx_compile_report_set_level (report, sbx_backend_get_probe_level (backend));
          sbx_compile_report_set_guarantees (report, sbx_backend_get_probe_guarantees (backend));
          return sbx_backend_ref (backend);
        }
      sbx_compile_report_add_rejected (report, name, reason);
      if (forced.select == NULL || g_str_equal (name, forced.select))
        g_string_append_printf (reasons, "; %s: %s", name, reason);
    }

  if (forced.select != NULL)
    sbx_set_plugin_error (error, SBX_PLUGIN_ERROR_BACKEND_UNAVAILABLE,
                          "SBX_BACKEND=%s: that backend cannot run this profile%s; there is no fallback to "
                          "another backend", forced.select, reasons->str);
  else if (backends->len == 0)
    sbx_set_plugin_error (error, SBX_PLUGIN_ERROR_BACKEND_UNAVAILABLE,
                          "no backend plugin is loaded%s. Hint: run 'sbx doctor' to see the plugin "
                          "directories searched and the plugins refused",
                          refused->len > 0 ? " (some plugins were refused)" : "");
  else
    sbx_set_plugin_error (error, SBX_PLUGIN_ERROR_BACKEND_UNAVAILABLE,
                          "no backend can run this %s profile%s. Hint: run 'sbx doctor' for what this "
                          "host provides",
                          selection->unconfined ? "Unconfined" : "Sandboxed", reasons->str);
  return NULL;
}

/**
 * sbx_registry_preview_selection:
 * @self: a [class@Sbx.Registry]
 * @isolation: the profile's isolation
 * @required: the guarantees the profile requires
 * @out_report: (out) (optional) (transfer full): the selection report, set
 *   whether or not a backend was found
 * @error: return location for a [error@Sbx.PluginError]
 *
 * Runs backend selection as an executor set would for a profile with
 * @isolation and @required (honouring `SBX_BACKEND`) without compiling
 * anything: the report names the backend that would be chosen, its probed
 * level and guarantees, and every rejected candidate with the reason.
 *
 * Returns: %TRUE when a backend would be selected
 *
 * Since: 0.1
 */
gboolean
sbx_registry_preview_selection (SbxRegistry       *self,
                                SbxIsolation       isolation,
                                SbxGuarantees      required,
                                SbxCompileReport **out_report,
                                GError           **error)
{
  g_autoptr(SbxCompileReport) report = sbx_compile_report_new ();
  g_autoptr(SbxBackend) backend = NULL;
  SbxBackendSelection selection = { 0 };

  g_return_val_if_fail (SBX_IS_REGISTRY (self), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  selection.unconfined = isolation == SBX_ISOLATION_UNCONFINED;
  selection.required_guarantees = required;
  backend = sbx_registry_select_backend (self, &selection, report, error);
  sbx_compile_report_freeze (report);
  if (out_report != NULL)
    *out_report = g_steal_pointer (&report);
  return backend != NULL;
}

/* Removes the placeholder tree explain made (depth 2: set/{home,tmp,state}). */
static void
remove_explain_dirs (const char *set_dir)
{
  static const char *const children[] = { "home", "tmp", "state" };

  for (gsize i = 0; i < G_N_ELEMENTS (children); i++)
    {
      g_autofree char *child = g_build_filename (set_dir, children[i], NULL);

      g_rmdir (child);
    }
  g_rmdir (set_dir);
}

/**
 * sbx_registry_explain_profile:
 * @self: a [class@Sbx.Registry]
 * @backend: (nullable): a backend extension name, or %NULL for the backend
 *   an executor set would select for @profile on this host
 * @profile: the profile to explain
 * @out_report: (out) (optional) (transfer full): the entries the backend
 *   reported while compiling (narrowed, widened, unenforced ...)
 * @error: return location for a [error@Sbx.PluginError]
 *
 * Prints what @backend would compile for @profile: mount operations,
 * Landlock rules and the seccomp summary for the Linux backends, the SBPL
 * text for darwin-seatbelt, the token and job settings for win32-restricted.
 * A named backend is explained even where its probe fails (its compiler is
 * portable); nothing is spawned.  The executor's HOME, TMPDIR and state
 * directories are stand-ins created for the call (and removed after it), so
 * their names differ from a real run's.
 *
 * Returns: (transfer full) (nullable): the explanation (UTF-8), or %NULL
 *   with @error set when there is no such backend, it cannot explain, or
 *   the profile cannot be compiled by it
 *
 * Since: 0.1
 */
char *
sbx_registry_explain_profile (SbxRegistry       *self,
                              const char        *backend,
                              SbxProfile        *profile,
                              SbxCompileReport **out_report,
                              GError           **error)
{
  g_autoptr(SbxCompileReport) report = sbx_compile_report_new ();
  g_autoptr(SbxBackend) chosen = NULL;
  g_autoptr(SbxPolicy) policy = NULL;
  g_autofree char *set_dir = NULL;
  g_autofree char *home = NULL;
  g_autofree char *tmpdir = NULL;
  g_autofree char *state_dir = NULL;
  g_autofree char *template = NULL;
  SbxPolicyDirs dirs = { 0 };
  char *text;

  g_return_val_if_fail (SBX_IS_REGISTRY (self), NULL);
  g_return_val_if_fail (profile != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (backend != NULL)
    {
      chosen = sbx_registry_lookup_backend (self, backend);
      if (chosen == NULL)
        {
          sbx_set_plugin_error (error, SBX_PLUGIN_ERROR_BACKEND_UNAVAILABLE,
                                "no loaded backend is called '%s'", backend);
          return NULL;
        }
    }
  else
    {
      g_autoptr(SbxCompileReport) selection_report = sbx_compile_report_new ();
      SbxBackendSelection selection = { 0 };

      selection.unconfined = sbx_profile_get_isolation (profile) == SBX_ISOLATION_UNCONFINED;
      selection.required_guarantees = sbx_profile_get_required_guarantees (profile);
      chosen = sbx_registry_select_backend (self, &selection, selection_report, error);
      if (chosen == NULL)
        return NULL;
    }

  /* Stand-in executor directories: a backend may open them while it
   * compiles, so they exist for the duration of the call. */
  template = g_build_filename (g_get_tmp_dir (), "sbx-explain-XXXXXX", NULL);
  set_dir = g_mkdtemp_full (template, 0700) != NULL ? g_strdup (template) : NULL;
  if (set_dir == NULL)
    {
      int errsv = errno;

      sbx_set_plugin_error (error, SBX_PLUGIN_ERROR_FAILED, "explain: cannot create %s: %s",
                            template, g_strerror (errsv));
      return NULL;
    }
  home = g_build_filename (set_dir, "home", NULL);
  tmpdir = g_build_filename (set_dir, "tmp", NULL);
  state_dir = g_build_filename (set_dir, "state", NULL);
  if (g_mkdir (home, 0700) != 0 || g_mkdir (tmpdir, 0700) != 0 || g_mkdir (state_dir, 0700) != 0)
    {
      int errsv = errno;

      remove_explain_dirs (set_dir);
      sbx_set_plugin_error (error, SBX_PLUGIN_ERROR_FAILED,
                            "explain: cannot create the stand-in directories under %s: %s",
                            set_dir, g_strerror (errsv));
      return NULL;
    }
  dirs.home = home;
  dirs.home_owned = sbx_profile_get_home (profile) == SBX_HOME_ISOLATED;
  if (!dirs.home_owned)
    dirs.home = g_get_home_dir ();
  dirs.tmpdir = tmpdir;
  dirs.state_dir = state_dir;
  dirs.set_dir = set_dir;
  policy = sbx_policy_new_for_profile (profile, &dirs);

  text = sbx_backend_explain (chosen, sbx_policy_get_abi (policy), report, error);
  remove_explain_dirs (set_dir);
  if (text == NULL)
    return NULL;
  sbx_compile_report_set_backend (report, sbx_backend_get_name (chosen));
  sbx_compile_report_freeze (report);
  if (out_report != NULL)
    *out_report = g_steal_pointer (&report);
  return text;
}

/* ------------------------------------------------------------------------- */
/* Reporter sinks                                                             */
/* ------------------------------------------------------------------------- */

struct _SbxReporterSink
{
  SbxPlugin                 *plugin;   /* (owned) */
  char                      *name;
  const SbxReporterVTableV1 *vtable;
  void                      *sink;
  gint                       n_failures;  /* (atomic) */
};

SbxReporterSink *
sbx_registry_open_reporter (SbxRegistry  *self,
                            const char   *name,
                            const char   *config,
                            GError      **error)
{
  g_autoptr(SbxPlugin) plugin = NULL;
  const SbxReporterVTableV1 *vtable = NULL;
  SbxReporterSink *sink;
  SbxHostCall call;
  void *plugin_sink = NULL;
  int32_t status;

  g_return_val_if_fail (SBX_IS_REGISTRY (self), NULL);
  g_return_val_if_fail (name != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  g_mutex_lock (&self->lock);
  for (guint i = 0; i < self->extensions->len && plugin == NULL; i++)
    {
      ExtensionRecord *ext = self->extensions->pdata[i];

      if (ext->kind == SBX_EXTENSION_KIND_REPORTER && g_str_equal (ext->name, name))
        {
          plugin = sbx_plugin_ref (ext->plugin);
          vtable = ext->vtable;
        }
    }
  g_mutex_unlock (&self->lock);
  if (plugin == NULL)
    {
      sbx_set_plugin_error (error, SBX_PLUGIN_ERROR_UNAVAILABLE, "no loaded reporter is called '%s'", name);
      return NULL;
    }

  sbx_host_call_init (&call, plugin->name, name, "open", NULL);
  status = vtable->open (plugin->ctx, &call, config, &plugin_sink);
  if (status != SBX_STATUS_OK)
    {
      sbx_host_call_fail (&call, status, error);
      sbx_host_call_clear (&call);
      return NULL;
    }
  sbx_host_call_clear (&call);

  sink = g_new0 (SbxReporterSink, 1);
  sink->plugin = g_steal_pointer (&plugin);
  sink->name = g_strdup (name);
  sink->vtable = vtable;
  sink->sink = plugin_sink;
  return sink;
}

void
sbx_reporter_sink_emit (SbxReporterSink *sink,
                        const char      *event_json)
{
  SbxHostCall call;
  int32_t status;

  g_return_if_fail (sink != NULL);
  g_return_if_fail (event_json != NULL);

  sbx_host_call_init (&call, sink->plugin->name, sink->name, "emit", NULL);
  status = sink->vtable->emit (sink->plugin->ctx, &call, sink->sink, event_json, strlen (event_json));
  if (status != SBX_STATUS_OK)
    {
      g_autoptr(GError) error = NULL;
      /* Logged and counted, never propagated: a reporter cannot change what
       * the sandbox does.  The first failure is visible (MESSAGE, not
       * WARNING, which test harnesses make fatal), later ones are debug. */
      gboolean first = g_atomic_int_add (&sink->n_failures, 1) == 0;

      sbx_host_call_fail (&call, status, &error);
      g_log_structured (G_LOG_DOMAIN, first ? G_LOG_LEVEL_MESSAGE : G_LOG_LEVEL_DEBUG,
                        "SBX_REPORTER", sink->name,
                        "MESSAGE", "reporter event dropped: %s", error->message);
    }
  sbx_host_call_clear (&call);
}

guint
sbx_reporter_sink_get_n_failures (SbxReporterSink *sink)
{
  g_return_val_if_fail (sink != NULL, 0);

  return (guint) g_atomic_int_get (&sink->n_failures);
}

void
sbx_reporter_sink_close (SbxReporterSink *sink)
{
  if (sink == NULL)
    return;
  sink->vtable->close (sink->plugin->ctx, sink->sink);
  sbx_plugin_unref (sink->plugin);
  g_free (sink->name);
  g_free (sink);
}

/* ------------------------------------------------------------------------- */
/* JSON listing                                                               */
/* ------------------------------------------------------------------------- */

static const char *
plugin_error_nick (const GError *error)
{
  GEnumClass *klass;
  GEnumValue *value;

  if (error == NULL || error->domain != SBX_PLUGIN_ERROR)
    return NULL;
  klass = g_type_class_ref (SBX_TYPE_PLUGIN_ERROR);
  value = g_enum_get_value (klass, error->code);
  g_type_class_unref (klass);
  return value != NULL ? value->value_nick : NULL;
}

static void
add_error_members (JsonBuilder  *builder,
                   const GError *error)
{
  const char *nick = plugin_error_nick (error);

  json_builder_set_member_name (builder, "error");
  if (error != NULL)
    json_builder_add_string_value (builder, error->message);
  else
    json_builder_add_null_value (builder);
  json_builder_set_member_name (builder, "error_code");
  if (nick != NULL)
    json_builder_add_string_value (builder, nick);
  else
    json_builder_add_null_value (builder);
}

static void
add_nullable_string (JsonBuilder *builder,
                     const char  *member,
                     const char  *value)
{
  json_builder_set_member_name (builder, member);
  if (value != NULL)
    json_builder_add_string_value (builder, value);
  else
    json_builder_add_null_value (builder);
}

/**
 * sbx_registry_to_json:
 * @self: a [class@Sbx.Registry]
 *
 * Describes the registry as one JSON object (what `sbx doctor --json`
 * prints), probing every backend first (probes are cached):
 *
 * ```json
 * {"schema":1,
 *  "directories":[{"path":"...","error":null,"error_code":null}],
 *  "plugins":[{"name":"linux","path":"...","state":"loaded","version":"0.1.0",
 *              "license":"LGPL-2.1-or-later","error":null,"error_code":null}],
 *  "backends":[{"name":"linux-userns","plugin":"linux","priority":100,
 *               "probe":{"ok":true,"level":"full","guarantees":[...],
 *                        "unconfined_only":false,"entries":[...]}}],
 *  "egress":[{"name":"...","plugin":"...","priority":0}],
 *  "reporters":[{"name":"...","plugin":"...","priority":0}]}
 * ```
 *
 * A failed probe is `"probe":{"ok":false,"error":"...","error_code":"..."}`;
 * a refused plugin has `"state":"refused"` and its error.
 *
 * Returns: (transfer full): the JSON text, without a trailing newline
 *
 * Since: 0.1
 */
char *
sbx_registry_to_json (SbxRegistry *self)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonNode) root = NULL;
  static const struct
  {
    SbxExtensionKind kind;
    const char      *member;
  } kinds[] = {
    { SBX_EXTENSION_KIND_BACKEND, "backends" },
    { SBX_EXTENSION_KIND_EGRESS, "egress" },
    { SBX_EXTENSION_KIND_REPORTER, "reporters" },
  };
  guint n;

  g_return_val_if_fail (SBX_IS_REGISTRY (self), NULL);

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "schema");
  json_builder_add_int_value (builder, 1);

  json_builder_set_member_name (builder, "directories");
  json_builder_begin_array (builder);
  n = sbx_registry_get_n_directories (self);
  for (guint i = 0; i < n; i++)
    {
      json_builder_begin_object (builder);
      add_nullable_string (builder, "path", sbx_registry_get_directory_path (self, i));
      add_error_members (builder, sbx_registry_get_directory_error (self, i));
      json_builder_end_object (builder);
    }
  json_builder_end_array (builder);

  json_builder_set_member_name (builder, "plugins");
  json_builder_begin_array (builder);
  n = sbx_registry_get_n_plugins (self);
  for (guint i = 0; i < n; i++)
    {
      json_builder_begin_object (builder);
      add_nullable_string (builder, "name", sbx_registry_get_plugin_name (self, i));
      add_nullable_string (builder, "path", sbx_registry_get_plugin_path (self, i));
      add_nullable_string (builder, "state",
                           sbx_registry_get_plugin_state (self, i) == SBX_PLUGIN_STATE_LOADED ? "loaded" : "refused");
      add_nullable_string (builder, "version", sbx_registry_get_plugin_version (self, i));
      add_nullable_string (builder, "license", sbx_registry_get_plugin_license (self, i));
      add_error_members (builder, sbx_registry_get_plugin_error (self, i));
      json_builder_end_object (builder);
    }
  json_builder_end_array (builder);

  n = sbx_registry_get_n_extensions (self);
  for (guint k = 0; k < G_N_ELEMENTS (kinds); k++)
    {
      json_builder_set_member_name (builder, kinds[k].member);
      json_builder_begin_array (builder);
      for (guint i = 0; i < n; i++)
        {
          const char *name = sbx_registry_get_extension_name (self, i);

          if (sbx_registry_get_extension_kind (self, i) != kinds[k].kind)
            continue;
          json_builder_begin_object (builder);
          add_nullable_string (builder, "name", name);
          add_nullable_string (builder, "plugin", sbx_registry_get_extension_plugin (self, i));
          json_builder_set_member_name (builder, "priority");
          json_builder_add_int_value (builder, sbx_registry_get_extension_priority (self, i));
          if (kinds[k].kind == SBX_EXTENSION_KIND_BACKEND)
            {
              g_autoptr(GError) error = NULL;
              gboolean unconfined_only = FALSE;
              g_autoptr(SbxCompileReport) probe = sbx_registry_probe_backend (self, name, &unconfined_only, &error);

              json_builder_set_member_name (builder, "probe");
              json_builder_begin_object (builder);
              json_builder_set_member_name (builder, "ok");
              json_builder_add_boolean_value (builder, probe != NULL);
              if (probe != NULL)
                {
                  g_autoptr(JsonNode) node = sbx_compile_report_to_json_node (probe);
                  JsonObject *object = json_node_get_object (node);
                  const char *members[] = { "level", "guarantees", "entries" };

                  for (guint m = 0; m < G_N_ELEMENTS (members); m++)
                    {
                      json_builder_set_member_name (builder, members[m]);
                      json_builder_add_value (builder, json_node_copy (json_object_get_member (object, members[m])));
                    }
                  json_builder_set_member_name (builder, "unconfined_only");
                  json_builder_add_boolean_value (builder, unconfined_only);
                }
              else
                add_error_members (builder, error);
              json_builder_end_object (builder);
            }
          json_builder_end_object (builder);
        }
      json_builder_end_array (builder);
    }
  json_builder_end_object (builder);

  root = json_builder_get_root (builder);
  return json_to_string (root, FALSE);
}
