// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * systemd units -> their cgroups. With libsystemd (HAVE_LIBSYSTEMD) and
 * systemd running, systemd itself says where a unit is: its ControlGroup
 * property, or for a stopped unit where its Slice= will put it. Without
 * either (a rescue shell, the test guest, a unit systemd has not loaded)
 * the documented layout does, which holds for system units in their
 * default slice.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#ifdef HAVE_LIBSYSTEMD
#include <systemd/sd-bus.h>
#include <systemd/sd-daemon.h>
#endif

#include "strprintf.h"
#include "unit.h"

#define UNIT_NAME_MAX	255

/* The units that have a cgroup, and their D-Bus interfaces. */
static const struct {
	const char *suffix;
	const char *interface;
} unit_types[] = {
	{ ".service", "org.freedesktop.systemd1.Service" },
	{ ".scope",   "org.freedesktop.systemd1.Scope" },
	{ ".slice",   "org.freedesktop.systemd1.Slice" },
	{ ".socket",  "org.freedesktop.systemd1.Socket" },
	{ ".mount",   "org.freedesktop.systemd1.Mount" },
	{ ".swap",    "org.freedesktop.systemd1.Swap" },
};

#define NR_UNIT_TYPES	(sizeof(unit_types) / sizeof(*unit_types))

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n > m && !strcmp(s + n - m, suffix);
}

/* The index of @key's type in unit_types[], or -1. */
static int unit_type(const char *key)
{
	size_t i;

	for (i = 0; i < NR_UNIT_TYPES; i++)
		if (ends_with(key, unit_types[i].suffix))
			return i;
	return -1;
}

/* A slice's name: "-.slice", or dash-separated non-empty parts. */
static int slice_name_valid(const char *slice)
{
	size_t len = strlen(slice) - strlen(".slice");

	if (!strcmp(slice, "-.slice"))
		return 1;
	return slice[0] != '-' && slice[len - 1] != '-' &&
	       !memmem(slice, len, "--", 2);
}

int unit_key(const char *key)
{
	size_t len = strlen(key), i;
	int type = unit_type(key);

	if (type < 0 || len > UNIT_NAME_MAX)
		return 0;
	for (i = 0; i < len; i++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			    "0123456789:-_.\\@", key[i]))
			return 0;
	return strcmp(unit_types[type].suffix, ".slice") || slice_name_valid(key);
}

/* "/a.slice/a-b.slice" for a-b.slice, "" for -.slice; allocated. */
static char *slice_path(const char *slice)
{
	size_t len = strlen(slice) - strlen(".slice"), i;
	char *path, *p;

	if (!strcmp(slice, "-.slice"))
		return strdup("");
	/* Each part adds "/" + the prefix up to it + ".slice". */
	path = malloc((len + 7) * (len + 1) + 1);
	if (!path)
		return NULL;
	p = path;
	for (i = 1; i <= len; i++) {
		if (i < len && slice[i] != '-')
			continue;
		*p++ = '/';
		memcpy(p, slice, i);
		p += i;
		memcpy(p, ".slice", 6);
		p += 6;
	}
	*p = '\0';
	return path;
}

char *unit_cgroup_by_layout(const char *unit, const char *slice)
{
	char *parent, *path;

	if (ends_with(unit, ".slice"))
		return slice_path(unit);
	parent = slice_path(slice && *slice ? slice : "system.slice");
	if (!parent)
		return NULL;
	path = strprintf("%s/%s", parent, unit);
	free(parent);
	return path;
}

#ifdef HAVE_LIBSYSTEMD
/*
 * Ask systemd: 0 and *@path, -ENXIO (no such unit), -ENOMEM, or -ENOSYS
 * when systemd is not there to ask.
 */
static int unit_cgroup_by_bus(const char *unit, char **path)
{
	static const char dest[] = "org.freedesktop.systemd1";
	sd_bus_error error = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	char *state = NULL, *cgroup = NULL, *slice = NULL;
	const char *object;
	sd_bus *bus = NULL;
	int rc = -ENOSYS;

	if (sd_booted() <= 0 || sd_bus_open_system(&bus) < 0)
		goto out;
	/* LoadUnit: a stopped unit too, which GetUnit does not know. */
	if (sd_bus_call_method(bus, dest, "/org/freedesktop/systemd1",
			       "org.freedesktop.systemd1.Manager", "LoadUnit",
			       &error, &reply, "s", unit) < 0 ||
	    sd_bus_message_read(reply, "o", &object) < 0)
		goto out;
	if (sd_bus_get_property_string(bus, dest, object,
				       "org.freedesktop.systemd1.Unit",
				       "LoadState", &error, &state) < 0)
		goto out;
	if (!strcmp(state, "not-found")) {
		rc = -ENXIO;
		goto out;
	}
	if (sd_bus_get_property_string(bus, dest, object,
				       unit_types[unit_type(unit)].interface,
				       "ControlGroup", &error, &cgroup) < 0)
		goto out;
	if (*cgroup) {
		*path = cgroup;
		cgroup = NULL;
		rc = 0;
		goto out;
	}
	/* Stopped: where it will run. A slice has no Slice= of its own. */
	if (!ends_with(unit, ".slice") &&
	    sd_bus_get_property_string(bus, dest, object,
				       unit_types[unit_type(unit)].interface,
				       "Slice", &error, &slice) < 0)
		goto out;
	*path = unit_cgroup_by_layout(unit, slice);
	rc = *path ? 0 : -ENOMEM;
out:
	free(state);
	free(cgroup);
	free(slice);
	sd_bus_error_free(&error);
	sd_bus_message_unref(reply);
	sd_bus_flush_close_unref(bus);
	return rc;
}
#endif

int unit_cgroup(const char *unit, char **path)
{
#ifdef HAVE_LIBSYSTEMD
	int rc = unit_cgroup_by_bus(unit, path);

	if (rc != -ENOSYS)
		return rc;
#endif
	*path = unit_cgroup_by_layout(unit, NULL);
	return *path ? 0 : -ENOMEM;
}
