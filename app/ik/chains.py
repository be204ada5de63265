"""Independent chains: a multi-link pose-IK problem whose links share no free DOF (the two arms of a
bimanual robot) splits into sub-problems, one per group of links that do share DOFs.

Each group is solved on a model of its own: the links from the root to its target links and nothing else
(the group's DOFs only, FK over those links only), so a one-arm group costs what one arm costs and gets
that arm's closed-form seeds where it has them (app.ik.analytic). The answers merge into the result of
the whole problem (app.ik.prepared.PoseIK): each group's DOFs from its answer, the DOFs of no group at
``init_qpos``; each link's residual is its group's (FK of a link depends only on the DOFs above it, so it
is the residual of the merged configuration too); iterations are summed, restarts the most any group used.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from app.kinematics.model import KinematicModel
from app.kinematics.urdf import URDFSpec


@dataclass(frozen=True, eq=False)
class ChainGroup:
    """One independent sub-problem.

    Attributes:
        targets: Positions of its links in the whole problem's link list.
        model: The model of its chains (root to its links).
        dofs: The sub-model's DOFs as DOF indices of the whole model, in order. Shape (n_sub,).
        problem: The sub-problem (an app.ik.prepared.IKProblem on ``model``); None when none of its links
            constrains anything (masks), then there is nothing to solve.
    """

    targets: tuple[int, ...]
    model: KinematicModel
    dofs: np.ndarray
    problem: object | None


def _groups(model: KinematicModel, links: np.ndarray, free: np.ndarray) -> list[list[int]]:
    """The targets grouped by shared free DOFs (connected components), each in ascending order."""
    ancestor = model.jacobian_tables.ancestor
    owner = list(range(len(links)))

    def root(i: int) -> int:
        while owner[i] != i:
            i = owner[i]
        return i

    for i in range(len(links)):
        for j in range(i):
            if np.any(ancestor[links[i]] & ancestor[links[j]] & free):
                owner[root(i)] = root(j)
    groups: dict[int, list[int]] = {}
    for i in range(len(links)):
        groups.setdefault(root(i), []).append(i)
    return list(groups.values())


def chain_model(model: KinematicModel, links: list[int]) -> tuple[KinematicModel, np.ndarray]:
    """The model of the links from the root to ``links`` (link indices) and its DOFs' indices in ``model``."""
    parent = model.fk_tables.parent
    keep = np.zeros(model.n_links, dtype=bool)
    for link in links:
        while link >= 0 and not keep[link]:
            keep[link] = True
            link = parent[link]
    spec = model.spec
    names = tuple(name for name, k in zip(spec.links, keep) if k)
    joints = tuple(joint for joint, k in zip(spec.joints, keep[1:]) if k)
    sub = KinematicModel(URDFSpec(spec.name, names, joints, spec.path))
    return sub, np.array([model.dof_names.index(name) for name in sub.dof_names], dtype=np.int64)


def _constrains(problem, i: int) -> bool:
    return (problem.has_pos[i] and any(problem.pos_mask)) or (problem.has_rot[i] and any(problem.rot_mask))


def independent_groups(model: KinematicModel, problem, free: np.ndarray) -> list[ChainGroup] | None:
    """The sub-problems of ``problem`` (an IKProblem) with free DOFs ``free`` (n_dofs,) when its links form
    two or more groups that share no free DOF, each with a free DOF; None otherwise (solve it whole)."""
    if len(problem.links) < 2:
        return None
    links = np.array([model.link_index(link) for link in problem.links], dtype=np.int64)
    groups = _groups(model, links, free)
    ancestor = model.jacobian_tables.ancestor
    if len(groups) < 2 or any(not np.any(ancestor[links[g]].any(axis=0) & free) for g in groups):
        return None
    out = []
    for g in groups:
        sub, dofs = chain_model(model, [int(links[i]) for i in g])
        sub_free = free[dofs]
        pick = lambda values: tuple(values[i] for i in g)  # noqa: E731
        points = None if problem.local_points is None else pick(problem.local_points)
        sub_problem = dataclasses.replace(
            problem, links=tuple(model.link_names[links[i]] for i in g), has_pos=pick(problem.has_pos),
            has_rot=pick(problem.has_rot), local_points=None if points is None or all(p is None for p in points)
            else points, dofs_idx=None if sub_free.all() else tuple(int(k) for k in np.flatnonzero(sub_free)),
            options=dataclasses.replace(problem.options, warn=False))
        constrained = any(_constrains(problem, i) for i in g)
        out.append(ChainGroup(tuple(g), sub, dofs, sub_problem if constrained else None))
    return out
