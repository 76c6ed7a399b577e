/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The sbx-init ELF (init/sbx-init.c), embedded at build time by init/embed.py. */
#pragma once

#include <stddef.h>

extern const unsigned char sbx_linux_init_elf[];
extern const size_t sbx_linux_init_elf_size;
