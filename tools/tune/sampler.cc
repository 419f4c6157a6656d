#include "tools/tune/sampler.h"

#include <algorithm>
#include <cmath>

#include "core/splitmix.h"

namespace sift {
namespace {

// A standard normal draw (Box-Muller), from the fixed generator.
double normal(uint64_t& state) {
  const double u1 = std::max(splitmix_uniform(state), 1e-300), u2 = splitmix_uniform(state);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

// Mutation: a numeric position moves by N(0, 0.15) (reflected into [0, 1]); a choice is
// redrawn with probability 0.3. A chosen default, not tuned: 0.15 keeps about 95% of
// steps within a third of a range, so children stay near a good parent.
constexpr double kStep = 0.15;
constexpr double kRedraw = 0.3;

double reflect(double u) {
  if (u < 0) u = -u;
  if (u > 1) u = 2 - u;
  return std::clamp(u, 0.0, 1.0);
}

}  // namespace

Sampler::Sampler(std::vector<TunedParam> params, uint64_t seed, int64_t random_trials,
                 std::map<std::string, std::string> start)
    : params_(std::move(params)),
      seed_(seed),
      random_trials_(random_trials),
      start_(std::move(start)) {}

std::map<std::string, std::string> Sampler::propose(int64_t trial,
                                                    const std::vector<ScoredTrial>& scored,
                                                    int64_t attempt) const {
  uint64_t state = mix64(seed_ ^ mix64(static_cast<uint64_t>(trial) + 1) ^
                         mix64(static_cast<uint64_t>(attempt) << 32));
  std::map<std::string, std::string> values;
  if (trial < random_trials_ || scored.empty()) {
    for (const auto& p : params_) values[p.key] = p.space.value_at(splitmix_uniform(state));
    if (trial == 0 && attempt == 0) {
      for (const auto& [key, value] : start_) values[key] = value;
    }
    return values;
  }
  // A parent drawn from the best quarter (at least the best two) of the scored trials.
  std::vector<const ScoredTrial*> ranked;
  for (const auto& s : scored) ranked.push_back(&s);
  std::stable_sort(ranked.begin(), ranked.end(), [](const ScoredTrial* a, const ScoredTrial* b) {
    return a->metric > b->metric;
  });
  const size_t pool = std::min(ranked.size(), std::max<size_t>(2, ranked.size() / 4));
  const ScoredTrial& parent = *ranked[static_cast<size_t>(splitmix_uniform(state) * double(pool))];
  for (const auto& p : params_) {
    const auto it = parent.values.find(p.key);
    const auto at = it == parent.values.end() ? std::nullopt : p.space.position_of(it->second);
    double u = at ? *at : splitmix_uniform(state);
    if (p.space.kind == SpaceKind::choice) {
      if (splitmix_uniform(state) < kRedraw) u = splitmix_uniform(state);
    } else {
      u = reflect(u + kStep * normal(state));
    }
    values[p.key] = p.space.value_at(u);
  }
  return values;
}

}  // namespace sift
