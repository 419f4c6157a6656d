#include "core/atomic_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "tests/test_files.h"

namespace sift {
namespace atomic_file_test {

namespace fs = std::filesystem;

std::vector<std::string> names_in(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename());
  std::sort(names.begin(), names.end());
  return names;
}

std::string big_text() {
  std::string text;
  for (int i = 0; text.size() < (3u << 20); ++i) text += "line " + std::to_string(i) + "\n";
  return text;
}

TEST(AtomicFile, WritesTheWholeFileAndLeavesNoTemporary) {
  const std::string dir = testing::make_temp_dir("sift_atomic");
  const std::string path = dir + "/last.ckpt";
  const std::string text = big_text();
  {
    AtomicFile file(path);
    for (size_t at = 0; at < text.size(); at += 4096)
      file.write(std::string_view(text).substr(at, 4096));
    file.commit();
  }
  EXPECT_EQ(testing::slurp(path), text);
  EXPECT_EQ(names_in(dir), std::vector<std::string>{"last.ckpt"});
  fs::remove_all(dir);
}

TEST(AtomicFile, ReplacesAnExistingFileWhole) {
  const std::string dir = testing::make_temp_dir("sift_atomic");
  const std::string path = dir + "/last.ckpt";
  testing::write_file(path, std::string(100000, 'o'));
  write_file_atomically(path, "new");
  EXPECT_EQ(testing::slurp(path), "new");
  copy_file_atomically(path, dir + "/copy");
  EXPECT_EQ(testing::slurp(dir + "/copy"), "new");
  EXPECT_EQ(names_in(dir), (std::vector<std::string>{"copy", "last.ckpt"}));
  fs::remove_all(dir);
}

TEST(AtomicFile, WithoutCommitTheOldFileStaysAndTheTemporaryGoes) {
  const std::string dir = testing::make_temp_dir("sift_atomic");
  const std::string path = dir + "/last.ckpt";
  testing::write_file(path, "old");
  {
    AtomicFile file(path);
    file.write("half of the new one");
  }  // e.g. an exception while saving
  EXPECT_EQ(testing::slurp(path), "old");
  EXPECT_EQ(names_in(dir), std::vector<std::string>{"last.ckpt"});
  fs::remove_all(dir);
}

TEST(AtomicFile, AMissingFolderIsNamed) {
  const std::string dir = testing::make_temp_dir("sift_atomic");
  try {
    write_file_atomically(dir + "/no/such/x", "bytes");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot write " + dir + "/no/such/x.tmp"),
              std::string::npos)
        << e.what();
  }
  fs::remove_all(dir);
}

// The fixed name PATH.tmp of earlier versions, planted as a symlink to a victim file:
// the write must not follow it (nor any other predictable name).
TEST(AtomicFile, APlantedSymlinkAtTheOldTemporaryNameIsNotFollowed) {
  const std::string dir = testing::make_temp_dir("sift_atomic");
  const std::string victim = dir + "/victim", path = dir + "/config.yaml";
  testing::write_file(victim, "precious");
  fs::create_symlink(victim, path + ".tmp");
  write_file_atomically(path, "new config");
  EXPECT_EQ(testing::slurp(victim), "precious");
  EXPECT_EQ(testing::slurp(path), "new config");
  EXPECT_TRUE(fs::is_symlink(path + ".tmp"));  // left alone, not written through
  fs::remove_all(dir);
}

TEST(AtomicFile, TwoWritersOfOnePathUseTheirOwnTemporaryFiles) {
  const std::string dir = testing::make_temp_dir("sift_atomic");
  const std::string path = dir + "/labels.txt";
  AtomicFile a(path), b(path);
  a.write("from a");
  b.write("from b");
  a.commit();
  EXPECT_EQ(testing::slurp(path), "from a");
  b.commit();
  EXPECT_EQ(testing::slurp(path), "from b");
  EXPECT_EQ(names_in(dir), std::vector<std::string>{"labels.txt"});
  fs::remove_all(dir);
}

TEST(AtomicFile, TheWrittenFileHasTheUsualMode) {
  const std::string dir = testing::make_temp_dir("sift_atomic");
  const std::string path = dir + "/report.txt";
  write_file_atomically(path, "x");
  const mode_t mask = ::umask(022);
  ::umask(mask);
  EXPECT_EQ(fs::status(path).permissions(), static_cast<fs::perms>(0666 & ~mask));
  fs::remove_all(dir);
}

// Run by the next test under strace: one durable write to $SIFT_ATOMIC_TARGET.
TEST(AtomicFile, StraceTarget) {
  const char* target = std::getenv("SIFT_ATOMIC_TARGET");
  if (target == nullptr) GTEST_SKIP() << "only run under strace by SyncsTheFileBeforeTheRename...";
  write_file_atomically(target, "checkpoint bytes");
}

// The system calls, in order: the temporary file is fsync'ed before the rename, and the
// folder is fsync'ed after it, so a power cut cannot leave an empty file under the name.
TEST(AtomicFile, SyncsTheFileBeforeTheRenameAndTheFolderAfterIt) {
  if (std::system("strace -V >/dev/null 2>&1") != 0) GTEST_SKIP() << "no strace";
  const std::string dir = testing::make_temp_dir("sift_atomic");
  const std::string target = dir + "/last.ckpt", log = dir + "/strace.log";
  const std::string command =
      "SIFT_ATOMIC_TARGET=" + testing::quote(target) +
      " strace -f -qq -e trace=openat,open,fsync,fdatasync,rename,renameat,renameat2,close -o " +
      testing::quote(log) + " /proc/" + std::to_string(::getpid()) +
      "/exe --gtest_filter=AtomicFile.StraceTarget >/dev/null 2>&1";
  if (std::system(command.c_str()) != 0) {
    const std::string text = fs::exists(log) ? testing::slurp(log) : "";
    if (text.find("Operation not permitted") != std::string::npos || text.empty()) {
      GTEST_SKIP() << "strace cannot trace here (ptrace not permitted)";
    }
    FAIL() << command << "\n" << text;
  }
  // From the first open of the temporary file on: its fd, its fsync, the rename, then a
  // folder opened and fsync'ed.
  std::istringstream lines(testing::slurp(log));
  const std::regex open_re(R"re(open(at)?\(.*"([^"]*)".*\) = (\d+))re");
  const std::regex fsync_re(R"re(f(data)?sync\((\d+)\)\s+= 0)re");
  std::string tmp_fd, dir_fd;
  bool file_synced = false, renamed = false, folder_synced_after = false;
  std::smatch m;
  for (std::string line; std::getline(lines, line);) {
    if (std::regex_search(line, m, open_re)) {
      if (m[2].str().rfind(target + ".tmp-", 0) == 0) tmp_fd = m[3];
      if (m[2] == dir && renamed) dir_fd = m[3];
    } else if (std::regex_search(line, m, fsync_re)) {
      if (!tmp_fd.empty() && m[2] == tmp_fd && !renamed) file_synced = true;
      if (!dir_fd.empty() && m[2] == dir_fd) folder_synced_after = true;
    } else if (line.find("rename") != std::string::npos &&
               line.find(target + ".tmp-") != std::string::npos) {
      EXPECT_TRUE(file_synced) << "renamed before the file was fsync'ed:\n" << testing::slurp(log);
      renamed = true;
    }
  }
  EXPECT_FALSE(tmp_fd.empty()) << testing::slurp(log);
  EXPECT_TRUE(renamed) << testing::slurp(log);
  EXPECT_TRUE(file_synced) << testing::slurp(log);
  EXPECT_TRUE(folder_synced_after) << testing::slurp(log);
  EXPECT_EQ(testing::slurp(target), "checkpoint bytes");
  fs::remove_all(dir);
}

}  // namespace atomic_file_test
}  // namespace sift
