/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cgroup v2 paths and ids. A cgroup's id, as dm-ioband takes it, is the
 * inode number of its directory; these functions take the mount root as an
 * argument so the tests can use any directory tree.
 */
#ifndef IOBAND_CGROUP_H
#define IOBAND_CGROUP_H

#include <stddef.h>
#include <stdint.h>

int cgroup_find_mount(const char *mountinfo, char **mnt);
int cgroup_path_to_id(const char *root, const char *path, uint64_t *id);
int cgroup_ids_to_paths(const char *root, const uint64_t *ids, size_t n,
			char **paths);

/* io.weight's and io.bfq.weight's default: a cgroup that sets none. */
#define CGROUP_DEFAULT_WEIGHT	100

unsigned int cgroup_parse_weight(const char *text, const char *const *devices,
				 size_t nr_devices);
/*
 * A cgroup's weight from its io.weight and io.bfq.weight (each 0 when
 * absent): io.weight's, unless it is the default and io.bfq.weight sets
 * one (runc writes only io.bfq.weight when BFQ is there); 0 for neither.
 */
unsigned int cgroup_pick_weight(unsigned int io_weight, unsigned int bfq_weight);

#endif /* IOBAND_CGROUP_H */
