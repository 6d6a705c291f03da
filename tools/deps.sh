# Sourced by tools/demo and tools/test: install the Debian packages that are
# missing (apt-get; through sudo when not root).
# quiet LOG CMD...: run CMD with its output in LOG; on failure show the log's
# tail and the command, so an error is never hidden.
quiet() {
        local log=$1; shift
        "$@" >"$log" 2>&1 && return 0
        local rc=$?
        echo "failed ($rc): $*" >&2
        tail -n 40 "$log" >&2
        return $rc
}
need_pkgs() {
        local missing=() p
        for p in "$@"; do
                dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
                        missing+=("$p")
        done
        [ ${#missing[@]} -eq 0 ] && return 0
        echo "installing: ${missing[*]}" >&2
        local SUDO=
        [ "$(id -u)" -eq 0 ] || SUDO=sudo
        $SUDO apt-get update -qq >&2 &&
                DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
                        "${missing[@]}" >&2
}
BUILD_PKGS=(gcc meson ninja-build pkg-config libjansson-dev libsqlite3-dev libcurl4-openssl-dev zlib1g-dev scdoc libncurses-dev libsystemd-dev)
TEST_PKGS=(libcmocka-dev python3 procps make mount g++ chromium clang libclang-rt-14-dev prometheus prometheus-node-exporter prometheus-pushgateway curl sqlite3 ccache sccache tmux dpkg-dev debhelper build-essential git python3-yaml cmake zsh fish time)
# Debian packages of the OTLP tests' sink (tools/test installs them only when
# node or npm is missing).
NODE_PKGS=(nodejs npm)
# tools/vm-check's host side: qemu under TCG, the image made with mkfs.ext4 -d
# and read back with debugfs, the root made with mmdebstrap, the results
# checked with python3.
VM_PKGS=(qemu-system-x86 e2fsprogs mmdebstrap git python3)
# The real BuildKit of the e2e tests (tools/buildkit): bookworm's containerd and
# runc run the newer engine that tools/buildkit unpacks from Debian sid/trixie
# (never installed); busybox-static makes the local base image. docker.io is
# installed for its dependencies and its own 20.10 client; tools/buildkit
# never starts the host's docker service.
BUILDKIT_PKGS=(docker.io containerd runc busybox-static)
