#!/usr/bin/env bash
# Starts a private PipeWire with its PulseAudio server and one null sink, for tests and benchmarks, away
# from any user's session: the counterpart of scripts/pulse-private.sh.
#   source scripts/pipewire-private.sh; pipewire_private_start [SINK_NAME]
#   then use $PULSE_SERVER and $BOBAO_TEST_SINK; call pipewire_private_stop at the end.
# It runs a session D-Bus, pipewire, wireplumber (the session manager, which links streams to sinks) and
# pipewire-pulse, each with HOME, XDG_RUNTIME_DIR and the XDG config, state and data folders in one fresh
# temporary folder, so several can run side by side, as root or not, with or without a user session.
# Exports PULSE_SERVER, BOBAO_TEST_SINK, BOBAO_SOUND_SERVER=pipewire, BOBAO_PIPEWIRE_DIR and
# BOBAO_SOUND_SERVER_PIDS (pipewire's, wireplumber's and pipewire-pulse's: what the sound server costs).

source "$(dirname "${BASH_SOURCE[0]}")/process-util.sh"

# Sets _pipewire_private_env to the `env` command line that runs a program with the private folder as its
# whole world.
_pipewire_private_make_env() {
    local dir="$BOBAO_PIPEWIRE_DIR"
    _pipewire_private_env=(env -u PIPEWIRE_REMOTE -u PIPEWIRE_RUNTIME_DIR -u PULSE_RUNTIME_PATH -u PULSE_SERVER
        -u DISPLAY -u WAYLAND_DISPLAY HOME="$dir" XDG_RUNTIME_DIR="$dir" XDG_CONFIG_HOME="$dir/config"
        XDG_STATE_HOME="$dir/state" XDG_DATA_HOME="$dir/data" XDG_CACHE_HOME="$dir/cache"
        DBUS_SESSION_BUS_ADDRESS="unix:path=$dir/bus")
}

_pipewire_private_logs() {
    local log
    for log in "$BOBAO_PIPEWIRE_DIR"/*.log; do
        [ -s "$log" ] || continue
        echo "--- $log (last lines)" >&2
        tail -n 20 "$log" >&2
    done
}

# Polls (every 50 ms, for at most 10 s) until `pactl info` prints a line matching $1, failing early when a
# daemon has exited.
_pipewire_private_await() {
    local pattern="$1" tries=0 name
    while ! pactl info 2>/dev/null | grep -q "$pattern"; do
        for name in pipewire wireplumber pipewire-pulse; do
            if ! process_alive "$(cat "$BOBAO_PIPEWIRE_DIR/$name.pid" 2>/dev/null)"; then
                echo "pipewire-private: $name exited while waiting for '$pattern' from pactl info" >&2
                return 1
            fi
        done
        tries=$((tries + 1))
        if [ "$tries" -ge 200 ]; then
            echo "pipewire-private: no '$pattern' from pactl info within 10 s" >&2
            return 1
        fi
        sleep 0.05
    done
}

# Polls (every 50 ms, for at most 10 s) until pipewire answers `pw-cli info 0`.
_pipewire_private_await_core() {
    local tries=0 pid
    pid="$(cat "$BOBAO_PIPEWIRE_DIR/pipewire.pid")"
    until "${_pipewire_private_env[@]}" pw-cli info 0 >/dev/null 2>&1; do
        tries=$((tries + 1))
        if ! process_alive "$pid" || [ "$tries" -ge 200 ]; then
            echo "pipewire-private: pipewire did not answer pw-cli within 10 s" >&2
            return 1
        fi
        sleep 0.05
    done
}

pipewire_private_start() {
    local sink="${1:-bobao_test}" name
    BOBAO_PIPEWIRE_DIR="$(mktemp -d /tmp/bobao-pw.XXXXXX)"
    chmod 700 "$BOBAO_PIPEWIRE_DIR"
    mkdir -p "$BOBAO_PIPEWIRE_DIR"/{config/wireplumber/main.lua.d,state,data,cache}
    # WirePlumber would remember each stream's volume and target (restore-stream) and give a test's stream
    # the volume an earlier test's stream of the same name was left at; the tests' own servers do the same.
    echo 'stream_defaults.enabled = false' >"$BOBAO_PIPEWIRE_DIR/config/wireplumber/main.lua.d/51-bobao-test.lua"
    export BOBAO_PIPEWIRE_DIR
    export PULSE_SERVER="unix:$BOBAO_PIPEWIRE_DIR/pulse/native"
    _pipewire_private_make_env

    # --fork returns once the bus accepts connections.
    if ! "${_pipewire_private_env[@]}" dbus-daemon --session --address="unix:path=$BOBAO_PIPEWIRE_DIR/bus" \
        --fork --print-pid=1 >"$BOBAO_PIPEWIRE_DIR/dbus-daemon.pid" 2>"$BOBAO_PIPEWIRE_DIR/dbus-daemon.log"; then
        echo "pipewire-private: dbus-daemon did not start" >&2
        _pipewire_private_logs
        pipewire_private_stop
        return 1
    fi
    # wireplumber and pipewire-pulse give up at once when pipewire's socket does not answer, so they start
    # once `pw-cli info 0` gets an answer from it. Their output goes to files, never to the caller's pipes;
    # exec makes $! the daemon's own process id.
    for name in pipewire wireplumber pipewire-pulse; do
        exec "${_pipewire_private_env[@]}" "$name" </dev/null >"$BOBAO_PIPEWIRE_DIR/$name.log" 2>&1 &
        echo $! >"$BOBAO_PIPEWIRE_DIR/$name.pid"
        disown $!  # not a job of the caller's: its `wait` must not wait for the daemons
        if [ "$name" = pipewire ] && ! _pipewire_private_await_core; then
            _pipewire_private_logs
            pipewire_private_stop
            return 1
        fi
    done
    # The default sink is wireplumber's choice, not pipewire-pulse's: seeing it means the session manager
    # runs and links new streams to the sink (without it pactl info says "Default Sink: @DEFAULT_SINK@").
    if ! _pipewire_private_await "^Server Name: .*PipeWire" \
        || ! pactl load-module module-null-sink sink_name="$sink" >/dev/null \
        || ! pactl set-default-sink "$sink" \
        || ! _pipewire_private_await "^Default Sink: $sink\$"; then
        echo "pipewire-private: PipeWire did not start; its logs:" >&2
        _pipewire_private_logs
        pipewire_private_stop
        return 1
    fi
    export BOBAO_TEST_SINK="$sink"
    export BOBAO_SOUND_SERVER=pipewire
    export BOBAO_SOUND_SERVER_PIDS="$(cat "$BOBAO_PIPEWIRE_DIR"/{pipewire,wireplumber,pipewire-pulse}.pid | tr '\n' ' ')"
}

pipewire_private_stop() {
    [ -n "${BOBAO_PIPEWIRE_DIR:-}" ] || return 0
    local name
    for name in pipewire-pulse wireplumber pipewire dbus-daemon; do
        process_end "$(cat "$BOBAO_PIPEWIRE_DIR/$name.pid" 2>/dev/null)"
    done
    rm -rf "$BOBAO_PIPEWIRE_DIR"
    unset BOBAO_PIPEWIRE_DIR PULSE_SERVER BOBAO_TEST_SINK BOBAO_SOUND_SERVER BOBAO_SOUND_SERVER_PIDS
}
