#!/bin/sh
# Runs textmate_test.js with vscode-textmate and vscode-oniguruma from the
# npm registry, installed once into DIR (default build/editors-node).
# Usage: editors/tests/textmate_test.sh SS_BINARY [DIR]
set -e
here=$(cd "$(dirname "$0")" && pwd)
dir=${2:-$here/../../build/editors-node}
if [ ! -d "$dir/node_modules/vscode-textmate" ] || \
   [ ! -d "$dir/node_modules/vscode-oniguruma" ]; then
  mkdir -p "$dir"
  npm install --prefix "$dir" --no-audit --no-fund --silent \
    vscode-textmate@9.3.2 vscode-oniguruma@2.0.1 >/dev/null
fi
NODE_PATH="$dir/node_modules" node "$here/textmate_test.js" "$1"
