#!/usr/bin/env bash
# The Debian package (debian/): built with dpkg-buildpackage -b from a copy
# of the tree, unpacked into a temporary root with dpkg -x; the installed
# binary runs and names the version of debian/changelog, and the man page is
# there. Skips (77) only when dpkg-buildpackage is missing; tools/deps.sh
# installs it and debhelper. Takes the source root as $1.
. "$(dirname "$0")/lib.sh"
SRC=${1:?usage: deb.sh SOURCE-ROOT}
command -v dpkg-buildpackage >/dev/null ||
        { echo "dpkg-buildpackage is missing (Debian package dpkg-dev)"; exit 77; }

# The tree as git sees it (tracked and untracked, not ignored: no build
# directory, no node_modules), else everything but the usual build output.
# Never a .git: the copy builds as a release tarball would.
mkdir -p "$T/pkg/src"
if files=$(git -C "$SRC" ls-files -co --exclude-standard -z 2>/dev/null | tr '\0' '\n') && [ -n "$files" ]; then
        (cd "$SRC" && git ls-files -co --exclude-standard -z | tar --null -T - --ignore-failed-read -cf -) |
                tar -C "$T/pkg/src" -xf -
else
        tar -C "$SRC" --exclude=./.git --exclude='./build*' --exclude='./obj-*' --exclude=node_modules \
                --exclude=./debian/buildtel --exclude=./debian/.debhelper --exclude=./debian/tmp -cf - . |
                tar -C "$T/pkg/src" -xf -
fi
check "the copy holds debian/" test -x "$T/pkg/src/debian/rules"

t0=$(now)
# CC named, as tools/test does: meson would otherwise route the compiles
# through a ccache or sccache on PATH (sccache leaves a server running).
(cd "$T/pkg/src" && CC=${CC:-gcc} DEB_BUILD_OPTIONS="nocheck parallel=$(nproc)" dpkg-buildpackage -b -us -uc) \
        >"$T/build.log" 2>&1
rc=$?
expect_eq "dpkg-buildpackage -b -us -uc exits 0 ($(since "$t0") s)" "$rc" 0 || tail -n 30 "$T/build.log"
version=$(cd "$T/pkg/src" && dpkg-parsechangelog -S Version)
deb=$(ls "$T"/pkg/buildtel_"$version"_*.deb 2>/dev/null | head -n 1)
check "the .deb is built (buildtel_${version}_ARCH.deb)" test -f "$deb" || finish

mkdir "$T/root"
check "dpkg -x unpacks it" dpkg -x "$deb" "$T/root"
bt=$T/root/usr/bin/buildtel
check "it installs /usr/bin/buildtel" test -x "$bt"
check "it installs the man page" test -s "$T/root/usr/share/man/man1/buildtel.1.gz"
check "it installs the bash, zsh and fish completions" sh -c "test -s '$T/root/usr/share/bash-completion/completions/buildtel' &&
        test -s '$T/root/usr/share/zsh/vendor-completions/_buildtel' &&
        test -s '$T/root/usr/share/fish/vendor_completions.d/buildtel.fish'"
check "it installs the copyright file" test -s "$T/root/usr/share/doc/buildtel/copyright"
# Built outside a checkout: the version alone, debian/changelog's upstream part.
expect_eq "the installed buildtel --version" "$("$bt" --version)" "buildtel ${version%-*}"
"$bt" run --quiet --no-db --no-report --log-dir "$T/logs" --run-id d -- true
expect_eq "the installed buildtel runs a build" "$?" 0
check "and writes its summary" test -s "$T/logs/resources-d.summary.txt"

# The GitHub Action's install of a release's .deb (action/install.sh), for
# real with apt-get, a build run with it, then removed (tools/fresh-check
# runs this on the bare Debian 12 root); only where no buildtel package is
# installed already (never replace the machine's own).
if [ "$(id -u)" = 0 ] && ! dpkg-query -W -f='${Status}' buildtel 2>/dev/null | grep -q "install ok"; then
        mkdir -p "$T/gh"
        touch "$T/gh/path"
        GITHUB_ACTION_PATH=$SRC RUNNER_TEMP=$T/gh GITHUB_PATH=$T/gh/path INPUT_INSTALL=$deb \
                bash "$SRC/action/install.sh" >"$T/action.log" 2>&1
        expect_eq "the action installs the .deb with apt-get" "$?" 0 || cat "$T/action.log"
        expect_eq "and /usr/bin/buildtel is the package's" "$(/usr/bin/buildtel --version)" "buildtel ${version%-*}"
        /usr/bin/buildtel run --quiet --no-db --no-report --log-dir "$T/logs-inst" --run-id inst -- \
                sh -c 'echo built >"$1"' sh "$T/inst.out"
        expect_eq "the installed package runs a build" "$?:$(cat "$T/inst.out" 2>/dev/null)" "0:built"
        check "and records it" test -s "$T/logs-inst/resources-inst.csv"
        check "its man page is where man looks" test -s /usr/share/man/man1/buildtel.1.gz
        dpkg -r buildtel >"$T/remove.log" 2>&1
        expect_eq "dpkg -r buildtel" "$?" 0 || cat "$T/remove.log"
fi
finish
