#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Runs a command with its stdout on a terminal, as a user at a shell would, and keeps every
byte it wrote there.

    ptyrun.py OUT ERR COLUMNS -- CMD...

stdout: a pseudo-terminal of COLUMNS x 40 without output processing (no \\n to \\r\\n), so OUT
holds exactly what the command wrote to it; stderr: the file ERR; stdin: /dev/null. Exits
with the command's status."""
import fcntl
import os
import struct
import subprocess
import sys
import termios

out, err, cols = sys.argv[1], sys.argv[2], int(sys.argv[3])
cmd = sys.argv[5:] if sys.argv[4] == "--" else sys.argv[4:]
master, slave = os.openpty()
fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, cols, 0, 0))
attrs = termios.tcgetattr(slave)
attrs[1] &= ~termios.OPOST
termios.tcsetattr(slave, termios.TCSANOW, attrs)
with open(err, "wb") as ef, open(os.devnull, "rb") as nul:
    p = subprocess.Popen(cmd, stdin=nul, stdout=slave, stderr=ef)
os.close(slave)
with open(out, "wb") as of:
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:     # EIO: the last writer closed the terminal
            break
        if not data:
            break
        of.write(data)
sys.exit(p.wait())
