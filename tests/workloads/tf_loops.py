# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Copyright (c) 2026 cirron-probe authors
"""TensorFlow training loops as users write them, for the TensorFlow venv
(tests/scripts/make-tf-venv.sh: tensorflow-cpu, Keras 3, tf-keras):

  fit      Keras model.fit (Keras 3; tf-keras with TF_USE_LEGACY_KERAS=1): --epochs,
           --batches (training batches an epoch), --val-batches (validation_data batches;
           0: none), --val-split (validation_split instead), --callbacks (EarlyStopping,
           a LambdaCallback that prints), --verbose 0|1|2, then --evaluate N (model.evaluate
           on N batches of new data) and --predict N (model.predict on N batches).
  tape     a custom loop with tf.GradientTape over a tf.data.Dataset: eager (every op run
           one by one), or with --function the step in a @tf.function.

--with-torch also imports torch (Debian's, from /usr/lib/python3/dist-packages) and runs a
torch backward after each Keras batch: both frameworks loaded in one job.
--wait stops before training until a line comes on stdin (an observer attaches then).
--forever trains epoch after epoch until killed (attach mid-run). Prints READY before
training and DONE at the end; History's values as `HISTORY {json}` after fit."""
import argparse
import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np  # noqa: E402

BATCH = 32


def data(batches, seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(batches * BATCH, 16)).astype("float32")
    y = (x[:, :1] + 0.5 * x[:, 1:2] > 0).astype("float32")
    return x, y


def keras_module():
    if os.environ.get("TF_USE_LEGACY_KERAS") == "1":
        import tf_keras as keras
    else:
        import keras
    return keras


def model_of(keras):
    m = keras.Sequential([keras.Input((16,)), keras.layers.Dense(32, activation="relu"),
                          keras.layers.Dense(1, activation="sigmoid")])
    m.compile(optimizer=keras.optimizers.SGD(0.05), loss="binary_crossentropy",
              metrics=["accuracy"])
    return m


def torch_work():
    """torch (Debian's 1.13, same CPython ABI) loaded beside TensorFlow: a backward after each
    Keras batch, so both frameworks' anchors fire in one process."""
    sys.path.append("/usr/lib/python3/dist-packages")
    import warnings
    warnings.simplefilter("ignore")
    import torch
    lin = torch.nn.Linear(4, 1)

    def after_batch(batch, logs):
        lin(torch.ones(2, 4)).sum().backward()
    return after_batch


def fit(a):
    keras = keras_module()
    model = model_of(keras)
    x, y = data(a.batches, 0)
    val = None
    if a.val_batches:
        val = data(a.val_batches, 1)
    callbacks = []
    if a.with_torch:
        callbacks.append(keras.callbacks.LambdaCallback(on_train_batch_end=torch_work()))
    if a.callbacks:
        callbacks = [keras.callbacks.EarlyStopping(monitor="loss", patience=100),
                     keras.callbacks.LambdaCallback(
                         on_epoch_end=lambda e, logs: print(f"callback epoch {e} end",
                                                            flush=True))]
    ready(a)
    epochs = 1000000 if a.forever else a.epochs
    h = model.fit(x, y, batch_size=BATCH, epochs=epochs, verbose=a.verbose, shuffle=False,
                  validation_data=val, validation_split=a.val_split, callbacks=callbacks)
    print("HISTORY " + json.dumps({k: [float(v) for v in vs] for k, vs in h.history.items()}),
          flush=True)
    if a.evaluate:
        ex, ey = data(a.evaluate, 2)
        r = model.evaluate(ex, ey, batch_size=BATCH, verbose=0, return_dict=True)
        print("EVALUATE " + json.dumps({k: float(v) for k, v in r.items()}), flush=True)
    if a.predict:
        px, _ = data(a.predict, 3)
        p = model.predict(px, batch_size=BATCH, verbose=0)
        print(f"PREDICT {p.shape[0]}", flush=True)


def tape(a):
    import tensorflow as tf
    keras = keras_module()
    model = keras.Sequential([keras.Input((16,)), keras.layers.Dense(32, activation="relu"),
                              keras.layers.Dense(1)])
    opt = keras.optimizers.SGD(0.05)
    loss_fn = keras.losses.MeanSquaredError()
    x, y = data(a.batches, 0)
    ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(BATCH)

    def step(xb, yb):
        with tf.GradientTape() as t:
            loss = loss_fn(yb, model(xb, training=True))
        grads = t.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    if a.function:
        step = tf.function(step)
    ready(a)
    epoch = 0
    while a.forever or epoch < a.epochs:
        total = 0.0
        for xb, yb in ds:
            total += float(step(xb, yb))
        print(f"epoch {epoch} loss: {total / a.batches:.4f}", flush=True)
        epoch += 1


def ready(a):
    print("READY", flush=True)
    if a.wait:
        sys.stdin.readline()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("loop", choices=["fit", "tape"])
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--batches", type=int, default=4)
    p.add_argument("--val-batches", type=int, default=0)
    p.add_argument("--val-split", type=float, default=0.0)
    p.add_argument("--callbacks", action="store_true")
    p.add_argument("--verbose", type=int, default=2)
    p.add_argument("--evaluate", type=int, default=0)
    p.add_argument("--predict", type=int, default=0)
    p.add_argument("--function", action="store_true")
    p.add_argument("--with-torch", action="store_true")
    p.add_argument("--wait", action="store_true")
    p.add_argument("--forever", action="store_true")
    a = p.parse_args()
    fit(a) if a.loop == "fit" else tape(a)
    print("DONE", flush=True)


if __name__ == "__main__":
    main()
