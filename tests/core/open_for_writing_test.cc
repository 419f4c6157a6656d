// The one way a file in a run, tune or export folder is opened for writing (issue #42): a
// symlink, a FIFO or a hard link at the name is refused, and the file it names is left as
// it was, for appends and truncations alike.
#include "core/open_for_writing.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "core/append_line.h"
#include "core/error.h"
#include "tests/test_files.h"

namespace sift {
namespace open_for_writing_test {

namespace fs = std::filesystem;
using testing::slurp;
using testing::write_file;

TEST(OpenForWriting, ASymlinkAtTheNameIsRefusedAndItsTargetKept) {
  const std::string dir = testing::make_temp_dir("sift_open");
  write_file(dir + "/victim", "the user's file\n");
  fs::create_directory(dir + "/run");
  fs::create_symlink("../victim", dir + "/run/train.log");
  for (const WriteMode mode : {WriteMode::append, WriteMode::truncate}) {
    const std::string message =
        testing::error_of([&] { ::close(open_for_writing(dir + "/run/train.log", mode)); });
    EXPECT_CONTAINS(message, dir + "/run/train.log");
    EXPECT_CONTAINS(message, "symlink");
  }
  EXPECT_CONTAINS(testing::error_of([&] { append_line(dir + "/run/train.log", "epoch 2"); }),
                  "symlink");
  EXPECT_EQ(slurp(dir + "/victim"), "the user's file\n");
}

TEST(OpenForWriting, AHardLinkAFifoOrAFolderAtTheNameIsRefused) {
  const std::string dir = testing::make_temp_dir("sift_open");
  write_file(dir + "/victim", "the user's file\n");
  fs::create_hard_link(dir + "/victim", dir + "/metrics.jsonl");
  EXPECT_CONTAINS(
      testing::error_of([&] { open_for_writing(dir + "/metrics.jsonl", WriteMode::truncate); }),
      "hard links");
  EXPECT_EQ(slurp(dir + "/victim"), "the user's file\n");
  ASSERT_EQ(::mkfifo((dir + "/fifo").c_str(), 0644), 0);
  // Without a reader: refused at once instead of waiting for one.
  EXPECT_CONTAINS(testing::error_of([&] { open_for_writing(dir + "/fifo", WriteMode::append); }),
                  dir + "/fifo");
  fs::create_directory(dir + "/folder");
  EXPECT_CONTAINS(testing::error_of([&] { open_for_writing(dir + "/folder", WriteMode::append); }),
                  dir + "/folder");
}

TEST(OpenForWriting, AppendsAndTruncatesAPlainFile) {
  const std::string dir = testing::make_temp_dir("sift_open");
  append_line(dir + "/metrics.jsonl", "{\"epoch\":1}");
  append_line(dir + "/metrics.jsonl", "{\"epoch\":2}");
  EXPECT_EQ(slurp(dir + "/metrics.jsonl"), "{\"epoch\":1}\n{\"epoch\":2}\n");
  std::FILE* file = fopen_for_writing(dir + "/metrics.jsonl", WriteMode::truncate);
  std::fputs("new\n", file);
  std::fclose(file);
  EXPECT_EQ(slurp(dir + "/metrics.jsonl"), "new\n");
  struct stat st {};
  ASSERT_EQ(::stat((dir + "/metrics.jsonl").c_str(), &st), 0);
  EXPECT_EQ(
      st.st_mode & 0777, 0644 & ~[] {
        const mode_t m = ::umask(0);
        ::umask(m);
        return m;
      }());
}

TEST(OwnFolder, AFolderThatIsASymlinkIsRefusedNamingTheKey) {
  const std::string dir = testing::make_temp_dir("sift_open");
  fs::create_directory(dir + "/elsewhere");
  fs::create_directory_symlink(dir + "/elsewhere", dir + "/r");
  const std::string message = testing::error_of([&] { check_own_folder(dir + "/r", "run.dir"); });
  EXPECT_CONTAINS(message, "run.dir");
  EXPECT_CONTAINS(message, dir + "/r");
  EXPECT_CONTAINS(message, "symlink");
  check_own_folder(dir + "/a/b", "run.dir", /*create=*/true);
  EXPECT_TRUE(fs::is_directory(dir + "/a/b"));
}

}  // namespace open_for_writing_test
}  // namespace sift
