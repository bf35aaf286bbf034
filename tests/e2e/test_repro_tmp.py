import json, socket, time, re
from test_s3 import Weed, weed_bin, symcache, torch_bpf, s3, observe, local_batches, TRAIN
from conftest import free_ports

import pytest
@pytest.mark.timeout(180)
def test_repro(h, s3, symcache, torch_bpf):
    bucket = s3.bucket()
    obs = []
    for rank in (0, 1):
        env = s3.env(RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE="2")
        root = h.spool_root()
        h.cache_dir = symcache
        o = h.observer("run", "--output", f"spool,s3://{bucket}/r", "--path", root, "--",
                       *TRAIN, "--step-sleep", "60", "--epochs", "25", "--batches", "6", env=env)
        obs.append((o, root))
    t0 = time.monotonic()
    # wait for the jobs to start ("ready")
    for o, _ in obs:
        __import__("test_s3").wait_until(lambda: local_batches(_), "first batch")
    t0 = time.monotonic()
    time.sleep(3)
    s3.stop()
    print("killed at", time.monotonic() - t0)
    time.sleep(4)
    s3.start()
    print("back at", time.monotonic() - t0)
    for o, root in obs:
        o.finish(90)
        print("exit at", time.monotonic() - t0)
        print(o.err.text[-3000:])
    print(sorted(s3.objects(bucket, "r/")))
    assert 0
