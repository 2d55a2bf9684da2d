# Sourced by the scripts that build: puts a Swift 6 toolchain on PATH, or stops with what to install.
# Debian 12 has no Swift package (its `swift` is OpenStack's object store); the toolchain comes from
# swift.org, unpacked for example in /opt/swift.
# A `swift` that is not Swift (python-swiftclient, OpenStack's) does not count.
is_swift() { "${1:-swift}" --version 2>/dev/null | grep -q "Swift version"; }
if ! command -v swift >/dev/null 2>&1 || ! is_swift; then
    for candidate in /opt/swift/usr/bin /usr/share/swift/usr/bin /usr/local/swift/usr/bin; do
        if [ -x "$candidate/swift" ] && is_swift "$candidate/swift"; then
            export PATH="$candidate:$PATH"
            break
        fi
    done
fi
if ! command -v swift >/dev/null 2>&1 || ! is_swift; then
    echo "bobao: no Swift toolchain found. Install Swift 6 for Debian 12 from https://www.swift.org/install/ " \
        "(unpack it in /opt/swift, or put its usr/bin on PATH), then run this again." >&2
    exit 1
fi
