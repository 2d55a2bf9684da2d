#!/usr/bin/env bash
# Load test: many clients, many idle connections, a slow-loris client, random garbage and a 10 MiB line
# against a release build on a private PulseAudio. Prints accepted/refused/lost, RSS and descriptors.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/release-build.sh
source scripts/pulse-private.sh
pulse_private_start load
log="$(mktemp /tmp/bobao-load.XXXXXX)"
"$bobao" serve --listen 127.0.0.1:0 --no-spool --queue 20000 --line-rate 0 --rate 450 --gap 0 \
    >"$log.out" 2>"$log" &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null; pulse_private_stop; rm -f "$log" "$log.out"' EXIT
until grep -q "listening on" "$log.out" 2>/dev/null; do sleep 0.05; done
export BOBAO_PORT="$(sed -n 's/.*://p' "$log.out" | head -1)" BOBAO_PID="$server"
python3 scripts/bench/load.py
