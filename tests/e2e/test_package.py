# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Copyright (c) 2026 cirron-probe authors
"""The Debian package (make deb) installed and purged in a throwaway copy of this machine's
root (an overlay: the real root is never written): its files land, the unit is neither
enabled nor started, /usr/bin/cirron-probe traces a job as the package's user with the
unit's capabilities, and purge leaves only the spool. And the deployment files: the
DaemonSet passes kubernetes-validate against a pinned Kubernetes version."""
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from conftest import CUDA_CALLS, ROOT, unavailable

KUBERNETES_VERSION = "1.34.0"


def sh(*argv, timeout=300, check=True, **kw):
    r = subprocess.run([str(a) for a in argv], capture_output=True, text=True, timeout=timeout,
                       **kw)
    if check:
        assert r.returncode == 0, f"{argv}: exit {r.returncode}\n{r.stdout}\n{r.stderr}"
    return r


@pytest.fixture(scope="module")
def deb():
    for tool in ("dpkg-buildpackage", "dh", "lintian"):
        if not shutil.which(tool):
            unavailable(f"{tool} is missing (scripts/install-deps.sh installs it)")
    r = sh("make", "-s", "-C", ROOT, "deb", timeout=900)
    debs = sorted((ROOT / ".output" / "deb").glob("cirron-probe_*.deb"))
    assert len(debs) == 1, debs
    lintian = (ROOT / ".output" / "deb" / "lintian.txt").read_text()
    assert not re.search(r"^[EWIP]: ", lintian, re.M), lintian   # every tag explained
    del r
    return debs[0]


@pytest.fixture
def overlay(built):
    """This machine's root as the lower layer of an overlay on a tmpfs, with /proc, /sys and
    /dev bound in: a chroot where dpkg may do anything."""
    top = Path(tempfile.mkdtemp(prefix="cirron-deb-"))
    mounts = []

    def mount(*args, target):
        sh("mount", *args, target)
        mounts.append(target)

    mount("-t", "tmpfs", "tmpfs", target=top)
    for d in ("upper", "work", "merged"):
        (top / d).mkdir()
    merged = top / "merged"
    mount("-t", "overlay", "overlay", "-o",
          f"lowerdir=/,upperdir={top / 'upper'},workdir={top / 'work'}", target=merged)
    for d in ("proc", "sys", "dev"):
        mount("--rbind", f"/{d}", target=merged / d)
        sh("mount", "--make-rslave", merged / d)
    try:
        yield merged
    finally:
        for m in reversed(mounts):
            subprocess.run(["umount", "-R", "-l", str(m)], capture_output=True, timeout=60)
        shutil.rmtree(top, ignore_errors=True)


def chroot(root, *argv, **kw):
    return sh("chroot", root, *argv, **kw)


def test_deb_installs_traces_and_purges_leaving_the_spool(deb, bpf, overlay):
    r = overlay
    shutil.copy2(deb, r / "tmp" / deb.name)
    shutil.copy2(CUDA_CALLS, r / "tmp" / "cuda_calls")
    (r / "tmp" / "cuda_calls").chmod(0o755)
    chroot(r, "dpkg", "-i", f"/tmp/{deb.name}")
    files = chroot(r, "dpkg", "-L", "cirron-probe").stdout.split()
    for f in ("/usr/bin/cirron-probe", "/usr/share/man/man1/cirron-probe.1.gz",
              "/lib/systemd/system/cirron-probe-watch.service",
              "/usr/share/cirron-probe/probes/cudart.json",
              "/usr/share/cirron-probe/probes/torch_layouts.json",
              "/usr/share/cirron-probe/schemas/spool-batch.schema.json",
              "/usr/share/doc/cirron-probe/capabilities"):
        assert f in files and (r / f.lstrip("/")).exists(), f
    # the system user and its spool, 0750
    pw = chroot(r, "getent", "passwd", "cirron-probe").stdout.split(":")
    uid, gid = int(pw[2]), int(pw[3])
    assert uid < 1000 and pw[6].strip() == "/usr/sbin/nologin", pw
    st = (r / "var/lib/cirron-probe").stat()
    assert (st.st_uid, st.st_gid, st.st_mode & 0o7777) == (uid, gid, 0o750)
    # the unit: neither enabled nor started
    assert not list((r / "etc/systemd/system").rglob("cirron-probe-watch.service"))
    # the installed binary finds the installed probes/ and traces a job (as root: in this
    # overlay the job's libraries are overlay files, which a non-root observer without
    # CAP_SYS_ADMIN cannot match to their maps; test_privileges.py traces as nobody)
    doctor = chroot(r, "/bin/sh", "-c", "exec /usr/bin/cirron-probe doctor -p $$",
                    check=False).stdout
    assert "probes: /usr/share/cirron-probe/probes" in doctor, doctor
    run = chroot(r, "/usr/bin/cirron-probe", "run", "-v", "--cuda-calls", "always",
                 "--path", "/tmp/job", "--cache-dir", "/tmp/cache", "--", "/tmp/cuda_calls",
                 timeout=120)
    assert re.search(r"session \S+ started", run.stderr), run.stderr
    assert "done device_count=" in run.stdout
    assert list((r / "tmp/job/spool").glob("*.json"))
    # something in the node agent's spool, as its unit would leave it
    spool_dir = r / "var/lib/cirron-probe" / "spool"
    spool_dir.mkdir()
    (spool_dir / "n1-1-1.00000000.json").write_text("{}\n")
    spool = ["n1-1-1.00000000.json"]
    # purge: every file of the package goes, the spool stays
    chroot(r, "dpkg", "--purge", "cirron-probe")
    left = [f for f in files if (r / f.lstrip("/")).is_file()]
    assert left == [], left
    assert chroot(r, "dpkg-query", "-W", "cirron-probe", check=False).returncode != 0
    assert sorted(p.name for p in (r / "var/lib/cirron-probe/spool").iterdir()) == spool


def test_daemonset_passes_kubernetes_validate():
    venv = sh(ROOT / "tests" / "scripts" / "make-kv-venv.sh", timeout=600).stdout.split()[-1]
    tool = Path(venv) / "bin" / "kubernetes-validate"
    manifests = sorted((ROOT / "deploy" / "kubernetes").glob("*.yaml"))
    assert manifests
    r = sh(tool, "--strict", "-k", KUBERNETES_VERSION, *manifests, check=False)
    assert r.returncode == 0, r.stdout + r.stderr
    for kind in ("namespace", "serviceaccount", "daemonset"):
        assert re.search(rf"passed for resource {kind}/cirron-probe against version "
                         rf"{KUBERNETES_VERSION.rsplit('.', 1)[0]}", r.stdout), r.stdout
    # and it is not an empty check: a field the schema does not have is refused
    bad = manifests[0].read_text().replace("allowPrivilegeEscalation: true",
                                           "allowPrivilegeEscalatoin: true")
    with tempfile.NamedTemporaryFile("w", suffix=".yaml") as f:
        f.write(bad)
        f.flush()
        r = sh(tool, "--strict", "-k", KUBERNETES_VERSION, f.name, check=False)
    assert r.returncode != 0 and "allowPrivilegeEscalatoin" in r.stdout + r.stderr, r.stdout
