// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Group KEYs <-> dm-ioband group ids, by group type. cgroup paths resolve
 * through cgroup.c, systemd units through unit.c; this file does users,
 * groups and process ids.
 */
#include <errno.h>
#include <grp.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup.h"
#include "groupkey.h"
#include "strprintf.h"
#include "unit.h"

int group_type_uses_cgroups(const char *type)
{
	return !strcmp(type, "cgroup");
}

static int is_uid_type(const char *type)
{
	/* "user" is the historical name of "uid". */
	return !strcmp(type, "uid") || !strcmp(type, "user");
}

/* A decimal number, digits only, at most @max. */
static int parse_id(const char *s, uint64_t max, uint64_t *id)
{
	uint64_t v = 0;

	if (!*s)
		return -EINVAL;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		if (v > (max - (*s - '0')) / 10)
			return -ERANGE;
		v = v * 10 + (*s - '0');
	}
	*id = v;
	return 0;
}

/* What a KEY is for @type, for error messages and help. */
const char *group_type_key_help(const char *type)
{
	if (group_type_uses_cgroups(type))
		return "a cgroup path or a systemd unit";
	if (is_uid_type(type))
		return "a user name or uid";
	if (!strcmp(type, "gid"))
		return "a group name or gid";
	if (!strcmp(type, "pid"))
		return "a process id";
	if (!strcmp(type, "pgrp"))
		return "a process group id";
	return "nothing: this group type has only the default group";
}

/*
 * Resolve @key to the id of a group of @type. @cgroup_root is the cgroup v2
 * mount, needed for type cgroup only, where a key is a cgroup path or a
 * systemd unit (unit.h). Returns 0, -ENOENT (no such cgroup, user or
 * group), -ENXIO (no such unit), -ESRCH (the unit has no cgroup: it is not
 * running), -EINVAL (not a KEY of that type; type none), -ERANGE, or what
 * cgroup_path_to_id() returns.
 */
int group_key_to_id(const char *type, const char *key, const char *cgroup_root,
		    uint64_t *id)
{
	if (group_type_uses_cgroups(type) && unit_key(key)) {
		char *path;
		int rc = unit_cgroup(key, &path);

		if (rc)
			return rc;
		rc = cgroup_path_to_id(cgroup_root, path, id);
		free(path);
		return rc == -ENOENT ? -ESRCH : rc;
	}
	if (group_type_uses_cgroups(type))
		return cgroup_path_to_id(cgroup_root, key, id);

	if (is_uid_type(type)) {
		struct passwd *pw;

		if (!parse_id(key, UINT32_MAX - 1, id))
			return 0;
		errno = 0;
		pw = getpwnam(key);
		if (!pw)
			return errno && errno != ENOENT ? -errno : -ENOENT;
		*id = pw->pw_uid;
		return 0;
	}
	if (!strcmp(type, "gid")) {
		struct group *gr;

		if (!parse_id(key, UINT32_MAX - 1, id))
			return 0;
		errno = 0;
		gr = getgrnam(key);
		if (!gr)
			return errno && errno != ENOENT ? -errno : -ENOENT;
		*id = gr->gr_gid;
		return 0;
	}
	if (!strcmp(type, "pid") || !strcmp(type, "pgrp"))
		return parse_id(key, INT32_MAX, id) ? -EINVAL : 0;
	return -EINVAL;
}

/*
 * A name for group @id of @type (not cgroup: cgroup_ids_to_paths() names
 * many at once): the user or group name when there is one, else the
 * number. Allocated; NULL without memory.
 */
char *group_id_to_name(const char *type, uint64_t id)
{
	const char *name = NULL;

	if (is_uid_type(type) && id <= UINT32_MAX) {
		struct passwd *pw = getpwuid(id);

		name = pw ? pw->pw_name : NULL;
	} else if (!strcmp(type, "gid") && id <= UINT32_MAX) {
		struct group *gr = getgrgid(id);

		name = gr ? gr->gr_name : NULL;
	}
	if (name)
		return strdup(name);
	return strprintf("%" PRIu64, id);
}
