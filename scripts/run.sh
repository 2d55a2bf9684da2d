#!/usr/bin/env bash
# Runs a Bobao server on this machine: installs the Debian packages, checks for Swift 6, builds, finds or
# starts a sound server, and serves until stopped. Arguments go to `bobao serve` (e.g.
# --listen 127.0.0.1:7777 --voice zh).
# Ctrl-C (or SIGTERM/SIGHUP to this script) reaches Bobao once: it finishes the announcement being
# spoken and exits; a second one stops it at once. A PulseAudio this script started is stopped again
# when Bobao exits; one that was already running is left alone.
# shellcheck source-path=SCRIPTDIR/..
set -euo pipefail
cd "$(dirname "$0")/.."

source scripts/swift-toolchain.sh
swift_major="$(swift --version 2>/dev/null | sed -n 's/.*Swift version \([0-9][0-9]*\)\..*/\1/p' | head -n 1)"
if [ -z "$swift_major" ] || [ "$swift_major" -lt 6 ]; then
    echo "run: Bobao needs Swift 6 or later, and $(command -v swift) is" \
        "'$(swift --version 2>&1 | head -n 1)'. Install Swift 6 for Debian 12 from" \
        "https://www.swift.org/install/ (unpack it in /opt/swift, and put /opt/swift/usr/bin first on" \
        "PATH if an older swift is on it), then run this again." >&2
    exit 1
fi

install_deps_mode=--run
source scripts/release-build.sh

# Find the sound server this user would use; start one if there is none (a headless box after boot).
started_sound_server=no
if ! pactl info >/dev/null 2>&1; then
    if ! command -v pulseaudio >/dev/null; then
        echo "run: no sound server answers, and PulseAudio is not installed (PipeWire is): start the" \
            "session's sound server (systemctl --user start pipewire pipewire-pulse), or set PULSE_SERVER," \
            "then run this again" >&2
        exit 1
    fi
    echo "run: no PulseAudio server answering; starting one (stopped again when Bobao exits)" >&2
    pulseaudio --start --exit-idle-time=-1 --log-target=syslog
    started_sound_server=yes
    pactl info >/dev/null  # fails loudly if it did not come up
fi
# shellcheck disable=SC2317  # called by the EXIT trap
stop_sound_server() {
    if [ "$started_sound_server" = yes ]; then
        echo "run: stopping the PulseAudio server this script started" >&2
        pulseaudio --kill || true
    fi
}
trap stop_sound_server EXIT

sink="$(pactl get-default-sink)"
echo "run: sound server $(pactl info | sed -n 's/^Server String: //p'), default sink $sink" >&2
if [ "$sink" = "auto_null" ]; then
    echo "run: the sound server found no sound card, so its default sink is a null sink: speech is played" \
        "but not heard. Plug in a speaker or pass --sink NAME (see pactl list short sinks)." >&2
fi

# Bobao runs in a session of its own, so a Ctrl-C from the terminal reaches this script only, which hands
# it on exactly once (the terminal's and a forwarded one would be two: "stop at once").
bobao_pid=""
# shellcheck disable=SC2317  # called by the traps
forward() {
    if [ -n "$bobao_pid" ]; then kill -s "$1" "$bobao_pid" 2>/dev/null || true; fi
}
trap 'forward INT' INT
trap 'forward TERM' TERM
trap 'forward HUP' HUP
setsid "$bobao" serve "$@" &
bobao_pid=$!
# wait also returns when a trapped signal arrives; then Bobao is still stopping. Once it is gone, wait
# gives its exit status (bash keeps it).
while kill -0 "$bobao_pid" 2>/dev/null; do
    wait "$bobao_pid" || true
done
status=0
wait "$bobao_pid" || status=$?
exit "$status"
