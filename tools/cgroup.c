// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cgroup v2 mount lookup and path <-> id resolution.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup.h"
#include "strprintf.h"

/* mountinfo escapes ' ', '\t', '\n' and '\\' as \ooo: undo it in place. */
static void unescape_octal(char *s)
{
	char *out = s;

	while (*s) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' &&
		    s[2] >= '0' && s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			*out++ = (s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0');
			s += 4;
		} else {
			*out++ = *s++;
		}
	}
	*out = '\0';
}

/*
 * A mountinfo line: id parent maj:min root mountpoint options [optional
 * fields...] - fstype source superoptions. Returns the mount point of a
 * cgroup2 line (unescaped, in @line), else NULL.
 */
static char *cgroup2_mountpoint(char *line)
{
	char *save = NULL, *tok, *mnt = NULL;
	int field = 0, after_dash = 0;

	for (tok = strtok_r(line, " \n", &save); tok;
	     tok = strtok_r(NULL, " \n", &save), field++) {
		if (field == 4)
			mnt = tok;
		else if (field > 5 && !after_dash && !strcmp(tok, "-"))
			after_dash = 1;
		else if (after_dash) {
			if (!mnt || strcmp(tok, "cgroup2"))
				return NULL;
			unescape_octal(mnt);
			return mnt;
		}
	}
	return NULL;
}

/*
 * Find the first cgroup2 mount listed in @mountinfo (normally
 * /proc/self/mountinfo). Returns 0 and an allocated *mnt, -ENOENT if cgroup2
 * is not mounted, or -errno.
 */
int cgroup_find_mount(const char *mountinfo, char **mnt)
{
	char *line = NULL, *found;
	size_t size = 0;
	int rc = -ENOENT;
	FILE *f;

	f = fopen(mountinfo, "re");
	if (!f)
		return -errno;
	while (getline(&line, &size, f) >= 0) {
		found = cgroup2_mountpoint(line);
		if (found) {
			*mnt = strdup(found);
			rc = *mnt ? 0 : -ENOMEM;
			break;
		}
	}
	free(line);
	fclose(f);
	return rc;
}

/* Is @path @dir or below it? Both must be canonical. */
static int path_below(const char *path, const char *dir)
{
	size_t len = strlen(dir);

	if (len == 1 && dir[0] == '/')
		return path[0] == '/';
	return !strncmp(path, dir, len) && (path[len] == '/' || !path[len]);
}

/*
 * Resolve @path to a cgroup id. @path is relative to @root ("a/b"), absolute
 * below @root ("/sys/fs/cgroup/a/b"), or absolute but not below @root, which
 * is read relative to @root as /proc/PID/cgroup prints it ("/a/b").
 * Returns 0, -ENOENT, -ENOTDIR, -EXDEV if ".." or a symlink leads out of the
 * cgroup tree, or -errno.
 */
int cgroup_path_to_id(const char *root, const char *path, uint64_t *id)
{
	char *realroot, *full = NULL, *real = NULL;
	struct stat rst, st;
	int rc;

	realroot = realpath(root, NULL);
	if (!realroot)
		return -errno;
	if (stat(realroot, &rst)) {
		rc = -errno;
		goto out;
	}

	if (path[0] == '/' && (path_below(path, root) || path_below(path, realroot)))
		full = strdup(path);
	else
		full = strprintf("%s/%s", realroot, path + (path[0] == '/'));
	if (!full) {
		rc = -ENOMEM;
		goto out;
	}

	real = realpath(full, NULL);
	if (!real) {
		rc = -errno;
		goto out;
	}
	if (stat(real, &st)) {
		rc = -errno;
		goto out;
	}
	if (!S_ISDIR(st.st_mode))
		rc = -ENOTDIR;
	else if (!path_below(real, realroot) || st.st_dev != rst.st_dev)
		rc = -EXDEV;
	else {
		*id = st.st_ino;
		rc = 0;
	}
out:
	free(real);
	free(full);
	free(realroot);
	return rc;
}

struct walk {
	const uint64_t *ids;
	size_t n;
	char **paths;
	size_t left;		/* ids not found yet */
	dev_t dev;		/* stay on the cgroup file system */
	int rc;
};

static void walk_match(struct walk *w, uint64_t ino, const char *rel)
{
	size_t i;

	for (i = 0; i < w->n; i++) {
		if (w->ids[i] != ino || w->paths[i])
			continue;
		w->paths[i] = strdup(rel);
		if (!w->paths[i]) {
			w->rc = -ENOMEM;
			return;
		}
		w->left--;
	}
}

/* Depth first below @fd (consumed); @rel holds @len chars of the path. */
static void walk_dir(int fd, char *rel, size_t len, struct walk *w)
{
	struct dirent *de;
	struct stat st;
	DIR *dir;

	dir = fdopendir(fd);
	if (!dir) {
		close(fd);
		return;
	}
	while (w->left && !w->rc && (de = readdir(dir))) {
		size_t nlen = strlen(de->d_name);
		int sub;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN)
			continue;
		/* Cgroups come and go while we walk: skip what vanished. */
		if (fstatat(dirfd(dir), de->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    !S_ISDIR(st.st_mode) || st.st_dev != w->dev)
			continue;
		if (len + !!len + nlen >= PATH_MAX)
			continue;
		if (len)
			rel[len] = '/';
		memcpy(rel + len + !!len, de->d_name, nlen + 1);

		walk_match(w, st.st_ino, rel);
		sub = openat(dirfd(dir), de->d_name,
			     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub >= 0)
			walk_dir(sub, rel, len + !!len + nlen, w);
		rel[len] = '\0';
	}
	closedir(dir);
}

/*
 * Find the paths (relative to @root, "/" for @root itself) of the cgroups
 * @ids[0..n-1] in one walk of the tree. paths[i] is allocated, or NULL when
 * no cgroup has that id any more. Returns 0 or -errno; on error no path is
 * left allocated.
 */
int cgroup_ids_to_paths(const char *root, const uint64_t *ids, size_t n,
			char **paths)
{
	struct walk w = { .ids = ids, .n = n, .paths = paths, .left = n };
	char rel[PATH_MAX] = "";
	struct stat st;
	size_t i;
	int fd;

	for (i = 0; i < n; i++)
		paths[i] = NULL;
	fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		w.rc = -errno;
		close(fd);
		return w.rc;
	}
	w.dev = st.st_dev;
	walk_match(&w, st.st_ino, "/");
	walk_dir(fd, rel, 0, &w);

	if (w.rc) {
		for (i = 0; i < n; i++) {
			free(paths[i]);
			paths[i] = NULL;
		}
	}
	return w.rc;
}

/*
 * One weight file of cgroup v2's format (io.weight, io.bfq.weight):
 * "default <w>", then "<major>:<minor> <w>" for each device that has an
 * entry of its own. The entry of the first of @devices ("major:minor")
 * that has one, else the default; 0 when the text has neither.
 */
unsigned int cgroup_parse_weight(const char *text, const char *const *devices,
				 size_t nr_devices)
{
	unsigned int def = 0, found = 0, w;
	size_t best = nr_devices, i;
	char key[32];
	int n;

	while (*text) {
		if (sscanf(text, "%31s %u%n", key, &w, &n) == 2 && w &&
		    (text[n] == '\n' || !text[n])) {
			if (!strcmp(key, "default"))
				def = w;
			for (i = 0; i < best; i++) {
				if (strcmp(key, devices[i]))
					continue;
				best = i;
				found = w;
			}
		}
		text = strchrnul(text, '\n');
		if (*text)
			text++;
	}
	return best < nr_devices ? found : def;
}

unsigned int cgroup_pick_weight(unsigned int io_weight, unsigned int bfq_weight)
{
	if (io_weight && (io_weight != CGROUP_DEFAULT_WEIGHT || !bfq_weight))
		return io_weight;
	return bfq_weight;
}
