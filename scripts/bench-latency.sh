#!/usr/bin/env bash
# Onset latency, idle cost and memory: Bobao next to speech-dispatcher and the espeak-ng CLI, in one run
# on one private PulseAudio null sink. Takes about 10 minutes (BENCH_RUNS, BENCH_IDLE_SECONDS and
# BENCH_ANNOUNCEMENTS shorten it).
set -euo pipefail
cd "$(dirname "$0")/.."

source scripts/release-build.sh
export BOBAO="$bobao"

source scripts/pulse-private.sh
pulse_private_start bench
trap pulse_private_stop EXIT
export BOBAO_PULSE_PID="$(cat "$BOBAO_PULSE_DIR/pulse/pid")"
# speech-dispatcher and espeak-ng find this server through PULSE_SERVER, exported above.
python3 scripts/bench/latency.py
