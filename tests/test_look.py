"""The scene's look: ``plain`` renders as before (flat colours, no shadows), ``kit`` puts the maple and concrete
textures on the tabletop and an added floor and lights the scene with shadows; bad looks are errors naming the key."""

from pathlib import Path

import numpy as np
import pytest
import yaml

from app.config.loader import load_run_config
from app.episode.replica import PosedReplica
from app.errors import ConfigError
from app.sim.camera import Camera
from app.sim.cameras import SceneCameras
from app.specs import CameraStream, LookSpec
from app.specs.look_spec import FLOOR_NAME, TEXTURES
from tests.conftest import OFFICIAL_URDF, ROOT, require_reference

SIDE = CameraStream("side", eye=(1.0, -0.9, 0.7), target=(0.3, 0.0, 0.05), width=96, height=72)


def _run(tmp_path, look=None):
    run = yaml.safe_load((ROOT / "configs/single_ik.yaml").read_text())
    run.update(scene=str(ROOT / "scenes/pick_place.yaml"), duration=0.1)
    if look is not None:
        run["scene_overrides"] = {"look": look}
    path = tmp_path / "look.yaml"
    path.write_text(yaml.safe_dump(run))
    return load_run_config(path)


def _frame(run) -> tuple[np.ndarray, PosedReplica]:
    replica = PosedReplica(run, 1)
    cams = SceneCameras(replica.scene, replica.robot, [SIDE])
    image = cams.render(cams.poses(np.asarray(replica.robot.read_states()[0]).reshape(-1)))["side"]
    return image, replica


def test_plain_renders_exactly_as_a_camera_without_a_look(tmp_path):
    """The default look passes only shadow=0 to TinyRenderer and adds no floor: the picture equals the one of a
    Camera given no lighting at all (the renderer's call of before)."""
    run = _run(tmp_path)
    assert run.scene_config.look.is_plain() and run.scene_config.look.render_kwargs() == {"shadow": 0}
    image, replica = _frame(run)
    try:
        assert FLOOR_NAME not in replica.scene.box_ids
        cams = SceneCameras(replica.scene, replica.robot, [SIDE])
        p, R = cams.poses(np.asarray(replica.robot.read_states()[0]).reshape(-1))["side"]
        from app.sim.cameras import projection_matrix, view_matrix
        bare = Camera(replica.scene.client, view_matrix(p, R), projection_matrix(SIDE), 96, 72).frame()
        assert np.array_equal(image, bare)
    finally:
        replica.close()


def test_kit_textures_the_table_adds_a_floor_and_casts_shadows(tmp_path):
    """``look: kit``: the floor box is there (seen, never touched), the tabletop shows a grain (many tones where
    plain has a few flat ones), the picture lies below the white void at the bottom (the floor), and shadows darken
    the floor below the table compared with the same look without shadows."""
    plain, rp = _frame(_run(tmp_path))
    kit, rk = _frame(_run(tmp_path, "kit"))
    flat, rf = _frame(_run(tmp_path, {"style": "kit", "shadow": False}))
    try:
        assert FLOOR_NAME in rk.scene.box_ids and rk.scene.look.shadow
        table = (slice(40, 50), slice(40, 60))  # a patch of the tabletop in this view
        assert len(np.unique(kit[table].reshape(-1, 3), axis=0)) > 3 * len(np.unique(plain[table].reshape(-1, 3),
                                                                                     axis=0))
        assert plain[-1].min() == 255 and kit[-1].max() < 255  # white void vs floor at the picture's bottom row
        below = (slice(60, 72), slice(30, 70))  # floor in the table's shadow (the light is above and in front)
        assert kit[below].mean() < flat[below].mean() - 5
    finally:
        for r in (rp, rk, rf):
            r.close()


def test_kit_shorthand_equals_its_mapping_and_keys_replace_the_styles_values(tmp_path):
    """``look: kit`` loads as ``{style: kit}``; a key beside the style replaces only that value."""
    assert _run(tmp_path, "kit").scene_config.look == LookSpec(style="kit")
    look = _run(tmp_path, {"style": "kit", "ambient": 0.3, "table_texture": str(TEXTURES["concrete"])})
    resolved = look.scene_config.look.resolved()
    assert resolved.ambient == 0.3 and resolved.shadow and resolved.table_texture == str(TEXTURES["concrete"])
    assert look.scene_config.look.render_kwargs()["lightAmbientCoeff"] == 0.3


@pytest.mark.parametrize("look, message", [
    ("shiny", "look.style: 'shiny' is not one of ['plain', 'kit']"),
    ({"style": "kit", "table_texture": "oak"}, "look.table_texture: 'oak' is neither one of the textures"),
    ({"style": "kit", "ambient": 1.5}, "look.ambient: must be in [0, 1], got 1.5"),
    ({"style": "kit", "light_direction": [0, 0, 0]}, "look.light_direction: must be a nonzero vector"),
    ({"style": "kit", "shadows": True}, "look: unknown key 'shadows'; did you mean 'shadow'?"),
])
def test_bad_looks_are_errors_naming_the_scene_key(tmp_path, look, message):
    """A bad style, texture, coefficient, direction or key fails to load, naming where and what is allowed."""
    with pytest.raises(ConfigError) as info:
        _run(tmp_path, look)
    assert message in str(info.value)


def test_the_looks_robot_meshes_are_drawn_in_place_of_the_authored_arm(tmp_path):
    """``look.robot_urdf`` naming Trossen's own description (skipped where ../shared/reference is absent): the
    replica draws that robot (its links coloured black), posed at the same joints, its gripper frame where the
    authored arm's is (same kinematics), while the run's own robot stays the authored one."""
    ref = require_reference()
    run = _run(tmp_path, {"style": "kit", "robot_urdf": str(OFFICIAL_URDF), "robot_package_dirs": [str(ref)]})
    assert run.scene_config.robot.urdf.endswith("widowx_ai.urdf")
    drawn, replica = _frame(run)
    authored, ra = _frame(_run(tmp_path, "kit"))
    try:
        assert Path(replica.robot.urdf).resolve() == OFFICIAL_URDF.resolve() and ra.robot.urdf.endswith("widowx_ai.urdf")
        q = np.asarray(ra.robot.read_states()[0]).reshape(-1)
        link = "ee_gripper_link"
        p_drawn, _ = replica.robot.model.forward_kinematics(q, [replica.robot.model.link_index(link)])
        p_authored, _ = ra.robot.model.forward_kinematics(q, [ra.robot.model.link_index(link)])
        assert np.allclose(p_drawn, p_authored, atol=2e-3)
        assert np.abs(drawn.astype(int) - authored).sum(axis=2).astype(bool).mean() > 0.005  # another arm drawn
    finally:
        replica.close()
        ra.close()


def test_a_look_robot_with_other_joints_is_refused_as_the_config_loads(tmp_path):
    """The Stationary AI's 16 joints cannot stand in for one WidowX AI: an error naming look.robot_urdf."""
    ref = require_reference()
    other = ref / "trossen_arm_description" / "urdf" / "stationary_ai.urdf"
    with pytest.raises(ConfigError, match=r"look.robot_urdf: its movable joints .* must be the scene robot's"):
        _run(tmp_path, {"style": "kit", "robot_urdf": str(other), "robot_package_dirs": [str(ref)]})


def test_boxes_shown_again_keep_the_looks_colours(tmp_path):
    """The video hides and shows the boxes (app.sim.backdrop.show_boxes): shown again, the kit's textured tabletop
    and floor are drawn as before (white-tinted maple, not the scene's brown), the same picture."""
    from app.sim.backdrop import show_boxes

    before, replica = _frame(_run(tmp_path, "kit"))
    try:
        show_boxes(replica.scene, False)
        show_boxes(replica.scene, True)
        cams = SceneCameras(replica.scene, replica.robot, [SIDE])
        after = cams.render(cams.poses(np.asarray(replica.robot.read_states()[0]).reshape(-1)))["side"]
        assert np.array_equal(before, after)
    finally:
        replica.close()
