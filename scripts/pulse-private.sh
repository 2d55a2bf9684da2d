#!/usr/bin/env bash
# Starts a private PulseAudio with one null sink, for tests and benchmarks, away from any user's server.
#   source scripts/pulse-private.sh; pulse_private_start [SINK_NAME]
#   then use $PULSE_SERVER and $BOBAO_TEST_SINK; call pulse_private_stop at the end.
# Its HOME and XDG_RUNTIME_DIR are a fresh temporary folder, so several can run side by side.
# Exports PULSE_SERVER, BOBAO_TEST_SINK, BOBAO_SOUND_SERVER=pulseaudio, BOBAO_PULSE_DIR and
# BOBAO_SOUND_SERVER_PIDS (the daemon's). scripts/pipewire-private.sh is the same for PipeWire.

source "$(dirname "${BASH_SOURCE[0]}")/process-util.sh"

pulse_private_start() {
    local sink="${1:-bobao_test}"
    BOBAO_PULSE_DIR="$(mktemp -d /tmp/bobao-pa.XXXXXX)"
    cat >"$BOBAO_PULSE_DIR/server.pa" <<PA
load-module module-native-protocol-unix auth-anonymous=1 socket=$BOBAO_PULSE_DIR/native
load-module module-null-sink sink_name=$sink
set-default-sink $sink
PA
    # --daemonize=yes returns only once the server accepts clients.
    if ! HOME="$BOBAO_PULSE_DIR" XDG_RUNTIME_DIR="$BOBAO_PULSE_DIR" pulseaudio -n -F "$BOBAO_PULSE_DIR/server.pa" \
        --exit-idle-time=-1 --daemonize=yes --use-pid-file=yes --log-target="file:$BOBAO_PULSE_DIR/pulseaudio.log"; then
        echo "pulse-private: PulseAudio did not start; its log:" >&2
        cat "$BOBAO_PULSE_DIR/pulseaudio.log" >&2 || true
        return 1
    fi
    export PULSE_SERVER="unix:$BOBAO_PULSE_DIR/native"
    export BOBAO_TEST_SINK="$sink"
    export BOBAO_PULSE_DIR
    export BOBAO_SOUND_SERVER=pulseaudio
    export BOBAO_SOUND_SERVER_PIDS="$(cat "$BOBAO_PULSE_DIR/pulse/pid")"
}

pulse_private_stop() {
    [ -n "${BOBAO_PULSE_DIR:-}" ] || return 0
    process_end "$(cat "$BOBAO_PULSE_DIR/pulse/pid" 2>/dev/null || true)"
    rm -rf "$BOBAO_PULSE_DIR"
    unset BOBAO_PULSE_DIR PULSE_SERVER BOBAO_TEST_SINK BOBAO_SOUND_SERVER BOBAO_SOUND_SERVER_PIDS
}
