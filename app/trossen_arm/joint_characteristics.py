"""The joints' characteristics (effort corrections, friction terms, position offsets), whole or one field for
every joint: kept and handed back as set, not simulated (the URDF's joints are)."""

from __future__ import annotations

from collections.abc import Sequence

from app.trossen_arm.containers import VectorDouble
from app.trossen_arm.failures import logic_error
from app.trossen_arm.joint_space import N_JOINTS
from app.trossen_arm.kept_settings import KeptConfig
from app.trossen_arm.properties import JointCharacteristic
from app.trossen_arm.standard import copied


class CharacteristicConfig(KeptConfig):
    """Joint characteristic getters and setters (kept, not simulated)."""

    def get_joint_characteristics(self) -> list[JointCharacteristic]:
        """The joint characteristics (kept, not simulated)."""
        return copied(self._setting("joint_characteristics"))

    def set_joint_characteristics(self, joint_characteristics: Sequence[JointCharacteristic]) -> None:
        """Set the joint characteristics (seven; kept, not simulated)."""
        values = list(joint_characteristics)
        if len(values) != N_JOINTS:
            raise logic_error(f"Invalid joint characteristics size: expected {N_JOINTS}, got {len(values)}",
                              self._logger)
        self._keep("joint_characteristics", values)

    def _characteristic(self, field: str) -> VectorDouble:
        return VectorDouble(getattr(c, field) for c in self._setting("joint_characteristics"))

    def _set_characteristic(self, field: str, values, what: str) -> None:
        arr = self._values(values, N_JOINTS, what)
        chars = copied(self._setting("joint_characteristics"))
        for c, x in zip(chars, arr):
            setattr(c, field, x)
        self._keep("joint_characteristics", chars)

    def get_effort_corrections(self) -> VectorDouble:
        """Effort corrections (kept)."""
        return self._characteristic("effort_correction")

    def set_effort_corrections(self, effort_corrections: VectorDouble) -> None:
        """Set the effort corrections (kept)."""
        self._set_characteristic("effort_correction", effort_corrections, "effort corrections")

    def get_friction_transition_velocities(self) -> VectorDouble:
        """Friction transition velocities (kept)."""
        return self._characteristic("friction_transition_velocity")

    def set_friction_transition_velocities(self, friction_transition_velocities: VectorDouble) -> None:
        """Set the friction transition velocities (kept)."""
        self._set_characteristic("friction_transition_velocity", friction_transition_velocities,
                                 "friction transition velocities")

    def get_friction_constant_terms(self) -> VectorDouble:
        """Friction constant terms (kept)."""
        return self._characteristic("friction_constant_term")

    def set_friction_constant_terms(self, friction_constant_terms: VectorDouble) -> None:
        """Set the friction constant terms (kept)."""
        self._set_characteristic("friction_constant_term", friction_constant_terms, "friction constant terms")

    def get_friction_coulomb_coefs(self) -> VectorDouble:
        """Friction coulomb coefs (kept)."""
        return self._characteristic("friction_coulomb_coef")

    def set_friction_coulomb_coefs(self, friction_coulomb_coefs: VectorDouble) -> None:
        """Set the friction coulomb coefs (kept)."""
        self._set_characteristic("friction_coulomb_coef", friction_coulomb_coefs, "friction coulomb coefs")

    def get_friction_viscous_coefs(self) -> VectorDouble:
        """Friction viscous coefs (kept)."""
        return self._characteristic("friction_viscous_coef")

    def set_friction_viscous_coefs(self, friction_viscous_coefs: VectorDouble) -> None:
        """Set the friction viscous coefs (kept)."""
        self._set_characteristic("friction_viscous_coef", friction_viscous_coefs, "friction viscous coefs")

    def get_position_offsets(self) -> VectorDouble:
        """Position offsets (kept)."""
        return self._characteristic("position_offset")

    def set_position_offsets(self, position_offsets: VectorDouble) -> None:
        """Set the position offsets (kept)."""
        self._set_characteristic("position_offset", position_offsets, "position offsets")
