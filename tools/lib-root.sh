# Sourced by tools/fresh-check and tools/vm-check: a Debian 12 root made with
# mmdebstrap from the mirrors this machine's apt uses, cached as a tarball.
# Needs tools/deps.sh sourced first (quiet).

# The machine's own Debian mirrors, as one-line sources for bookworm.
host_sources() {
        local host
        host=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
        {
                cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
                        awk '$1 == "deb" { sub(/\[[^]]*\] */, ""); print }'
                for f in /etc/apt/sources.list.d/*.sources; do
                        [ -f "$f" ] || continue
                        awk 'function flush() {
                                if (t ~ /(^| )deb( |$)/ && u != "")
                                        for (i = 1; i <= split(u, U, " "); i++)
                                                for (j = 1; j <= split(s, S, " "); j++)
                                                        print "deb " U[i] " " S[j] " " c
                                t = u = s = c = ""
                        }
                        /^[ \t]*$/ { flush(); next }
                        /^#/ { next }
                        { k = $1; sub(/^[^:]*:[ \t]*/, "") }
                        k == "Types:" { t = $0 } k == "URIs:" { u = $0 }
                        k == "Suites:" { s = $0 } k == "Components:" { c = $0 }
                        END { flush() }' "$f"
                done
        } | awk -v h="$host" '$3 ~ "^" h { sub("^" h, "bookworm", $3); print }' |
                grep -E '^deb https?://[^ ]+ bookworm(-updates|-security)? ' | sort -u
}

# root_tarball TAR LOG [MMDEBSTRAP-OPTION...]: make TAR with `mmdebstrap
# --variant=apt --format=tar bookworm` and the options (--include=...) unless
# it exists. Returns non-zero (the log's tail shown) when mmdebstrap fails.
root_tarball() {
        local tar=$1 log=$2 mirrors
        shift 2
        [ -s "$tar" ] && return 0
        mkdir -p "$(dirname "$tar")" || return 1
        mapfile -t mirrors < <(host_sources)
        [ ${#mirrors[@]} -gt 0 ] || mirrors=("deb http://deb.debian.org/debian bookworm main")
        echo "mmdebstrap --variant=apt $* bookworm (${mirrors[*]})" >&2
        if ! quiet "$log" mmdebstrap --variant=apt --format=tar "$@" bookworm "$tar.tmp" \
                "${mirrors[@]}"; then
                rm -f "$tar.tmp"
                return 1
        fi
        mv "$tar.tmp" "$tar"
}
