#!/usr/bin/env bash
# The shell completions (issue 39), as meson builds them from the option
# table ($1: the build's completions directory): bash's completes commands,
# each command's own options, a path after --log-dir, the build's own
# command after --, and the run ids of the history; zsh and fish read
# theirs (zsh -n, fish -n), and every option of run is in each.
. "$(dirname "$0")/lib.sh"
C=${1:?usage: completion.sh COMPLETIONS-DIR}
for f in buildtel _buildtel buildtel.fish; do
        check "$f is built" test -s "$C/$f" || finish
done
PATH=$(dirname "$BUILDTEL"):$PATH
export PATH
"$BUILDTEL" run --quiet --no-report --log-dir "$T/l" --run-id compl-run-1 -- true
# complete WORD...: what bash offers for the last word
complete_words() {
        bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _buildtel; printf "%s\n" "${COMPREPLY[@]}"' \
                sh "$C/buildtel" "$@"
}
check "bash: a command" sh -c "[ \"\$1\" = plan ]" sh "$(complete_words buildtel pl)"
check "bash: run's own options" sh -c "echo \"\$1\" | grep -qx -- --memory-guard" sh "$(complete_words buildtel run --memory-g)"
check "bash: not another command's" sh -c "[ -z \"\$1\" ]" sh "$(complete_words buildtel status --memory-g)"
mkdir -p "$T/dirs/logs-here"
check "bash: a path after --log-dir" sh -c "cd '$T/dirs' && echo \"\$1\" | grep -qx logs-here" sh \
        "$(cd "$T/dirs" && complete_words buildtel run --log-dir logs-)"
check "bash: the build's command after --" sh -c "echo \"\$1\" | grep -qx ninja" sh \
        "$(complete_words buildtel run -- ninj)"
check "bash: the history's run ids" sh -c "echo \"\$1\" | grep -qx compl-run-1" sh \
        "$(complete_words buildtel inspect compl-)"
if command -v zsh >/dev/null; then
        check "zsh reads its completion (zsh -n)" zsh -n "$C/_buildtel"
else
        bad "zsh is missing (tools/deps.sh installs it)"
fi
if command -v fish >/dev/null; then
        check "fish reads its completion (fish -n)" fish -n "$C/buildtel.fish"
else
        bad "fish is missing (tools/deps.sh installs it)"
fi
missing=0
for o in $("$BUILDTEL" help --dump-options | awk -F'\t' '$1 == "run" {print $2}'); do
        for f in buildtel _buildtel buildtel.fish; do
                grep -q -- "${o#--}" "$C/$f" || { echo "# $o not in $f"; missing=$((missing + 1)); }
        done
done
expect_eq "every option of run is in each completion" "$missing" 0
"$BUILDTEL" help --completion tcsh >/dev/null 2>"$T/bad.err"
expect_eq "another shell: usage status" "$?" 2
finish
