"""Which mcuflow commit a record names (version.mcuflow_commit): the one a wheel recorded at build
time, else the HEAD of the repository the package lies in, never the HEAD of a repository an
installed package merely sits inside."""

import subprocess
from pathlib import Path

from mcuflow import version


def git_repository(path: Path) -> str:
    """A new repository at ``path`` with one empty commit; its hash."""
    path.mkdir(parents=True, exist_ok=True)
    git = ["git", "-C", str(path), "-c", "user.name=t", "-c", "user.email=t@example.org"]
    subprocess.run(git + ["init", "-q"], check=True)
    subprocess.run(git + ["commit", "-q", "--allow-empty", "-m", "unrelated"], check=True)
    return subprocess.run(git + ["rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()


def test_an_installed_package_names_the_commit_its_wheel_recorded(tmp_path):
    git_repository(tmp_path)  # the user's own project, holding the venv
    package = tmp_path / "venv" / "lib" / "python3" / "site-packages" / "mcuflow"
    package.mkdir(parents=True)
    assert version.mcuflow_commit(package) is None  # no record: unknown, not the user's HEAD
    (package / version.BUILD_COMMIT_FILE).write_text("0123456789abcdef0123456789abcdef01234567\n")
    assert version.mcuflow_commit(package) == "0123456789abcdef0123456789abcdef01234567"


def test_a_checkout_names_its_head(tmp_path):
    head = git_repository(tmp_path / "repo")
    package = tmp_path / "repo" / "python" / "mcuflow"
    package.mkdir(parents=True)
    assert version.mcuflow_commit(package) == head


def test_sources_elsewhere_name_their_own_head(tmp_path):
    head = git_repository(tmp_path / "tree")
    assert version.sources_commit(tmp_path / "tree") == head
    assert version.sources_commit(Path(version.__file__).resolve().parents[2]) == version.mcuflow_commit()
