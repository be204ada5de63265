"""The driver's configuration file (save_configs_to_file / load_configs_from_file): YAML with the keys of
Trossen's default_configurations_wxai_v0.yaml that the simulation keeps: the network settings, the joint limits
and the end effector's tool frame (other keys of Trossen's files are read past)."""

from __future__ import annotations

import yaml

from app.trossen_arm.enums import IPMethod
from app.trossen_arm.properties import JointLimit

NETWORK_DEFAULTS = {"ip_method": IPMethod.manual, "manual_ip": "192.168.1.2", "dns": "8.8.8.8",
                    "gateway": "192.168.1.1", "subnet": "255.255.255.0", "factory_reset_flag": False}
LIMIT_FIELDS = ("position_min", "position_max", "position_tolerance", "velocity_max", "velocity_tolerance",
                "effort_max", "effort_tolerance")


def save_configs(driver, file_path: str) -> None:
    """Write ``driver``'s network settings, joint limits and t_flange_tool to ``file_path`` (YAML)."""
    data = {k: (v.name if isinstance(v, IPMethod) else v) for k, v in
            ((k, driver._setting(k)) for k in NETWORK_DEFAULTS)}
    data["joint_limits"] = [{f: getattr(lim, f) for f in LIMIT_FIELDS} for lim in driver.get_joint_limits()]
    data["end_effector"] = {"t_flange_tool": list(driver.get_end_effector().t_flange_tool)}
    with open(file_path, "w") as f:
        yaml.safe_dump(data, f, sort_keys=False)


def load_configs(driver, file_path: str) -> None:
    """Set on ``driver`` what ``file_path`` (YAML) holds of the keys above."""
    with open(file_path) as f:
        data = yaml.safe_load(f) or {}
    for key in NETWORK_DEFAULTS:
        if key in data:
            driver._keep(key, IPMethod[data[key]] if key == "ip_method" else data[key])
    if "joint_limits" in data:
        limits = []
        for row in data["joint_limits"]:
            lim = JointLimit()
            for f in LIMIT_FIELDS:
                setattr(lim, f, row[f])
            limits.append(lim)
        driver.set_joint_limits(limits)
    if "t_flange_tool" in (data.get("end_effector") or {}):
        ee = driver.get_end_effector()
        ee.t_flange_tool = data["end_effector"]["t_flange_tool"]
        driver.set_end_effector(ee)
