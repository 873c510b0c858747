#!/bin/sh
# Runs nvim_check.lua: Neovim's own LSP client against `ss lsp` on a copy
# of the README example. Usage: tests/lsp/nvim_check.sh SS_BINARY [DEVICES]
# (e.g. build/ss 'cpu[0 1 2]'). Prints what the client saw.
set -e
here=$(cd "$(dirname "$0")" && pwd)
ss=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp "$here/../../examples/readme_mlp.ss" "$tmp/readme_mlp.ss"
cd "$tmp"
SS_BINARY="$ss" SS_DEVICES="$2" timeout 60 nvim --headless -u NONE -i NONE \
  -n readme_mlp.ss -c "luafile $here/nvim_check.lua"
