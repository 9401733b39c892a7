#!/usr/bin/env python3
"""Summarises an Autobahn|Testsuite fuzzingclient report and gates on it.

Usage:
  autobahn_report.py REPORT_DIR [REPORT_DIR ...] [--allowed FILE]
  autobahn_report.py --self-test

Reads each REPORT_DIR/index.json, prints the number of cases per `behavior`
and per `behaviorClose`, and exits 1 when a case's behavior is not OK,
NON-STRICT or INFORMATIONAL, unless the case is in the allow-list (one
"CASE<TAB>REASON" per line; the reason must quote what the case's own text
allows). An allow-listed case that now passes is reported, not failed.
"""
import json
import os
import sys
import tempfile

ACCEPTED = ("OK", "NON-STRICT", "INFORMATIONAL")


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


def count(values):
    counts = {}
    for value in values:
        counts[value] = counts.get(value, 0) + 1
    return counts


def print_table(title, counts, out):
    print(f"  {title}", file=out)
    for name in sorted(counts, key=lambda name: (-counts[name], name)):
        print(f"    {name:<18} {counts[name]:>5}", file=out)


def summarise(report_dirs, allowed, out=sys.stdout):
    """Prints the summary; returns the number of failed, not allowed, cases."""
    failures = 0
    for report_dir in report_dirs:
        cases = load_cases(report_dir)
        print(f"autobahn: {report_dir}: {len(cases)} cases", file=out)
        print_table("behavior", count(case["behavior"] for case in cases.values()), out)
        print_table("close behavior", count(case["behaviorClose"] for case in cases.values()), out)
        for case_id in sorted(cases, key=case_key):
            behavior = cases[case_id]["behavior"]
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
    def report(directory, behaviors):
        os.makedirs(directory)
        cases = {case: {"behavior": behavior, "behaviorClose": "OK", "reportfile": f"{case}.json"}
                 for case, behavior in behaviors.items()}
        with open(os.path.join(directory, "index.json"), "w", encoding="utf-8") as handle:
            json.dump({"happyserver": cases}, handle)

    with tempfile.TemporaryDirectory() as root, open(os.devnull, "w") as quiet:
        clean, failed = os.path.join(root, "clean"), os.path.join(root, "failed")
        report(clean, {"1.1.1": "OK", "2.10": "FAILED", "6.4.1": "NON-STRICT", "7.1.6": "INFORMATIONAL"})
        report(failed, {"1.1.1": "OK", "3.1": "FAILED", "5.1": "UNIMPLEMENTED"})
        allowed = {"2.10": "the case text allows it"}
        checks = [
            (summarise([clean], allowed, quiet), 0, "an allow-listed failure passes"),
            (summarise([clean], {}, quiet), 1, "a failure outside the allow-list fails"),
            (summarise([failed], allowed, quiet), 2, "FAILED and UNIMPLEMENTED both fail"),
            (summarise([clean, failed], allowed, quiet), 2, "failures add up across reports"),
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
    failures = summarise(arguments, load_allowed(allowed_path))
    if failures:
        print(f"autobahn: {failures} case(s) failed")
        return 1
    print("autobahn: every case OK, NON-STRICT, INFORMATIONAL or allow-listed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
