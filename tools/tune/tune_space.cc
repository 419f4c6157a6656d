#include "tools/tune/tune_space.h"

#include <fmt/format.h>

#include <algorithm>

#include "config/flow_text.h"
#include "config/loader.h"
#include "config/options.h"
#include "config/search_space.h"
#include "core/error.h"

namespace sift {
namespace {

// A model.* key the model does not read cannot be tuned for it (the trial would refuse
// it anyway, after the search had started).
void check_applies(const std::string& key, const ModelTraits& traits) {
  if (key == "model.type") {
    throw Error("tune: model.type cannot be tuned; tune one model type per search");
  }
  if (key.rfind("model.", 0) != 0) return;
  if (std::find(traits.options.begin(), traits.options.end(), key) == traits.options.end()) {
    throw Error(fmt::format("tune: {} does not apply to model.type {} (it reads {})", key,
                            traits.name, fmt::join(traits.options, ", ")));
  }
}

// Every bound and choice of the space must be a value the option accepts.
void check_values(const SiftConfig& base, const TunedParam& p) {
  std::vector<std::string> values = p.space.choices;
  if (p.space.kind != SpaceKind::choice) {
    values = {p.space.value_at(0.0), p.space.value_at(1.0)};
  }
  for (const auto& v : values) {
    SiftConfig probe = base;
    try {
      apply_override(probe, p.key + "=" + v);
      check_options(probe);
    } catch (const Error& e) {
      throw Error(fmt::format("tune: {}: the value {} of its space {} is refused: {}", p.key, v,
                              p.space.describe(), e.what()));
    }
  }
}

}  // namespace

std::vector<TunedParam> tuned_params(const SiftConfig& base, const ModelTraits& traits,
                                     const std::vector<std::string>& overrides) {
  std::vector<TunedParam> params;
  const auto section = read_tune_section(base.source);
  for (const auto& t : traits.tuned) {
    if (section.count(t.key) != 0) continue;  // the section decides
    const auto& space = t.space ? t.space : find_option(t.key)->space;
    params.push_back({t.key, *space});
  }
  for (const auto& [key, space] : section) {
    if (space) params.push_back({key, *space});
  }
  // A key fixed on the command line is not searched.
  params.erase(std::remove_if(params.begin(), params.end(),
                              [&](const TunedParam& p) {
                                return std::any_of(overrides.begin(), overrides.end(),
                                                   [&](const std::string& o) {
                                                     return o.rfind(p.key + "=", 0) == 0;
                                                   });
                              }),
               params.end());
  std::sort(params.begin(), params.end(),
            [](const TunedParam& a, const TunedParam& b) { return a.key < b.key; });
  for (const auto& p : params) {
    check_applies(p.key, traits);
    check_values(base, p);
  }
  if (params.empty()) throw Error("tune: nothing to search: every space is off or fixed by --set");
  return params;
}

std::map<std::string, std::string> start_values(const SiftConfig& base,
                                                const std::vector<TunedParam>& params) {
  std::map<std::string, std::string> values;
  for (const auto& p : params) {
    const Option* option = find_option(p.key);
    if (option == nullptr || !option->emit) continue;
    const std::string value = flow_text(option->emit(base));
    if (p.space.position_of(value)) values[p.key] = value;
  }
  return values;
}

}  // namespace sift
