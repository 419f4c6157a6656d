#include "framework/train/base/phases.h"

#include <fmt/format.h>
#include <sys/resource.h>

#include "framework/runtime/base/tensor_memory.h"

namespace sift {
namespace {

constexpr std::array<const char*, kPhaseCount> kPhaseNames = {
    "data_wait", "copy",       "forward",    "backward", "allreduce",
    "optimizer", "checkpoint", "validation", "teacher",  "fused"};
// The table's order: the teacher's forward comes before the student's, the fused step
// (which is forward, backward and update) before them.
constexpr std::array<Phase, kPhaseCount> kTableOrder = {
    Phase::data_wait, Phase::copy,      Phase::teacher,   Phase::fused,      Phase::forward,
    Phase::backward,  Phase::allreduce, Phase::optimizer, Phase::checkpoint, Phase::validation};
// Rows shown only in the runs that have them: distillation's teacher, the fast path's step.
bool shown_when_zero(Phase p) { return p != Phase::teacher && p != Phase::fused; }
// The phases of a step: what "step time" sums (saves and validations are not steps).
bool is_step_phase(Phase p) { return p != Phase::checkpoint && p != Phase::validation; }
// Data wait above this share of step time names the data as the bottleneck.
constexpr double kDataBoundShare = 0.3;

}  // namespace

const char* phase_name(Phase phase) { return kPhaseNames[static_cast<size_t>(phase)]; }

PhaseTimer::PhaseTimer(PhaseTimes& times, Phase phase)
    : times_(times), phase_(phase), start_(std::chrono::steady_clock::now()) {
  reset_peak_tensor_bytes();
  if (times.tracer()) range_ = times.tracer()(phase_name(phase));
}

PhaseTimer::~PhaseTimer() {
  range_.reset();  // closes the range before the clock stops
  times_.add(phase_, std::chrono::steady_clock::now() - start_, peak_tensor_bytes());
}

int64_t peak_rss_bytes() {
  rusage usage{};
  if (getrusage(RUSAGE_SELF, &usage) != 0) return 0;
  return static_cast<int64_t>(usage.ru_maxrss) * 1024;  // Linux: KiB
}

std::string data_bound_remedy(int64_t readers, int64_t trainers, unsigned cores) {
  if (cores == 0 || readers + trainers < static_cast<int64_t>(cores)) {
    return fmt::format("raise data.workers (now {})", readers);
  }
  return fmt::format(
      "its {} reader thread{} and {} training thread{} already share this "
      "machine's {} core{}",
      readers, readers == 1 ? "" : "s", trainers, trainers == 1 ? "" : "s", cores,
      cores == 1 ? "" : "s");
}

nlohmann::json PhaseTimes::to_json(double wall_seconds, int64_t steps,
                                   const std::string& remedy) const {
  nlohmann::json table = nlohmann::json::array();
  double measured = 0.0, step_seconds = 0.0;
  const bool counted = tensor_memory_counted();
  auto row = [&](const std::string& name, double s, int64_t peak) {
    table.push_back({{"phase", name},
                     {"seconds", s},
                     {"share", wall_seconds > 0 ? s / wall_seconds : 0.0},
                     {"ms_per_step", steps > 0 ? 1000.0 * s / static_cast<double>(steps) : 0.0}});
    if (counted && peak >= 0) table.back()["peak_tensor_bytes"] = peak;
  };
  for (const Phase p : kTableOrder) {
    const double s = seconds(p);
    measured += s;
    if (is_step_phase(p)) step_seconds += s;
    if (shown_when_zero(p) || s > 0) {
      row(kPhaseNames[static_cast<size_t>(p)], s, peak_bytes_[static_cast<size_t>(p)]);
    }
  }
  row("other", std::max(0.0, wall_seconds - measured), -1);
  nlohmann::json j = {{"wall_seconds", wall_seconds},
                      {"steps", steps},
                      {"table", table},
                      {"peak_rss_bytes", peak_rss_bytes()}};
  const double wait = seconds(Phase::data_wait);
  j["data_wait_share_of_step"] = step_seconds > 0 ? wait / step_seconds : 0.0;
  if (step_seconds > 0 && wait / step_seconds >= kDataBoundShare) {
    j["bottleneck"] = fmt::format("data-bound: {:.0f}% of step time waiting for batches; {}",
                                  100.0 * wait / step_seconds, remedy);
  }
  return j;
}

std::string phase_table_text(const nlohmann::json& phases) {
  std::string text =
      fmt::format("== where the time went ({:.2f} s, {} steps) ==\n",
                  phases["wall_seconds"].get<double>(), phases["steps"].get<int64_t>());
  text += fmt::format("{:<12} {:>10} {:>7} {:>12} {:>14}\n", "phase", "seconds", "share", "ms/step",
                      "peak tensors");
  for (const auto& r : phases["table"]) {
    const std::string peak =
        r.contains("peak_tensor_bytes")
            ? fmt::format("{:.1f} MiB",
                          static_cast<double>(r["peak_tensor_bytes"].get<int64_t>()) / (1 << 20))
            : "";
    text += fmt::format("{:<12} {:>10.3f} {:>6.1f}% {:>12.4f} {:>14}\n",
                        r["phase"].get<std::string>(), r["seconds"].get<double>(),
                        100.0 * r["share"].get<double>(), r["ms_per_step"].get<double>(), peak);
  }
  text += fmt::format("peak RSS: {:.1f} MiB\n",
                      static_cast<double>(phases["peak_rss_bytes"].get<int64_t>()) / (1 << 20));
  if (phases.contains("bottleneck")) text += phases["bottleneck"].get<std::string>() + "\n";
  return text;
}

}  // namespace sift
