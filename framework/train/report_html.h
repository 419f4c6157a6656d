// RUN/report.html: one self-contained page (inline SVG and CSS, no script, no network
// request) made from what a run folder holds: report.json (summary, per-split metrics,
// confusion matrix, phase profile, environment), metrics.csv (curves by step) and
// config.yaml. Any of them may be missing or cut short (a killed run, a folder from
// before metrics.csv): the page shows what there is.
#pragma once

#include <string>
#include <vector>

namespace sift {

// The page of one run, or of several side by side (a metrics table, curves overlaid,
// accuracy against training time). sift::Error when a folder holds none of the files.
std::string report_html(const std::vector<std::string>& run_dirs);

}  // namespace sift
