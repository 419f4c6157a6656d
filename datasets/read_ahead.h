// A split's records read, parsed and tokenized by a thread of their own, ahead of the
// caller, in file order: the vocabulary pass (build_task) counts words on one core while
// the next records are read on the other.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "datasets/example.h"
#include "datasets/example_stream.h"

namespace sift {

// One record and what the reading thread made of it.
struct ReadRecord {
  Example example;
  std::vector<std::string> tokens;    // what `tokenize` gave for its text
  const std::string* file = nullptr;  // the file it came from (lives as long as the reader)
};

class ReadAhead {
 public:
  // Cuts a text into the tokens to count; runs on the reading thread only.
  using Tokenize = std::function<void(const std::string& text, std::vector<std::string>& out)>;

  // Starts reading `stream` (which must outlive this object) at once, `chunk` records
  // at a time, at most `chunks` of them ahead of the caller.
  ReadAhead(ExampleStream& stream, Tokenize tokenize, size_t chunk = 512, size_t chunks = 4);
  ~ReadAhead();
  ReadAhead(const ReadAhead&) = delete;
  ReadAhead& operator=(const ReadAhead&) = delete;

  // The next record, valid until the next call; nullptr after the last. An error of the
  // reading thread (a malformed record, an unreadable file) is thrown here, after the
  // records before it, as reading on the caller's thread would have thrown it.
  const ReadRecord* next();

 private:
  void read();

  ExampleStream& stream_;
  Tokenize tokenize_;
  size_t chunk_size_;
  size_t max_chunks_;
  std::deque<std::string> files_;  // written by the reading thread; elements never move
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::vector<ReadRecord>> ready_;
  // Chunks the caller is done with, read into again: their strings and token lists keep
  // their capacity (fresh ones cost an allocation per word, 1.3 s of CPU on 1M lines).
  std::vector<std::vector<ReadRecord>> spare_;
  bool finished_ = false;
  bool stop_ = false;
  std::exception_ptr error_;
  std::vector<ReadRecord> current_;
  size_t at_ = 0;
  std::thread thread_;
};

}  // namespace sift
