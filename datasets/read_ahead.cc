#include "datasets/read_ahead.h"

#include <utility>

namespace sift {

ReadAhead::ReadAhead(ExampleStream& stream, Tokenize tokenize, size_t chunk, size_t chunks)
    : stream_(stream),
      tokenize_(std::move(tokenize)),
      chunk_size_(chunk < 1 ? 1 : chunk),
      max_chunks_(chunks < 1 ? 1 : chunks),
      thread_([this] { read(); }) {}

ReadAhead::~ReadAhead() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

void ReadAhead::read() {
  std::vector<ReadRecord> chunk;
  size_t n = 0;
  std::exception_ptr error;
  try {
    for (bool more = true; more;) {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        if (!spare_.empty()) {
          chunk = std::move(spare_.back());
          spare_.pop_back();
        }
      }
      chunk.resize(chunk_size_);
      n = 0;
      while (n < chunk_size_ && (more = stream_.next(chunk[n].example))) {
        ReadRecord& r = chunk[n];
        if (files_.empty() || files_.back() != stream_.current_file()) {
          files_.push_back(stream_.current_file());
        }
        r.file = &files_.back();
        tokenize_(r.example.text, r.tokens);
        ++n;
      }
      chunk.resize(n);
      std::unique_lock<std::mutex> lock(mutex_);
      changed_.wait(lock, [&] { return stop_ || ready_.size() < max_chunks_; });
      if (stop_) return;
      if (n > 0) ready_.push_back(std::move(chunk));
      chunk.clear();
      n = 0;
      changed_.notify_all();
    }
  } catch (...) {
    error = std::current_exception();
  }
  std::lock_guard<std::mutex> lock(mutex_);
  if (error && n > 0) {  // the records read before the error come first
    chunk.resize(n);
    ready_.push_back(std::move(chunk));
  }
  error_ = error;
  finished_ = true;
  changed_.notify_all();
}

const ReadRecord* ReadAhead::next() {
  if (at_ < current_.size()) return &current_[at_++];
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [&] { return !ready_.empty() || finished_; });
  if (ready_.empty()) {
    if (error_) std::rethrow_exception(error_);
    return nullptr;
  }
  if (!current_.empty()) spare_.push_back(std::move(current_));
  current_ = std::move(ready_.front());
  ready_.pop_front();
  changed_.notify_all();
  at_ = 0;
  return &current_[at_++];
}

}  // namespace sift
