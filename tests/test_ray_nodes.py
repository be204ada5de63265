"""A run given a cluster's address (``--ray-address``) shards over the cluster's nodes with the same code as on one
machine: two Ray nodes started here with Ray's own ``ray start`` (each on its own ports, one CPU each, on the
loopback address), and an ``app.run`` that joins them."""

import contextlib
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import psutil
import pytest

from tests.conftest import ROOT, runs

PORT_FLAGS = ("--node-manager-port", "--object-manager-port", "--min-worker-port", "--max-worker-port",
              "--dashboard-agent-listen-port", "--dashboard-agent-grpc-port", "--metrics-export-port",
              "--runtime-env-agent-port")


def _free_ports(n: int) -> list[int]:
    """``n`` ports nothing listens on now (the OS's choice: bound, read, released)."""
    socks = [socket.socket() for _ in range(n)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


WORKER_PORTS = 64  # each node's worker port range
_ranges_given: list[int] = []


def _free_range(n: int) -> int:
    """The first of ``n`` consecutive free ports below Linux's ephemeral range (32768..), where the OS picks the
    single ports of _free_ports: a range drawn among those could hold one of them (Ray then refuses to start:
    "worker_ports is trying to use a port number ... used by other components"). Ranges given earlier are avoided."""
    rng = secrets.SystemRandom()
    for _ in range(200):
        base = rng.randrange(20000, 32768 - n)
        if any(abs(base - other) < n for other in _ranges_given):
            continue
        try:
            for port in range(base, base + n):
                with socket.socket() as sock:
                    sock.bind(("127.0.0.1", port))
        except OSError:
            continue
        _ranges_given.append(base)
        return base
    raise AssertionError(f"no {n} consecutive free ports in 20000..32767")


class Node:
    """``ray start --block`` in a process group of its own: its processes end with the group."""

    def __init__(self, ray_cli: str, args: list[str], env: dict):
        ports = _free_ports(len(PORT_FLAGS) + 1)
        ports[2] = _free_range(WORKER_PORTS + 1)  # a worker port range, not one port, apart from the others
        ports[3] = ports[2] + WORKER_PORTS
        own = [x for flag, port in zip(PORT_FLAGS, ports) for x in (flag, str(port))]
        self.proc = subprocess.Popen([ray_cli, "start", "--block", "--num-cpus", "1", "--node-ip-address", "127.0.0.1",
                                      "--disable-usage-stats", *own, *args], stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True, env=env, start_new_session=True)
        self.lines: list[str] = []
        for line in self.proc.stdout:  # until the node says it is up (or the command ends)
            self.lines.append(line)
            if "Ray runtime started" in line:
                return
        raise AssertionError(f"ray start ended: {''.join(self.lines)[-2000:]}")

    def stop(self) -> None:
        """SIGINT to its process group, as a Ctrl-C ends `ray start --block` (it lets a SIGTERM wait 30 s and more);
        wait for it with :meth:`wait`."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGINT)

    def wait(self) -> None:
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)


@pytest.mark.slow
def test_a_run_given_a_clusters_address_shards_over_both_of_its_nodes(tmp_path):
    """A head node and a second node, one CPU each: ``app.run --workers 2 --ray-address`` (this process taking no
    block, APP_SCALE_LOCAL=0) puts one actor on each: the report's scale block counts blocks on two nodes, and
    every environment is in the merged report (tests/test_scale.py checks that a sharded report is the one
    process's); no process of either node is left after they are stopped."""
    pytest.importorskip("ray")
    ray_cli = shutil.which("ray") or str(Path(sys.executable).with_name("ray"))
    if not Path(ray_cli).is_file():
        pytest.skip("Ray's command line (ray) is not installed beside this Python")
    temp = tempfile.mkdtemp(prefix="app-test-nodes-", dir="/tmp")  # short: Ray's socket paths have a length limit
    # token authentication on, as on a cluster: every node and the command given the cluster's token
    env = {**os.environ, "PYTHONPATH": str(ROOT), "RAY_ADDRESS": "", "RAY_AUTH_MODE": "token",
           "RAY_AUTH_TOKEN": secrets.token_hex(16)}
    gcs = _free_ports(1)[0]
    nodes = []
    try:
        nodes.append(Node(ray_cli, ["--head", "--port", str(gcs), "--include-dashboard", "false",
                                    "--temp-dir", temp], env))
        nodes.append(Node(ray_cli, ["--address", f"127.0.0.1:{gcs}"], env))
        sharded = subprocess.run([sys.executable, "-m", "app.run", "configs/single_ik.yaml", "--n-envs", "6",
                                  "--duration", "0.5", "--no-video", "--workers", "2", "--ray-address",
                                  f"127.0.0.1:{gcs}", "--out", str(tmp_path / "two")], cwd=ROOT, capture_output=True,
                                 text=True, timeout=240,
                                 env={**env, "APP_SCALE_LOCAL": "0"}, check=False)
        assert sharded.returncode == 0, sharded.stderr[-2000:]
    finally:
        for node in nodes:  # both at once
            node.stop()
        for node in nodes:
            node.wait()
        ours = [p for p in psutil.process_iter() if runs(p, temp)]  # the nodes' processes name their folder
        _, alive = psutil.wait_procs(ours, timeout=60)  # Ray's processes end on their own after the SIGINT
        left = [" ".join(p.cmdline())[:100] for p in alive]
        for p in alive:
            p.kill()
        shutil.rmtree(temp, ignore_errors=True)
    assert not left, f"processes of the two nodes left running: {left}"
    report = json.loads((tmp_path / "two" / "report.json").read_text())
    per_node = report["scale"]["blocks_per_node"]
    assert len(per_node) == 2 and all(n >= 1 for n in per_node.values()), per_node
    assert report["scale"]["blocks_here"] == 0 and sum(per_node.values()) == len(report["scale"]["blocks"])
    assert report["summary"]["n_envs"] == 6 and len(report["environments"]) == 6  # every block merged
