#!/usr/bin/env bash
# Sets up a fresh Debian 12 (bookworm) machine for ShapeScript: installs the
# Debian packages the whole design needs, builds `ss`, and checks the README
# example. Safe to rerun: the apt step is skipped when everything is already
# installed, and the build is incremental.
#
#   sudo scripts/setup.sh          # install, build, check the README example
#   scripts/setup.sh --skip-deps   # build and check only (no apt, no root)
#   scripts/setup.sh --build-only  # build everything, tests too (scripts/test.sh)
#
# Run via sudo, the packages are installed as root and the build then runs as
# the user who invoked sudo, so build/ stays writable by them.
set -euo pipefail

# Everything the design needs (see /work/shared/notes/deps.md, README.md):
# the toolchain (clang for scripts/fuzz.sh's libFuzzer), xtensor + xsimd +
# xtensor-blas + OpenBLAS + oneDNN (CPU backend), Gloo (collectives), Boost
# (Interprocess), Catch2 2.13 (unit tests), nlohmann-json (safetensors
# headers, --json), libedit (the repl), libssl-dev (libcrypto: the
# handshake of a job's TCP connections); Debian's PyTorch and numpy, the
# tests' independent oracles (run with /usr/bin/python3); Neovim, whose
# built-in LSP client tests `ss lsp` (ctest lsp_neovim); OpenSSH's client
# (`ss run --hosts`'s default launcher is ssh); pybind11, DLPack's header,
# pytest and matplotlib for the Python module (python/, docs/python.md).
# ocl-icd-opencl-dev: Debian's oneDNN is built with an OpenCL GPU runtime,
# so its CMake config (dnnl-config.cmake) requires OpenCL's headers and
# library even for CPU use; apt only recommends them, and this script
# installs without recommends (configure failed on a fresh machine).
PACKAGES=(
  g++ clang cmake make ninja-build ccache pkgconf
  libxtensor-dev libxsimd-dev libxtensor-blas-dev libopenblas-dev libdnnl-dev
  ocl-icd-opencl-dev
  libgloo-dev libboost-dev catch2 nlohmann-json3-dev libedit-dev zlib1g-dev
  libssl-dev openssh-client
  python3-torch python3-numpy neovim
  python3-dev pybind11-dev libdlpack-dev python3-pytest python3-matplotlib
)
# OpenSSH's server runs the hosts of ctest's multihost test (network
# namespaces, each with an sshd). Installing it starts an SSH server on the
# machine, so only CI (CI=true) and who asks (SS_MULTIHOST_TESTS=1) get
# it; without it that test says why and is skipped.
if [[ "${CI:-}" == "true" || "${SS_MULTIHOST_TESTS:-}" == "1" ]]; then
  PACKAGES+=(openssh-server)
fi

usage() {
  sed -n '2,12p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
}

skip_deps=0
build_only=0
for arg in "$@"; do
  case "$arg" in
    --skip-deps) skip_deps=1 ;;
    --build-only) skip_deps=1; build_only=1 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "setup.sh: unknown option '$arg'" >&2; usage >&2; exit 64 ;;
  esac
done

# Work from the repository root whatever the caller's cwd.
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$(pwd -P)

log() { printf 'setup: %s\n' "$*"; }

is_installed() {
  dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q '^install ok installed$'
}

install_deps() {
  local missing=() p
  for p in "${PACKAGES[@]}"; do
    is_installed "$p" || missing+=("$p")
  done
  if ((${#missing[@]} == 0)); then
    log "all ${#PACKAGES[@]} Debian packages already installed; skipping apt"
    return 0
  fi
  log "missing packages: ${missing[*]}"
  local as_root=()
  if ((EUID != 0)); then
    if command -v sudo >/dev/null 2>&1; then
      as_root=(sudo)
    else
      echo "setup.sh: need root to install: ${missing[*]}" >&2
      echo "  run it as root, or install them yourself and rerun with --skip-deps" >&2
      exit 1
    fi
  fi
  ${as_root[@]+"${as_root[@]}"} apt-get update
  ${as_root[@]+"${as_root[@]}"} env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y --no-install-recommends "${PACKAGES[@]}"
}

build() {
  local gen_args=()
  # The generator of an existing build/ cannot change: reuse whatever it has.
  if [[ ! -f build/CMakeCache.txt ]]; then
    if command -v ninja >/dev/null 2>&1; then
      gen_args=(-G Ninja)
    else
      gen_args=(-G "Unix Makefiles")
    fi
  fi
  local launcher=()
  if command -v ccache >/dev/null 2>&1; then
    launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
  fi
  log "configuring build/ (Release)"
  cmake -S . -B build ${gen_args[@]+"${gen_args[@]}"} \
    -DCMAKE_BUILD_TYPE=Release ${launcher[@]+"${launcher[@]}"}
  # A user's setup builds what running needs, `ss` and the Python module
  # (build/python, docs/python.md); the test binaries are scripts/test.sh's
  # (it calls --build-only, which builds everything).
  local targets=(--target ss ss_python)
  ((build_only)) && targets=()
  log "building ${targets[*]:-everything} with $(nproc) jobs"
  cmake --build build ${targets[@]+"${targets[@]}"} -j"$(nproc)"
}

check_example() {
  log "running the README example: build/ss run examples/readme_mlp.ss"
  # It trains 3 epochs on 54,000 synthetic digits, prints the test logs
  # (loss and accuracy), and writes train.csv and mlp.safetensors here.
  build/ss run examples/readme_mlp.ss
  log "README example done"
}

if ((!skip_deps)); then
  install_deps
fi

# Invoked as `sudo scripts/setup.sh` by a user who owns the checkout: build as
# that user, not root, so that later builds and tests need no sudo.
if ((EUID == 0)) && [[ -n "${SUDO_USER:-}" && "${SUDO_USER}" != root ]] \
   && [[ "$(stat -c %U "$ROOT")" == "$SUDO_USER" ]]; then
  log "building as $SUDO_USER (the user who ran sudo)"
  flags=(--skip-deps)
  ((build_only)) && flags=(--build-only)
  exec sudo -u "$SUDO_USER" -H -- "$ROOT/scripts/setup.sh" "${flags[@]}"
fi

build
if ((!build_only)); then
  check_example
fi
