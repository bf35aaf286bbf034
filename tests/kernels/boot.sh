#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Copyright (c) 2026 cirron-probe authors
#
# boot.sh KERNEL_DIR WORKDIR SCRIPT: boots the kernel unpacked in KERNEL_DIR (fetch-kernel.sh)
# under qemu (TCG), with a root shared read-only over virtiofs, and runs SCRIPT with /bin/sh
# inside it, chrooted into the share. The root is this machine's (an x86-64 kernel; SCRIPT
# is a file the guest reads at the same path), or CIRRON_VM_ROOT, a directory of the
# kernel's architecture (an arm64 kernel needs one: make-arm64-root.sh): then the repository
# that holds this script is shared too, read-only, at /repo in the guest, and SCRIPT must be
# in it. What the guest writes under /tmp/out comes back in WORKDIR/out (emptied at each
# boot). The console goes to WORKDIR/console.log and, live, to stdout. Exits with the
# script's exit status, read from the guest's explicit end marker; 125/126 the guest could
# not set up, 124 the guest ran past CIRRON_VM_TIMEOUT seconds (default 900), 123 it stopped
# without a marker (a crash: see the console).
set -euo pipefail

kdir=$(realpath "${1:?usage: boot.sh KERNEL_DIR WORKDIR SCRIPT}")
work=$(realpath -m "${2:?}")
script=$(realpath "${3:?}")
here=$(dirname "$(realpath "$0")")
timeout_s=${CIRRON_VM_TIMEOUT:-900}
mem_mb=${CIRRON_VM_MEM_MB:-3072}
cpus=${CIRRON_VM_CPUS:-$(nproc)}

root=$(realpath "${CIRRON_VM_ROOT:-/}")
repo=$(realpath "$here/../..")

# trixie's kernel packages are merged-/usr
for mdir in "$kdir"/lib/modules/* "$kdir"/usr/lib/modules/*; do [[ -d $mdir ]] && break; done
kver=$(basename "$mdir")
vmlinuz=$kdir/boot/vmlinuz-$kver
case $kver in
*-arm64)
	# pointer authentication on (Grace has it) with QEMU's cheap hash: the architected one
	# (plain -cpu max) makes the guest 3x slower (import torch 84-100 s against 25-32 s)
	qemu=(qemu-system-aarch64 -M virt -cpu max,pauth-impdef=on)
	console=ttyAMA0
	[[ $root != / ]] || { echo "boot: an arm64 kernel needs an arm64 root (CIRRON_VM_ROOT)" >&2; exit 125; }
	;;
*)
	qemu=(qemu-system-x86_64 -cpu max)
	console=ttyS0
	;;
esac
for tool in "${qemu[0]}" /usr/lib/qemu/virtiofsd "$root/bin/busybox"; do
	command -v "$tool" >/dev/null ||
		{ echo "boot: $tool is missing (tests/kernels/install-deps.sh)" >&2; exit 125; }
done
# Another root sees the repository at /repo. On the host's root, a repository under a
# directory the guest mounts a tmpfs on (a clone in /tmp) is shared again at its own path.
run=$script
repo_at=
if [[ $root == / ]]; then
	case $repo in /tmp/* | /run/* | /var/tmp/* | /root/*) repo_at=$repo ;; esac
	[[ -z $repo_at ]] || run="$script cirron.repo_at=$repo_at"
fi
if [[ $root != / ]]; then
	[[ $script == "$repo"/* ]] || { echo "boot: $script is not in $repo" >&2; exit 125; }
	run="/repo/${script#"$repo"/} cirron.repo"
fi
mkdir -p "$work"

# The initramfs: busybox, the modules that reach the share, /init. Kept next to the kernel
# (keyed by package version) under a name keyed by what went into it: checkouts with another
# guest-init.sh share the kernel, not the initramfs.
key=$(cat "$here/guest-init.sh" "$root/bin/busybox" | sha256sum | cut -c1-12)
initrd=$kdir/cirron-initrd-$key.cpio.gz
if [[ ! -f $initrd ]]; then
	tmp=$(mktemp -d)
	mkdir -p "$tmp"/{bin,modules}
	cp "$root/bin/busybox" "$tmp/bin/busybox"
	cp "$here/guest-init.sh" "$tmp/init"
	chmod 0755 "$tmp/init"
	mods=()
	# in load order; the pci helpers exist from 5.13 on; none is a module in trixie's kernels
	for m in virtio_ring virtio virtio_pci_legacy_dev virtio_pci_modern_dev virtio_pci fuse virtiofs; do
		f=$(find "$mdir/kernel" -name "$m.ko" | head -1)
		[[ -n $f ]] || continue
		cp "$f" "$tmp/modules/$m.ko"
		mods+=("$m")
	done
	printf '%s\n' "${mods[@]}" > "$tmp/modules.list"
	(cd "$tmp" && find . | /bin/busybox cpio -o -H newc 2>/dev/null | gzip -1) > "$initrd.tmp"
	mv "$initrd.tmp" "$initrd"
	rm -rf "$tmp"
fi

log=$work/console.log
rm -f "$log" "$work"/*.sock
: > "$log"
vfs_pids=() qemu_pid= tail_pid=
cleanup() {
	for p in $tail_pid $qemu_pid "${vfs_pids[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in $tail_pid $qemu_pid "${vfs_pids[@]}"; do wait "$p" 2>/dev/null || true; done
	rm -f "$work"/*.sock
}
trap cleanup EXIT

# One virtiofsd per share: tag hostroot is the guest's root, tag repo the repository, tag
# out WORKDIR/out, the one the guest may write (at /tmp/out in the guest).
rm -rf "$work/out"
mkdir -p "$work/out"
shares=(hostroot "$root" out "$work/out")
[[ $root == / && -z $repo_at ]] || shares+=(repo "$repo")
devices=()
for ((i = 0; i < ${#shares[@]}; i += 2)); do
	tag=${shares[i]} sock=$work/${shares[i]}.sock
	/usr/lib/qemu/virtiofsd --socket-path="$sock" -o source="${shares[i + 1]}" -o sandbox=chroot \
		-o cache=always >"$work/virtiofsd-$tag.log" 2>&1 &
	vfs_pids+=($!)
	for _ in $(seq 100); do [[ -S $sock ]] && break; sleep 0.05; done
	[[ -S $sock ]] ||
		{ echo "boot: virtiofsd did not start:" >&2; cat "$work/virtiofsd-$tag.log" >&2; exit 125; }
	devices+=(-chardev "socket,id=$tag,path=$sock" -device "vhost-user-fs-pci,chardev=$tag,tag=$tag")
done

"${qemu[@]}" -accel tcg,thread=multi -smp "$cpus" -m "${mem_mb}M" \
	-object memory-backend-memfd,id=mem,size="${mem_mb}M",share=on -numa node,memdev=mem \
	"${devices[@]}" -kernel "$vmlinuz" -initrd "$initrd" \
	-append "console=$console quiet loglevel=4 panic=-1 oops=panic cirron.run=$run" \
	-display none -monitor none -serial file:"$log" -no-reboot &
qemu_pid=$!
tail -n +1 -F --pid=$qemu_pid "$log" 2>/dev/null | sed -u 's/\r$//' &
tail_pid=$!

# Waits for qemu to stop (the guest powers off after its marker), at most timeout_s.
status=
end=$((SECONDS + timeout_s))
while kill -0 $qemu_pid 2>/dev/null; do
	if ((SECONDS >= end)); then
		echo "boot: guest ran past ${timeout_s}s" >&2
		status=124
		break
	fi
	sleep 1
done
wait $tail_pid 2>/dev/null || true
tail_pid=
if [[ -z $status ]]; then
	status=$(tr -d '\r' < "$log" | sed -n 's/^CIRRON-GUEST-EXIT \([0-9]*\)$/\1/p' | tail -1)
	[[ -n $status ]] || { echo "boot: the guest stopped without its end marker" >&2; status=123; }
fi
exit "$status"
