#include "framework/runtime/base/task_cache.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "core/atomic_file.h"
#include "core/provenance.h"
#include "datasets/wordpiece.h"

namespace sift {
namespace {

namespace fs = std::filesystem;

uint64_t fnv1a(const std::string& text) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ULL;
  return h;
}

std::string entry_path(const std::string& dir, const std::string& identity) {
  return fmt::format("{}/task-{:016x}.json", dir, fnv1a(identity));
}

// Keeps the newest kTaskCacheEntries entries, `kept` (the one just written) among them:
// modification times are as coarse as the kernel's clock tick, so ties are common.
void evict(const std::string& dir, const fs::path& kept) {
  std::error_code ec;
  std::vector<std::pair<fs::file_time_type, fs::path>> entries;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("task-", 0) != 0 || e.path().extension() != ".json") continue;
    if (e.path() == kept) continue;
    entries.emplace_back(e.last_write_time(ec), e.path());
  }
  if (entries.size() < static_cast<size_t>(kTaskCacheEntries)) return;
  std::sort(entries.begin(), entries.end());
  const size_t extra = entries.size() + 1 - static_cast<size_t>(kTaskCacheEntries);
  for (size_t i = 0; i < extra; ++i) fs::remove(entries[i].second, ec);
}

}  // namespace

std::string task_bytes(const Task& task) {
  nlohmann::json j;
  j["labels"] = task.labels.names();
  j["train_records"] = task.train_records;
  j["train_skipped"] = task.train_skipped;
  j["train_empty_texts"] = task.train_empty_texts;
  j["label_counts"] = task.label_counts;
  std::vector<std::string> words;
  std::vector<uint64_t> counts;
  for (int64_t id = Vocab::kUnk + 1; id < task.vocab->size(); ++id) {
    words.push_back(task.vocab->word(id));
    counts.push_back(task.vocab->count(id));
  }
  j["words"] = std::move(words);
  j["counts"] = std::move(counts);
  return j.dump();
}

Task task_from_bytes(const DataPlan& plan, const std::string& bytes) {
  const auto j = nlohmann::json::parse(bytes);
  Task task;
  task.labels = LabelSet(j["labels"].get<std::vector<std::string>>(), "the first rank's labels");
  task.train_records = j["train_records"].get<uint64_t>();
  task.train_skipped = j["train_skipped"].get<uint64_t>();
  task.train_empty_texts = j["train_empty_texts"].get<uint64_t>();
  task.label_counts = j["label_counts"].get<std::vector<uint64_t>>();
  auto vocab = std::make_shared<Vocab>();
  const auto& words = j["words"];
  const auto& counts = j["counts"];
  for (size_t i = 0; i < words.size(); ++i) {
    vocab->add(words[i].get<std::string>(), counts[i].get<uint64_t>());
  }
  task.vocab = std::move(vocab);
  task.encoder = plan.encoder;
  task.masked_lm = plan.masked_lm.has_value();
  if (plan.tokenizer == TokenizerType::sentencepiece) {
    task.pieces = SentencePieceModel::open(plan.tokenizer_model);
  }
  if (plan.tokenizer == TokenizerType::wordpiece) {
    task.wordpiece = open_wordpiece(plan.tokenizer_model, plan.encoder.tokenizer.lowercase);
  }
  return task;
}

std::string task_cache_dir() {
  if (const char* dir = std::getenv("SIFT_CACHE_DIR")) {
    const std::string d = dir;
    return d == "off" ? "" : d;
  }
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && xdg[0] == '/') {
    return std::string(xdg) + "/sift";
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && home[0] == '/') {
    return std::string(home) + "/.cache/sift";
  }
  return "";
}

std::string task_identity(const DataPlan& plan) {
  if (plan.tokenizer != TokenizerType::word || !plan.vocabulary_from.empty()) return "";
  const auto train = split_files(plan, Split::train);
  if (!train) return "";
  std::ostringstream out;
  out << "sift " << kSiftVersion << " " << build_commit() << "\n" << plan.options_identity;
  for (const std::string& file : train->files) {
    struct stat st {};
    if (::stat(file.c_str(), &st) != 0) return "";  // the count itself will name the error
    out << fmt::format("file {} {} {}.{:09d} {} {}\n", fs::absolute(file).string(), st.st_size,
                       st.st_mtim.tv_sec, st.st_mtim.tv_nsec, st.st_ino, st.st_dev);
  }
  return out.str();
}

std::optional<Task> load_cached_task(const DataPlan& plan, const std::string& identity) {
  const std::string dir = task_cache_dir();
  if (dir.empty() || identity.empty()) return std::nullopt;
  std::ifstream in(entry_path(dir, identity), std::ios::binary);
  if (!in) return std::nullopt;
  try {
    const auto j = nlohmann::json::parse(in);
    if (j.at("identity").get<std::string>() != identity) return std::nullopt;
    Task task = task_from_bytes(plan, j.at("task").dump());
    task.vocabulary_cache = "read";
    return task;
  } catch (const std::exception&) {
    return std::nullopt;  // torn or foreign: counted again and written over
  }
}

bool store_cached_task(const Task& task, const std::string& identity) {
  const std::string dir = task_cache_dir();
  if (dir.empty() || identity.empty()) return false;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return false;
  try {
    nlohmann::json j;
    j["identity"] = identity;
    j["task"] = nlohmann::json::parse(task_bytes(task));
    write_file_atomically(entry_path(dir, identity), j.dump());
  } catch (const std::exception&) {
    return false;  // a full disk or a read-only home: the run goes on without it
  }
  evict(dir, entry_path(dir, identity));
  return true;
}

}  // namespace sift
