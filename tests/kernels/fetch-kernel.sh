#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Copyright (c) 2026 cirron-probe authors
#
# fetch-kernel.sh SUITE [ARCH]: Debian's cloud kernel of SUITE (bookworm: 6.1, bullseye: 5.10,
# trixie: 6.12) for ARCH (amd64, the default, or arm64), image and modules, unpacked into
# $CIRRON_KERNEL_CACHE/<package>_<version>/ (default /var/cache/cirron-probe/kernels; the
# package name carries the architecture), fetched once per package version. Uses its own APT
# configuration (lists, cache and status under the cache directory): the system's sources
# and package state are left alone. Prints the unpacked directory on stdout.
set -euo pipefail

suite=${1:?usage: fetch-kernel.sh bookworm|bullseye|trixie [amd64|arm64]}
arch=${2:-amd64}
case $arch in amd64 | arm64) ;; *) echo "fetch-kernel: no kernel for architecture $arch" >&2; exit 1 ;; esac
cache=${CIRRON_KERNEL_CACHE:-/var/cache/cirron-probe/kernels}
mirror=${CIRRON_DEBIAN_MIRROR:-http://deb.debian.org/debian}
security=${CIRRON_DEBIAN_SECURITY:-http://deb.debian.org/debian-security}
# amd64 keeps the directory it had before arm64 existed
apt_dir=$cache/apt-$suite
[[ $arch == amd64 ]] || apt_dir=$cache/apt-$suite-$arch

mkdir -p "$apt_dir"/{lists/partial,archives/partial,etc/preferences.d,etc/sources.list.d}
: > "$apt_dir/status"
# The suite and its security updates: the kernel a node of that release runs today.
cat > "$apt_dir/etc/sources.list.new" <<EOF
deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror $suite main
deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $security $suite-security main
EOF
stale_lists=false
if ! cmp -s "$apt_dir/etc/sources.list.new" "$apt_dir/etc/sources.list"; then
	mv "$apt_dir/etc/sources.list.new" "$apt_dir/etc/sources.list"
	stale_lists=true
fi
rm -f "$apt_dir/etc/sources.list.new"
cat > "$apt_dir/apt.conf" <<EOF
Dir::State "$apt_dir";
Dir::State::Lists "$apt_dir/lists";
Dir::State::status "$apt_dir/status";
Dir::Cache "$apt_dir";
Dir::Cache::Archives "$apt_dir/archives";
Dir::Etc::SourceList "$apt_dir/etc/sources.list";
Dir::Etc::SourceParts "$apt_dir/etc/sources.list.d";
Dir::Etc::Preferences "$apt_dir/etc/preferences";
Dir::Etc::PreferencesParts "$apt_dir/etc/preferences.d";
APT::Architecture "$arch";
APT::Architectures { "$arch"; };
EOF
export APT_CONFIG=$apt_dir/apt.conf

# Lists once a day at most (or when the sources changed): a cached kernel must not need the
# network.
if $stale_lists || [[ -z $(find "$apt_dir/lists" -maxdepth 1 -name '*Packages*' -mmin -1440) ]]; then
	apt-get -q -o APT::Update::Error-Mode=any update >&2 ||
		{ ls "$apt_dir"/lists/*Packages* >/dev/null 2>&1 || exit 1; }
fi

# The meta package names the current ABI's image package.
pkg=$(apt-cache depends "linux-image-cloud-$arch" | sed -n 's/^ *Depends: \(linux-image-[0-9].*\)$/\1/p' | head -1)
[[ -n $pkg ]] || { echo "fetch-kernel: no linux-image-cloud-$arch in $suite" >&2; exit 1; }
ver=$(apt-cache show "$pkg" | sed -n 's/^Version: //p' | head -1)
dir=$cache/${pkg}_$ver
if [[ ! -f $dir/.complete ]]; then
	tmp=$(mktemp -d "$cache/.fetch.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	(cd "$tmp" && apt-get -q -o APT::Sandbox::User=root download "$pkg=$ver" >&2)
	dpkg-deb -x "$tmp"/*.deb "$tmp/root"
	rm -rf "$dir"
	mv "$tmp/root" "$dir"
	echo "$pkg $ver" > "$dir/.complete"
fi
echo "$dir"
