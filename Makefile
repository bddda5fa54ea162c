# dm-ioband: the kernel module, iobandctl and their tests.
#
#   make            build dm-ioband.ko (against KDIR) and iobandctl
#   make check      every test: unit tests, then guest tests on 6.1 and newest
#                   (7.3, scripts/kernels.pinned), a smoke subset on 6.12;
#                   the long storage-stack tests run on 6.1 only, the long
#                   reliability tests on newest only (tests/check)
#   make check-full the same with the whole guest suite on 6.1, 6.12 and newest
#   make check-debug  (not in CI) the guest tests and a SOAK_MIN (3) minute
#                   soak on a 6.1 kernel built from Debian's source with
#                   KASAN, lockdep, DEBUG_OBJECTS, kmemleak; the kernel build
#                   (scripts/build-debug-kernel, 30-60 min) is cached
#   make demo       boot a guest and share a device 200:100 between cgroups
#   make bench      dm-ioband against BFQ, blk-iocost, blk-throttle and plain
#                   dm-linear, in a guest, on 6.1 and 6.12: bench/results/<kernel>/
#                   bench.md|csv, plots/, samples/, and bench/results/RESULTS.md
#                   (3 boots a kernel, about 3 hours in all), then bench-flip
#   make bench-fairness   the same (an alias, kept from before the peers)
#   make bench-flip how fast a change of weight takes effect, ioband (message,
#                   io.weight under follow) against iocost, BFQ, io.max, on
#                   6.1 and 6.12, 3 boots each: bench/results/weight-flip.md
#                   (about 3 minutes a boot; takes the guest lock itself)
#   make bench-modeldev  shares of device time on the model block device
#                   (tests/modeldev, ssd and hdd), ioband against BFQ swept
#                   and iocost given the true and its default model, on 6.1
#                   and 6.12, 3 boots each: bench/results/modeldev/<kernel>.md|csv
#                   (about 43 minutes a boot; takes the guest lock itself)
#   make bench-attribution  seed004 and bw2 with the module built with dm's
#                   layout from source, from BTF and with none, on 6.1, 6.12
#                   and newest: bench/results/attribution/ (about an hour)
#   make bench-overhead   instructions per bio; CPU-bound IOPS vs dm-linear
#   make soak       SOAK_MIN minutes of verified IO under churn, each kernel
#   make fuzz       the libFuzzer targets for FUZZ_TIME seconds each
#   make install    the module (into /lib/modules/<kver>/updates, then depmod),
#                   iobandctl, its man page and completion, the systemd units
#                   and generator, the docs; make uninstall removes them.
#                   DESTDIR, PREFIX (/usr), INSTALL_MOD_PATH, KDIR as usual;
#                   depmod runs only without DESTDIR (else: depmod -b by hand).
#                   The units go where systemd.pc says (SYSTEMDUNITDIR,
#                   SYSTEMDGENERATORDIR), as in the package
#   make install-dkms-src  the module's source as DKMS builds it, in
#                   /usr/src/dm-ioband-<version> (DKMS_SRCDIR): dkms.conf with
#                   the version filled in, VERSION, dm-ioband/; the package's
#                   very tree. make uninstall-dkms-src removes it
#   make deb        the Debian packages dm-ioband-dkms and iobandctl, in ../
#   make dkms-check build the module with DKMS for the cached 6.1, 6.12 and newest
#                   headers, in a temporary DKMS tree
#
# KDIR defaults to the running kernel's build tree, else the Debian 6.1
# headers that scripts/fetch-kernels caches in ~/.cache/dm-ioband
# (DM_IOBAND_CACHE overrides the folder).
#
# The release is the one line of VERSION: iobandctl --version, the module's
# MODULE_VERSION and the DKMS tree read it. debian/changelog must carry the
# same (debian/rules and tests/install-check refuse a difference).

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

check-full:
	tests/check --full

check-debug: deps
	tests/check --vm-only --kernels 6.1-debug --soak $(or $(SOAK_MIN),3)

demo: deps
	scripts/fetch-kernels $(DEMO_KERNEL)
	$(MAKE) -C tools
	tests/vm/run --kernel $(DEMO_KERNEL) --verbose tests/vm/demo.sh

soak: deps
	scripts/fetch-kernels
	$(MAKE) -C tools
	tests/vm/soak --kernel both

fuzz: deps
	$(MAKE) -C tests/fuzz fuzz
	$(MAKE) -C tools fuzz

bench: deps
	scripts/fetch-kernels
	bench/run-fairness --kernel both
	$(MAKE) -C tools
	bench/run-flip --kernel both

bench-flip: deps
	scripts/fetch-kernels
	$(MAKE) -C tools
	bench/run-flip --kernel both

bench-modeldev: deps
	scripts/fetch-kernels
	$(MAKE) -C tools
	bench/run-modeldev --kernel both

bench-fairness: bench

# Writeback attribution as users build the module (Documentation/ioband.rst,
# "Writeback attribution"): seed004 and bw2 with the module built with dm's
# layout from the kernel's source, from its BTF, and with none (plain
# Kbuild), 3 boots a kernel each: bench/results/attribution/<layout>/.
bench-attribution: deps
	scripts/fetch-kernels
	for layout in none btf source; do \
		bench/run-fairness --kernel 6.1,6.12,newest --scenarios seed004,bw2 \
			--controllers none,ioband:weight-iosize --dm-layout $$layout \
			--out bench/results/attribution/$$layout || exit; \
	done

bench-overhead: deps
	scripts/fetch-kernels
	bench/run-overhead --kernel both

clean:
	-$(MAKE) -C dm-ioband clean
	$(MAKE) -C tools clean
	$(MAKE) -C tests/unit/core clean

.PHONY: all module tools deps kernels check check-full check-debug demo soak fuzz bench bench-fairness bench-flip bench-modeldev bench-attribution bench-overhead clean

# ---- install, uninstall, deb ----

PREFIX        ?= /usr
SBINDIR       ?= $(PREFIX)/sbin
MANDIR        ?= $(PREFIX)/share/man
DOCDIR        ?= $(PREFIX)/share/doc/dm-ioband
BASHCOMPDIR   ?= $(PREFIX)/share/bash-completion/completions
PKG_CONFIG    ?= pkg-config
# Where this system's systemd looks, from systemd.pc: /lib/systemd/system on
# Debian 12, /usr/lib/systemd/system on 13; the package (debian/rules runs
# install-units) puts them there too. Under another PREFIX (or without
# systemd.pc): $(PREFIX)/lib/systemd/.
systemd_pc     = $(if $(filter /usr,$(PREFIX)),$(shell $(PKG_CONFIG) --variable=$(1) systemd 2>/dev/null))
SYSTEMDUNITDIR      ?= $(or $(call systemd_pc,systemdsystemunitdir),$(PREFIX)/lib/systemd/system)
SYSTEMDGENERATORDIR ?= $(or $(call systemd_pc,systemdsystemgeneratordir),$(PREFIX)/lib/systemd/system-generators)
IOBAND_VERSION := $(shell cat VERSION)
# DKMS looks in /usr/src, whatever PREFIX.
DKMS_SRCDIR   ?= /usr/src/dm-ioband-$(IOBAND_VERSION)
# What DKMS builds from: the sources of dm-ioband/, not a build's products.
DKMS_FILES    := dm-ioband/Makefile dm-ioband/Kbuild \
		 $(filter-out %.mod.c dm-ioband/ioband-dm-layout.h,$(wildcard dm-ioband/*.c dm-ioband/*.h))
DKMS_SCRIPTS  := dm-ioband/find-dm-source dm-ioband/choose-dm-layout dm-ioband/btf-dm-layout
INSTALL_MOD_PATH ?=
MODULE_KO     := dm-ioband/dm-ioband.ko
# The kernel the module was built for, from the module itself.
module_kver = $$(modinfo -F vermagic $(MODULE_KO) | cut -d' ' -f1)
TOOLS_VARS    = DESTDIR=$(DESTDIR) PREFIX=$(PREFIX) SBINDIR=$(SBINDIR) \
		MANDIR=$(MANDIR) BASHCOMPDIR=$(BASHCOMPDIR)
DOCS          := README.md Documentation/ioband.rst Documentation/ioband-design.rst \
		 Documentation/install.md
UNITS         := systemd/iobandctl-apply.path \
		 systemd/iobandctl-reapply.service systemd/iobandctl-export.service \
		 systemd/iobandctl-export.timer

install: all install-units
	@kver=$(module_kver); test -n "$$kver" || { echo "install: cannot read the kernel version of $(MODULE_KO)" >&2; exit 1; }; \
	install -D -m 0644 $(MODULE_KO) $(DESTDIR)$(INSTALL_MOD_PATH)/lib/modules/$$kver/updates/dm-ioband.ko && \
	echo "installed $(DESTDIR)$(INSTALL_MOD_PATH)/lib/modules/$$kver/updates/dm-ioband.ko"; \
	if [ -n "$(DESTDIR)" ]; then echo "install: DESTDIR set: run depmod $$kver on the target"; \
	elif [ -n "$(INSTALL_MOD_PATH)" ]; then depmod -b $(INSTALL_MOD_PATH) $$kver; \
	else depmod $$kver; fi
	$(MAKE) -C tools install $(TOOLS_VARS)
	for f in $(DOCS); do install -D -m 0644 $$f $(DESTDIR)$(DOCDIR)/$$(basename $$f); done
	install -D -m 0644 packaging/iobandtab.example $(DESTDIR)$(DOCDIR)/examples/iobandtab

uninstall:
	@kver=$$(modinfo -F vermagic $(MODULE_KO) 2>/dev/null | cut -d' ' -f1); kver=$${kver:-$$(uname -r)}; \
	rm -f $(DESTDIR)$(INSTALL_MOD_PATH)/lib/modules/$$kver/updates/dm-ioband.ko; \
	if [ -z "$(DESTDIR)" ] && [ -d $(INSTALL_MOD_PATH)/lib/modules/$$kver ]; then \
		depmod $(if $(INSTALL_MOD_PATH),-b $(INSTALL_MOD_PATH)) $$kver; fi
	$(MAKE) -C tools uninstall $(TOOLS_VARS)
	for f in $(UNITS); do rm -f $(DESTDIR)$(SYSTEMDUNITDIR)/$${f#systemd/}; done
	rm -f $(DESTDIR)$(SYSTEMDGENERATORDIR)/iobandctl-generator
	for f in $(DOCS); do rm -f $(DESTDIR)$(DOCDIR)/$$(basename $$f); done
	rm -f $(DESTDIR)$(DOCDIR)/examples/iobandtab
	-rmdir $(DESTDIR)$(DOCDIR)/examples $(DESTDIR)$(DOCDIR) 2>/dev/null

# The systemd units and the generator (make install; debian/rules).
install-units:
	$(MAKE) -C tools iobandctl-generator
	install -D -m 0644 -t $(DESTDIR)$(SYSTEMDUNITDIR) $(UNITS)
	install -D -m 0755 -t $(DESTDIR)$(SYSTEMDGENERATORDIR) tools/iobandctl-generator

# The DKMS source tree (debian/rules; tests/install-check; DKMS by hand).
# dkms.conf's PACKAGE_VERSION is #MODULE_VERSION#, filled in here as
# dh_dkms -V does; dm-ioband/Makefile reads VERSION for MODULE_VERSION.
install-dkms-src:
	install -D -m 0644 VERSION $(DESTDIR)$(DKMS_SRCDIR)/VERSION
	sed 's/#MODULE_VERSION#/$(IOBAND_VERSION)/g' dkms.conf >$(DESTDIR)$(DKMS_SRCDIR)/dkms.conf
	chmod 0644 $(DESTDIR)$(DKMS_SRCDIR)/dkms.conf
	install -D -m 0644 -t $(DESTDIR)$(DKMS_SRCDIR)/dm-ioband $(DKMS_FILES)
	install -D -m 0755 -t $(DESTDIR)$(DKMS_SRCDIR)/dm-ioband $(DKMS_SCRIPTS)

uninstall-dkms-src:
	rm -rf $(DESTDIR)$(DKMS_SRCDIR)

# The binary packages land in ../ as dpkg-buildpackage puts them.
deb:
	dpkg-buildpackage -us -uc -b

dkms-check:
	tests/install-check --only dkms

.PHONY: install uninstall install-units install-dkms-src uninstall-dkms-src deb dkms-check
