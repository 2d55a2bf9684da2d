#!/usr/bin/env bash
# Acknowledgements per second and a second client's worst ack latency, spool on vs --no-spool (and, with
# FSYNC_DELAY_MS=200, on a spool whose fsync takes that long, like an SD card), against a release build.
# Speech is left out (no sound server): the figures are the line port's and the spool's.
#   scripts/bench-acks.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/release-build.sh
work="$(mktemp -d /tmp/bobao-acks.XXXXXX)"
trap 'rm -rf "$work"' EXIT

# An LD_PRELOAD library that makes fsync and fdatasync take FSYNC_DELAY_MS longer.
cat >"$work/slowsync.c" <<'C'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <time.h>
static void delay(void) {
    const char *ms = getenv("FSYNC_DELAY_MS");
    long value = ms ? atol(ms) : 0;
    struct timespec pause = { value / 1000, (value % 1000) * 1000000L };
    if (value > 0) nanosleep(&pause, NULL);
}
int fsync(int fd) { delay(); return ((int (*)(int))dlsym(RTLD_NEXT, "fsync"))(fd); }
int fdatasync(int fd) { delay(); return ((int (*)(int))dlsym(RTLD_NEXT, "fdatasync"))(fd); }
C
cc -shared -fPIC -O2 -o "$work/slowsync.so" "$work/slowsync.c" -ldl

# run LABEL PRELOAD SERVE_ARGUMENTS…
run() {
    local label="$1" preload="$2"; shift 2
    local log="$work/server.log" out="$work/server.out"
    rm -rf "$work/state" "$out"
    PULSE_SERVER=unix:/nonexistent XDG_STATE_HOME="$work/state" LD_PRELOAD="$preload" \
        "$bobao" serve --listen 127.0.0.1:0 --queue 100000 --ttl 3600 --line-rate 0 "$@" >"$out" 2>"$log" &
    local server=$!
    until grep -q "listening on" "$out" 2>/dev/null; do sleep 0.05; done
    echo "$label"
    BOBAO_PORT="$(sed -n 's/.*://p' "$out" | head -1)" python3 scripts/bench/acks.py
    kill -9 $server
    wait $server 2>/dev/null || true
}

run "--no-spool" "" --no-spool
run "spool (this disk)" ""
FSYNC_DELAY_MS="${FSYNC_DELAY_MS:-200}" run "spool, fsync slowed by ${FSYNC_DELAY_MS:-200} ms" "$work/slowsync.so"
