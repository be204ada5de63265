"""A scripted GUI session, run under Xvfb by tests/test_gui.py: keys pressed in order (through the same
handler the window's keys reach), a screenshot of the X screen while paused, then quit, and the window's view
saved at the end (run_gui's screenshot). Prints a JSON line with what happened."""

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

from app.config.loader import load_run_config
from app.episode.gui import run_gui
from tests.gui.xwd import read_xwd

out_dir, shot, view = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
run = load_run_config("configs/batched_ik.yaml", duration=0.3)
run = replace(run, n_envs=4)
log = {"events": []}
# poll number -> key (the GUI polls every 8th step, and every step while paused)
SCRIPT = {5: " ", 9: "n", 13: "]", 16: "SHOT", 20: "h", 24: " ", 27: "q"}


def hook(session):
    polls = {"n": 0}
    real = session.window.keys_pressed

    def keys():
        real()  # the window's own events are still drained
        polls["n"] += 1
        key = SCRIPT.get(polls["n"])
        if key == "SHOT":
            dump = subprocess.run(["xwd", "-root", "-silent"], capture_output=True, check=True).stdout
            import imageio.v2 as imageio

            imageio.imwrite(shot, read_xwd(dump))
            return set()
        if key is not None:
            log["events"].append({"poll": polls["n"], "key": key, "k_before": session.k})
            return {ord(key)}
        if polls["n"] in (10, 14, 25):
            log["events"].append({"poll": polls["n"], "paused": session.paused, "k": session.k,
                                  "selected": session.selected, "help": session.show_help})
        return set()

    session.window.keys_pressed = keys


session = run_gui(run, out_dir, screenshot=view, session_hook=hook, max_steps=100000)
report = json.loads((out_dir / "report.json").read_text())
log.update(quit=session.quit, k=session.k, reached=session.result.summary["reached"],
           outputs=sorted(p.name for p in out_dir.iterdir()), steps_in_run=round(run.duration * run.scene_config.physics_hz),
           simulated_s=report["simulated_s"], stopped_early=report["summary"].get("stopped_early", False),
           timings=sorted(report["timings_s"]))
print(json.dumps(log))
