"""Which links make up each arm of a robot with several arms (two WidowX AI in one rig, the Stationary AI's own
URDF): the pairs of links of different arms are the ones that can collide between arms."""

from __future__ import annotations

from collections.abc import Sequence

from app.kinematics.model import KinematicModel


def arm_link_groups(model: KinematicModel, ee_links: Sequence[str]) -> list[tuple[str, ...]]:
    """Each arm's links, one tuple per end effector in ``ee_links``: the subtree of the highest ancestor of the end
    effector whose subtree holds no other end effector (the arm's base link and everything it carries).

    Raises:
        UnknownNameError: an end effector is not a link of ``model``.
    """
    parent = {j.child: j.parent for j in model.spec.joints}
    children: dict[str, list[str]] = {}
    for j in model.spec.joints:
        children.setdefault(j.parent, []).append(j.child)
    ees = [model.link_names[model.link_index(ee)] for ee in ee_links]
    groups = []
    for ee in ees:
        others = set(ees) - {ee}
        top = ee
        while top in parent and not (_subtree(parent[top], children) & others):
            top = parent[top]
        groups.append(tuple(sorted(_subtree(top, children))))
    return groups


def cross_arm_pairs(model: KinematicModel, ee_links: Sequence[str]) -> tuple[tuple[str, str], ...]:
    """(link of one arm, link of another) for every pair of arms, with at least one of the two links moved by a
    joint (a pair of fixed links can never come closer). Empty for fewer than two arms."""
    groups = arm_link_groups(model, ee_links)
    movable = {name for name, m in zip(model.link_names, model.movable_links) if m}
    return tuple((a, b) for i, ga in enumerate(groups) for gb in groups[i + 1:] for a in ga for b in gb
                 if a in movable or b in movable)


def _subtree(link: str, children: dict[str, list[str]]) -> set[str]:
    out, stack = set(), [link]
    while stack:
        name = stack.pop()
        out.add(name)
        stack.extend(children.get(name, ()))
    return out
