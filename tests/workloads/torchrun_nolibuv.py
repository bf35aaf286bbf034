#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""torchrun (torch.distributed.run, unchanged) for Debian trixie's torch 2.6, which is built
without libuv while its rendezvous TCPStore asks for libuv by default and fails. Same
arguments as torchrun."""
import functools
import sys

import torch.distributed as dist

dist.TCPStore = functools.partial(dist.TCPStore, use_libuv=False)

from torch.distributed.run import main  # noqa: E402  (after the patch: it imports TCPStore)

sys.exit(main())
