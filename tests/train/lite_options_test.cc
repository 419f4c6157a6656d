// Which options sift-lite's fastText learner takes (lite_trainer.h): every option is
// honoured or refused (the run goes to sift-main), none silently ignored.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "config/loader.h"
#include "config/options.h"
#include "config/validate.h"
#include "core/error.h"
#include "framework/train/base/lite_trainer.h"
#include "models/base/traits.h"

namespace sift {
namespace {

const std::string kGolden = std::string(SIFT_SOURCE_DIR) + "/tests/data/golden/golden.yaml";

// The golden run's config on the fast path: a run sift-lite takes.
SiftConfig lite_config(const std::string& set = "") {
  std::vector<std::string> sets{"train.fast_path=auto"};
  if (!set.empty()) sets.push_back(set);
  return load_config(kGolden, sets);
}

bool honoured(const std::string& key) {
  const auto& h = lite_honours();
  return std::any_of(h.begin(), h.end(), [&key](const std::string& name) {
    return key == name || (name.back() == '.' && key.rfind(name, 0) == 0);
  });
}

// A value of `option` other than the config's: the next choice, the flipped flag, one
// more, or a word.
std::string another_value(const Option& option, const SiftConfig& config) {
  const std::string now = emitted(option, config);
  if (option.type == "bool") return now == "true" ? "false" : "true";
  if (option.type == "enum") {
    for (const auto& choice : option.choices) {
      if (choice != now) return choice;
    }
  }
  if (option.type == "int") return std::to_string(std::stoll(now) + 1);
  if (option.type == "float") return std::to_string(std::stod(now) / 2 + 0.25);
  return now == "x" ? "y" : "x";
}

TEST(LiteOptions, EveryOptionSetOffItsDefaultIsHonouredOrRefused) {
  ASSERT_EQ(lite_refusal(lite_config()), "");
  int taken = 0, refused = 0;
  for (const auto& option : all_options()) {
    const std::string set = option.name + "=" + another_value(option, lite_config());
    std::string why;
    try {
      const SiftConfig config = lite_config(set);
      why = lite_refusal(config);
      // One sift-lite takes it checks between options (resolve_run) before anything else.
      if (why.empty()) validate(config, model_traits());
    } catch (const Error&) {
      ++refused;  // an invalid config: the program's one check reports it
      continue;
    }
    if (why.empty()) {
      ++taken;
      EXPECT_TRUE(honoured(option.name)) << set << " is taken but not honoured";
    } else {
      ++refused;
    }
  }
  // Both kinds occur: the walk reached the options, not only errors.
  EXPECT_GT(taken, 30);
  EXPECT_GT(refused, 30);
}

TEST(LiteOptions, AKeyNotHonouredIsTheReason) {
  EXPECT_EQ(lite_refusal(lite_config("train.profile=true")), "train.profile");
  EXPECT_EQ(lite_refusal(lite_config("train.optimizer.beta1=0.8")), "train.optimizer.beta1");
  // A model.* key, honoured as a group, that sift-lite's table does not take.
  EXPECT_EQ(lite_refusal(lite_config("model.pretrained=v.vec")), "model.pretrained");
  // The one loop validates and writes TensorBoard files for every learner.
  EXPECT_EQ(lite_refusal(lite_config("train.eval_every=10")), "");
  EXPECT_EQ(lite_refusal(lite_config("train.tensorboard=true")), "");
}

TEST(LiteOptions, EveryHonouredNameIsAnOptionOrAGroup) {
  for (const auto& name : lite_honours()) {
    const bool group = name.back() == '.' && is_option_group(name.substr(0, name.size() - 1));
    EXPECT_TRUE(group || find_option(name) != nullptr) << name;
  }
}

}  // namespace
}  // namespace sift
