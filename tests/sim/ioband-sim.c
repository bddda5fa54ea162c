// SPDX-License-Identifier: GPL-2.0
/*
 * ioband-sim SCENARIO_FILE...: replays each scenario against the real
 * scheduling core and prints per-group shares. The file format is
 * described at the top of sim-parse.c. Exits 1 if a scenario cannot be
 * read, breaks one of the core's invariants or misses what it expects.
 */
#include <stdlib.h>

#include "sim.h"

int main(int argc, char **argv)
{
	int i, rc = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: %s SCENARIO_FILE...\n", argv[0]);
		return 2;
	}
	for (i = 1; i < argc; i++) {
		struct sim_cfg cfg;
		struct sim_result res;
		char err[256];
		FILE *f = fopen(argv[i], "r");

		if (!f) {
			perror(argv[i]);
			rc = 1;
			continue;
		}
		if (sim_parse(f, &cfg, err, sizeof(err))) {
			fprintf(stderr, "%s: %s\n", argv[i], err);
			fclose(f);
			sim_cfg_free(&cfg);
			rc = 1;
			continue;
		}
		fclose(f);
		sim_run(&cfg, &res);
		printf("== %s\n", argv[i]);
		sim_print(stdout, &cfg, &res);
		if (sim_violations(&res))
			rc = 1;
		if (sim_check_expects(&cfg, &res, err, sizeof(err))) {
			printf("expectation missed: %s\n", err);
			rc = 1;
		} else if (cfg.nr_expects) {
			printf("expectations met: %u\n", cfg.nr_expects);
		}
		sim_result_free(&res);
		sim_cfg_free(&cfg);
		if (i + 1 < argc)
			printf("\n");
	}
	return rc;
}
