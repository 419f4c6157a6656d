#!/usr/bin/env bash
# Code lines that the commits naming an issue added and removed: the "fewer lines of code"
# figure of a clean-up issue. Counted outside tests/, docs/, bench/, CMake lists and
# Markdown, without blank and comment lines.
#
#   bench/issue_lines.sh 37            # every commit whose message names #37
#   bench/issue_lines.sh 37 2943179    # only those after 2943179
set -euo pipefail
cd "$(dirname "$0")/.."
range=${2:+$2..}HEAD
for c in $(git log --no-merges --grep "#$1\b" --format=%h "$range"); do
  git show --format= -U0 "$c" -- . ':!tests' ':!docs' ':!bench' ':!*CMakeLists.txt' ':!*.md' \
    ':!*.cmake'
done | awk '
/^(\+\+\+|---) /{next}
/^[+-]/{ t=substr($0,2); gsub(/^[ \t]+|[ \t]+$/,"",t);
  if (t=="" || t ~ /^\/\// || t ~ /^#[^a-z]/ || t ~ /^#$/ || t ~ /^\/?\*/) next;
  if (substr($0,1,1)=="+") a++; else d++ }
END{printf "+%d -%d net %+d\n",a,d,a-d}'
