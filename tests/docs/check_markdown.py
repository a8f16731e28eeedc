#!/usr/bin/env python3
"""Fails on a markdown file of the repository with a line over 120 columns or a relative link to
nothing.

Checks every *.md file git knows (tracked, or new and not ignored; every *.md under the root where
git is not there):
  - lines of at most 120 characters, as .clang-format holds the code. Exempt: a table row (markdown
    cannot break one across lines) and a line whose part past column 120 has no space in it (a URL or
    a path that cannot be broken); code blocks are held to the limit like prose. Not held to it: the
    run folders under results/ (results/*/...), records that scripts wrote as their runs went
    (tables of measurements, captured output); results/README.md is.
  - relative links, [text](path) and ![alt](path) inline or as [id]: path definitions, name a file or
    folder of the repository (a #fragment is not checked); links inside code are not links. Checked in
    every file, results/ included.
Prints each problem as FILE:LINE: what; run by ctest (docs.markdown).

usage: check_markdown.py REPO_ROOT | --self-test
"""
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import urllib.parse

MAX_COLUMNS = 120
FENCE = re.compile(r"^\s{0,3}(```+|~~~+)")
CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.DOTALL)
INLINE_LINK = re.compile(r"\]\(\s*(<[^>\n]*>|[^)\s]+)(?:\s+(?:\"[^\"]*\"|'[^']*'))?\s*\)")
REFERENCE = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*(<[^>\n]*>|\S+)", re.MULTILINE)
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def repository_files(root):
    """Every file git tracks or would track (new, not ignored); every file where git is not there."""
    try:
        out = subprocess.run(["git", "-C", str(root), "ls-files", "-z", "--cached", "--others",
                              "--exclude-standard"], check=True, capture_output=True).stdout
        names = [name for name in out.decode().split("\0") if name]
        return [name for name in names if (root / name).exists()]
    except (OSError, subprocess.CalledProcessError):
        names = []
        for folder, subfolders, files in os.walk(root):
            subfolders[:] = [s for s in subfolders if not s.startswith((".", "build"))]
            rel = pathlib.Path(folder).relative_to(root)
            names += [(rel / f).as_posix() for f in files]
        return names


def blank_code(text):
    """The text with fenced code blocks and code spans replaced by spaces (newlines kept)."""
    lines = text.split("\n")
    fence = None
    for i, line in enumerate(lines):
        match = FENCE.match(line)
        if fence is None and match:
            fence = match.group(1)[0] * len(match.group(1))
            lines[i] = ""
        elif fence is not None:
            if match and match.group(1).startswith(fence):
                fence = None
            lines[i] = ""
    text = "\n".join(lines)
    return CODE_SPAN.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def long_lines(path, text):
    problems = []
    for number, line in enumerate(text.split("\n"), start=1):
        if len(line) <= MAX_COLUMNS or line.lstrip().startswith("|"):
            continue
        if not re.search(r"\s", line[MAX_COLUMNS:]):
            continue
        problems.append(f"{path}:{number}: {len(line)} columns (at most {MAX_COLUMNS})")
    return problems


def link_targets(text):
    """(line, target) of every link in the text, code left out."""
    prose = blank_code(text)
    found = [(m.start(1), m.group(1)) for m in INLINE_LINK.finditer(prose)]
    found += [(m.start(1), m.group(1)) for m in REFERENCE.finditer(prose)]
    return sorted((prose.count("\n", 0, at) + 1, target.strip("<>")) for at, target in found)


def broken_links(path, text, known):
    problems = []
    for number, target in link_targets(text):
        if SCHEME.match(target) or target.startswith("#"):
            continue
        target_path = urllib.parse.unquote(target.split("#", 1)[0].split("?", 1)[0])
        if target_path.startswith("/"):
            resolved = os.path.normpath(target_path.lstrip("/"))
        else:
            resolved = os.path.normpath(os.path.join(os.path.dirname(path), target_path))
        if resolved not in known:
            problems.append(f"{path}:{number}: link to {target}: no such file or folder in the repository")
    return problems


def check(root):
    files = repository_files(root)
    known = set(files)
    for name in files:
        parent = os.path.dirname(name)
        while parent and parent not in known:
            known.add(parent)
            parent = os.path.dirname(parent)
    known.add(".")
    problems = []
    for name in sorted(f for f in files if f.endswith(".md")):
        text = (root / name).read_text(encoding="utf-8")
        if not (name.startswith("results/") and name.count("/") > 1):
            problems += long_lines(name, text)
        problems += broken_links(name, text, known)
    return problems


def self_test():
    """The check must pass a tree that keeps the rules and name each way of breaking them."""
    with tempfile.TemporaryDirectory() as scratch:
        root = pathlib.Path(scratch)
        (root / "docs").mkdir()
        (root / "results/run-1").mkdir(parents=True)
        (root / "docs/b.md").write_text("b\n")
        (root / "results/run-1/out.md").write_text("x " * 100 + "[up](../../docs/b.md)\n")
        good = ("# a\n\n[b](docs/b.md), [b's part](docs/b.md#part), ![folder](docs/), [web](https://x.org/a)\n"
                "[ref]: docs/b.md\n\n| " + "cell " * 40 + "|\n" + "see https://x.org/" + "p" * 130 + "\n"
                "```\n[not a link](nowhere.md)\n```\n`[no](nowhere.md)` [a\nlink over two lines](docs/b.md)\n")
        (root / "a.md").write_text(good)
        if check(root) != []:
            return f"a tree that keeps the rules was refused: {check(root)}"
        (root / "a.md").write_text(good + "word " * 30 + "\n[gone](docs/c.md) [up](../a.md)\n"
                                   "[ref2]: <missing.md>\n```\n" + "code " * 30 + "\n```\n")
        want = ["a.md:13: 150 columns (at most 120)",
                "a.md:14: link to docs/c.md: no such file or folder in the repository",
                "a.md:14: link to ../a.md: no such file or folder in the repository",
                "a.md:15: link to missing.md: no such file or folder in the repository",
                "a.md:17: 150 columns (at most 120)"]
        if sorted(check(root)) != sorted(want):
            return f"expected {want}, found {check(root)}"
        (root / "a.md").write_text(good)
        (root / "results/run-1/out.md").write_text("[gone](../../docs/c.md)\n")
        if check(root) != ["results/run-1/out.md:1: link to ../../docs/c.md: no such file or folder in the "
                           "repository"]:
            return f"a broken link in a run folder was not found: {check(root)}"
    return None


def main(argv):
    if argv[1:] == ["--self-test"]:
        failure = self_test()
        print(f"check_markdown self-test: {failure or 'passed'}")
        return 1 if failure else 0
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    problems = check(pathlib.Path(argv[1]).resolve())
    for problem in problems:
        print(problem)
    if problems:
        print(f"check_markdown: {len(problems)} problem(s) in the repository's markdown files")
        return 1
    print("check_markdown: every markdown line fits in 120 columns and every relative link resolves")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
