# Sourced by the scripts that run a release build: installs the Debian packages, finds Swift, builds
# `bobao` in release mode and sets $bobao to its path. $install_deps_mode (--run for scripts/run.sh)
# narrows what is installed.
scripts/install-deps.sh ${install_deps_mode:+"$install_deps_mode"}
source scripts/swift-toolchain.sh
swift build -c release --product bobao >&2
bobao="$(swift build -c release --show-bin-path)/bobao"
