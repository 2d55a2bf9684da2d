#!/usr/bin/env bash
# Onset latency, idle cost and memory: Bobao next to speech-dispatcher and the espeak-ng CLI, in one run
# on one private PulseAudio null sink, then the same on a private PipeWire (pipewire-pulse) null sink,
# printed side by side. The PipeWire pass leaves out the 1,000 announcements of the memory figure.
# Takes about 15 minutes (BENCH_RUNS, BENCH_IDLE_SECONDS and BENCH_ANNOUNCEMENTS shorten it;
# BENCH_SERVERS="pulseaudio" or "pipewire" measures one server).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/bench/sound-servers.sh bench-latency

# speech-dispatcher and espeak-ng find each server through PULSE_SERVER, exported by sound_server_start.
measured=()
for server in ${BENCH_SERVERS:-pulseaudio pipewire}; do
    sound_server_start "$server"
    if [ "$server" = pipewire ]; then
        python3 scripts/bench/latency.py measure "$figures/$server.json" --no-memory
    else
        python3 scripts/bench/latency.py measure "$figures/$server.json"
    fi
    sound_server_stop
    measured+=("$figures/$server.json")
done
python3 scripts/bench/latency.py report "${measured[@]}"
