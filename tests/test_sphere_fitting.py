"""The sphere fit's blocked computations give the same bits as the one-piece formulas they replace."""

import numpy as np

from app.collision.fitting import MAX_SPHERES, SPACING, _candidates, _cover, _inside
from app.collision.meshes import prism_mesh
from app.collision.sampling import row_blocks, tessellate


def _one_piece_cover(points, tris, cands, radius):
    """The greedy cover on whole (N, C) and (T, C) matrices, as first written."""
    d2 = (points * points).sum(1)[:, None] + (cands * cands).sum(1)[None] - 2.0 * (points @ cands.T)
    inside = d2 <= (radius * radius)[None]
    covers = inside[tris[:, 0]] & inside[tris[:, 1]] & inside[tris[:, 2]]
    left, gain, chosen = np.ones(len(tris), dtype=bool), np.count_nonzero(covers, axis=0), []
    while left.any() and len(chosen) < MAX_SPHERES:
        best = int(gain.argmax())
        if gain[best] == 0:
            return inside, []
        chosen.append(best)
        newly = np.flatnonzero(left & covers[:, best])
        left[newly] = False
        gain -= np.count_nonzero(covers[newly], axis=0)
    return inside, [] if left.any() else chosen


def test_blocked_inside_and_cover_equal_the_one_piece_matrices_bit_for_bit():
    """_inside (row blocks) equals |p|^2 + |c|^2 - 2 p.c <= r^2 on the whole matrix, and _cover picks the same
    candidates as the one-piece greedy, for a reach that succeeds and one too small (both give [])."""
    hull = prism_mesh(0.03, 0.12)
    points, tris = tessellate(hull, SPACING, 4000)
    outcomes = []
    for reach in (0.01, 0.004):
        cands, depth = _candidates(hull, reach)
        inside, chosen = _one_piece_cover(points, tris, cands, depth + reach)
        assert np.array_equal(_inside(points, cands, depth + reach), inside)
        assert _cover(points, tris, cands, depth + reach) == chosen
        outcomes.append(bool(chosen))
    assert outcomes == [True, False]


def test_row_blocks_cover_every_row_once_and_never_leave_a_one_row_block():
    """A one-row product goes to gemv (other rounding than gemm): only n == 1 may give one."""
    for n, columns in [(0, 10), (1, 10), (2, 70_000), (3, 70_000), (1001, 131), (65_537, 1)]:
        blocks = row_blocks(n, columns)
        assert [b[0] for b in blocks[1:]] == [b[1] for b in blocks[:-1]]
        assert (blocks[0][0], blocks[-1][1]) == (0, n) if n else blocks == []
        assert all(stop - start >= 2 for start, stop in blocks) or n == 1
