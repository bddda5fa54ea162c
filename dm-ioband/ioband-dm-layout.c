// SPDX-License-Identifier: GPL-2.0
/*
 * Compiled only to assembly, against drivers/md/dm-core.h of the very
 * kernel the module is built for (Kbuild's IOBAND_DM_SOURCE): Kbuild turns
 * the offsets below into ioband-dm-layout.h for dm-ioband-target.c, which
 * reads these fields of dm's private per-io structures to find a clone's
 * original bio. A field that is gone or has changed its type stops the
 * build here rather than being read wrong.
 */
#include <linux/kbuild.h>
#include "dm-core.h"

#define IOBAND_ASSERT_TYPE(str, mem, type)				\
	static_assert(__same_type(((struct str *)NULL)->mem, type),	\
		      "struct " #str "." #mem " is not " #type)

IOBAND_ASSERT_TYPE(dm_target_io, magic, unsigned short);
IOBAND_ASSERT_TYPE(dm_target_io, io, struct dm_io *);
IOBAND_ASSERT_TYPE(dm_target_io, ti, struct dm_target *);
IOBAND_ASSERT_TYPE(dm_target_io, clone, struct bio);
IOBAND_ASSERT_TYPE(dm_io, magic, unsigned short);
IOBAND_ASSERT_TYPE(dm_io, md, struct mapped_device *);
IOBAND_ASSERT_TYPE(dm_io, orig_bio, struct bio *);

/* main, as in the kernel's asm-offsets.c: never run, only compiled to .s. */
int main(void)
{
	DEFINE(IOBAND_DM_TIO_MAGIC, DM_TIO_MAGIC);
	DEFINE(IOBAND_DM_IO_MAGIC, DM_IO_MAGIC);
	OFFSET(IOBAND_TIO_MAGIC, dm_target_io, magic);
	OFFSET(IOBAND_TIO_IO, dm_target_io, io);
	OFFSET(IOBAND_TIO_TI, dm_target_io, ti);
	OFFSET(IOBAND_TIO_CLONE, dm_target_io, clone);
	OFFSET(IOBAND_IO_MAGIC, dm_io, magic);
	OFFSET(IOBAND_IO_MD, dm_io, md);
	OFFSET(IOBAND_IO_ORIG_BIO, dm_io, orig_bio);
	return 0;
}
