#include "datasets/paths.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <fstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "tests/test_files.h"

namespace sift {
namespace paths_test {

using sift::testing::make_temp_dir;

using Files = std::vector<std::string>;

std::string touch(const std::string& path, const std::string& text = "x\n") {
  std::ofstream(path) << text;
  return path;
}

std::string error_of(const Files& patterns) {
  try {
    expand_paths(patterns, "data.train.path");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Paths, FilesKeepPatternOrderAndAreDeduplicated) {
  std::string d = make_temp_dir("sift_paths");
  std::string b = touch(d + "/b.txt"), a = touch(d + "/a.txt");
  EXPECT_EQ(expand_paths({b, a, d + "/./b.txt"}, "k"), (Files{b, a}));
}

TEST(Paths, GlobMatchesSortedRegularFiles) {
  std::string d = make_temp_dir("sift_paths");
  std::string s2 = touch(d + "/shard-2.txt"), s1 = touch(d + "/shard-1.txt"),
              s10 = touch(d + "/shard-10.gz");
  mkdir((d + "/shard-dir.txt").c_str(), 0755);  // a directory matching the glob is left out
  EXPECT_EQ(expand_paths({d + "/shard-*.txt"}, "k"), (Files{s1, s2}));
  EXPECT_EQ(expand_paths({d + "/shard-{10.gz,1.txt}"}, "k"), (Files{s1, s10}));
  EXPECT_EQ(expand_paths({d + "/shard-?.txt", d + "/shard-*"}, "k"), (Files{s1, s2, s10}));
}

TEST(Paths, NoMatchAndMissingFileErrors) {
  std::string d = make_temp_dir("sift_paths");
  EXPECT_EQ(error_of({d + "/x/*.txt"}), "data.train.path: no file matches '" + d + "/x/*.txt'");
  EXPECT_EQ(error_of({d + "/missing.txt"}),
            "data.train.path: cannot read '" + d + "/missing.txt': No such file or directory");
}

TEST(Paths, MissingDataSetNamesTheFetchCommand) {
  const std::string d = make_temp_dir("sift_paths");
  EXPECT_EQ(error_of({"data/trec/TREC.train.all"}),
            "data.train.path: cannot read 'data/trec/TREC.train.all': No such file or "
            "directory; fetch it with tools/get_data.sh trec");
  EXPECT_EQ(error_of({d + "/data/20ng/*.tsv"}),
            "data.train.path: no file matches '" + d + "/data/20ng/*.tsv'; fetch it with "
            "tools/get_data.sh 20ng");
  EXPECT_EQ(data_fetch_hint("./data/sst2/../sst2/glue_validation.tsv"),
            "; fetch it with tools/get_data.sh sst2");
  EXPECT_EQ(data_fetch_hint("/work/my-data/x/y.txt"), "");  // not a data/ folder
  EXPECT_EQ(data_fetch_hint("data/file.txt"), "");          // no data set folder
  EXPECT_EQ(data_fetch_hint("corpus.txt"), "");
}

TEST(Paths, DirectoryListsVisibleFiles) {
  std::string d = make_temp_dir("sift_paths");
  std::string b = touch(d + "/b"), a = touch(d + "/a.tsv");
  touch(d + "/.hidden");
  mkdir((d + "/sub").c_str(), 0755);
  touch(d + "/sub/c");
  EXPECT_EQ(expand_paths({d}, "k"), (Files{a, b}));
  mkdir((d + "/empty").c_str(), 0755);
  EXPECT_NE(error_of({d + "/empty"}).find("data.train.path: no file in directory"),
            std::string::npos);
}

TEST(Paths, ListFileResolvesAgainstItsFolder) {
  std::string d = make_temp_dir("sift_paths");
  mkdir((d + "/data").c_str(), 0755);
  std::string a = touch(d + "/data/a.txt"), b = touch(d + "/data/b.txt"), c = touch(d + "/c.txt");
  std::string list =
      touch(d + "/data/files.list", "# training shards\n\n  b.txt\n*.txt\n" + c + "\n");
  EXPECT_EQ(expand_paths({"@" + list}, "k"), (Files{d + "/data/b.txt", d + "/data/a.txt", c}));
  EXPECT_NE(error_of({"@" + d + "/nope.list"}).find("cannot read '" + d + "/nope.list'"),
            std::string::npos);
}

}  // namespace paths_test
}  // namespace sift
