"""Shared fixtures: models, a PyBullet DIRECT client, paths to reference data."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import numpy as np
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


def pids_running(*needles: bytes) -> set[int]:
    """Processes whose command line contains any of ``needles`` (render processes, Ray's daemons, ...)."""
    pids = set()
    for entry in os.listdir("/proc"):
        try:
            if entry.isdigit() and any(n in open(f"/proc/{entry}/cmdline", "rb").read() for n in needles):
                pids.add(int(entry))
        except OSError:
            pass
    return pids


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
