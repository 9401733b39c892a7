"""Runs the browser tests and ends with one summary line ("browser: N passed, N failed").
Without arguments it runs every test_*.py module of this folder."""

import sys
import unittest
from pathlib import Path


def main():
    names = sys.argv[1:] or sorted(path.stem for path in Path(__file__).resolve().parent.glob("test_*.py"))
    suite = unittest.defaultTestLoader.loadTestsFromNames(names)
    result = unittest.TextTestRunner(verbosity=2).run(suite)
    failed = len(result.failures) + len(result.errors) + len(result.unexpectedSuccesses)
    passed = result.testsRun - failed - len(result.skipped)
    print(f"browser: {passed} passed, {failed} failed")
    return 0 if failed == 0 and result.testsRun > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
