#!/usr/bin/env bash
# The package test: builds the Debian package with scripts/package-deb.sh, lints it, installs it, runs
# the installed /usr/bin/bobao the way a kiosk would (a clean environment, nothing of the Swift
# toolchain), and removes it again, also when a check fails. scripts/test.sh runs it after the tests.
#   1. lintian: no error and no warning;
#   2. installs it with dpkg -i (apt-get installs missing Depends), and checks its conffile;
#   3. systemd-analyze verify on the installed units, the user unit and the bobao@ template: any
#      message fails (it exits 0 on unknown keys and bad values), and the system unit's sandbox must
#      stay at an exposure of 2.0 or less (systemd-analyze security --offline);
#   4. ldd /usr/bin/bobao names nothing under the toolchain and nothing missing;
#   5. under env -i (PATH=/usr/sbin:/usr/bin:/sbin:/bin, a temporary HOME, PULSE_SERVER):
#      bobao --version prints the package's version, bobao voices finds /usr/share/bobao/voices, and
#      bobao serve --no-spool speaks a line sent with nc: heard at a private PulseAudio's null sink
#      monitor (recorded with parec, 100 ms windows louder than -40 dBFS RMS);
#   6. every option of bobao serve --help is in the man page;
#   7. dpkg --purge leaves none of its files.
# It refuses to run when a bobao package is installed already: it would replace it and purge it.
# Needs root (or sudo) for dpkg.
# shellcheck source-path=SCRIPTDIR/..
set -euo pipefail
cd "$(dirname "$0")/.."
started=$SECONDS

sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi

if state="$(dpkg-query -W -f='${db:Status-Status} ${Version}' bobao 2>/dev/null)" && [ "${state%% *}" != not-installed ]; then
    echo "test-package: a bobao package is on this machine already (${state}). This test installs its own" \
        "and purges it at the end, so it stops rather than replace yours. Remove it first" \
        "(sudo dpkg --purge bobao), or leave this test out (BOBAO_TEST_PACKAGE=0 scripts/test.sh)." >&2
    exit 1
fi

scripts/install-deps.sh
source scripts/swift-toolchain.sh
source scripts/pulse-private.sh
toolchain="$(cd "$(dirname "$(readlink -f "$(command -v swift)")")/../.." && pwd)"

work="$(mktemp -d /tmp/bobao-test-package.XXXXXX)"
installed=no
serve_pid=""
# shellcheck disable=SC2317  # called by the EXIT trap
cleanup() {
    local status=$?
    if [ -n "$serve_pid" ]; then kill -KILL "$serve_pid" 2>/dev/null || true; fi
    pulse_private_stop
    if [ "$installed" = yes ]; then
        echo "test-package: removing the package" >&2
        $sudo dpkg --purge bobao >&2 || status=1
    fi
    rm -rf "$work"
    exit $status
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

fail() {
    echo "test-package: FAILED: $*" >&2
    exit 1
}

# Runs "$@", printing its output; fails when it exits non-zero or prints anything.
quiet_or_fail() {
    local output
    output="$("$@" 2>&1)" || fail "$* exited non-zero: $output"
    [ -z "$output" ] || fail "$* said: $output"
}

echo "test-package: building the package" >&2
deb="$(scripts/package-deb.sh "$work/out" | tail -n 1)"
[ -f "$deb" ] || fail "scripts/package-deb.sh printed no package path"
version="$(dpkg-deb -f "$deb" Version)"

echo "test-package: lintian $(basename "$deb")" >&2
lintian --fail-on error,warning --display-info "$deb" >&2 || fail "lintian found errors or warnings (above)"

echo "test-package: installing it" >&2
installed=yes
if ! $sudo dpkg -i "$deb" >&2; then
    echo "test-package: dpkg -i failed; installing the missing Depends with apt-get" >&2
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -f --no-install-recommends >&2
fi
[ "$(dpkg-query -W -f='${db:Status-Status}' bobao)" = installed ] || fail "bobao is not installed after dpkg -i"
dpkg-query -W -f='${Conffiles}\n' bobao | grep -q '^ /etc/default/bobao ' || fail "/etc/default/bobao is not a conffile"

echo "test-package: systemd-analyze verify on the installed units" >&2
man_check=--man=no
if command -v man >/dev/null && [ -f /usr/share/man/man1/bobao.1.gz ]; then man_check=--man=yes; fi
mkdir -m 700 "$work/runtime"  # a user manager's runtime folder, which --user needs
quiet_or_fail env XDG_RUNTIME_DIR="$work/runtime" systemd-analyze --user verify "$man_check" \
    /usr/lib/systemd/user/bobao.service
quiet_or_fail systemd-analyze verify "$man_check" /lib/systemd/system/bobao@.service
systemd-analyze security --offline=yes --threshold=20 /lib/systemd/system/bobao@.service >"$work/security" 2>&1 \
    || fail "the bobao@ sandbox is weaker than exposure 2.0: $(tail -n 1 "$work/security")"
echo "test-package: $(grep 'Overall exposure' "$work/security")" >&2

echo "test-package: ldd /usr/bin/bobao" >&2
ldd /usr/bin/bobao >"$work/ldd"
patterns=(-e "not found" -e libswift -e libFoundation -e libdispatch -e libBlocksRuntime)
case "$toolchain" in /|/usr) ;; *) patterns+=(-e "$toolchain/") ;; esac
if grep -F "${patterns[@]}" "$work/ldd"; then
    fail "/usr/bin/bobao needs Swift's libraries, the toolchain's ($toolchain) or missing ones (above)"
fi

# The installed binary, as a service would run it: nothing of the caller's environment.
mkdir "$work/home"
pulse_private_start bobao_package
clean=(env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME="$work/home" PULSE_SERVER="$PULSE_SERVER")

printed="$("${clean[@]}" bobao --version)"
[ "$printed" = "bobao $version" ] || fail "bobao --version printed '$printed', the package is $version"
"${clean[@]}" bobao voices >"$work/voices"
head -n 1 "$work/voices" | grep -q '(/usr/share/bobao/voices)' \
    || fail "bobao voices did not find /usr/share/bobao/voices: $(head -n 1 "$work/voices")"
grep -q '^project *zh$' "$work/voices" || fail "bobao voices does not list Bobao's zh"

echo "test-package: bobao serve, a line from nc, heard at $BOBAO_TEST_SINK.monitor" >&2
"${clean[@]}" bobao serve --listen 127.0.0.1:0 --no-spool >"$work/serve.out" 2>"$work/serve.log" &
serve_pid=$!
port=""
for _ in $(seq 100); do
    port="$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9][0-9]*\)$/\1/p' "$work/serve.out")"
    [ -z "$port" ] || break
    kill -0 "$serve_pid" 2>/dev/null || fail "bobao serve exited: $(cat "$work/serve.log")"
    sleep 0.1
done
[ -n "$port" ] || fail "bobao serve printed no address within 10 s: $(cat "$work/serve.log")"

# Records the monitor in 100 ms windows until speech (at least 0.5 s louder than -40 dBFS RMS) was
# followed by 1 s of quiet, for at most 20 s. Writes "ready" to $2 once samples flow.
timeout 40 python3 - "$BOBAO_TEST_SINK" "$work/recording-ready" >"$work/recording" 2>&1 <<'PY' &
import array, math, subprocess, sys, time

sink, ready = sys.argv[1], sys.argv[2]
rate = 16000
parec = subprocess.Popen(["parec", "-d", sink + ".monitor", "--raw", "--format=s16le", "--rate=%d" % rate,
                          "--channels=1", "--latency-msec=50"], stdout=subprocess.PIPE)
loud = quiet_after = 0
loudest = 0.0
deadline = time.monotonic() + 20
while time.monotonic() < deadline:
    data = parec.stdout.read(rate // 10 * 2)
    if not data:
        break
    if ready:
        open(ready, "w").close()
        ready = None
    samples = array.array("h", data)
    rms = math.sqrt(sum(s * s for s in samples) / len(samples))
    loudest = max(loudest, rms)
    if rms >= 328:  # -40 dBFS
        loud += 1
        quiet_after = 0
    elif loud:
        quiet_after += 1
        if quiet_after >= 10:
            break
parec.terminate()
level = "%.1f dBFS" % (20 * math.log10(loudest / 32768)) if loudest else "digital silence"
print("%.1f s of speech; loudest 100 ms: %s" % (loud / 10, level))
sys.exit(0 if loud >= 5 else 1)
PY
recorder_pid=$!
for _ in $(seq 100); do
    [ -e "$work/recording-ready" ] && break
    sleep 0.1
done
[ -e "$work/recording-ready" ] || fail "parec recorded nothing from $BOBAO_TEST_SINK.monitor within 10 s: $(cat "$work/recording")"
reply="$(printf '新客户来了\n' | timeout 10 nc -N 127.0.0.1 "$port")" || fail "nc could not send the line"
[ "$reply" = "OK 1" ] || fail "the server answered '$reply', not 'OK 1'"
recorded=yes
wait "$recorder_pid" || recorded=no
echo "test-package: at the monitor: $(cat "$work/recording")" >&2
[ "$recorded" = yes ] || fail "the announcement was not heard at $BOBAO_TEST_SINK.monitor; the server's log:
$(cat "$work/serve.log")"
grep -q 'voice zh (/usr/share/bobao/voices/zh)' "$work/serve.log" \
    || fail "bobao serve did not use /usr/share/bobao/voices/zh: $(cat "$work/serve.log")"

kill -TERM "$serve_pid"
served=0
wait "$serve_pid" || served=$?
serve_pid=""
[ "$served" -eq 0 ] || fail "bobao serve exited $served after SIGTERM: $(cat "$work/serve.log")"
pulse_private_stop

echo "test-package: the man page describes every option of bobao serve --help" >&2
zcat /usr/share/man/man1/bobao.1.gz >"$work/bobao.1" 2>/dev/null || dpkg-deb --fsys-tarfile "$deb" \
    | tar -xOf - ./usr/share/man/man1/bobao.1.gz | zcat >"$work/bobao.1"
missing=()
for option in $(/usr/bin/bobao serve --help | grep -o -- '--[a-z][a-z-]*' | sort -u); do
    grep -q -F -- "${option//-/\\-}" "$work/bobao.1" || missing+=("$option")
done
[ ${#missing[@]} -eq 0 ] || fail "scripts/debian/bobao.1 does not describe ${missing[*]}"

echo "test-package: purging it" >&2
installed=no
$sudo dpkg --purge bobao >&2
for path in /usr/bin/bobao /etc/default/bobao /usr/share/bobao /usr/lib/systemd/user/bobao.service \
    /lib/systemd/system/bobao@.service /usr/share/doc/bobao; do
    [ ! -e "$path" ] || fail "$path is still there after dpkg --purge bobao"
done

echo "test-package: passed: bobao $version built, linted, installed, heard and purged in $((SECONDS - started)) s" >&2
