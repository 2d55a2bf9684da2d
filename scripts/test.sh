#!/usr/bin/env bash
# Bobao's test command: installs what the tests need, builds, and runs the tests against two private sound
# servers, each with a null sink, started here and stopped at the end:
#   1. every test (`swift test`) against PulseAudio;
#   2. the sound suites (SoundSuites in Tests/BobaoIntegrationTests: every test that plays through a
#      sound server) again against PipeWire with pipewire-pulse, as Debian 13, Ubuntu and most desktops
#      run it. BOBAO_SOUND_SERVER=pipewire tells the tests' own private servers to be PipeWire too.
#   3. the package test, scripts/test-package.sh: builds the Debian package, lints it, verifies its
#      systemd units, installs it, hears the installed bobao speak, and purges it.
# Exits non-zero when any of them fails.
#   scripts/test.sh [swift test arguments…]   arguments (such as --filter CutInTests) go to both runs,
#                                             in place of the second run's --filter SoundSuites, and
#                                             leave the package test out
#   BOBAO_TEST_SERVERS="pulseaudio pipewire"  the runs to make (default both)
#   BOBAO_TEST_PACKAGE=0 / =1                 leave the package test out / make it even with arguments
# shellcheck source-path=SCRIPTDIR/..
set -euo pipefail
cd "$(dirname "$0")/.."

servers="${BOBAO_TEST_SERVERS:-pulseaudio pipewire}"
scripts/install-deps.sh --pipewire
source scripts/swift-toolchain.sh
source scripts/pulse-private.sh
source scripts/pipewire-private.sh
trap 'pulse_private_stop; pipewire_private_stop' EXIT

swift build --build-tests

status=0
summary=()
for server in $servers; do
    started=$SECONDS
    result=0
    case "$server" in
    pulseaudio)
        pulse_private_start bobao_test
        echo "test: PulseAudio at $PULSE_SERVER, null sink $BOBAO_TEST_SINK: every test" >&2
        swift test --skip-build "$@" || result=$?
        pulse_private_stop
        ;;
    pipewire)
        pipewire_private_start bobao_test
        echo "test: PipeWire at $PULSE_SERVER, null sink $BOBAO_TEST_SINK: the sound suites" >&2
        arguments=("$@")
        # CorkTests need module-role-cork and a sink that suspends while in use: PulseAudio only
        # (pipewire-pulse 0.3.65 has neither).
        if [ $# -eq 0 ]; then arguments=(--filter SoundSuites --skip CorkTests); fi
        swift test --skip-build "${arguments[@]}" || result=$?
        pipewire_private_stop
        ;;
    *)
        echo "test: unknown sound server '$server' in BOBAO_TEST_SERVERS (pulseaudio, pipewire)" >&2
        exit 2
        ;;
    esac
    summary+=("$server: $([ $result -eq 0 ] && echo passed || echo "FAILED ($result)") in $((SECONDS - started)) s")
    [ $result -eq 0 ] || status=$result
done

if [ "${BOBAO_TEST_PACKAGE:-$([ $# -eq 0 ] && echo 1 || echo 0)}" = 1 ]; then
    started=$SECONDS
    result=0
    scripts/test-package.sh || result=$?
    summary+=("package: $([ $result -eq 0 ] && echo passed || echo "FAILED ($result)") in $((SECONDS - started)) s")
    [ $result -eq 0 ] || status=$result
fi
printf 'test: %s\n' "${summary[@]}" >&2
exit $status
