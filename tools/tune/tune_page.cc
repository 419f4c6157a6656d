#include "tools/tune/tune_page.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>

#include "core/html_page.h"
#include "framework/runtime/base/run_folder.h"

namespace sift {
namespace {

// One validation of a trial, placed on the search's clock.
struct Point {
  double seconds = 0.0;
  double metric = 0.0;
};

// The end-of-epoch validations in a trial's metrics.jsonl (none if it has no file yet).
std::vector<Point> validations(const TrialRecord& r, const std::string& field) {
  std::vector<Point> out;
  std::ifstream in(run_file(r.run_dir, kMetricsFile));
  for (std::string line; std::getline(in, line);) {
    const auto j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_object() || !j.value("end_of_epoch", false) || !j.contains(field)) continue;
    if (!j[field].is_number()) continue;
    out.push_back({r.started + j.value("seconds", 0.0), j[field].get<double>()});
  }
  return out;
}

const std::vector<std::string>& kStatuses = trial_status_names();

// finished blue, pruned orange, budget purple, failed red, interrupted brown.
const char* status_color(const std::string& status) {
  const size_t i = std::find(kStatuses.begin(), kStatuses.end(), status) - kStatuses.begin();
  constexpr std::array<size_t, 5> kIndex = {0, 3, 4, 1, 5};
  return kColors[kIndex[std::min<size_t>(i, kIndex.size() - 1)]];
}

// One set of dots per trial status, in TrialStatus order.
std::vector<Series> status_series() {
  std::vector<Series> series;
  for (const auto& status : kStatuses) series.push_back({status, status_color(status), {}, true});
  return series;
}

// Statuses no trial had are left out of the chart and its legend.
void drop_empty(std::vector<Series>& series) {
  series.erase(std::remove_if(series.begin(), series.end(),
                              [](const Series& s) { return s.points.empty(); }),
               series.end());
}

// Dots per status, and the best value so far as a line.
std::string metric_against_time(const TunePage& page) {
  std::vector<Series> series = status_series();
  std::vector<Point> all;
  for (const auto& r : page.records) {
    const size_t s = static_cast<size_t>(r.status);
    for (const Point& p : validations(r, page.field)) {
      series[s].points.emplace_back(p.seconds, p.metric);
      all.push_back(p);
    }
  }
  std::sort(all.begin(), all.end(),
            [](const Point& a, const Point& b) { return a.seconds < b.seconds; });
  Series best{"best so far", "#222", {}, false};
  for (const Point& p : all) {
    if (best.points.empty() || p.metric > best.points.back().second) {
      if (!best.points.empty()) best.points.emplace_back(p.seconds, best.points.back().second);
      best.points.emplace_back(p.seconds, p.metric);
    }
  }
  // The line runs on to the last validation, a flat stretch when nothing improved.
  if (!all.empty()) best.points.emplace_back(all.back().seconds, best.points.back().second);
  drop_empty(series);
  series.push_back(best);
  return svg_chart("validation " + page.metric + " of every epoch against the search's time",
                   "seconds since the search started", series);
}

// Where a value sits on the x axis: the number, its log10 for log spaces, the index of a
// choice. NaN when it does not read.
double x_of(const SearchSpace& space, const std::string& value) {
  if (space.kind == SpaceKind::choice) {
    const auto it = std::find(space.choices.begin(), space.choices.end(), value);
    return it == space.choices.end() ? std::nan("") : double(it - space.choices.begin());
  }
  char* end = nullptr;
  const double v = std::strtod(value.c_str(), &end);
  if (end == value.c_str()) return std::nan("");
  const bool log = space.kind == SpaceKind::log || space.kind == SpaceKind::integer_log;
  return log ? (v > 0 ? std::log10(v) : std::nan("")) : v;
}

std::string x_label(const TunedParam& p) {
  if (p.space.kind == SpaceKind::choice) {
    std::vector<std::string> names;
    for (size_t i = 0; i < p.space.choices.size(); ++i)
      names.push_back(fmt::format("{} = {}", i, p.space.choices[i]));
    return fmt::format("{}", fmt::join(names, ", "));
  }
  const bool log = p.space.kind == SpaceKind::log || p.space.kind == SpaceKind::integer_log;
  return log ? "log10 of " + p.key : p.key;
}

std::string parameter_charts(const TunePage& page) {
  std::string html =
      "<section id=\"parameters\"><h2>Each tuned option against the "
      "metric</h2><div class=\"charts\">";
  for (const auto& p : page.params) {
    std::vector<Series> series = status_series();
    for (const auto& r : page.records) {
      const auto it = r.values.find(p.key);
      if (!r.has_metric || it == r.values.end()) continue;
      const double x = x_of(p.space, it->second);
      if (std::isfinite(x)) series[static_cast<size_t>(r.status)].points.emplace_back(x, r.metric);
    }
    drop_empty(series);
    html += svg_chart(p.key + " (" + p.space.describe() + ")", x_label(p), series, true);
  }
  return html + "</div></section>";
}

std::string cell(const std::string& text) { return "<td>" + escape(text) + "</td>"; }

std::string trials_table(const TunePage& page, int64_t winner) {
  std::string html =
      "<section id=\"trials\"><h2>Trials</h2><table><tr><th>trial</th>"
      "<th>status</th><th>" +
      escape(page.metric) +
      "</th><th>epochs</th><th>best epoch</th><th>seconds</th><th>started</th>"
      "<th>tuned values</th><th>why it stopped</th></tr>";
  for (const auto& r : page.records) {
    html += r.number == winner ? "<tr class=\"best\">" : "<tr>";
    html += cell(std::to_string(r.number)) + cell(to_string(r.status)) +
            cell(r.has_metric ? fmt::format("{:.4f}", r.metric) : "-") +
            cell(std::to_string(r.epochs)) + cell(std::to_string(r.best_epoch)) +
            cell(fmt::format("{:.1f}", r.seconds)) + cell(fmt::format("{:.1f}", r.started));
    // One cell of key = value lines, not a column per tuned option: six options made the
    // table 1,562 px wide, wider than the window at 1280 and 800 px.
    std::string values;
    for (const auto& p : page.params) {
      const auto it = r.values.find(p.key);
      if (it == r.values.end()) continue;
      values += (values.empty() ? "" : "<br>") + escape(p.key + " = " + it->second);
    }
    html += "<td class=\"values\">" + values + "</td><td class=\"reason\">" + escape(r.reason) +
            "</td></tr>";
  }
  return html + "</table></section>";
}

std::string figure(const nlohmann::json& split, const char* key) {
  return split.is_object() && split.contains(key) && split[key].is_number()
             ? fmt::format("{:.4f}", split[key].get<double>())
             : "-";
}

// The winner: its trial, validation figure, the model to use and its test figures.
std::string winner_section(const TunePage& page) {
  const auto& s = page.summary;
  std::string html = "<section id=\"winner\"><h2>Winner</h2>";
  if (!s.is_object() || !s.contains("best")) {
    const char* note = s.is_object() ? "no trial won (see the trials table)"
                                     : "the search is under way: this page is rewritten after "
                                       "every trial";
    return html + "<p class=\"note\">" + note + "</p></section>";
  }
  const auto& b = s["best"];
  html += "<table>";
  auto row = [&](const std::string& k, const std::string& v) {
    html += "<tr><th>" + escape(k) + "</th>" + cell(v) + "</tr>";
  };
  row("trial", std::to_string(b.value("trial", int64_t{-1})));
  row("validation " + page.metric, fmt::format("{:.4f}", b.value("metric", 0.0)));
  row("model", b.value("model", b.value("run_dir", "")));
  row("config", b.value("config", ""));
  if (b.contains("refit")) {
    const auto& r = b["refit"];
    row("trained again on train + valid",
        r.value("status", "") +
            (r.contains("reason") ? ": " + r["reason"].get<std::string>() : ""));
  }
  if (b.contains("trial_test")) {
    row("test accuracy of the trial", figure(b["trial_test"], "accuracy"));
    row("test macro-F1 of the trial", figure(b["trial_test"], "macro_f1"));
  }
  if (b.contains("test")) {
    row("test accuracy", figure(b["test"], "accuracy"));
    row("test macro-F1", figure(b["test"], "macro_f1"));
    // The searched metric's own row only when it is neither: "test accuracy" was listed
    // twice.
    if (page.metric != "accuracy" && page.metric != "macro_f1") {
      row("test " + page.metric, figure(b, "test_metric"));
    }
  }
  row("search seconds", fmt::format("{:.0f} of {:.0f}", s.value("spent_seconds", 0.0),
                                    s.value("budget_seconds", 0.0)));
  return html + "</table></section>";
}

}  // namespace

std::string tune_page(const TunePage& page) {
  int64_t winner = -1;
  if (page.summary.is_object() && page.summary.contains("best"))
    winner = page.summary["best"].value("trial", int64_t{-1});
  std::string html = html_page_start("sift tune: " + page.config);
  html += fmt::format("<p>{} trials, metric {}</p>", page.records.size(), escape(page.metric));
  html += winner_section(page);
  html += "<section id=\"progress\"><h2>The search</h2><div class=\"charts\">" +
          metric_against_time(page) + "</div></section>";
  html += parameter_charts(page) + trials_table(page, winner);
  return html + html_page_end();
}

}  // namespace sift
