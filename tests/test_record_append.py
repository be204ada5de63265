"""app.record into a folder that already holds something (#41): a dataset is continued after its own episodes
(camera poses, ACT files numbered on), one writer at a time, and anything it cannot continue (other units,
cameras, format, a damaged or truncated file, someone's own files) is refused in one line, the folder
byte-identical."""

import collections
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from app.dataset import load_dataset
from app.record import main
from tests.conftest import ROOT
from tests.test_record_cameras import CAMERAS

ARGS = ["--keep-failed", "--duration", "0.3"]


@pytest.fixture(scope="module")
def config(tmp_path_factory):
    path = tmp_path_factory.mktemp("cfg") / "cams.yaml"
    run = yaml.safe_load((ROOT / "configs/single_ik.yaml").read_text())
    run.update(scene=str(ROOT / "scenes/table.yaml"), scene_overrides={"cameras": CAMERAS})
    path.write_text(yaml.safe_dump(run))
    return path


@pytest.fixture(scope="module")
def base(config, tmp_path_factory):
    """One episode in LeRobot v3.0 with a fixed and a wrist camera."""
    out = tmp_path_factory.mktemp("base") / "ds"
    assert main([str(config), "--episodes", "1", "--out", str(out), *ARGS]) == 0
    return out


@pytest.fixture()
def dataset(base, tmp_path):
    out = tmp_path / "ds"
    shutil.copytree(base, out)
    return out


def snapshot(folder):
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def refused(argv, capsys, folder, *words):
    """The command exits 2 with one last line holding ``words``; ``folder`` byte-identical afterwards."""
    before = snapshot(folder)
    assert main(argv) == 2
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert last.startswith("error: ") and all(w in last for w in words), last
    assert snapshot(folder) == before
    return last


def episodes_of_poses(folder):
    rows = pq.read_table(folder / "meta/camera_poses.parquet").column("episode_index").to_pylist()
    return dict(collections.Counter(rows))


def test_continuing_a_recording_appends_camera_poses_numbered_after_the_recorded_episodes(config, dataset):
    """Two appends to a one-episode dataset: camera_poses holds episodes 0, 1, 2 (9 frames each), the first
    episode's rows unchanged; the dataset reads back 3 episodes."""
    first = pq.read_table(dataset / "meta/camera_poses.parquet")
    for _ in range(2):
        assert main([str(config), "--episodes", "1", "--out", str(dataset), *ARGS]) == 0
    assert episodes_of_poses(dataset) == {0: 9, 1: 9, 2: 9}
    table = pq.read_table(dataset / "meta/camera_poses.parquet")
    assert table.slice(0, 9).equals(first)
    assert len(load_dataset(dataset).episodes) == 3


def test_rows_of_an_interrupted_episode_and_its_temporary_files_are_dropped_on_resume(config, dataset):
    """A killed run's leftovers: camera-pose rows of an uncounted episode, an ``.app-partial.*.mp4`` segment and
    an ffmpeg listing ``tmp*.txt`` beside a video: gone after the resumed run; a user's own tmp note stays."""
    path = dataset / "meta/camera_poses.parquet"
    poses = pq.read_table(path)
    stray = poses.set_column(0, "episode_index", pa.array([1] * len(poses), pa.int64()))
    pq.write_table(pa.concat_tables([poses, stray]), path)
    video = next((dataset / "videos").rglob("file-000.mp4")).parent
    (video / ".app-partial.segment.abc.mp4").write_bytes(b"x")
    (video / "tmpk3j2.txt").write_text(f"file '{video}/a.mp4'\nfile '{video}/b.mp4'\n")
    (dataset / "tmp_notes.txt").write_text("mine")
    assert main([str(config), "--episodes", "1", "--out", str(dataset), *ARGS]) == 0
    assert episodes_of_poses(dataset) == {0: 9, 1: 9}
    assert not list(dataset.rglob(".app-partial.*")) and not (video / "tmpk3j2.txt").exists()
    assert (dataset / "tmp_notes.txt").read_text() == "mine" and not (dataset / ".app-lock").exists()


def test_a_moved_camera_is_refused_naming_it_and_cameras_json_stays(config, dataset, tmp_path, capsys):
    run = yaml.safe_load(config.read_text())
    run["scene_overrides"]["cameras"][0]["eye"] = [-0.2, 0.0, 0.7]
    moved = tmp_path / "moved.yaml"
    moved.write_text(yaml.safe_dump(run))
    refused([str(moved), "--episodes", "1", "--out", str(dataset), *ARGS], capsys, dataset,
            "meta/cameras.json", "cam_high", "differ")


def test_an_act_recording_into_an_act_folder_numbers_its_episodes_after_the_recorded_ones(config, tmp_path):
    out = tmp_path / "act"
    assert main([str(config), "--episodes", "1", "--out", str(out), "--format", "act-hdf5", *ARGS]) == 0
    first = (out / "episode_0.hdf5").read_bytes()
    assert main([str(config), "--episodes", "2", "--out", str(out), "--format", "act-hdf5", *ARGS]) == 0
    assert sorted(p.name for p in out.glob("*.hdf5")) == ["episode_0.hdf5", "episode_1.hdf5", "episode_2.hdf5"]
    assert (out / "episode_0.hdf5").read_bytes() == first
    assert episodes_of_poses(out) == {0: 9, 1: 9, 2: 9}


@pytest.mark.parametrize("fmt", ["lerobot", "act-hdf5"])
def test_trossen_units_onto_an_si_dataset_are_refused_saying_which_units_it_holds(config, tmp_path, capsys, fmt):
    out = tmp_path / fmt
    assert main([str(config), "--episodes", "1", "--out", str(out), "--format", fmt, *ARGS]) == 0
    refused([str(config), "--episodes", "1", "--out", str(out), "--format", fmt, "--trossen-units", *ARGS],
            capsys, out, "si units", "without --trossen-units")


def test_another_format_than_the_folders_dataset_is_refused(config, dataset, capsys):
    refused([str(config), "--episodes", "1", "--out", str(dataset), "--format", "act-hdf5", *ARGS], capsys, dataset,
            "LeRobot dataset", "--format act-hdf5")


def test_a_truncated_camera_video_is_refused_before_appending(config, dataset, capsys):
    video = next((dataset / "videos").rglob("file-000.mp4"))
    video.write_bytes(video.read_bytes()[: video.stat().st_size // 3])
    refused([str(config), "--episodes", "1", "--out", str(dataset), *ARGS], capsys, dataset,
            str(video), "frames", "truncated")


@pytest.mark.parametrize("damage, words", [
    (lambda d: (d / "meta/info.json").write_text("{not json"), ["meta/info.json", "not a readable JSON"]),
    (lambda d: (d / "meta/info.json").write_text(json.dumps(
        {**json.loads((d / "meta/info.json").read_text()), "total_episodes": 0})), ["total_episodes is 0"]),
    (lambda d: shutil.rmtree(d / "meta/episodes"), ["meta/episodes", "rows for 0 of them"]),
    (lambda d: (d / "meta/tasks.parquet").unlink(), ["meta/tasks.parquet", "missing"]),
    (lambda d: (d / "meta/tasks.parquet").write_bytes(b"PAR1garbage"), ["meta/tasks.parquet", "not a readable"]),
])
def test_continuing_a_damaged_dataset_is_one_line_naming_the_file(config, dataset, capsys, damage, words):
    damage(dataset)
    refused([str(config), "--episodes", "1", "--out", str(dataset), *ARGS], capsys, dataset, *words)


def test_a_users_own_files_in_a_folder_without_a_dataset_are_not_written_over(config, tmp_path, capsys):
    out = tmp_path / "mine"
    (out / "meta").mkdir(parents=True)
    (out / "meta/stats.json").write_text('{"mine": 1}')
    refused([str(config), "--episodes", "1", "--out", str(out), *ARGS], capsys, out, "meta/stats.json", "no dataset")


def test_out_that_is_a_file_or_below_a_file_is_refused_before_the_simulation(config, tmp_path, capsys):
    afile = tmp_path / "afile"
    afile.write_text("x")
    refused([str(config), "--episodes", "1", "--out", str(afile), *ARGS], capsys, tmp_path, "is not a folder")
    refused([str(config), "--episodes", "1", "--out", str(afile / "sub" / "ds"), *ARGS], capsys, tmp_path,
            "is a file")


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux's /proc")
def test_out_in_a_pseudo_file_system_is_one_line_not_a_traceback(config, tmp_path, capsys):
    """/proc accepts no folders (mkdir: No such file or directory): a FileNotFoundError traceback before."""
    refused([str(config), "--episodes", "1", "--out", "/proc/app-record-test", *ARGS], capsys, tmp_path,
            "--out /proc/app-record-test: cannot create this folder")


HOLD = """
import sys
from app.runtime.folder_lock import FolderLock
with FolderLock(sys.argv[1]):
    print("held", flush=True)
    sys.stdin.read()
"""


def test_a_second_writer_is_refused_naming_the_pid_that_holds_the_dataset(config, dataset, capsys):
    """A child process holds the dataset's lock (it says so on stdout): the recording is refused naming the
    child's pid, the dataset untouched; once the child ends the same recording succeeds."""
    child = subprocess.Popen([sys.executable, "-c", HOLD, str(dataset)], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        assert child.stdout.readline().strip() == "held"
        lock = (dataset / ".app-lock").read_bytes()
        before = {k: v for k, v in snapshot(dataset).items()}
        assert main([str(config), "--episodes", "1", "--out", str(dataset), *ARGS]) == 2
        last = capsys.readouterr().err.strip().splitlines()[-1]
        assert f"dataset {dataset} is in use by pid {child.pid}" in last
        assert snapshot(dataset) == before and lock == f"{child.pid}\n".encode()
    finally:
        child.stdin.close()
        child.wait(timeout=60)
    assert main([str(config), "--episodes", "1", "--out", str(dataset), *ARGS]) == 0
    assert len(load_dataset(dataset).episodes) == 2


def test_a_lock_file_left_by_a_dead_process_is_taken_over(config, dataset):
    (dataset / ".app-lock").write_text("999999999\n")  # no process holds its flock
    assert main([str(config), "--episodes", "1", "--out", str(dataset), *ARGS]) == 0
    assert not (dataset / ".app-lock").exists() and len(load_dataset(dataset).episodes) == 2


def test_a_new_dataset_that_a_killed_run_began_is_started_again(config, tmp_path):
    """A run killed before its first episode counted (its mark, a data file, a video, no info.json): the next
    run starts the dataset anew rather than refusing the files or appending to the killed run's video."""
    out = tmp_path / "ds"
    (out / "data/chunk-000").mkdir(parents=True)
    (out / ".app-partial.new-dataset").touch()
    (out / "data/chunk-000/file-000.parquet").write_bytes(b"half")
    assert main([str(config), "--episodes", "1", "--out", str(out), *ARGS]) == 0
    assert len(load_dataset(out).episodes) == 1 and not (out / ".app-partial.new-dataset").exists()
    assert os.listdir(out) != []


def test_a_recording_killed_after_its_first_episode_resumes_with_every_pose_row_and_no_leftovers(config, tmp_path):
    """kill -9 once the recording logs its first written episode (read from its stderr as it comes): the next
    recording takes over its lock, removes its temporary files and appends after the episodes it counted, the
    camera poses numbered on."""
    out = tmp_path / "ds"
    child = subprocess.Popen([sys.executable, "-m", "app.record", str(config), "--episodes", "3", "--out", str(out),
                              "--keep-failed", "--duration", "1"], stderr=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        for line in child.stderr:
            if "episode 0: " in line:
                break
        child.kill()
    finally:
        child.wait(timeout=60)
        child.stderr.close()
    counted = len(load_dataset(out).episodes)
    assert main([str(config), "--episodes", "1", "--out", str(out), "--keep-failed", "--duration", "1"]) == 0
    assert episodes_of_poses(out) == {k: 30 for k in range(counted + 1)}
    assert not list(out.rglob(".app-*")) and not list(out.rglob("tmp*.txt"))


def test_a_signal_after_an_episode_was_committed_says_so_instead_of_no_output(tmp_path, monkeypatch, capsys):
    """A SIGINT landing while app.record writes its second episode: the first is in the dataset, and the
    command's last line says that (it said 'no output was written or replaced')."""
    import app.record as record

    appended = []
    real_append = record.LeRobotWriter.append

    def append_then_interrupt(self, episode):
        if appended:
            raise KeyboardInterrupt
        real_append(self, episode)
        appended.append(episode)

    monkeypatch.setattr(record.LeRobotWriter, "append", append_then_interrupt)
    out = tmp_path / "ds"
    code = main([str(ROOT / "configs" / "pick_place.yaml"), "--episodes", "2", "--duration", "0.2", "--keep-failed",
                 "--cameras", "none", "--out", str(out)])
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert code == 130
    assert "1 episode(s) of this run committed to" in last and str(out) in last, last
    assert json.loads((out / "meta" / "info.json").read_text())["total_episodes"] == 1


def test_a_full_disk_before_a_new_datasets_first_commit_leaves_no_folder_with_data_but_no_info(tmp_path, monkeypatch,
                                                                                                 capsys):
    """ENOSPC while the first episode's info.json is written: the run exits 2 naming the file and the cause, and
    what it had written (data, stats, tasks) is taken back, so --out is not left holding a dataset without
    meta/info.json (it was: the data parquet and stats stayed, and the next reader called the folder foreign)."""
    import errno

    import app.dataset.files as files

    real_write_atomic = files.write_atomic

    def full_disk_on_info(path, suffix, write):
        def write_full(tmp):
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write_atomic(path, suffix, write_full if path.name == "info.json" else write)

    monkeypatch.setattr(files, "write_atomic", full_disk_on_info)
    out = tmp_path / "ds"
    code = main([str(ROOT / "configs" / "pick_place.yaml"), "--episodes", "1", "--duration", "0.2", "--keep-failed",
                 "--cameras", "none", "--out", str(out)])
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert code == 2 and "No space left on device" in last and "info.json" in last, last
    assert not out.exists(), sorted(p.relative_to(out).as_posix() for p in out.rglob("*"))
