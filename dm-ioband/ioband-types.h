/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What every part of dm-ioband's core shares: integer types that are the
 * same in the kernel and in userspace, IO directions and weight limits.
 */
#ifndef IOBAND_TYPES_H
#define IOBAND_TYPES_H

#ifdef __KERNEL__
#include <linux/types.h>
#else
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
typedef uint64_t u64;
typedef int64_t s64;
typedef uint32_t u32;
#endif

#define IOBAND_MIN_WEIGHT	1
#define IOBAND_MAX_WEIGHT	32767
#define IOBAND_DEFAULT_WEIGHT	100

enum ioband_dir {
	IOBAND_READ,
	IOBAND_WRITE,
	IOBAND_NR_DIRS
};

#endif /* IOBAND_TYPES_H */
