// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The commands that watch devices: stat (like iostat), top (like iotop)
 * and export (the counters for Prometheus).
 */
#include <err.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include <libsmartcols.h>

#include "iobandctl.h"
#include "metrics.h"

/* The options stat and top share. */
struct watch_opts {
	struct stat_report report;
	const char *columns;	/* -o */
	double interval;	/* seconds; 0: once */
	long count;		/* reports; 0: until stopped */
};

static void watch_columns(const struct command *cmd, struct watch_opts *w)
{
	const char *bad;
	size_t len;
	int rc;

	if (!w->columns)
		return;
	rc = stat_report_columns(&w->report, w->columns, &bad, &len);
	if (rc == -EINVAL) {
		warnx("unknown column '%.*s' in '%s'", (int)len, bad, w->columns);
		errtryhelp(cmd->name);
	}
	if (rc)
		errx(EXIT_FAILURE, "too many columns in '%s'", w->columns);
}

static long parse_count_arg(const char *arg)
{
	unsigned int n = parse_uint_arg("count", arg);

	if (!n)
		errx(EXIT_FAILURE, "invalid count '0': expected 1 or more");
	return n;
}

/*
 * Without -o, the default columns gain MIN and MAX (after WEIGHT) when a
 * device of @set shares by ranges.
 */
static void range_columns(struct watch_opts *w, const struct sample_set *set)
{
	size_t i;

	if (w->columns)
		return;
	for (i = 0; i < set->n; i++)
		if (ioband_range_policy(set->samples[i].stats.policy)) {
			stat_report_insert_after(&w->report, COL_WEIGHT, COL_MIN);
			stat_report_insert_after(&w->report, COL_MIN, COL_MAX);
			return;
		}
}

/* Render @rows of one report, in the order given, to a string. */
static char *render_rows(struct stat_report *r, const struct stat_row *rows,
			 size_t nrows)
{
	char *out = NULL;
	size_t i;

	if (stat_report_init(r))
		die_nomem();
	for (i = 0; i < nrows; i++)
		if (stat_report_add(r, &rows[i]))
			die_nomem();
	if (scols_print_table_to_string(r->tb, &out))
		die_nomem();
	stat_report_free(r);
	return out;
}

static void sleep_seconds(double secs)
{
	struct timespec ts = {
		.tv_sec = (time_t)secs,
		.tv_nsec = (long)((secs - (time_t)secs) * 1e9),
	};

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* The devices of @set as metrics_write() takes them; allocated. */
static struct metrics_device *metrics_devices(const struct sample_set *set)
{
	struct metrics_device *devs = xcalloc(set->n, sizeof(*devs));
	size_t i;

	for (i = 0; i < set->n; i++) {
		devs[i].name = set->samples[i].name;
		devs[i].stats = &set->samples[i].stats;
		devs[i].group_names = set->samples[i].names;
	}
	return devs;
}

/* The devices of @set and their groups, as schema.h writes them. */
static void print_json_report(const struct sample_set *set)
{
	struct schema_device *devs = xcalloc(set->n, sizeof(*devs));
	size_t i;

	for (i = 0; i < set->n; i++) {
		devs[i].name = set->samples[i].name;
		devs[i].stats = &set->samples[i].stats;
		devs[i].group_names = set->samples[i].names;
		devs[i].rates = set->rates[i];
	}
	schema_write_stats(stdout, devs, set->n);
	free(devs);
}

/* --json has every key of the schema: -o is for the tables. */
static void check_json_columns(const struct watch_opts *w)
{
	if (w->report.opts.json && w->columns)
		warnx("--output is ignored with --json: its keys are fixed "
		      "(iobandctl(8), JSON OUTPUT)");
}

static int metrics_format_arg(const char *arg)
{
	int format = metrics_parse_format(arg);

	if (format < 0)
		errx(EXIT_FAILURE, "unknown format '%s': use table, json, "
		     "prometheus or openmetrics", arg);
	return format;
}

/*
 * "; writeback charged by wb+orig-bio (dm layout from btf; bios by
 * orig-bio N, by wb N, by task N)": what the module says of it, an older
 * module's route alone.
 */
static void print_attribution(const struct ioband_stats *st, const char *wb)
{
	static const struct {
		const char *key;
		const char *route;
	} routes[] = {
		{ "attributed_orig_bio", "orig-bio" },
		{ "attributed_wb",       "wb" },
		{ "attributed_task",     "task" },
	};
	const char *layout = ioband_stats_field(st->fields, st->nr_fields,
						"dm_layout");
	const char *sep = " (";
	size_t i;

	printf("; writeback charged by %s", wb);
	if (layout) {
		printf("%sdm layout from %s", sep, layout);
		sep = "; ";
	}
	for (i = 0; i < sizeof(routes) / sizeof(*routes); i++) {
		const char *n = ioband_stats_field(st->fields, st->nr_fields,
						   routes[i].key);

		if (!n)
			continue;
		printf("%s%s %s", sep, !strcmp(sep, ", ") ? "by" : "bios by",
		       routes[i].route);
		printf(" %s", n);
		sep = ", ";
	}
	if (strcmp(sep, " ("))
		putchar(')');
}

/* @key of @st as a number, NAN when the module does not give it. */
static double stat_number(const struct ioband_stats *st, const char *key)
{
	const char *v = ioband_stats_field(st->fields, st->nr_fields, key);

	return v ? strtod(v, NULL) : NAN;
}

/*
 * Under weight-time, one more line: the device's service time as the
 * module measured it, and what a bio costs in sectors (the mean device
 * time of a sector the device recently completed).
 */
static void print_time_model(const char *name, const struct ioband_stats *st)
{
	const char *limited = ioband_stats_field(st->fields, st->nr_fields,
						 "time_rate_limited");

	if (!limited || strcmp(st->policy, "weight-time"))
		return;
	printf("%s: device time: read %.1f us + %.3f us a KiB, write %.1f us + %.3f us a KiB",
	       name, stat_number(st, "time_read_io_ns") / 1e3,
	       stat_number(st, "time_read_sector_ps") * 2 / 1e6,
	       stat_number(st, "time_write_io_ns") / 1e3,
	       stat_number(st, "time_write_sector_ps") * 2 / 1e6);
	if (!strcmp(limited, "1")) {
		printf("; not what limits the device: bios cost their sectors\n");
		return;
	}
	printf("; a bio costs, in sectors: read %.2f + %.3f a sector, write %.2f + %.3f a sector\n",
	       stat_number(st, "time_read_io_cost_milli") / 1e3,
	       stat_number(st, "time_read_sector_cost_milli") / 1e3,
	       stat_number(st, "time_write_io_cost_milli") / 1e3,
	       stat_number(st, "time_write_sector_cost_milli") / 1e3);
}

/*
 * ", 2 IOs overdue (1 below now, over 1.0 s)": the IOs that stayed below
 * so long that the window stopped counting them (ioband-design.rst
 * section 14a), when there were any.
 */
static void print_overdue(const struct ioband_stats *st)
{
	const char *all = ioband_stats_field(st->fields, st->nr_fields, "overdue");
	const char *now = ioband_stats_field(st->fields, st->nr_fields,
					     "overdue_in_flight");
	const char *after = ioband_stats_field(st->fields, st->nr_fields,
					       "overdue_after_ns");

	if (!all || !strcmp(all, "0"))
		return;
	printf(", %s IOs overdue", all);
	if (now && after)
		printf(" (%s below now, over %.1f s)", now,
		       strtod(after, NULL) / 1e9);
}

/*
 * Below the table, one line per device: the dispatch window the module
 * keeps (its stats message's window_* fields) and what it was derived
 * from, and how writeback is attributed. A module without them prints
 * nothing here.
 */
static void print_windows(const struct sample_set *set)
{
	size_t i;

	for (i = 0; i < set->n; i++) {
		const struct ioband_stats *st = &set->samples[i].stats;
		const char *sectors, *flight, *rate, *lat, *wb, *inl, *items;

		sectors = ioband_stats_field(st->fields, st->nr_fields,
					     "window_sectors");
		flight = ioband_stats_field(st->fields, st->nr_fields,
					    "in_flight_sectors");
		rate = ioband_stats_field(st->fields, st->nr_fields,
					  "window_rate_kbps");
		lat = ioband_stats_field(st->fields, st->nr_fields,
					 "window_min_lat_ns");
		wb = ioband_stats_field(st->fields, st->nr_fields,
					"writeback_attribution");
		inl = ioband_stats_field(st->fields, st->nr_fields,
					 "window_inline");
		items = ioband_stats_field(st->fields, st->nr_fields,
					   "time_window_items");
		if (!sectors || !flight || !rate || !lat)
			continue;
		printf("%s: ", set->samples[i].name);
		if (inl && !strcmp(inl, "1"))
			printf("no window: the device completes inline");
		else if (items && !strcmp(st->policy, "weight-time"))
			/* weight-time's window counts bios (section 14) */
			printf("window %s IOs (2 x the channels the device kept busy)",
			       items);
		else
			printf("window %.0f KiB (2 x %.2f MB/s x %.3f ms, at least 8 KiB)",
			       strtod(sectors, NULL) / 2,
			       strtod(rate, NULL) * 1024 / 1e6, strtod(lat, NULL) / 1e6);
		printf(", %.0f KiB in flight", strtod(flight, NULL) / 2);
		print_overdue(st);
		if (wb)
			print_attribution(st, wb);
		putchar('\n');
		print_time_model(set->samples[i].name, st);
	}
}

int cmd_stat(const struct command *cmd, int argc, char **argv)
{
	struct watch_opts w = {
		.report = {
			.columns = { COL_GROUP, COL_WEIGHT, COL_SHARE, COL_IOPS,
				     COL_MBPS, COL_QUEUED, COL_DELAYED, COL_WAIT,
				     COL_WAIT_MAX },
			.ncolumns = 9,
		},
		.count = 1,
	};
	struct sample_set prev = { 0 }, cur;
	int c, count_given = 0, failed = 0, metrics = -1;
	char **names;
	size_t nnames;
	long n;

	while ((c = next_option(cmd, argc, argv)) != -1) {
		if (output_option(c, &w.report.opts))
			continue;
		switch (c) {
		case 'o':
			w.columns = optarg;
			break;
		case 'i':
			w.interval = parse_seconds_arg("interval", optarg);
			break;
		case 'c':
			w.count = parse_count_arg(optarg);
			count_given = 1;
			break;
		case OPT_FORMAT:
			if (!strcmp(optarg, "json"))
				w.report.opts.json = 1;
			else if (strcmp(optarg, "table"))
				metrics = metrics_format_arg(optarg);
			break;
		case OPT_PROMETHEUS:
			metrics = METRICS_PROMETHEUS;
			break;
		default:
			other_option(cmd, c);
		}
	}
	check_operands(cmd, argc, 0, INT_MAX);
	if (count_given && !w.interval)
		errx(EXIT_FAILURE, "--count needs --interval: the reports after "
		     "the first cover an interval");
	if (metrics >= 0 && (w.interval || w.columns))
		errx(EXIT_FAILURE, "--format %s prints every counter once: no "
		     "--interval or --output (the collector takes the rates)",
		     metrics == METRICS_PROMETHEUS ? "prometheus" : "openmetrics");
	if (w.interval && !count_given)
		w.count = 0;
	/* With several devices, or every one, say which a row belongs to. */
	if (argc - optind != 1)
		stat_report_prepend_column(&w.report, COL_NAME);
	watch_columns(cmd, &w);
	check_json_columns(&w);
	/* No name: every ioband device, as top and export. */
	if (optind < argc) {
		names = argv + optind;
		nnames = argc - optind;
	} else {
		names = list_ioband_devices(&nnames);
		if (!nnames && !ioband_target_loaded())
			errx(EXIT_FAILURE, "dm-ioband is not loaded: load it "
			     "with modprobe dm-ioband");
	}

	for (n = 0; !w.count || n < w.count; n++) {
		char *out;

		if (n)
			sleep_seconds(w.interval);
		if (take_sample_set(&cur, names, nnames, n ? &prev : NULL,
				    n > 0))
			failed = 1;
		/* The first report tells what failed: then stop. */
		if (!cur.n || (failed && !n)) {
			free_sample_set(&cur);
			break;
		}
		if (metrics >= 0) {
			struct metrics_device *devs = metrics_devices(&cur);

			if (metrics_write(stdout, metrics, devs, cur.n))
				failed = 1;
			free(devs);
			free_sample_set(&cur);
			break;
		}
		if (w.report.opts.json) {
			print_json_report(&cur);
		} else {
			range_columns(&w, &cur);
			out = render_rows(&w.report, cur.rows, cur.nrows);
			printf("%s%s\n", n ? "\n" : "", out);
			if (!w.report.opts.raw && !w.report.opts.noheadings)
				print_windows(&cur);
			free(out);
		}
		fflush(stdout);
		free_sample_set(&prev);
		prev = cur;
	}
	free_sample_set(&prev);
	if (names != argv + optind)
		free_names(names, nnames);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

int cmd_export(const struct command *cmd, int argc, char **argv)
{
	int c, format = METRICS_PROMETHEUS, ok = 1;
	struct metrics_device *devs;
	const char *dir = NULL;
	struct sample_set set;
	char **names, *text = NULL;
	size_t nnames, size = 0;
	FILE *out;

	while ((c = next_option(cmd, argc, argv)) != -1) {
		switch (c) {
		case 'T':
			dir = optarg;
			break;
		case OPT_FORMAT:
			format = metrics_format_arg(optarg);
			break;
		default:
			other_option(cmd, c);
		}
	}
	check_operands(cmd, argc, 0, INT_MAX);
	/*
	 * Named devices must be ioband devices; else every one there is,
	 * none without the module: for a timer, no device is no error.
	 */
	if (optind < argc) {
		names = argv + optind;
		nnames = argc - optind;
	} else {
		names = list_ioband_devices(&nnames);
	}
	if (take_sample_set(&set, names, nnames, NULL, optind == argc) &&
	    optind < argc)
		ok = 0;

	out = open_memstream(&text, &size);
	if (!out)
		die_nomem();
	devs = metrics_devices(&set);
	if (metrics_write(out, format, devs, set.n) | fclose(out))
		die_nomem();
	free(devs);
	free_sample_set(&set);
	if (names != argv + optind)
		free_names(names, nnames);

	if (!ok) {
		/* A named device failed: no file that leaves it out. */
	} else if (dir) {
		/* node_exporter reads *.prom only: not the file written aside. */
		char *path = xasprintf("%s/ioband.prom", dir);

		ok = write_file_atomically(path, text);
		free(path);
	} else {
		fputs(text, stdout);
		ok = !fflush(stdout) && !ferror(stdout);
	}
	free(text);
	return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}

/* top's terminal: raw keys, the alternate screen, restored at exit. */
static struct termios saved_termios;
static int term_saved;
static volatile sig_atomic_t stop_requested;

static void on_signal(int sig __attribute__((unused)))
{
	stop_requested = 1;
}

static void restore_terminal(void)
{
	if (term_saved)
		tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved_termios);
	/* Cursor back, alternate screen off. */
	fputs("\033[?25h\033[?1049l", stdout);
	fflush(stdout);
}

static void setup_terminal(void)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct termios raw;

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (isatty(STDIN_FILENO) && !tcgetattr(STDIN_FILENO, &saved_termios)) {
		raw = saved_termios;
		raw.c_lflag &= ~(ICANON | ECHO);
		raw.c_cc[VMIN] = 1;
		raw.c_cc[VTIME] = 0;
		if (!tcsetattr(STDIN_FILENO, TCSAFLUSH, &raw))
			term_saved = 1;
	}
	atexit(restore_terminal);
	fputs("\033[?1049h\033[?25l", stdout);
}

/*
 * Wait @secs for a key on stdin: returns 1 for q (quit). A closed stdin is
 * not looked at again.
 */
static int wait_key(double secs, int *stdin_open)
{
	uint64_t end = now_ns() + (uint64_t)(secs * 1e9);

	while (!stop_requested) {
		uint64_t now = now_ns();
		struct pollfd pfd = { .fd = STDIN_FILENO, .events = POLLIN };
		char ch;
		int rc;

		if (now >= end)
			return 0;
		rc = poll(&pfd, *stdin_open, (end - now) / 1000000 + 1);
		if (rc <= 0)
			continue;
		if (read(STDIN_FILENO, &ch, 1) != 1) {
			*stdin_open = 0;
			continue;
		}
		if (ch == 'q' || ch == 'Q')
			return 1;
	}
	return 1;
}

static void terminal_size(int *rows, int *cols)
{
	struct winsize ws;

	*rows = 24;
	*cols = 80;
	if (!ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) && ws.ws_row && ws.ws_col) {
		*rows = ws.ws_row;
		*cols = ws.ws_col;
	}
}

/* Print @text, at most @max lines of at most @width columns. */
static void print_clipped(const char *text, int max, int width)
{
	int lines = 0;

	while (*text && lines < max) {
		size_t len = strcspn(text, "\n");

		printf("%.*s\033[K\n", (int)(len < (size_t)width ? len : (size_t)width),
		       text);
		text += len + !!text[len];
		lines++;
	}
}

static void top_frame(const struct sample_set *set, struct stat_report *r,
		      int batch)
{
	double iops = 0, bps = 0;
	char clock[16], *table;
	int rows, cols;
	time_t t = time(NULL);
	size_t i;

	if (r->opts.json) {
		print_json_report(set);
		fflush(stdout);
		return;
	}
	for (i = 0; i < set->nrows; i++) {
		iops += set->rows[i].rates->iops;
		bps += set->rows[i].rates->bytes_per_sec;
	}
	strftime(clock, sizeof(clock), "%H:%M:%S", localtime(&t));
	qsort(set->rows, set->nrows, sizeof(*set->rows), stat_row_cmp_throughput);
	table = render_rows(r, set->rows, set->nrows);

	terminal_size(&rows, &cols);
	if (batch) {
		printf("iobandctl top - %s, %zu device%s, %.1f IOPS, %.2f MB/s\n%s\n\n",
		       clock, set->n, set->n == 1 ? "" : "s", iops, bps / 1e6,
		       table);
	} else {
		printf("\033[H");
		printf("iobandctl top - %s, %zu device%s, %.1f IOPS, %.2f MB/s"
		       "   (q: quit)\033[K\n\033[K\n", clock, set->n,
		       set->n == 1 ? "" : "s", iops, bps / 1e6);
		print_clipped(table, rows - 3, cols);
		printf("\033[J");
	}
	fflush(stdout);
	free(table);
}

int cmd_top(const struct command *cmd, int argc, char **argv)
{
	struct watch_opts w = {
		.report = {
			.columns = { COL_NAME, COL_GROUP, COL_WEIGHT, COL_SHARE,
				     COL_IOPS, COL_MBPS, COL_QUEUED, COL_WAIT },
			.ncolumns = 8,
		},
		.interval = 1,
	};
	struct sample_set prev = { 0 }, cur;
	int c, batch = 0, stdin_open = 1;
	char **names;
	size_t nnames;
	long n;

	while ((c = next_option(cmd, argc, argv)) != -1) {
		if (output_option(c, &w.report.opts))
			continue;
		switch (c) {
		case 'i':
			w.interval = parse_seconds_arg("interval", optarg);
			break;
		case 'B':
			batch = 1;
			break;
		case 'c':
			w.count = parse_count_arg(optarg);
			break;
		case 'o':
			w.columns = optarg;
			break;
		default:
			other_option(cmd, c);
		}
	}
	check_operands(cmd, argc, 0, INT_MAX);
	watch_columns(cmd, &w);
	check_json_columns(&w);
	/* JSON is for programs: no terminal control. */
	if (w.report.opts.json)
		batch = 1;

	/* Named devices must exist; else every ioband device, as they come. */
	if (optind < argc) {
		take_sample_set(&cur, argv + optind, argc - optind, NULL, 0);
		if (cur.n < (size_t)(argc - optind))
			return EXIT_FAILURE;
		free_sample_set(&cur);
	} else if (!ioband_target_loaded()) {
		errx(EXIT_FAILURE, "dm-ioband is not loaded: load it with "
		     "modprobe dm-ioband");
	}

	if (!batch)
		setup_terminal();
	for (n = 0; !w.count || n < w.count; n++) {
		if (n && (batch ? (sleep_seconds(w.interval), stop_requested) :
				  wait_key(w.interval, &stdin_open)))
			break;
		if (optind < argc) {
			names = argv + optind;
			nnames = argc - optind;
		} else {
			names = list_ioband_devices(&nnames);
		}
		take_sample_set(&cur, names, nnames, n ? &prev : NULL, 1);
		if (names != argv + optind)
			free_names(names, nnames);
		range_columns(&w, &cur);
		top_frame(&cur, &w.report, batch);
		free_sample_set(&prev);
		prev = cur;
	}
	free_sample_set(&prev);
	return EXIT_SUCCESS;
}

/*
 * main
 */

void stat_columns_help(void)
{
	printf("\nAvailable output columns:\n");
	stat_report_columns_help(stdout);
	printf("\nThe default group holds every process without a group of its "
	       "own.\nRates and shares cover the interval; the first report "
	       "covers the time\nsince the counters started (or reset), and "
	       "shows no rates when the\nmodule does not say how long that is.\n");
}
