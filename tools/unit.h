/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * systemd units as group keys: "nginx.service", "web.slice" name the
 * cgroup systemd runs the unit in.
 */
#ifndef IOBAND_UNIT_H
#define IOBAND_UNIT_H

/*
 * Is @key a unit name: no '/', the characters systemd allows, and the
 * suffix of a unit that has a cgroup (.service, .scope, .slice, .socket,
 * .mount, .swap)? A cgroup folder of such a name is written ./nginx.service
 * or /nginx.service.
 */
int unit_key(const char *key);

/*
 * Where the documented layout (systemd.slice(5), systemd.special(7))
 * puts @unit's cgroup, below the cgroup root: a slice a-b.slice at
 * /a.slice/a-b.slice, -.slice at /, any other unit in system.slice. In
 * @slice when not NULL (a unit's Slice= setting) instead. Allocated, NULL
 * without memory.
 */
char *unit_cgroup_by_layout(const char *unit, const char *slice);

/*
 * The cgroup of @unit below the cgroup root, allocated in *@path: the
 * unit's ControlGroup as systemd says over D-Bus when it runs (for a
 * stopped unit, where its Slice= puts it), else by the layout. Returns
 * 0, -ENXIO when systemd knows no such unit, or -ENOMEM. The folder
 * exists only while the unit runs.
 */
int unit_cgroup(const char *unit, char **path);

#endif /* IOBAND_UNIT_H */
