#!/usr/bin/env bash
# The HTTP port next to the line port, on a release build of `bobao serve --http`:
# - onset latency (text sent -> first sound at a private null sink's monitor, as scripts/bench-latency.sh
#   measures it) of a line and of POST /announce, in turn on one server, on PulseAudio then on PipeWire;
# - POST /announce requests per second with `hey` (32 kept-alive connections x 500), with --no-spool and
#   with a spool, next to the line port's acks per second at the same count and concurrency.
# Takes about 2 minutes on 2 cores after the build. BENCH_RUNS (20), BENCH_HTTP_CONNECTIONS (32),
# BENCH_HTTP_EACH (500) and BENCH_HTTP_ROUNDS (3) change the counts; BENCH_SERVERS="pulseaudio" or
# "pipewire" measures onset on one server only. scripts/bench/http_port.py says how each figure is made.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/bench/sound-servers.sh bench-http

measured=()
for server in ${BENCH_SERVERS:-pulseaudio pipewire}; do
    sound_server_start "$server"
    python3 scripts/bench/http_port.py onset "$figures/$server.json"
    sound_server_stop
    measured+=("$figures/$server.json")
done
python3 scripts/bench/http_port.py throughput "$figures/throughput.json"
python3 scripts/bench/http_port.py report "${measured[@]}" "$figures/throughput.json"
