"""The built wheel, installed into a fresh virtual environment outside the repository, compiles a
model, builds firmware from the sources it carries, runs it on qemu-m55 bit-exact with the host and
validates it (and benchmarks it with MCUFLOW_WHEEL_BENCH=1); its records name the commit the wheel
was built from."""

import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import numpy as np
import pytest
import torch

REPO = Path(__file__).resolve().parents[2]


class LinearRelu(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 4)

    def forward(self, x):
        return torch.relu(self.fc(x))


def install_wheel(tmp: Path) -> Path:
    """Builds the wheel (in build/python, which `make python` already populated, so only what
    changed is rebuilt) and installs it with --no-deps into a new venv; torch and numpy come from
    the site-packages this interpreter found them in, named in a .pth file."""
    wheels = tmp / "wheels"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--disable-pip-version-check", "--no-build-isolation",
                    "--no-deps", "-w", str(wheels), str(REPO)], cwd=REPO, check=True, timeout=1200)
    (wheel,) = wheels.glob("mcuflow-*.whl")
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--disable-pip-version-check",
                    "--no-deps", str(wheel)], check=True, timeout=300)
    site = Path(subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    dependencies = {str(Path(m.__file__).resolve().parents[1]) for m in (torch, np)}
    (site / "dependencies.pth").write_text("".join(d + "\n" for d in sorted(dependencies)))
    return venv


def test_the_installed_wheel_builds_and_runs_firmware_outside_the_repository(tmp_path):
    venv = install_wheel(tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    torch.manual_seed(0)
    torch.export.save(torch.export.export(LinearRelu(), (torch.zeros(1, 8),)), work / "model.pt2")
    rng = np.random.default_rng(0)
    np.savez(work / "calib.npz", x=rng.standard_normal((16, 8)).astype(np.float32))
    np.savez(work / "eval.npz", x=rng.standard_normal((6, 8)).astype(np.float32))
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCUFLOW_") and k != "PYTHONPATH"}
    env["MCUFLOW_CACHE_DIR"] = str(tmp_path / "cache")  # a firmware build from the wheel's sources, not a cached one

    def mcuflow(*args):
        r = subprocess.run([venv / "bin" / "mcuflow", *map(str, args)], cwd=work, env=env, capture_output=True,
                           text=True, timeout=600)
        assert r.returncode == 0, f"mcuflow {' '.join(map(str, args))}: {r.stderr}"
        return r.stdout

    where = subprocess.run([venv / "bin" / "python", "-c", "import mcuflow.firmware_sources as f, mcuflow; "
                            "print(mcuflow.__file__); print(f.source_root())"],
                           cwd=work, env=env, capture_output=True, text=True, check=True).stdout.split()
    package = venv.resolve() / "lib"
    assert all(Path(p).resolve().is_relative_to(package) for p in where), where
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True).stdout.strip()
    git = ["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@example.org"]
    subprocess.run(git + ["init", "-q"], check=True)  # the venv inside an unrelated repository: not our commit
    subprocess.run(git + ["commit", "-q", "--allow-empty", "-m", "unrelated"], check=True)
    recorded = subprocess.run([venv / "bin" / "python", "-c", "from mcuflow.version import mcuflow_commit; "
                               "print(mcuflow_commit())"], cwd=work, env=env, capture_output=True, text=True,
                              check=True).stdout.strip()
    assert recorded == head  # written into the package when the wheel was built

    mcuflow("compile", "model.pt2", "--calibration", "calib.npz", "-o", "model.mfp")
    mcuflow("firmware", "model.mfp", "--board", "qemu-m55", "-o", "fw")
    build_info = json.loads((work / "fw" / "build_info.json").read_text())
    assert build_info["git_commit"] == head
    compiled = [(work / "fw" / s["path"]).resolve() for s in build_info["sources"]]  # relative: generated/
    shipped = [p for p in compiled if p.is_relative_to(package)]
    assert any(p.name == "startup.c" for p in shipped) and any(p.parent.name == "mve" for p in shipped), compiled
    assert all(p in shipped or p.is_relative_to(work.resolve()) for p in compiled), compiled
    mcuflow("run", "model.mfp", "--input", "eval.npz", "--board", "qemu-m55", "-o", "board.npz")
    mcuflow("run", "model.mfp", "--input", "eval.npz", "-o", "host.npz")
    board, host = np.load(work / "board.npz"), np.load(work / "host.npz")
    assert sorted(board) == sorted(host) == ["output_0"]
    assert board["output_0"].shape == (6, 4)
    np.testing.assert_array_equal(board["output_0"], host["output_0"])
    if os.environ.get("MCUFLOW_WHEEL_BENCH"):  # one more firmware build (the bench harness): ~25 s
        assert "instructions" in mcuflow("bench", "model.mfp", "--board", "qemu-m55", "--warmup", "0", "--runs", "2")
    report = mcuflow("validate", "--model", "model.pt2", "--program", "model.mfp", "--eval", "eval.npz", "-o", "record")
    assert "0 of 6 inputs differ" in report and "verdict: PASS" in report


def test_the_sdist_configures_a_wheel_build_and_records_no_foreign_commit(tmp_path):
    """The sdist scikit-build-core makes (the PEP 517 hook `python -m build --sdist` and pip call),
    unpacked inside an unrelated repository: CMake configures the wheel build from it (so every
    source file the build lists is in it) and records no commit rather than that repository's.
    Compiling it is what test_the_installed_wheel_... does from the checkout."""
    import mcuflow

    out = tmp_path / "dist"
    subprocess.run([sys.executable, "-c", "import sys, scikit_build_core.build as b; b.build_sdist(sys.argv[1])",
                    str(out)], cwd=REPO, check=True, capture_output=True, timeout=120)
    (sdist,) = out.glob("mcuflow-*.tar.gz")
    root = f"mcuflow-{mcuflow.__version__}"
    with tarfile.open(sdist) as tar:
        names = tar.getnames()
        project = tmp_path / "project"
        tar.extractall(project, filter="data")
    assert all(n == root or n.startswith(root + "/") for n in names)
    for needed in ("pyproject.toml", "CMakeLists.txt", "python/CMakeLists.txt", "python/src/core_module.cpp",
                   "python/mcuflow/cli.py", "firmware/harness/main.cpp"):
        assert f"{root}/{needed}" in names, needed
    for tree in ("runtime/src/", "runtime/include/", "kernels/reference/", "kernels/mve/", "compiler/src/"):
        assert any(n.startswith(f"{root}/{tree}") for n in names), tree
    assert not [n for n in names if n.split("/")[1] in ("build", ".venv", "dist") or n.endswith(".mfp")]
    git = ["git", "-C", str(project), "-c", "user.name=t", "-c", "user.email=t@example.org"]
    subprocess.run(git + ["init", "-q"], check=True)
    subprocess.run(git + ["commit", "-q", "--allow-empty", "-m", "unrelated"], check=True)
    cmake_dir = subprocess.run([sys.executable, "-m", "pybind11", "--cmakedir"], capture_output=True, text=True,
                               check=True).stdout.strip()
    build = tmp_path / "build"
    r = subprocess.run(["cmake", "-S", project / root, "-B", build, "-G", "Ninja", "-DMCUFLOW_TESTS=OFF", "-DSKBUILD=ON",
                        "-DSKBUILD_STATE=wheel", f"-Dpybind11_DIR={cmake_dir}", f"-DPython_EXECUTABLE={sys.executable}"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "the wheel records no commit" in r.stdout and not (build / "python" / "build_commit.txt").exists()
