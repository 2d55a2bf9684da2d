# Sourced, from the checkout's root, by the benchmarks that measure on private sound servers
# (scripts/bench-latency.sh, scripts/bench-http.sh): `source scripts/bench/sound-servers.sh NAME`.
# Installs the packages (PipeWire too), builds bobao in release mode and exports BOBAO, makes $figures (a
# temporary folder, removed at exit with any private server still running), and defines
# sound_server_start SERVER (pulseaudio or pipewire: a private one with the null sink "bench") and
# sound_server_stop.
bench_name="$1"
scripts/install-deps.sh --pipewire
source scripts/release-build.sh
export BOBAO="$bobao"

source scripts/pulse-private.sh
source scripts/pipewire-private.sh
figures="$(mktemp -d "/tmp/bobao-$bench_name.XXXXXX")"
trap 'pulse_private_stop; pipewire_private_stop; rm -rf "$figures"' EXIT

sound_server_start() {
    case "$1" in
    pulseaudio) pulse_private_start bench ;;
    pipewire) pipewire_private_start bench ;;
    *)
        echo "$bench_name: unknown sound server '$1' (pulseaudio, pipewire)" >&2
        exit 2
        ;;
    esac
}

sound_server_stop() {
    pulse_private_stop
    pipewire_private_stop
}
