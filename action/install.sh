#!/usr/bin/env bash
# The action's first step: buildtel on PATH for the job's next steps.
# INPUT_INSTALL: "source" builds this action's own tree (meson, release, no
# tests) and installs it under $RUNNER_TEMP; "path" takes the buildtel that
# is on PATH already; anything ending in .deb is a package's URL or path,
# installed with apt-get. BUILDTEL_ACTION_BUILD names the build directory
# (the suite points it at its own, built already).
set -eu
src=${GITHUB_ACTION_PATH:?must name this action directory}
how=${INPUT_INSTALL:-source}
tmp=${RUNNER_TEMP:-/tmp}
say() { echo "buildtel action: $*" >&2; }
fail() { echo "::error title=buildtel install::$*"; exit 1; }
SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo

case $how in
path)
        command -v buildtel >/dev/null || fail "install: path, and there is no buildtel on PATH"
        ;;
source)
        # shellcheck source=../tools/deps.sh
        . "$src/tools/deps.sh"
        need_pkgs "${BUILD_PKGS[@]}" || fail "cannot install the build packages: ${BUILD_PKGS[*]}"
        b=${BUILDTEL_ACTION_BUILD:-$tmp/buildtel-build}
        if [ ! -f "$b/build.ninja" ]; then
                meson setup "$b" "$src" -Dbuildtype=release -Dtests=false >"$tmp/buildtel-setup.log" 2>&1 ||
                        { tail -n 30 "$tmp/buildtel-setup.log" >&2; fail "meson setup failed"; }
        fi
        root=$tmp/buildtel-root
        meson install -C "$b" --destdir "$root" --quiet >"$tmp/buildtel-install.log" 2>&1 ||
                { tail -n 30 "$tmp/buildtel-install.log" >&2; fail "the build or meson install failed"; }
        bin=$(dirname "$(find "$root" -path '*/bin/buildtel' -type f | head -n 1)")
        [ -x "$bin/buildtel" ] || fail "meson install put no bin/buildtel under $root"
        echo "$bin" >>"${GITHUB_PATH:?}"
        PATH=$bin:$PATH
        ;;
*.deb)
        deb=$how
        case $deb in
        http://* | https://*)
                deb=$tmp/${how##*/}
                curl -fsSL --retry 3 -o "$deb" "$how" || fail "cannot download $how"
                ;;
        esac
        [ -f "$deb" ] || fail "no such package: $deb"
        deb=$(cd "$(dirname "$deb")" && pwd)/$(basename "$deb")
        $SUDO apt-get install -y -qq --no-install-recommends "$deb" >"$tmp/buildtel-apt.log" 2>&1 ||
                { tail -n 30 "$tmp/buildtel-apt.log" >&2; fail "apt-get install $deb failed"; }
        ;;
*)
        fail "install: '$how' is none of source, path, or a .deb's URL or path"
        ;;
esac
say "$(buildtel --version)"
