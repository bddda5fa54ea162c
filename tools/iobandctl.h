/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the files of iobandctl share. A command lives in the file of its
 * family: cmd-device.c (create, remove, list, table), cmd-groups.c (set,
 * attach, detach, policy, reset), cmd-tab.c (apply, save), cmd-stat.c
 * (stat, top, export), cmd-follow.c (follow, and the weights of
 * create --weights-from and weights_from=); iobandctl.c holds main() and the command table.
 * Below them: cli.c (arguments, group keys, usage), dm.c (libdevmapper
 * and block devices), sample.c (the counters stat, top and export read).
 */
#ifndef IOBANDCTL_H
#define IOBANDCTL_H

#include <getopt.h>
#include <stddef.h>
#include <stdint.h>

#include <libdevmapper.h>
#include <libsmartcols.h>
#include <linux/dm-ioctl.h>

#include "cgroup.h"
#include "groupkey.h"
#include "ioband.h"
#include "iobandtab.h"
#include "options.h"
#include "report.h"
#include "schema.h"
#include "strprintf.h"
#include "unit.h"

#define MOUNTINFO	"/proc/self/mountinfo"

/* cli.c: memory, the clock, arguments */

extern int verbose;		/* -v: libdm's warnings, -vv: its debug too */

void __attribute__((noreturn)) errtryhelp(const char *cmd);
void __attribute__((noreturn)) die_nomem(void);
/* @p, or the end of iobandctl for want of memory. */
void *must(void *p);
/* A new string, printf-style; exits when out of memory. */
#define xasprintf(...)	((char *)must(strprintf(__VA_ARGS__)))
void *xcalloc(size_t n, size_t size);
uint64_t now_ns(void);

unsigned int parse_uint_arg(const char *what, const char *arg);
double parse_seconds_arg(const char *what, const char *arg);
unsigned int parse_weight_arg(const char *arg);
char *split_key_spec(const char *what, const char *policy, const char *arg,
		     struct ioband_group_spec *g);
void check_policy(const char *policy);
void parse_range_arg(const char *what, const char *arg,
		     struct ioband_group_spec *g);
void check_name(const char *name);
char *checked_params(const struct ioband_table_args *t);
int write_file_atomically(const char *path, const char *text);

/* cli.c: group keys */

/* The cgroup2 mount point, allocated; exits when there is none. */
char *cgroup_root(void);
uint64_t resolve_key(const char *type, const char *key, char **root);
char **group_names(const char *type, const uint64_t *ids, size_t n);
void free_names(char **names, size_t n);

/* cli.c: commands */

struct command {
	const char *name;
	int (*fn)(const struct command *cmd, int argc, char **argv);
	const char *args;
	const char *summary;
	const char *help;	/* printed after the usage line */
	void (*extra_help)(void);
};

void __attribute__((noreturn)) usage_command(const struct command *cmd);
/* An option that @cmd's own parsing did not take: -h, or a misuse. */
void __attribute__((noreturn)) other_option(const struct command *cmd, int c);
/* Check the number of operands of @cmd: at least @min, at most @max. */
void check_operands(const struct command *cmd, int argc, int min, int max);
/* For commands with no option but --help. */
void parse_no_options(const struct command *cmd, int argc, char **argv,
		      int min, int max);

/* getopt_long() with @cmd's options: options.c; deprecated letters warn. */
int next_option(const struct command *cmd, int argc, char **argv);
/* -J, -r, -n, -b; returns 0 if @c is not one of them. */
int output_option(int c, struct report_opts *opts);
void add_cells(struct libscols_line *ln, char **cells, size_t n);

/* dm.c: libdevmapper */

__attribute__((format(printf, 5, 6)))
void log_libdm(int level, const char *file, int line, int dm_errno_or_class,
	       const char *f, ...);
int task_errno(struct dm_task *dmt);
struct dm_task *new_task(int type);
int ioband_target_loaded(void);
void warn_dm_errno(int e, const char *what, const char *name);
uint16_t setup_udev(void);
struct dm_task *ioband_task(int type, const char *name, int quiet);
const char *task_params(struct dm_task *dmt, uint64_t *length);
int check_parsed(int rc, const char *name, const char *what, const char *text,
		 int quiet);
int load_table(const char *name, struct ioband_table_args *t, uint64_t *sectors,
	       int quiet);
int send_message(const char *name, const char *msg, char **response, int *err);

/*
 * While set, a refused message is a warning and a count in soft_failures,
 * not the end: apply goes on with the other lines.
 */
extern int soft_changes;
extern unsigned int soft_failures;
__attribute__((format(printf, 2, 3)))
void change_device(const char *name, const char *fmt, ...);

char **list_ioband_devices(size_t *count);
char *device_name(const char *majmin);

/*
 * A device to change: its table checked and read, and a lazily found
 * cgroup root to resolve keys.
 */
struct target {
	const char *name;
	struct ioband_table_args table;
	char *cgroup_root;
};

int open_target(struct target *tg, const char *name, int quiet);
void close_target(struct target *tg);
uint64_t target_key(struct target *tg, const char *key);

/* dm.c: block devices */

int parse_majmin(const char *s, unsigned int *major, unsigned int *minor);
uint64_t device_sectors(const char *device);
int device_exists(const char *name);
int create_device(const char *name, uint64_t sectors, const char *params);

/* sample.c */

struct sample {
	char *name;
	struct ioband_table_args table;
	struct ioband_stats stats;
	char **names;		/* per group; NULL entries print the id */
	uint64_t when_ns;
};

/* A set of samples, one per device, and the rows they make. */
struct sample_set {
	struct sample *samples;
	size_t n;
	struct ioband_rates **rates;
	struct stat_row *rows;
	size_t nrows;
};

void free_sample_set(struct sample_set *set);
size_t take_sample_set(struct sample_set *set, char *const *names, size_t n,
		       const struct sample_set *prev, int quiet);

/*
 * cmd-tab.c, for create too: a path, major:minor or TAG=value (UUID=,
 * LABEL=, PARTUUID=, PARTLABEL=) as "major:minor", allocated; NULL if none.
 */
char *resolve_tab_device(const char *dev);

/* cmd-groups.c, for apply too */
void send_spec(struct target *tg, int is_default, uint64_t id,
	       const struct ioband_group_spec *g);

/*
 * cmd-follow.c, for create and apply: attach to @t each cgroup of the
 * subtree of @spec (cgroup[:<subtree>]) that has a weight, at its weight;
 * 0 after a warning (no such subtree).
 */
int add_cgroup_weights(struct ioband_table_args *t, const char *spec);

/* The commands */

int cmd_create(const struct command *cmd, int argc, char **argv);
int cmd_remove(const struct command *cmd, int argc, char **argv);
int cmd_list(const struct command *cmd, int argc, char **argv);
int cmd_table(const struct command *cmd, int argc, char **argv);
int cmd_set(const struct command *cmd, int argc, char **argv);
int cmd_attach(const struct command *cmd, int argc, char **argv);
int cmd_detach(const struct command *cmd, int argc, char **argv);
int cmd_policy(const struct command *cmd, int argc, char **argv);
int cmd_reset(const struct command *cmd, int argc, char **argv);
int cmd_apply(const struct command *cmd, int argc, char **argv);
int cmd_save(const struct command *cmd, int argc, char **argv);
int cmd_stat(const struct command *cmd, int argc, char **argv);
int cmd_top(const struct command *cmd, int argc, char **argv);
int cmd_export(const struct command *cmd, int argc, char **argv);
int cmd_follow(const struct command *cmd, int argc, char **argv);
void stat_columns_help(void);

#endif /* IOBANDCTL_H */
