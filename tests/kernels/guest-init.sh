#!/bin/busybox sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Copyright (c) 2026 cirron-probe authors
#
# /init of the test guest's initramfs (tests/kernels/boot.sh builds it): loads the virtio
# and virtiofs modules, mounts the shared root (read-only, tag hostroot), gives it fresh
# /proc /sys /dev /tmp, the host's WORKDIR/out at /tmp/out (writable) and the BPF file
# systems, chroots into it and runs the command named on the kernel command line
# (cirron.run=FILE, a script the host wrote; under /repo, the repository's share, when the
# root is not the host's). Its output goes to the console (ttyS0, ttyAMA0 on arm64); the
# last line is the explicit marker the host waits for:
#   CIRRON-GUEST-EXIT <status>
# then the guest powers off.
export PATH=/bin
busybox mkdir -p /proc /sys /dev /mnt
busybox mount -t proc proc /proc
busybox mount -t sysfs sysfs /sys
busybox mount -t devtmpfs devtmpfs /dev
busybox hostname cirron-guest

finish() {
	echo "CIRRON-GUEST-EXIT $1"
	busybox sync
	busybox poweroff -f
}

for m in $(busybox cat /modules.list); do
	busybox insmod "/modules/$m.ko" || finish 125
done
busybox mount -t virtiofs -o ro hostroot /mnt || finish 125
# a root other than the host's comes with the repository (boot.sh)
if busybox grep -qw cirron.repo /proc/cmdline; then
	busybox mount -t virtiofs -o ro repo /mnt/repo || finish 125
fi
for d in tmp run var/tmp root; do
	[ -d "/mnt/$d" ] || continue
	busybox mount -t tmpfs -o mode=1777 tmpfs "/mnt/$d" 2>/dev/null
done
busybox mkdir -p /mnt/tmp/out
busybox mount -t virtiofs out /mnt/tmp/out || finish 125
# the repository, where a tmpfs above hid it (boot.sh: a clone in /tmp)
for arg in $(busybox cat /proc/cmdline); do
	case $arg in
	cirron.repo_at=*)
		busybox mkdir -p "/mnt${arg#cirron.repo_at=}" &&
			busybox mount -t virtiofs -o ro repo "/mnt${arg#cirron.repo_at=}" || finish 125 ;;
	esac
done
busybox mount --move /proc /mnt/proc
busybox mount --move /sys /mnt/sys
busybox mount --move /dev /mnt/dev
busybox mkdir -p /mnt/dev/shm
busybox mount -t tmpfs -o mode=1777 tmpfs /mnt/dev/shm
busybox mount -t bpf bpf /mnt/sys/fs/bpf
busybox mount -t debugfs debugfs /mnt/sys/kernel/debug
busybox mount -t tracefs tracefs /mnt/sys/kernel/tracing 2>/dev/null
busybox mount -t cgroup2 cgroup2 /mnt/sys/fs/cgroup 2>/dev/null

run=
for arg in $(busybox cat /mnt/proc/cmdline); do
	case $arg in cirron.run=*) run=${arg#cirron.run=} ;; esac
done
[ -n "$run" ] || finish 126
busybox chroot /mnt /bin/sh -c "cd / && exec /bin/sh $run" </dev/null
finish $?
