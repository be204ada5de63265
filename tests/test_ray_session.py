"""Ray's lifetime (app.ray_session): what is left of the processes Ray started is ended after ray.shutdown,
descendants included, and a pid whose process has changed is never touched."""

import subprocess
import sys
import time

import pytest

from app import ray_session

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

# a parent that starts a child which outlives it, like an agent whose raylet was killed
TREE = "import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); " \
       "print('up', flush=True); time.sleep(60)"


def _alive(pid: int) -> bool:
    stat = ray_session._stat(pid)
    return stat is not None and stat[0] != b"Z"


def test_survivors_and_their_descendants_are_ended():
    root = subprocess.Popen([sys.executable, "-c", TREE], stdout=subprocess.PIPE, text=True)
    assert root.stdout.readline().strip() == "up"
    family = ray_session._family({root.pid: ray_session._stat(root.pid)[19]})
    assert len(family) == 2 and root.pid in family
    child = next(pid for pid in family if pid != root.pid)
    ray_session._end_survivors(family, grace_s=0.5)
    root.wait(timeout=5)
    deadline = time.time() + 5
    while _alive(child) and time.time() < deadline:
        time.sleep(0.05)
    assert not _alive(child)


def test_a_process_with_another_start_time_is_left_alone():
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        assert ray_session._family({other.pid: b"0"}) == {}  # a pid reused since it was recorded
        ray_session._end_survivors({other.pid: b"0"}, grace_s=0.1)
        assert other.poll() is None
    finally:
        other.kill()
        other.wait()


def test_children_are_this_processes_own():
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        assert child.pid in ray_session._children()
    finally:
        child.kill()
        child.wait()


def test_ray_children_are_those_running_rays_programs_not_a_fork_server_naming_its_folder(tmp_path):
    import types

    package = tmp_path / "ray"
    package.mkdir()
    (package / "daemon.py").write_text("import time; time.sleep(60)")
    fake_ray = types.SimpleNamespace(__file__=str(package / "__init__.py"))
    before = ray_session._children()
    ours = subprocess.Popen([sys.executable, str(package / "daemon.py")])
    other = subprocess.Popen([sys.executable, "-c", f"import time; sys_path = [{str(package)!r}]; time.sleep(60)"])
    try:
        time.sleep(0.2)  # both have exec'd
        assert set(ray_session._ray_children(fake_ray, before)) == {ours.pid}
    finally:
        for proc in (ours, other):
            proc.kill()
            proc.wait()


def test_sigterm_after_rays_shutdown_on_a_thread_still_reaches_pythons_handler():
    """ray.shutdown resets SIGTERM to the default at the C level; shutdown_ray puts the command's handler back, so
    a SIGTERM while the outputs are written is handled (one line, partial files removed), not a hard kill."""
    import subprocess
    import sys

    code = """
import os, signal, threading
from app.ray_session import shutdown_ray, start_ray
seen = []
signal.signal(signal.SIGTERM, lambda *a: seen.append('handled'))
start_ray(1)
signal.signal(signal.SIGTERM, lambda *a: seen.append('handled'))  # as app.cli does after ray.init
t = threading.Thread(target=shutdown_ray); t.start(); t.join()
os.kill(os.getpid(), signal.SIGTERM)
print(seen)
"""
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.strip().splitlines()[-1] == "['handled']"
