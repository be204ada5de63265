"""Hostile input, round three (#41): broken mesh and URDF files for scene objects, unbounded sizes and rates,
values that are not numbers; each a one-line AppError naming the file, key or argument and what is allowed."""

import re
import subprocess
import sys

import numpy as np
import pytest

from app.errors import AppError, ConfigError, InputError, URDFError
from app.sim.scene import Scene
from app.specs import ObjectSpec
from tests.conftest import ROOT

BROKEN_MESHES = {  # file name -> (content, words of the error)
    "nan.obj": (b"v 0 0 0\nv 1 0 0\nv 0 1 0\nv nan 0 1\nf 1 2 3\nf 1 2 4\n", "NaN or inf"),
    "inf.obj": (b"v 0 0 0\nv 1 0 0\nv 0 1 1e999\nf 1 2 3\n", "NaN or inf"),
    "words.obj": (b"v 0 0 zero\nf 1 1 1\n", "not three numbers"),
    "faces.obj": (b"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 9\n", "faces name vertex 9, but the file has 3 vertices"),
    "random.stl": (bytes(range(256)) * 11 + b"\x01", "no vertex"),
    "short.stl": (b"\0" * 80 + (5).to_bytes(4, "little") + b"\0" * 60, "no vertex"),
    "half.stl": (b"solid x\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\nendloop\n", "not whole"),
}


@pytest.mark.parametrize("name", sorted(BROKEN_MESHES))
def test_a_broken_object_mesh_is_refused_naming_the_file_before_pybullet_reads_it(tmp_path, name):
    content, words = BROKEN_MESHES[name]
    path = tmp_path / name
    path.write_bytes(content)
    scene = Scene()
    try:
        with pytest.raises(URDFError, match=words) as info:
            scene.add_object(ObjectSpec(name="m", shape="mesh", file=str(path)))
        assert str(path) in str(info.value)
    finally:
        scene.close()



@pytest.mark.parametrize("name", ["random.stl", "faces.obj"])
def test_a_broken_object_mesh_in_a_run_config_is_refused_at_its_file_key_as_the_config_loads(tmp_path, name):
    """The scene is built from the loaded config without checking again: the loader reads the mesh first."""
    from app.config.loader import load_run_config

    content, words = BROKEN_MESHES[name]
    (tmp_path / name).write_bytes(content)
    path = tmp_path / "run.yaml"
    run = (ROOT / "configs" / "single_ik.yaml").read_text().replace("scene: scenes/", f"scene: {ROOT}/scenes/")
    path.write_text(run + f"scene_overrides:\n  objects:\n    - {{name: part, shape: mesh, file: {tmp_path / name}, "
                          "pos: [0.3, 0.0, 0.05]}\n")
    with pytest.raises(ConfigError, match=rf"objects\[0\]\.file: .*{re.escape(str(tmp_path / name))}: .*{words}"):
        load_run_config(str(path))

CRASH = """
import sys
from app.errors import AppError
from app.sim.scene import Scene
from app.specs import ObjectSpec
scene = Scene()
try:
    scene.add_object(ObjectSpec(name="m", shape="mesh", file=sys.argv[1]))
    scene.build(n_envs=1)
    for _ in range(10):
        scene.step()
except AppError as exc:
    print("error:", exc)
"""


def test_a_random_bytes_stl_ends_in_an_error_line_not_a_segfault(tmp_path):
    """PyBullet itself dies (SIGSEGV) on such a file: the process must end normally with the error."""
    path = tmp_path / "random.stl"
    path.write_bytes(bytes((i * 7919) % 251 for i in range(3001)))
    res = subprocess.run([sys.executable, "-c", CRASH, str(path)], capture_output=True, text=True, timeout=120,
                         cwd=ROOT)
    assert res.returncode == 0, res.stderr[-500:]
    assert res.stdout.strip().splitlines()[-1].startswith(f"error: {path}: mesh has no vertex")


@pytest.mark.parametrize("shape, name, content, names", [
    ("mesh", "two.obj", "v 0 0 0\nv 1 0 0\n", "no surface"),  # no volume, no face: createCollisionShape failed
    ("mesh", "garbage.dae", "garbage", "PyBullet cannot load its mesh file"),
    ("urdf", "missing_mesh.urdf", '<robot name="r"><link name="a"><collision><geometry><mesh filename="no.stl"/>'
                                  "</geometry></collision></link></robot>", "mesh 'no.stl' is not a file"),
    ("urdf", "cut.urdf", "<robot", "not a readable URDF"),
    ("urdf", "negative.urdf", '<robot name="r"><link name="a"><collision><geometry><box size="-1 0.1 0.1"/>'
                              "</geometry></collision></link></robot>", "<box size='-1 0.1 0.1'> must be numbers"),
    ("urdf", "nan_mass.urdf", '<robot name="r"><link name="a"><inertial><mass value="nan"/></inertial></link>'
                              "</robot>", "<mass value='nan'> must be finite numbers >= 0"),
])
def test_an_object_file_pybullet_cannot_load_or_would_simulate_wrongly_is_an_app_error_naming_it(
        tmp_path, shape, name, content, names):
    """Before PyBullet sees it (an add_object, else the build): the file and what is wrong in it."""
    path = tmp_path / name
    path.write_text(content)
    scene = Scene()
    try:
        with pytest.raises(AppError) as caught:
            scene.add_object(ObjectSpec(name="m", shape=shape, file=str(path)))
            scene.build(n_envs=1)
        assert str(path) in str(caught.value) and "object 'm'" in str(caught.value) and names in str(caught.value)
    finally:
        scene.close()


@pytest.mark.parametrize("fov", [1e-9, 0.5, 179.5])
def test_a_camera_fov_outside_1_to_179_degrees_is_refused_at_the_check(fov):
    """The renderer hangs on a near-zero field of view: a named camera and the scene camera both refuse it."""
    from app.config.cameras import CameraConfig
    from app.specs import CameraStream
    from app.validation import check_spec

    with pytest.raises(InputError, match=r"camera 'c': fov: must be in \[1, 179\] degrees"):
        check_spec(CameraStream(name="c", fov=fov), "camera 'c'")
    assert not CameraConfig(fov=fov).checks(lambda *k: "camera.fov", None)[0][1]
    check_spec(CameraStream(name="c", fov=1.0), "camera 'c'")


def _sphere_yaml(tmp_path, body):
    path = tmp_path / "r.spheres.yaml"
    path.write_text("collision_spheres:\n  link_6:\n" + body)
    return path


def test_more_hand_written_spheres_on_a_link_than_allowed_are_refused_naming_the_file(tmp_path):
    from app.collision.sphere_file import MAX_LINK_SPHERES, read_sphere_file

    body = "".join(f"    - {{center: [0, 0, {k * 1e-4}], radius: 0.01}}\n" for k in range(MAX_LINK_SPHERES + 1))
    path = _sphere_yaml(tmp_path, body)
    with pytest.raises(ConfigError, match=rf"r.spheres.yaml: collision_spheres.link_6: {MAX_LINK_SPHERES + 1} spheres;"
                                          rf" a link takes at most {MAX_LINK_SPHERES}"):
        read_sphere_file(path, ("link_6",))


@pytest.mark.parametrize(("text", "words"), [
    ("collision_spheres:\n  link_6:\n    - {center: [0, 0, 0], radius: true}\n",
     "collision_spheres.link_6[0].radius must be a finite number > 0"),
    ("collision_spheres:\n  link_6:\n    - {center: [0, false, 0], radius: 0.01}\n",
     "collision_spheres.link_6[0].center must be three finite numbers"),
    ("collision_spheres:\n  link_6:\n    - {center: [0, 0], radius: 0.01}\n",
     "collision_spheres.link_6[0].center must be three finite numbers"),
    ("collision_spheres:\n  link_6:\n    - {center: [0, 0, 0], radius: None}\n",
     "collision_spheres.link_6[0].radius must be a finite number > 0"),
    ("collision_spheres:\n  link_6:\n    - {center: [0, 0, 0], radius: 0.01}\n    - {center: [0, 0, 0]}\n",
     "collision_spheres.link_6[1] must be {center: [x, y, z], radius: r}"),
    ("collision_spheres:\n  link_6: {center: [0, 0, 0], radius: 0.01}\n", "collision_spheres.link_6 must be a list"),
    ("self_collision_ignore:\n  link_6: link_4\n", "self_collision_ignore.link_6 must be a list of link names"),
    ("self_collision_ignore: link_6\n", "self_collision_ignore must map link names to lists"),
    ("colision_spheres: {}\n", "unknown key 'colision_spheres'; did you mean 'collision_spheres'?"),
    ("collision_spheres:\n  link_6:\n    - {center: [0, 0, 0], radius: 0.1\n", ":4:1: YAML syntax error: expected ','"),
    ("- link_6\n", "the top level must be a mapping"),
])
def test_a_malformed_sphere_file_is_one_line_naming_the_file_and_the_key(tmp_path, text, words):
    """``radius: true`` was read as 1 m, ``link_6: link_4`` ignored pairs with links 'l', 'i', ..., and a YAML
    error gave PyYAML's several lines; each is now one line with the file and the key path."""
    from app.collision.sphere_file import read_sphere_file

    path = tmp_path / "r.spheres.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as caught:
        read_sphere_file(path, ("link_4", "link_6"))
    message = str(caught.value)
    assert "\n" not in message and message.startswith(f"{path}") and words in message, message


def test_cameras_whose_episode_pictures_exceed_memory_are_refused_before_the_simulation(tmp_path, capsys):
    """A 4096x4096 camera at video.fps 240 for 4 s (~193 GB of pictures an episode): exit 2 naming the cameras
    and the limit, before anything is simulated or written."""
    import yaml

    from app.record import main

    run = yaml.safe_load((ROOT / "configs/single_ik.yaml").read_text())
    run.update(scene=str(ROOT / "scenes/table.yaml"), video={"fps": 240},
               scene_overrides={"cameras": [{"name": "big", "width": 4096, "height": 4096, "fps": 240}]})
    config = tmp_path / "big.yaml"
    config.write_text(yaml.safe_dump(run))
    assert main([str(config), "--episodes", "1", "--out", str(tmp_path / "ds")]) == 2
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert "cameras: 961 rows (4 s at video.fps 240) of big 4096x4096 would hold 48.4 GB" in last, last
    assert "limit 8 GB" in last and not (tmp_path / "ds").exists()


def test_a_pos_range_reaching_into_the_table_is_refused_though_its_low_corner_is_off_the_table(tmp_path):
    """The range's low corner (x = -0.3) lies beyond the table's edge, but starts over the table at z = 0 put
    the cube's bottom 2.5 cm into it."""
    from app.config.loader import load_run_config

    path = tmp_path / "run.yaml"
    path.write_text(f"scene: {ROOT / 'scenes' / 'pick_place.yaml'}\ntask:\n  type: pick_place\nscene_overrides:\n"
                    "  objects:\n    - {name: cube, pos_range: [[-0.3, 0.0, 0.0], [0.3, 0.1, 0.03]]}\n")
    with pytest.raises(ConfigError, match=r"objects\[0\].pos_range: object 'cube' would start inside the table: its "
                                          r"bottom at z = -0.0250 m"):
        load_run_config(str(path))


@pytest.fixture(scope="module")
def widowx_cm():
    from app import RobotModel
    from app.collision import collision_model
    from tests.conftest import WIDOWX_URDF

    model = RobotModel.from_urdf(str(WIDOWX_URDF))
    return model, collision_model(model)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_collision_queries_refuse_nan_or_inf_joints(widowx_cm, bad):
    """cm.distances gave finite distances for NaN joints and cm.clear said True."""
    model, cm = widowx_cm
    q = np.tile(model.mid_config(), (3, 1))
    q[1, 2] = bad
    with pytest.raises(InputError, match="q holds NaN or inf joint values"):
        cm.distances(q)
    with pytest.raises(InputError, match="q holds NaN or inf joint values"):
        cm.clear(q, 0.01)
    with pytest.raises(InputError, match=rf"q must have shape \(..., {model.n_dofs}\)"):
        cm.clear(q[:, :3], 0.01)


@pytest.mark.parametrize("bad", [-1.0, np.nan, [0.01, -0.5]])
def test_collision_clear_refuses_a_negative_or_nan_min_distance(widowx_cm, bad):
    model, cm = widowx_cm
    margins = bad if not isinstance(bad, list) else np.resize(bad, cm.n_pairs)
    with pytest.raises(InputError, match=r"min_distance must be clearances in \[0, 1\] m"):
        cm.clear(model.mid_config()[None], margins)


def _npz(path, **columns):
    base = {"t": np.array([0.0, 1.0]), "x": np.zeros(2), "y": np.zeros(2), "z": np.zeros(2), "qw": np.ones(2),
            "qx": np.zeros(2), "qy": np.zeros(2), "qz": np.zeros(2)}
    np.savez(path, **{**base, **columns})
    return path


@pytest.mark.parametrize("column, words", [
    (dict(x=np.zeros((2, 3))), "column 'x' has shape (2, 3); a column holds one number a row"),
    (dict(y=np.zeros(2, complex)), "column 'y' holds complex128 values; a column holds real numbers"),
    (dict(z=np.zeros(2, bool)), "column 'z' holds bool values"),
    (dict(gripper=np.zeros(3)), "columns have different lengths [2, 3]"),
    (dict(gripper=np.array([0.5, 5.0])), "column 'gripper' row 2: 5; a gripper command is in [0, 1]"),
])
def test_a_trajectory_column_that_is_not_one_real_number_a_row_is_refused(tmp_path, column, words):
    from app.dataset.trajectory import read_ee_trajectory
    from app.errors import DatasetError

    path = _npz(tmp_path / "traj.npz", **column)
    with pytest.raises(DatasetError, match=re.escape(f"{path}: {words}")):
        read_ee_trajectory(path)


def test_a_csv_trajectory_naming_a_column_twice_is_refused(tmp_path):
    from app.dataset.trajectory import read_ee_trajectory
    from app.errors import DatasetError

    path = tmp_path / "traj.csv"
    path.write_text("t,x,y,z,qw,qx,qy,qz,x\n0,0,0,0,1,0,0,0,5\n1,0,0,0,1,0,0,0,5\n")
    with pytest.raises(DatasetError, match="column 'x' is named twice in the header"):
        read_ee_trajectory(path)


@pytest.mark.parametrize("radius", [-1.0, 0.0, float("nan"), True])
def test_a_world_sphere_radius_that_is_not_a_positive_number_is_refused(widowx_cm, radius):
    """Radius -1 gave distances as if the sphere were not there, NaN gave NaN, true a 1 m sphere."""
    from app.collision import collision_model
    from app.collision.world import World, WorldSphere

    model, _ = widowx_cm
    with pytest.raises(InputError, match=r"ball.radius must be a finite number > 0 m"):
        collision_model(model, World(spheres=(WorldSphere("ball", (0.3, 0.0, 0.1), radius),)))


@pytest.mark.parametrize("closing", [[np.nan, 0.5], [0.5, np.inf], [0.5]])
def test_a_gripper_command_that_is_not_one_finite_fraction_per_environment_is_refused(closing):
    """NaN closing went to the finger motors as NaN velocities."""
    from app.specs import GripperSpec
    from tests.conftest import WIDOWX_URDF

    scene = Scene()
    try:
        robot = scene.add_robot(str(WIDOWX_URDF))
        scene.build(n_envs=2)
        gripper = robot.attach_gripper(GripperSpec(("left_carriage_joint", "right_carriage_joint"), force=20.0))
        q = robot.read_states()[0]
        with pytest.raises(InputError, match=r"gripper closing must be 2 finite fraction\(s\) \(one per environment"):
            gripper.command(np.array(closing), q, 1 / 240)
        gripper.command(np.array([0.5, 2.0]), q, 1 / 240)  # outside [0, 1]: clipped, as documented
    finally:
        scene.close()


def _task_config(tmp_path, task_yaml):
    path = tmp_path / "run.yaml"
    path.write_text(f"scene: {ROOT / 'scenes' / 'pick_place.yaml'}\ntask:\n" + task_yaml)
    return str(path)


def test_a_script_of_more_rows_than_allowed_is_refused_before_its_rows_are_checked(tmp_path):
    from app.config.loader import load_run_config
    from app.control.script import MAX_SCRIPT_ROWS

    rows = "".join(f"    - {{t: {k * 0.01:.2f}, pos: [0.3, 0.0, 0.15]}}\n" for k in range(MAX_SCRIPT_ROWS + 1))
    with pytest.raises(ConfigError, match=rf"task.waypoints: {MAX_SCRIPT_ROWS + 1} rows; a script takes at most "
                                          rf"{MAX_SCRIPT_ROWS}"):
        load_run_config(_task_config(tmp_path, "  type: script\n  waypoints:\n" + rows))


@pytest.mark.parametrize("key", ["grasp_depths", "grasp_tilts"])
def test_grasp_candidate_lists_longer_than_allowed_are_refused(tmp_path, key):
    from app.config.loader import load_run_config
    from app.tasks.pick_place import MAX_GRASP_LIST

    values = [0.5] * (MAX_GRASP_LIST + 1) if key == "grasp_depths" else [0.1] * (MAX_GRASP_LIST + 1)
    with pytest.raises(ConfigError, match=rf"task.{key}: at most {MAX_GRASP_LIST} "):
        load_run_config(_task_config(tmp_path, f"  type: pick_place\n  {key}: {values}\n"))
