// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * iobandctl - create, inspect, tune and remove dm-ioband devices.
 *
 * Talks to device-mapper through libdevmapper: tables to create, target
 * messages to change a live device (never a suspend), the "stats" message
 * (or, from an older module, the status line) to watch it. This file is
 * main() and the command table; each command lives in the file of its
 * family (see iobandctl.h). The table and stats formats live in ioband.c,
 * group names in groupkey.c and cgroup.c, the output tables in report.c;
 * none of them needs libdevmapper.
 */
#include <err.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libdevmapper.h>
#include <libsmartcols.h>

#include "iobandctl.h"

#ifndef IOBANDCTL_VERSION
#define IOBANDCTL_VERSION "unknown"
#endif

static int cmd_help(const struct command *cmd, int argc, char **argv);

static const struct command commands[] = {
	{ "create", cmd_create, "[options] <name> <device>",
	  "Create /dev/mapper/<name>, an ioband device on top of <device> (a path,\n"
	  "major:minor, UUID=, PARTUUID=, LABEL= or PARTLABEL=, as in iobandtab)\n"
	  "that shares its bandwidth between groups by weight",
	  "Options:\n"
	  " -d, --domain <id>           bandwidth domain, shared by the devices that\n"
	  "                               give the same id (at most 31 characters;\n"
	  "                               default: <name>)\n"
	  " -t, --type <type>           what a group is: cgroup (default), uid, gid,\n"
	  "                               pid, pgrp, or none (only the default group)\n"
	  " -p, --policy <policy>       weight (share IOs, default), weight-iosize\n"
	  "                               (share sectors), range-bw (a minimum and\n"
	  "                               a maximum in KiB/s per group),\n"
	  "                               weight-range (both: reservation, limit,\n"
	  "                               and the rest by weight) or weight-time\n"
	  "                               (share the device's time, as learnt)\n"
	  " -g, --group <key>=<spec>    a group: <weight>, <min>:<max> (range-bw)\n"
	  "                               or <weight>:<min>:<max> (weight-range);\n"
	  "                               repeat for more groups; the key default\n"
	  "                               is the default group\n"
	  " -w, --weight <key>=<spec>   the same as --group\n"
	  " -D, --default-weight <w>    weight of every other process (default 100)\n"
	  " -R, --default-range <min>:<max>\n"
	  "                             range of the default group in KiB/s (range\n"
	  "                               policies; default 0:0, max 0: no limit)\n"
	  "     --io-limit <n>          at most <n> IOs in flight below, on top of\n"
	  "                               the window the module sizes from the\n"
	  "                               device (0: no cap, the default)\n"
	  "     --io-throttle <n>       kept from dm-ioband: checked (<= io-limit)\n"
	  "                               and reported only (0: the default, 4)\n"
	  "     --token-base <n>        tokens of an epoch (0: the module's default)\n"
	  "     --dry-run               print the table, create nothing\n"
	  "     --weights-from cgroup[:<subtree>]\n"
	  "                             attach each cgroup of <subtree> (default:\n"
	  "                               all) that has an io.weight (or\n"
	  "                               io.bfq.weight), at that weight, once;\n"
	  "                               iobandctl follow keeps them current\n"
	  " -h, --help                  display this help\n"
	  "\n"
	  "Weights range from 1 to 32767; min and max are KiB/s, max 0 is no\n"
	  "limit. A <key> is, by --type: a cgroup v2\n"
	  "directory, absolute (/sys/fs/cgroup/a/b) or relative to its mount point\n"
	  "(a/b, or /a/b as /proc/<pid>/cgroup prints it); a user name or uid; a\n"
	  "group name or gid; a process or process group id.\n", NULL },
	{ "remove", cmd_remove, "<name>",
	  "Remove the ioband device /dev/mapper/<name>; the device below it is left\n"
	  "as it was",
	  "Options:\n"
	  " -h, --help   display this help\n", NULL },
	{ "list", cmd_list, "[options]",
	  "List the ioband devices: name, bandwidth domain, policy, group type,\n"
	  "number of groups with a weight of their own, and the device below",
	  "Options:\n"
	  " -J, --json         use JSON output format\n"
	  " -r, --raw          use raw output format\n"
	  " -n, --noheadings   don't print headings\n"
	  " -h, --help         display this help\n", NULL },
	{ "table", cmd_table, "[options] <name>",
	  "Print the table of ioband device <name> as dmsetup table does, with\n"
	  "the device and the groups named (cgroup paths, users, groups)",
	  "Options:\n"
	  " -J, --json   use JSON output format\n"
	  " -h, --help   display this help\n", NULL },
	{ "set", cmd_set, "[options] <name> [<key>=<spec>...]",
	  "Change the weights, ranges and tunables of a live ioband device (no\n"
	  "suspend)",
	  "Options:\n"
	  " -p, --policy <policy>   share by another policy (the whole domain):\n"
	  "                           weight, weight-iosize, range-bw,\n"
	  "                           weight-range or weight-time; sent before\n"
	  "                           the specs, which it then reads\n"
	  "     --io-limit <n>      at most <n> IOs in flight below (0: no cap,\n"
	  "                           the window alone)\n"
	  "     --io-throttle <n>   kept from dm-ioband, reported only\n"
	  "     --token-base <n>    tokens of an epoch\n"
	  "     --carryover <n>     epochs of unused share an idle group keeps\n"
	  " -h, --help              display this help\n"
	  "\n"
	  "A <key> is a group of the device's type (see iobandctl create --help);\n"
	  "the key 'default' is the default group (write ./default for a cgroup\n"
	  "of that name). A <spec> is what the device's policy takes: <weight>\n"
	  "(1 to 32767), <min>:<max> (range-bw, KiB/s, max 0: no limit) or\n"
	  "<weight>:<min>:<max> (weight-range).\n", NULL },
	{ "attach", cmd_attach, "<name> <key> [<spec>]",
	  "Give group <key> a weight (and range) of its own on device <name>\n"
	  "(default: the default group's weight, range 0:0); <spec> as for set",
	  "Options:\n"
	  " -h, --help   display this help\n", NULL },
	{ "detach", cmd_detach, "<name> <key>",
	  "Return group <key> of device <name> to the default group",
	  "Options:\n"
	  " -h, --help   display this help\n", NULL },
	{ "policy", cmd_policy,
	  "<name> weight|weight-iosize|range-bw|weight-range|weight-time",
	  "The same as 'iobandctl set --policy <policy> <name>', kept: change how\n"
	  "device <name> (its whole domain) shares: by IOs (weight), by sectors\n"
	  "(weight-iosize), by minimum and maximum bandwidth (range-bw), by all\n"
	  "three (weight-range) or by the device's time, as learnt from its\n"
	  "completions (weight-time)",
	  "Options:\n"
	  " -h, --help   display this help\n", NULL },
	{ "reset", cmd_reset, "<name>",
	  "Zero the counters of each group of device <name> (IOs, bytes, delayed\n"
	  "IOs, wait and device times, the longest wait, writeback waits, the\n"
	  "IOs past the scheduler) and restart the time they cover (elapsed_ns);\n"
	  "weights, ranges, tunables, the queue and the domain's own counters\n"
	  "(window_full, idle_waits, urgent) are left as they are",
	  "Options:\n"
	  " -h, --help   display this help\n", NULL },
	{ "stat", cmd_stat, "[options] [<name>...]",
	  "Show each group of all ioband devices (or of <name>...): weight, share\n"
	  "of the device, IOPS, throughput, queue and wait, like iostat",
	  "Options:\n"
	  " -i, --interval <secs>  report again every <secs> seconds, the rates of\n"
	  "                          the interval\n"
	  " -c, --count <n>        stop after <n> reports (with --interval)\n"
	  " -J, --json             use JSON output format: one object per report,\n"
	  "                          every key always (iobandctl(8), JSON OUTPUT)\n"
	  "     --format <fmt>     table (default), json, prometheus (the text\n"
	  "                          exposition format) or openmetrics: the\n"
	  "                          counters once, for a collector\n"
	  "     --prometheus       the same as --format prometheus\n"
	  " -r, --raw              use raw output format\n"
	  " -n, --noheadings       don't print headings\n"
	  " -b, --bytes            print sizes in bytes, not in human-readable form\n"
	  " -o, --output <list>    columns to print (+<list> adds to the default)\n"
	  " -h, --help             display this help\n", stat_columns_help },
	{ "top", cmd_top, "[options] [<name>...]",
	  "Show the groups of all ioband devices (or of <name>...), the busiest\n"
	  "first, refreshed until q is pressed, like iotop",
	  "Options:\n"
	  " -i, --interval <secs>    seconds between refreshes (default 1);\n"
	  "                            also --delay\n"
	  " -c, --count <n>          stop after <n> refreshes; also --iterations\n"
	  " -B, --batch              print each refresh below the last, without\n"
	  "                            terminal control, for logs and scripts\n"
	  " -J, --json               an object per refresh, as stat --json (implies\n"
	  "                            --batch)\n"
	  " -r, --raw                use raw output format\n"
	  "     --noheadings         don't print headings\n"
	  "     --bytes              print sizes in bytes, not in human-readable form\n"
	  " -o, --output <list>      columns to print (+<list> adds to the default)\n"
	  " -h, --help               display this help\n"
	  "\n"
	  "-d, -n and -b (--delay, --iterations, --batch before) still work for\n"
	  "this release, with a warning.\n", stat_columns_help },
	{ "export", cmd_export, "[options] [<name>...]",
	  "Print the counters of all ioband devices (or of <name>...) for\n"
	  "Prometheus, or write them where node_exporter's textfile collector\n"
	  "reads them",
	  "Options:\n"
	  " -T, --textfile <dir>   write <dir>/ioband.prom (written aside, then\n"
	  "                          renamed: a reader never sees half of it)\n"
	  "     --format <fmt>     prometheus (the text exposition format,\n"
	  "                          default) or openmetrics\n"
	  " -h, --help             display this help\n"
	  "\n"
	  "The metrics are described in iobandctl(8); iobandctl-export.timer\n"
	  "runs this every 15 seconds.\n", NULL },
	{ "apply", cmd_apply, "[options] [<file>]",
	  "Set up the ioband devices of <file> (default /etc/iobandtab): create\n"
	  "those that do not exist, bring the others to the file's policy,\n"
	  "knobs and groups by messages (never detaching a group). A bad line\n"
	  "is reported as <file>:<line> and the others still apply; a cgroup\n"
	  "that does not exist yet is attached by a later apply",
	  "Options:\n"
	  "     --check           only parse the file and report bad lines\n"
	  "     --print-cgroups   print the cgroup folders the file names\n"
	  "     --name <name>     only the line of device <name> (the units of\n"
	  "                         iobandctl-generator(8) set up one line each)\n"
	  " -h, --help            display this help\n"
	  "\n"
	  "A line is: <name> <device> <options> [<key>=<spec>...]; <device> a\n"
	  "path, major:minor, UUID=, LABEL=, PARTUUID= or PARTLABEL=; <options>\n"
	  "- or a comma-separated list of domain=, type=, policy=, default=<spec>,\n"
	  "io_limit=, io_throttle=, token_base=, carryover=. See iobandctl(8).\n",
	  NULL },
	{ "save", cmd_save, "[options] [<file>]",
	  "Write the running ioband devices as an iobandtab file (default:\n"
	  "standard output), devices by PARTUUID= or UUID= when they have one",
	  "Options:\n"
	  " -P, --paths   write devices as /dev paths\n"
	  " -h, --help    display this help\n", NULL },
	{ "follow", cmd_follow, "[options] <name>",
	  "Keep the groups of device <name> those of the cgroups' own weights:\n"
	  "each cgroup of the subtree that has an io.weight (or io.bfq.weight) is\n"
	  "attached at that weight, reweighed within a second of a write to it,\n"
	  "attached when made and detached when removed; groups no such cgroup\n"
	  "stands for are detached. Runs until stopped",
	  "Options:\n"
	  "     --weights-from cgroup[:<subtree>]\n"
	  "                          the cgroups to follow: <subtree> a cgroup\n"
	  "                            folder or a systemd slice (default: all)\n"
	  " -i, --interval <secs>    read the whole subtree again every <secs>\n"
	  "                            seconds (default 60), besides the changes\n"
	  "                            inotify reports at once\n"
	  " -h, --help               display this help\n"
	  "\n"
	  "A cgroup's weight is its io.weight entry for <name> or the device below\n"
	  "it, else its default entry; io.bfq.weight's when io.weight has the\n"
	  "default 100 (runc writes only io.bfq.weight when BFQ is there). See\n"
	  "iobandctl(8), WEIGHTS FROM CGROUPS.\n", NULL },
	{ "help", cmd_help, "[<command>]", "Show the help of iobandctl or of a command",
	  "", NULL },
};

#define NR_COMMANDS	(sizeof(commands) / sizeof(*commands))

static const struct command *find_command(const char *name)
{
	size_t i;

	for (i = 0; i < NR_COMMANDS; i++)
		if (!strcmp(name, commands[i].name))
			return &commands[i];
	return NULL;
}

static void __attribute__((noreturn)) usage(void)
{
	size_t i;

	printf("Usage:\n"
	       " iobandctl [options] <command> [<args>]\n"
	       "\n"
	       "Control dm-ioband, the device-mapper target that shares the bandwidth\n"
	       "of a block device between cgroups (or users, groups, processes) by\n"
	       "weight.\n"
	       "\n"
	       "Commands:\n");
	for (i = 0; i < NR_COMMANDS; i++)
		printf(" %-8s %s\n", commands[i].name, commands[i].args);
	printf("\n"
	       "Options:\n"
	       " -v, --verbose   show the messages sent and libdevmapper's (twice: debug)\n"
	       " -h, --help      display this help\n"
	       " -V, --version   display version\n"
	       "\n"
	       "Run 'iobandctl <command> --help' for the options of a command.\n");
	exit(EXIT_SUCCESS);
}

static int cmd_help(const struct command *cmd, int argc, char **argv)
{
	const struct command *of;

	parse_no_options(cmd, argc, argv, 0, 1);
	if (optind == argc)
		usage();
	of = find_command(argv[optind]);
	if (!of) {
		warnx("unknown command '%s'", argv[optind]);
		errtryhelp(NULL);
	}
	usage_command(of);
}

int main(int argc, char **argv)
{
	const struct cmd_options *o = cmd_options_of("iobandctl");
	static char prog[64];
	const struct command *cmd;
	int c;

	/* '+': options after the command are the command's. */
	while ((c = getopt_long(argc, argv, o->shortopts, o->longopts, NULL)) != -1) {
		switch (c) {
		case 'v':
			verbose++;
			break;
		case 'h':
			usage();
		case 'V':
			printf("iobandctl %s\n", IOBANDCTL_VERSION);
			return EXIT_SUCCESS;
		default:
			errtryhelp(NULL);
		}
	}
	if (optind == argc) {
		warnx("missing <command>");
		errtryhelp(NULL);
	}
	cmd = find_command(argv[optind]);
	if (!cmd) {
		warnx("unknown command '%s'", argv[optind]);
		errtryhelp(NULL);
	}

	dm_log_with_errno_init(log_libdm);
	scols_init_debug(0);

	/* getopt's messages start with argv[0]: make it "iobandctl stat". */
	snprintf(prog, sizeof(prog), "iobandctl %s", cmd->name);
	argv[optind] = prog;
	argc -= optind;
	argv += optind;
	optind = 0;
	return cmd->fn(cmd, argc, argv);
}
