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
