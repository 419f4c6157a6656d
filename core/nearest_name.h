// The name nearest to a misspelt one, for "did you mean" hints (unknown options, commands).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace sift {

// Levenshtein distance: inserts, deletes and substitutions of single bytes.
size_t edit_distance(const std::string& a, const std::string& b);

// The first of `names` nearest to `given`, or "" when none is within `max_distance`.
std::string nearest_name(const std::string& given, const std::vector<std::string>& names,
                         size_t max_distance = SIZE_MAX);

}  // namespace sift
