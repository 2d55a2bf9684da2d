#!/usr/bin/env bash
# Installs every Debian package Bobao needs to build, run, test and benchmark. Idempotent.
#   scripts/install-deps.sh [--pipewire | --run]
# --run (scripts/run.sh) installs only what building and running need, and a PulseAudio only when
# PipeWire's PulseAudio server is not installed (a desktop's sound server is left alone).
# --pipewire adds PipeWire with its PulseAudio server, which scripts/test.sh and scripts/bench-latency.sh
# run privately as a second sound server. Only they ask for it: on a desktop, installing pipewire-pulse
# enables its user service for every login, where it competes with PulseAudio for the same socket.
set -euo pipefail

packages=(
    pkg-config
    libespeak-ng-dev espeak-ng-data  # the synthesizer (C API) and its data
    libsqlite3-dev                   # the durable spool
    libcjson-dev                     # cJSON, for the protocol's JSON lines
    espeak-ng                        # the CLI: reference for tests and benchmarks only
    libpulse-dev                     # the player (libpulse's native protocol)
    libsystemd-dev                   # sd_notify: readiness and the watchdog under systemd
    libmicrohttpd-dev                # the HTTP server (--http)
    libmosquitto-dev                 # the MQTT client (--mqtt)
    mosquitto mosquitto-clients      # a private broker and mosquitto_pub/_sub for the MQTT tests (its daemon is kept from starting: below)
    pulseaudio pulseaudio-utils      # a sound server and pactl/parec for tests and headless boxes
    sox                              # soxi, for checking rendered files
    netcat-openbsd                   # nc, as users send text
    curl                             # the tests send HTTP to the line port, as a mistaken client would
    speech-dispatcher speech-dispatcher-espeak-ng  # the latency benchmark's peer
    hey                              # HTTP load generator: POST /announce requests per second (scripts/bench-http.sh)
    dpkg-dev lintian                 # scripts/package-deb.sh (dpkg-shlibdeps) and its test (lintian)
    systemd                          # systemd-analyze verify, for the package's units
    prometheus                       # promtool check metrics, for MetricsTests (its daemon is kept from starting: below)
    chromium python3-websockets      # the web console's browser test (scripts/console-check.py over DevTools)
    fonts-wqy-microhei               # a CJK font, so the console's screenshots show Chinese, not boxes
)
if [ "${1:-}" = --run ]; then
    packages=(
        pkg-config libespeak-ng-dev espeak-ng-data libsqlite3-dev libcjson-dev libpulse-dev libsystemd-dev
        libmicrohttpd-dev libmosquitto-dev
        pulseaudio-utils  # pactl: which sound server answers, and its sinks
    )
    if ! dpkg-query -W -f='${Status}' pipewire-pulse 2>/dev/null | grep -q "install ok installed"; then
        packages+=(pulseaudio)  # a sound server for a headless box
    fi
elif [ "${1:-}" = --pipewire ]; then
    packages+=(
        pipewire pipewire-pulse wireplumber  # the second sound server of the tests and the latency benchmark
        dbus                                 # wireplumber's session bus
    )
fi

missing=()
for package in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ ${#missing[@]} -eq 0 ]; then
    exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
echo "install-deps: installing ${missing[*]}" >&2
$sudo apt-get update -qq
# Only promtool is wanted from the prometheus package, and only the broker program from mosquitto (the tests
# start their own): their daemons (which would listen on :9090 and :1883 from now on) are kept from starting
# while they install, and from starting at boot.
policy=/usr/sbin/policy-rc.d
made_policy=""
if [[ " ${missing[*]} " == *" prometheus "* || " ${missing[*]} " == *" mosquitto "* ]] && [ ! -e "$policy" ]; then
    printf '#!/bin/sh\n# scripts/install-deps.sh: no daemon starts while it installs packages\nexit 101\n' | $sudo tee "$policy" >/dev/null
    $sudo chmod 755 "$policy"
    made_policy=yes
fi
status=0
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2 || status=$?
if [ -n "$made_policy" ]; then
    $sudo rm -f "$policy"
    for unit in prometheus mosquitto; do
        if [[ " ${missing[*]} " == *" $unit "* ]]; then $sudo systemctl disable "$unit" >/dev/null 2>&1 || true; fi
    done
fi
exit "$status"
