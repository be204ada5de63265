"""Trossen's demos against two simulators, side by side: ours (app.trossen_arm, the import line changed) and
trossen-arm-sim (MuJoCo behind the arm's network protocol, the unmodified trossen_arm driver connecting to it).

Not run by CI. Needs a venv of its own with trossen-arm-sim and trossen-arm (and scipy, matplotlib for move.py):

    python3.11 -m venv /work/venv-tasim
    /work/venv-tasim/bin/pip install trossen-arm-sim==0.2.3 trossen-arm==1.11.0 scipy matplotlib
    python scripts/compare_trossen_sim.py --git-dir $TROSSEN_ARM_GIT_DIR --venv /work/venv-tasim

Every address is on the loopback: the demos' 192.168.1.x become 127.0.0.x, and trossen-arm-sim is bound to
127.0.0.x (one server per arm, each demo on fresh servers). Both run at real time, one after the other. For each
demo and side: the wall time of the demo, what it raised (or "-"), the lines it logged at ERROR or CRITICAL, the
final joints (read by a driver configured after the demo, as a script would) and, for ours, the simulated time.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

log = logging.getLogger("compare_trossen_sim")
ROOT = Path(__file__).resolve().parents[1]
DEMOS = {"simple_move": ["127.0.0.2"], "move": ["127.0.0.2"], "move_two": ["127.0.0.2", "127.0.0.3"],
         "gripper_torque": ["127.0.0.2"], "cartesian_position": ["127.0.0.2"],
         "mixed_interpolation_space": ["127.0.0.2"], "error_recovery_and_logging": ["127.0.0.2"]}
TCP_PORT = 50001  # the arm controller's configuration channel (trossen_arm_sim.protocol)
WRAPPER = '''
import json, logging, runpy, sys, time
side, demo, ips = sys.argv[1], sys.argv[2], sys.argv[3].split(",")
if side == "ours":
    import app.trossen_arm as trossen_arm
else:
    import trossen_arm
errors = []
class Count(logging.Handler):
    def emit(self, record):
        if record.levelno >= logging.ERROR:
            errors.append(record.getMessage().splitlines()[0][:120])
logging.getLogger().addHandler(Count())
t0 = time.perf_counter()
raised, found = "-", {}
try:
    found = runpy.run_path(demo, run_name="__main__")
except BaseException as exc:
    raised = f"{type(exc).__name__}: {str(exc).splitlines()[0][:100]}"
wall = time.perf_counter() - t0
for value in list(found.values()):
    if isinstance(value, trossen_arm.TrossenArmDriver) and value.get_is_configured():
        value.cleanup()
finals = {}
for ip in ips:
    driver = trossen_arm.TrossenArmDriver()
    try:
        driver.configure(trossen_arm.Model.wxai_v0, trossen_arm.StandardEndEffector.wxai_v0_leader, ip, False)
        finals[ip] = list(driver.get_all_positions())
        driver.cleanup()
    except Exception as exc:
        finals[ip] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:80]}"
out = {"wall_s": wall, "raised": raised, "errors_logged": errors, "final": finals}
if side == "ours":
    from app.trossen_arm import world
    out["simulated_s"] = world.simulated_time()
print("\\nRESULT " + json.dumps(out))  # input() prompts end without a newline
'''


def demo_text(git_dir: Path, name: str, side: str) -> str:
    """Trossen's demos/python/NAME.py from the git directory, addresses on the loopback, our import for ours."""
    text = subprocess.run(["git", "--git-dir", str(git_dir), "show", f"HEAD:demos/python/{name}.py"],
                          capture_output=True, text=True, check=True).stdout.replace("192.168.1.", "127.0.0.")
    return text.replace("\nimport trossen_arm\n", "\nimport app.trossen_arm as trossen_arm\n") if side == "ours" else text


def wait_for_port(host: str, port: int, timeout: float = 30.0) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        with socket.socket() as s:
            if s.connect_ex((host, port)) == 0:
                return
        time.sleep(0.2)
    raise RuntimeError(f"trossen-arm-sim did not listen on {host}:{port} within {timeout} s")


def start_servers(venv: Path, ips: list[str], logs: Path) -> list[subprocess.Popen]:
    """One trossen-arm-sim per address, bound to it (and its collision WebSocket on a port of its own)."""
    servers = []
    for k, ip in enumerate(ips):
        assert ip.startswith("127."), ip  # never anything but the loopback
        out = open(logs / f"server_{ip}.log", "w")  # noqa: SIM115 (closed with the process)
        servers.append(subprocess.Popen([str(venv / "bin" / "trossen-arm-sim"), "--host", ip, "--ws-port",
                                         str(18765 + k)], stdout=out, stderr=subprocess.STDOUT))
        wait_for_port(ip, TCP_PORT)
    return servers


def run_side(side: str, name: str, args, work: Path) -> dict:
    """One demo on one side; its RESULT line as a dict (its output's tail where it printed none)."""
    demo, wrapper = work / f"{name}_{side}.py", work / "wrapper.py"
    demo.write_text(demo_text(args.git_dir, name, side))
    wrapper.write_text(WRAPPER)
    ips = DEMOS[name]
    python = sys.executable if side == "ours" else str(args.venv / "bin" / "python")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "APP_TROSSEN_TIME_SCALE": "1", "MPLBACKEND": "Agg"}
    servers = start_servers(args.venv, ips, work) if side == "theirs" else []
    try:
        done = subprocess.run([python, str(wrapper), side, str(demo), ",".join(ips)], cwd=work, env=env,
                              input="\n" * 10, capture_output=True, text=True, timeout=args.timeout, check=False)
    finally:
        for server in servers:
            server.terminate()
            server.wait(timeout=10)
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    if not lines:
        return {"failed": (done.stdout + done.stderr)[-400:]}
    return json.loads(lines[-1][len("RESULT "):])


def row(name: str, ours: dict, theirs: dict) -> str:
    def joints(result: dict) -> str:
        finals = result.get("final", {})
        return "; ".join(v if isinstance(v, str) else "[" + ", ".join(f"{x:.3f}" for x in v) + "]"
                         for v in finals.values()) or result.get("failed", "?")[:80]

    def gap() -> str:
        a, b = ours.get("final", {}), theirs.get("final", {})
        diffs = [np.abs(np.subtract(a[ip], b[ip])).max() for ip in a if ip in b and not isinstance(a[ip], str)
                 and not isinstance(b[ip], str)]
        return f"{max(diffs):.3g}" if diffs else "-"

    def said(result: dict) -> str:
        return f"{result.get('raised', '?')}; {len(result.get('errors_logged', []))} error lines"

    return (f"| {name} | {ours.get('wall_s', float('nan')):.1f} s ({ours.get('simulated_s', float('nan')):.1f} s sim) | "
            f"{theirs.get('wall_s', float('nan')):.1f} s | {joints(ours)} | {joints(theirs)} | {gap()} | "
            f"{said(ours)} | {said(theirs)} |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--git-dir", type=Path, default=Path(os.environ.get("TROSSEN_ARM_GIT_DIR", "")),
                        help="a git directory of TrossenRobotics/trossen_arm (default: $TROSSEN_ARM_GIT_DIR)")
    parser.add_argument("--venv", type=Path, default=Path("/work/venv-tasim"),
                        help="the venv holding trossen-arm-sim and trossen-arm")
    parser.add_argument("--demos", nargs="*", default=list(DEMOS), choices=list(DEMOS))
    parser.add_argument("--timeout", type=float, default=180.0, help="seconds per demo and side")
    parser.add_argument("--json", type=Path, default=None, help="also write every result here")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    results = {}
    with tempfile.TemporaryDirectory(prefix="compare_trossen_") as tmp:
        for name in args.demos:
            results[name] = {side: run_side(side, name, args, Path(tmp)) for side in ("ours", "theirs")}
            log.info("%s done", name)
    print("| demo | ours: wall (simulated) | trossen-arm-sim: wall | ours: final joints | trossen-arm-sim: final "
          "joints | max gap | ours: raised; logged | trossen-arm-sim: raised; logged |")
    print("|---|---|---|---|---|---|---|---|")
    for name, r in results.items():
        print(row(name, r["ours"], r["theirs"]))
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
