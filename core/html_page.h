// Self-contained HTML pages (inline SVG and CSS, no script, no network request): the
// pieces report.html (framework/train/base/report_html.h) and sift tune's tune.html share.
#pragma once

#include <array>
#include <string>
#include <utility>
#include <vector>

namespace sift {

inline constexpr std::array<const char*, 8> kColors = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                                                       "#9467bd", "#8c564b", "#e377c2", "#17becf"};

// &, <, > and " as entities.
std::string escape(const std::string& text);

// A short axis label: 3 significant digits, or an exponent for very large or small values.
std::string tick(double v);

// One curve (or, with `dots`, one set of points) of a chart.
struct Series {
  std::string name, color;
  std::vector<std::pair<double, double>> points;
  bool dots = false;
};

// A line chart (or dots, for scatter, when `dots`) as inline SVG in a <figure>.
std::string svg_chart(const std::string& title, const std::string& x_label,
                      const std::vector<Series>& series, bool dots = false);

// "<!DOCTYPE html>... <h1>title</h1>": the page's head (a Content-Security-Policy that
// allows no request, the shared style) and its end.
std::string html_page_start(const std::string& title);
std::string html_page_end();

}  // namespace sift
