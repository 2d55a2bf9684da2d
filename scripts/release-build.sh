# Sourced by the scripts that run a release build: installs the Debian packages, finds Swift, builds
# `bobao` in release mode and sets $bobao to its path.
scripts/install-deps.sh
source scripts/swift-toolchain.sh
swift build -c release --product bobao >&2
bobao="$(swift build -c release --show-bin-path)/bobao"
