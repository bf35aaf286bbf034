#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Copyright (c) 2026 cirron-probe authors
#
# Runs inside a test guest (boot.sh): says what the guest is and how fast it runs Python,
# one "probe: NAME VALUE" line each, and copies the kernel's BTF to /tmp/out (the host's
# WORKDIR/out) for vmlinux.h. Exit status: 0, or 1 if the guest lacks BTF or a Python
# import fails.
status=0
now() { date +%s%N; }
ms() { echo $((($(now) - $1) / 1000000)); }
timed() { # NAME CMD...: runs CMD, prints its wall time in ms
	name=$1
	shift
	t=$(now)
	if "$@" >/tmp/probe.out 2>&1; then
		echo "probe: $name $(ms "$t") ms $(tail -1 /tmp/probe.out)"
	else
		echo "probe: $name failed: $(tail -3 /tmp/probe.out)"
		status=1
	fi
}
echo "probe: machine $(uname -m) kernel $(uname -r) cpus $(nproc) uptime_at_script $(cut -d' ' -f1 /proc/uptime) s"
if [ -e /sys/kernel/btf/vmlinux ]; then
	echo "probe: btf $(wc -c </sys/kernel/btf/vmlinux) bytes"
	cp /sys/kernel/btf/vmlinux /tmp/out/btf-vmlinux
	uname -r >/tmp/out/kernel-release
else
	echo "probe: btf missing"
	status=1
fi
export PYTHONDONTWRITEBYTECODE=1
timed python_pass python3 -c pass
timed python_pass_again python3 -c pass
timed debian_torch python3 -c 'import torch; print(torch.__version__, torch.get_num_threads())'
timed debian_torch_again python3 -c 'import torch; print(torch.__version__)'
if [ -x /opt/torch-venv/bin/python ]; then
	timed venv_torch /opt/torch-venv/bin/python -c 'import torch; print(torch.__version__)'
	timed venv_torch_step /opt/torch-venv/bin/python -c '
import torch
m = torch.nn.Linear(64, 64)
opt = torch.optim.SGD(m.parameters(), lr=0.1)
for _ in range(10):
    opt.zero_grad(); m(torch.randn(32, 64)).sum().backward(); opt.step()
print("10 steps ok")'
fi
if [ -e /usr/local/cuda/lib64/libcudart.so.13 ]; then
	# no GPU here: cudaGetDeviceCount answers with an error code, which is what loads
	timed cudart python3 -c '
import ctypes
rt = ctypes.CDLL("/usr/local/cuda/lib64/libcudart.so.13")
n = ctypes.c_int(-1)
v = ctypes.c_int(0)
rt.cudaRuntimeGetVersion(ctypes.byref(v))
print("cudaRuntimeGetVersion", v.value, "cudaGetDeviceCount", rt.cudaGetDeviceCount(ctypes.byref(n)), n.value)'
fi
exit $status
