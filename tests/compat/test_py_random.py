"""bk::PyRandom against CPython's own random.Random, live.

For many int seeds (small, 32/64-bit boundaries, bignums, negatives) the same sequence of calls is made in
CPython (stdlib `random`) and in our library (through tests/tools/data_test_helper), and every result is compared
exactly: random() as 17 significant digits (an exact round trip of a double), integers in full.
"""
import os
import random
import subprocess
import sys

HELPER = os.path.join(os.environ.get("TEST_TOOLS") or os.path.join(os.environ["BIN"], "..", "tests"), "data_test_helper")

SEEDS = [0, 1, 2, 42, 12345, 2**31 - 1, 2**32 - 1, 2**32, 2**32 + 5, 2**63 - 1, 2**63, 2**64 - 1, 2**64 + 17,
         2**100 + 3, 10**40 + 7, 3**200, -1, -12345, -(2**32 + 5), -(2**70)]

INT64_MAX = 2**63 - 1


def make_ops(meta):
    """A random mix of calls, biased towards what create_pretraining_data.py uses."""
    ops = []
    for _ in range(meta.randrange(50, 400)):
        kind = meta.choice(["random", "random", "half", "getrandbits", "randbelow", "randint", "randint", "randrange",
                            "shuffle", "choice"])
        if kind in ("random", "half"):
            ops.append(kind)
        elif kind == "getrandbits":
            ops.append(f"getrandbits:{meta.choice([0, 1, 5, 8, 31, 32, 33, 53, 63, 64, 65, 100, 200])}")
        elif kind == "randbelow":
            n = meta.choice([1, 2, 3, 7, 100, 30522, 2**31, 2**32 - 1, 2**32, 2**32 + 1, 2**53 + 1, 2**63, 2**64 - 1])
            ops.append(f"randbelow:{n}")
        elif kind == "randint":
            a, b = meta.choice([(2, 125), (0, 30521), (0, 1), (-5, 5), (7, 7), (-2**40, 2**40),
                                (-INT64_MAX - 1, INT64_MAX), (0, INT64_MAX), (-(2**62), 2**62)])
            ops.append(f"randint:{a}:{b}")
        elif kind == "randrange":
            start, stop, step = meta.choice([(0, 10, 1), (10, 0, -3), (5, 100, 7), (-50, 50, 13), (100, -100, -1),
                                             (0, 2**40, 3)])
            ops.append(f"randrange:{start}:{stop}:{step}")
        elif kind == "shuffle":
            # Lengths either side of powers of two and of the 1024-bound blocks the shuffle draws in.
            ops.append(f"shuffle:{meta.choice([0, 1, 2, 3, 4, 5, 10, 100, 1000, 1024, 1025, 1026, 2049, 5000, 70000])}")
        else:
            ops.append(f"choice:{meta.choice([1, 2, 10, 30522])}")
    # Long runs cross MT's 624-word regeneration several times.
    ops += ["random"] * meta.choice([700, 1300, 2500])
    return ops


def cpython(seed, ops):
    rng = random.Random(seed)
    out = []
    for op in ops:
        name, *args = op.split(":")
        args = [int(a) for a in args]
        if name == "random":
            out.append("%.17g" % rng.random())
        elif name == "half":
            out.append(str(rng.random() < 0.5))
        elif name == "getrandbits":
            out.append("%x" % rng.getrandbits(args[0]))
        elif name == "randbelow":
            out.append(str(rng._randbelow(args[0])))
        elif name == "randint":
            out.append(str(rng.randint(*args)))
        elif name == "randrange":
            out.append(str(rng.randrange(*args)))
        elif name == "shuffle":
            x = list(range(args[0]))
            rng.shuffle(x)
            out.append(" ".join(map(str, x)))
        elif name == "choice":
            out.append(str(rng.choice(range(args[0]))))
    return out


def ours(seed, ops):
    proc = subprocess.run([HELPER, "random", str(seed)], input="\n".join(ops) + "\n", capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"FAIL: helper failed for seed {seed}: {proc.stderr.strip()}")
    return proc.stdout.splitlines()


def main():
    if not os.access(HELPER, os.X_OK):
        print(f"SKIP: {HELPER} not built")
        return 77
    meta = random.Random(20240601)
    calls = agree = 0
    failures = []
    for seed in SEEDS:
        for _ in range(3):
            ops = make_ops(meta)
            want, got = cpython(seed, ops), ours(seed, ops)
            calls += len(ops)
            agree += sum(1 for w, g in zip(want, got) if w == g)
            if want != got:
                first = next((i for i, (w, g) in enumerate(zip(want, got)) if w != g), min(len(want), len(got)))
                failures.append(f"seed {seed}: call {first} {ops[first] if first < len(ops) else '?'}: "
                                f"CPython {want[first] if first < len(want) else '(none)'!r}, "
                                f"ours {got[first] if first < len(got) else '(none)'!r}")
    print(f"py_random: {len(SEEDS)} seeds, {calls} calls, CPython {sys.version.split()[0]}, "
          f"agreement {100.0 * agree / calls:.4f}%")
    for f in failures[:10]:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
