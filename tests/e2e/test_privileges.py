# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Copyright (c) 2026 cirron-probe authors
"""Least privilege (issue 28): the observer as user nobody with only the capabilities of
deploy/capabilities, and the job `run` starts with none of them; a clear refusal with one of
them missing; `run --user`; every directory on the way to the spool, the symbol cache and
-o FILE checked before anything is made there, with another user's link planted at each
level; the systemd unit and the DaemonSet grant the set deploy/capabilities names."""
import os
import re
import shutil
import tempfile
from pathlib import Path

import pytest
import yaml

from conftest import BIN, CUDA_CALLS, ROOT, SAN, SPIN, assert_no_sanitizer_report, \
    only_session, san_env

NOBODY = 65534
EXIT_NO_PERMISSION, EXIT_SPOOL_UNWRITABLE, EXIT_OUTPUT_UNWRITABLE, EXIT_USAGE = 3, 5, 10, 64
CAP_LINE = re.compile(r"^(CAP_[A-Z_]+)\s+(all|others)\s+(any|<\d+\.\d+|\d+\.\d+\+)\s+\S")


def kernel():
    return tuple(int(x) for x in re.match(r"(\d+)\.(\d+)", os.uname().release).groups())


def version(s):
    return tuple(int(x) for x in s.split("."))


def named_caps(others=True, k=None):
    """deploy/capabilities: the capabilities that apply on kernel k (this one), those for
    other users' processes too if others."""
    k = k or kernel()
    caps = []
    for line in (ROOT / "deploy" / "capabilities").read_text().splitlines():
        m = CAP_LINE.match(line)
        if not m:
            assert not line.startswith("CAP_"), f"deploy/capabilities: bad line {line!r}"
            continue
        name, who, kernels = m.groups()
        if who == "others" and not others:
            continue
        if kernels.startswith("<") and k >= version(kernels[1:]):
            continue
        if kernels.endswith("+") and k < version(kernels[:-1]):
            continue
        caps.append(name)
    assert caps, "deploy/capabilities names no capability"
    return caps


def setpriv(caps, uid=NOBODY):
    """argv prefix: run as uid with exactly caps (ambient, so that they survive the exec)."""
    tool = shutil.which("setpriv")
    if not tool:
        pytest.fail("setpriv (util-linux) is needed to drop privileges")
    argv = [tool, f"--reuid={uid}", f"--regid={uid}", "--clear-groups"]
    if caps:
        spec = ",".join("+" + c[len("CAP_"):].lower() for c in caps)
        argv += [f"--inh-caps={spec}", f"--ambient-caps={spec}"]
    return argv


@pytest.fixture
def world(root_user):
    """A directory tree nobody can use: the binaries copied in (the checkout may be under a
    directory only root can enter), and w/, nobody's own, for spools and caches."""
    d = Path(tempfile.mkdtemp(prefix="cirron-priv-", dir="/tmp"))
    d.chmod(0o755)
    for src in (BIN, SAN, CUDA_CALLS):
        shutil.copy2(src, d / src.name)
        (d / src.name).chmod(0o755)
    (d / "w").mkdir()
    os.chown(d / "w", NOBODY, NOBODY)
    yield d
    shutil.rmtree(d, ignore_errors=True)


# What the job prints of itself before it becomes cuda_calls: its ids and capability sets.
JOB_SELF = "grep -E '^(Uid|Gid|Groups|Cap(Inh|Prm|Eff|Amb)):' /proc/$$/status; " \
           "echo env HOME=$HOME USER=$USER; exec \"$0\""


def job_status(out):
    st = dict(re.findall(r"^(Uid|Gid|Groups|CapInh|CapPrm|CapEff|CapAmb):[ \t]*(.*)$", out, re.M))
    assert len(st) == 7, out
    return st


def test_nobody_with_the_named_capabilities_traces_and_the_job_gets_none(h, bpf, world):
    caps = named_caps(others=False)
    obs = h.start(setpriv(caps) + [world / "cirron-probe", "run", "-v", "--cuda-calls", "always",
                                   "--path", world / "w" / "trace",
                                   "--cache-dir", world / "w" / "cache", "--",
                                   "/bin/sh", "-c", JOB_SELF, world / "cuda_calls"])
    rc = obs.finish(60)
    assert rc == 0, obs.err.text
    assert re.search(r"session \S+ started", obs.err.text), obs.err.text
    assert "done device_count=" in obs.out.text
    st = job_status(obs.out.text)
    assert st["Uid"].split() == [str(NOBODY)] * 4
    for s in ("CapInh", "CapPrm", "CapEff", "CapAmb"):
        assert int(st[s], 16) == 0, f"the job's {s} is {st[s]}: {obs.out.text}"
    session = only_session(world / "w" / "trace")
    assert session.probe("cudaLaunchKernel")["hits"] == 57, session.health


def test_job_of_the_observer_with_capabilities_is_refused_nothing(h, bpf, world):
    """The observer holds more than the job could ever regain: its ambient set and the
    inheritable set are cleared, so even a bounding set that keeps them gives the job none."""
    caps = named_caps(others=True)
    rc, out, err = h.run_to_end(setpriv(caps) + [world / "cirron-probe", "run",
                                                  "--path", world / "w" / "t2",
                                                  "--cache-dir", world / "w" / "cache", "--",
                                                  "/bin/sh", "-c", JOB_SELF, "/bin/true"],
                                timeout=60)
    assert rc == 0, err
    st = job_status(out)
    for s in ("CapInh", "CapPrm", "CapEff", "CapAmb"):
        assert int(st[s], 16) == 0, f"the job's {s} is {st[s]}"


@pytest.mark.parametrize("cmd", ["run", "attach", "watch"])
def test_one_capability_missing_is_a_clear_refusal(h, root_user, world, cmd):
    """Each capability the command needs, dropped in turn: exit 3 before anything is made,
    one line naming what is missing."""
    spin = h.start([SPIN])                      # root's: another user's process for nobody
    spin.out.wait_for(r"^ready$")
    needed = named_caps(others=cmd != "run")
    for drop in needed:
        if "CAP_SYS_ADMIN" in needed and drop in ("CAP_BPF", "CAP_PERFMON"):
            continue                            # before 6.6: CAP_SYS_ADMIN stands in for them
        caps = [c for c in needed if c != drop]
        root = world / "w" / f"t-{cmd}-{drop}"
        argv = setpriv(caps) + [world / "cirron-probe-san", cmd, "--path", root,
                                "--cache-dir", world / "w" / "cache"]
        argv += {"run": ["--", "/bin/echo", "should-not-run"], "attach": ["-p", spin.pid],
                 "watch": ["--duration", "1"]}[cmd]
        rc, out, err = h.run_to_end(argv, env=san_env())
        assert rc == EXIT_NO_PERMISSION, (drop, err)
        assert_no_sanitizer_report(err)
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("cirron-probe: no permission to trace"), err
        missing = lines[0].split("grant ", 1)[1].split(" (")[0].split(", ")
        assert drop in missing and set(missing) <= set(needed), (drop, lines[0])
        if cmd != "run":
            assert "another user" in lines[0] or "every user" in lines[0], lines[0]
        assert "should-not-run" not in out
        assert not root.exists()                # refused before the spool was made


def test_attach_to_own_process_needs_only_the_first_capabilities(h, bpf, world):
    """nobody attaching to nobody's process: the capabilities for other users' are not asked
    for."""
    t = h.start(setpriv([]) + [world / "cuda_calls", "--wait"])
    t.out.wait_for(r"^ready$")
    obs = h.start(setpriv(named_caps(others=False)) + [
        world / "cirron-probe", "attach", "-v", "--cuda-calls", "always", "-p", t.pid, "--path", world / "w" / "t",
        "--cache-dir", world / "w" / "cache"])
    obs.err.wait_for(r"session \S+ started", timeout=60)
    t.signal(10)                                # SIGUSR1: run the calls
    assert t.finish() == 0
    assert obs.finish(60) == 0, obs.err.text
    assert only_session(world / "w" / "t").probe("cudaLaunchKernel")["hits"] == 57


def test_run_user_runs_the_job_as_that_user(h, bpf, world):
    root = h.spool_root()
    rc, out, err = h.run_to_end([BIN, "run", "--cuda-calls", "always", "--user", "nobody", "--path", root,
                                 "--cache-dir", h.cache_dir, "--",
                                 "/bin/sh", "-c", JOB_SELF, world / "cuda_calls"], timeout=60)
    assert rc == 0, err
    st = job_status(out)
    assert st["Uid"].split() == [str(NOBODY)] * 4 and st["Gid"].split() == [str(NOBODY)] * 4
    for s in ("CapInh", "CapPrm", "CapEff", "CapAmb"):
        assert int(st[s], 16) == 0, f"the job's {s} is {st[s]}"
    assert "USER=nobody" in out and "HOME=/nonexistent" in out, out
    assert "done device_count=" in out
    assert only_session(root).probe("cudaLaunchKernel")["hits"] == 57


def test_run_user_refusals(h, root_user, world):
    rc, out, err = h.run_to_end([SAN, "run", "--user", "no-such-user-here", "--", "/bin/true"],
                                env=san_env())
    assert rc == EXIT_USAGE and "--user no-such-user-here: no such user" in err, err
    rc, out, err = h.run_to_end(setpriv(named_caps()) + [
        world / "cirron-probe-san", "run", "--user", "root", "--path", world / "w" / "t",
        "--", "/bin/echo", "should-not-run"], env=san_env())
    assert rc == EXIT_NO_PERMISSION, err
    assert err.strip() == "cirron-probe: no permission to run the command as root: --user " \
                          "needs root (sudo)", err
    assert "should-not-run" not in out


# ---- directories on the way ---------------------------------------------------------------

def plant(link, target):
    """nobody's symbolic link."""
    link.symlink_to(target)
    os.lchown(link, NOBODY, NOBODY)


def nobodys_dir(path, mode=0o755):
    path.mkdir(mode=mode)
    path.chmod(mode)
    os.chown(path, NOBODY, NOBODY)
    return path


@pytest.fixture
def victim(tmp_path):
    """Where planted links point: root's directory, /etc's stand-in."""
    v = tmp_path / "victim"
    v.mkdir(mode=0o755)
    (v / "passwd").write_text("root:x:0:0\n")
    yield v
    assert sorted(p.name for p in v.iterdir()) == ["passwd"], "something was made through a link"
    assert (v / "passwd").read_text() == "root:x:0:0\n"


def layouts(tmp_path, victim):
    """(path given, the level refused) with nobody's link at each level of the way."""
    top = tmp_path / "shared"
    top.mkdir()
    top.chmod(0o1777)                           # like /tmp: anyone may plant a name here
    plant(top / "L", victim)                    # --path /tmp/L, L -> /etc (issue 28)
    d1 = nobodys_dir(top / "d1")
    plant(d1 / "L", victim)
    d2 = nobodys_dir(d1 / "d2")
    plant(d2 / "L", victim)
    sticky = top / "sticky"                     # root's, sticky: passes, nobody plants in it
    sticky.mkdir()
    sticky.chmod(0o1777)
    plant(sticky / "spool", victim)
    return [(top / "L", top / "L"),
            (top / "L" / "trace", top / "L"),
            (d1 / "L" / "trace", d1 / "L"),
            (d2 / "L" / "a" / "b", d2 / "L"),
            (sticky, sticky / "spool")]


def test_spool_path_with_a_link_of_another_user_at_each_level(h, root_user, tmp_path, victim):
    for path, level in layouts(tmp_path, victim):
        rc, out, err = h.run_to_end([SAN, "run", "--path", path, "--cache-dir", h.cache_dir,
                                     "--", "/bin/echo", "should-not-run"], env=san_env())
        assert rc == EXIT_SPOOL_UNWRITABLE, (path, err)
        assert_no_sanitizer_report(err)
        assert err == (f"cirron-probe: cannot write spool under {path}: {level}: a symbolic "
                       "link owned by another user: refusing to follow it\n"), err
        assert "should-not-run" not in out


def test_cache_dir_with_a_link_of_another_user_at_each_level(h, bpf, tmp_path, victim):
    """The symbol cache is refused the same way: the job is traced, symbols stay in memory."""
    for path, level in layouts(tmp_path, victim)[:4]:
        root = h.spool_root()
        rc, out, err = h.run_to_end([BIN, "run", "--cuda-calls", "always", "--path", root, "--cache-dir", path, "--",
                                     CUDA_CALLS], timeout=60)
        assert rc == 0, err
        assert (f"symbol cache {path} unusable ({level}: a symbolic link owned by another "
                "user: refusing to follow it), caching in memory only") in err, err
        assert only_session(root).probe("cudaLaunchKernel")["hits"] == 57


def test_out_file_with_a_link_of_another_user_at_each_level(h, bpf, tmp_path, victim):
    root = h.spool_root()
    rc, out, err = h.run_to_end([BIN, "run", "--path", root, "--cache-dir", h.cache_dir, "--",
                                 CUDA_CALLS], timeout=60)
    assert rc == 0, err
    for path, level in layouts(tmp_path, victim)[1:4]:
        out_file = path.parent / "report.html"
        rc, out, err = h.run_to_end([SAN, "report", root, "-o", out_file], env=san_env())
        assert rc == EXIT_OUTPUT_UNWRITABLE, (out_file, err)
        assert err == (f"cirron-probe: cannot write {out_file}: {level}: a symbolic link "
                       "owned by another user: refusing to follow it\n"), err


def test_links_of_root_and_our_own_are_followed(h, bpf, tmp_path):
    """Not every link is refused: root's and our own lead to the spool."""
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "mine").symlink_to(real)
    root = h.spool_root()
    rc, out, err = h.run_to_end([BIN, "run", "--cuda-calls", "always", "--path", tmp_path / "mine" / "t",
                                 "--cache-dir", h.cache_dir, "--", CUDA_CALLS], timeout=60)
    assert rc == 0, err
    assert only_session(real / "t").probe("cudaLaunchKernel")["hits"] == 57
    del root


# ---- the unit and the DaemonSet -----------------------------------------------------------

def test_unit_and_daemonset_grant_the_named_set():
    """dist/cirron-probe-watch.service and the DaemonSet grant exactly deploy/capabilities'
    set for Linux 6.6+ (watch: other users' processes too), nothing more."""
    want = set(named_caps(others=True, k=(6, 6)))
    unit = (ROOT / "dist" / "cirron-probe-watch.service").read_text()
    amb = set(re.search(r"^AmbientCapabilities=(.*)$", unit, re.M).group(1).split())
    bnd = set(re.search(r"^CapabilityBoundingSet=(.*)$", unit, re.M).group(1).split())
    assert amb == want and bnd == want, (amb, bnd, want)
    assert re.search(r"^User=cirron-probe$", unit, re.M)
    docs = list(yaml.safe_load_all((ROOT / "deploy" / "kubernetes" /
                                    "cirron-probe.yaml").read_text()))
    ds = next(d for d in docs if d and d["kind"] == "DaemonSet")
    (c,) = ds["spec"]["template"]["spec"]["containers"]
    sc = c["securityContext"]
    assert {"CAP_" + x for x in sc["capabilities"]["add"]} == want, sc
    assert sc["capabilities"]["drop"] == ["ALL"] and sc.get("privileged") is not True, sc
