// fastText's command line on Sift: `sift supervised -input train.txt -output model`,
// `sift test MODEL FILE [k] [th]`, `sift predict MODEL FILE [k] [th]`, `sift predict-prob
// MODEL FILE [k] [th]` and `sift quantize -output MODEL ...` are rewritten into the Sift
// command that does the same (train, eval, predict, export) before the command line is
// parsed, so that each job is still done by one command. Torch-free: sift-lite rewrites
// predict and predict-prob too. docs/fasttext.md has the table of every flag.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

namespace sift::cli {

// The Sift arguments (without the program name) for a fastText command line `args`
// (args[0] is the command), or nullopt when args is not one. sift::UsageError naming the
// flag for a flag fastText does not have ("did you mean"), a flag Sift does not support,
// or a missing value.
std::optional<std::vector<std::string>> from_fasttext_command_line(
    const std::vector<std::string>& args);

// `sift supervised|test|predict-prob|quantize --help`: the commands in `sift --help`, each
// with its fastText flags and the Sift key or flag each becomes. Their command lines never
// reach these (FastTextArgv rewrites them first), only --help does.
void add_fasttext_commands(CLI::App& app);

// A program's argc and argv, rewritten in place by from_fasttext_command_line when they
// are a fastText command line (left as they are otherwise); this object owns the new
// strings, so it must outlive their use. sift::UsageError as from_fasttext_command_line.
class FastTextArgv {
 public:
  FastTextArgv(int& argc, char**& argv);

 private:
  std::vector<std::string> args_;
  std::vector<char*> argv_;
};

}  // namespace sift::cli
