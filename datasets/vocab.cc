#include "datasets/vocab.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <memory>

#include "core/atomic_file.h"
#include "core/error.h"
#include "core/file_bytes.h"

namespace sift {

namespace detail {

void WordIndex::insert(uint32_t tag, uint32_t id) {
  // Grow at 70% load: linear probing stays short, also for misses (unknown words).
  if ((size_ + 1) * 10 > slots_.size() * 7) grow();
  place({tag, id});
  ++size_;
}

void WordIndex::clear() {
  std::fill(slots_.begin(), slots_.end(), Slot{0, kMissing});
  size_ = 0;
}

void WordIndex::place(Slot slot) {
  size_t pos = home(slot.tag);
  while (slots_[pos].id != kMissing) pos = (pos + 1) & mask_;
  slots_[pos] = slot;
}

void WordIndex::grow() {
  std::vector<Slot> old = std::move(slots_);
  size_t capacity = old.empty() ? 16 : old.size() * 2;
  slots_.assign(capacity, Slot{0, kMissing});
  mask_ = capacity - 1;
  shift_ = 32;
  for (size_t c = capacity; c > 1; c >>= 1) --shift_;  // shift_ = 32 - log2(capacity)
  for (const Slot& slot : old) {
    if (slot.id != kMissing) place(slot);
  }
}

}  // namespace detail

namespace {

constexpr std::string_view kMagic = "sift-vocab ";
constexpr int kFormatVersion = 1;

// Splits off the next line (without "\n" or a "\r\n" ending); false at the end.
bool next_line(std::string_view& rest, std::string_view& line) {
  if (rest.empty()) return false;
  size_t end = rest.find('\n');
  line = rest.substr(0, end);
  rest.remove_prefix(end == std::string_view::npos ? rest.size() : end + 1);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return true;
}

template <class T>
bool parse_number(std::string_view text, T& value) {
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  return !text.empty() && ec == std::errc() && ptr == end;
}

void check_header(const std::string& path, std::string_view line) {
  int version = 0;
  if (line.substr(0, kMagic.size()) != kMagic ||
      !parse_number(line.substr(kMagic.size()), version) || version < 1) {
    throw Error(fmt::format("{} is not a Sift vocabulary file", path));
  }
  if (version > kFormatVersion) {
    throw Error(
        fmt::format("{}: vocabulary format version {} is newer than this build supports ({})", path,
                    version, kFormatVersion));
  }
}

}  // namespace

Vocab::Vocab() : words_{"<pad>", "<unk>"}, counts_{0, 0} {}

void Vocab::check_id(int64_t id) const {
  if (id < 0 || id >= size()) {
    throw Error(fmt::format("vocabulary id {} is out of range [0, {})", id, size()));
  }
}

const std::string& Vocab::word(int64_t id) const {
  check_id(id);
  return words_[static_cast<size_t>(id)];
}

uint64_t Vocab::count(int64_t id) const {
  check_id(id);
  return counts_[static_cast<size_t>(id)];
}

void Vocab::add(std::string word, uint64_t count) {
  if (word.empty() || word.find_first_of("\t\n\r") != std::string::npos) {
    throw Error(fmt::format("vocabulary word \"{}\" is empty or holds a tab or line break", word));
  }
  if (contains(word)) throw Error(fmt::format("vocabulary word \"{}\" is already present", word));
  if (words_.size() >= detail::WordIndex::kMissing) throw Error("vocabulary is too large");
  index_.insert(detail::WordIndex::tag_of(word), static_cast<uint32_t>(words_.size()));
  words_.push_back(std::move(word));
  counts_.push_back(count);
}

namespace {

// The text save writes; errors name `path`.
Vocab parse_vocab(const std::string& data, const std::string& path) {
  std::string_view rest = data;
  std::string_view line;
  if (!next_line(rest, line)) throw Error(fmt::format("{} is not a Sift vocabulary file", path));
  check_header(path, line);
  Vocab vocab;
  for (uint64_t line_number = 2; next_line(rest, line); ++line_number) {
    size_t tab = line.find('\t');
    uint64_t count = 0;
    if (tab == 0 || tab == std::string_view::npos || !parse_number(line.substr(tab + 1), count)) {
      throw Error(fmt::format("{}:{}: malformed vocabulary line", path, line_number));
    }
    std::string_view word = line.substr(0, tab);
    if (vocab.contains(word)) {
      throw Error(fmt::format("{}:{}: duplicate vocabulary word \"{}\"", path, line_number, word));
    }
    vocab.add(std::string(word), count);
  }
  return vocab;
}

}  // namespace

void Vocab::save(std::ostream& out) const {
  std::string buffer = fmt::format("{}{}\n", kMagic, kFormatVersion);
  for (size_t i = static_cast<size_t>(kUnk) + 1; i < words_.size(); ++i) {
    buffer += words_[i];
    fmt::format_to(std::back_inserter(buffer), "\t{}\n", counts_[i]);
    if (buffer.size() >= (1 << 16)) {
      out.write(buffer.data(), static_cast<std::streamsize>(buffer.size()));
      buffer.clear();
    }
  }
  out.write(buffer.data(), static_cast<std::streamsize>(buffer.size()));
}

void Vocab::save(const std::string& path) const {
  write_file_atomically(path, [this](std::ostream& out) { save(out); });
}

Vocab Vocab::load(std::istream& in, const std::string& name) {
  std::string data{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  if (in.bad()) throw Error(fmt::format("cannot read {}", name));
  return parse_vocab(data, name);
}

Vocab Vocab::load(const std::string& path) { return parse_vocab(read_file_bytes(path), path); }

VocabBuilder::VocabBuilder(size_t max_entries) : max_entries_(max_entries) {
  if (max_entries == 0) throw Error("VocabBuilder needs max_entries >= 1");
}

void VocabBuilder::add(std::string_view word) {
  if (word.empty()) return;
  uint32_t tag = detail::WordIndex::tag_of(word);
  uint32_t found =
      index_.find(word, tag, [this](uint32_t i) -> const std::string& { return entries_[i].word; });
  if (found != detail::WordIndex::kMissing) {
    ++entries_[found].count;
  } else {
    insert(word, tag);
  }
}

void VocabBuilder::add(const std::vector<std::string>& words) {
  for (const std::string& word : words) add(std::string_view(word));
}

void VocabBuilder::insert(std::string_view word, uint32_t tag) {
  if (entries_.size() >= max_entries_) prune();
  // Never reserve past max_entries_: the bound is on memory, not just on the count.
  if (entries_.size() == entries_.capacity()) {
    entries_.reserve(std::min(max_entries_, std::max<size_t>(64, entries_.capacity() * 2)));
  }
  index_.insert(tag, static_cast<uint32_t>(entries_.size()));
  entries_.push_back(Entry{std::string(word), 1, tag});
}

void VocabBuilder::prune() {
  ++prunings_;
  raise_threshold();
  auto rare = [this](const Entry& entry) { return entry.count < threshold_; };
  entries_.erase(std::remove_if(entries_.begin(), entries_.end(), rare), entries_.end());
  index_.clear();
  for (size_t i = 0; i < entries_.size(); ++i) {
    index_.insert(entries_[i].tag, static_cast<uint32_t>(i));
  }
}

void VocabBuilder::raise_threshold() {
  // Free at least a quarter of the table so that pruning costs O(1) per word
  // amortized. One step up usually does it (most words are rare); when it does not,
  // jump straight to the count that leaves at most `target` words.
  const size_t target = std::min(max_entries_ - max_entries_ / 4, max_entries_ - 1);
  ++threshold_;
  auto frequent = [this](const Entry& entry) { return entry.count >= threshold_; };
  size_t kept = static_cast<size_t>(std::count_if(entries_.begin(), entries_.end(), frequent));
  if (kept <= target) return;
  std::vector<uint64_t> counts;
  counts.reserve(kept);
  for (const Entry& entry : entries_) {
    if (frequent(entry)) counts.push_back(entry.count);
  }
  std::nth_element(counts.begin(), counts.begin() + static_cast<ptrdiff_t>(target), counts.end(),
                   std::greater<>());
  threshold_ = counts[target] + 1;
}

Vocab VocabBuilder::build(uint64_t min_count, uint64_t max_size) const {
  std::vector<const Entry*> kept;
  for (const Entry& entry : entries_) {
    if (entry.count >= min_count) kept.push_back(&entry);
  }
  auto before = [](const Entry* a, const Entry* b) {
    return a->count != b->count ? a->count > b->count : a->word < b->word;
  };
  size_t n = kept.size();
  if (max_size > 0 && max_size < n) n = static_cast<size_t>(max_size);
  std::partial_sort(kept.begin(), kept.begin() + static_cast<ptrdiff_t>(n), kept.end(), before);
  Vocab vocab;
  for (size_t i = 0; i < n; ++i) vocab.add(kept[i]->word, kept[i]->count);
  return vocab;
}

}  // namespace sift
