/* SPDX-License-Identifier: MIT */
/* placeholder during parallel development; filled by its module owner */
