"""LeRobot's own trainer (``lerobot-train``, run as ``python -m lerobot.scripts.lerobot_train`` in this Python)
on a demonstration dataset, as a child process this command watches: its checkpoints as they are completed,
its log lines, and a time budget (``--train-minutes``) after which it is stopped, keeping every finished
checkpoint. Nothing leaves the machine: the Hub is switched off (``HF_HUB_OFFLINE``), no push, no wandb.

The policy presets are ours, measured on the 2-core CPU (docs/learning.md): lerobot's defaults are made for
ALOHA's 50 Hz cameras on a GPU (ACT: 512-wide, 4 encoder layers, learning rate 1e-5, 100-step chunks), which on
a CPU learn a state-only task too slowly. Any ``--policy.*`` or trainer option given after ``--`` on the command
line is passed on as is and wins over a preset. ACT's preset has no VAE: the scripted expert is one deterministic
function of the scene, and without the VAE's encoder ACT trains ~2.5x the steps a minute here (docs/learning.md).
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import NamedTuple

PRESETS = {  # lerobot-train options per policy type (the ``--policy.`` prefix added)
    "act": {"dim_model": 256, "n_heads": 8, "dim_feedforward": 1024, "n_encoder_layers": 4, "n_decoder_layers": 1,
            "chunk_size": 40, "n_action_steps": 40, "use_vae": "false", "optimizer_lr": 1e-4,
            "optimizer_lr_backbone": 1e-5, "pretrained_backbone_weights": "null"},
    "diffusion": {"n_obs_steps": 2, "horizon": 16, "n_action_steps": 8, "down_dims": "[128,256,512]",
                  "num_inference_steps": 10, "optimizer_lr": 1e-4, "pretrained_backbone_weights": "null",
                  "crop_shape": "null"},
}
TRAINER = {"batch_size": 32, "num_workers": 0, "log_freq": 100, "eval_freq": 0}
# ACT's learning rate decays (cosine, after a warm-up) instead of lerobot's constant one: with a constant 1e-4 the
# success of successive checkpoints swung 40 -> 12 -> 36 %; decayed, 26 -> 62 -> ... % (docs/learning.md)
SCHEDULES = {"act": {"use_policy_training_preset": "false", "optimizer.type": "adamw", "optimizer.lr": 1e-4,
                     "optimizer.weight_decay": 1e-4, "optimizer.grad_clip_norm": 10.0,
                     "scheduler.type": "cosine_decay_with_warmup", "scheduler.num_warmup_steps": 500,
                     "scheduler.peak_lr": 1e-4, "scheduler.decay_lr": 1e-6}}
CPU_STEPS_PER_S = 5.5  # ACT's preset on 2 cores (measured 5.6: 0.112 s an update, 0.066 s loading 40-step chunks):
# a time budget's decay steps, when not given
STEP_LINE = re.compile(r"step:(\S+) .*loss:(\S+)")


class Checkpoint(NamedTuple):
    """A finished checkpoint: its training step, the minutes of training when it was seen, its policy folder."""

    step: int
    minutes: float
    folder: Path


def train_command(dataset: Path, out: Path, policy: str, steps: int, save_every: int, seed: int,
                  extra: list[str], decay_steps: int | None = None) -> list[str]:
    """The lerobot-train command line (list of arguments) for ``policy`` on ``dataset`` into ``out``; a policy with
    a SCHEDULES entry decays its learning rate over ``decay_steps`` (default ``steps``)."""
    args = [sys.executable, "-m", "lerobot.scripts.lerobot_train", "--dataset.repo_id=local/app_learn",
            f"--dataset.root={dataset}", "--dataset.video_backend=pyav", f"--policy.type={policy}",
            "--policy.device=cpu", "--policy.push_to_hub=false", f"--output_dir={out}", f"--steps={steps}",
            f"--save_freq={save_every}", f"--seed={seed}", "--wandb.enable=false"]
    given = {a.split("=", 1)[0] for a in extra}
    preset = {f"--policy.{k}": v for k, v in PRESETS[policy].items()} | {f"--{k}": v for k, v in TRAINER.items()}
    if policy in SCHEDULES:
        preset |= {f"--{k}": v for k, v in SCHEDULES[policy].items()}
        preset["--scheduler.num_decay_steps"] = int(decay_steps or steps)
    args += [f"{k}={v}" for k, v in preset.items() if k not in given]
    return args + list(extra)


class Trainer:
    """lerobot-train running as a child process (see the module docstring); ``log_path`` gets its output."""

    def __init__(self, command: list[str], out: Path, log_path: Path):
        self.out, self.log_path = Path(out), Path(log_path)
        env = dict(os.environ, HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", WANDB_MODE="disabled",
                   TOKENIZERS_PARALLELISM="false")
        self.log = open(self.log_path, "w")
        self.t0 = time.monotonic()
        self.proc = subprocess.Popen(command, stdout=self.log, stderr=subprocess.STDOUT, env=env,
                                     start_new_session=True)
        self.seen: dict[int, Checkpoint] = {}
        self.paused_s = 0.0  # time the trainer was stopped (while a checkpoint was evaluated)

    @property
    def minutes(self) -> float:
        """Training time [min]: since the start, less the pauses."""
        return (time.monotonic() - self.t0 - self.paused_s) / 60.0

    @contextlib.contextmanager
    def paused(self):
        """The trainer stopped (SIGSTOP to its process group) for the block, then continued (SIGCONT); the pause
        is not training time. On 2 cores an evaluation beside lerobot-train slowed its updates many times over
        (torch's threads wait for a core), and the budget paid for it."""
        if not self.running():
            yield
            return
        t = time.monotonic()
        os.killpg(self.proc.pid, signal.SIGSTOP)
        try:
            yield
        finally:
            if self.running():
                os.killpg(self.proc.pid, signal.SIGCONT)
            self.paused_s += time.monotonic() - t

    def running(self) -> bool:
        return self.proc.poll() is None

    def new_checkpoints(self) -> list[Checkpoint]:
        """Checkpoints finished since the last call, oldest first. A checkpoint is finished once lerobot points
        ``checkpoints/last`` at it or at a later one (it moves the link after the save), or the trainer has
        ended."""
        root = self.out / "checkpoints"
        if not root.is_dir():
            return []
        last = root / "last"
        done_to = int(last.resolve().name) if last.exists() and last.resolve().name.isdigit() else -1
        if not self.running():
            done_to = max([int(p.name) for p in root.iterdir() if p.name.isdigit()], default=-1)
        found = []
        for p in sorted((p for p in root.iterdir() if p.name.isdigit()), key=lambda p: int(p.name)):
            step = int(p.name)
            if step <= done_to and step not in self.seen and (p / "pretrained_model" / "model.safetensors").is_file():
                self.seen[step] = Checkpoint(step, round(self.minutes, 2), p / "pretrained_model")
                found.append(self.seen[step])
        return found

    def last_loss(self) -> tuple[str, str] | None:
        """(step, loss) of the trainer's latest log line, as it prints them; None before the first."""
        self.log.flush()
        lines = self.log_path.read_text(errors="replace").splitlines()[-50:]
        for line in reversed(lines):
            m = STEP_LINE.search(line)
            if m:
                return m.group(1), m.group(2)
        return None

    def stop(self) -> None:
        """Ends the trainer (SIGINT, then SIGKILL after 30 s); finished checkpoints stay."""
        if self.running():
            os.killpg(self.proc.pid, signal.SIGCONT)  # a paused trainer must run to take its SIGINT
            os.killpg(self.proc.pid, signal.SIGINT)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, 9)
                self.proc.wait()
        self.log.close()

    def failure(self) -> str | None:
        """The trainer's last error lines where it ended with a failure, else None."""
        code = self.proc.poll()
        if code in (None, 0):
            return None
        tail = [s for s in self.log_path.read_text(errors="replace").splitlines() if s.strip()][-3:]
        return f"lerobot-train exited with {code}: " + " | ".join(tail)
