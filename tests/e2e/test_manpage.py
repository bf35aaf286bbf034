# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Copyright (c) 2026 cirron-probe authors
"""cirron-probe(1) and docs/usage.md stay in step with `cirron-probe COMMAND --help`: the same
options per command, the same commands, the same exit codes. No BPF needed."""
import re
import subprocess

import pytest

from conftest import BIN, ROOT

MANPAGE = ROOT / "man" / "cirron-probe.1"
USAGE = ROOT / "docs" / "usage.md"
COMMANDS = ("attach", "run", "watch", "doctor", "trace", "health", "report", "ship")


def help_text(*args):
    p = subprocess.run([str(BIN), *args], capture_output=True, text=True, timeout=30)
    assert p.returncode == 0 and p.stderr == "", (args, p.returncode, p.stderr)
    return p.stdout


def help_options(cmd):
    """The options argp lists for cmd: '  -o, --output=SINKS', '      --all'."""
    opts = set()
    for m in re.finditer(r"^ {2,}(?:(-\S), )?(--[a-z][a-z-]*)", help_text(cmd, "--help"), re.M):
        opts.update(o for o in m.groups() if o)
    return opts


def commands_named(heading):
    """'Options of attach, run and watch' -> {'attach', 'run', 'watch'}; 'every command' ->
    all of them."""
    if "every command" in heading:
        return set(COMMANDS)
    named = set(re.findall(r"\b(" + "|".join(COMMANDS) + r")\b", heading))
    assert named, f"an options heading that names no command: {heading!r}"
    return named


def man_options():
    """Per command, the options of every '.Ss Options of ...' subsection that names it:
    '.It Fl o , Fl \\-output Ns = Ns Ar SINKS' gives -o and --output."""
    per_cmd = {c: set() for c in COMMANDS}
    heading = None
    for line in MANPAGE.read_text().splitlines():
        if line.startswith((".Sh", ".Ss")):
            heading = line[4:] if line.startswith(".Ss Options of ") else None
            continue
        if heading and line.startswith(".It "):
            opts = {"--" + o for o in re.findall(r"\bFl \\?-([a-z][a-z-]*)", line)}
            opts |= {"-" + o for o in re.findall(r"\bFl (?:\\&)?([A-Za-z?])(?= |$)", line)}
            assert opts, f"an item with no option under {heading!r}: {line}"
            for cmd in commands_named(heading):
                per_cmd[cmd] |= opts
    return per_cmd


def usage_options():
    """Per command, the options in the tables of docs/usage.md's 'Options of ...' sections:
    the first cell of a row, '`-o`, `--output=SINKS`'."""
    per_cmd = {c: set() for c in COMMANDS}
    heading = None
    for line in USAGE.read_text().splitlines():
        m = re.match(r"^#+ (.*)", line)
        if m:
            heading = m.group(1) if m.group(1).startswith("Options of ") else None
            continue
        if heading and line.startswith("| `-"):
            cell = line.split("|")[1]
            opts = set(re.findall(r"`(--?[A-Za-z?][a-z-]*)", cell))
            for cmd in commands_named(heading):
                per_cmd[cmd] |= opts
    return per_cmd


@pytest.mark.parametrize("cmd", COMMANDS)
def test_manpage_lists_the_options_of_help(built, cmd):
    listed = help_options(cmd)
    assert "--help" in listed and len(listed) > 4, listed    # the parser read the help
    in_man = man_options()[cmd]
    assert in_man == listed, (f"{cmd}: only in --help: {sorted(listed - in_man)}; "
                              f"only in the man page: {sorted(in_man - listed)}")


@pytest.mark.parametrize("cmd", COMMANDS)
def test_usage_md_lists_the_options_of_help(built, cmd):
    listed = help_options(cmd)
    in_doc = usage_options()[cmd]
    assert in_doc == listed, (f"{cmd}: only in --help: {sorted(listed - in_doc)}; "
                              f"only in docs/usage.md: {sorted(in_doc - listed)}")


def test_manpage_lists_the_commands_of_help(built):
    top = help_text("--help")
    in_help = set(re.findall(r"^  ([a-z]+) ", top[top.index("Commands:"):], re.M))
    assert in_help == set(COMMANDS), in_help
    man = MANPAGE.read_text()
    synopsis = man[man.index(".Sh SYNOPSIS"):man.index(".Sh DESCRIPTION")]
    described = man[man.index(".Ss Commands"):man.index(".Ss Options of ")]
    assert set(re.findall(r"^\.Cm ([a-z]+)$", synopsis, re.M)) == in_help
    assert set(re.findall(r"^\.It Cm ([a-z]+)", described, re.M)) == in_help
    usage = USAGE.read_text()
    assert set(re.findall(r"^## ([a-z]+)$", usage, re.M)) == in_help


def test_manpage_lists_every_exit_code(built):
    header = (ROOT / "user" / "common" / "exit_codes.h").read_text()
    codes = {int(c) for c in re.findall(r"^\tEXIT_[A-Z_]+ = (\d+),", header, re.M)}
    codes |= {126, 127}                                    # run: the command not started
    man = MANPAGE.read_text()
    section = man[man.index(".Sh EXIT STATUS"):man.index(".Sh EXAMPLES")]
    in_man = {int(c) for line in re.findall(r"^\.It (.*)$", section, re.M)
              for c in re.findall(r"\d+", line)}
    assert in_man == codes
    top = help_text("--help")
    in_help = {int(c) for line in re.findall(r"^  (\d+(?:, \d+)*) ", top, re.M)
               for c in line.split(", ")}
    assert in_help == codes


def test_manpage_lint():
    """mandoc's lint from style up (make check-man): silent."""
    p = subprocess.run(["make", "--no-print-directory", "-s", "check-man"], cwd=ROOT,
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stdout + p.stderr
