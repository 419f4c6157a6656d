// Word vocabulary: ids for words, built by counting a training corpus, saved as a
// small text file.
#pragma once

#include <cstdint>
#include <functional>
#include <istream>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace sift {

namespace detail {

// Open-addressing (linear probing) index from words to dense ids. The words live in
// the owner's storage; each slot keeps the id and 32 bits of the word's hash, so a
// lookup by string_view allocates nothing and compares strings only on a tag match.
class WordIndex {
 public:
  static constexpr uint32_t kMissing = UINT32_MAX;

  static uint32_t tag_of(std::string_view word) {
    uint64_t h = std::hash<std::string_view>{}(word);
    return static_cast<uint32_t>(h ^ (h >> 32));
  }

  // The id of word (whose tag is given), or kMissing. word_at(id) returns the stored
  // word of an id.
  template <class WordAt>
  uint32_t find(std::string_view word, uint32_t tag, const WordAt& word_at) const {
    if (slots_.empty()) return kMissing;
    for (size_t pos = home(tag);; pos = (pos + 1) & mask_) {
      const Slot& slot = slots_[pos];
      if (slot.id == kMissing) return kMissing;
      if (slot.tag == tag && std::string_view(word_at(slot.id)) == word) return slot.id;
    }
  }

  // Adds an id whose word is not in the index yet.
  void insert(uint32_t tag, uint32_t id);
  // Empties the index and keeps its capacity.
  void clear();
  size_t size() const { return size_; }

 private:
  struct Slot {
    uint32_t tag;
    uint32_t id;
  };

  // Fibonacci hashing spreads the tag over the table's bits.
  size_t home(uint32_t tag) const { return (tag * 2654435769u) >> shift_; }
  void place(Slot slot);
  void grow();

  std::vector<Slot> slots_;
  size_t mask_ = 0;
  int shift_ = 32;
  size_t size_ = 0;
};

}  // namespace detail

class Vocab {
 public:
  static constexpr int64_t kPad = 0;  // "<pad>"
  static constexpr int64_t kUnk = 1;  // "<unk>"

  // Just the two specials. The specials are not looked up by name: id("<pad>") is
  // kUnk unless "<pad>" was added as an ordinary word.
  Vocab();

  int64_t size() const { return static_cast<int64_t>(words_.size()); }  // with specials
  // kUnk when unknown. Allocation-free; safe to call from several threads.
  int64_t id(std::string_view word) const {
    uint32_t found = index_.find(word, detail::WordIndex::tag_of(word),
                                 [this](uint32_t i) -> const std::string& { return words_[i]; });
    return found == detail::WordIndex::kMissing ? kUnk : found;
  }
  bool contains(std::string_view word) const { return id(word) != kUnk; }
  const std::string& word(int64_t id) const;
  uint64_t count(int64_t id) const;  // training count (0 for the specials)

  // Appends a word with the next id. Throws sift::Error for a duplicate, an empty
  // word, or one with a tab or line break (the file format could not hold it).
  void add(std::string word, uint64_t count);

  // Text: "sift-vocab 1", then "word<TAB>count" for each word after the specials, in id
  // order. The path version writes PATH.tmp, then renames it over PATH.
  void save(std::ostream& out) const;
  void save(const std::string& path) const;
  // Reads what save wrote; checks the magic line and the format version. Errors name
  // `name` (the file or archive entry the stream reads).
  static Vocab load(std::istream& in, const std::string& name);
  static Vocab load(const std::string& path);

 private:
  void check_id(int64_t id) const;

  std::vector<std::string> words_;
  std::vector<uint64_t> counts_;
  detail::WordIndex index_;
};

// Counts words in one streaming pass in memory bounded by max_entries distinct words.
// When the table is full it drops every word whose count is below a threshold that
// rises on each pruning (fastText's Dictionary::threshold): rare words go, frequent
// ones keep exact counts unless they were themselves dropped earlier (a dropped word
// counts again from zero).
class VocabBuilder {
 public:
  explicit VocabBuilder(size_t max_entries = 5'000'000);

  void add(std::string_view word);
  void add(const std::vector<std::string>& words);

  // Words with count >= min_count, most frequent first (ties in byte order, so the
  // result is deterministic), at most max_size of them (0 = no limit) besides the
  // specials.
  Vocab build(uint64_t min_count, uint64_t max_size) const;

  size_t distinct() const { return entries_.size(); }  // distinct words held now
  uint64_t prunings() const { return prunings_; }       // times the table was pruned
  uint64_t threshold() const { return threshold_; }     // words below it were dropped

 private:
  struct Entry {
    std::string word;
    uint64_t count;
    uint32_t tag;
  };

  void insert(std::string_view word, uint32_t tag);
  void prune();
  void raise_threshold();

  size_t max_entries_;
  std::vector<Entry> entries_;
  detail::WordIndex index_;
  uint64_t threshold_ = 1;
  uint64_t prunings_ = 0;
};

}  // namespace sift
