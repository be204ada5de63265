"""The authored WidowX AI URDF agrees with Trossen's official description."""

import itertools
import xml.etree.ElementTree as ET

import numpy as np
import pybullet as pb
import pytest

from app import RobotModel
from app.kinematics.rotations import quat_conjugate, quat_log, quat_multiply
from app.kinematics.urdf import parse_urdf
from app.sim.urdf_loader import load_urdf
from tests.conftest import OFFICIAL_URDF, WIDOWX_URDF, random_configs, require_reference
from tests.pb_truth import set_config


@pytest.fixture(scope="module")
def official():
    require_reference()
    return RobotModel.from_urdf(str(OFFICIAL_URDF))


def test_fk_of_every_common_link_matches_official_for_200_configs(widowx, official):
    q = random_configs(widowx, 200, seed=7)
    q_official = q[:, [widowx.dof_names.index(n) for n in official.dof_names]]
    common = [n for n in official.link_names if n in widowx.link_names]
    assert len(common) == len(official.link_names)
    pos, quat = widowx.forward_kinematics(q, common)
    pos_o, quat_o = official.forward_kinematics(q_official, common)
    assert np.abs(pos - pos_o).max() <= 1e-9
    angle = np.linalg.norm(quat_log(quat_multiply(quat, quat_conjugate(quat_o))), axis=-1)
    assert angle.max() <= 1e-9


def test_joints_equal_official_names_origins_axes_limits(official):
    ours = {j.name: j for j in parse_urdf(str(WIDOWX_URDF)).joints}
    for joint in parse_urdf(str(OFFICIAL_URDF)).joints:
        mine = ours[joint.name]
        assert (mine.type, mine.parent, mine.child, mine.mimic) == (joint.type, joint.parent, joint.child, joint.mimic)
        for field in ("origin_xyz", "origin_rpy", "axis", "lower", "upper", "velocity", "effort"):
            assert getattr(mine, field) == getattr(joint, field), (joint.name, field)


def _inertials(path):
    out = {}
    for link in ET.parse(path).getroot().findall("link"):
        inertial = link.find("inertial")
        if inertial is not None:
            inertia = inertial.find("inertia").attrib
            origin = inertial.find("origin")
            out[link.get("name")] = (None if origin is None else origin.attrib, inertial.find("mass").attrib,
                                     {k: float(v) for k, v in inertia.items()})
    return out


def test_masses_and_inertias_equal_official():
    require_reference()
    ours, theirs = _inertials(WIDOWX_URDF), _inertials(OFFICIAL_URDF)
    for name, value in theirs.items():
        assert ours[name] == value, name
    # frame-only links carry a negligible inertial, so PyBullet does not invent 1 kg for them
    for name in set(ours) - set(theirs):
        assert float(ours[name][1]["value"]) <= 1e-4


def test_no_collision_between_non_adjacent_links_at_rest(widowx, pb_client):
    body = load_urdf(pb_client, str(WIDOWX_URDF))
    parent = {j.child: j.parent for j in parse_urdf(str(WIDOWX_URDF)).joints}
    rest, mid = np.zeros(widowx.n_dofs), widowx.mid_config()
    for q in (rest, mid):
        set_config(pb_client, body, widowx, q)
        for a, b in itertools.combinations(body.link_index, 2):
            if parent.get(a) == b or parent.get(b) == a:
                continue
            pts = pb.getClosestPoints(body.body_id, body.body_id, 0.0, body.link_index[a], body.link_index[b],
                                      physicsClientId=pb_client)
            assert not pts, f"links {a} and {b} touch at q={q}"
