"""Draws bert-train's loss curve (log.jsonl) as a PNG, with the standard library only (zlib + struct), so the
demo needs no plotting package.  Usage: plot_loss.py LOG.jsonl OUT.png"""
import json
import struct
import sys
import zlib

W, H, M = 640, 360, 40  # image size and margin
log = [json.loads(line) for line in open(sys.argv[1])]
points = [(d["step"], d["loss"]) for d in log if "loss" in d and d["loss"] is not None]
if not points:
    sys.exit("plot_loss.py: no loss values in " + sys.argv[1])
steps = [p[0] for p in points]
losses = [p[1] for p in points]
lo, hi = min(losses), max(losses)
hi = hi if hi > lo else lo + 1
first, last = steps[0], max(steps[-1], steps[0] + 1)
pixels = [[(255, 255, 255)] * W for _ in range(H)]


def put(x, y, colour):
    if 0 <= x < W and 0 <= y < H:
        pixels[y][x] = colour


def line(x0, y0, x1, y1, colour):
    n = max(abs(x1 - x0), abs(y1 - y0), 1)
    for i in range(n + 1):
        put(round(x0 + (x1 - x0) * i / n), round(y0 + (y1 - y0) * i / n), colour)


def to_xy(step, loss):
    return (M + (step - first) * (W - 2 * M) / (last - first), H - M - (loss - lo) * (H - 2 * M) / (hi - lo))


line(M, H - M, W - M, H - M, (0, 0, 0))  # axes
line(M, M, M, H - M, (0, 0, 0))
for k in range(5):  # horizontal grid: five loss levels between the lowest and the highest
    y = round(M + k * (H - 2 * M) / 4)
    for x in range(M, W - M, 4):
        put(x, y, (200, 200, 200))
prev = None
for s, l in points:
    x, y = to_xy(s, l)
    if prev:
        line(round(prev[0]), round(prev[1]), round(x), round(y), (31, 119, 180))
    prev = (x, y)
raw = b"".join(b"\x00" + bytes(c for px in row for c in px) for row in pixels)


def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


with open(sys.argv[2], "wb") as f:
    f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", W, H, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))
print(f"loss {losses[0]:.3f} at step {steps[0]} -> {losses[-1]:.3f} at step {steps[-1]} "
      f"(y axis {lo:.2f}..{hi:.2f}) -> {sys.argv[2]}")
