"""GJK on convex parts (app.collision._gjk): the distance between two hulls agrees with the minimum-norm point of their
Minkowski difference solved as a QP, and with the exact box-box distance; the witnesses lie on the parts at that
distance; radii (a sphere's, a capsule's) subtract; a bound asked for is never above the truth; meeting hulls say so."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.spatial import ConvexHull
from scipy.spatial.transform import Rotation

from app.collision._box_box import box_box
from app.collision._gjk import OVERLAP, SCRATCH, gjk
from app.collision.packing import Body, box_part, pack_tables


def _solve(V, a, b, R, p, radii=(0.0, 0.0), cap=np.inf, links=(0, 1), hulls=False, floor=-np.inf):
    """gjk on parts a and b of V; with ``hulls`` each part is its convex hull climbed along its edges."""
    nbr0, nbr = np.zeros(len(V) + 1, dtype=np.int64), np.zeros(0, dtype=np.int64)
    if hulls:
        parts = [ConvexHull(V[a[0]:a[1]]), ConvexHull(V[b[0]:b[1]])]
        V = np.vstack([h.points[h.vertices] for h in parts])
        faces = [np.searchsorted(h.vertices, h.simplices) for h in parts]  # vertices are sorted: indices into them
        a, b = (0, len(parts[0].vertices)), (len(parts[0].vertices), len(V))
        tables = pack_tables([Body("a", 0, np.zeros((0, 4)), [], 0.0, ((V[a[0]:a[1]], 0.0, faces[0]),)),
                              Body("b", 1, np.zeros((0, 4)), [], 0.0, ((V[b[0]:b[1]], 0.0, faces[1]),))], [])
        nbr0, nbr = tables.parts.nbr0, tables.parts.nbr
    out = [np.zeros(3) for _ in range(3)]
    d = gjk(V, nbr0, nbr, a[0], a[1], links[0], radii[0], b[0], b[1], links[1], radii[1], R, p, cap, floor,
            np.empty(SCRATCH), np.zeros(6, dtype=np.int64), *out)
    return d, *out


def _min_norm(PA, PB) -> float:
    """The distance between conv(PA) and conv(PB) as a QP over the two simplices' weights."""
    na, nb = len(PA), len(PB)
    cons = [{"type": "eq", "fun": lambda x: x[:na].sum() - 1}, {"type": "eq", "fun": lambda x: x[na:].sum() - 1}]
    res = minimize(lambda x: np.sum((x[:na] @ PA - x[na:] @ PB) ** 2), np.r_[np.full(na, 1 / na), np.full(nb, 1 / nb)],
                   bounds=[(0, 1)] * (na + nb), constraints=cons, method="SLSQP",
                   options={"ftol": 1e-15, "maxiter": 1000})
    return float(np.sqrt(res.fun))


def _random_pair(rng, trial):
    A = rng.normal(size=(int(rng.integers(4, 40)), 3)) * rng.uniform(0.01, 0.06, 3)
    B = rng.normal(size=(int(rng.integers(4, 40)), 3)) * rng.uniform(0.01, 0.06, 3)
    R = Rotation.random(2, random_state=trial).as_matrix()
    p = np.stack([np.zeros(3), rng.normal(size=3) * 0.08])
    return np.vstack([A, B]), (0, len(A)), (len(A), len(A) + len(B)), R, p


@pytest.mark.parametrize("hulls", [False, True], ids=["every_vertex", "climbing_hull_edges"])
def test_hull_distance_agrees_with_the_minimum_norm_qp_and_the_witnesses_lie_at_that_distance(hulls):
    rng = np.random.default_rng(4)
    apart = met = 0
    for trial in range(60):
        V, a, b, R, p = _random_pair(rng, trial)
        PA, PB = V[a[0]:a[1]] @ R[0].T + p[0], V[b[0]:b[1]] @ R[1].T + p[1]
        truth = _min_norm(PA, PB)
        d, xa, xb, n = _solve(V, a, b, R, p, hulls=hulls)
        if d == OVERLAP:
            met += 1
            assert truth < 1e-6, (trial, truth)
            continue
        apart += 1
        assert d == pytest.approx(truth, abs=1e-8), trial
        assert np.linalg.norm(xa - xb) == pytest.approx(d, abs=1e-9)
        assert n @ (xa - xb) == pytest.approx(d, abs=1e-9)
        # each witness is a point of its hull: no vertex lies beyond it along the normal's supporting plane
        assert (PA @ -n).max() <= xa @ -n + 1e-9 and (PB @ n).max() <= xb @ n + 1e-9
    assert apart > 20 and met > 5


def test_box_corners_as_parts_match_the_exact_box_box_distance():
    rng = np.random.default_rng(2)
    checked = 0
    for trial in range(200):
        half = rng.uniform(0.005, 0.06, (2, 3))
        R, P = Rotation.random(2, random_state=100 + trial).as_matrix(), rng.uniform(-0.1, 0.1, (2, 3))
        exact = box_box(R, P, half, 0, 1, np.empty(3), np.empty(3), np.empty(3), np.empty(18), np.inf)
        corners = np.vstack([box_part(np.eye(3), np.zeros(3), h)[0] for h in half])
        d, *_ = _solve(corners, (0, 8), (8, 16), R, P)
        if exact > 1e-9:
            checked += 1
            assert d == pytest.approx(exact, abs=1e-9), trial
        else:
            assert d == OVERLAP or d <= 1e-9
    assert checked > 100


def test_radii_subtract_and_a_point_against_a_box_is_the_box_distance_less_the_radius():
    corners = box_part(np.eye(3), np.zeros(3), (0.05, 0.05, 0.05))[0]
    V = np.vstack([corners, [[0.0, 0.0, 0.0], [0.0, 0.0, 0.1]]])  # a box; a capsule's axis from 0 to 0.1 (its frame)
    R, p = np.stack([np.eye(3), np.eye(3)]), np.array([[0.0, 0.0, 0.0], [0.2, 0.03, -0.05]])
    d, xa, xb, _ = _solve(V, (0, 8), (8, 10), R, p, radii=(0.0, 0.02))
    assert d == pytest.approx(0.2 - 0.05 - 0.02, abs=1e-12)  # the capsule's axis is 0.15 from the box's face
    assert xa[0] == pytest.approx(0.05) and xb[0] == pytest.approx(0.2 - 0.02)


def test_a_cap_answers_with_a_bound_never_above_the_truth():
    rng = np.random.default_rng(7)
    for trial in range(60):
        V, a, b, R, p = _random_pair(rng, trial)
        truth, *_ = _solve(V, a, b, R, p)
        if truth == OVERLAP:
            continue
        for cap in (truth / 2, truth * 0.99, truth * 1.01):
            bound, *_ = _solve(V, a, b, R, p, cap=cap)
            assert bound <= truth + 1e-9
            if cap < truth:
                assert bound >= cap - 1e-12  # "not below the cap"
            else:
                assert bound == pytest.approx(truth, abs=1e-9)
        for floor in (truth * 0.99, truth * 1.01, truth * 2):  # below the floor: a bound from above, at once
            upper, *_ = _solve(V, a, b, R, p, floor=floor)
            assert upper >= truth - 1e-9
            assert (upper < floor) == (floor > truth) or upper == pytest.approx(truth, abs=1e-9)
