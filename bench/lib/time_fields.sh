# "wall cpu rss_mb" from a `/usr/bin/time -v` report: wall-clock seconds, user + system
# CPU seconds, peak resident set in MB. Sourced by fast_path_synthetic.sh and
# many_labels.sh.
time_fields() {
  awk -F': ' '
    /Elapsed \(wall clock\)/ { n = split($2, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; wall = s }
    /User time/ { cpu += $2 } /System time/ { cpu += $2 }
    /Maximum resident set size/ { rss = $2 / 1024 }
    END { printf "%.1f %.1f %.0f\n", wall, cpu, rss }' "$1"
}
