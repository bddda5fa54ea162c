/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The KEY of a group, as people write it, and the id dm-ioband takes: a
 * cgroup path and its inode number, a user or group name and its uid or
 * gid, a pid or process group number.
 */
#ifndef IOBAND_GROUPKEY_H
#define IOBAND_GROUPKEY_H

#include <stdint.h>

/* The KEY that names the default group in "set NAME default=W". */
#define GROUP_KEY_DEFAULT	"default"

int group_key_to_id(const char *type, const char *key, const char *cgroup_root,
		    uint64_t *id);
char *group_id_to_name(const char *type, uint64_t id);
int group_type_uses_cgroups(const char *type);
const char *group_type_key_help(const char *type);

#endif /* IOBAND_GROUPKEY_H */
