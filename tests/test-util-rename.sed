# SPDX-License-Identifier: LGPL-2.1-or-later
# The helper library's one prefix (etu_, executor-test-util.h) for callers
# still written against the old names.  Mechanical, whole words only:
#   sed -i -f tests/test-util-rename.sed tests/*.c tests/*/*.c
# Not for tests/test-registry.c, whose own static TestPolicy is another type.
# Once no file uses the old names, tests/profile-test-util.h and the shims
# at the end of tests/linux-test-util.h go.
s/\bptu_make_tmpdir\b/etu_make_tmpdir/g
s/\bptu_mkdir\b/etu_mkdir/g
s/\bptu_write_file\b/etu_write_file/g
s/\bptu_symlink\b/etu_symlink/g
s/\bptu_rm_rf\b/etu_rm_rf/g
s/#include "profile-test-util\.h"/#include "executor-test-util.h"/
s/\bTestPolicy\b/EtuPolicy/g
s/\btest_policy_new\b/etu_policy_new/g
s/\btest_policy_free\b/etu_policy_free/g
s/\btest_policy_add_runtime\b/etu_policy_add_runtime/g
s/\btest_policy_add\b/etu_policy_add/g
s/\btest_policy_get\b/etu_policy_get/g
