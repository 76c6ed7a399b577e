/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "sbx-guarantees.h"

#include "sbx-plugin-abi.h"

/* The public enum values and the plugin ABI values are the same numbers. */
G_STATIC_ASSERT (SBX_LEVEL_NONE == SBX_ABI_LEVEL_NONE);
G_STATIC_ASSERT (SBX_LEVEL_DEGRADED == SBX_ABI_LEVEL_DEGRADED);
G_STATIC_ASSERT (SBX_LEVEL_FULL == SBX_ABI_LEVEL_FULL);
G_STATIC_ASSERT (SBX_GUARANTEE_PROCESS_BOUNDARY == SBX_ABI_GUARANTEE_PROCESS_BOUNDARY);
G_STATIC_ASSERT (SBX_GUARANTEE_WRITE_BOUNDARY == SBX_ABI_GUARANTEE_WRITE_BOUNDARY);
G_STATIC_ASSERT (SBX_GUARANTEE_READ_BOUNDARY == SBX_ABI_GUARANTEE_READ_BOUNDARY);
G_STATIC_ASSERT (SBX_GUARANTEE_ENV_SCRUB == SBX_ABI_GUARANTEE_ENV_SCRUB);
G_STATIC_ASSERT (SBX_GUARANTEE_NETWORK_BOUNDARY == SBX_ABI_GUARANTEE_NETWORK_BOUNDARY);
G_STATIC_ASSERT (SBX_GUARANTEE_ADDRESS_NETWORK == SBX_ABI_GUARANTEE_ADDRESS_NETWORK);
G_STATIC_ASSERT (SBX_GUARANTEE_RESOURCE_LIMITS == SBX_ABI_GUARANTEE_RESOURCE_LIMITS);
G_STATIC_ASSERT (SBX_GUARANTEE_TARGET_NETWORK == SBX_ABI_GUARANTEE_TARGET_NETWORK);

static const char *const level_names[] = { "none", "degraded", "full" };

/* In bit order: index i names bit (1 << i), with the report feature name
 * the ABI ties to that bit. */
static const char *const guarantee_names[] = {
  SBX_ABI_FEATURE_PROCESS_BOUNDARY,
  SBX_ABI_FEATURE_WRITE_BOUNDARY,
  SBX_ABI_FEATURE_READ_BOUNDARY,
  SBX_ABI_FEATURE_ENV_SCRUB,
  SBX_ABI_FEATURE_NETWORK_BOUNDARY,
  SBX_ABI_FEATURE_ADDRESS_NETWORK,
  SBX_ABI_FEATURE_RESOURCE_LIMITS,
  SBX_ABI_FEATURE_TARGET_NETWORK,
};

/**
 * sbx_level_to_string:
 * @level: a [enum@Sbx.Level]
 *
 * Returns the lower-case name of @level ("none", "degraded", "full"), as used
 * in JSON reports.
 *
 * Returns: (transfer none) (nullable): the name, or %NULL for a value outside
 *   the enumeration
 *
 * Since: 0.1
 */
const char *
sbx_level_to_string (SbxLevel level)
{
  if ((guint) level >= G_N_ELEMENTS (level_names))
    return NULL;
  return level_names[level];
}

/**
 * sbx_level_from_string:
 * @text: a level name
 * @out_level: (out): return location for the level
 *
 * Parses a name produced by [func@Sbx.Level.to_string].
 *
 * Returns: %TRUE when @text names a level
 *
 * Since: 0.1
 */
gboolean
sbx_level_from_string (const char *text,
                       SbxLevel   *out_level)
{
  g_return_val_if_fail (text != NULL, FALSE);
  g_return_val_if_fail (out_level != NULL, FALSE);

  for (guint i = 0; i < G_N_ELEMENTS (level_names); i++)
    if (g_str_equal (text, level_names[i]))
      {
        *out_level = (SbxLevel) i;
        return TRUE;
      }
  return FALSE;
}

/**
 * sbx_guarantee_to_string:
 * @guarantee: exactly one [flags@Sbx.Guarantees] bit
 *
 * Returns the lower-case dash-separated name of one guarantee bit
 * ("write-boundary"), as used in JSON reports.
 *
 * Returns: (transfer none) (nullable): the name, or %NULL unless @guarantee is
 *   exactly one defined bit
 *
 * Since: 0.1
 */
const char *
sbx_guarantee_to_string (SbxGuarantees guarantee)
{
  guint bits = (guint) guarantee;

  if (bits == 0 || (bits & (bits - 1)) != 0 || (bits & ~(guint) SBX_GUARANTEES_ALL) != 0)
    return NULL;
  return guarantee_names[g_bit_nth_lsf (bits, -1)];
}

/**
 * sbx_guarantee_from_string:
 * @text: a guarantee name
 * @out_guarantee: (out): return location for the single bit
 *
 * Parses a name produced by [func@Sbx.guarantee_to_string].
 *
 * Returns: %TRUE when @text names a guarantee
 *
 * Since: 0.1
 */
gboolean
sbx_guarantee_from_string (const char    *text,
                           SbxGuarantees *out_guarantee)
{
  g_return_val_if_fail (text != NULL, FALSE);
  g_return_val_if_fail (out_guarantee != NULL, FALSE);

  for (guint i = 0; i < G_N_ELEMENTS (guarantee_names); i++)
    if (g_str_equal (text, guarantee_names[i]))
      {
        *out_guarantee = (SbxGuarantees) (1u << i);
        return TRUE;
      }
  return FALSE;
}

/**
 * sbx_guarantees_to_strv:
 * @guarantees: a set of [flags@Sbx.Guarantees]
 *
 * Lists the names of the bits set in @guarantees, in bit order.  Undefined
 * bits are ignored.
 *
 * Returns: (transfer full) (array zero-terminated=1): a %NULL-terminated array
 *
 * Since: 0.1
 */
char **
sbx_guarantees_to_strv (SbxGuarantees guarantees)
{
  g_autoptr(GStrvBuilder) builder = g_strv_builder_new ();

  for (guint i = 0; i < G_N_ELEMENTS (guarantee_names); i++)
    if (((guint) guarantees & (1u << i)) != 0)
      g_strv_builder_add (builder, guarantee_names[i]);
  return g_strv_builder_end (builder);
}
