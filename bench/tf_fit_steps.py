# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Copyright (c) 2026 cirron-probe authors
"""The TensorFlow workload of bench/tf_step_overhead.sh: Keras 3 model.fit on tensorflow-cpu
(an MLP 512 wide, batch 128, SGD, from NumPy arrays), one thread per op pool. Prints the
median training step time of the epochs after the first (a callback's clock between
on_train_batch_begin and on_train_batch_end) as `STEP_MS <median>`, and the process's CPU time
(every thread, user and system: a uprobe's trap is the job's system time) per step over those
epochs as `CPU_MS <mean>`: the steadier figure on a machine whose other load moves wall times.

  python tf_fit_steps.py [--epochs 4] [--batches 200] [--width 512] [--batch 128]"""
import argparse
import os
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

tf.config.threading.set_inter_op_parallelism_threads(1)
tf.config.threading.set_intra_op_parallelism_threads(1)
import keras  # noqa: E402


class StepClock(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.times, self.epoch, self.t0 = [], 0, 0.0

    def on_epoch_begin(self, epoch, logs=None):
        self.epoch = epoch
        if epoch == 1:
            self.cpu0 = time.process_time()

    def on_train_end(self, logs=None):
        self.cpu = time.process_time() - self.cpu0

    def on_train_batch_begin(self, batch, logs=None):
        self.t0 = time.perf_counter()

    def on_train_batch_end(self, batch, logs=None):
        if self.epoch:
            self.times.append(time.perf_counter() - self.t0)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--batches", type=int, default=200)
    p.add_argument("--width", type=int, default=512)
    p.add_argument("--batch", type=int, default=128)
    a = p.parse_args()
    rng = np.random.default_rng(0)
    x = rng.normal(size=(a.batches * a.batch, 64)).astype("float32")
    y = (x[:, :1] > 0).astype("float32")
    model = keras.Sequential([keras.Input((64,)), keras.layers.Dense(a.width, activation="relu"),
                              keras.layers.Dense(a.width, activation="relu"),
                              keras.layers.Dense(1, activation="sigmoid")])
    model.compile(optimizer=keras.optimizers.SGD(0.01), loss="binary_crossentropy")
    clock = StepClock()
    model.fit(x, y, batch_size=a.batch, epochs=a.epochs, verbose=0, shuffle=False,
              callbacks=[clock])
    print(f"STEP_MS {np.median(clock.times) * 1000:.4f}", flush=True)
    print(f"CPU_MS {clock.cpu / len(clock.times) * 1000:.4f}", flush=True)


if __name__ == "__main__":
    main()
