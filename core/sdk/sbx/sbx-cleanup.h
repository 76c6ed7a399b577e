/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sbx-cleanup.h: scoped release of plain C resources, for the core and for
 * plugins.  Installed with sbx-plugin-1 (<sbx/sbx-cleanup.h>) next to
 * sbx-plugin-abi.h; it needs only the C library, so a plugin that does not
 * use GLib (win32, a third party's) gets the same habits as GLib code gets
 * from g_autofree and g_autoptr.
 *
 * Rules:
 *  - A scoped variable is released when it goes out of scope, on every
 *    return path, so a function needs no "goto out" ladder and no repeated
 *    close()/free()/dlclose() before each early return.
 *  - Initialise every scoped variable where it is declared (-1 for an fd,
 *    NULL for a pointer): the cleanup runs on whatever it holds.
 *  - Hand ownership on with sbx_steal_fd() / sbx_steal_pointer(), which
 *    leave -1 / NULL behind, so the cleanup then does nothing.
 *  - The fd cleanup keeps errno: an early return that reports errno after
 *    the fd is closed reports the failure, not the close.
 *  - Code in a CLONE_VM child of the Linux backend must not use this header
 *    (it calls libc); that code releases nothing anyway.
 *
 * Needs GCC or Clang (the cleanup attribute; mingw-w64's GCC has it).
 */
#ifndef SBX_CLEANUP_H
#define SBX_CLEANUP_H

#include <errno.h>
#include <stdlib.h>
#ifndef _WIN32
#include <unistd.h>
#else
#include <io.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Runs @func (a function taking a pointer to the variable) at scope exit. */
#define SBX_CLEANUP(func) __attribute__ ((__cleanup__ (func)))

/* Closes *@fd when it is >= 0 and sets it to -1; errno is preserved. */
static inline void
sbx_clear_fd (int *fd)
{
  if (*fd >= 0)
    {
      int saved_errno = errno;

#ifndef _WIN32
      (void) close (*fd);
#else
      (void) _close (*fd);
#endif
      errno = saved_errno;
    }
  *fd = -1;
}

/* Returns *@fd and leaves -1 in its place. */
static inline int
sbx_steal_fd (int *fd)
{
  int value = *fd;

  *fd = -1;
  return value;
}

/* free()s the pointer that @location points to. */
static inline void
sbx_cleanup_free (void *location)
{
  void **p = (void **) location;

  free (*p);
  *p = NULL;
}

/* Returns the pointer at @location and leaves NULL in its place.  Use the
 * sbx_steal_pointer() macro, which keeps the pointer's type. */
static inline void *
sbx_steal_pointer_impl (void *location)
{
  void **p = (void **) location;
  void  *value = *p;

  *p = NULL;
  return value;
}

#define sbx_steal_pointer(pp) ((__typeof__ (*(pp))) sbx_steal_pointer_impl (pp))

/* An fd closed at scope exit:  sbx_autofd int fd = -1; */
#define sbx_autofd SBX_CLEANUP (sbx_clear_fd)
/* Memory from malloc() freed at scope exit:  sbx_autofree char *s = NULL; */
#define sbx_autofree SBX_CLEANUP (sbx_cleanup_free)

/*
 * Any other resource: SBX_DEFINE_CLEANUP (name, type, release) defines the
 * cleanup sbx_cleanup_<name>, which calls release (value) when the variable
 * holds something other than @none; then
 *   sbx_auto (name) type variable = none;
 * e.g. SBX_DEFINE_CLEANUP (dl_handle, void *, NULL, dlclose) and
 *      sbx_auto (dl_handle) void *handle = NULL;
 */
#define SBX_DEFINE_CLEANUP(name, type, none, release) \
  static inline void                                  \
    sbx_cleanup_##name (type *location)               \
  {                                                   \
    if (*location != (none))                          \
      (void) release (*location);                     \
    *location = (none);                               \
  }
#define sbx_auto(name) SBX_CLEANUP (sbx_cleanup_##name)

#ifdef __cplusplus
}
#endif

#endif /* SBX_CLEANUP_H */
