/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* The git revision of a working directory, read from .git directly (never
 * forking git), worktrees and submodules too. Everything in .git is hostile:
 * names are checked before they become paths. */

#define VCS_HEX_MAX 64  /* SHA-256 object names; SHA-1 ones have 40 */
#define VCS_REF_MAX 255 /* bytes of a ref name we accept */

struct vcs_info {
        char rev[VCS_HEX_MAX + 1]; /* lower-case hex object name */
        char ref[VCS_REF_MAX + 1]; /* "refs/heads/main"; "" when HEAD is detached */
};

/* HEAD's content: "ref: <name>" (ret_rev "") or an object name (ret_ref
 * ""). 0, or -EINVAL for anything else (a ref name unsafe as a path too).
 * The buffers hold VCS_REF_MAX+1 and VCS_HEX_MAX+1 bytes. */
int vcs_parse_head(const char *buf, size_t len, char *ret_ref, char *ret_rev);

/* A `.git` file: "gitdir: <path>". 0, -EINVAL, or -ERANGE when the path
 * does not fit. */
int vcs_parse_gitfile(const char *buf, size_t len, char *ret, size_t retlen);

/* ref in a packed-refs buffer: 0 with its object name, -ENOENT when
 * absent, -EINVAL for a malformed matching line. */
int vcs_packed_refs_find(const char *buf, size_t len, const char *ref, char *ret_rev);

/* True for a ref name safe to use as a path below a git dir: starts with
 * "refs/" (or is "HEAD"), no "..", no "//", no control bytes, no
 * backslash, no trailing "/" or ".lock". */
bool vcs_ref_name_ok(const char *name, size_t len);

/* Find the repository of dir (walking up at most 64 levels) and read its
 * revision. Returns 0, -ENOENT when dir is not in a git work tree or HEAD
 * names a ref that does not exist yet (a fresh repository), -EOPNOTSUPP
 * for the reftable backend, -EINVAL for a malformed .git, or -errno. */
int vcs_read(const char *dir, struct vcs_info *ret);
