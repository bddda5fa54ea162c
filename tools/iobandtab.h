/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * /etc/iobandtab, the ioband devices to set up at boot: one device a line,
 * in the spirit of crypttab(5) and veritytab(5),
 *
 *   <name> <device> <options> [<key>=<spec>...]
 *
 * Pure parsing and formatting: no libdevmapper, no lookups, so the unit
 * tests and the fuzzer link it alone. iobandctl.c resolves the devices and
 * keys and applies the entries.
 */
#ifndef IOBAND_IOBANDTAB_H
#define IOBAND_IOBANDTAB_H

#include <stddef.h>
#include <stdio.h>

#include "ioband.h"

#define IOBANDTAB_DEFAULT	"/etc/iobandtab"
#define IOBANDTAB_NAME_MAX	127	/* characters of a dm device name */

struct iobandtab_group {
	char *key;			/* as written, unescaped */
	struct ioband_group_spec spec;
};

struct iobandtab_entry {
	unsigned int line;
	char *name;
	char *device;		/* a path, major:minor, UUID=, LABEL=, PARTUUID=... */
	char domain[IOBAND_DOMAIN_ID_MAX + 1];	/* the name when not given */
	char group_type[IOBAND_TYPE_MAX + 1];	/* cgroup when not given */
	char policy[IOBAND_TYPE_MAX + 1];	/* weight when not given */
	struct ioband_group_spec default_spec;	/* 100, 0:0 when not given */
	int has_default;
	unsigned int io_throttle, io_limit, token_base;	/* 0: the module's */
	int has_carryover;
	unsigned int carryover;
	size_t nr_groups;
	struct iobandtab_group *groups;
	char *weights_from;	/* weights_from=, unescaped; NULL: not given */
};

/* Called for each bad line; the line's entry is then left out. */
typedef void (*iobandtab_error_fn)(void *ctx, unsigned int line, const char *msg);

int iobandtab_parse_line(const char *line, unsigned int lineno,
			 struct iobandtab_entry *e, char *err, size_t errlen);
int iobandtab_parse(const char *text, struct iobandtab_entry **entries,
		    size_t *n, iobandtab_error_fn error, void *ctx);
void iobandtab_entry_free(struct iobandtab_entry *e);
void iobandtab_free(struct iobandtab_entry *entries, size_t n);

/*
 * The subtree of "cgroup[:<subtree>]" (weights_from=, create
 * --weights-from) in *@subtree: after the colon, or "/" (the whole
 * tree). 0, or -EINVAL for another source or an empty subtree.
 */
int iobandtab_weights_from(const char *spec, const char **subtree);

int iobandtab_add_group(struct iobandtab_entry *e, const char *key,
			const struct ioband_group_spec *spec);
int iobandtab_format_entry(const struct iobandtab_entry *e, FILE *out);
char *iobandtab_escape(const char *s);

#endif /* IOBAND_IOBANDTAB_H */
