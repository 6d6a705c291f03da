/* SPDX-License-Identifier: MIT */
/* Everything under .git is input (a checkout can hold anything): HEAD and
 * loose refs, the `.git` file of worktrees and submodules, packed-refs. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "platform/vcs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        const char *buf = (const char *)data;
        char ref[VCS_REF_MAX + 1], rev[VCS_HEX_MAX + 1], path[256];

        (void)vcs_parse_head(buf, size, ref, rev);
        (void)vcs_parse_gitfile(buf, size, path, sizeof(path));
        (void)vcs_packed_refs_find(buf, size, "refs/heads/main", rev);
        (void)vcs_ref_name_ok(buf, size);
        return 0;
}
