#!/usr/bin/env bash
# Installs every Debian package that Sift's build, tests and benchmarks need.
# Idempotent: packages already present are skipped by apt.
set -euo pipefail
packages=(
  build-essential cmake ninja-build ccache pkg-config
  libtorch-dev libopenblas0-pthread libgloo-dev
  libsentencepiece-dev sentencepiece
  libyaml-cpp-dev libgtest-dev libgmock-dev libbenchmark-dev
  libcli11-dev libfmt-dev nlohmann-json3-dev
  zlib1g-dev libzstd-dev zstd libutf8proc-dev
  python3-torch python3-sentencepiece python3-protobuf fasttext time strace
  chromium
  # sift serve: HTTP (cpp-httplib) and Prometheus metrics; its bench: wrk, and the
  # Python servers it is compared with (gunicorn + Flask around fastText and torch.jit).
  libcpp-httplib-dev prometheus-cpp-dev wrk gunicorn python3-flask python3-fasttext
  # bench/http_libs.sh: the same route on Boost.Beast (headers only), beside cpp-httplib.
  libboost-dev
  # The Python package (python/, pybind11) and its tests.
  pybind11-dev python3-dev python3-pytest
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
