"""The user-facing robot model: kinematics (app.kinematics.model.KinematicModel) plus Genesis-style IK.

``app.RobotModel`` is this class. It owns the cache of prepared IK solvers (app.ik.cache.cached)
that its ``inverse_kinematics`` and ``inverse_kinematics_multilink`` reuse across calls.
"""

from __future__ import annotations

from collections.abc import Sequence

from app.ik.api import inverse_kinematics, inverse_kinematics_multilink
from app.kinematics.model import KinematicModel, LinkRef
from app.kinematics.urdf import URDFSpec


class RobotModel(KinematicModel):
    """A URDF robot's kinematics with pose IK (see :class:`~app.kinematics.model.KinematicModel`).

    Attributes:
        solver_cache: Prepared IK solvers keyed by their fixed arguments (bounded, most recent kept).
    """

    def __init__(self, spec: URDFSpec):
        super().__init__(spec)
        self.solver_cache: dict = {}

    def inverse_kinematics(self, link: LinkRef, pos: object = None, quat: object = None, *args, **kwargs):
        """Pose IK for one link, Genesis's arguments in Genesis's order; see :func:`app.ik.api.inverse_kinematics`.
        With ``avoid_collisions=True`` (keywords ``min_distance``, ``collision``): see
        :func:`app.ik.collision_free.inverse_kinematics_avoiding`."""
        if kwargs.pop("avoid_collisions", False):
            from app.ik.collision_free import inverse_kinematics_avoiding
            return inverse_kinematics_avoiding(self, link, pos, quat, *args, **kwargs)
        return inverse_kinematics(self, link, pos, quat, *args, **kwargs)

    def inverse_kinematics_multilink(self, links: Sequence[LinkRef], poss: Sequence | None = None,
                                     quats: Sequence | None = None, *args, **kwargs):
        """Pose IK for several links at once; see :func:`app.ik.api.inverse_kinematics_multilink`. With
        ``avoid_collisions=True``: see :func:`app.ik.collision_free_arms.inverse_kinematics_multilink_avoiding`."""
        if kwargs.pop("avoid_collisions", False):
            from app.ik.collision_free_arms import inverse_kinematics_multilink_avoiding
            return inverse_kinematics_multilink_avoiding(self, links, poss, quats, *args, **kwargs)
        return inverse_kinematics_multilink(self, links, poss, quats, *args, **kwargs)
