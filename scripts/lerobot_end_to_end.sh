#!/usr/bin/env bash
# LeRobot end to end, offline, in venvs of their own (not CI): record a small camera dataset with app.record,
# load it with lerobot 0.4.4 (Python 3.11) and the newest lerobot (Python 3.12) via scripts/check_lerobot.py,
# train a tiny ACT policy on the CPU with lerobot-train (0.4.4), evaluate it with app.eval --lerobot-policy
# and with lerobot-eval through our env plugin (plugins/lerobot_env_widowx_ai): on 0.4.4 named by
# --env.discover_packages_path, on 0.6+ found by its distribution name.
#
# Usage: scripts/lerobot_end_to_end.sh [OUT]     (default OUT: /tmp/lerobot_e2e; every step's log is kept there)
# Environment: LEROBOT_044 (default /work/venv-lerobot044), LEROBOT_NEW (default /work/venv-lerobot-new), the
# venvs' roots; EPISODES (4), STEPS (200, training steps), EVAL_EPISODES (4).
# The venvs need lerobot and our runtime dependencies (numba, pybullet, osqp, imageio-ffmpeg, scipy, matplotlib,
# pillow, psutil, h5py, pyarrow); this repository is put on PYTHONPATH (never installed editable), the plugin is
# pip-installed into each venv (a normal, non-editable install).
# A tiny policy's success rate is low (0 % expected): the check is that every command runs and writes its results.
set -euo pipefail

REPO="$(cd "$(dirname "$0")/.." && pwd)"
OUT="${1:-/tmp/lerobot_e2e}"
V044="${LEROBOT_044:-/work/venv-lerobot044}"
VNEW="${LEROBOT_NEW:-/work/venv-lerobot-new}"
EPISODES="${EPISODES:-4}"
STEPS="${STEPS:-200}"
EVAL_EPISODES="${EVAL_EPISODES:-4}"
export PYTHONPATH="$REPO" HF_HUB_OFFLINE=1 WANDB_MODE=disabled
mkdir -p "$OUT"
rm -rf "$OUT/ds" "$OUT/train" "$OUT/eval_app" "$OUT/eval_lerobot044" "$OUT/eval_lerobot_new"

step() { echo; echo "== $1"; shift; echo "\$ $*"; }
tail_of() { grep -v -e 'it/s' -e 's/it' "$1" | tail -n "${2:-4}" | cut -c1-400; }

# a small camera config: pick_place_cameras.yaml with its two cameras at 128 x 96 (CPU training in minutes)
"$V044/bin/python" - "$REPO" "$OUT/pick_place_small.yaml" <<'EOF'
import re, sys
repo, out = sys.argv[1:]
src = open(f"{repo}/configs/pick_place_cameras.yaml").read()
src = src.replace("scene: scenes/pick_place.yaml", f"scene: {repo}/scenes/pick_place.yaml")
src = re.sub(r"width: 640\n(\s+)height: 480", r"width: 128\n\1height: 96", src)
open(out, "w").write(src)
EOF
CFG="$OUT/pick_place_small.yaml"

step "record $EPISODES episodes (app.record)" python -m app.record "$CFG" --episodes "$EPISODES" --out "$OUT/ds"
"$V044/bin/python" -m app.record "$CFG" --episodes "$EPISODES" --out "$OUT/ds" > "$OUT/record.log" 2>&1
tail_of "$OUT/record.log" 2

for V in "$V044" "$VNEW"; do
  step "load it with $("$V/bin/python" -c 'import importlib.metadata as m; print("lerobot", m.version("lerobot"))')" \
    python scripts/check_lerobot.py "$OUT/ds" --episodes "$EPISODES"
  "$V/bin/python" "$REPO/scripts/check_lerobot.py" "$OUT/ds" --episodes "$EPISODES" > "$OUT/check_$(basename "$V").log" 2>&1
  echo "$(grep -c '^ok ' "$OUT/check_$(basename "$V").log" || true) checks ok; $(grep -c '^FAIL' "$OUT/check_$(basename "$V").log" || true) failed"
  tail_of "$OUT/check_$(basename "$V").log" 1
done

TRAIN=(--dataset.repo_id=local/widowx_pick --dataset.root="$OUT/ds" --dataset.video_backend=pyav
  --policy.type=act --policy.dim_model=64 --policy.n_heads=2 --policy.dim_feedforward=128
  --policy.n_encoder_layers=1 --policy.n_decoder_layers=1 --policy.chunk_size=10 --policy.n_action_steps=10
  --policy.use_vae=false --policy.pretrained_backbone_weights=null --policy.device=cpu --policy.push_to_hub=false
  --batch_size=4 --steps="$STEPS" --save_freq="$STEPS" --log_freq=50 --num_workers=0 --output_dir="$OUT/train"
  --wandb.enable=false)
step "train a tiny ACT for $STEPS steps on the CPU (lerobot 0.4.4)" lerobot-train "${TRAIN[@]}"
"$V044/bin/lerobot-train" "${TRAIN[@]}" > "$OUT/train.log" 2>&1
grep -o 'step:[0-9]* smpl.*loss:[0-9.]*' "$OUT/train.log" | tail -n 4
POLICY="$OUT/train/checkpoints/last/pretrained_model"
ls "$POLICY"

step "app.eval --lerobot-policy (lerobot 0.4.4)" python -m app.eval "$CFG" --lerobot-policy "$OUT/train" \
  --episodes "$EVAL_EPISODES" --videos 1 --out "$OUT/eval_app"
"$V044/bin/python" -m app.eval "$CFG" --lerobot-policy "$OUT/train" --episodes "$EVAL_EPISODES" --videos 1 \
  --out "$OUT/eval_app" > "$OUT/eval_app.log" 2>&1
tail_of "$OUT/eval_app.log" 2

"$V044/bin/pip" install -q --no-deps "$REPO/plugins/lerobot_env_widowx_ai"
"$VNEW/bin/pip" install -q --no-deps "$REPO/plugins/lerobot_env_widowx_ai"
rm -rf "$REPO/plugins/lerobot_env_widowx_ai/build" "$REPO/plugins/lerobot_env_widowx_ai/"*.egg-info

EVAL=(--policy.path="$POLICY" --env.type=widowx_ai --env.config="$CFG" --eval.n_episodes="$EVAL_EPISODES"
  --eval.batch_size=2 --policy.device=cpu)
step "lerobot-eval 0.4.4 (plugin named by --env.discover_packages_path)" lerobot-eval \
  --env.discover_packages_path=lerobot_env_widowx_ai "${EVAL[@]}" --output_dir="$OUT/eval_lerobot044"
"$V044/bin/lerobot-eval" --env.discover_packages_path=lerobot_env_widowx_ai "${EVAL[@]}" \
  --output_dir="$OUT/eval_lerobot044" > "$OUT/eval_lerobot044.log" 2>&1
grep -A1 'Overall Aggregated Metrics' "$OUT/eval_lerobot044.log" | tail -n 1 | cut -c1-300

step "lerobot-eval $("$VNEW/bin/python" -c 'import importlib.metadata as m; print(m.version("lerobot"))') (plugin found by its name)" \
  lerobot-eval "${EVAL[@]}" --output_dir="$OUT/eval_lerobot_new"
"$VNEW/bin/lerobot-eval" "${EVAL[@]}" --output_dir="$OUT/eval_lerobot_new" > "$OUT/eval_lerobot_new.log" 2>&1
grep 'Aggregated Metrics for overall' -A1 "$OUT/eval_lerobot_new.log" | tail -n 1 | cut -c1-300
ls "$OUT"/eval_lerobot044/eval_info.json "$OUT"/eval_lerobot_new/eval_info.json "$OUT"/eval_app/eval_info.json
# the Stationary AI's handover, state only (observation.state + observation.environment_state, no cameras): a
# 14-value ACT trained on app.record's episodes, evaluated by app.eval at 1 and 2 environments a world (the
# per-episode results compared) and by the newest lerobot-eval through the plugin's stationary_ai_handover
H="$OUT/handover"; rm -rf "$H"; mkdir -p "$H"
step "handover: record $EPISODES episodes, state only" python -m app.record configs/handover.yaml --cameras none
"$V044/bin/python" -m app.record "$REPO/configs/handover.yaml" --episodes "$EPISODES" --cameras none --out "$H/ds" \
  > "$H/record.log" 2>&1
tail_of "$H/record.log" 1
HTRAIN=(--dataset.repo_id=local/handover --dataset.root="$H/ds" --output_dir="$H/train")
for A in "${TRAIN[@]}"; do
  case "$A" in --dataset.repo_id=*|--dataset.root=*|--output_dir=*) ;; *) HTRAIN+=("$A") ;; esac
done
step "handover: train a tiny ACT on state and environment_state (lerobot 0.4.4)" lerobot-train "${HTRAIN[@]}"
"$V044/bin/lerobot-train" "${HTRAIN[@]}" > "$H/train.log" 2>&1
grep -o 'step:[0-9]* smpl.*loss:[0-9.]*' "$H/train.log" | tail -n 2
for N in 1 2; do
  step "handover: app.eval --lerobot-policy --num-envs $N" python -m app.eval configs/handover.yaml --obs-type state
  "$V044/bin/python" -m app.eval "$REPO/configs/handover.yaml" --lerobot-policy "$H/train" --obs-type state \
    --episodes "$EVAL_EPISODES" --num-envs "$N" --seed 1000 --out "$H/eval_n$N" > "$H/eval_n$N.log" 2>&1
  tail_of "$H/eval_n$N.log" 2
done
"$V044/bin/python" - "$H" <<'EOF2'
import json, sys
a, b = (json.load(open(f"{sys.argv[1]}/eval_n{n}/eval_info.json"))["per_episode"] for n in (1, 2))
same = [(x["success"], x["reason"], x["steps"]) == (y["success"], y["reason"], y["steps"]) for x, y in zip(a, b)]
gap = max(abs(x["place_error_m"] - y["place_error_m"]) for x, y in zip(a, b))
print(f"1 vs 2 environments a world: {sum(same)}/{len(same)} episodes alike in outcome, reason and steps; "
      f"place error differs by at most {1e3 * gap:.3f} mm")
EOF2
step "handover: lerobot-eval (newest, plugin env stationary_ai_handover)" lerobot-eval --env.type=stationary_ai_handover
"$VNEW/bin/lerobot-eval" --policy.path="$H/train/checkpoints/last/pretrained_model" --env.type=stationary_ai_handover \
  --env.obs_type=state --eval.n_episodes="$EVAL_EPISODES" --eval.batch_size=2 --policy.device=cpu \
  --output_dir="$H/eval_lerobot_new" > "$H/eval_lerobot_new.log" 2>&1
grep 'Aggregated Metrics for overall' -A1 "$H/eval_lerobot_new.log" | tail -n 1 | cut -c1-300

echo; echo "lerobot end to end: every step ran; logs in $OUT"
