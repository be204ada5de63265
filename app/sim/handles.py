"""A robot's links and joints as the scene hands them out (Genesis's ``get_link``/``get_joint`` objects)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Link:
    """A link of a robot: its name and index in the robot's model (Genesis: ``idx``, ``idx_local``)."""

    name: str
    idx: int

    @property
    def idx_local(self) -> int:
        return self.idx


@dataclass(frozen=True)
class Joint:
    """A joint: its name, URDF type and DOF index (None for fixed joints), Genesis's names beside."""

    name: str
    type: str
    idx_local: int
    dof_idx_local: int | None

    @property
    def dofs_idx_local(self) -> list[int]:
        return [] if self.dof_idx_local is None else [self.dof_idx_local]

    @property
    def q_idx_local(self) -> int | None:
        return self.dof_idx_local

    @property
    def qs_idx_local(self) -> list[int]:
        return self.dofs_idx_local
