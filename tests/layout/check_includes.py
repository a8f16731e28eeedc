#!/usr/bin/env python3
"""Fails when a folder of src/ (or kernels/) includes a folder it must not.

Dependencies run one way (src/README.md, "Layout"): a folder includes only itself and the folders below it
in FLOORS. Folders on one floor are siblings and include neither each other. Run by ctest
(layout.includes); prints every offending line as FILE:LINE: FROM -> TO.

usage: check_includes.py REPO_ROOT | --self-test
"""
import pathlib
import re
import sys
import tempfile

# Top floor first. A folder may include the folders of every floor below its own.
FLOORS = [
    ["cli"],
    ["report"],
    ["bench"],
    ["runtime", "predict"],
    ["kernels"],
    ["parallel"],
    ["workload"],
    ["program", "hw"],
    ["core"],
]
FLOOR_OF = {folder: level for level, floor in enumerate(FLOORS) for folder in floor}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/')
SOURCES = {".cpp", ".hpp", ".cu", ".cuh", ".in"}


def source_files(root):
    for top in ("src", "kernels"):
        for path in sorted((root / top).rglob("*")):
            if path.is_file() and path.suffix in SOURCES:
                yield path


def folder_of(root, path):
    parts = path.relative_to(root).parts
    return parts[1] if parts[0] == "src" else parts[0]


def self_test():
    """The check must fail on a tree that breaks the rule, and pass on one that keeps it."""
    with tempfile.TemporaryDirectory() as scratch:
        root = pathlib.Path(scratch)
        (root / "src/core").mkdir(parents=True)
        (root / "src/hw").mkdir()
        (root / "kernels").mkdir()
        (root / "src/hw/a.hpp").write_text('#include "core/b.hpp"\n#include "hw/c.hpp"\n')
        if check(root) != []:
            return "a tree whose includes run downwards was refused"
        (root / "src/core/b.hpp").write_text('#pragma once\n  #  include "hw/a.hpp"\n')
        if check(root) != ["src/core/b.hpp:2: core -> hw"]:
            return f"core -> hw was not found: {check(root)}"
        (root / "src/hw/a.hpp").write_text('#include "program/op.hpp"\n')  # siblings
        if "src/hw/a.hpp:1: hw -> program" not in check(root):
            return "hw -> program (one floor) was not found"
    return None


def check(root):
    problems = []
    unknown = set()
    for path in source_files(root):
        source = folder_of(root, path)
        if source not in FLOOR_OF:
            if path.parent != root / "src":  # files directly in src/ (none today) belong to no folder
                unknown.add(source)
            continue
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            match = INCLUDE.match(line)
            if not match:
                continue
            target = match.group(1)
            if target == source:
                continue
            if target not in FLOOR_OF:
                unknown.add(target)
            elif FLOOR_OF[target] <= FLOOR_OF[source]:
                problems.append(f"{path.relative_to(root)}:{number}: {source} -> {target}")
    for folder in sorted(unknown):
        problems.append(f"folder {folder}/ has no floor in tests/layout/check_includes.py: add it to FLOORS")
    return problems


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    if argv[1] == "--self-test":
        failure = self_test()
        print(failure or "the include check finds what breaks the rule")
        return 1 if failure else 0
    problems = check(pathlib.Path(argv[1]).resolve())
    if problems:
        print("includes against the direction of dependencies (a folder includes only those below it):")
        print("\n".join(problems))
        return 1
    print(f"includes run one way over {len(FLOOR_OF)} folders")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
