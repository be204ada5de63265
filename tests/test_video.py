"""Atomic mp4 writing: complete videos only, even sizes, no temp files left behind."""

import os

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


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full (a device that is always full)")
def test_ffmpeg_failing_is_one_error_line_naming_the_output_not_ffmpegs_own_lines(capfd):
    """imageio's writer returned normally when ffmpeg could not write (a full disk: ffmpeg printed 'Error writing
    trailer' and the truncated file was kept); our encoder checks ffmpeg's outcome and raises one AppError line.
    (A real full disk reads '... ffmpeg: No space left on device'; tests/test_full_disk.py fills one.)"""
    from app.errors import AppError
    from app.runtime.h264 import encode_h264

    with pytest.raises(AppError, match=r"^cannot write /dev/full: ffmpeg: ") as caught:
        encode_h264("/dev/full", _frames(30), 30, ("-f", "mp4"))
    assert "\n" not in str(caught.value)
    assert capfd.readouterr().err == ""  # ffmpeg's own lines are not printed


def test_a_failed_encode_leaves_no_file_and_names_the_output_asked_for(tmp_path, monkeypatch):
    """The encoder fails after writing part of the temporary file: the previous video is untouched, no temporary
    file stays, and the message names out.mp4 (not the hidden temporary name)."""
    from app.errors import AppError
    from app.render import mp4
    from app.runtime.h264 import encode_h264

    def full_disk(path, frames, fps, params=(), on_frame=None, name=None):
        encode_h264(path, frames, fps, params)
        raise AppError(f"cannot write {name}: ffmpeg: No space left on device")

    monkeypatch.setattr(mp4, "encode_h264", full_disk)
    (tmp_path / "out.mp4").write_bytes(b"previous good video")
    with pytest.raises(AppError, match=rf"^cannot write {tmp_path / 'out.mp4'}: ffmpeg"):
        write_mp4(tmp_path / "out.mp4", _frames(4), fps=10)
    assert (tmp_path / "out.mp4").read_bytes() == b"previous good video"
    assert [p.name for p in tmp_path.iterdir()] == ["out.mp4"]


def test_frames_of_another_size_than_the_first_are_refused(tmp_path):
    def mixed():
        yield from _frames(2)
        yield np.zeros((32, 32, 3), np.uint8)

    with pytest.raises(InputError, match=r"like the first \(64, 96, 3\), got \(32, 32, 3\)"):
        write_mp4(tmp_path / "out.mp4", mixed(), fps=10)
    assert list(tmp_path.iterdir()) == []
