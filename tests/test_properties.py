"""Property-based tests (hypothesis): whatever shapes, dtypes and values go into the public IK, FK and
Jacobian functions and into the config loader, each call either raises an AppError or returns finite,
in-limit, honest results."""

import math

import numpy as np
import pytest
import yaml
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from app import AppError
from app.config.loader import load_run_config
from tests.conftest import ROOT

EE = "ee_gripper_link"
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
floats = st.floats(allow_nan=True, allow_infinity=True, width=64)
reasonable = st.floats(-1.0, 1.0)
shapes = hnp.array_shapes(min_dims=0, max_dims=3, max_side=5)
arrays = st.one_of(
    hnp.arrays(np.float64, shapes, elements=reasonable),
    hnp.arrays(np.float32, shapes, elements=st.floats(-1.0, 1.0, width=32)),
    hnp.arrays(np.int64, shapes, elements=st.integers(-1, 1)),
    hnp.arrays(np.float64, st.sampled_from([(3,), (2, 3), (4,), (2, 4), (8,), (2, 8)]), elements=floats),
    st.lists(reasonable, max_size=5), st.none(), st.text(max_size=3), st.integers(-3, 3))
masks = st.one_of(st.lists(st.booleans(), min_size=0, max_size=4), st.lists(st.integers(-1, 2), max_size=4),
                  st.none(), st.text(max_size=3), st.tuples(st.booleans(), st.booleans(), st.booleans()))


valid_pos = hnp.arrays(np.float64, st.sampled_from([(3,), (2, 3), (1, 3)]), elements=st.floats(-0.45, 0.45))
valid_quat = st.one_of(st.none(), hnp.arrays(np.float64, st.sampled_from([(4,), (2, 4), (1, 4)]),
                                             elements=st.floats(-1.0, 1.0)))
valid_mask = st.sampled_from([(True, True, True), (False, False, True), (True, False, False), (False, False, False),
                              [1, 1, 1], [True, True, False]])
valid_init = st.one_of(st.none(), hnp.arrays(np.float64, st.sampled_from([(8,), (2, 8)]), elements=st.floats(-4, 4)))


def _honest(model, info, pos, quat):
    q = np.asarray(info.q)
    assert np.isfinite(q).all() and np.isfinite(info.err).all()
    assert np.all(q >= model.q_lower - 1e-12) and np.all(q <= model.q_upper + 1e-12)
    fk_pos = model.forward_kinematics(q.reshape(-1, model.n_dofs), [EE])[0][:, 0]
    ok = np.atleast_1d(info.converged)
    target = np.broadcast_to(np.asarray(pos, dtype=float), fk_pos.shape)
    assert np.all(np.linalg.norm(fk_pos - target, axis=-1)[ok] <= 1e-4 + 1e-9)  # converged means reached


@SETTINGS
@given(pos=st.one_of(valid_pos, valid_pos, arrays), quat=st.one_of(valid_quat, valid_quat, arrays),
       pos_mask=st.one_of(valid_mask, valid_mask, masks), rot_mask=st.one_of(valid_mask, valid_mask, masks),
       init=st.one_of(valid_init, valid_init, arrays))
def test_ik_raises_an_app_error_or_returns_an_honest_answer(widowx, pos, quat, pos_mask, rot_mask, init):
    kwargs = {k: v for k, v in (("pos_mask", pos_mask), ("rot_mask", rot_mask), ("init_qpos", init)) if v is not None}
    try:
        info = widowx.inverse_kinematics(EE, pos, quat, return_info=True, max_restarts=2, **kwargs)
    except AppError:
        event("refused")
        return
    event("answered")
    if (pos_mask is None or all(bool(v) for v in pos_mask)) and pos is not None:
        _honest(widowx, info, pos, quat)
    else:
        assert np.isfinite(info.q).all() and np.isfinite(info.err).all()


@SETTINGS
@given(pos=valid_pos, quat=valid_quat, mask=st.sampled_from([(True, True, True), (False, False, True), (True, False, False)]),
       init=valid_init)
def test_ik_answers_to_well_formed_targets_are_in_limits_and_honest_about_convergence(widowx, pos, quat, mask, init):
    if quat is not None and not np.abs(quat).max(axis=-1).min() > 0:
        return  # a zero quaternion: refused, tested elsewhere
    shapes = [pos.shape[:-1]] + ([] if quat is None else [quat.shape[:-1]]) + ([] if init is None else [init.shape[:-1]])
    try:
        info = widowx.inverse_kinematics(EE, pos, quat, rot_mask=mask, init_qpos=init, return_info=True,
                                         max_restarts=3)
    except AppError as exc:
        assert "batch" in str(exc) or "broadcast" in str(exc) or "shape" in str(exc), exc  # mismatched batches only
        return
    assert info.q.shape == np.broadcast_shapes(*shapes) + (widowx.n_dofs,)
    _honest(widowx, info, pos, quat)


@SETTINGS
@given(q=arrays, local_point=arrays, link=st.one_of(st.sampled_from([EE, "link_3", 0, 13, -1, 99, "nope"]), arrays))
def test_fk_and_jacobian_raise_an_app_error_or_return_finite_arrays(widowx, q, local_point, link):
    try:
        pos, quat = widowx.forward_kinematics(q)
        J = widowx.get_jacobian(q, link, local_point)
    except AppError:
        return
    assert np.isfinite(pos).all() and np.isfinite(quat).all() and np.isfinite(J).all()
    assert J.shape[-2:] == (6, widowx.n_dofs)


json_values = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6), floats,
                                     st.text(max_size=8)),
                           lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                   st.dictionaries(st.text(max_size=6), inner, max_size=4)),
                           max_leaves=12)
KEYS = ["n_envs", "duration", "seed", "controller", "task", "video", "report", "scene_overrides", "env_spacing",
        "max_envs", "type", "gain", "d_safe", "center", "radius", "fps", "width", "filename"]


@settings(max_examples=80, deadline=None)
@given(data=st.dictionaries(st.sampled_from(KEYS), json_values, max_size=5))
def test_the_config_loader_raises_a_config_error_or_returns_a_checked_run(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("cfg") / "run.yaml"
    path.write_text(f"scene: {ROOT / 'scenes' / 'table.yaml'}\n" + (yaml.safe_dump(data) if data else ""))
    try:
        run = load_run_config(path)
    except AppError:
        return
    assert run.duration > 0 and math.isfinite(run.duration)
    assert run.n_envs is None or 1 <= run.n_envs <= run.max_envs
    assert "/" not in run.video.filename and run.video.filename.endswith(".mp4")


@pytest.mark.parametrize("text", ["controller: [1, 2]\n", "task: {type: path, waypoints: [[0, 0]]}\n",
                                  "video: {filename: 5}\n", "n_envs: 1.5\n"])
def test_examples_the_property_found_worth_keeping(tmp_path, text):
    path = tmp_path / "run.yaml"
    path.write_text(f"scene: {ROOT / 'scenes' / 'table.yaml'}\n" + text)
    with pytest.raises(AppError):
        load_run_config(path)
