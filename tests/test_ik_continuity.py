"""Branch continuity along a path through the wrist's singular place (scripts/bench_ik_continuity.py's): each waypoint
solved from the previous answer stays on the path's own continuous solution (no jump above 0.2 rad), where solving
each on its own jumps; and a path out of reach says so per waypoint instead of jumping."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
import bench_ik_continuity as bench

from app.ik.prepared import PoseIK


def test_following_through_the_wrist_singularity_never_jumps_where_each_on_its_own_does(widowx):
    paths = bench.paths(widowx)
    solver = PoseIK(widowx, bench.LINK)
    pos, quat = paths["wrist to its singular limit"]
    avoidable, events = bench.follow(widowx, solver, pos, quat)
    assert avoidable == 0 and events == []
    assert bench.independent_jumps(widowx, solver, pos, quat) >= 1  # the path is one where it matters


def test_a_path_beyond_reach_reports_each_unreachable_waypoint_and_no_jump(widowx):
    pos, quat = bench.paths(widowx)["line beyond reach"]
    avoidable, events = bench.follow(widowx, PoseIK(widowx, bench.LINK), pos, quat)
    assert avoidable == 0 and events and {c for _, c in events} == {"unreachable"}
    first = events[0][0]
    assert 0.3 + 0.45 * first / (bench.N - 1) > 0.4  # reach ends beyond 0.4 m out
