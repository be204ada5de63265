"""Shared fixtures: models, a PyBullet DIRECT client, paths to reference data."""

from __future__ import annotations

import logging
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import psutil
import pybullet as pb
import pybullet_data
import pytest

from app import RobotModel

# A shell without job control starts background commands with SIGINT ignored, and the command lines under
# test would inherit that (their SIGINT tests would then see no interrupt): catch it again here, so that the
# subprocesses start with the default disposition (a caught signal is reset on exec).
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

ROOT = Path(__file__).resolve().parents[1]
WIDOWX_URDF = ROOT / "assets" / "urdf" / "widowx_ai.urdf"
REFERENCE = ROOT.parent / "shared" / "reference"
OFFICIAL_URDF = REFERENCE / "trossen_arm_description" / "urdf" / "wxai_base.urdf"
PANDA_URDF = Path(pybullet_data.getDataPath()) / "franka_panda" / "panda.urdf"
KUKA_URDF = Path(pybullet_data.getDataPath()) / "kuka_iiwa" / "model.urdf"


def _save_bytecode() -> None:
    """The app's compiled bytecode saved (the .pyc a plain ``python`` saves on its first import), for the suite's
    many subprocesses: with PYTHONDONTWRITEBYTECODE set (as on this project's machines) none saves it, and each process
    compiled every module again, ~0.3 s of CPU (the suite: 219 -> 205 s on 2 cores). Up-to-date files are kept."""
    import compileall

    for folder in ("app", "scripts", "tests"):
        compileall.compile_dir(ROOT / folder, quiet=1)


def pytest_configure(config) -> None:
    """The first suite on this source version (a fresh checkout, also after the README's first command compiled the
    main job's kernels): compile the kernels in two processes side by side before any test starts
    (tests/warm_kernels.py), instead of in every pytest-xdist worker and early command line at once. A marker in the
    version's cache folder (app/kernels/cache.py) says it was done."""
    import numba

    import app  # noqa: F401  (points numba at this source version's cache folder)
    from tests.warm_kernels import GROUPS

    if not os.environ.get("PYTEST_XDIST_WORKER"):
        _save_bytecode()

    marker = Path(numba.config.CACHE_DIR) / "tests-warmed" if numba.config.CACHE_DIR else None
    if os.environ.get("PYTEST_XDIST_WORKER") or marker is None or marker.exists() or \
            os.environ.get("APP_TESTS_WARM_KERNELS") == "0":  # 0: let the tests compile (to compare)
        return
    sys.stderr.write(f"compiling the numba kernels first ({', '.join(GROUPS)}, side by side)\n")
    with tempfile.TemporaryDirectory() as out:
        procs = [subprocess.Popen([sys.executable, "-m", "tests.warm_kernels", group, out], cwd=ROOT,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True) for group in GROUPS]
        try:
            for group, proc in zip(GROUPS, procs):
                err = proc.communicate(timeout=1800)[1]
                if proc.returncode:  # the tests compile what is missing themselves (and show the error)
                    sys.stderr.write(f"warming the kernels ({group}) failed: {err[-1000:]}\n")
            if all(proc.returncode == 0 for proc in procs):
                marker.touch()
        finally:
            for proc in procs:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()


class Watched:
    """A command line under test, started with its stderr piped, and every process it started (descendants of
    its pid, seen while it ran): process checks look at these only, never at the rest of the machine."""

    def __init__(self, args: list[str], **popen):
        self.proc = subprocess.Popen(args, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, **popen)
        self.seen: dict[int, psutil.Process] = {}
        self.lines: list[str] = []

    def descendants(self) -> list[psutil.Process]:
        """Its descendants now (remembered: they are checked after it ended, when they are no one's children)."""
        try:
            found = psutil.Process(self.proc.pid).children(recursive=True)
        except psutil.Error:
            found = []
        self.seen.update({p.pid: p for p in found})
        return found

    def wait_for(self, ready, timeout_s: float = 120.0) -> None:
        """Until ``ready(descendants)`` holds, watching every 20 ms; fails if the command ends or time runs out."""
        deadline = time.monotonic() + timeout_s
        while not ready(self.descendants()):
            assert self.proc.poll() is None, f"ended early: {self.proc.communicate()[1][-2000:]}"
            if time.monotonic() >= deadline:
                self.kill()
                raise AssertionError(f"not ready within {timeout_s} s")
            time.sleep(0.02)

    def wait_for_line(self, prefix: str) -> None:
        """Until the command writes a stderr line starting with ``prefix`` (fails if it ends first)."""
        for line in self.proc.stderr:
            self.lines.append(line)
            if line.startswith(prefix):
                return
        raise AssertionError(f"no line {prefix!r}: {''.join(self.lines)[-2000:]}")

    def finish(self, timeout_s: float = 120.0) -> str:
        """Its stderr after it ended, having watched its descendants until then."""
        deadline = time.monotonic() + timeout_s
        while self.proc.poll() is None and time.monotonic() < deadline:
            self.descendants()
            time.sleep(0.02)
        try:
            _, err = self.proc.communicate(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            left = self.left_running(0)
            self.kill()
            raise AssertionError(f"not ended within {timeout_s} s (or a process it started kept its stderr open: "
                                 f"{left})") from None
        return "".join(self.lines) + err

    def kill(self) -> None:
        """SIGKILL to it and every process it started that still runs: a failed test leaves nothing running."""
        self.descendants()
        for process in [psutil.Process(self.proc.pid), *self.seen.values()] if self.proc.poll() is None else \
                self.seen.values():
            try:
                process.kill()
            except psutil.Error:
                pass
        self.proc.wait(timeout=10)

    def left_running(self, timeout_s: float = 60.0) -> list[str]:
        """Command lines of the processes it started that still run after ``timeout_s`` [s]."""
        deadline = time.monotonic() + timeout_s
        while (alive := [p for p in self.seen.values() if _running(p)]) and time.monotonic() < deadline:
            time.sleep(0.1)
        return [" ".join(_cmdline(p))[:120] for p in alive]


def _running(process: psutil.Process) -> bool:
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def _cmdline(process: psutil.Process) -> list[str]:
    try:
        return process.cmdline()
    except psutil.Error:
        return ["(gone)"]


def runs(process: psutil.Process, needle: str) -> bool:
    """Whether ``process``'s command line contains ``needle``."""
    return any(needle in arg for arg in _cmdline(process))


@pytest.fixture
def shared_ray():
    """A local Ray (2 CPUs) in this test process, started by the first test that asks for it and left up for the
    next ones: the app joins a Ray it finds running and leaves it up (tests/test_scale.py's
    test_a_ray_the_caller_started_stays_up checks that), so these tests skip Ray's start (~5-8 s on 2 cores).
    pytest_runtest_teardown stops it after the last test that uses it, Ray's own exit handler otherwise. Tests of
    Ray's own start and end run their commands in subprocesses (shutting this one down would cost the next test a
    start)."""
    ray = pytest.importorskip("ray")
    if not ray.is_initialized():  # its workers import this checkout, also for the commands that join it
        with pytest.MonkeyPatch.context() as env:
            env.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
            # its session folder (logs, sockets) in a folder of the test run's, not /tmp/ray: removed at shutdown
            _RAY_TEMP.append(tempfile.mkdtemp(prefix="app-test-ray-", dir="/tmp" if os.name == "posix" else None))
            ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level=logging.WARNING,
                     _temp_dir=_RAY_TEMP[-1])
    return ray


_RAY_TEMP: list[str] = []  # the shared Ray's session folders, removed when it is shut down


def require_reference() -> Path:
    """Skip the calling test when ../shared/reference is absent."""
    if not OFFICIAL_URDF.is_file():
        pytest.skip(f"reference data absent: {OFFICIAL_URDF} (needs ../shared beside the checkout)")
    return REFERENCE


@pytest.fixture(scope="session")
def widowx() -> RobotModel:
    return RobotModel.from_urdf(str(WIDOWX_URDF))


@pytest.fixture(scope="session")
def panda() -> RobotModel:
    return RobotModel.from_urdf(str(PANDA_URDF))


@pytest.fixture(scope="session")
def kuka() -> RobotModel:
    return RobotModel.from_urdf(str(KUKA_URDF))


@pytest.fixture(scope="module")
def pb_client():
    client = pb.connect(pb.DIRECT)
    yield client
    pb.disconnect(client)


def random_configs(model: RobotModel, n: int, seed: int = 0) -> np.ndarray:
    """Configurations uniform within the limits (+-pi for unlimited joints). Shape (n, n_dofs)."""
    rng = np.random.default_rng(seed)
    lo = np.where(np.isfinite(model.q_lower), model.q_lower, -np.pi)
    hi = np.where(np.isfinite(model.q_upper), model.q_upper, np.pi)
    return rng.uniform(lo, hi, (n, model.n_dofs))


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the xdist_group markers set here
def pytest_collection_modifyitems(config, items) -> None:
    """Files with ``slow`` tests first, each file's tests kept together (its fixtures made once): the two workers
    then take the long tests early and end together, instead of one finishing a long test alone at the end."""
    slow = {item.path for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.path not in slow)  # stable: the order within each group is kept
    for item in items:  # one worker runs them all (--dist loadgroup): one shared Ray per suite, not one per worker
        if "shared_ray" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.xdist_group("shared_ray"))


def pytest_runtest_teardown(item, nextitem) -> None:
    """The shared Ray shut down after the last test that uses it (pytest-xdist knows each worker's next test): an
    idle local Ray costs ~5 % of a core for the rest of the suite."""
    if "shared_ray" in getattr(item, "fixturenames", ()) and \
            (nextitem is None or "shared_ray" not in getattr(nextitem, "fixturenames", ())):
        ray = sys.modules.get("ray")
        if ray is not None and ray.is_initialized():
            ray.shutdown()
        while _RAY_TEMP:
            shutil.rmtree(_RAY_TEMP.pop(), ignore_errors=True)
