#!/usr/bin/env bash
# Onset latency, idle cost and memory: Bobao next to speech-dispatcher and the espeak-ng CLI, in one run
# on one private PulseAudio null sink, then the same on a private PipeWire (pipewire-pulse) null sink,
# printed side by side. The PipeWire pass leaves out the 1,000 announcements of the memory figure.
# Takes about 15 minutes (BENCH_RUNS, BENCH_IDLE_SECONDS and BENCH_ANNOUNCEMENTS shorten it;
# BENCH_SERVERS="pulseaudio" or "pipewire" measures one server).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh --pipewire
source scripts/release-build.sh
export BOBAO="$bobao"

source scripts/pulse-private.sh
source scripts/pipewire-private.sh
figures="$(mktemp -d /tmp/bobao-bench-latency.XXXXXX)"
trap 'pulse_private_stop; pipewire_private_stop; rm -rf "$figures"' EXIT

# speech-dispatcher and espeak-ng find each server through PULSE_SERVER, exported by *_private_start.
measured=()
for server in ${BENCH_SERVERS:-pulseaudio pipewire}; do
    case "$server" in
    pulseaudio)
        pulse_private_start bench
        python3 scripts/bench/latency.py measure "$figures/pulseaudio.json"
        pulse_private_stop
        ;;
    pipewire)
        pipewire_private_start bench
        python3 scripts/bench/latency.py measure "$figures/pipewire.json" --no-memory
        pipewire_private_stop
        ;;
    *)
        echo "bench-latency: unknown sound server '$server' (pulseaudio, pipewire)" >&2
        exit 2
        ;;
    esac
    measured+=("$figures/$server.json")
done
python3 scripts/bench/latency.py report "${measured[@]}"
