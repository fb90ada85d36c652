"""The slowest tests of one or more JUnit XML files, with the total: what `make test` prints after its two phases.

python -m scripts.slowest out/junit-test-pages.xml out/junit-test-model.xml --top 30
"""

from __future__ import annotations

import argparse
import xml.etree.ElementTree as ET


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+")
    parser.add_argument("--top", type=int, default=30)
    args = parser.parse_args()
    cases, wall = [], 0.0
    for path in args.files:
        root = ET.parse(path).getroot()
        for suite in root.iter("testsuite"):
            wall += float(suite.get("time", 0))
        for case in root.iter("testcase"):
            failed = any(child.tag in ("failure", "error") for child in case)
            cases.append((float(case.get("time", 0)), f"{case.get('classname')}::{case.get('name')}", failed))
    cases.sort(reverse=True)
    print(
        f"{len(cases)} tests, {sum(c[0] for c in cases):.0f} s in tests, {wall:.0f} s of wall time by the suites' "
        f"own clocks; the {args.top} slowest:"
    )
    for seconds, name, failed in cases[: args.top]:
        print(f"{seconds:8.1f} s  {name}{'  FAILED' if failed else ''}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
