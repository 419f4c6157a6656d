#include "config/search_space.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "tests/test_files.h"

namespace sift {
namespace search_space_test {

using testing::error_of;

TEST(SearchSpace, ALogRangeMapsItsEndsAndMiddleGeometrically) {
  const SearchSpace s = SearchSpace::log(0.01, 1.0);
  EXPECT_EQ(s.value_at(0.0), "0.01");
  EXPECT_EQ(s.value_at(1.0), "1");
  EXPECT_EQ(s.value_at(0.5), "0.1");
  EXPECT_NEAR(*s.position_of("0.1"), 0.5, 1e-9);
}

TEST(SearchSpace, AnIntegerRangeGivesEveryWholeValueAnEqualShare) {
  const SearchSpace s = SearchSpace::integer(1, 3);
  EXPECT_EQ(s.value_at(0.0), "1");
  EXPECT_EQ(s.value_at(0.34), "2");
  EXPECT_EQ(s.value_at(0.99), "3");
  EXPECT_EQ(s.value_at(1.0), "3");
  for (const char* v : {"1", "2", "3"}) EXPECT_EQ(s.value_at(*s.position_of(v)), v);
  EXPECT_FALSE(s.position_of("4").has_value());
}

TEST(SearchSpace, ChoicesRoundTripThroughTheirYamlText) {
  const SearchSpace s = parse_space(YAML::Load("{choice: [[3, 4, 5], [1, 2]]}"), "x.yaml:3");
  ASSERT_EQ(s.choices.size(), 2u);
  EXPECT_EQ(s.value_at(0.9), "[1, 2]");
  EXPECT_EQ(s.value_at(*s.position_of("[3,4,5]")), "[3, 4, 5]");
  EXPECT_EQ(s.describe(), "choice [[3, 4, 5], [1, 2]]");
}

TEST(SearchSpace, InvertedEmptyAndNonPositiveLogRangesAreRefusedNamingThePlace) {
  EXPECT_NE(error_of([] {
              parse_space(YAML::Load("{linear: [0.5, 0.1]}"), "c.yaml:7");
            }).find("c.yaml:7: The range [0.5, 0.1] is empty or inverted"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              parse_space(YAML::Load("{choice: []}"), "c.yaml:8");
            }).find("c.yaml:8: The choice list is empty"),
            std::string::npos);
  EXPECT_NE(
      error_of([] { parse_space(YAML::Load("{log: [0, 1]}"), "c.yaml:9"); }).find("bounds > 0"),
      std::string::npos);
  EXPECT_NE(
      error_of([] { parse_space(YAML::Load("{uniform: [0, 1]}"), "c.yaml:9"); }).find("'uniform'"),
      std::string::npos);
}

TEST(SearchSpace, TheTuneSectionReadsSpacesAndOffAndRefusesUnknownKeys) {
  const std::string dir = testing::make_temp_dir("tune_section");
  testing::write_file(dir + "/a.yaml",
                      "model:\n  dim: 10\ntune:\n  model.dim: {int: [5, 50]}\n"
                      "  model.buckets: off\n");
  const auto spaces = read_tune_section(dir + "/a.yaml");
  ASSERT_EQ(spaces.size(), 2u);
  EXPECT_EQ(spaces.at("model.dim")->describe(), "int [5, 50]");
  EXPECT_FALSE(spaces.at("model.buckets").has_value());
  testing::write_file(dir + "/b.yaml", "tune:\n  model.dimm: {int: [5, 50]}\n");
  EXPECT_NE(error_of([&] {
              read_tune_section(dir + "/b.yaml");
            }).find("b.yaml:2: tune: unknown option 'model.dimm' (did you mean 'model.dim'?)"),
            std::string::npos);
}

}  // namespace search_space_test
}  // namespace sift
