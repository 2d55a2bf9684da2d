#!/usr/bin/env bash
# Runs a Bobao server on this machine: installs the Debian packages, builds, finds or starts a sound
# server, and serves. Arguments go to `bobao serve` (e.g. --listen 127.0.0.1:7777 --voice zh).
set -euo pipefail
cd "$(dirname "$0")/.."

source scripts/release-build.sh

# Find the sound server this user would use; start one if there is none (a headless box after boot).
if ! pactl info >/dev/null 2>&1; then
    echo "run: no PulseAudio server answering; starting one" >&2
    pulseaudio --start --exit-idle-time=-1 --log-target=syslog
    pactl info >/dev/null  # fails loudly if it did not come up
fi
sink="$(pactl get-default-sink)"
echo "run: sound server $(pactl info | sed -n 's/^Server String: //p'), default sink $sink" >&2
if [ "$sink" = "auto_null" ]; then
    echo "run: the sound server found no sound card, so its default sink is a null sink: speech is played" \
        "but not heard. Plug in a speaker or pass --sink NAME (see pactl list short sinks)." >&2
fi

exec "$bobao" serve "$@"
