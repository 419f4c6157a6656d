// What a tool tells a training run besides its config (quiet, a stop flag), and the error
// a stopped run ends with. Torch-free: both trainers and the run's parts read it.
#pragma once

#include <atomic>
#include <string>

#include "core/error.h"

namespace sift {

// Training stopped on request (SIGINT/SIGTERM) after saving where it stood; the message
// says how to continue. A tool exits with 128 + signal(), as a shell reports a process
// that a signal ended.
class Interrupted : public Error {
 public:
  Interrupted(const std::string& message, int signal_number)
      : Error(message), signal_(signal_number) {}
  int signal() const { return signal_; }

 private:
  int signal_;
};

struct TrainOptions {
  bool quiet = false;  // no progress output (tests)
  // Set (to the signal's number) by a tool's SIGINT/SIGTERM handler: training saves
  // last.ckpt at the next step boundary and throws sift::Interrupted. Null: never.
  const std::atomic<int>* stop_signal = nullptr;
  // A resume may --set the keys that choose the data (data_keys_changed in setup.h).
  bool allow_data_change = false;

  int requested_stop() const { return stop_signal == nullptr ? 0 : stop_signal->load(); }
};

}  // namespace sift
