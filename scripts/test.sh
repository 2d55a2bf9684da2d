#!/usr/bin/env bash
# Bobao's test command: installs what the tests need, starts a private PulseAudio with a null sink,
# runs `swift test` against it, stops it, and exits with the tests' status.
#   scripts/test.sh [swift test arguments…]
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
source scripts/swift-toolchain.sh
source scripts/pulse-private.sh
pulse_private_start bobao_test
trap pulse_private_stop EXIT
echo "test: PulseAudio at $PULSE_SERVER, null sink $BOBAO_TEST_SINK" >&2

status=0
swift test "$@" || status=$?
exit $status
