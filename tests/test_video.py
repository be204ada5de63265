"""Atomic mp4 writing: complete videos only, even sizes, no temp files left behind."""

import imageio.v2 as imageio
import numpy as np
import pytest

from app import InputError
from app.render.mp4 import write_mp4


def _frames(n, h=64, w=96):
    for i in range(n):
        frame = np.zeros((h, w, 3), np.uint8)
        frame[:, : (i + 1) * w // n] = 200
        yield frame


def test_writes_a_readable_h264_mp4(tmp_path):
    path = write_mp4(tmp_path / "out.mp4", _frames(10), fps=10, total=10)
    reader = imageio.get_reader(path)
    meta = reader.get_meta_data()
    assert meta["codec"] == "h264" and meta["size"] == (96, 64) and "yuv420p" in meta["pix_fmt"]
    assert sum(1 for _ in reader) == 10
    assert [p.name for p in tmp_path.iterdir()] == ["out.mp4"]


def test_failure_mid_way_leaves_no_file(tmp_path):
    def broken():
        yield from _frames(3)
        raise RuntimeError("simulation crashed")

    (tmp_path / "out.mp4").write_bytes(b"previous good video")
    with pytest.raises(RuntimeError):
        write_mp4(tmp_path / "out.mp4", broken(), fps=10)
    assert (tmp_path / "out.mp4").read_bytes() == b"previous good video"  # untouched
    assert [p.name for p in tmp_path.iterdir()] == ["out.mp4"]


def test_odd_size_and_no_frames_are_errors(tmp_path):
    with pytest.raises(InputError, match="even width and height"):
        write_mp4(tmp_path / "odd.mp4", _frames(2, h=63), fps=10)
    with pytest.raises(InputError, match="no frames"):
        write_mp4(tmp_path / "none.mp4", iter(()), fps=10)
    assert not list(tmp_path.iterdir())
