#!/bin/sh
# editors/vim/syntax/shapescript.vim against `ss`'s lexer, in headless
# Neovim, on every example (and the spec's and the torch programs' files):
# each token's syntax group must be its lexical class's
# (vim_syntax_check.lua). Usage: editors/tests/vim_syntax_check.sh SS_BINARY
set -e
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
ss=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
for f in "$root"/examples/*.ss "$root"/examples/spmd/*.ss \
         "$root"/conformance/spec/*.ss "$root"/tests/torch/programs/*.ss; do
  "$ss" fmt --tokens "$f" > "$tmp/tokens"
  SS_TOKENS="$tmp/tokens" timeout 60 nvim --headless -u NONE -i NONE -n \
    --cmd "set rtp+=$root/editors/vim" "$f" \
    -c "luafile $here/vim_syntax_check.lua" || status=1
done
exit $status
