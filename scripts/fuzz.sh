#!/usr/bin/env bash
# Runs a libFuzzer target for SECONDS: scripts/fuzz.sh line-protocol|normalizer|http-request SECONDS
# Builds with -sanitize=fuzzer,address in its own scratch folder (the normal build stays untouched),
# starts from the seed corpus in Tests/Fuzz/TARGET, and keeps new inputs in .build/fuzz-corpus/TARGET.
# A crash leaves its input as crash-* in the current folder: fix it and add the input to Tests/Fuzz/TARGET.
set -euo pipefail
cd "$(dirname "$0")/.."
target="${1:?usage: scripts/fuzz.sh line-protocol|normalizer|http-request SECONDS}"
seconds="${2:?usage: scripts/fuzz.sh line-protocol|normalizer|http-request SECONDS}"
case "$target" in
    line-protocol) product=FuzzLineProtocol ;;
    normalizer) product=FuzzNormalizer ;;
    http-request) product=FuzzHTTPRequest ;;
    *) echo "fuzz: unknown target '$target' (line-protocol, normalizer or http-request)" >&2; exit 2 ;;
esac
scripts/install-deps.sh
source scripts/swift-toolchain.sh
swift build --scratch-path .build/fuzz -c debug --product "$product" \
    -Xswiftc -sanitize=fuzzer,address -Xswiftc -DFUZZING >&2
binary="$(swift build --scratch-path .build/fuzz -c debug --show-bin-path)/$product"
corpus=".build/fuzz-corpus/$target"
mkdir -p "$corpus"
"$binary" "$corpus" "Tests/Fuzz/$target" -max_total_time="$seconds" -max_len=8192 -print_final_stats=1
