// The one exception type the library throws for a user's mistake (bad file, bad
// config, bad data). Its message is complete and meant to be printed as is; each
// tool's main() catches it once.
#pragma once

#include <stdexcept>
#include <string>

namespace sift {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A mistake on the command line (an option's value, a --set): the tools exit with 2, as
// for a usage error their argument parser finds, instead of 1.
class UsageError : public Error {
 public:
  using Error::Error;
};

}  // namespace sift
