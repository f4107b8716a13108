#!/usr/bin/env bash
# Installs cohort under PREFIX: the binary, bash/zsh/fish completions and the man page.
#
#   PREFIX=$HOME/.local bash scripts/install.sh      # default PREFIX: /usr/local
#
# Builds the release binary (swift build -c release) unless COHORT_BIN names one already built.
# Writes:
#   $PREFIX/bin/cohort
#   $PREFIX/share/bash-completion/completions/cohort
#   $PREFIX/share/zsh/site-functions/_cohort
#   $PREFIX/share/fish/vendor_completions.d/cohort.fish
#   $PREFIX/share/man/man1/cohort.1      (from the command tree: --experimental-dump-help → scripts/manpage.py)
# The example protocols and templates are inside the binary: nothing else is needed.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
prefix=${PREFIX:-/usr/local}

binary=${COHORT_BIN:-}
if [[ -z "$binary" ]]; then
    swift build -c release --product cohort --package-path "$root"
    binary="$(swift build -c release --show-bin-path --package-path "$root")/cohort"
fi
if [[ ! -x "$binary" ]]; then
    echo "error: $binary is not an executable cohort binary (build it, or unset COHORT_BIN)" >&2
    exit 1
fi

install -d "$prefix/bin" "$prefix/share/bash-completion/completions" "$prefix/share/zsh/site-functions" \
    "$prefix/share/fish/vendor_completions.d" "$prefix/share/man/man1"
install -m 0755 "$binary" "$prefix/bin/cohort"
installed="$prefix/bin/cohort"

"$installed" --generate-completion-script bash > "$prefix/share/bash-completion/completions/cohort"
"$installed" --generate-completion-script zsh > "$prefix/share/zsh/site-functions/_cohort"
"$installed" --generate-completion-script fish > "$prefix/share/fish/vendor_completions.d/cohort.fish"
"$installed" --experimental-dump-help | python3 "$root/scripts/manpage.py" > "$prefix/share/man/man1/cohort.1"

echo "Installed cohort $("$installed" --version) under $prefix"
echo "  binary       $installed"
echo "  completions  bash, zsh, fish (share/bash-completion, share/zsh/site-functions, share/fish/vendor_completions.d)"
echo "  man page     $prefix/share/man/man1/cohort.1   (man cohort; add $prefix/share/man to MANPATH if needed)"
