"""Hostile input, round three (#41): broken mesh and URDF files for scene objects, unbounded sizes and rates,
values that are not numbers; each a one-line AppError naming the file, key or argument and what is allowed."""

import subprocess
import sys

import pytest

from app.errors import AppError, URDFError
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


@pytest.mark.parametrize("shape, name, content", [
    ("mesh", "two.obj", "v 0 0 0\nv 1 0 0\n"),  # no volume, no face: createCollisionShape failed
    ("mesh", "garbage.dae", "garbage"),
    ("urdf", "missing_mesh.urdf", '<robot name="r"><link name="a"><collision><geometry><mesh filename="no.stl"/>'
                                  "</geometry></collision></link></robot>"),
    ("urdf", "cut.urdf", "<robot"),
])
def test_an_object_file_pybullet_cannot_load_is_an_app_error_naming_it(tmp_path, shape, name, content):
    path = tmp_path / name
    path.write_text(content)
    scene = Scene()
    try:
        scene.add_object(ObjectSpec(name="m", shape=shape, file=str(path)))
        with pytest.raises(AppError, match=f"object 'm': PyBullet cannot load its {shape} file {path}"):
            scene.build(n_envs=1)
    finally:
        scene.close()
