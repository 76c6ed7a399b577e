/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sbx-seccomp-gen: writes the build-time seccomp table (compile once).
 *
 *   sbx-seccomp-gen OUTPUT.c
 *
 * Runs sbx_seccomp_program_generate() (the rules of sbx-seccomp.c, through
 * libseccomp) for every normalised option shape the rules distinguish and
 * writes each program, its rules and what it enforces as C data, so that
 * sbx_seccomp_program_new() needs no libseccomp generation at run time.
 * Identical programs (rung 1 ignores the network mode) are written once.
 * Exits non-zero, writing nothing, when any generation fails: a build never
 * ships a partial table.
 */
#include "sbx-seccomp.h"
#include "sbx-seccomp-private.h"

#include <gio/gio.h>
#include <seccomp.h>

#include <stdio.h>
#include <string.h>

/* Every value build_context() distinguishes, per field of the normalised
 * options (normalize_options() in sbx-seccomp.c). */
static const int rungs[] = { 1, 2 };
static const uint32_t net_modes[] = { SBX_NET_MODE_DENY, SBX_NET_MODE_OPEN, SBX_NET_MODE_PORTS, SBX_NET_MODE_PROXY };
static const int truncate_abis[] = { 0, 1 };
static const int unix_sockets[] = { FALSE, TRUE };
static const int caller_terminal[] = { FALSE, TRUE };
#define N_CALLER_TERMINAL G_N_ELEMENTS (caller_terminal)

static gboolean
same_program (const SbxSeccompProgram *a,
              const SbxSeccompProgram *b)
{
  if (a->len != b->len || a->n_rules != b->n_rules || a->enforces != b->enforces ||
      a->last_known != b->last_known || a->native_arch != b->native_arch || strcmp (a->arches, b->arches) != 0)
    return FALSE;
  if (memcmp (a->filter, b->filter, a->len * sizeof a->filter[0]) != 0)
    return FALSE;
  for (size_t i = 0; i < a->n_rules; i++)
    {
      const SbxSeccompRule *x = &a->rules[i], *y = &b->rules[i];

      if (strcmp (x->name, y->name) != 0 || x->err != y->err || x->multiplexer != y->multiplexer ||
          x->n_args != y->n_args || memcmp (x->args, y->args, sizeof x->args) != 0)
        return FALSE;
    }
  return TRUE;
}

/* System call names are C identifiers; anything else would need quoting. */
static gboolean
plain_name (const char *name)
{
  if (name == NULL || *name == '\0')
    return FALSE;
  for (const char *p = name; *p != '\0'; p++)
    if (!g_ascii_isalnum (*p) && *p != '_')
      return FALSE;
  return TRUE;
}

/* The offset of @name in @names (the NUL-separated pool), added if new. */
static gboolean
name_offset (GString    *names,
             GHashTable *offsets,
             const char *name,
             guint      *offset,
             GError    **error)
{
  gpointer value;

  if (!plain_name (name))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "system call name \"%s\" is not an identifier",
                   name != NULL ? name : "(null)");
      return FALSE;
    }
  if (g_hash_table_lookup_extended (offsets, name, NULL, &value))
    {
      *offset = GPOINTER_TO_UINT (value);
      return TRUE;
    }
  if (names->len > G_MAXUINT16)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_FAILED, "rule name pool past 64 KiB");
      return FALSE;
    }
  *offset = (guint) names->len;
  g_hash_table_insert (offsets, g_strdup (name), GUINT_TO_POINTER (*offset));
  g_string_append (names, name);
  g_string_append_c (names, '\0');
  return TRUE;
}

static gboolean
write_program (GString                 *out,
               GString                 *names,
               GHashTable              *offsets,
               guint                    index,
               const SbxSeccompProgram *program,
               GError                 **error)
{
  g_string_append_printf (out, "static const struct sock_filter filter_%u[%u] = {\n", index, program->len);
  for (unsigned i = 0; i < program->len; i++)
    {
      const struct sock_filter *f = &program->filter[i];

      g_string_append_printf (out, "  { 0x%04x, %u, %u, 0x%08x },\n", f->code, f->jt, f->jf, f->k);
    }
  g_string_append (out, "};\n");
  g_string_append_printf (out, "static const SbxSeccompPackedRule rules_%u[%zu] = {\n", index,
                          MAX (program->n_rules, 1));
  for (size_t i = 0; i < program->n_rules; i++)
    {
      const SbxSeccompRule *r = &program->rules[i];
      guint offset;

      if (!name_offset (names, offsets, r->name, &offset, error))
        return FALSE;
      if ((r->err < 0 && r->err != SBX_SECCOMP_ERR_SUPERVISED) || r->err > G_MAXINT16
          || r->n_args > G_N_ELEMENTS (r->args))
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "rule %zu (%s): errno %d or %u arguments "
                                                                   "out of range", i, r->name, r->err, r->n_args);
          return FALSE;
        }
      g_string_append_printf (out, "  { %u, %d, %d, %u, {", offset, r->err, r->multiplexer ? 1 : 0, r->n_args);
      for (guint a = 0; a < G_N_ELEMENTS (r->args); a++)
        {
          if (r->args[a].arg > G_MAXUINT8 || r->args[a].op < 0 || r->args[a].op > G_MAXUINT8)
            {
              g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "rule %zu (%s): argument %u out of range",
                           i, r->name, a);
              return FALSE;
            }
          g_string_append_printf (out, " { %u, %d, 0x%" G_GINT64_MODIFIER "xULL, 0x%" G_GINT64_MODIFIER "xULL },",
                                  r->args[a].arg, r->args[a].op, (guint64) r->args[a].mask,
                                  (guint64) r->args[a].value);
        }
      g_string_append (out, " } },\n");
    }
  g_string_append (out, "};\n\n");
  return TRUE;
}

int
main (int    argc,
      char **argv)
{
  g_autoptr(GString) out = g_string_new (NULL);
  g_autoptr(GString) entries = g_string_new (NULL);
  g_autoptr(GPtrArray) unique = g_ptr_array_new_with_free_func ((GDestroyNotify) sbx_seccomp_program_free);
  g_autoptr(GString) names = g_string_new (NULL);
  g_autoptr(GHashTable) offsets = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr(GError) error = NULL;
  guint n_entries = 0;

  /* The table is data for the target kernels, not for the one the
   * generator runs on: libseccomp takes its API level from the running
   * kernel, and under qemu-user (the aarch64 cross build) it finds none of
   * the seccomp system calls and refuses notification rules (EINVAL).
   * Level 5 has SCMP_ACT_NOTIFY; whether a kernel has it is the probe's
   * question at run time. */
  if (seccomp_api_get () < 5 && seccomp_api_set (5) != 0)
    {
      g_printerr ("sbx-seccomp-gen: libseccomp cannot build notification rules (API level 5)\n");
      return 1;
    }

  if (argc != 2)
    {
      fprintf (stderr, "usage: %s OUTPUT.c\n", argv[0]);
      return 2;
    }

  /* The program uses SCMP_ACT_KILL_PROCESS, libseccomp API level 3.  The
   * machine that builds may not show that level (qemu-user refuses
   * seccomp(2), build containers filter it), and the level changes nothing
   * else in this program; the kernel that runs it is checked where it is
   * loaded (sbx_seccomp_available() asks for SECCOMP_RET_KILL_PROCESS), and
   * tests/linux/test-seccomp-table.c compares the table with a generation at
   * the running kernel's level. */
  if (seccomp_api_get () < 3 && seccomp_api_set (3) != 0)
    {
      fprintf (stderr, "sbx-seccomp-gen: libseccomp cannot be set to API level 3\n");
      return 1;
    }

  g_string_append (out,
                   "/* Generated by sbx-seccomp-gen from the rules of sbx-seccomp.c: do not edit.\n"
                   " * One program per normalised option shape (see normalize_options()). */\n"
                   "#include \"sbx-seccomp-private.h\"\n\n");
  for (guint r = 0; r < G_N_ELEMENTS (rungs); r++)
    for (guint n = 0; n < G_N_ELEMENTS (net_modes); n++)
      for (guint t = 0; t < G_N_ELEMENTS (truncate_abis); t++)
        for (guint uc = 0; uc < G_N_ELEMENTS (unix_sockets) * N_CALLER_TERMINAL; uc++)
          {
            SbxSeccompOptions options = { rungs[r], net_modes[n], truncate_abis[t], unix_sockets[uc / N_CALLER_TERMINAL],
                                          caller_terminal[uc % N_CALLER_TERMINAL] };
            g_autoptr(SbxSeccompProgram) program = sbx_seccomp_program_generate (&options, &error);
            guint index;

            if (program == NULL)
              {
                fprintf (stderr, "sbx-seccomp-gen: rung %d, net mode %u, truncate %d, unix %d, caller's "
                                 "terminal %d: %s\n", options.rung, options.net_mode, options.landlock_abi,
                         options.allow_unix_sockets, options.caller_terminal_shared, error->message);
                return 1;
              }
            for (index = 0; index < unique->len; index++)
              if (same_program (g_ptr_array_index (unique, index), program))
                break;
            if (index == unique->len)
              {
                if (!write_program (out, names, offsets, index, program, &error))
                  {
                    fprintf (stderr, "sbx-seccomp-gen: %s\n", error->message);
                    return 1;
                  }
                g_ptr_array_add (unique, g_steal_pointer (&program));
              }
            {
              const SbxSeccompProgram *p = g_ptr_array_index (unique, index);

              g_string_append_printf (entries,
                                      "  { %d, %uu, %d, %d, %d, 0x%08xu, filter_%u, %u, 0x%08xu, \"%s\", rules_%u, %zu, "
                                      "%d },\n",
                                      options.rung, options.net_mode, options.landlock_abi,
                                      options.allow_unix_sockets ? 1 : 0, options.caller_terminal_shared ? 1 : 0,
                                      p->native_arch, index, p->len,
                                      p->enforces, p->arches, index, p->n_rules, p->last_known);
              n_entries++;
            }
          }
  g_string_append_printf (out, "const SbxSeccompPrecompiled sbx_seccomp_precompiled[%u] = {\n%s};\n"
                               "const size_t sbx_seccomp_n_precompiled = %u;\n", n_entries, entries->str, n_entries);
  g_string_append (out, "const char sbx_seccomp_rule_names[] =");
  for (const char *p = names->str; p < names->str + names->len; p += strlen (p) + 1)
    g_string_append_printf (out, "\n  \"%s\\0\"", p);
  g_string_append (out, ";\n");
  if (!g_file_set_contents (argv[1], out->str, (gssize) out->len, &error))
    {
      fprintf (stderr, "sbx-seccomp-gen: %s\n", error->message);
      return 1;
    }
  return 0;
}
