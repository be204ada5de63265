#!/bin/bash
# Run the CLI with --gui, press KEY (an xdotool key name) in PyBullet's window once it is up, report the exit
# code. Usage (with DISPLAY set, e.g. under xvfb-run): tests/gui/cli_keys.sh OUT_DIR KEY [CONFIG] (KEY SIGINT: send SIGINT instead)
out=$1; key=$2; config=${3:-configs/single_ik.yaml}
set -m  # job control: a background job of a shell without it starts with SIGINT ignored, as no terminal does
log=$(mktemp)
python -m app.run "$config" --gui --out "$out" 2> >(tee "$log" >&2) &
pid=$!
for _ in $(seq 1 120); do
  win=$(xdotool search --onlyvisible --name "Bullet" 2>/dev/null | head -1); [ -n "$win" ] && break; sleep 0.5
done
[ -z "$win" ] && { echo "no window"; kill -9 $pid; exit 90; }
for _ in $(seq 1 600); do grep -q "the run has begun" "$log" && break; sleep 0.1; done  # its first tick ran
if [ "$key" = "SIGINT" ]; then kill -INT $pid; else
  xdotool windowfocus "$win"; xdotool keydown "$key"; sleep 0.2; xdotool keyup "$key"; fi
for _ in $(seq 1 60); do kill -0 $pid 2>/dev/null || break; sleep 0.5; done
kill -0 $pid 2>/dev/null && { echo "did not quit"; kill -9 $pid; exit 91; }
wait $pid
