# Sourced by scripts/pulse-private.sh and scripts/pipewire-private.sh: waiting for a daemon to stop.

# Whether process $1 still runs. A zombie does not: a daemon that has forked away from this shell is
# reaped by init, which may take seconds to do it.
process_alive() {
    local state
    state="$(sed -n 's/^[0-9]* (.*) \([A-Z]\).*/\1/p' "/proc/$1/stat" 2>/dev/null)" || return 1
    [ -n "$state" ] && [ "$state" != Z ] && [ "$state" != X ]
}

# Stops process $1 (none when empty): SIGTERM, then SIGKILL if it is still there after 5 s; returns once it
# is gone.
process_end() {
    local pid="$1" waited=0
    [ -n "$pid" ] || return 0
    kill "$pid" 2>/dev/null || return 0
    while process_alive "$pid"; do
        if [ "$waited" -ge 100 ]; then
            echo "process_end: process $pid ignored SIGTERM for 5 s; killing it" >&2
            kill -KILL "$pid" 2>/dev/null || true
            waited=0
        fi
        sleep 0.05
        waited=$((waited + 1))
    done
    wait "$pid" 2>/dev/null || true  # reaps it when it is this shell's child
}
