"""Command line: ``python -m app.replay DATASET [--episode K] [--units si|trossen|auto] [--source action|state]
[--config CONFIG] [--out DIR] [--no-video]``.

Plays one recorded episode (LeRobot v3.0 or v2.1, ACT HDF5) through the simulated motors, in the episode's own
scene: where the dataset keeps it (``meta/episode_scenes.jsonl``, app.record's), the recording's seed, every
randomised value and every object's start (app.recording.replay_scene); where it keeps none (another tool's
recording), the config's own draw, and a warning says so. The dataset's joint names are mapped onto the robot's
DOFs (one arm or two), values converted to SI (``auto`` says what it assumed), the arm put at the recorded start,
then every frame's command held for its share of physics steps (app.episode.replay_loop). Reports per frame the
tracking error, the commands' joint-limit and velocity-bound excess, contacts with other bodies and with the
objects, the end-effector path (FK of the simulated joints) and, where the dataset has states, the end-effector
distance to the recorded state's; per object its start and end and, where the dataset records
``observation.environment_state``, the distance of its end from the recorded one; each excess with its unit, joint
and frame. Ends with the verdict, as ``app.eval --replay`` judges the episode in its recorded scene (the
environment's judge): ``replayed: success``, ``replayed: failed (REASON)`` or ``replayed: no verdict (WHY)``
(no object task in the config, no recorded scene, ``--source state``). Writes ``replay.json``,
``replay.png`` (commanded vs simulated joints) and ``replay.mp4`` (rendered as app.run's video, with its
overlay; not with ``--no-video``), all renamed into place together. A dataset that does not fit the robot is one
line on stderr, exit 2.
"""

from __future__ import annotations

import argparse
import logging
import sys
import uuid
from pathlib import Path
from typing import NamedTuple

import numpy as np

from app.config.loader import load_run_config
from app.dataset import UnitsGuess, dataset_units, load_dataset
from app.dataset.robot_map import map_to_robot
from app.envs.options import EnvOptions
from app.episode.replay_loop import POSITION_GAIN, Replay, check_rate, replay_episode  # noqa: F401 (the API)
from app.episode.replay_video import ReplayVideo
from app.episode.scene_build import build_scene
from app.errors import DatasetError, InputError
from app.evaluation.shards import EvalJob, PolicySpec, close_here, run_job
from app.quality.motion_report import summary_line
from app.recording.replay_scene import ReplayScene, place_objects, recorded_ends, replay_scene
from app.render.report import save_figure_atomic, write_json_atomic
from app.runtime.command import command_main
from app.runtime.outputs import OutputSet
from app.tasks import object_task

log = logging.getLogger("app.replay")
DEFAULT_CONFIG = "configs/single_ik.yaml"  # the WidowX AI at a table; only its scene is used
MAX_ACT_FPS = 1000.0  # [Hz] assumed for ACT files that do not say their rate
ACT_FPS = 50.0  # [Hz] assumed for ACT files that do not say theirs, unless --act-fps says


def panel_labels(names: list[str], dof_names: list[str]) -> list[str]:
    """One label per panel of replay.png: the robot DOF it shows and the dataset column that drives it (two
    fingers driven by one gripper column are two panels with one column)."""
    m = map_to_robot(names, dof_names)
    return [f"{dof_names[d]}\n({names[c]})" for c, d in zip(m.columns, m.dofs)]


def _plot(path: Path, result: Replay, names: list[str]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(names), 1, figsize=(8, 1.4 * len(names)), sharex=True)
    for ax, k, name in zip(np.atleast_1d(axes), range(len(names)), names):
        ax.plot(result.t, result.q_cmd[:, k], label="commanded")
        ax.plot(result.t, result.q_sim[:, k], "--", label="simulated")
        ax.set_ylabel(name, fontsize=7)
    np.atleast_1d(axes)[0].legend(fontsize=7)
    np.atleast_1d(axes)[-1].set_xlabel("t [s]")
    save_figure_atomic(fig, path)
    plt.close(fig)


def _objects(result: Replay, names: list[str], recorded: dict[str, np.ndarray]) -> dict:
    """Per object: its start and end pose in the replay, its recorded end where the dataset has one and the
    distance between the two ends [m]."""
    out = {}
    for k, name in enumerate(names):
        end = result.objects[-1, k]
        entry = {"start": result.objects[0, k].tolist(), "end": end.tolist()}
        if name in recorded:
            entry["recorded_end"] = recorded[name].tolist()
            entry["end_error_m"] = float(np.linalg.norm(end[:3] - recorded[name][:3]))
        out[name] = entry
    return out


def _excess(values: np.ndarray, dofs: np.ndarray, revolute: dict, units: tuple[str, str]) -> dict:
    """Where a command's excess was largest: {joint, frame, unit} (joint and frame None where within)."""
    k = int(np.argmax(values)) if len(values) else 0
    joint = str(dofs[k]) if len(dofs) and values[k] > 0 else None
    return {"joint": joint, "frame": k if joint else None,
            "unit": units[0] if joint is None or revolute.get(joint, True) else units[1]}


def _summary(result: Replay, objects: dict, scene_kept: bool) -> dict:
    errors = [o["end_error_m"] for o in objects.values() if "end_error_m" in o]
    revolute = result.revolute or {}
    return {"frames": len(result.t), "tracking_err_max_rad": float(result.tracking_err.max()),
            "limit_excess_max": float(result.limit_excess.max()),
            "limit_excess_at": _excess(result.limit_excess, result.limit_excess_dof, revolute, ("rad", "m")),
            "velocity_excess_max": float(result.velocity_excess.max()),
            "velocity_excess_at": _excess(result.velocity_excess, result.velocity_excess_dof, revolute,
                                          ("rad/s", "m/s")),
            "frames_with_contacts": int((result.contacts > 0).sum()),
            "frames_touching_objects": int((result.object_contacts > 0).sum()),
            "ee_gap_max_m": float(result.ee_gap.max()) if len(result.ee_gap) else None,
            "ee_start_m": result.ee_pos[0].tolist(), "ee_end_m": result.ee_pos[-1].tolist(),
            "scene": "recorded" if scene_kept else "config", "objects": objects,
            "object_end_error_max_m": max(errors) if errors else None,
            "motion": summary_line([result.motion]) if result.motion else None}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m app.replay", description=__doc__.split("\n\n")[1].strip())
    parser.add_argument("dataset", help="a LeRobot dataset folder (v3.0, v2.1) or ACT HDF5 file/folder")
    parser.add_argument("--episode", type=int, default=0, help="episode index (default 0)")
    parser.add_argument("--units", choices=("si", "trossen", "auto"), default="auto",
                        help="si: rad and m; trossen: deg and m x 10000; auto: from the value ranges (default)")
    parser.add_argument("--source", choices=("action", "state"), default="action", help="what to play")
    parser.add_argument("--config", default=DEFAULT_CONFIG, help=f"run config naming the scene ({DEFAULT_CONFIG})")
    parser.add_argument("--act-fps", type=float, default=None,
                        help=f"rate of ACT files that do not say theirs (default {ACT_FPS:g}; ACT datasets only)")
    parser.add_argument("--out", default="videos/replay", help="folder for replay.json, replay.png and replay.mp4")
    parser.add_argument("--no-video", action="store_true", help="skip rendering and replay.mp4 (much faster)")
    return parser.parse_args(argv)


def _checked(args: argparse.Namespace):
    """The dataset, its units and the episode's record, every refusal (exit 2) before any work."""
    act_fps = ACT_FPS if args.act_fps is None else args.act_fps
    if not (np.isfinite(act_fps) and 0 < act_fps <= MAX_ACT_FPS):
        raise DatasetError(f"--act-fps must be a rate in (0, {MAX_ACT_FPS:g}] Hz, got {act_fps:g}")
    out, root = Path(args.out).resolve(), Path(args.dataset).resolve()
    if out == root or root in out.parents:
        raise InputError(f"--out {args.out}: inside the dataset {args.dataset}; a replay writes its files elsewhere, "
                         "so the dataset stays as it was recorded")
    dataset = load_dataset(args.dataset, act_fps=act_fps)
    if args.act_fps is not None and dataset.format != "act-hdf5":
        raise InputError(f"--act-fps {args.act_fps:g}: only for ACT HDF5 files; this {dataset.format} dataset "
                         f"states its rate ({dataset.fps:g} Hz)")
    if not dataset.episodes:
        raise DatasetError(f"--episode {args.episode}: the dataset has no episodes", str(args.dataset))
    if not 0 <= args.episode < len(dataset.episodes):
        raise DatasetError(f"--episode {args.episode}: the dataset has episodes 0..{len(dataset.episodes) - 1}")
    guess = dataset_units(dataset) if args.units == "auto" else UnitsGuess(args.units, "given by --units")
    record = dataset.episodes[args.episode]
    for what, values in (("action", record.action), ("state", record.state)):
        bad = np.flatnonzero(~np.isfinite(values).all(axis=1)) if len(values) else []
        if len(bad):
            raise DatasetError(f"episode {args.episode}'s {what} holds NaN or inf (row {bad[0]})", str(args.dataset))
    return dataset, guess, record


def _main(args: argparse.Namespace) -> int:
    dataset, guess, record = _checked(args)
    setup = replay_scene(args.dataset, load_run_config(args.config, n_envs=1), args.episode)
    run = setup.run
    check_rate(dataset.fps, len(record.action), run.scene_config.physics_hz)
    outputs = OutputSet(Path(args.out))
    try:
        result, robot, video = _replayed(args, dataset, guess, setup, outputs)
        for note in setup.notes:  # once the episode replayed: nothing said before a refusal
            log.warning("%s", note)
        log.info("units: %s (%s)", guess.units, guess.reason)
        names = list(dataset.action_names if args.source == "action" else dataset.state_names)
        objects = _objects(result, list(robot.objects), recorded_ends(dataset.environment_names,
                                                                      record.environment_state, list(robot.objects)))
        summary = _summary(result, objects, setup.scene is not None)
        verdict = judged(args, setup)
        frames = {k: v for k, v in result._asdict().items() if k not in ("revolute", "motion")}
        write_json_atomic(outputs.temporary("replay.json"), {
            "dataset": str(args.dataset), "format": dataset.format, "episode": args.episode, "source": args.source,
            "fps": dataset.fps, "units": guess._asdict(), "scene_notes": list(setup.notes), "verdict": verdict,
            "summary": summary, "motion": result.motion, "per_frame": frames})
        _plot(outputs.temporary("replay.png"), result, panel_labels(names, list(robot.dof_names)))
        if video is not None:
            video.finish()
        final = outputs.commit()
    except DatasetError as exc:
        outputs.discard()
        if str(args.dataset) in str(exc):
            raise
        raise DatasetError(f"{args.dataset} replayed with {args.config}: {exc}") from None
    except BaseException:
        outputs.discard()
        raise
    for line in summary_lines(summary):
        log.info("%s", line)
    for name in final:
        log.info("wrote %s", final[name])
    log.info("%s", verdict_line(verdict))
    return 0


def summary_lines(summary: dict) -> list[str]:
    """The summary as lines a person reads: each excess with its unit, joint and frame."""
    out = []
    for key, value in summary.items():
        if key.endswith("_at"):
            continue
        at = summary.get(key.replace("_max", "_at")) if key.endswith("_excess_max") else None
        if at is None:
            out.append(f"{key}: {value}")
        elif at["joint"] is None:
            within = "its joint limits" if "limit" in key else "its velocity bound"
            out.append(f"{key}: 0 {at['unit']} (every command within {within})")
        else:
            bound = "joint limit" if "limit" in key else "velocity bound"
            out.append(f"{key}: {value:.4g} {at['unit']} beyond {at['joint']}'s {bound} at frame {at['frame']}")
    return out + ([summary["motion"]] if summary.get("motion") else [])


def verdict_line(verdict: dict) -> str:
    """``replayed: success``, ``replayed: failed (REASON)`` or ``replayed: no verdict (WHY)``."""
    if verdict.get("success") is None:
        return f"replayed: no verdict ({verdict['why']})"
    return "replayed: success" if verdict["success"] else f"replayed: failed ({verdict['reason']})"


def judged(args: argparse.Namespace, setup: ReplayScene) -> dict:
    """Whether the episode's actions succeed again, judged as ``app.eval --replay`` judges it (the environment's
    judge, app.tasks.judge, in the episode's recorded scene): {success, reason} or {success: None, why}."""
    if args.source != "action":
        return {"success": None, "why": "--source state plays the recorded states; the task is judged on actions"}
    if object_task(setup.run.motion) is None:
        return {"success": None, "why": f"the config's task ({setup.run.motion.type}) has no success to judge; give "
                                        "the recording's --config"}
    if setup.scene is None:
        return {"success": None, "why": "the dataset keeps no scene for this episode (meta/episode_scenes.jsonl)"}
    spec = PolicySpec("replay", str(Path(args.dataset).resolve()), (args.episode,))
    job = EvalJob(setup.run, EnvOptions("state", "joint"), 1, spec, 0, 0, 1, (setup.scene,), 0, "", uuid.uuid4().hex)
    try:
        record = run_job(job)[0]
    finally:
        close_here()
    return {"success": record.success, "reason": record.reason, "place_error_m": record.place_error_m}


class _Built(NamedTuple):
    """What the report needs of the replay's robot and scene once they are closed."""
    dof_names: tuple[str, ...]
    objects: tuple[str, ...]


def _replayed(args: argparse.Namespace, dataset, guess: UnitsGuess, setup: ReplayScene, outputs: OutputSet):
    """The episode replayed in its scene, its video (None with --no-video) fed every frame and left to finish."""
    run = setup.run
    scene, robot = build_scene(run)
    video, states = None, []
    try:
        place_objects(scene, setup.scene)
        result = replay_episode(robot, scene, dataset, args.episode, guess, args.source, run.scene_config.robot.ee_link,
                                run.scene_config.physics_hz,
                                on_frame=lambda k, t: states.append((t, robot.read_states()[0].copy())))
        if not args.no_video and run.video.enabled:
            video = ReplayVideo(run, outputs.temporary("replay.mp4"), dataset.fps, len(states))
            place = None if setup.scene is None else setup.scene.place
            z = float(result.objects[0, 0, 2]) if result.objects.shape[1] else 0.0
            video.start(robot, scene, result.ee_recorded, f"replay: {Path(args.dataset).name} episode {args.episode}",
                        place, z)
            for k, (t, q) in enumerate(states):
                video.add(k, t, q, result.ee_pos[min(k + 1, len(states) - 1)], result.objects[k])
        built = _Built(tuple(robot.model.dof_names), tuple(scene.objects))
    except BaseException:
        if video is not None:
            video.abort()
        raise
    finally:
        scene.close()
    return result, built, video


def main(argv: list[str] | None = None) -> int:
    return command_main(parse_args, _main, argv)


if __name__ == "__main__":
    sys.exit(main())
