"""Command line: ``python -m app.record CONFIG --episodes N --out DIR [--format lerobot|act-hdf5]
[--cameras kit|config|none] [--camera-size WxH] [--depth] [--joint-names kits|plugin] [--trossen-units] [--keep-failed] [--seed S] [--workers W]
[--ray-address A] [--chunks-size N] [--data-file-mb X] [--video-file-mb X]``.

Records N episodes of a run config as a dataset: the run's N environments are the episodes (each drawn from
the seed like any run's environments: object poses, place targets, motion parameters), simulated together
in this process, or in blocks on W Ray workers (app.recording.blocks) and concatenated in episode order. Every
video frame (the config's ``video.fps``) the measured joints become one row in the Trossen layout (7 values
per arm: six joints, the gripper's finger position; SI units, or Trossen's degrees and metres x 10000 with
``--trossen-units``): ``observation.state`` the joints at that frame, ``action`` the joints one frame later
(where the controller drove them; the last frame repeats) and each gripper's commanded finger position (a grip
closes past the object, as a leader arm's gripper does). An episode that failed (a pick that did not place,
a target not reached) is left out and listed, or kept with ``--keep-failed``, its task text then saying
``[failed: reason]``. Episodes are written one at a time, each atomically: an interrupted recording leaves a
dataset with the finished ones. The scene's named cameras (``cameras:``), or where it names none the Trossen
kit's (``--cameras kit``, the default: cam_high, cam_low and a wrist camera per arm, app.config.kit_cameras), become
the dataset's videos (``observation.images.<name>``), rendered after the simulation from the recorded states
(app.recording.episode_cameras), their intrinsics and extrinsics in ``meta/cameras.json`` and ``meta/camera_poses.parquet``.
Each episode's scene (seed, objects' start poses, place target) goes to ``meta/episode_scenes.jsonl``
(app.recording.episode_scenes), so a replay or ``app.eval --replay`` starts it where it started.
Progress shows as the episodes become ready (app.recording.progress): episodes done, dataset frames per second,
an ETA, and each episode's outcome.
LeRobot's files roll over at its limits (app.dataset.rollover), lerobot's defaults unless ``--chunks-size``,
``--data-file-mb`` or ``--video-file-mb`` say otherwise; a dataset continued in ``--out`` keeps its own.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import shutil
import sys
from pathlib import Path

from app.config.kit_cameras import KIT_SIZE, MODES, parse_size, recording_cameras
from app.config.loader import load_run_config
from app.config.schema import MAX_ENVS_CEILING, RunConfig
from app.dataset import LeRobotWriter, convert
from app.dataset.joint_names import NAMINGS
from app.dataset.rollover import FileLimits
from app.errors import AppError, InputError
from app.recording.blocks import Block, Sink, joint_names, record_blocks
from app.recording.episode_cameras import DEPTH_PATH, CameraMeta, check_memory
from app.recording.episode_scenes import SceneLog
from app.recording.progress import RecordProgress
from app.recording.out_folder import begin_new, check_writable, dataset_spec, end_new, episodes_there, remove_leftovers
from app.runtime.command import command_main
from app.runtime.folder_lock import FolderLock

log = logging.getLogger("app.record")
SEGMENTS = ".app-partial.segments"  # the blocks' camera segments and ACT episode files until they are taken


def _check_workers(workers: int, episodes: int) -> None:
    if not 1 <= workers <= episodes:
        raise AppError(f"--workers must be 1..{episodes} (the episodes; each worker simulates at least one), "
                       f"got {workers}")


LIMIT_OPTIONS = {"chunks_size": "--chunks-size", "data_files_size_in_mb": "--data-file-mb",
                 "video_files_size_in_mb": "--video-file-mb"}  # FileLimits' fields (lerobot's names) -> options


def file_limits(args: argparse.Namespace) -> FileLimits:
    """The LeRobot file limits the options ask for (lerobot's defaults for those not given), checked: positive
    and finite, only with ``--format lerobot``, and the same as those of a dataset already in ``--out``."""
    given = {field: getattr(args, field) for field in LIMIT_OPTIONS if getattr(args, field) is not None}
    for field, value in given.items():
        if not (math.isfinite(value) and value > 0):
            kind = "a whole number of files per chunk folder" if field == "chunks_size" else "a size in MiB"
            raise InputError(f"{LIMIT_OPTIONS[field]} must be {kind} > 0, got {value}")
    if given and args.format != "lerobot":
        raise InputError(f"{', '.join(LIMIT_OPTIONS[f] for f in given)}: LeRobot's file limits apply to --format "
                         f"lerobot only, not {args.format}")
    limits = FileLimits()._replace(**given)
    info = Path(args.out) / "meta" / "info.json"
    if given and info.is_file():  # the writer continues a dataset with the limits it was written with
        recorded = FileLimits.of_info(json.loads(info.read_text()))
        for field, value in given.items():
            if getattr(recorded, field) != value:
                raise InputError(f"{LIMIT_OPTIONS[field]} {value:g}: {args.out} already holds a dataset written with "
                                 f"{field} {getattr(recorded, field):g}, which it keeps; omit the option or choose a "
                                 f"new --out")
    return limits


def _failures(blocks: list[Block], keep_failed: bool) -> list[int]:
    """Episode indices that failed, each logged (left out, or kept and flagged)."""
    outcomes = [o for b in blocks for o in b.outcomes]
    failed = [k for k, (ok, _) in enumerate(outcomes) if not ok]
    for k in failed:
        log.warning("episode %d failed: %s%s", k, outcomes[k][1], " (kept, flagged)" if keep_failed else " (left out)")
    return failed


class Commits:
    """What this command has committed so far (for the line a signal ends it with): episodes and where."""

    def __init__(self) -> None:
        self.count, self.out = 0, ""

    def stopped_line(self) -> str:
        if not self.count:
            return "no episode was committed; the dataset (if any) is as it was"
        return (f"{self.count} episode(s) of this run committed to {self.out} before the signal (it loads with "
                f"them); the rest were not written")


def _write(args: argparse.Namespace, run: RunConfig, blocks: list[Block], limits: FileLimits, first: int,
           commits: Commits) -> int:
    """The blocks' episodes in episode order into the dataset after its ``first`` ones (failed ones left out or
    flagged), each episode's camera poses before the episode is counted; returns how many."""
    units = "trossen" if args.trossen_units else "si"
    out = Path(args.out)
    failed = set(_failures(blocks, args.keep_failed))
    writer, meta, scenes, k_out = None, None, None, 0
    episodes = [(int(env), e, b.outcomes[i][1], b.poses[i], b.files[i], b.depths[i] if b.depths else {})
                for b in blocks for i, (env, e) in enumerate(zip(b.envs, b.episodes))]
    for env, e, reason, poses, file, depths in episodes:
        if env in failed and not args.keep_failed:
            continue
        task = f"{e.task} [failed: {reason}]" if env in failed else e.task
        e = e._replace(task=task, state=convert(e.state, "si", units), action=convert(e.action, "si", units))
        if run.scene_config.cameras:
            meta = meta or CameraMeta(out, run, first)
            meta.add(first + k_out, poses)
        for camera, depth in depths.items():  # in place before the episode is counted
            target = out / DEPTH_PATH.format(camera=camera, episode_index=first + k_out)
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(depth, target)
        if args.format == "act-hdf5":  # written whole by its block (app.recording.blocks.act_file): moved into place
            os.replace(file, out / f"episode_{first + k_out}.hdf5")
        else:
            writer = writer or LeRobotWriter(out, dataset_spec(run, args.joint_names), limits)
            writer.append(e)
        scenes = scenes or SceneLog(out, run)
        scenes.add(first + k_out, env)
        k_out += 1
        commits.count, commits.out = k_out, str(out)
    return k_out


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m app.record", description=__doc__.split("\n\n")[1].strip())
    parser.add_argument("config", help="run config, e.g. configs/pick_place.yaml")
    parser.add_argument("--episodes", type=int, required=True, help="number of episodes (the run's environments)")
    parser.add_argument("--out", required=True, help="dataset folder")
    parser.add_argument("--format", choices=("lerobot", "act-hdf5"), default="lerobot")
    parser.add_argument("--trossen-units", action="store_true", help="degrees and gripper metres x 10000")
    parser.add_argument("--joint-names", choices=NAMINGS, default="kits",
                        help="kits: main_joint_0..6 (left_/right_joint_0..6 on two arms), as Trossen's kit datasets "
                             "(default); plugin: joint_0.pos..joint_5.pos, left_carriage_joint.pos (prefixed left_/"
                             "right_), as the current Trossen LeRobot plugin; app.replay reads both")
    parser.add_argument("--keep-failed", action="store_true", help="keep failed episodes, flagged in their task")
    parser.add_argument("--seed", type=int, default=None, help="random seed (overrides the config)")
    parser.add_argument("--duration", type=float, default=None, help="episode length [s] (overrides the config)")
    parser.add_argument("--cameras", choices=MODES, default="kit",
                        help="kit: the config's named cameras, or where it names none the Trossen kit's (cam_high, "
                             "cam_low, a wrist camera per arm; app.config.kit_cameras) (default); config: the "
                             "config's only; none: no camera (joints only, fastest)")
    parser.add_argument("--camera-size", default=None, metavar="WxH",
                        help=f"record every camera at this size, e.g. 320x240 (rendered at it; the kit's is "
                             f"{KIT_SIZE[0]}x{KIT_SIZE[1]}): smaller is faster")
    parser.add_argument("--depth", action="store_true",
                        help="every camera records its depth too: uint16 mm, depth/<camera>/episode_NNNNNN.npz "
                             "beside the dataset (a camera's own depth: true in the config does so alone)")
    parser.add_argument("--workers", type=int, default=1, help="Ray worker processes (1: this process, no Ray)")
    parser.add_argument("--ray-address", default=None, help="join this Ray cluster (default: $RAY_ADDRESS or local)")
    defaults = FileLimits()
    parser.add_argument("--chunks-size", dest="chunks_size", type=int, default=None, metavar="N",
                        help="LeRobot files per chunk-NNN folder (lerobot's chunks_size; "
                             f"default {defaults.chunks_size})")
    parser.add_argument("--data-file-mb", dest="data_files_size_in_mb", type=float, default=None, metavar="X",
                        help="size [MiB] at which a data or episode-metadata parquet file passes to the next "
                             f"(lerobot's data_files_size_in_mb; default {defaults.data_files_size_in_mb:g})")
    parser.add_argument("--video-file-mb", dest="video_files_size_in_mb", type=float, default=None, metavar="X",
                        help="size [MiB] at which a camera's mp4 file passes to the next "
                             f"(lerobot's video_files_size_in_mb; default {defaults.video_files_size_in_mb:g})")
    return parser.parse_args(argv)


def _main(args: argparse.Namespace, commits: Commits) -> int:
    if not 1 <= args.episodes <= MAX_ENVS_CEILING:
        raise AppError(f"--episodes must be 1..{MAX_ENVS_CEILING} (one environment each; continue the dataset for "
                       f"more), got {args.episodes}")
    _check_workers(args.workers, args.episodes)
    limits = file_limits(args)
    run = load_run_config(args.config, n_envs=args.episodes, seed=args.seed, duration=args.duration, workers=1)
    size = parse_size(args.camera_size) if args.camera_size is not None else None
    run = recording_cameras(run, args.cameras, size, depth=args.depth)
    out = Path(args.out).resolve()  # the same folder for workers on other machines' working dirs
    check_memory(run)
    check_writable(out)
    made = not out.exists()
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:  # a pseudo file system (/proc), a full disk, a race with another process
        raise AppError(f"--out {args.out}: cannot create this folder ({exc.strerror or exc})") from None
    try:
        with FolderLock(out):
            written, blocks = _record_into(args, run, out, limits, commits)
    except BaseException:
        if made and not any(out.iterdir()):
            out.rmdir()
        raise
    n_failed = sum(not ok for b in blocks for ok, _ in b.outcomes)
    log.info("%d episodes written to %s (%d failed%s)", written, args.out, n_failed,
             ", kept" if args.keep_failed else ", left out" if n_failed else "")
    return 0


def _record_into(args: argparse.Namespace, run: RunConfig, out: Path, limits: FileLimits,
                 commits: Commits) -> tuple[int, list]:
    """With ``out``'s lock held: what is there checked, the episodes simulated and written after it."""
    units = "trossen" if args.trossen_units else "si"
    first = episodes_there(out, run, args.format, units, args.joint_names)
    remove_leftovers(out)
    if first == 0:
        begin_new(out)
    act = args.format == "act-hdf5"
    segments = out / SEGMENTS if act or run.scene_config.cameras else None
    sink = Sink(segments, args.format, units, tuple(joint_names(run, args.joint_names)))
    progress = RecordProgress(run.n_envs or 1)
    failed = True
    try:
        blocks = record_blocks(run, args.workers, args.ray_address, sink, progress.episode_done)
        progress.close()
        written = _write(args, run, blocks, limits, first, commits)
        failed = False
        return written, blocks
    finally:
        progress.close()
        if segments is not None:
            shutil.rmtree(segments, ignore_errors=True)
        end_new(out, failed)


def main(argv: list[str] | None = None) -> int:
    commits = Commits()
    return command_main(parse_args, lambda args: _main(args, commits), argv, commits.stopped_line)


if __name__ == "__main__":
    sys.exit(main())
