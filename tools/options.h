/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The options of every iobandctl command, in one table: getopt reads them
 * from here, and the unit tests check that a letter means one thing in
 * every command (as in util-linux: -n is --noheadings, -J --json, ...).
 * Pure: no libdevmapper, no libsmartcols.
 */
#ifndef IOBAND_OPTIONS_H
#define IOBAND_OPTIONS_H

#include <getopt.h>
#include <stddef.h>

/* The values of long options without a letter of their own. */
enum {
	OPT_IO_LIMIT = 0x100,
	OPT_IO_THROTTLE,
	OPT_TOKEN_BASE,
	OPT_CARRYOVER,
	OPT_FORMAT,
	OPT_PROMETHEUS,
	OPT_PRINT_CGROUPS,
	OPT_DRY_RUN,
	OPT_CHECK,
	OPT_NOHEADINGS,		/* where -n still has its old meaning */
	OPT_BYTES,		/* where -b still has its old meaning */
	OPT_WEIGHTS_FROM,
	OPT_NAME,
};

/*
 * A letter a command took before its letters were made one meaning each:
 * still accepted, for one release, with a warning naming @use.
 */
struct deprecated_option {
	int letter;
	int has_arg;
	int val;		/* the option it stands for now */
	const char *use;	/* its spelling now, e.g. "-c (--count)" */
};

struct cmd_options {
	const char *cmd;	/* "iobandctl": the options before a command */
	const char *shortopts;	/* getopt's, without the deprecated letters */
	const struct option *longopts;
	const struct deprecated_option *deprecated;	/* ends with letter 0 */
};

extern const struct cmd_options cmd_options[];
extern const size_t nr_cmd_options;

/* The options of command @cmd, or NULL. */
const struct cmd_options *cmd_options_of(const char *cmd);
/* The deprecated letter @c of @o, or NULL. */
const struct deprecated_option *cmd_deprecated(const struct cmd_options *o,
					       int c);
/*
 * getopt's string for @o: its letters and its deprecated ones; 0, or
 * -ENOSPC when @size is too small.
 */
int cmd_optstring(const struct cmd_options *o, char *buf, size_t size);

#endif /* IOBAND_OPTIONS_H */
