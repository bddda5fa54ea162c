# dm-ioband: the kernel module, iobandctl and their tests.
#
#   make            build dm-ioband.ko (against KDIR) and iobandctl
#   make check      every test: unit tests, then guest tests on 6.1 and 6.12
#   make demo       boot a guest and share a device 200:100 between cgroups
#   make bench-fairness   shares, throughput and latency vs dm-linear, in a guest
#
# KDIR defaults to the running kernel's build tree, else the Debian 6.1
# headers that scripts/fetch-kernels caches in ~/.cache/dm-ioband
# (DM_IOBAND_CACHE overrides the folder).

DEMO_KERNEL ?= 6.1

all: module tools

module:
	$(MAKE) -C dm-ioband $(if $(KDIR),KDIR=$(KDIR))

tools:
	$(MAKE) -C tools

deps:
	scripts/install-deps

kernels: deps
	scripts/fetch-kernels

check:
	tests/check

demo: deps
	scripts/fetch-kernels $(DEMO_KERNEL)
	$(MAKE) -C tools
	tests/vm/run --kernel $(DEMO_KERNEL) --verbose tests/vm/demo.sh

bench-fairness: deps
	scripts/fetch-kernels
	bench/run-fairness --kernel both

clean:
	-$(MAKE) -C dm-ioband clean
	$(MAKE) -C tools clean
	$(MAKE) -C tests/unit/core clean

.PHONY: all module tools deps kernels check demo bench-fairness clean
