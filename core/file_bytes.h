// A whole (small) file read into memory: checkpoints, exported models' parts.
#pragma once

#include <string>
#include <string_view>

namespace sift {

// The bytes of `path`; throws sift::Error "cannot open {what}{path}: {reason}" (or
// "cannot read ..." when reading fails).
std::string read_file_bytes(const std::string& path, std::string_view what = "");

}  // namespace sift
