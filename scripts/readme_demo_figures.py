"""README's demo figures from a demo run, not typed in.

``python scripts/readme_demo_figures.py DEMO_DIR`` rewrites the demo block of README.md (the closing lines of
``callbluff demo``: one report and one headline per suite) from the finished demo run in DEMO_DIR (``callbluff demo
--out DEMO_DIR``, the whole demo); ``--check`` only compares, and exits 1 naming the lines that differ.
"""

from __future__ import annotations

import argparse
import difflib
import sys
from pathlib import Path

from callbluff.demo import readme_with_figures

README = Path(__file__).resolve().parents[1] / "README.md"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("demo_dir", help="a finished `callbluff demo --out DIR` directory")
    ap.add_argument("--readme", default=str(README), help="the README to update (default: the repository's)")
    ap.add_argument("--check", action="store_true", help="compare only; exit 1 when README's figures differ")
    args = ap.parse_args(argv)
    path = Path(args.readme)
    before = path.read_text(encoding="utf-8")
    after = readme_with_figures(before, args.demo_dir)
    if before == after:
        print(f"{path}: the demo block matches {args.demo_dir}")
        return 0
    if args.check:
        sys.stdout.writelines(difflib.unified_diff(before.splitlines(True), after.splitlines(True), str(path),
                                                   f"{path} (from {args.demo_dir})"))
        return 1
    path.write_text(after, encoding="utf-8")
    print(f"{path}: demo block rewritten from {args.demo_dir}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
