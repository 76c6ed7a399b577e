/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The old names of the temporary-tree helpers, now in executor-test-util.h
 * (the one helper library).  Kept only while branches written against them
 * are merged; `sed -i -f tests/test-util-rename.sed` renames the callers,
 * after which this header goes.
 */
#pragma once

#include "executor-test-util.h"

#define ptu_make_tmpdir etu_make_tmpdir
#define ptu_mkdir       etu_mkdir
#define ptu_write_file  etu_write_file
#define ptu_symlink     etu_symlink
#define ptu_rm_rf       etu_rm_rf
