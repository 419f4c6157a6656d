// Appends one line to a text file (metrics.jsonl), checked to the close.
#pragma once

#include <string>

namespace sift {

// Throws sift::Error naming `path` and the cause when the line does not reach the file.
void append_line(const std::string& path, const std::string& line);

}  // namespace sift
