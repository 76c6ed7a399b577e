/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "sbx-executor-set-options-private.h"

/**
 * SbxExecutorSetOptions:
 *
 * A builder for the options of [ctor@Sbx.ExecutorSet.new].  The options are
 * checked when the set is created, not when they are set:
 *
 * - the scratch root is an existing directory the caller owns, in which the
 *   set creates (and at close removes) its own private child; without one,
 *   `$XDG_RUNTIME_DIR/sbx` (created with mode 0700) or, when
 *   `$XDG_RUNTIME_DIR` is unset or unusable, the temporary directory;
 * - the maximum number of executors is a hard cap on the distinct keys of
 *   the set's lifetime; 0 (unset) gives
 *   %SBX_EXECUTOR_SET_DEFAULT_MAX_EXECUTORS, a negative value is refused;
 * - the grant TTL defaults to %SBX_EXECUTOR_SET_DEFAULT_GRANT_TTL and, when
 *   set, must be positive;
 * - the registry defaults to [func@Sbx.Registry.get_default];
 * - reporters are plugin reporter extensions, each with its own config
 *   (for "jsonl", the path of the log file);
 * - a forced backend name selects among the loaded backends (like
 *   `SBX_BACKEND`, which it overrides); there is never a fallback.
 *
 * Since: 0.1
 */
struct _SbxExecutorSetOptions
{
  char        *scratch_root;
  int          max_executors;
  GTimeSpan    grant_ttl;
  SbxRegistry *registry;
  GPtrArray   *reporter_names;
  GPtrArray   *reporter_configs;
  char        *backend;
  SbxEgressRoute *egress_route;
  char        *egress_extension;
};

G_DEFINE_BOXED_TYPE (SbxExecutorSetOptions, sbx_executor_set_options,
                     sbx_executor_set_options_copy, sbx_executor_set_options_free)

/**
 * sbx_executor_set_options_new:
 *
 * Creates empty options: every value has its default (see
 * [struct@Sbx.ExecutorSetOptions]).
 *
 * Returns: (transfer full): new options
 *
 * Since: 0.1
 */
SbxExecutorSetOptions *
sbx_executor_set_options_new (void)
{
  SbxExecutorSetOptions *self = g_new0 (SbxExecutorSetOptions, 1);

  self->grant_ttl = SBX_EXECUTOR_SET_DEFAULT_GRANT_TTL;
  self->reporter_names = g_ptr_array_new_with_free_func (g_free);
  self->reporter_configs = g_ptr_array_new_with_free_func (g_free);
  return self;
}

/**
 * sbx_executor_set_options_copy:
 * @self: options
 *
 * Copies @self (the registry is shared, not copied).
 *
 * Returns: (transfer full): a copy
 *
 * Since: 0.1
 */
SbxExecutorSetOptions *
sbx_executor_set_options_copy (const SbxExecutorSetOptions *self)
{
  SbxExecutorSetOptions *copy;

  g_return_val_if_fail (self != NULL, NULL);

  copy = sbx_executor_set_options_new ();
  copy->scratch_root = g_strdup (self->scratch_root);
  copy->max_executors = self->max_executors;
  copy->grant_ttl = self->grant_ttl;
  copy->registry = self->registry != NULL ? g_object_ref (self->registry) : NULL;
  for (guint i = 0; i < self->reporter_names->len; i++)
    {
      g_ptr_array_add (copy->reporter_names, g_strdup (self->reporter_names->pdata[i]));
      g_ptr_array_add (copy->reporter_configs, g_strdup (self->reporter_configs->pdata[i]));
    }
  copy->backend = g_strdup (self->backend);
  copy->egress_route = self->egress_route != NULL ? sbx_egress_route_ref (self->egress_route) : NULL;
  copy->egress_extension = g_strdup (self->egress_extension);
  return copy;
}

/**
 * sbx_executor_set_options_free:
 * @self: (transfer full): options
 *
 * Frees @self.
 *
 * Since: 0.1
 */
void
sbx_executor_set_options_free (SbxExecutorSetOptions *self)
{
  if (self == NULL)
    return;
  g_free (self->scratch_root);
  g_clear_object (&self->registry);
  g_ptr_array_unref (self->reporter_names);
  g_ptr_array_unref (self->reporter_configs);
  g_free (self->backend);
  g_clear_pointer (&self->egress_route, sbx_egress_route_unref);
  g_free (self->egress_extension);
  g_free (self);
}

/**
 * sbx_executor_set_options_set_scratch_root:
 * @self: options
 * @path: (type filename) (nullable): an existing directory
 *
 * Sets the caller-owned directory in which the set creates its private
 * `sandbox-executors-XXXXXX` child (mode 0700).  Close removes only that
 * child.
 *
 * Since: 0.1
 */
void
sbx_executor_set_options_set_scratch_root (SbxExecutorSetOptions *self,
                                           const char            *path)
{
  g_return_if_fail (self != NULL);

  g_free (self->scratch_root);
  self->scratch_root = g_strdup (path);
}

/*
 * sbx_executor_set_options_get_scratch_root:
 * @self: options
 *
 * Returns the scratch root.
 *
 * Returns: (type filename) (nullable): the scratch root
 *
 * Since: 0.1
 */
const char *
sbx_executor_set_options_get_scratch_root (const SbxExecutorSetOptions *self)
{
  g_return_val_if_fail (self != NULL, NULL);

  return self->scratch_root;
}

/**
 * sbx_executor_set_options_set_max_executors:
 * @self: options
 * @max_executors: the most distinct keys the set will ever hold; 0 for the
 *   default, %SBX_EXECUTOR_SET_DEFAULT_MAX_EXECUTORS; negative is refused
 *
 * Sets the hard cap on memoized executors.  It is not a worker-pool size:
 * nothing is evicted, and [method@Sbx.ExecutorSet.for_key] on a new key past
 * it fails with %SBX_EXECUTOR_SET_ERROR_LIMIT.
 *
 * Since: 0.1
 */
void
sbx_executor_set_options_set_max_executors (SbxExecutorSetOptions *self,
                                            int                    max_executors)
{
  g_return_if_fail (self != NULL);

  self->max_executors = max_executors;
}

/*
 * sbx_executor_set_options_get_max_executors:
 * @self: options
 *
 * Returns the maximum number of executors (0 when unset).
 *
 * Returns: the maximum number of executors (0 when unset)
 *
 * Since: 0.1
 */
int
sbx_executor_set_options_get_max_executors (const SbxExecutorSetOptions *self)
{
  g_return_val_if_fail (self != NULL, 0);

  return self->max_executors;
}

/**
 * sbx_executor_set_options_set_grant_ttl:
 * @self: options
 * @ttl: the longest lifetime of a grant, in microseconds; must be positive
 *
 * Caps the expiry of grants the set's executors mint.  Without this call the
 * TTL is %SBX_EXECUTOR_SET_DEFAULT_GRANT_TTL; an explicit value that is not
 * positive makes [ctor@Sbx.ExecutorSet.new] fail.
 *
 * Since: 0.1
 */
void
sbx_executor_set_options_set_grant_ttl (SbxExecutorSetOptions *self,
                                        GTimeSpan              ttl)
{
  g_return_if_fail (self != NULL);

  self->grant_ttl = ttl;
}

/*
 * sbx_executor_set_options_get_grant_ttl:
 * @self: options
 *
 * Returns the grant TTL in microseconds.
 *
 * Returns: the grant TTL in microseconds
 *
 * Since: 0.1
 */
GTimeSpan
sbx_executor_set_options_get_grant_ttl (const SbxExecutorSetOptions *self)
{
  g_return_val_if_fail (self != NULL, 0);

  return self->grant_ttl;
}

/**
 * sbx_executor_set_options_set_registry:
 * @self: options
 * @registry: (nullable): the plugin registry, or %NULL for the default one
 *
 * Sets the registry the set selects its backend and opens its reporters
 * from.  Tests use one made by [ctor@Sbx.Registry.new_for_directories].
 *
 * Since: 0.1
 */
void
sbx_executor_set_options_set_registry (SbxExecutorSetOptions *self,
                                       SbxRegistry           *registry)
{
  g_return_if_fail (self != NULL);
  g_return_if_fail (registry == NULL || SBX_IS_REGISTRY (registry));

  g_set_object (&self->registry, registry);
}

/*
 * sbx_executor_set_options_get_registry:
 * @self: options
 *
 * Returns the registry, or %NULL for the default.
 *
 * Returns: (transfer none) (nullable): the registry, or %NULL for the default
 *
 * Since: 0.1
 */
SbxRegistry *
sbx_executor_set_options_get_registry (const SbxExecutorSetOptions *self)
{
  g_return_val_if_fail (self != NULL, NULL);

  return self->registry;
}

/**
 * sbx_executor_set_options_add_reporter:
 * @self: options
 * @name: a reporter extension name, such as "jsonl"
 * @config: (nullable): the reporter's configuration (for "jsonl", the path
 *   of the log file)
 *
 * Adds a reporter that receives the set's events.  A reporter that cannot be
 * opened makes [ctor@Sbx.ExecutorSet.new] fail with
 * %SBX_EXECUTOR_SET_ERROR_REPORTER.  Reporters never alter policy.
 *
 * Since: 0.1
 */
void
sbx_executor_set_options_add_reporter (SbxExecutorSetOptions *self,
                                       const char            *name,
                                       const char            *config)
{
  g_return_if_fail (self != NULL);
  g_return_if_fail (name != NULL);

  g_ptr_array_add (self->reporter_names, g_strdup (name));
  g_ptr_array_add (self->reporter_configs, g_strdup (config));
}

/*
 * sbx_executor_set_options_get_n_reporters:
 * @self: options
 *
 * Returns the number of reporters added.
 *
 * Returns: the number of reporters added
 *
 * Since: 0.1
 */
guint
sbx_executor_set_options_get_n_reporters (const SbxExecutorSetOptions *self)
{
  g_return_val_if_fail (self != NULL, 0);

  return self->reporter_names->len;
}

/*
 * sbx_executor_set_options_get_reporter_name:
 * @self: options
 * @index: a reporter index
 *
 * Returns the reporter's extension name.
 *
 * Returns: (nullable): the reporter's extension name
 *
 * Since: 0.1
 */
const char *
sbx_executor_set_options_get_reporter_name (const SbxExecutorSetOptions *self,
                                            guint                        index)
{
  g_return_val_if_fail (self != NULL, NULL);
  g_return_val_if_fail (index < self->reporter_names->len, NULL);

  return self->reporter_names->pdata[index];
}

/*
 * sbx_executor_set_options_get_reporter_config:
 * @self: options
 * @index: a reporter index
 *
 * Returns the reporter's configuration.
 *
 * Returns: (nullable): the reporter's configuration
 *
 * Since: 0.1
 */
const char *
sbx_executor_set_options_get_reporter_config (const SbxExecutorSetOptions *self,
                                              guint                        index)
{
  g_return_val_if_fail (self != NULL, NULL);
  g_return_val_if_fail (index < self->reporter_configs->len, NULL);

  return self->reporter_configs->pdata[index];
}

/**
 * sbx_executor_set_options_set_backend:
 * @self: options
 * @name: (nullable): a backend extension name, or %NULL to select
 *
 * Forces the backend, overriding `SBX_BACKEND`.  If it is missing or cannot
 * run the profile, the set is not created; there is never a fallback.
 *
 * Since: 0.1
 */
void
sbx_executor_set_options_set_backend (SbxExecutorSetOptions *self,
                                      const char            *name)
{
  g_return_if_fail (self != NULL);

  g_free (self->backend);
  self->backend = g_strdup (name);
}

/*
 * sbx_executor_set_options_get_backend:
 * @self: options
 *
 * Returns the forced backend name.
 *
 * Returns: (nullable): the forced backend name
 *
 * Since: 0.1
 */
const char *
sbx_executor_set_options_get_backend (const SbxExecutorSetOptions *self)
{
  g_return_val_if_fail (self != NULL, NULL);

  return self->backend;
}

/**
 * sbx_executor_set_options_set_egress_route:
 * @self: options
 * @route: (nullable): how approved network targets are reached, or %NULL
 *   for no route
 *
 * Gives the set an egress route.  Executors of a profile whose network is
 * %SBX_ACCESS_ALLOW or %SBX_ACCESS_GATED then reach the network only
 * through the route's proxy, which the backend places inside each sandbox
 * (on Linux, a listener in the run's private network namespace); the child
 * finds it in `HTTP_PROXY`, `HTTPS_PROXY` and `ALL_PROXY` (and their
 * lowercase forms).  Every plain run of an Allow profile may reach every
 * target through it; a Gated profile's runs reach exactly the targets of
 * their `network.proxy-target.v1` grants.  Grants bind the route's
 * fingerprint.  The route's credentials never reach a child.
 *
 * Since: 0.1
 */
void
sbx_executor_set_options_set_egress_route (SbxExecutorSetOptions *self,
                                           SbxEgressRoute        *route)
{
  g_return_if_fail (self != NULL);

  if (route != NULL)
    sbx_egress_route_ref (route);
  g_clear_pointer (&self->egress_route, sbx_egress_route_unref);
  self->egress_route = route;
}

/*
 * sbx_executor_set_options_get_egress_route:
 * @self: options
 *
 * Returns the egress route.
 *
 * Returns: (transfer none) (nullable): the route
 *
 * Since: 0.1
 */
SbxEgressRoute *
sbx_executor_set_options_get_egress_route (const SbxExecutorSetOptions *self)
{
  g_return_val_if_fail (self != NULL, NULL);

  return self->egress_route;
}

/**
 * sbx_executor_set_options_set_egress_extension:
 * @self: options
 * @name: (nullable): an egress extension name, or %NULL for `http-connect`
 *
 * Names the loaded egress extension that serves the route (a vendor's
 * plugin may provide its own).  If it is missing, the set cannot be
 * created.
 *
 * Since: 0.1
 */
void
sbx_executor_set_options_set_egress_extension (SbxExecutorSetOptions *self,
                                               const char            *name)
{
  g_return_if_fail (self != NULL);

  g_free (self->egress_extension);
  self->egress_extension = g_strdup (name);
}

/*
 * sbx_executor_set_options_get_egress_extension:
 * @self: options
 *
 * Returns the egress extension name set with
 * [method@Sbx.ExecutorSetOptions.set_egress_extension].
 *
 * Returns: (nullable): the name
 *
 * Since: 0.1
 */
const char *
sbx_executor_set_options_get_egress_extension (const SbxExecutorSetOptions *self)
{
  g_return_val_if_fail (self != NULL, NULL);

  return self->egress_extension;
}
