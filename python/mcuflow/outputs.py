"""Writing what a command outputs: whole or not at all, with the user's umask, never over its inputs.

A file or directory appears under its final name in one rename, after its bytes reached the disk
(fsync), so a kill at any instruction leaves the old contents or the new ones at the target, never
a half-written file and never nothing where a complete output was. tempfile creates its files
0600 and its directories 0700; they get the mode open() and mkdir() would have given (0666 and
0777 less the umask) before they appear.

A writer killed with SIGKILL leaves its temporary behind (``.NAME.XXXXXXXX.tmp``, a staging
directory ``.NAME.partial-XXXXXXXX`` or ``NAME.partial-XXXXXXXX``). Every writer holds an
exclusive flock(2) on its temporary until it is renamed into place, and the kernel drops the lock
when the process dies: the next write to the same target removes the temporaries of that target
that no process holds and that are older than STALE_SECONDS (the age covers the instant between
creating a temporary and locking it). Nothing else is touched: only names tempfile could have
made for this target.
"""

from __future__ import annotations

import ctypes
import fcntl
import os
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import BinaryIO, Callable, Mapping

from .errors import InputError

_RENAME_EXCHANGE = 2  # renameat2(2) flag: swap two existing paths in one step (Linux 3.15+)
_AT_FDCWD = -100
STALE_SECONDS = 10.0
_RANDOM = "[a-z0-9_]{8}"  # tempfile's names: 8 of these characters
_HELD: dict[Path, int] = {}  # staging directory -> the descriptor holding its lock


def current_umask() -> int:
    """The process umask, read without changing it where the system allows."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except OSError:
        pass
    mask = os.umask(0o022)  # no /proc: the only portable read sets it, so put it straight back
    os.umask(mask)
    return mask


def file_mode() -> int:
    return 0o666 & ~current_umask()


def dir_mode() -> int:
    return 0o777 & ~current_umask()


def _fsync_path(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _temporary_names(target: Path) -> re.Pattern:
    """The names write_file, staging_dir and commit_dir give the temporaries of ``target``."""
    name = re.escape(target.name)
    return re.compile(rf"\.{name}\.{_RANDOM}\.tmp|\.?{name}\.partial-{_RANDOM}|\.{name}\.old-{_RANDOM}")


def _lock(fd: int, wait: bool = True) -> bool:
    """An exclusive flock on ``fd``; False when another process holds one (``wait`` False)."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
    except BlockingIOError:
        return False
    return True


def remove_stale(target: str | os.PathLike) -> list[Path]:
    """Removes what killed writers of ``target`` left beside it (see the module docstring) and
    returns the paths removed; one it cannot remove is left."""
    target = Path(target)
    pattern, now, removed = _temporary_names(target), time.time(), []
    try:
        entries = list(os.scandir(target.parent))
    except OSError:
        return removed
    for entry in entries:
        if not pattern.fullmatch(entry.name) or entry.is_symlink():
            continue
        try:
            if now - entry.stat().st_mtime < STALE_SECONDS:
                continue
            fd = os.open(entry.path, os.O_RDONLY | (os.O_DIRECTORY if entry.is_dir() else 0))
        except OSError:
            continue
        try:
            if _lock(fd, wait=False):
                shutil.rmtree(entry.path) if entry.is_dir() else os.unlink(entry.path)
                removed.append(Path(entry.path))
        except OSError:
            pass
        finally:
            os.close(fd)
    return removed


def write_file(path: str | os.PathLike, content: bytes | str | Callable[[BinaryIO], None]) -> None:
    """Writes ``content`` (bytes, text as UTF-8, or a function writing into a binary file object)
    to ``path``: a temporary file beside it, locked, fsynced, given the user's mode, then one
    os.replace while still locked. Every file mcuflow writes for the user goes through here or
    through commit_dir."""
    path = Path(path)
    remove_stale(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            _lock(f.fileno())
            if callable(content):
                content(f)
            else:
                f.write(content.encode() if isinstance(content, str) else content)
            f.flush()
            os.fsync(f.fileno())
            os.fchmod(f.fileno(), file_mode())
            os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    _fsync_path(path.parent)


def staging_dir(target: str | os.PathLike, prefix: str | None = None) -> Path:
    """A new directory beside ``target`` (same file system, so commit_dir can rename it), with the
    user's mode. ``prefix`` defaults to ``.<name>.partial-``."""
    target = Path(target)
    remove_stale(target)
    staging = Path(tempfile.mkdtemp(dir=target.parent, prefix=prefix or f".{target.name}.partial-"))
    _HELD[staging] = os.open(staging, os.O_RDONLY | os.O_DIRECTORY)
    _lock(_HELD[staging])
    os.chmod(staging, dir_mode())
    return staging


def release_dir(staging: str | os.PathLike) -> None:
    """Drops the lock staging_dir took on ``staging`` (commit_dir and discard_dir call it): from
    then on it is stale if it is still there."""
    fd = _HELD.pop(Path(staging), None)
    if fd is not None:
        os.close(fd)


def discard_dir(staging: str | os.PathLike) -> None:
    """Removes a staging directory that will not be committed."""
    shutil.rmtree(staging, ignore_errors=True)
    release_dir(staging)


def _sync_tree(root: Path) -> None:
    for dirpath, _, filenames in os.walk(root):
        for name in filenames:
            _fsync_path(Path(dirpath) / name)
        _fsync_path(Path(dirpath))


def _exchange(a: Path, b: Path) -> bool:
    """Swaps two existing paths atomically; False where the system cannot."""
    if not sys.platform.startswith("linux"):
        return False
    libc = ctypes.CDLL(None, use_errno=True)
    if not hasattr(libc, "renameat2"):
        return False
    if libc.renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    errno = ctypes.get_errno()
    if errno in (22, 38, 95):  # EINVAL, ENOSYS, EOPNOTSUPP: this file system cannot exchange
        return False
    raise OSError(errno, os.strerror(errno), str(b))


def commit_dir(staging: str | os.PathLike, target: str | os.PathLike) -> None:
    """Makes the complete directory ``staging`` appear as ``target`` in one step, after syncing
    its files: rename(2) onto a missing or empty target; an existing one is exchanged with it
    (renameat2 RENAME_EXCHANGE) and its old contents, now at the staging name, removed. A kill at
    any point leaves the old or the new directory at ``target`` (old contents possibly left under
    the staging name). Without the exchange (not Linux) the old directory is renamed aside first:
    a kill between the two renames leaves it there, not at ``target``."""
    staging, target = Path(staging), Path(target)
    try:
        _commit_dir(staging, target)
    finally:
        release_dir(staging)


def _commit_dir(staging: Path, target: Path) -> None:
    _sync_tree(staging)
    try:
        os.rename(staging, target)  # atomic onto a missing target or an empty directory
    except OSError:
        if not target.is_dir():
            raise
        if not _exchange(staging, target):
            aside = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.old-"))
            os.rename(target, aside / target.name)
            os.rename(staging, target)
            staging = aside
        _fsync_path(target.parent)
        shutil.rmtree(staging, ignore_errors=True)
        return
    _fsync_path(target.parent)


def check_output_parent(path: str | os.PathLike, flag: str = "-o") -> None:
    """The directory an output goes into exists (checked before any expensive step)."""
    parent = Path(path).absolute().parent
    if not parent.is_dir():
        what = "is not a directory" if parent.exists() else "does not exist"
        raise InputError(f"{flag} {path}: the directory {parent} {what}")


def refuse_overwriting_inputs(output: str | os.PathLike, inputs: Mapping[str, str | os.PathLike | None],
                              flag: str = "-o") -> None:
    """Refuses an output that is one of the command's inputs (the same file, by any path) or a
    directory holding one: writing it would destroy what the user gave. ``inputs`` maps a
    description ("the model") to its path (None: not given)."""
    out = Path(output)
    if not out.exists():
        return
    for what, path in inputs.items():
        if path is None or not Path(path).exists():
            continue
        if os.path.samefile(out, path):
            raise InputError(f"{flag} {output} is {what} given to this command: choose another output")
        if out.is_dir() and Path(path).resolve().is_relative_to(out.resolve()):
            raise InputError(f"{flag} {output} holds {what} given to this command ({path}): choose another output")
