# Sourced by the scripts that build: puts a Swift 6 toolchain on PATH, or stops with what to install.
# Debian 12 has no Swift package (its `swift` is OpenStack's object store); the toolchain comes from
# swift.org, unpacked for example in /opt/swift.
if ! command -v swift >/dev/null 2>&1; then
    for candidate in /opt/swift/usr/bin /usr/share/swift/usr/bin /usr/local/swift/usr/bin; do
        if [ -x "$candidate/swift" ]; then
            export PATH="$candidate:$PATH"
            break
        fi
    done
fi
if ! command -v swift >/dev/null 2>&1; then
    echo "bobao: no Swift toolchain found. Install Swift 6 for Debian 12 from https://www.swift.org/install/ " \
        "(unpack it in /opt/swift, or put its usr/bin on PATH), then run this again." >&2
    exit 1
fi
