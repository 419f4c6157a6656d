#!/usr/bin/env bash
# Installs the Debian packages (tools/setup.sh) and builds Sift in build/ (Release).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build
