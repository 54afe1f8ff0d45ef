#!/usr/bin/env bash
# The house's rules (DESIGN.md section 2), read from the sources:
# - a folder of libcommon/ includes only folders below it: util < io < cli < text, tfrecord, hdf5, model_config
#   < the tools' areas < device, model < train < tasks; within a floor, no two folders include each other (no cycle);
# - inference (predict, bench, bert-eval, the fine-tuned model) includes nothing from train/loop/, directly or
#   through the headers it includes;
# - no function in libcommon/train/ is longer than 80 lines.
source "$(dirname "$0")/lib.sh"

report=$(python3 - "$SRC/libcommon" <<'PY'
import collections, os, re, sys

root = sys.argv[1]
FLOORS = [["util"], ["io"], ["cli"], ["text", "tfrecord", "hdf5", "model_config"],
          ["wiki", "seg", "shard", "tok", "pretraining_data", "datasets", "ckpt", "squad", "glue", "launch",
           "kernels"],
          ["device", "model"], ["train"], ["tasks"]]
floor_of = {name: n for n, names in enumerate(FLOORS) for name in names}
INFERENCE = re.compile(r"(predict|bench|inference|finetuned_model|bert_eval|fill_mask)[^/]*\.(h|cpp)$")
MAX_TRAIN_FUNCTION_LINES = 80

include = re.compile(r'^#include "([^"]+)"', re.M)
includes = {}
for folder, _, names in os.walk(root):
    for name in names:
        if name.endswith((".h", ".cpp", ".cuh", ".cu")):
            path = os.path.relpath(os.path.join(folder, name), root)
            with open(os.path.join(folder, name)) as f:
                text = f.read()
            includes[path] = [i for i in include.findall(text) if os.path.exists(os.path.join(root, i))]

def room(path):  # train/ and tasks/ are floors of rooms; their rooms must not include each other in a circle
    parts = path.split("/")
    return "/".join(parts[:2]) if parts[0] in ("train", "tasks") and len(parts) > 2 else parts[0]

problems = []
edges = collections.defaultdict(set)
for path, incs in includes.items():
    for inc in incs:
        a, b = room(path), room(inc)
        if a == b:
            continue
        edges[a].add(b)
        fa, fb = (floor_of.get(r.split("/")[0]) for r in (a, b))
        if fa is None or fb is None:
            problems.append(f"{path}: folder not on any floor of DESIGN.md's layout ({a} or {b})")
        elif fb > fa:
            problems.append(f"{path} includes {inc}: a back arrow ({a} is below {b})")

# Cycles between rooms (Tarjan's strongly connected components).
index, low, stack, on_stack, counter = {}, {}, [], set(), [0]
def strongly_connect(v):
    index[v] = low[v] = counter[0]; counter[0] += 1; stack.append(v); on_stack.add(v)
    for w in edges.get(v, ()):
        if w not in index:
            strongly_connect(w); low[v] = min(low[v], low[w])
        elif w in on_stack:
            low[v] = min(low[v], index[w])
    if low[v] == index[v]:
        component = []
        while True:
            w = stack.pop(); on_stack.discard(w); component.append(w)
            if w == v:
                break
        if len(component) > 1:
            problems.append("folders include each other in a circle: " + " ".join(sorted(component)))
for v in list(edges):
    if v not in index:
        strongly_connect(v)

def closure(path):
    seen, todo = set(), [path]
    while todo:
        for inc in includes.get(todo.pop(), []):
            if inc not in seen:
                seen.add(inc); todo.append(inc)
    return seen
inference = [p for p in includes if INFERENCE.search(p) and not p.startswith("train/")]
if len(inference) < 8:
    problems.append(f"only {len(inference)} inference sources found: the pattern no longer matches the layout")
for path in inference:
    for inc in sorted(closure(path)):
        if inc.startswith("train/loop/"):
            problems.append(f"{path} (inference) includes {inc}")
            break

# A function: a line at column 0 ending in '{' that opens no namespace or type, up to the next line that is '}'.
opens_type = re.compile(r"(namespace|struct|class|enum|union|extern)\b")
for path in includes:
    if not path.startswith("train/"):
        continue
    with open(os.path.join(root, path)) as f:
        lines = f.read().split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if line and not line[0].isspace() and line.rstrip().endswith("{") and not opens_type.match(line) \
                and "=" not in line.split("(")[0]:
            end = i + 1
            while end < len(lines) and lines[end] != "}":
                end += 1
            if end - i + 1 > MAX_TRAIN_FUNCTION_LINES:
                problems.append(f"{path}:{i + 1}: a function of {end - i + 1} lines (at most "
                                f"{MAX_TRAIN_FUNCTION_LINES} in train/)")
            i = end
        i += 1

print(f"{len(includes)} sources, {sum(len(e) for e in edges.values())} arrows between folders, "
      f"{len(inference)} inference sources")
for p in problems:
    print("PROBLEM " + p)
PY
) || fail_case "the layout check itself failed: $report"
CASES=$((CASES + 1))
echo "$report" | head -1
[[ "$report" == *" sources, "* ]] || fail_case "the layout check printed no summary: $report"
problems=$(echo "$report" | sed -n 's/^PROBLEM //p')
[ -z "$problems" ] || fail_case "$problems"
finish
