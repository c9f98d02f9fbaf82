# SPDX-License-Identifier: GPL-2.0
# make install / uninstall for every part of collx, after the GNU
# conventions (DESTDIR, PREFIX and the *DIR variables).  Included by the
# top-level Makefile; also works alone: make -f scripts/install/install.mk
# install-user DESTDIR=/tmp/x PREFIX=/usr (what debian/rules does).
#
#   install            everything below, the module for $(KVER) included
#   install-module     collx.ko into $(DESTDIR)/lib/modules/$(KVER)/updates/kmod
#                      (INSTALL_MOD_PATH=$(DESTDIR)), unsigned (a distribution's
#                      key is not ours: DKMS signs with the MOK where one is
#                      set up); depmod when DESTDIR is empty
#   install-user       every part but the module
#     install-lib      libcollx.so.1
#     install-dev      collx.h, the uapi header, libcollx.so, libcollx.a, collx.pc
#     install-tools    collx-info, collx-bench and nccl-tests' names for it,
#                      collx-doctor, collx-netmon; the Grafana dashboard and
#                      the plot scripts in $(DATADIR)
#     install-man      the man pages (Documentation/man, built with pandoc)
#     install-system   udev rule, modprobe.d, modules-load.d, sysusers.d,
#                      the collx-netmon unit and its defaults
#   uninstall[-PART]   removes exactly what install[-PART] put there

COLLX_TOP := $(abspath $(dir $(lastword $(MAKEFILE_LIST)))/../..)
VERSION ?= $(shell sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' $(COLLX_TOP)/dkms.conf)

PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
SBINDIR ?= $(PREFIX)/sbin
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
MANDIR ?= $(PREFIX)/share/man
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
DOCTORDIR ?= $(PREFIX)/lib/collx-doctor
# the Grafana dashboard and the plot scripts
DATADIR ?= $(PREFIX)/share/collx
# System integration: where udev, kmod and systemd look (the /usr/local
# ones too, except modprobe.d, which is read from /etc and /lib only).
SYSCONFDIR ?= /etc
UDEVRULESDIR ?= $(PREFIX)/lib/udev/rules.d
MODPROBEDIR ?= $(SYSCONFDIR)/modprobe.d
MODULESLOADDIR ?= $(PREFIX)/lib/modules-load.d
SYSUSERSDIR ?= $(PREFIX)/lib/sysusers.d
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system
DEFAULTDIR ?= $(SYSCONFDIR)/default

# The module, as the top-level Makefile builds it.
KVER ?= $(shell uname -r)
KDIR ?= /lib/modules/$(KVER)/build
MODDIR ?= $(COLLX_TOP)/build/$(KVER)
INSTALL_MOD_DIR ?= updates

U := $(COLLX_TOP)/user
SONAME := libcollx.so.1
TOOLS := collx-info collx-bench
# nccl-tests' binary names: collx-bench runs the collective its name says
BENCH_LINKS := all_reduce_perf all_gather_perf broadcast_perf reduce_perf \
	reduce_scatter_perf alltoall_perf sendrecv_perf
SUBMAKE := $(MAKE) --no-print-directory DESTDIR=$(DESTDIR) PREFIX=$(PREFIX)

.PHONY: install uninstall install-module uninstall-module install-user uninstall-user \
	install-lib uninstall-lib install-dev uninstall-dev install-tools uninstall-tools \
	install-man uninstall-man install-system uninstall-system

install: install-module install-user
uninstall: uninstall-module uninstall-user
install-user: install-lib install-dev install-tools install-man install-system
uninstall-user: uninstall-lib uninstall-dev uninstall-tools uninstall-man uninstall-system

install-module:
	@test -f $(MODDIR)/kmod/collx.ko || { echo "collx: no $(MODDIR)/kmod/collx.ko: make module" >&2; exit 1; }
	$(MAKE) -C $(KDIR) M=$(MODDIR) INSTALL_MOD_PATH=$(DESTDIR) INSTALL_MOD_DIR=$(INSTALL_MOD_DIR) \
		CONFIG_MODULE_SIG_ALL= modules_install
	@if [ -z "$(DESTDIR)" ]; then depmod -a $(KVER); fi

# kbuild keeps the module's place under M=: updates/kmod/collx.ko[.xz]
uninstall-module:
	rm -f $(addprefix $(DESTDIR)/lib/modules/$(KVER)/$(INSTALL_MOD_DIR)/kmod/collx.ko,'' .xz .zst .gz)
	-rmdir $(DESTDIR)/lib/modules/$(KVER)/$(INSTALL_MOD_DIR)/kmod 2>/dev/null
	@if [ -z "$(DESTDIR)" ]; then depmod -a $(KVER); fi

install-lib:
	install -D -m 0644 $(U)/lib/$(SONAME) $(DESTDIR)$(LIBDIR)/$(SONAME)
	@if [ -z "$(DESTDIR)" ]; then ldconfig; fi

uninstall-lib:
	rm -f $(DESTDIR)$(LIBDIR)/$(SONAME)
	@if [ -z "$(DESTDIR)" ]; then ldconfig; fi

# The uapi header under collx's own prefix, as rdma-core installs its
# copies of the kernel's under infiniband/: linux-libc-dev owns linux/.
install-dev:
	install -D -m 0644 $(U)/lib/collx.h $(DESTDIR)$(INCLUDEDIR)/collx.h
	install -D -m 0644 $(COLLX_TOP)/include/uapi/linux/collx.h \
		$(DESTDIR)$(INCLUDEDIR)/collx/linux/collx.h
	install -D -m 0644 $(U)/lib/libcollx.a $(DESTDIR)$(LIBDIR)/libcollx.a
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libcollx.so
	install -d $(DESTDIR)$(PKGCONFIGDIR)
	sed -e 's|@PREFIX@|$(PREFIX)|; s|@LIBDIR@|$(LIBDIR)|; s|@INCLUDEDIR@|$(INCLUDEDIR)|' \
		-e 's|@VERSION@|$(VERSION)|' $(COLLX_TOP)/scripts/install/collx.pc.in \
		>$(DESTDIR)$(PKGCONFIGDIR)/collx.pc

uninstall-dev:
	rm -f $(DESTDIR)$(INCLUDEDIR)/collx.h $(DESTDIR)$(INCLUDEDIR)/collx/linux/collx.h \
		$(DESTDIR)$(LIBDIR)/libcollx.a $(DESTDIR)$(LIBDIR)/libcollx.so \
		$(DESTDIR)$(PKGCONFIGDIR)/collx.pc
	-rmdir $(DESTDIR)$(INCLUDEDIR)/collx/linux $(DESTDIR)$(INCLUDEDIR)/collx 2>/dev/null

install-tools:
	for t in $(TOOLS); do install -D -m 0755 $(U)/tools/$$t $(DESTDIR)$(BINDIR)/$$t || exit 1; done
	for l in $(BENCH_LINKS); do ln -sf collx-bench $(DESTDIR)$(BINDIR)/$$l || exit 1; done
	$(SUBMAKE) -C $(U)/doctor install BINDIR=$(BINDIR) DOCTORDIR=$(DOCTORDIR)
	$(SUBMAKE) -C $(U)/netmon install SBINDIR=$(SBINDIR)
	install -D -m 0644 $(COLLX_TOP)/Documentation/grafana/collx.json \
		$(DESTDIR)$(DATADIR)/grafana/collx.json
	install -D -m 0755 $(COLLX_TOP)/tests/plots/timeline.py $(DESTDIR)$(DATADIR)/plots/timeline.py
	install -D -m 0755 $(COLLX_TOP)/tests/plots/busbw.py $(DESTDIR)$(DATADIR)/plots/busbw.py

uninstall-tools:
	rm -f $(addprefix $(DESTDIR)$(BINDIR)/,$(TOOLS) $(BENCH_LINKS))
	rm -rf $(DESTDIR)$(DATADIR)
	$(SUBMAKE) -C $(U)/doctor uninstall BINDIR=$(BINDIR) DOCTORDIR=$(DOCTORDIR)
	$(SUBMAKE) -C $(U)/netmon uninstall SBINDIR=$(SBINDIR)

install-man:
	$(SUBMAKE) -C $(COLLX_TOP)/Documentation/man install MANDIR=$(MANDIR)

uninstall-man:
	$(SUBMAKE) -C $(COLLX_TOP)/Documentation/man uninstall MANDIR=$(MANDIR)

I := $(COLLX_TOP)/scripts/install
install-system:
	install -D -m 0644 $(I)/60-collx.rules $(DESTDIR)$(UDEVRULESDIR)/60-collx.rules
	install -D -m 0644 $(I)/modprobe-collx.conf $(DESTDIR)$(MODPROBEDIR)/collx.conf
	install -D -m 0644 $(I)/modules-load-collx.conf $(DESTDIR)$(MODULESLOADDIR)/collx.conf
	install -D -m 0644 $(I)/collx.sysusers $(DESTDIR)$(SYSUSERSDIR)/collx.conf
	install -d $(DESTDIR)$(SYSTEMDUNITDIR)
	sed 's|/usr/sbin/collx-netmon|$(SBINDIR)/collx-netmon|; s|/etc/default/|$(DEFAULTDIR)/|' \
		$(I)/collx-netmon.service >$(DESTDIR)$(SYSTEMDUNITDIR)/collx-netmon.service
	chmod 0644 $(DESTDIR)$(SYSTEMDUNITDIR)/collx-netmon.service
	install -D -m 0644 $(I)/collx-netmon.default $(DESTDIR)$(DEFAULTDIR)/collx-netmon
	@if [ -z "$(DESTDIR)" ]; then \
		systemd-sysusers $(SYSUSERSDIR)/collx.conf 2>/dev/null || addgroup --system collx; \
		udevadm control --reload 2>/dev/null; \
		if [ -e /sys/class/misc/collx ]; then udevadm trigger --action=change /sys/class/misc/collx 2>/dev/null; fi; \
		systemctl daemon-reload 2>/dev/null; true; fi

uninstall-system:
	rm -f $(DESTDIR)$(UDEVRULESDIR)/60-collx.rules $(DESTDIR)$(MODPROBEDIR)/collx.conf \
		$(DESTDIR)$(MODULESLOADDIR)/collx.conf $(DESTDIR)$(SYSUSERSDIR)/collx.conf \
		$(DESTDIR)$(SYSTEMDUNITDIR)/collx-netmon.service $(DESTDIR)$(DEFAULTDIR)/collx-netmon
