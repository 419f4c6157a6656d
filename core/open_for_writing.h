// The one way a file inside a run, tune or export folder is opened for writing (appends
// and truncations; whole-file writes go through atomic_file). A name that is a symlink is
// never followed (O_NOFOLLOW), and a name that is not a plain file of one link (a FIFO, a
// device, a hard link planted beside a file outside the folder) is refused: `sift tune
// --resume` truncated and wrote a file outside its folder through trials/trial-NNN.log,
// and `train --resume` appended its log lines through train.log and metrics.jsonl.
#pragma once

#include <cstdio>
#include <string>

namespace sift {

enum class WriteMode { append, truncate };

// A descriptor open for writing (O_CLOEXEC), created 0644 less the umask when missing.
// sift::Error naming `path` and why when it cannot be opened or is refused.
int open_for_writing(const std::string& path, WriteMode mode);

// The same as a stdio stream ("a" or "w").
std::FILE* fopen_for_writing(const std::string& path, WriteMode mode);

// A folder that a run, a tune or an export writes into: `dir` must not be a symlink (its
// files would land in the link's target). With `create`, it is made first (parents
// too). sift::Error naming `key` (the option or flag that names the folder) and `dir`.
void check_own_folder(const std::string& dir, const std::string& key, bool create = false);

}  // namespace sift
