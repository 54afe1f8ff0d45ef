"""TensorBoard event files written by bk::TensorBoardWriter (through tests/tools/tb_probe), read by TensorBoard.

1. EventAccumulator (TensorBoard's own loader, the one behind its scalar charts) finds exactly our tags, and
   for each tag exactly our (step, value) pairs, values rounded to float32 as simple_value stores them; every
   wall_time lies within the run.
2. Record by record (TensorFlow's tf_record_iterator checks both CRCs): the first event is the file_version
   "brain.Event:2" event, and each record's bytes equal protobuf's own serialisation of the Event it parses to.
3. The file is named events.out.tfevents.<10-digit unix time>.<hostname>; a second writer started in the same
   directory in the same second gets another name, and the first file is left as it was.
"""
import os
import random
import re
import socket
import struct
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
from compat_common import TEST_TOOLS, Checks

PROBE = os.path.join(TEST_TOOLS, "tb_probe")
check = Checks()


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def main():
    if not os.access(PROBE, os.X_OK):
        print(f"skip: {PROBE} not built")
        return 77
    try:
        from tensorboard.backend.event_processing import event_accumulator
        from tensorboard.compat.proto import event_pb2
        import tensorflow as tf
    except ImportError as e:
        print(f"skip: {e}")
        return 77

    rng = random.Random(4)
    tags = ["train/loss", "train/mlm_loss", "train/nsp_loss", "train/lr", "perf/seq_per_s", "eval/mlm accuracy"]
    expected = {t: [] for t in tags}
    lines = []
    steps = [0, 1, 2, 3, 10, 11, 100, 1000, 7038, 2**40]
    for step in steps:
        for tag in tags:
            if tag.startswith("eval/") and step % 10 != 0:
                continue  # a tag logged at some steps only
            value = rng.choice([rng.uniform(-10, 10), rng.uniform(0, 1e-6), 10 ** rng.uniform(-30, 30), 0.0])
            lines.append(f"{step}\t{tag}\t{value!r}")
            expected[tag].append((step, f32(value)))

    with tempfile.TemporaryDirectory() as tmp:
        logdir = os.path.join(tmp, "tb")
        before = time.time()
        proc = subprocess.run([PROBE, logdir], input="\n".join(lines) + "\n", capture_output=True, text=True)
        after = time.time()
        if proc.returncode != 0:
            print(proc.stderr)
            return 1
        path = proc.stdout.strip()
        name = os.path.basename(path)
        m = re.fullmatch(r"events\.out\.tfevents\.(\d{10})\.(.+)", name)
        check(m is not None and m.group(2) == socket.gethostname(), f"file name {name}")
        check(m is not None and int(before) <= int(m.group(1)) <= int(after), f"time in the file name {name}")

        acc = event_accumulator.EventAccumulator(logdir, size_guidance={event_accumulator.SCALARS: 0})
        acc.Reload()
        got_tags = sorted(acc.Tags()["scalars"])
        check(got_tags == sorted(tags), f"tags {got_tags}")
        values = 0
        for tag in tags:
            events = acc.Scalars(tag) if tag in got_tags else []
            got = [(e.step, e.value) for e in events]
            check(got == expected[tag], f"{tag}: {got[:3]}... != {expected[tag][:3]}...")
            check(all(before - 1 <= e.wall_time <= after + 1 for e in events), f"{tag}: wall_time outside the run")
            values += sum(1 for g, e in zip(got, expected[tag]) if g == e)
        total = sum(len(v) for v in expected.values())
        print(f"EventAccumulator: {len(got_tags)} tags, {values}/{total} (step, value) pairs equal")

        records = list(tf.compat.v1.io.tf_record_iterator(path))
        first = event_pb2.Event.FromString(records[0])
        check(first.file_version == "brain.Event:2", f"first event {first}")
        identical = 0
        for raw in records:
            event = event_pb2.Event.FromString(raw)
            if event.SerializeToString(deterministic=True) == raw:
                identical += 1
        check(identical == len(records), f"{len(records) - identical} records differ from protobuf's serialisation")
        check(len(records) == 1 + total, f"{len(records)} records for {total} scalars")
        print(f"records: {len(records)}, byte-identical to protobuf's serialisation: {identical}")

        # A second writer in the same directory and second: a new name, the first file untouched.
        size = os.path.getsize(path)
        proc2 = subprocess.run([PROBE, logdir], input="5\ttrain/loss\t1.5\n", capture_output=True, text=True)
        second = proc2.stdout.strip()
        check(proc2.returncode == 0 and second != path and os.path.exists(second), f"second writer: {second}")
        check(os.path.getsize(path) == size, "the first event file changed")

    return check.exit_code("tensorboard compat")


if __name__ == "__main__":
    sys.exit(main())
