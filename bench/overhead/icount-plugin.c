// SPDX-License-Identifier: GPL-2.0
/*
 * A QEMU TCG plugin that counts the guest's instructions, for
 * bench/run-overhead --icount: what an IO costs in instructions, whatever
 * the host and however fast TCG runs them.
 *
 *   qemu-system-x86_64 ... -plugin icount-plugin.so,dir=DIR
 *
 * Every translation block counts its runs, in the counters of the vCPU
 * that runs it: each vCPU's thread writes only its own, so that counting
 * costs no contention between them (one shared counter made the guest
 * 12 times slower, and how much slower depended on how busy both vCPUs
 * were). When a file DIR/request appears holding a NAME, the plugin
 * writes DIR/NAME: "missed M", the translations it could not count, then
 * "<address> <instructions> <runs>" for each block that has run, and
 * removes the request. Two such snapshots around a window give the
 * instructions per IO and, by the guest's symbols, where they went.
 *
 * Debian's QEMU ships no plugin header: the few declarations below are
 * those of QEMU's include/qemu/qemu-plugin.h at API version 1 (QEMU 4.2 to
 * 8.1), which qemu_plugin_install() checks QEMU still offers.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- QEMU's plugin API, version 1 ---- */
#define QEMU_PLUGIN_EXPORT __attribute__((visibility("default")))
#define QEMU_PLUGIN_VERSION 1

typedef uint64_t qemu_plugin_id_t;

typedef struct qemu_info_t {
	const char *target_name;
	struct {
		int min;
		int cur;
	} version;
	bool system_emulation;
	union {
		struct {
			int smp_vcpus;
			int max_vcpus;
		} system;
	};
} qemu_info_t;

struct qemu_plugin_tb;

enum qemu_plugin_cb_flags {
	QEMU_PLUGIN_CB_NO_REGS,
	QEMU_PLUGIN_CB_R_REGS,
	QEMU_PLUGIN_CB_RW_REGS,
};

typedef void (*qemu_plugin_vcpu_udata_cb_t)(unsigned int vcpu_index,
					    void *userdata);
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id,
					       struct qemu_plugin_tb *tb);

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id,
					   qemu_plugin_vcpu_tb_trans_cb_t cb);
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb,
					  qemu_plugin_vcpu_udata_cb_t cb,
					  enum qemu_plugin_cb_flags flags,
					  void *userdata);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;
/* ---- end of QEMU's API ---- */

/* How often the plugin looks for a request. */
#define POLL_US 1000
/*
 * Translations counted: a boot and the runs of run-overhead translate a
 * few hundred thousand (QEMU's "info jit" counted 203,337 blocks as the
 * first run after a boot began). A block translated again gets a new one;
 * those past the last are not counted, and the snapshots say so.
 */
#define MAX_BLOCKS (1 << 22)

/* One translation of a block. */
struct block {
	uint64_t address;
	uint64_t insns;
};

static const char *dir;
static struct block *blocks;
static _Atomic uint32_t nr_blocks;	/* filled in blocks */
static _Atomic uint64_t blocks_missed;	/* translations past MAX_BLOCKS */
static int nr_vcpus;
/* runs[vcpu][block]: a vCPU's thread writes only its own row. */
static uint64_t **runs;
static pthread_mutex_t blocks_lock = PTHREAD_MUTEX_INITIALIZER;

static void block_ran(unsigned int vcpu_index, void *userdata)
{
	if (vcpu_index < (unsigned int)nr_vcpus)
		runs[vcpu_index][(uintptr_t)userdata]++;
}

static void block_translated(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	uint32_t i;

	pthread_mutex_lock(&blocks_lock);
	i = atomic_load(&nr_blocks);
	if (i == MAX_BLOCKS) {
		pthread_mutex_unlock(&blocks_lock);
		atomic_fetch_add(&blocks_missed, 1);
		return;
	}
	blocks[i].address = qemu_plugin_tb_vaddr(tb);
	blocks[i].insns = qemu_plugin_tb_n_insns(tb);
	/* The snapshot reads blocks[i] once it sees nr_blocks past i. */
	atomic_store(&nr_blocks, i + 1);
	pthread_mutex_unlock(&blocks_lock);
	qemu_plugin_register_vcpu_tb_exec_cb(tb, block_ran,
					     QEMU_PLUGIN_CB_NO_REGS,
					     (void *)(uintptr_t)i);
}

static void write_snapshot(const char *name)
{
	uint32_t i, n = atomic_load(&nr_blocks);
	uint64_t *block_runs;
	char path[4096];
	FILE *out;
	int vcpu;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	block_runs = malloc(n * sizeof(*block_runs));
	out = fopen(path, "w");
	if (!out || !block_runs) {
		fprintf(stderr, "icount-plugin: %s: %s\n", path, strerror(errno));
		if (out)
			fclose(out);
		free(block_runs);
		return;
	}
	/* Read at once, written out afterwards: the window ends here. */
	for (i = 0; i < n; i++) {
		block_runs[i] = 0;
		for (vcpu = 0; vcpu < nr_vcpus; vcpu++)
			block_runs[i] += ((volatile uint64_t *)runs[vcpu])[i];
	}
	fprintf(out, "missed %" PRIu64 "\n", atomic_load(&blocks_missed));
	for (i = 0; i < n; i++)
		if (block_runs[i])
			fprintf(out, "%" PRIx64 " %" PRIu64 " %" PRIu64 "\n",
				blocks[i].address, blocks[i].insns,
				block_runs[i]);
	fclose(out);
	free(block_runs);
}

/* Answers the requests in dir, one at a time, for as long as QEMU runs. */
static void *serve_requests(void *unused)
{
	char request[4096], name[256];
	FILE *f;

	snprintf(request, sizeof(request), "%s/request", dir);
	for (;;) {
		usleep(POLL_US);
		f = fopen(request, "r");
		if (!f)
			continue;
		if (!fgets(name, sizeof(name), f))
			name[0] = '\0';
		fclose(f);
		name[strcspn(name, "\n")] = '\0';
		/* A name must stay inside dir. */
		if (name[0] && !strchr(name, '/') && name[0] != '.')
			write_snapshot(name);
		unlink(request);
	}
	return NULL;
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
					   const qemu_info_t *info,
					   int argc, char **argv)
{
	pthread_t server;
	int i;

	if (info->version.min > QEMU_PLUGIN_VERSION ||
	    info->version.cur < QEMU_PLUGIN_VERSION) {
		fprintf(stderr, "icount-plugin: QEMU offers plugin API %d to %d, not %d\n",
			info->version.min, info->version.cur,
			QEMU_PLUGIN_VERSION);
		return -1;
	}
	for (i = 0; i < argc; i++)
		if (!strncmp(argv[i], "dir=", 4))
			dir = argv[i] + 4;
	if (!dir || !*dir) {
		fprintf(stderr, "icount-plugin: needs dir=DIR\n");
		return -1;
	}
	nr_vcpus = info->system_emulation ? info->system.max_vcpus : 1;
	blocks = calloc(MAX_BLOCKS, sizeof(*blocks));
	runs = calloc(nr_vcpus, sizeof(*runs));
	for (i = 0; blocks && runs && i < nr_vcpus; i++) {
		runs[i] = calloc(MAX_BLOCKS, sizeof(**runs));
		if (!runs[i])
			break;
	}
	if (!blocks || !runs || i < nr_vcpus) {
		fprintf(stderr, "icount-plugin: out of memory\n");
		return -1;
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, block_translated);
	if (pthread_create(&server, NULL, serve_requests, NULL)) {
		fprintf(stderr, "icount-plugin: cannot start its thread\n");
		return -1;
	}
	pthread_detach(server);
	return 0;
}
