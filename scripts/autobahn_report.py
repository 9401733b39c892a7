#!/usr/bin/env python3
"""Summarises an Autobahn|Testsuite fuzzingclient report and gates on it.

Usage:
  autobahn_report.py REPORT_DIR[=CASES] [REPORT_DIR[=CASES] ...] [--allowed FILE]
  autobahn_report.py --self-test

Reads each REPORT_DIR/index.json, prints the number of cases per `behavior`
and per `behaviorClose`, and exits 1 when a case's behavior is not OK,
NON-STRICT or INFORMATIONAL, or its close behavior is not OK or
INFORMATIONAL (FAILED BY CLIENT, the fuzzer dropping the TCP connection
before the server did, passes only where the case's own expectation does not
require a clean close), unless the case is in the allow-list (one "CASE<TAB>REASON"
per line; the reason must quote what the case's own text allows), and when a
report holds another number of cases than the CASES given with it (a run cut
short, or cases left out). An allow-listed case that now passes is reported,
not failed.
"""
import json
import os
import sys
import tempfile

ACCEPTED = ("OK", "NON-STRICT", "INFORMATIONAL")
ACCEPTED_CLOSE = ("OK", "INFORMATIONAL")


def case_key(case_id):
    return tuple(int(part) for part in case_id.split("."))


def load_allowed(path):
    allowed = {}
    if not path:
        return allowed
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            line = line.rstrip("\n")
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            case, _, reason = line.partition("\t")
            if not reason.strip():
                raise SystemExit(f"{path}:{number}: expected CASE<TAB>REASON, got {line!r}")
            allowed[case.strip()] = reason.strip()
    return allowed


def load_cases(report_dir):
    """{case id: result} from one report directory (one agent)."""
    with open(os.path.join(report_dir, "index.json"), encoding="utf-8") as handle:
        index = json.load(handle)
    cases = {}
    for agent_cases in index.values():
        cases.update(agent_cases)
    return cases


def close_accepted(report_dir, case):
    """Whether a case's close behavior passes (see the module's text)."""
    if case["behaviorClose"] in ACCEPTED_CLOSE:
        return True
    if case["behaviorClose"] != "FAILED BY CLIENT":
        return False
    with open(os.path.join(report_dir, case["reportfile"]), encoding="utf-8") as handle:
        return json.load(handle).get("expectedClose", {}).get("requireClean") is False


def count(values):
    counts = {}
    for value in values:
        counts[value] = counts.get(value, 0) + 1
    return counts


def print_table(title, counts, out):
    print(f"  {title}", file=out)
    for name in sorted(counts, key=lambda name: (-counts[name], name)):
        print(f"    {name:<18} {counts[name]:>5}", file=out)


def summarise(report_dirs, allowed, out=sys.stdout, expected_counts=None):
    """Prints the summary; returns the number of failed, not allowed, cases
    (a report with the wrong number of cases counts as one failure)."""
    failures = 0
    for report_dir in report_dirs:
        cases = load_cases(report_dir)
        print(f"autobahn: {report_dir}: {len(cases)} cases", file=out)
        expected = (expected_counts or {}).get(report_dir)
        if expected is not None and len(cases) != expected:
            failures += 1
            print(f"  {len(cases)} cases reported, {expected} expected -- FAILS", file=out)
        print_table("behavior", count(case["behavior"] for case in cases.values()), out)
        print_table("close behavior", count(case["behaviorClose"] for case in cases.values()), out)
        for case_id in sorted(cases, key=case_key):
            behavior = cases[case_id]["behavior"]
            if not close_accepted(report_dir, cases[case_id]):
                behavior = f"{behavior}, close {cases[case_id]['behaviorClose']}"
            if behavior in ACCEPTED:
                if case_id in allowed:
                    print(f"  {case_id}: {behavior} (allow-listed, passes now)", file=out)
                continue
            if case_id in allowed:
                print(f"  {case_id}: {behavior}, allowed: {allowed[case_id]}", file=out)
            else:
                failures += 1
                print(f"  {case_id}: {behavior} -- FAILS (see {report_dir}/index.html)", file=out)
    return failures


def self_test():
    """The gate must fail on a failed case and pass an allow-listed one."""
    def report(directory, behaviors, closes=None):
        """closes: case -> (close behavior, whether the case requires a clean close)."""
        os.makedirs(directory)
        closes = closes or {}
        cases = {case: {"behavior": behavior, "behaviorClose": closes.get(case, ("OK", True))[0],
                        "reportfile": f"{case}.json"}
                 for case, behavior in behaviors.items()}
        for case in cases:
            with open(os.path.join(directory, f"{case}.json"), "w", encoding="utf-8") as handle:
                json.dump({"expectedClose": {"requireClean": closes.get(case, ("OK", True))[1]}}, handle)
        with open(os.path.join(directory, "index.json"), "w", encoding="utf-8") as handle:
            json.dump({"happyserver": cases}, handle)

    with tempfile.TemporaryDirectory() as root, open(os.devnull, "w") as quiet:
        clean, failed = os.path.join(root, "clean"), os.path.join(root, "failed")
        unclean = os.path.join(root, "unclean")
        report(clean, {"1.1.1": "OK", "2.10": "FAILED", "6.4.1": "NON-STRICT", "7.1.6": "INFORMATIONAL"})
        report(failed, {"1.1.1": "OK", "3.1": "FAILED", "5.1": "UNIMPLEMENTED"})
        report(unclean, {"1.1.1": "OK", "7.1.1": "OK", "7.1.2": "OK", "3.1": "OK", "3.2": "OK"},
               closes={"7.1.1": ("UNCLEAN", False), "7.1.2": ("INFORMATIONAL", True),
                       "3.1": ("FAILED BY CLIENT", False), "3.2": ("FAILED BY CLIENT", True)})
        allowed = {"2.10": "the case text allows it"}
        checks = [
            (summarise([clean], allowed, quiet), 0, "an allow-listed failure passes"),
            (summarise([clean], {}, quiet), 1, "a failure outside the allow-list fails"),
            (summarise([failed], allowed, quiet), 2, "FAILED and UNIMPLEMENTED both fail"),
            (summarise([clean, failed], allowed, quiet), 2, "failures add up across reports"),
            (summarise([unclean], allowed, quiet), 2,
             "an unclean close fails, and so does a client's drop where the case requires a clean close"),
            (summarise([clean], allowed, quiet, {clean: 4}), 0, "the expected number of cases passes"),
            (summarise([clean], allowed, quiet, {clean: 5}), 1, "a missing case fails"),
        ]
    wrong = [f"{label}: got {got}, expected {expected}" for got, expected, label in checks if got != expected]
    for line in wrong:
        print(f"autobahn self-test: {line}", file=sys.stderr)
    print(f"autobahn self-test: {len(checks) - len(wrong)} passed, {len(wrong)} failed")
    return 1 if wrong else 0


def main(arguments):
    if arguments == ["--self-test"]:
        return self_test()
    allowed_path = None
    if "--allowed" in arguments:
        position = arguments.index("--allowed")
        allowed_path = arguments[position + 1]
        del arguments[position:position + 2]
    if not arguments:
        print(__doc__, file=sys.stderr)
        return 2
    report_dirs, expected_counts = [], {}
    for argument in arguments:
        report_dir, _, cases = argument.partition("=")
        report_dirs.append(report_dir)
        if cases:
            expected_counts[report_dir] = int(cases)
    failures = summarise(report_dirs, load_allowed(allowed_path), expected_counts=expected_counts)
    if failures:
        print(f"autobahn: {failures} case(s) failed")
        return 1
    print("autobahn: every case OK, NON-STRICT, INFORMATIONAL or allow-listed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
