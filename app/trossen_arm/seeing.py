"""Seeing what a script did, with no extra code in it: environment variables, read when the world is made.

- ``APP_TROSSEN_OUTPUTS=FOLDER``: when the process ends (atexit), ``FOLDER/video.mp4`` (app.trossen_arm.video:
  app.run's pipeline, overlay and caption, each arm's pose goal drawn as a frame) and ``FOLDER/report.json``
  (app.trossen_arm.report: app.run's layout and writer, limit and collision events included), renamed into
  place together (app.runtime.outputs.OutputSet: the folder is checked before the first arm moves).
- ``APP_TROSSEN_GUI=1``: PyBullet's window, each arm's pose goal drawn as a frame and its status as a light
  (app.trossen_arm.live_view); needs a display.
- ``APP_TROSSEN_SCENE=FILE``: the scene (app.trossen_arm.layout).
"""

from __future__ import annotations

import logging
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from app.render.report import write_json_atomic
from app.runtime.outputs import OutputSet
from app.trossen_arm.recorder import Recorder
from app.trossen_arm.report import report_dict
from app.trossen_arm.video import write_video

log = logging.getLogger(__name__)

OUTPUTS_ENV, GUI_ENV = "APP_TROSSEN_OUTPUTS", "APP_TROSSEN_GUI"
VIDEO, REPORT = "video.mp4", "report.json"


@dataclass(frozen=True)
class Seeing:
    """What the environment asks to see: an output folder (None: none) and the window."""

    outputs: Path | None = None
    gui: bool = False

    @classmethod
    def from_env(cls, environ=os.environ) -> Seeing:
        folder = environ.get(OUTPUTS_ENV, "").strip()
        return cls(Path(folder) if folder else None, environ.get(GUI_ENV, "") not in ("", "0"))


def script_title(argv: list[str] = sys.argv) -> str:
    """The caption's and the report's name of the run: the script's file name (its stem)."""
    return Path(argv[0]).stem if argv and argv[0] not in ("", "-c") else "trossen_arm"


def write_outputs(outputs: OutputSet, recorder: Recorder, world) -> dict[str, Path]:
    """The video (where a frame was recorded) and the report into ``outputs``, then both renamed into place;
    on any failure neither is. Returns name -> final path."""
    title = script_title()
    try:
        frames = write_video(outputs.temporary(VIDEO), recorder, world, title) if recorder.times and world.arms else 0
        report = report_dict(recorder, world, title, frames)
        write_json_atomic(outputs.temporary(REPORT), report)
        done = outputs.commit()
    except BaseException:
        outputs.discard()
        raise
    motion = report["summary"]["motion"]  # a motion that would jerk a real arm is said even where logging is not set up
    log.log(logging.WARNING if "flagged" in motion else logging.INFO, "app.trossen_arm: %s; wrote %s", motion,
            ", ".join(str(p) for p in done.values()))
    return done
