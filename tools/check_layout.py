#!/usr/bin/env python3
"""check_layout — the layout rules of compiler/ (issue 19), run by ctest as `check_layout`.

1. No source file under compiler/ is over MAX_LINES lines, except the files in ALLOWLIST (each
   with the reason it may be, for now).  A long file is split along its seams: one file per
   family of functions, a private header (`*_impl.h`) for what the pieces share.
2. Layering: driver/ is the top floor of the compiler.  No file under compiler/ outside
   compiler/driver/ includes "driver/..." (what the stages share lives in compiler/support/).
   tools/ and test/ stand above the driver and may include it.

Prints one `path:line: error: ...` per violation and exits 1 if there is any, else 0.
Usage: check_layout.py [--root REPO]   (default: the repository holding this script)
"""
import argparse
import os
import re
import sys

MAX_LINES = 800
ALLOWLIST = {}  # path -> reason; empty since codegen/expr_emitter.h was split (issue 19)
SOURCE_EXTENSIONS = (".cpp", ".cc", ".c", ".h", ".hpp", ".def", ".inc")
DRIVER_INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]driver/')


def source_files(root):
    """Paths (relative to root, with '/') of the source files under compiler/, sorted."""
    out = []
    for dirpath, dirnames, filenames in os.walk(os.path.join(root, "compiler")):
        dirnames.sort()
        for name in sorted(filenames):
            if name.endswith(SOURCE_EXTENSIONS):
                full = os.path.join(dirpath, name)
                out.append(os.path.relpath(full, root).replace(os.sep, "/"))
    return out


def check(root):
    errors, notes = [], []
    for rel in source_files(root):
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
        if len(lines) > MAX_LINES:
            if rel not in ALLOWLIST:
                errors.append(f"{rel}:{MAX_LINES + 1}: error: {len(lines)} lines, over the limit "
                              f"of {MAX_LINES}; split it along its seams (one file per family of "
                              f"functions), or add it to ALLOWLIST in tools/check_layout.py with "
                              f"a reason")
        elif rel in ALLOWLIST:
            notes.append(f"{rel}:1: note: {len(lines)} lines, within the limit: its ALLOWLIST "
                         f"entry ({ALLOWLIST[rel]}) can go")
        if not rel.startswith("compiler/driver/"):
            for n, line in enumerate(lines, 1):
                if DRIVER_INCLUDE.match(line):
                    errors.append(f"{rel}:{n}: error: includes {line.split('include', 1)[1].strip()}"
                                  f": only compiler/driver/ may include driver/ headers (move "
                                  f"what lower layers share to compiler/support/)")
    for rel in ALLOWLIST:
        if not os.path.exists(os.path.join(root, rel)):
            notes.append(f"{rel}: note: in ALLOWLIST but absent: its entry can go")
    return errors, notes


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                    help="the repository root (holding compiler/)")
    args = ap.parse_args()
    if not os.path.isdir(os.path.join(args.root, "compiler")):
        print(f"check_layout: no compiler/ under {args.root}", file=sys.stderr)
        return 2
    errors, notes = check(args.root)
    for m in notes + errors:
        print(m)
    print(f"check_layout: {len(source_files(args.root))} files under compiler/, "
          f"{len(errors)} violation{'s' if len(errors) != 1 else ''}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
