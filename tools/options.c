// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The options of every iobandctl command (see options.h). A letter means
 * the same in every command that has it; a long option keeps its name.
 */
#include <errno.h>
#include <string.h>

#include "options.h"

#define HELP	{ "help", no_argument, NULL, 'h' }
#define END	{ NULL, 0, NULL, 0 }

static const struct deprecated_option none[] = { { 0, 0, 0, NULL } };

static const struct option main_opts[] = {
	{ "verbose", no_argument, NULL, 'v' },
	{ "version", no_argument, NULL, 'V' },
	HELP, END
};

static const struct option help_only[] = { HELP, END };

static const struct option create_opts[] = {
	{ "domain",         required_argument, NULL, 'd' },
	{ "policy",         required_argument, NULL, 'p' },
	{ "type",           required_argument, NULL, 't' },
	{ "group",          required_argument, NULL, 'g' },
	{ "weight",         required_argument, NULL, 'w' },
	{ "default-weight", required_argument, NULL, 'D' },
	{ "default-range",  required_argument, NULL, 'R' },
	{ "io-limit",       required_argument, NULL, OPT_IO_LIMIT },
	{ "io-throttle",    required_argument, NULL, OPT_IO_THROTTLE },
	{ "token-base",     required_argument, NULL, OPT_TOKEN_BASE },
	{ "dry-run",        no_argument,       NULL, OPT_DRY_RUN },
	{ "weights-from",   required_argument, NULL, OPT_WEIGHTS_FROM },
	HELP, END
};

static const struct option list_opts[] = {
	{ "json",       no_argument, NULL, 'J' },
	{ "raw",        no_argument, NULL, 'r' },
	{ "noheadings", no_argument, NULL, 'n' },
	HELP, END
};

static const struct option table_opts[] = {
	{ "json", no_argument, NULL, 'J' },
	HELP, END
};

static const struct option set_opts[] = {
	{ "policy",      required_argument, NULL, 'p' },
	{ "io-limit",    required_argument, NULL, OPT_IO_LIMIT },
	{ "io-throttle", required_argument, NULL, OPT_IO_THROTTLE },
	{ "token-base",  required_argument, NULL, OPT_TOKEN_BASE },
	{ "carryover",   required_argument, NULL, OPT_CARRYOVER },
	HELP, END
};

static const struct option stat_opts[] = {
	{ "bytes",      no_argument,       NULL, 'b' },
	{ "json",       no_argument,       NULL, 'J' },
	{ "raw",        no_argument,       NULL, 'r' },
	{ "noheadings", no_argument,       NULL, 'n' },
	{ "output",     required_argument, NULL, 'o' },
	{ "interval",   required_argument, NULL, 'i' },
	{ "count",      required_argument, NULL, 'c' },
	{ "format",     required_argument, NULL, OPT_FORMAT },
	{ "prometheus", no_argument,       NULL, OPT_PROMETHEUS },
	HELP, END
};

/*
 * top's --delay and --iterations are stat's --interval and --count; -n and
 * -b stay deprecated for a release, so --noheadings and --bytes have no
 * letter in top yet.
 */
static const struct option top_opts[] = {
	{ "interval",   required_argument, NULL, 'i' },
	{ "delay",      required_argument, NULL, 'i' },
	{ "count",      required_argument, NULL, 'c' },
	{ "iterations", required_argument, NULL, 'c' },
	{ "batch",      no_argument,       NULL, 'B' },
	{ "output",     required_argument, NULL, 'o' },
	{ "json",       no_argument,       NULL, 'J' },
	{ "raw",        no_argument,       NULL, 'r' },
	{ "noheadings", no_argument,       NULL, OPT_NOHEADINGS },
	{ "bytes",      no_argument,       NULL, OPT_BYTES },
	HELP, END
};

static const struct deprecated_option top_deprecated[] = {
	{ 'd', 1, 'i', "-i (--interval)" },
	{ 'n', 1, 'c', "-c (--count); -n will be --noheadings" },
	{ 'b', 0, 'B', "-B (--batch); -b will be --bytes" },
	{ 0, 0, 0, NULL }
};

static const struct option export_opts[] = {
	{ "textfile", required_argument, NULL, 'T' },
	{ "format",   required_argument, NULL, OPT_FORMAT },
	HELP, END
};

static const struct option apply_opts[] = {
	{ "check",         no_argument, NULL, OPT_CHECK },
	{ "print-cgroups", no_argument, NULL, OPT_PRINT_CGROUPS },
	{ "name",          required_argument, NULL, OPT_NAME },
	HELP, END
};

static const struct deprecated_option create_deprecated[] = {
	{ 'n', 0, OPT_DRY_RUN, "--dry-run" },
	{ 0, 0, 0, NULL }
};

static const struct deprecated_option export_deprecated[] = {
	{ 't', 1, 'T', "-T (--textfile)" },
	{ 0, 0, 0, NULL }
};

static const struct deprecated_option apply_deprecated[] = {
	{ 'c', 0, OPT_CHECK, "--check" },
	{ 0, 0, 0, NULL }
};

static const struct option follow_opts[] = {
	{ "weights-from", required_argument, NULL, OPT_WEIGHTS_FROM },
	{ "interval",     required_argument, NULL, 'i' },
	HELP, END
};

static const struct option save_opts[] = {
	{ "paths", no_argument, NULL, 'P' },
	HELP, END
};

const struct cmd_options cmd_options[] = {
	{ "iobandctl", "+vhV",             main_opts,   none },
	{ "create",    "d:p:t:g:w:D:R:h",  create_opts, create_deprecated },
	{ "remove",    "h",                help_only,   none },
	{ "list",      "Jrnh",             list_opts,   none },
	{ "table",     "Jh",               table_opts,  none },
	{ "set",       "p:h",              set_opts,    none },
	{ "attach",    "h",                help_only,   none },
	{ "detach",    "h",                help_only,   none },
	{ "policy",    "h",                help_only,   none },
	{ "reset",     "h",                help_only,   none },
	{ "stat",      "bJrno:i:c:h",      stat_opts,   none },
	{ "top",       "i:c:Bo:Jrh",       top_opts,    top_deprecated },
	{ "export",    "T:h",              export_opts, export_deprecated },
	{ "apply",     "h",                apply_opts,  apply_deprecated },
	{ "save",      "Ph",               save_opts,   none },
	{ "follow",    "i:h",              follow_opts, none },
	{ "help",      "h",                help_only,   none },
};

const size_t nr_cmd_options = sizeof(cmd_options) / sizeof(*cmd_options);

const struct cmd_options *cmd_options_of(const char *cmd)
{
	size_t i;

	for (i = 0; i < nr_cmd_options; i++)
		if (!strcmp(cmd_options[i].cmd, cmd))
			return &cmd_options[i];
	return NULL;
}

const struct deprecated_option *cmd_deprecated(const struct cmd_options *o,
					       int c)
{
	const struct deprecated_option *d;

	for (d = o->deprecated; d->letter; d++)
		if (d->letter == c)
			return d;
	return NULL;
}

int cmd_optstring(const struct cmd_options *o, char *buf, size_t size)
{
	const struct deprecated_option *d;
	size_t len = strlen(o->shortopts);

	if (len >= size)
		return -ENOSPC;
	memcpy(buf, o->shortopts, len + 1);
	for (d = o->deprecated; d->letter; d++) {
		if (len + 3 > size)
			return -ENOSPC;
		buf[len++] = d->letter;
		if (d->has_arg)
			buf[len++] = ':';
		buf[len] = '\0';
	}
	return 0;
}
