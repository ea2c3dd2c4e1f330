"""The mcuflow version and the commit it was built from (recorded in measurement and validation records)."""

from __future__ import annotations

import subprocess
from pathlib import Path

__version__ = "0.1.0"

# A wheel build writes the commit it was built from into the package (python/CMakeLists.txt): an
# installed mcuflow has no checkout of its own, and may sit inside someone else's git repository.
BUILD_COMMIT_FILE = "build_commit.txt"
_PACKAGE = Path(__file__).resolve().parent
_CHECKOUT = _PACKAGE.parents[1]  # python/mcuflow/ of a repository or an editable install


def git_head(path: Path) -> str | None:
    """HEAD of the git checkout holding ``path`` (None: not in one, or no git)."""
    try:
        p = subprocess.run(["git", "rev-parse", "HEAD"], cwd=path, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return p.stdout.strip() or None if p.returncode == 0 else None


def mcuflow_commit(package: Path = _PACKAGE) -> str | None:
    """The commit of this mcuflow: the one recorded in the package at wheel build time, else HEAD
    of the repository the package lies in; None for an install that recorded none (an sdist
    built without git), never the HEAD of a repository the install happens to sit in."""
    recorded = package / BUILD_COMMIT_FILE
    if recorded.is_file():
        return recorded.read_text().strip() or None
    checkout = package.parents[1]
    if checkout / "python" / "mcuflow" == package and (checkout / ".git").exists():
        return git_head(checkout)
    return None


def sources_commit(root: Path) -> str | None:
    """The commit of the runtime, kernel and firmware sources at ``root`` (firmware_sources.
    source_root): mcuflow's own for the copy a wheel carries or the repository; a tree named by
    MCUFLOW_SOURCE_DIR, its checkout's HEAD."""
    if Path(root).resolve() in (_PACKAGE / "sources", _CHECKOUT):
        return mcuflow_commit()
    return git_head(Path(root))
