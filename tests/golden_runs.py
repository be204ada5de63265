"""Final poses of short headless runs of the shipped configs, for regression tests.

``scripts/regen_golden.py`` writes them into ``tests/golden/``; ``tests/test_golden.py``
compares a fresh run with them. A changed result fails CI until it is reviewed and regenerated.
"""

from __future__ import annotations

import platform
from importlib.metadata import version
from pathlib import Path

import numpy as np

from app.config.loader import load_run_config
from app.episode.loop import final_state, simulate
from app.episode.motion_factory import run_motion
from app.episode.scene_build import build_scene

GOLDEN_DURATION = 0.5  # [s] simulated per config
GOLDEN_TOLERANCE = 1e-6  # [rad], [m]: PyBullet and our solvers are deterministic on one machine
# [m] for objects at the end of a pick: released, they settle through contacts that turn a last-bit difference of
# the arm's path (another CPU's floating-point paths in the compiled kernels) into tens of micrometres (4.5e-5 m
# seen between two machines with the arms' joints within 1e-6 rad); a placement is judged at 1 cm
OBJECT_TOLERANCE = 1e-4
SAME_MACHINE_TOLERANCE = {"q_final": GOLDEN_TOLERANCE, "links_pos": GOLDEN_TOLERANCE,
                          "links_quat_wxyz": GOLDEN_TOLERANCE, "objects_final_pos": OBJECT_TOLERANCE}
# A whole pick episode on another machine (another CPU or numeric library: golden["machine"] differs): the grasp's
# contacts feed the arm's motion back, so last-bit differences grow over the 8 s. Seen 2026-12-07 between the
# goldens of 2026-12-05's machine and a Zen 3 one: pick_place's joints 2.1e-4 rad, links 5.7e-5 m, objects 9.9e-4 m
# apart, pick_shelf's objects 1.4e-4 m, success flags equal, every short run within 1e-16. Ten times the most
# seen; a run on the goldens' own machine is held to SAME_MACHINE_TOLERANCE.
OTHER_MACHINE_TOLERANCE = {"q_final": 2e-3, "links_pos": 1e-3, "links_quat_wxyz": 2e-3, "objects_final_pos": 1e-2}
WHOLE_EPISODES = {"pick_place": 4}  # task types judged at their end: this many environments, the full duration


def machine() -> str:
    """What a run's last bits depend on besides the code: the CPU the kernels compile for (LLVM's name and its
    vector extensions) and the numeric libraries' versions."""
    import llvmlite.binding as llvm

    features = llvm.get_host_cpu_features()
    simd = sorted(f for f in features if features[f] and f.startswith(("avx", "fma", "sse4")))
    libraries = ", ".join(f"{name} {version(name)}" for name in ("numpy", "numba", "pybullet"))
    return f"{platform.machine()} {llvm.get_host_cpu_name()} {'+'.join(simd)}; {libraries}"


def final_poses(config: str | Path, duration: float = GOLDEN_DURATION) -> dict:
    """Final joints and link positions/quaternions of a headless run (no video, no files); a pick-and-place
    runs its whole duration in its first few environments and adds the objects' final poses and the
    success flags."""
    run = load_run_config(config)
    whole = WHOLE_EPISODES.get(run.motion.type)
    run = load_run_config(config, duration=duration) if whole is None else \
        load_run_config(config, n_envs=min(whole, run.n_envs or 1))
    result, _ = run_to_end(run)
    out = {"config": run.name, "duration_s": run.duration, "machine": machine(), "whole_episode": whole is not None,
           "q_final": result.q_final.tolist(),
           "links_pos": result.ee_pos.tolist(), "links_quat_wxyz": result.ee_quat.tolist()}
    if result.objects:
        out["objects_final_pos"] = np.stack([o["final_pos"] for o in result.objects.values()], axis=1).tolist()
    if result.episodes:
        out["success"] = [ep["success"] for ep in result.episodes]
    return out


def run_to_end(run):
    """``run`` simulated headless to its end: (its final state, app.episode.loop.final_state's, and the motion)."""
    scene, robot = build_scene(run)
    try:
        motion = run_motion(run, robot.n_envs, robot=robot)
        episode, _ = simulate(run, scene, robot, motion, show_progress=False)
        return final_state(run, robot, episode, motion, scene.t, scene=scene), motion
    finally:
        scene.close()


def tolerances(actual: dict, golden: dict) -> dict[str, float]:
    """Per key: the tolerance for ``actual`` against ``golden`` (:data:`OTHER_MACHINE_TOLERANCE` for a whole pick
    episode run on another machine than the golden's)."""
    elsewhere = golden.get("whole_episode") and golden.get("machine") != actual.get("machine")
    return OTHER_MACHINE_TOLERANCE if elsewhere else SAME_MACHINE_TOLERANCE


def compare(actual: dict, golden: dict) -> list[str]:
    """Differences beyond :func:`tolerances`, as readable lines (empty when they agree)."""
    problems = []
    if actual.get("success") != golden.get("success"):
        problems.append(f"success: {actual.get('success')} != golden {golden.get('success')}")
    for key, tol in tolerances(actual, golden).items():
        if key not in golden and key not in actual:
            continue
        a, g = np.array(actual.get(key, [])), np.array(golden.get(key, []))
        if a.shape != g.shape:
            problems.append(f"{key}: shape {a.shape} != golden {g.shape}")
        elif not np.allclose(a, g, atol=tol, rtol=0):
            problems.append(f"{key}: max difference {np.abs(a - g).max():.3g} > {tol:g}")
    if problems and golden.get("machine") != actual.get("machine"):
        problems.append(f"(the golden was made on {golden.get('machine')!r}, this is {actual.get('machine')!r})")
    return problems
