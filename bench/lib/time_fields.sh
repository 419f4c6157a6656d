# "wall cpu rss_mb" from a `/usr/bin/time -v` report: wall-clock seconds, user + system
# CPU seconds, peak resident set in MB. Sourced by fast_path_synthetic.sh, many_labels.sh
# and predict_e2e.sh.
#   time_fields REPORT [DECIMALS]    seconds to DECIMALS places (default 1; the report
#                                    itself gives hundredths)
time_fields() {
  awk -F': ' -v d="${2:-1}" '
    /Elapsed \(wall clock\)/ { n = split($2, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; wall = s }
    /User time/ { cpu += $2 } /System time/ { cpu += $2 }
    /Maximum resident set size/ { rss = $2 / 1024 }
    END { printf "%.*f %.*f %.0f\n", d, wall, d, cpu, rss }' "$1"
}
