// SPDX-License-Identifier: GPL-2.0
/*
 * A QEMU TCG plugin that counts the guest's instructions, for
 * bench/run-overhead --icount: what an IO costs in instructions, whatever
 * the host and however fast TCG runs them.
 *
 *   qemu-system-x86_64 ... -plugin icount-plugin.so,dir=DIR
 *
 * Every translation block counts its instructions each time it runs, into
 * its own record and into the kernel's or user space's total (the top bit
 * of its address). When a file DIR/request appears holding a NAME, the
 * plugin writes DIR/NAME: "kernel K user U" (the totals so far), then
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

/* One translation of a block; a block translated again gets a new one. */
struct block {
	uint64_t address;
	uint64_t insns;
	_Atomic uint64_t runs;
};

static const char *dir;
static _Atomic uint64_t total_insns[2];	/* user space, kernel */
static struct block **blocks;
static size_t nr_blocks, blocks_room;
static pthread_mutex_t blocks_lock = PTHREAD_MUTEX_INITIALIZER;

/* Both vCPUs' threads count here: the adds must be atomic. */
static void block_ran(unsigned int vcpu_index, void *userdata)
{
	struct block *b = userdata;

	atomic_fetch_add_explicit(&b->runs, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&total_insns[b->address >> 63], b->insns,
				  memory_order_relaxed);
}

static void block_translated(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	struct block *b = calloc(1, sizeof(*b));

	if (!b)
		return;		/* not counted: the snapshot's totals fall short */
	b->address = qemu_plugin_tb_vaddr(tb);
	b->insns = qemu_plugin_tb_n_insns(tb);
	pthread_mutex_lock(&blocks_lock);
	if (nr_blocks == blocks_room) {
		size_t room = blocks_room ? 2 * blocks_room : 65536;
		struct block **grown = realloc(blocks, room * sizeof(*grown));

		if (!grown) {
			pthread_mutex_unlock(&blocks_lock);
			free(b);
			return;
		}
		blocks = grown;
		blocks_room = room;
	}
	blocks[nr_blocks++] = b;
	pthread_mutex_unlock(&blocks_lock);
	qemu_plugin_register_vcpu_tb_exec_cb(tb, block_ran,
					     QEMU_PLUGIN_CB_NO_REGS, b);
}

static void write_snapshot(const char *name)
{
	char path[4096];
	FILE *out;
	size_t i;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	out = fopen(path, "w");
	if (!out) {
		fprintf(stderr, "icount-plugin: %s: %s\n", path, strerror(errno));
		return;
	}
	fprintf(out, "kernel %" PRIu64 " user %" PRIu64 "\n",
		atomic_load(&total_insns[1]), atomic_load(&total_insns[0]));
	pthread_mutex_lock(&blocks_lock);
	for (i = 0; i < nr_blocks; i++) {
		uint64_t runs = atomic_load_explicit(&blocks[i]->runs,
						     memory_order_relaxed);

		if (runs)
			fprintf(out, "%" PRIx64 " %" PRIu64 " %" PRIu64 "\n",
				blocks[i]->address, blocks[i]->insns, runs);
	}
	pthread_mutex_unlock(&blocks_lock);
	fclose(out);
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
	qemu_plugin_register_vcpu_tb_trans_cb(id, block_translated);
	if (pthread_create(&server, NULL, serve_requests, NULL)) {
		fprintf(stderr, "icount-plugin: cannot start its thread\n");
		return -1;
	}
	pthread_detach(server);
	return 0;
}
