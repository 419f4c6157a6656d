#include "config/enums.h"

#include <gtest/gtest.h>

#include <string>

#include "config/loader.h"
#include "config/metric_table.h"
#include "config/options.h"
#include "core/error.h"
#include "core/nearest_name.h"

namespace sift {
namespace enums_test {

std::string error_of(const std::vector<std::string>& overrides) {
  try {
    load_config("", overrides);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

template <class E>
void expect_round_trip() {
  for (const std::string& name : enum_names<E>()) {
    const E value = from_string<E>(name, "key");
    EXPECT_EQ(to_string(value), name);
  }
}

TEST(Enums, EveryValueRoundTripsThroughItsName) {
  expect_round_trip<OptimizerType>();
  expect_round_trip<SchedulerType>();
  expect_round_trip<Precision>();
  expect_round_trip<GradientCheckpointing>();
  expect_round_trip<LossScaling>();
  expect_round_trip<LossReduction>();
  expect_round_trip<BestMetric>();
  expect_round_trip<TokenizerType>();
  expect_round_trip<FileFormat>();
  expect_round_trip<TextEncoding>();
  expect_round_trip<LabelMapping>();
  expect_round_trip<BadLinePolicy>();
  expect_round_trip<Split>();
}

TEST(Enums, NamesAreTheSpellingsUsersWrite) {
  EXPECT_EQ(to_string(LossScaling::automatic), "auto");
  EXPECT_EQ(to_string(TextEncoding::latin1), "latin-1");
  EXPECT_EQ(to_string(Precision::bf16), "bf16");
  EXPECT_EQ(from_string<Split>("valid", "split"), Split::valid);
}

TEST(Enums, AnUnknownNameIsAnErrorNamingTheKeyAndTheChoices) {
  try {
    from_string<Precision>("fp8", "train.precision");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "train.precision: The value 'fp8' is not one of: fp32, bf16, fp16.");
  }
}

TEST(Enums, AnUnknownValueInTheConfigNamesTheKeyAndTheChoices) {
  const std::string m = error_of({"train.optimizer.type=lion"});
  EXPECT_NE(m.find("train.optimizer.type"), std::string::npos) << m;
  EXPECT_NE(m.find("sgd, adam, adamw, adagrad, rmsprop, adadelta"), std::string::npos) << m;
  EXPECT_NE(m.find("'lion'"), std::string::npos) << m;
}

TEST(Enums, TheConfigParsesEnumOptionsAtLoadTime) {
  const SiftConfig c = load_config(
      "", {"train.precision=bf16", "train.loss_scaling=dynamic", "train.best_metric=macro_f1",
           "train.scheduler.type=warmup_cosine", "tokenizer.type=sentencepiece",
           "data.encoding=latin-1", "train.loss_reduction=sum"});
  EXPECT_EQ(c.train.precision, Precision::bf16);
  EXPECT_EQ(c.train.loss_scaling, LossScaling::dynamic);
  EXPECT_EQ(c.train.best_metric, BestMetric::macro_f1);
  EXPECT_EQ(c.train.scheduler.type, SchedulerType::warmup_cosine);
  EXPECT_EQ(c.tokenizer.type, TokenizerType::sentencepiece);
  EXPECT_EQ(c.data.encoding, TextEncoding::latin1);
  EXPECT_EQ(c.train.loss_reduction, LossReduction::sum);
}

TEST(Enums, TheOptionTableListsTheChoicesFromTheEnumsTable) {
  EXPECT_EQ(find_option("train.optimizer.type")->choices, enum_names<OptimizerType>());
  EXPECT_EQ(find_option("data.valid.format")->choices, enum_names<FileFormat>());
  EXPECT_EQ(find_option("train.gradient_checkpointing")->choices,
            enum_names<GradientCheckpointing>());
  EXPECT_EQ(find_option("train.precision")->type, "enum");
}

TEST(Enums, ADumpWritesEnumsByName) {
  const std::string dump = dump_config(load_config("", {"train.loss_scaling=auto"}));
  EXPECT_NE(dump.find("loss_scaling: auto"), std::string::npos) << dump;
  EXPECT_NE(dump.find("encoding: utf-8"), std::string::npos) << dump;
}

// The enum is declared in enums.h and its names come from the metric table: in the same order.
TEST(Enums, BestMetricValuesAreTheMetricTableRowsThatChooseBestInOrder) {
  EXPECT_EQ(to_string(BestMetric::accuracy), "accuracy");
  EXPECT_EQ(to_string(BestMetric::micro_f1), "micro_f1");
  EXPECT_EQ(to_string(BestMetric::loss), "loss");
  EXPECT_EQ(to_string(BestMetric::label_f1), "label_f1");
  EXPECT_EQ(to_string(BestMetric::masked_accuracy), "masked_accuracy");
  EXPECT_EQ(enum_names<BestMetric>().size(), 6u);
  EXPECT_TRUE(metric_named("loss").lower_is_better);
  EXPECT_EQ(metric_keys(&MetricName::score),
            (std::vector<std::string>{"accuracy", "macro_f1", "micro_f1"}));
}

TEST(NearestName, FindsTheFirstNameWithinTheDistanceOrNone) {
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(nearest_name("trian", {"eval", "train", "tune"}, 2), "train");
  EXPECT_EQ(nearest_name("xyzzy", {"eval", "train", "tune"}, 2), "");
}

}  // namespace enums_test
}  // namespace sift
