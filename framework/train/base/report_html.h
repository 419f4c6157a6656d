// RUN/report.html: one self-contained page (inline SVG and CSS, no script, no network
// request) made from what a run folder holds: report.json (summary, per-split metrics,
// confusion matrix, phase profile, environment), metrics.csv (curves by step) and
// config.yaml. Any of them may be missing or cut short (a killed run, a folder from
// before metrics.csv): the page shows what there is.
#pragma once

#include <string>
#include <vector>

namespace sift {

// The x axis of the curves: optimizer steps; epochs (a step's fraction of the run's first
// epoch's steps); or training seconds (metrics.jsonl's at each validation, taken
// linearly by step between them and the run's end).
enum class ReportAxis { steps, epochs, time };

// "steps", "epochs", "time" -> the axis; sift::Error naming --x otherwise.
ReportAxis report_axis(const std::string& name);

// The page of one run, or of several side by side (a metrics table, the options whose
// values differ, curves overlaid on `axis`, accuracy against training time). sift::Error
// when a folder holds none of the files.
std::string report_html(const std::vector<std::string>& run_dirs,
                        ReportAxis axis = ReportAxis::steps);

}  // namespace sift
