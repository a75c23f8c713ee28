#!/usr/bin/env bash
# Installs the Debian packages pps needs, only those that are missing.
# Sourced by .ci/setup and .ci/test; safe to run repeatedly.
pps_install_deps() {
  # help2man: the man page; dpkg-dev, file: cpack -G DEB (dpkg-shlibdeps);
  # pkgconf: the by-hand build test (tests/install); git, clang-format-14,
  # clang-tidy-14: .ci/style; python3-torch: pps.torch and its tests
  # (python/tests/test_torch_*); chromium: the render tests (tests/render)
  # and the screenshots in docs/img; python3-jsonschema: the export schema
  # test (tests/lit/export).
  local pkgs=(cmake ninja-build g++ python3 antlr4 libantlr4-runtime-dev
              llvm-14-dev llvm-14-tools libfmt-dev libgtest-dev
              libbenchmark-dev libopenmpi-dev openmpi-bin
              help2man dpkg-dev file pkgconf
              pybind11-dev python3-dev python3-pytest python3-pip
              git clang-format-14 clang-tidy-14 chromium
              libtorch-dev python3-torch # pps_runtime_torch, examples/gpt; pps.torch
              python3-jsonschema # the export schema test (tests/lit/export)
              iproute2) # ip netns: the two-host MPI test (tests/exec/two_hosts.sh)
  local missing=()
  for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
      missing+=("$p")
  done
  if [ ${#missing[@]} -eq 0 ]; then
    return 0
  fi
  echo "pps: installing missing packages: ${missing[*]}"
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
    --no-install-recommends "${missing[@]}"
}

# Configures and builds into build/ (Release, Ninja).
pps_build() {
  local root
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  cmake -S "$root" -B "$root/build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$root/build" -j "$(nproc)"
}

# The editor grammar test's npm packages (vscode-textmate, vscode-oniguruma,
# pinned in editors/vscode/test/package-lock.json), from the npm registry
# into editors/vscode/test/node_modules. Installs Debian's nodejs and npm
# first if node or npm is missing. A failure here only makes ctest skip the
# grammar test, with a message.
pps_install_editor_deps() {
  local root
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    echo "pps: installing nodejs and npm"
    local sudo=""
    if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
      --no-install-recommends nodejs npm || return 0
  fi
  if [ ! -d "$root/editors/vscode/test/node_modules/vscode-textmate" ]; then
    (cd "$root/editors/vscode/test" &&
      npm ci --no-audit --no-fund --loglevel=error) ||
      echo "pps: npm ci failed; the grammar test will be skipped"
  fi
}
