// Expands the data file patterns of a config into the list of files to read.
#pragma once

#include <string>
#include <vector>

namespace sift {

// Expands patterns into a de-duplicated list of existing regular files, in pattern
// order with each glob's or directory's matches sorted. A pattern is a file path; a
// glob (* ? [..] {a,b}); a directory (its regular, non-hidden files, not recursive); or
// "@LIST", a text file with one path or glob per line (# comments and blank lines
// ignored, relative entries resolved against the list file's folder). key is the config
// key the patterns came from, named in errors ("data.train.path: no file matches 'x'").
std::vector<std::string> expand_paths(const std::vector<std::string>& patterns,
                                      const std::string& key);

// For a path under a data/NAME/ folder (relative "data/NAME/..." or ".../data/NAME/..."),
// the words that tell a user how to get that data set: "; fetch it with
// tools/get_data.sh NAME". Empty for any other path. Missing-file errors append it.
std::string data_fetch_hint(const std::string& path);

}  // namespace sift
