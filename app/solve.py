"""Command line for large IK batches:
``python -m app.solve TARGETS.npz --urdf URDF --link LINK [--workers N] [--ray-address A] --out OUT.npz``.

TARGETS.npz holds ``pos`` (n, 3) [m] and ``quat`` (n, 4) (w, x, y, z), optionally ``init_qpos``
(n, n_dofs); OUT.npz gets ``q`` (n, n_dofs), ``converged`` (n,), ``pos_err`` (n,) [m] and ``rot_err`` (n,)
[rad]; ``--min-distance M [--box HX HY HZ X Y Z ...]`` solves collision-free by the link spheres (every link M
from the boxes, the arm's own links clear of contact; ``collision_free`` (n,) added beside ``converged``, which
still says whether the target was reached). Chunks of targets are solved by this process and N Ray workers (each loads the model once, one
compute thread), whoever is free first, or by this process alone for N = 1; the answers are the same for any N and chunk size (every problem is solved
on its own). A malformed file is an error naming the array and the shape expected (exit 2).
"""

from __future__ import annotations

import argparse
import logging
import sys
import zipfile
from pathlib import Path

import numpy as np

from app.collision.checker import MAX_CLEARANCE
from app.errors import AppError, InputError
from app.runtime.outputs import probe_write, write_atomic
from app.specs.scene_spec import WIDOWX_AI_URDF

log = logging.getLogger("app.solve")


def read_targets(path: Path, model) -> dict[str, np.ndarray]:
    """pos (n, 3), quat (n, 4) (no zero rows) and optional init_qpos (n, n_dofs) inside ``model``'s joint
    windows from ``path``, checked (no other arrays)."""
    n_dofs = model.n_dofs
    try:
        data = np.load(path, allow_pickle=False)
    except (OSError, ValueError, zipfile.BadZipFile, EOFError) as exc:
        raise InputError(f"{path}: not a readable .npz file ({exc})") from None
    if not isinstance(data, np.lib.npyio.NpzFile):
        raise InputError(f"{path}: an .npz archive of named arrays is needed (pos, quat[, init_qpos]), "
                         f"this holds a single {type(data).__name__}")
    try:
        with data:
            arrays = {k: data[k] for k in data.files}
    except (OSError, ValueError, zipfile.BadZipFile, EOFError) as exc:
        raise InputError(f"{path}: not a readable .npz file ({exc})") from None
    wanted = {"pos": 3, "quat": 4, "init_qpos": n_dofs}
    missing = [k for k in ("pos", "quat") if k not in arrays]
    if missing:
        raise InputError(f"{path}: missing array(s) {missing}; it has {sorted(arrays)} (needs pos (n, 3) and "
                         f"quat (n, 4) wxyz, optionally init_qpos (n, {n_dofs}))")
    n = len(arrays["pos"]) if arrays["pos"].ndim == 2 else -1
    for key, width in wanted.items():
        if key not in arrays:
            continue
        a = arrays[key]
        if a.ndim != 2 or a.shape != (max(n, 0), width) or a.dtype.kind not in "fiu":
            raise InputError(f"{path}: {key} must be a numeric array of shape (n, {width}) with n = len(pos), "
                             f"got {a.dtype} {a.shape}" + (f" (pos is {arrays['pos'].shape})" if key != "pos" else ""))
        if not np.all(np.isfinite(a)):
            raise InputError(f"{path}: {key} has non-finite entries (first at row {int(np.argwhere(~np.isfinite(a))[0, 0])})")
    if n < 1:
        raise InputError(f"{path}: pos must hold at least one target")
    _check_rows(path, arrays, model)
    return {k: np.asarray(v, dtype=float) for k, v in arrays.items() if k in wanted}


def _check_rows(path: Path, arrays: dict[str, np.ndarray], model) -> None:
    others = sorted(set(arrays) - {"pos", "quat", "init_qpos"})
    if others:
        raise InputError(f"{path}: unknown array(s) {others}; a targets file holds pos, quat and optionally init_qpos")
    zero = np.flatnonzero(np.abs(arrays["quat"]).max(axis=1) == 0)
    if len(zero):
        raise InputError(f"{path}: quat row {int(zero[0])} is zero; give (w, x, y, z) with nonzero norm")
    if "init_qpos" in arrays:
        model.check_window(np.asarray(arrays["init_qpos"], dtype=float), f"{path}: init_qpos")


def solve_chunk(model, link: str, targets: dict[str, np.ndarray], options: dict) -> dict[str, np.ndarray]:
    """One chunk solved here: the fields of OUT.npz. ``options``: ``min_distance`` [m] (and ``boxes``: (half (3,),
    centre (3,)) pairs in the base frame) solve collision-free (app.ik.collision_free): ``converged`` still means
    the target was reached, and ``collision_free`` (reached and clear by the spheres) is added."""
    if "min_distance" not in options:
        info = model.inverse_kinematics(link, pos=targets["pos"], quat=targets["quat"],
                                        init_qpos=targets.get("init_qpos"), return_info=True, **options)
        return {"q": info.q, "converged": info.converged, "pos_err": info.pos_err, "rot_err": info.rot_err}
    from app.collision import World, WorldBox
    from app.kinematics.rotations import quat_to_matrix

    world = World(boxes=tuple(WorldBox(f"box{k}", tuple(h), tuple(c)) for k, (h, c) in enumerate(options["boxes"])))
    res = model.inverse_kinematics(link, targets["pos"], targets["quat"], avoid_collisions=True,
                                   min_distance=options["min_distance"], collision=world,
                                   init_qpos=targets.get("init_qpos"), return_info=True)
    pos, quat = model.forward_kinematics(res.q, [link])
    R_err = np.swapaxes(quat_to_matrix(quat[:, 0]), -1, -2) @ quat_to_matrix(np.asarray(targets["quat"], float))
    rot_err = np.arccos(np.clip((np.trace(R_err, axis1=-2, axis2=-1) - 1.0) / 2.0, -1.0, 1.0))
    return {"q": res.q, "converged": res.converged, "pos_err": np.linalg.norm(pos[:, 0] - targets["pos"], axis=1),
            "rot_err": rot_err, "collision_free": res.collision_free}


def chunks(targets: dict[str, np.ndarray], size: int) -> list[dict[str, np.ndarray]]:
    n = len(targets["pos"])
    return [{k: v[a:a + size] for k, v in targets.items()} for a in range(0, n, size)]


def solve_all(urdf: str, link: str, targets: dict, workers: int, chunk: int, options: dict,
              address: str | None = None, model=None) -> dict[str, np.ndarray]:
    """Every chunk, in order, on ``workers`` Ray actors (or here for 1); with progress."""
    from app.render.progress import Progress

    parts = chunks(targets, chunk)
    progress = Progress("solving", len(targets["pos"]), unit="target")
    try:
        if model is not None:
            _models.setdefault(urdf, model)
        if workers <= 1:
            results = []
            for part in parts:
                results.append(solve_part((urdf, link, part, options)))
                progress.update(sum(len(r["q"]) for r in results))
        else:
            from app.runtime.work_pool import run_everywhere

            results, _ = run_everywhere([(urdf, link, p, options) for p in parts], solve_part, workers, address,
                                        lambda i: progress.add(len(parts[i]["pos"])))
    finally:
        progress.close()
    return {k: np.concatenate([r[k] for r in results]) for k in results[0]}


_models: dict[str, object] = {}  # per process: the model of each description, loaded once


def solve_part(args: tuple) -> dict[str, np.ndarray]:
    """(urdf, link, targets chunk, options) -> the chunk's answers; runs here or in a Ray worker."""
    urdf, link, part, options = args
    if urdf not in _models:
        from app import RobotModel

        _models[urdf] = RobotModel.from_urdf(urdf)
    return solve_chunk(_models[urdf], link, part, options)


def main(argv: list[str] | None = None) -> int:
    from app.runtime.command import command_main

    parser = argparse.ArgumentParser(prog="python -m app.solve",
                                     description=__doc__.split("\n\n")[1].replace("``", ""),
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("targets", help="TARGETS.npz with pos (n, 3), quat (n, 4) wxyz, optional init_qpos")
    parser.add_argument("--urdf", default=WIDOWX_AI_URDF, help="robot description (.urdf/.xacro; default: the WidowX AI)")
    parser.add_argument("--link", default="ee_gripper_link", help="the link to place")
    parser.add_argument("--workers", type=int, default=1, help="Ray worker processes (1: this process)")
    parser.add_argument("--ray-address", default=None, help="join this Ray cluster (default: $RAY_ADDRESS or local)")
    parser.add_argument("--chunk", type=int, default=4096, help="targets per task")
    parser.add_argument("--out", required=True, help="OUT.npz: q, converged, pos_err, rot_err")
    parser.add_argument("--min-distance", type=float, default=None, metavar="M",
                        help="solve collision-free by the robot's spheres (app.collision): every link at least M [m] "
                             "from every --box, the arm's own links not touching; OUT.npz adds collision_free")
    parser.add_argument("--box", nargs=6, type=float, action="append", default=[], metavar=("HX", "HY", "HZ", "X", "Y", "Z"),
                        help="with --min-distance: a box to keep clear of, half extents and centre [m] in the base "
                             "frame (repeatable)")
    return command_main(parser.parse_args, _solve, argv, "no output was written or replaced")


def _check_writable(out: Path) -> None:
    """--out refused before any solving: a folder, or a file where nothing can be written (its nearest existing
    folder probed; nothing is created: write_atomic makes the folders at the end)."""
    if out.is_dir():
        raise InputError(f"--out {out}: a folder; give the .npz file to write")
    try:
        probe_write(next(p for p in (out.parent, *out.parent.parents) if p.exists()))
    except OSError as exc:
        raise InputError(f"--out {out}: cannot write into {out.parent} ({exc.strerror})") from None


def _solve(args: argparse.Namespace) -> int:
    if args.workers < 1 or args.chunk < 1:
        raise InputError(f"--workers and --chunk must be >= 1, got {args.workers} and {args.chunk}")
    out = Path(args.out)
    if out.suffix != ".npz":
        raise InputError(f"--out must name a .npz file, got {args.out!r}")
    _check_writable(out)
    from app import RobotModel

    args.urdf = str(Path(args.urdf).resolve())  # the same file for workers on other machines' working dirs
    model = RobotModel.from_urdf(args.urdf)
    try:
        model.link_index(args.link)  # an unknown link is an error listing the valid names
    except AppError as exc:
        raise InputError(f"--link {args.link!r} in {args.urdf}: {exc}") from None
    targets = read_targets(Path(args.targets), model)
    result = solve_all(args.urdf, args.link, targets, args.workers, args.chunk, _options(args), args.ray_address,
                       model)
    from app.runtime.ray_session import ray_released

    with ray_released():
        write_atomic(out, ".npz", lambda tmp: np.savez(tmp, **result))

    ok = result["converged"]
    clear = "" if "collision_free" not in result else f", {int(result['collision_free'].sum())} of them collision-free"
    log.info("%s: %d of %d targets converged%s; worst %.3g m, %.3g rad", out, int(ok.sum()), len(ok), clear,
             float(result["pos_err"].max()), float(result["rot_err"].max()))
    return 0


def _options(args: argparse.Namespace) -> dict:
    """The solve's options from --min-distance / --box, checked."""
    if args.min_distance is None:
        if args.box:
            raise InputError("--box needs --min-distance (boxes are only kept clear of in a collision-free solve)")
        return {}
    if not (np.isfinite(args.min_distance) and 0 <= args.min_distance <= MAX_CLEARANCE):
        raise InputError(f"--min-distance must be a clearance in [0, {MAX_CLEARANCE:g}] m, got {args.min_distance}")
    for box in args.box:
        if not np.isfinite(box).all() or min(box[:3]) <= 0:
            raise InputError(f"--box needs half extents > 0 and a finite centre [m], got {box}")
    return {"min_distance": float(args.min_distance), "boxes": tuple((tuple(b[:3]), tuple(b[3:])) for b in args.box)}


if __name__ == "__main__":
    sys.exit(main())
