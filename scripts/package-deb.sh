#!/usr/bin/env bash
# Builds Bobao's Debian package: bobao_VERSION_ARCH.deb in OUTDIR (default .build/deb), and prints its
# absolute path as the last line of standard output (progress goes to standard error).
#   scripts/package-deb.sh [OUTDIR]
#   sudo apt install "$(scripts/package-deb.sh | tail -n 1)"
# The binary is a release build with the Swift standard library linked in (--static-swift-stdlib), in
# its own scratch folder (.build/package) so that it never replaces the plain release build of
# scripts/run.sh: at run time it needs only Debian's libraries, which dpkg-shlibdeps turns into Depends.
# The version is the one `bobao --version` prints. The package's own files (systemd units,
# /etc/default/bobao, the man page, copyright, maintainer scripts) are in scripts/debian/.
# shellcheck source-path=SCRIPTDIR/..
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$(pwd)"
outdir="${1:-.build/deb}"
debian="$repo/scripts/debian"

scripts/install-deps.sh
source scripts/swift-toolchain.sh

echo "package-deb: building bobao (release, static Swift standard library) in .build/package" >&2
build=(swift build -c release --static-swift-stdlib --product bobao --scratch-path .build/package
    -Xlinker -z -Xlinker now)  # bind now: the GOT becomes read-only (lintian: hardening-no-bindnow)
"${build[@]}" >&2
binary="$("${build[@]}" --show-bin-path)/bobao"

version="$("$binary" --version)"
version="${version#bobao }"
if ! [[ "$version" =~ ^[0-9][A-Za-z0-9.+~]*$ ]]; then
    echo "package-deb: '$binary --version' printed '$version', not 'bobao VERSION'" >&2
    exit 1
fi
arch="$(dpkg --print-architecture)"

work="$(mktemp -d /tmp/bobao-deb.XXXXXX)"
trap 'rm -rf "$work"' EXIT
root="$work/bobao_${version}_${arch}"
umask 022

# The files.
install -D -m 0755 "$binary" "$root/usr/bin/bobao"
strip --strip-unneeded --remove-section=.comment --remove-section=.note "$root/usr/bin/bobao"
mkdir -p "$root/usr/share/bobao"
cp -R voices "$root/usr/share/bobao/voices"
install -D -m 0644 "$debian/bobao.service" "$root/usr/lib/systemd/user/bobao.service"
install -D -m 0644 "$debian/bobao@.service" "$root/lib/systemd/system/bobao@.service"
install -D -m 0644 "$debian/default" "$root/etc/default/bobao"
mkdir -p "$root/usr/share/man/man1" "$root/usr/share/doc/bobao"
sed "s/@VERSION@/$version/" "$debian/bobao.1" | gzip -9n >"$root/usr/share/man/man1/bobao.1.gz"
install -m 0644 "$debian/copyright" "$root/usr/share/doc/bobao/copyright"

# A native package's changelog: one entry for this build, dated by the commit it was built from.
commit="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
epoch="${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}"
maintainer="$(sed -n 's/^Maintainer: //p' "$debian/control")"
{
    echo "bobao ($version) unstable; urgency=medium"
    echo
    echo "  * Bobao $version, packaged by scripts/package-deb.sh from commit $commit."
    echo
    echo " -- $maintainer  $(LC_ALL=C date -u -R -d "@$epoch")"
} | gzip -9n >"$root/usr/share/doc/bobao/changelog.gz"

chmod -R u=rwX,go=rX "$root"
chmod 0755 "$root/usr/bin/bobao"
"$root/usr/bin/bobao" --version >/dev/null  # still runs once stripped

# The control files. Depends: what the binary links (dpkg-shlibdeps, which wants a debian/control to
# read), and eSpeak NG's data, which the voices load at run time.
mkdir -p "$work/shlibdeps/debian" "$root/DEBIAN"
printf 'Source: bobao\n\nPackage: bobao\nArchitecture: any\n' >"$work/shlibdeps/debian/control"
shlibs="$(cd "$work/shlibdeps" && dpkg-shlibdeps -O -e"$root/usr/bin/bobao")"
shlibs="${shlibs#shlibs:Depends=}"
# libmicrohttpd and libmosquitto are opened at run time when --http or --mqtt asks for them (dlopen), so
# dpkg-shlibdeps cannot see them.
shlibs="$shlibs, libmicrohttpd12, libmosquitto1"
if [ -z "$shlibs" ]; then
    echo "package-deb: dpkg-shlibdeps found no dependencies" >&2
    exit 1
fi
installed_size="$(du -k -s --exclude=DEBIAN "$root" | cut -f1)"
sed -e "s/@VERSION@/$version/" -e "s/@ARCH@/$arch/" -e "s/@INSTALLED_SIZE@/$installed_size/" \
    -e "s/@DEPENDS@/$shlibs, espeak-ng-data/" "$debian/control" >"$root/DEBIAN/control"
echo /etc/default/bobao >"$root/DEBIAN/conffiles"
for script in postinst prerm postrm; do
    install -m 0755 "$debian/$script" "$root/DEBIAN/$script"
done
(cd "$root" && find . -path ./DEBIAN -prune -o -path ./etc -prune -o -type f -printf '%P\0' \
    | LC_ALL=C sort -z | xargs -0 md5sum >DEBIAN/md5sums)
chmod 0644 "$root/DEBIAN/control" "$root/DEBIAN/conffiles" "$root/DEBIAN/md5sums"

mkdir -p "$outdir"
deb="$(cd "$outdir" && pwd)/bobao_${version}_${arch}.deb"
dpkg-deb --build --root-owner-group "$root" "$deb" >&2
echo "package-deb: Depends: $shlibs, espeak-ng-data" >&2
echo "$deb"
