"""The code speaks for itself: no comment or string in a source file points at an issue number
(which means nothing to a reader of the tree), and every path it names from the repository's top
folders (``compiler/...``, ``docs/...``) exists, from the top or from the file's own folder."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TOP_FOLDERS = ("bench", "compiler", "docs", "examples", "firmware", "kernels", "python", "runtime", "tests")
CODE_SUFFIXES = {".c", ".cpp", ".h", ".S", ".py", ".cmake"}
CODE_NAMES = {"CMakeLists.txt", "Makefile"}

ISSUE_NUMBER = re.compile(r"\bissues? #?\d+", re.IGNORECASE)
# A path from a top folder to a source or doc file; not a pattern (<tier>, {a,b}, *), nor an output
# a tool writes (firmware/firmware.elf in a report's folder).
REPO_PATH = re.compile(r"(?<![\w/.<>{}*-])((?:" + "|".join(TOP_FOLDERS) + r")/[\w./-]*\w\.(?:c|cpp|h|S|py|cmake|md|ld))\b")


def code_files() -> list[Path]:
    found = [p for p in ROOT.iterdir() if p.name in CODE_NAMES]
    for folder in TOP_FOLDERS:
        found += [p for p in (ROOT / folder).rglob("*") if p.is_file() and
                  (p.suffix in CODE_SUFFIXES or p.name in CODE_NAMES) and "__pycache__" not in p.parts]
    return sorted(found)


def test_no_code_names_an_issue_number():
    hits = [f"{p.relative_to(ROOT)}:{n}: {m[0]}" for p in code_files()
            for n, line in enumerate(p.read_text(errors="replace").splitlines(), 1)
            for m in ISSUE_NUMBER.finditer(line)]
    assert not hits, "issue numbers in code (say what the code does instead):\n" + "\n".join(hits)


def test_every_path_the_code_names_exists():
    missing = [f"{p.relative_to(ROOT)}:{n}: {m[1]}" for p in code_files()
               for n, line in enumerate(p.read_text(errors="replace").splitlines(), 1)
               for m in REPO_PATH.finditer(line)
               if not (ROOT / m[1]).exists() and not (p.parent / m[1]).exists()]
    assert not missing, "paths to nothing:\n" + "\n".join(missing)


def test_the_checks_see_an_issue_number_and_a_missing_path():
    gone = "compiler/src/passes/" + "gone.cpp"  # spelled apart, so the test's own text passes
    assert ISSUE_NUMBER.search("// the fast path (issue " + "17)")
    assert not ISSUE_NUMBER.search("// the issues a reader files")
    assert REPO_PATH.findall(f"see {gone} and kernels/<tier>/x.cpp, firmware/firmware.elf") == [gone]
