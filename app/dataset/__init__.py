"""Recorded episodes as datasets: LeRobot v3.0 (write, read), LeRobot v2.1 (read) and ACT HDF5 (write, read),
in the Trossen AI kits' joint names and either unit convention. No PyBullet here: the simulator's side
(recording, replay) hands plain arrays in and takes them out."""

from app.dataset.act_hdf5 import read_act, write_act_episode
from app.dataset.joint_names import ROBOT_TYPES, trossen_names
from app.dataset.lerobot_reader import read_lerobot
from app.dataset.lerobot_writer import LeRobotWriter
from app.dataset.load import dataset_units, episode_frames, load_dataset
from app.dataset.records import (CameraSpec, DatasetSpec, EncodedVideo, EpisodeFrames, RecordedDataset,
                                 RecordedEpisode, VideoSpan)
from app.dataset.rollover import FileLimits
from app.dataset.units import UnitsGuess, convert, detect_units

__all__ = ["CameraSpec", "DatasetSpec", "EncodedVideo", "EpisodeFrames", "FileLimits", "LeRobotWriter", "ROBOT_TYPES",
           "RecordedDataset", "RecordedEpisode", "UnitsGuess", "VideoSpan", "convert", "dataset_units", "detect_units",
           "episode_frames", "load_dataset", "read_act", "read_lerobot", "trossen_names", "write_act_episode"]
