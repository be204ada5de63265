"""The driver's settings the simulation keeps and hands back as set, without simulating them (network settings,
joint characteristics, motor and algorithm parameters, links and joints): the defaults a new controller holds,
and one INFO line per driver saying that they are kept only."""

from __future__ import annotations

import logging

from app.trossen_arm.config_file import NETWORK_DEFAULTS
from app.trossen_arm.driver_core import DriverCore
from app.trossen_arm.joint_space import N_JOINTS
from app.trossen_arm.properties import AlgorithmParameter, JointCharacteristic
from app.trossen_arm.standard import StandardJoints, StandardLinks, StandardMotorParameters, copied

CHARACTERISTIC_FIELDS = ("effort_correction", "friction_transition_velocity", "friction_constant_term",
                         "friction_coulomb_coef", "friction_viscous_coef", "position_offset")


def _default_characteristic() -> JointCharacteristic:
    c = JointCharacteristic()
    c.effort_correction, c.friction_transition_velocity = 1.0, 0.01
    return c


class KeptConfig(DriverCore):
    """The store of kept settings: ``_setting(key)`` (its default until set), ``_keep(key, value)`` (a copy)."""

    def _setting(self, key: str):
        if key not in self._settings:
            defaults = {**NETWORK_DEFAULTS, "joint_characteristics": [_default_characteristic() for _ in
                                                                      range(N_JOINTS)],
                        "motor_parameters": copied(StandardMotorParameters.wxai_v0_default),
                        "algorithm_parameter": AlgorithmParameter(), "links": copied(StandardLinks.wxai_v0_20260626),
                        "joints": copied(StandardJoints.wxai_v0_20260626)}
            self._settings[key] = defaults[key]
        return self._settings[key]

    def _keep(self, key: str, value) -> None:
        self._require()
        if not self._settings.get("_noted"):
            logging.getLogger(self._logger).info("simulated arm: %s (and the other network, friction, motor, link "
                                                 "and joint settings) kept but not simulated", key)
            self._settings["_noted"] = True
        self._settings[key] = copied(value)
