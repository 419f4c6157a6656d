#include "framework/train/base/report_html.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <utility>

#include "config/metric_table.h"
#include "core/error.h"
#include "core/file_bytes.h"
#include "core/html_page.h"
#include "core/printable.h"
#include "framework/runtime/base/confused_examples.h"
#include "framework/runtime/base/metrics.h"
#include "framework/runtime/base/run_folder.h"
#include "framework/train/base/step_log.h"

namespace sift {
namespace {

namespace fs = std::filesystem;

struct RunFiles {
  std::string dir, name;
  nlohmann::json report;  // null when missing or unreadable
  StepLogTable steps;
  std::string config;
  std::vector<std::string> notes;  // what was missing or damaged
  // (step, training seconds) at each validation (metrics.jsonl) and at the run's end.
  std::vector<std::pair<double, double>> clock;
  double steps_per_epoch = 0.0;  // 0: unknown (the x axis stays in steps)
};

// The validations' (step, seconds), made increasing across a resume (whose clock starts
// again at 0), and the end of training from report.json.
std::vector<std::pair<double, double>> clock_of(const std::string& jsonl,
                                                const nlohmann::json& report) {
  std::vector<std::pair<double, double>> clock{{0.0, 0.0}};
  double offset = 0.0;
  std::istringstream in(jsonl);
  for (std::string line; std::getline(in, line);) {
    const auto j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_object() || !j["step"].is_number() || !j["seconds"].is_number()) continue;
    double seconds = j["seconds"].get<double>() + offset;
    if (seconds < clock.back().second) {  // a resumed run's clock
      offset = clock.back().second;
      seconds += offset;
    }
    clock.emplace_back(j["step"].get<double>(), seconds);
  }
  if (report.is_object() && report.contains("train") && report["train"].is_object()) {
    const auto& t = report["train"];
    if (t["steps"].is_number() && t["seconds"].is_number() &&
        t["steps"].get<double>() > clock.back().first) {
      clock.emplace_back(t["steps"].get<double>(),
                         std::max(t["seconds"].get<double>(), clock.back().second));
    }
  }
  return clock;
}

// The steps of the first epoch: the last step metrics.csv records in epoch 1 when epoch 2
// began, else report.json's steps over its epochs.
double steps_per_epoch(const StepLogTable& t, const nlohmann::json& report) {
  const auto& cols = t.columns;
  const auto sc = std::find(cols.begin(), cols.end(), "step") - cols.begin();
  const auto ec = std::find(cols.begin(), cols.end(), "epoch") - cols.begin();
  double last_of_first = 0.0;
  bool later = false;
  if (static_cast<size_t>(sc) < cols.size() && static_cast<size_t>(ec) < cols.size()) {
    for (const auto& row : t.rows) {
      if (row[ec] == "1") last_of_first = std::max(last_of_first, std::atof(row[sc].c_str()));
      later = later || (!row[ec].empty() && row[ec] != "1");
    }
  }
  if (later && last_of_first > 0) return last_of_first;
  if (report.is_object() && report.contains("train") && report["train"].is_object()) {
    const auto& tr = report["train"];
    if (tr["steps"].is_number() && tr["epochs"].is_number() && tr["epochs"].get<double>() > 0) {
      return tr["steps"].get<double>() / tr["epochs"].get<double>();
    }
  }
  return last_of_first;
}

// A step's place on `axis`.
double x_of(const RunFiles& r, double step, ReportAxis axis) {
  if (axis == ReportAxis::epochs) return r.steps_per_epoch > 0 ? step / r.steps_per_epoch : step;
  if (axis == ReportAxis::steps || r.clock.size() < 2) return step;
  const auto& c = r.clock;
  size_t i = 1;
  while (i + 1 < c.size() && c[i].first < step) ++i;
  const auto& [s0, t0] = c[i - 1];
  const auto& [s1, t1] = c[i];
  return s1 > s0 ? t0 + (t1 - t0) * (step - s0) / (s1 - s0) : t1;
}

const char* axis_title(ReportAxis axis) {
  return axis == ReportAxis::steps    ? "step"
         : axis == ReportAxis::epochs ? "epoch"
                                      : "training seconds";
}

std::string number(const nlohmann::json& j, const char* format = "{:.4f}") {
  return j.is_number() ? fmt::format(fmt::runtime(format), j.get<double>()) : "";
}

RunFiles read_run(const std::string& dir) {
  RunFiles r;
  r.dir = dir;
  r.name = fs::path(dir).lexically_normal().filename().string();
  if (r.name.empty()) r.name = fs::path(dir).lexically_normal().parent_path().filename().string();
  const std::string report = run_file(dir, kReportJsonFile), csv = run_file(dir, kStepLogFile),
                    config = run_file(dir, kConfigFile);
  if (!fs::exists(report) && !fs::exists(csv) && !fs::exists(config)) {
    throw Error(fmt::format("{} is not a run folder: it holds no {}, {} or {}", dir,
                            kReportJsonFile, kStepLogFile, kConfigFile));
  }
  if (fs::exists(report)) {
    r.report = nlohmann::json::parse(read_file_bytes(report), nullptr, false);
    if (r.report.is_discarded() || !r.report.is_object()) {
      r.report = nullptr;
      r.notes.push_back(std::string(kReportJsonFile) + " is not valid JSON (a run still going?)");
    }
  } else {
    r.notes.push_back(std::string("no ") + kReportJsonFile + " (the run has not finished)");
  }
  if (fs::exists(csv)) {
    r.steps = parse_step_log(read_file_bytes(csv));
  } else {
    r.notes.push_back(std::string("no ") + kStepLogFile + " (a run from before it was written)");
  }
  if (fs::exists(config)) r.config = read_file_bytes(config);
  const std::string jsonl = run_file(dir, kMetricsFile);
  r.clock = clock_of(fs::exists(jsonl) ? read_file_bytes(jsonl) : "", r.report);
  r.steps_per_epoch = steps_per_epoch(r.steps, r.report);
  return r;
}

Series column_series(const RunFiles& r, const std::string& column, const std::string& name,
                     const std::string& color, ReportAxis axis) {
  Series s{name, color, {}};
  const auto& cols = r.steps.columns;
  const auto it = std::find(cols.begin(), cols.end(), column);
  const auto step_it = std::find(cols.begin(), cols.end(), "step");
  if (it == cols.end() || step_it == cols.end()) return s;
  const size_t c = it - cols.begin(), sc = step_it - cols.begin();
  for (const auto& row : r.steps.rows) {
    char* end = nullptr;
    const double x = std::strtod(row[sc].c_str(), &end);
    if (end == row[sc].c_str()) continue;
    const double y = std::strtod(row[c].c_str(), &end);
    if (end == row[c].c_str() || !std::isfinite(y)) continue;
    s.points.emplace_back(x_of(r, x, axis), y);
  }
  return s;
}

// Training loss as lines and validation loss as markers on one chart, so that the two
// parting (overfitting) shows; several runs overlaid in their own colours.
std::string loss_chart(const std::vector<RunFiles>& runs, ReportAxis axis) {
  std::vector<Series> series;
  for (size_t i = 0; i < runs.size(); ++i) {
    const std::string run = runs.size() > 1 ? runs[i].name + " " : "";
    const std::string color = kColors[i % kColors.size()];
    Series train = column_series(runs[i], "train_loss", run + "training", color, axis);
    Series valid = column_series(runs[i], "valid_loss", run + "validation",
                                 runs.size() > 1 ? color : kColors[1], axis);
    valid.dots = true;
    for (Series* s : {&train, &valid}) {
      if (!s->points.empty()) series.push_back(std::move(*s));
    }
  }
  if (series.empty()) return "";
  return svg_chart("training loss (lines) and validation loss (markers)", axis_title(axis), series);
}

// Whether every point of every series has the same value (a constant learning rate).
bool flat(const std::vector<Series>& series) {
  std::optional<double> first;
  for (const auto& s : series) {
    for (const auto& [x, y] : s.points) {
      if (first && *first != y) return false;
      first = y;
    }
  }
  return true;
}

// The curves of one run, or of several overlaid: the losses together, then one chart per
// other metrics.csv column; a column without data gets no panel, a flat one a line of text.
std::string curves(const std::vector<RunFiles>& runs, ReportAxis axis) {
  // The losses have their chart (loss_chart); every other metric of the table its own.
  std::vector<std::pair<std::string, std::string>> charts;
  for (const auto& m : metric_table()) {
    if (std::string(m.key) == "loss") continue;
    charts.emplace_back(std::string("valid_") + m.key, std::string("validation ") + m.title);
  }
  charts.insert(charts.end(), {{"lr", "learning rate"},
                               {"examples_per_s", "examples per second"},
                               {"grad_norm", "gradient norm"}});
  std::string html =
      fmt::format("<section id=\"curves\"><h2>Curves by {}</h2><div class=\"charts\">",
                  axis_title(axis)) +
      loss_chart(runs, axis);
  std::string notes;
  for (const auto& [column, title] : charts) {
    std::vector<Series> series;
    bool any = false;
    for (size_t i = 0; i < runs.size(); ++i) {
      series.push_back(column_series(runs[i], column, runs.size() > 1 ? runs[i].name : column,
                                     kColors[i % kColors.size()], axis));
      any = any || !series.back().points.empty();
    }
    if (!any) continue;
    if (flat(series)) {
      const double value = std::find_if(series.begin(), series.end(),
                                        [](const Series& s) { return !s.points.empty(); })
                               ->points.front()
                               .second;
      notes += fmt::format("<p class=\"note\">{}: {} throughout</p>", title, tick(value));
      continue;
    }
    html += svg_chart(title, axis_title(axis), series);
  }
  return html + "</div>" + notes + "</section>";
}

const nlohmann::json& split_of(const RunFiles& r, std::string* name = nullptr) {
  static const nlohmann::json none;
  if (!r.report.is_object() || !r.report.contains("splits")) return none;
  for (const char* s : {"test", "valid"}) {
    if (r.report["splits"].contains(s)) {
      if (name) *name = s;
      return r.report["splits"][s];
    }
  }
  return none;
}

// Black or white, whichever contrasts more with the fill rgb(r, g, b) (WCAG's relative
// luminance): a count stays readable on the darkest blue as on white.
const char* text_color_on(int r, int g, int b) {
  auto linear = [](int c) {
    const double s = c / 255.0;
    return s <= 0.03928 ? s / 12.92 : std::pow((s + 0.055) / 1.055, 2.4);
  };
  const double luminance = 0.2126 * linear(r) + 0.7152 * linear(g) + 0.0722 * linear(b);
  return 1.05 / (luminance + 0.05) > (luminance + 0.05) / 0.05 ? "#fff" : "#000";
}

// The confusion matrix as a heat map: true labels down the left, predicted labels along
// the top, each cell shaded by its share of the row and showing its count.
std::string heat_map(const nlohmann::json& split, const std::vector<std::string>& labels) {
  const auto& m = split["confusion"];
  const size_t n = m.size();
  auto name = [&](size_t i) {
    return (i < labels.size() ? labels[i] : std::to_string(i)).substr(0, 18);
  };
  size_t longest = 1;
  for (size_t i = 0; i < n; ++i) longest = std::max(longest, name(i).size());
  const double cell = n > 20 ? 14 : 36, left = 40 + 6.0 * longest, top = 30 + 4.5 * longest;
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" role=\"img\">",
      std::max(left + cell * n + 10, 300.0), top + cell * n + 10);
  svg += fmt::format(
      "<text x=\"{:.1f}\" y=\"12\" class=\"tick\" text-anchor=\"middle\">predicted label"
      "</text><text transform=\"translate(12 {:.1f}) rotate(-90)\" class=\"tick\" "
      "text-anchor=\"middle\">true label</text>",
      left + cell * n / 2, top + cell * n / 2);
  for (size_t p = 0; p < n; ++p) {
    const double x = left + cell * (p + 0.5) + 3, y = top - 4;
    svg += fmt::format(
        "<text class=\"tick col\" transform=\"translate({:.1f} {:.1f}) rotate(-60)\">{}</text>", x,
        y, escape(name(p)));
  }
  for (size_t t = 0; t < n; ++t) {
    int64_t row_total = 0;
    for (const auto& v : m[t]) row_total += v.get<int64_t>();
    svg += fmt::format("<text x=\"{}\" y=\"{:.1f}\" class=\"tick\" text-anchor=\"end\">{}</text>",
                       left - 4, top + cell * (t + 0.5) + 4, escape(name(t)));
    for (size_t p = 0; p < n; ++p) {
      const int64_t count = m[t][p].get<int64_t>();
      const double share = row_total > 0 ? static_cast<double>(count) / row_total : 0.0;
      const int shade = static_cast<int>(255 - 200 * share);
      svg += fmt::format(
          "<rect class=\"cell\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{}\" height=\"{}\" "
          "fill=\"rgb({},{},255)\" stroke=\"#fff\"><title>true {}, predicted {}: {} "
          "({:.1f}% of the row)</title></rect>",
          left + cell * p, top + cell * t, cell, cell, shade, shade, escape(name(t)),
          escape(name(p)), count, 100 * share);
      if (n <= 20) {
        svg += fmt::format(
            "<text x=\"{:.1f}\" y=\"{:.1f}\" class=\"count\" text-anchor=\"middle\" "
            "fill=\"{}\">{}</text>",
            left + cell * (p + 0.5), top + cell * (t + 0.5) + 4, text_color_on(shade, shade, 255),
            count);
      }
    }
  }
  return svg + "</svg><p class=\"note\">Shade: the cell's share of its row (true label).</p>";
}

std::string per_class_table(const nlohmann::json& split) {
  std::string html =
      "<table id=\"per-class\"><tr><th>label</th><th>precision</th><th>recall</th>"
      "<th>F1</th><th>support</th></tr>";
  for (const auto& c : split["per_class"]) {
    html += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                        escape(c.value("label", "")), number(c["precision"]), number(c["recall"]),
                        number(c["f1"]), c.value("support", int64_t{0}));
  }
  return html + "</table>";
}

// The reliability diagram: each bin's accuracy as a bar against the diagonal a calibrated
// model would follow, with its examples in the tooltip.
std::string reliability_diagram(const nlohmann::json& calibration, const std::string& split) {
  const double size = 220, left = 40, top = 10, bottom = 30;
  std::string svg = fmt::format(
      "<figure class=\"chart\" id=\"reliability\"><figcaption>Reliability on the {} split: "
      "accuracy by confidence (ECE {:.4f})</figcaption><svg xmlns=\"http://www.w3.org/2000/svg\" "
      "width=\"{}\" height=\"{}\" role=\"img\">",
      split, calibration.value("ece", 0.0), left + size + 20, top + size + bottom);
  auto px = [&](double x) { return left + x * size; };
  auto py = [&](double y) { return top + (1 - y) * size; };
  svg += fmt::format(
      "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#fafafa\" stroke=\"#ccc\"/>", left,
      top, size, size);
  for (const auto& bin : calibration["bins"]) {
    if (bin.value("examples", int64_t{0}) == 0) continue;
    const double from = bin.value("from", 0.0), to = bin.value("to", 0.0);
    const double accuracy = bin.value("accuracy", 0.0);
    svg += fmt::format(
        "<rect class=\"bin\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" "
        "fill=\"#1f77b4\" stroke=\"#fff\"><title>confidence {:.1f}-{:.1f}: {} examples, mean "
        "confidence {:.3f}, accuracy {:.3f}</title></rect>",
        px(from), py(accuracy), px(to) - px(from), py(0) - py(accuracy), from, to,
        bin.value("examples", int64_t{0}), bin.value("confidence", 0.0), accuracy);
  }
  svg += fmt::format(
      "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#d62728\" "
      "stroke-dasharray=\"4\"/>",
      px(0), py(0), px(1), py(1));
  for (int i = 0; i <= 4; ++i) {
    svg += fmt::format(
        "<text x=\"{}\" y=\"{:.1f}\" class=\"tick\" text-anchor=\"end\">{:.2g}</text>"
        "<text x=\"{:.1f}\" y=\"{}\" class=\"tick\" text-anchor=\"middle\">{:.2g}</text>",
        left - 4, py(i / 4.0) + 4, i / 4.0, px(i / 4.0), top + size + 14, i / 4.0);
  }
  svg += fmt::format(
      "<text x=\"{}\" y=\"{}\" class=\"tick\" text-anchor=\"middle\">confidence (top "
      "probability)</text>",
      left + size / 2, top + size + 28);
  return svg +
         "</svg><p class=\"note\">Bars: accuracy of each bin; dashed: a calibrated model."
         "</p></figure>";
}

// A split's confusion matrix as report.json holds it: dense ("confusion") or its nonzero
// cells ("confusion_cells", past ConfusionMatrix::kDenseJsonLabels labels); `names` grows
// to cover every label the cells name.
ConfusionMatrix confusion_of(const nlohmann::json& split, std::vector<std::string>& names) {
  std::vector<int64_t> triples;
  if (split.contains("confusion")) {
    const auto& m = split["confusion"];
    for (size_t t = 0; t < m.size(); ++t) {
      for (size_t p = 0; p < m[t].size(); ++p) {
        triples.insert(triples.end(), {int64_t(t), int64_t(p), m[t][p].get<int64_t>()});
      }
    }
  } else if (split.contains("confusion_cells")) {
    for (const auto& c : split["confusion_cells"]) {
      for (size_t i = 0; i < 3; ++i) triples.push_back(c.at(i).get<int64_t>());
    }
  }
  int64_t classes = static_cast<int64_t>(names.size());
  for (size_t i = 0; i < triples.size(); i += 3) {
    classes = std::max({classes, triples[i] + 1, triples[i + 1] + 1});
  }
  while (static_cast<int64_t>(names.size()) < classes)
    names.push_back(std::to_string(names.size()));
  return ConfusionMatrix::from_cells(classes, triples);
}

// The most confused pairs: the validation split's, with a few of its misclassified texts,
// as the run recorded them; or, for a run from before those, the largest off-diagonal
// cells of the split shown.
std::string confused_pairs(const RunFiles& r, std::string name, const nlohmann::json& split,
                           const std::vector<std::string>& labels) {
  nlohmann::json pairs;
  const nlohmann::json& valid = r.report["splits"].value("valid", nlohmann::json());
  if (valid.is_object() && valid.contains("confused_examples")) {
    pairs = valid["confused_examples"];
    name = "valid";
  } else {
    std::vector<std::string> names = labels;
    pairs = ConfusedExamples().most_confused(confusion_of(split, names), names);
  }
  if (!pairs.is_array() || pairs.empty()) return "";
  std::string html = fmt::format(
      "<h3>Most confused pairs on the {} split</h3><table id=\"confused\"><tr><th>true "
      "label</th><th>predicted as</th><th>examples</th><th>share of the true label</th>"
      "<th>some of them</th></tr>",
      name);
  for (const auto& p : pairs) {
    std::string texts;
    for (const auto& t : p.value("texts", nlohmann::json::array())) {
      texts += "<li>" + escape(t.get<std::string>()) + "</li>";
    }
    html += fmt::format(
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{:.1f}%</td><td class=\"texts\">{}</td></tr>",
        escape(p.value("true", "")), escape(p.value("predicted", "")), p.value("count", int64_t{0}),
        100.0 * p.value("share_of_true", 0.0), texts.empty() ? "" : "<ul>" + texts + "</ul>");
  }
  return html + "</table>";
}

// The split's headline figures: a multi-label split has its own (subset accuracy,
// micro-averaged scores, Hamming loss); fastText's P@k and R@k when the run counted them.
std::string split_figures(const nlohmann::json& split) {
  const bool multi = split.contains("hamming_loss");
  std::string html = "<table id=\"split-figures\">";
  for (const auto& m : metric_table()) {
    if (split.contains(m.key)) {
      html += fmt::format("<tr><th>{}</th><td>{}</td></tr>", multi ? m.multi_label_title : m.title,
                          number(split[m.key]));
    }
  }
  for (const char* key : {"k", "examples", "skipped_records"}) {
    if (split.contains(key) && split[key].is_number()) {
      html += fmt::format("<tr><th>{}</th><td>{}</td></tr>", key, split[key].dump());
    }
  }
  return html + "</table>";
}

std::string evaluation_section(const RunFiles& r) {
  std::string name;
  const nlohmann::json& split = split_of(r, &name);
  if (split.is_null()) return "";
  std::vector<std::string> labels;
  if (r.report.contains("labels")) labels = r.report["labels"].get<std::vector<std::string>>();
  std::string html =
      fmt::format("<section id=\"evaluation\"><h2>Evaluation on the {} split</h2>", name) +
      split_figures(split);
  if (split.contains("confusion")) {
    html += fmt::format("<div id=\"confusion\"><h3>Confusion matrix on the {} split</h3>", name) +
            heat_map(split, labels) + "</div>";
  } else if (split.contains("confusion_cells")) {
    html += fmt::format(
        "<p class=\"note\" id=\"confusion\">{} labels: the confusion matrix is not drawn; "
        "report.json lists its nonzero cells (confusion_cells).</p>",
        labels.size());
  }
  if (split.contains("confusion") || split.contains("confusion_cells")) {
    html += confused_pairs(r, name, split, labels);
  }
  if (split.contains("per_class")) {
    html += fmt::format("<h3>Per class on the {} split</h3>", name) + per_class_table(split);
  }
  if (split.contains("calibration")) html += reliability_diagram(split["calibration"], name);
  return html + "</section>";
}

std::string phases_section(const RunFiles& r) {
  if (!r.report.is_object() || !r.report.contains("train") ||
      !r.report["train"].contains("phases")) {
    return "";
  }
  const auto& p = r.report["train"]["phases"];
  std::string html = fmt::format(
      "<section id=\"phases\"><h2>Where the time went</h2><p>{:.2f} s of training, {} steps, "
      "peak RSS {:.1f} MiB</p>",
      p.value("wall_seconds", 0.0), p.value("steps", int64_t{0}),
      static_cast<double>(p.value("peak_rss_bytes", int64_t{0})) / (1 << 20));
  if (p.contains("bottleneck")) {
    html += "<p class=\"warn\">" + escape(p["bottleneck"].get<std::string>()) + "</p>";
  }
  if (const auto trace = r.report["train"].value("profile", nlohmann::json()); trace.is_object()) {
    html += fmt::format(
        "<p id=\"profile\">Profiler trace of {} steps from step {}: <a href=\"{}\">{}</a> (open it "
        "in chrome://tracing or ui.perfetto.dev)</p>",
        trace.value("steps", int64_t{0}), trace.value("first_step", int64_t{0}),
        escape(trace.value("trace", "")), escape(trace.value("trace", "")));
  }
  html +=
      "<table><tr><th>phase</th><th>seconds</th><th>share of wall time</th><th>ms per step</th>"
      "<th>peak tensor MiB</th></tr>";
  for (const auto& row : p["table"]) {
    const double share = row.value("share", 0.0);
    html += fmt::format(
        "<tr><td>{}</td><td>{:.3f}</td><td><svg width=\"160\" height=\"12\"><rect width=\"{:.1f}\" "
        "height=\"12\" fill=\"#1f77b4\"/></svg> {:.1f}%</td><td>{:.4f}</td><td>{}</td></tr>",
        escape(row.value("phase", "")), row.value("seconds", 0.0), 160 * share, 100 * share,
        row.value("ms_per_step", 0.0),
        row.contains("peak_tensor_bytes")
            ? fmt::format("{:.1f}",
                          static_cast<double>(row["peak_tensor_bytes"].get<int64_t>()) / (1 << 20))
            : "");
  }
  return html + "</table></section>";
}

std::string key_value_table(const nlohmann::json& object) {
  std::string html = "<table>";
  for (const auto& [key, value] : object.items()) {
    if (value.is_structured()) continue;
    html += fmt::format("<tr><th>{}</th><td>{}</td></tr>", escape(key),
                        escape(value.is_string() ? value.get<std::string>() : value.dump()));
  }
  return html + "</table>";
}

// The headline figures of each run: one row per run.
std::string summary_table(const std::vector<RunFiles>& runs) {
  auto get = [](const nlohmann::json& j, const char* k) {
    return j.is_object() && j.contains(k) ? j[k] : nlohmann::json();
  };
  // Multi-label runs: their accuracy is subset accuracy, and micro-F1 gets a column.
  bool multi = false;
  for (const auto& r : runs) multi = multi || get(split_of(r), "micro_f1").is_number();
  std::vector<const MetricName*> columns;
  for (const auto& m : metric_table()) {
    if ((m.score && (multi || !m.multi_label_only)) || m.key == std::string("loss")) {
      columns.push_back(&m);
    }
  }
  std::string html = "<table id=\"summary\"><tr><th>run</th><th>split</th>";
  for (const MetricName* m : columns) html += fmt::format("<th>{}</th>", m->title);
  html += "<th>steps</th><th>training s</th><th>examples/s</th></tr>";
  for (const auto& r : runs) {
    std::string name;
    const nlohmann::json& split = split_of(r, &name);
    const nlohmann::json train =
        r.report.is_object() ? r.report.value("train", nlohmann::json()) : nlohmann::json();
    html += fmt::format("<tr><td>{}</td><td>{}</td>", escape(r.name), name);
    for (const MetricName* m : columns) html += "<td>" + number(get(split, m->key)) + "</td>";
    html += fmt::format("<td>{}</td><td>{}</td><td>{}</td></tr>",
                        get(train, "steps").is_number() ? get(train, "steps").dump() : "",
                        number(get(train, "seconds"), "{:.2f}"),
                        number(get(train, "examples_per_second"), "{:.0f}"));
  }
  return html + "</table>";
}

std::string accuracy_against_time(const std::vector<RunFiles>& runs) {
  std::vector<Series> series;
  for (size_t i = 0; i < runs.size(); ++i) {
    const auto& split = split_of(runs[i]);
    const auto& r = runs[i].report;
    if (split.is_null() || !r["train"].contains("seconds")) continue;
    series.push_back({runs[i].name,
                      kColors[i % kColors.size()],
                      {{r["train"]["seconds"].get<double>(), split.value("accuracy", 0.0)}}});
  }
  return svg_chart("accuracy against training time", "training seconds", series, true);
}

// config.yaml's values by dotted key ("train.optimizer.lr" -> "0.5"; a list as its YAML).
void flatten(const YAML::Node& node, const std::string& prefix,
             std::map<std::string, std::string>& out) {
  if (node.IsMap()) {
    for (const auto& kv : node) {
      const std::string key = kv.first.as<std::string>();
      flatten(kv.second, prefix.empty() ? key : prefix + "." + key, out);
    }
    return;
  }
  YAML::Emitter e;
  e << YAML::Flow << node;
  out[prefix] = node.IsScalar() ? node.as<std::string>() : std::string(e.c_str());
}

// The options whose values differ between the runs' config.yaml files: one row each.
std::string config_diff(const std::vector<RunFiles>& runs) {
  std::vector<std::map<std::string, std::string>> values(runs.size());
  std::set<std::string> keys;
  for (size_t i = 0; i < runs.size(); ++i) {
    try {
      if (!runs[i].config.empty()) flatten(YAML::Load(runs[i].config), "", values[i]);
    } catch (const YAML::Exception&) {
      values[i].clear();  // a damaged config.yaml: its column stays empty
    }
    for (const auto& kv : values[i]) keys.insert(kv.first);
  }
  std::string rows;
  for (const auto& key : keys) {
    std::set<std::string> seen;
    for (const auto& v : values) seen.insert(v.count(key) ? v.at(key) : "");
    if (seen.size() < 2) continue;
    rows += "<tr><td>" + escape(key) + "</td>";
    for (const auto& v : values) rows += "<td>" + escape(v.count(key) ? v.at(key) : "") + "</td>";
    rows += "</tr>";
  }
  std::string html = "<h3>Options that differ</h3>";
  if (rows.empty()) return html + "<p class=\"note\">the runs' config.yaml files agree</p>";
  html += "<table id=\"config-diff\"><tr><th>option</th>";
  for (const auto& r : runs) html += "<th>" + escape(r.name) + "</th>";
  return html + "</tr>" + rows + "</table>";
}

std::string one_run_sections(const RunFiles& r) {
  std::string html;
  for (const auto& note : r.notes) html += "<p class=\"note\">" + escape(note) + "</p>";
  html += evaluation_section(r) + phases_section(r);
  if (r.report.is_object() && r.report.contains("environment")) {
    html += "<section id=\"environment\"><h2>Provenance and environment</h2>" +
            key_value_table(r.report["environment"]) + "</section>";
  }
  if (!r.config.empty()) {
    html += "<section id=\"config\"><h2>Config</h2><pre>" + escape(r.config) + "</pre></section>";
  }
  return html;
}

}  // namespace

ReportAxis report_axis(const std::string& name) {
  if (name == "steps") return ReportAxis::steps;
  if (name == "epochs") return ReportAxis::epochs;
  if (name == "time") return ReportAxis::time;
  throw Error(fmt::format("--x {}: expected steps, epochs or time", printable(name)));
}

std::string report_html(const std::vector<std::string>& run_dirs, ReportAxis axis) {
  std::vector<RunFiles> runs;
  for (const auto& dir : run_dirs) runs.push_back(read_run(dir));
  const std::string title =
      runs.size() == 1 ? "Sift run " + runs[0].name : fmt::format("Sift: {} runs", runs.size());
  std::string html = html_page_start(title);
  html += "<section id=\"overview\"><h2>Results</h2>" + summary_table(runs);
  if (runs.size() > 1) html += accuracy_against_time(runs) + config_diff(runs);
  html += "</section>\n" + curves(runs, axis) + "\n";
  if (runs.size() == 1) {
    html += one_run_sections(runs[0]);
  } else {
    for (const auto& r : runs) {
      html += "<details class=\"run\"><summary>" + escape(r.name) + ": " + escape(r.dir) +
              "</summary>" + one_run_sections(r) + "</details>\n";
    }
  }
  return html + html_page_end();
}

}  // namespace sift
