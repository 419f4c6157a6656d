#!/usr/bin/env bash
# Installs what is needed, builds, and trains the default model on the embedded SMS
# Spam Collection: prints held-out metrics and the run folder with the model.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/build.sh
build/sift train configs/sms_spam.yaml "$@"
