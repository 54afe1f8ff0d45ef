"""Compares two directories of pin runs (tests/pin/pin_runs.sh): every file byte for byte, but for the JSON-lines
training logs and bert-eval's JSON, compared as JSON without the timing fields, and the run locks (a pid). Prints each difference and exits 1 if
there is any; otherwise prints what it compared."""
import json
import os
import sys

TIMING = {"time", "seq_per_s", "tokens_per_s", "step_seconds", "data_seconds", "mfu", "tflops", "eta_seconds",
          "elapsed_seconds", "seconds", "eval_seconds", "sequences_per_second", "samples_per_second"}


def without_timing(value):
    if isinstance(value, dict):
        return {k: without_timing(v) for k, v in value.items() if k not in TIMING}
    if isinstance(value, list):
        return [without_timing(v) for v in value]
    return value


def files(root):
    out = []
    for folder, _, names in os.walk(root):
        out += [os.path.relpath(os.path.join(folder, n), root) for n in names if n != ".lock"]
    return sorted(out)


def main(a, b):
    differences, values, compared = [], 0, 0
    fa, fb = files(a), files(b)
    for name in sorted(set(fa) ^ set(fb)):
        differences.append(f"{name}: only in {a if name in fa else b}")
    for name in sorted(set(fa) & set(fb)):
        pa, pb = os.path.join(a, name), os.path.join(b, name)
        compared += 1
        if name.endswith("log.jsonl"):
            la, lb = [without_timing(json.loads(l)) for l in open(pa)], [without_timing(json.loads(l)) for l in open(pb)]
            values += sum(len(l) for l in la)
            if la != lb:
                differences.append(f"{name}: the logged values differ")
        elif name == "eval.json":
            if without_timing(json.load(open(pa))) != without_timing(json.load(open(pb))):
                differences.append(f"{name}: the values differ")
        elif open(pa, "rb").read() != open(pb, "rb").read():
            differences.append(f"{name}: the bytes differ")
    for d in differences:
        print("DIFFERENT:", d)
    print(f"{compared} files compared ({values} logged values without timings): {len(differences)} differences")
    return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
