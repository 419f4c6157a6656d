#!/usr/bin/env bash
# Installs what is needed, builds and runs the test suite (what .ci/run calls).
# Slow accuracy runs carry the ctest label "accuracy" and are left to bench/.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/build.sh
cd build
ctest --output-on-failure -LE accuracy -j 2
