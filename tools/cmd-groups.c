// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The commands that change a live device by messages: set, attach, detach,
 * policy, reset.
 */
#include <err.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iobandctl.h"


/*
 * set, attach, detach, policy, reset: messages to a live device
 */

/*
 * Give group @id (@is_default: the default group) its spec under the
 * device's policy: "weight [<id>:]<w>" and "range-bw <id>|-1:<min>:<max>".
 */
void send_spec(struct target *tg, int is_default, uint64_t id,
		      const struct ioband_group_spec *g)
{
	enum ioband_spec spec = ioband_spec_of_policy(tg->table.policy);

	if (spec != IOBAND_SPEC_RANGE) {
		if (is_default)
			change_device(tg->name, "weight %u", g->weight);
		else
			change_device(tg->name, "weight %" PRIu64 ":%u", id,
				      g->weight);
	}
	if (spec == IOBAND_SPEC_WEIGHT)
		return;
	if (is_default)
		change_device(tg->name, "range-bw -1:%u:%u", g->min_kbps,
			      g->max_kbps);
	else
		change_device(tg->name, "range-bw %" PRIu64 ":%u:%u", id,
			      g->min_kbps, g->max_kbps);
}

/* KEY=SPEC, the key "default" for the default group. */
static void set_weight(struct target *tg, const char *arg)
{
	struct ioband_group_spec g;
	char *key = split_key_spec("group", tg->table.policy, arg, &g);

	if (!strcmp(key, GROUP_KEY_DEFAULT))
		send_spec(tg, 1, 0, &g);
	else
		send_spec(tg, 0, target_key(tg, key), &g);
	free(key);
}

/*
 * set, attach, detach, policy and reset: open the device named by the
 * first operand (an ioband device of one target, its table read; exit if
 * not), let @send send the messages given the operands after the device
 * and @ctx, close it.
 */
static int change_command(char **argv,
			  void (*send)(struct target *tg, char **operands,
				       void *ctx),
			  void *ctx)
{
	struct target tg;

	if (!open_target(&tg, argv[optind], 0))
		exit(EXIT_FAILURE);
	send(&tg, argv + optind + 1, ctx);
	close_target(&tg);
	return EXIT_SUCCESS;
}

/*
 * The policy first (the specs after it are read as it wants), then the
 * tunables' messages (@ctx, NULL-terminated, "policy <name>" first when
 * given), then each KEY=SPEC.
 */
static void send_set(struct target *tg, char **operands, void *ctx)
{
	char **messages = ctx;

	if (*messages && !strncmp(*messages, "policy ", 7)) {
		change_device(tg->name, "%s", *messages);
		snprintf(tg->table.policy, sizeof(tg->table.policy), "%s",
			 *messages + 7);
		messages++;
	}
	for (; *messages; messages++)
		change_device(tg->name, "%s", *messages);
	for (; *operands; operands++)
		set_weight(tg, *operands);
}

int cmd_set(const struct command *cmd, int argc, char **argv)
{
	/* The message of each option. */
	static const struct {
		int opt;
		const char *option;
		const char *message;
	} tunables[] = {
		{ OPT_IO_LIMIT,    "--io-limit",    "io_limit" },
		{ OPT_IO_THROTTLE, "--io-throttle", "io_throttle" },
		{ OPT_TOKEN_BASE,  "--token-base",  "token" },
		{ OPT_CARRYOVER,   "--carryover",   "carryover" },
	};
	char **messages = xcalloc(argc + 2, sizeof(*messages));
	size_t nmessages = 0, i;
	char *policy = NULL;
	int c;

	while ((c = next_option(cmd, argc, argv)) != -1) {
		if (c == 'p') {
			check_policy(optarg);
			free(policy);
			policy = xasprintf("policy %s", optarg);
			continue;
		}
		for (i = 0; i < sizeof(tunables) / sizeof(*tunables); i++)
			if (c == tunables[i].opt)
				break;
		if (i < sizeof(tunables) / sizeof(*tunables)) {
			messages[nmessages++] = xasprintf("%s %u",
				tunables[i].message,
				parse_uint_arg(tunables[i].option, optarg));
			continue;
		}
		other_option(cmd, c);
	}
	check_operands(cmd, argc, nmessages || policy ? 1 : 2, INT_MAX);
	if (policy) {
		memmove(messages + 1, messages, nmessages * sizeof(*messages));
		messages[0] = policy;
		nmessages++;
	}

	change_command(argv, send_set, messages);
	for (i = 0; i < nmessages; i++)
		free(messages[i]);
	free(messages);
	return EXIT_SUCCESS;
}

/* <key> [<spec>]: attach, then the spec's range under a range policy. */
static void send_attach(struct target *tg, char **operands,
			void *ctx __attribute__((unused)))
{
	enum ioband_spec spec = ioband_spec_of_policy(tg->table.policy);
	uint64_t id = target_key(tg, operands[0]);
	struct ioband_group_spec g;

	if (!operands[1]) {
		change_device(tg->name, "attach %" PRIu64, id);
	} else if (spec == IOBAND_SPEC_WEIGHT) {
		change_device(tg->name, "attach %" PRIu64 ":%u", id,
			      parse_weight_arg(operands[1]));
	} else {
		if (ioband_parse_spec(spec, operands[1], &g))
			errx(EXIT_FAILURE, "invalid spec '%s': policy %s "
			     "wants %s", operands[1], tg->table.policy,
			     ioband_spec_help(spec));
		change_device(tg->name, "attach %" PRIu64 ":%u", id, g.weight);
		send_spec(tg, 0, id, &g);
	}
}

int cmd_attach(const struct command *cmd, int argc, char **argv)
{
	parse_no_options(cmd, argc, argv, 2, 3);
	return change_command(argv, send_attach, NULL);
}

static void send_detach(struct target *tg, char **operands,
			void *ctx __attribute__((unused)))
{
	change_device(tg->name, "detach %" PRIu64, target_key(tg, operands[0]));
}

int cmd_detach(const struct command *cmd, int argc, char **argv)
{
	parse_no_options(cmd, argc, argv, 2, 2);
	return change_command(argv, send_detach, NULL);
}

/* The same as set --policy, kept as a command of its own. */
int cmd_policy(const struct command *cmd, int argc, char **argv)
{
	char *messages[2];
	int rc;

	parse_no_options(cmd, argc, argv, 2, 2);
	check_policy(argv[optind + 1]);
	messages[0] = xasprintf("policy %s", argv[optind + 1]);
	messages[1] = NULL;
	argv[optind + 1] = NULL;	/* no KEY=SPEC */
	rc = change_command(argv, send_set, messages);
	free(messages[0]);
	return rc;
}

static void send_reset(struct target *tg,
		       char **operands __attribute__((unused)),
		       void *ctx __attribute__((unused)))
{
	change_device(tg->name, "reset");
}

int cmd_reset(const struct command *cmd, int argc, char **argv)
{
	parse_no_options(cmd, argc, argv, 1, 1);
	return change_command(argv, send_reset, NULL);
}
