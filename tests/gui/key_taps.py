"""Under Xvfb: key taps sent through X to PyBullet's window while nothing reads the keys (a slow tick), and a key
held across several reads; prints what Window.keys_pressed counted as one JSON line."""

import json
import subprocess
import time

import pybullet as pb

from app.sim.window import Window


def _xdotool(*args: str) -> None:
    subprocess.run(["xdotool", *args], check=True)


def _read_until(window: Window, key: int, counted: list[int], deadline_s: float = 20.0) -> None:
    """Reads the keys (as the GUI's tick does) until ``key`` has been counted."""
    end = time.monotonic() + deadline_s
    while key not in counted and time.monotonic() < end:
        counted += sorted(window.keys_pressed())
        time.sleep(0.01)


def main() -> None:
    client = pb.connect(pb.GUI)
    window = Window(client)
    win = ""
    while not win:
        pb.stepSimulation(physicsClientId=client)
        win = subprocess.run(["xdotool", "search", "--onlyvisible", "--name", "Bullet"], capture_output=True,
                             text=True).stdout.split("\n")[0]
    _xdotool("windowfocus", "--sync", win)
    taps: list[int] = []
    for key in ("q", "a"):  # pressed for 0.2 s, as a hand does, and released before the next read
        _xdotool("keydown", key, "sleep", "0.2", "keyup", key)
    time.sleep(0.5)  # the rest of the slow tick
    _read_until(window, ord("a"), taps)
    held: list[int] = []
    _xdotool("keydown", "w")
    _read_until(window, ord("w"), held)
    for _ in range(5):
        held += sorted(window.keys_pressed())  # still down: not counted again
    _xdotool("keyup", "w", "key", "z")
    _read_until(window, ord("z"), held)
    print(json.dumps({"taps": taps, "held": held}))


if __name__ == "__main__":
    main()
