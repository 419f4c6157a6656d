// sift shard: split text files (plain, .gz, .zst, or stdin) into balanced shards.
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "datasets/line_reader.h"
#include "datasets/shard_writer.h"
#include "core/error.h"
#include "tools/sift/commands.h"

namespace sift::cli {
namespace {

// Far above any real line, but a bound: a file without newlines must not eat memory.
constexpr uint64_t kMaxLineBytes = uint64_t{64} << 20;

struct ShardArgs {
  std::vector<std::string> inputs;
  std::string out;
  int shards = 0;
  std::string compress;
  bool shuffle = false;
  size_t buffer = 100000;
  uint64_t seed = 0;
  bool header = false;
};

void run_shard(const ShardArgs& args) {
  ShardWriterOptions options;
  options.prefix = args.out;
  options.shards = args.shards;
  options.compression = parse_compression(args.compress);
  options.shuffle = args.shuffle;
  options.shuffle_buffer = args.buffer;
  options.seed = args.seed;
  options.header = args.header;

  int stdin_count = 0;
  for (const auto& input : args.inputs) stdin_count += input == "-";
  if (stdin_count > 1) throw Error("'-' (stdin) can be given only once");

  const auto start = std::chrono::steady_clock::now();
  ShardWriter writer(options);  // creates every shard's .tmp first: fails before reading
  std::string line;
  std::string header;
  bool have_header = false;
  for (const auto& input : args.inputs) {
    const std::string path = input == "-" ? "/dev/stdin" : input;
    LineReader reader(path, kMaxLineBytes);
    bool first = true;
    while (reader.next(line)) {
      if (reader.last_line_too_long())
        throw Error(fmt::format("{}:{}: line longer than {} bytes", input, reader.line_number(),
                                kMaxLineBytes));
      if (args.header && first) {
        first = false;
        // The first file's header goes to every shard; later files' copies are
        // dropped, and must match, or the shards would mix columns.
        if (!have_header) {
          header = line;
          have_header = true;
          writer.add(line);
        } else if (line != header) {
          throw Error(fmt::format("{}: header '{}' differs from the first input's '{}'", input,
                                  line, header));
        }
        continue;
      }
      writer.add(line);
    }
  }
  const std::vector<WrittenShard> shards = writer.finish();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  uint64_t lines = 0, text = 0, bytes = 0;
  for (const auto& s : shards) {
    std::printf("%s\t%llu lines\t%llu bytes\n", s.path.c_str(),
                static_cast<unsigned long long>(s.lines),
                static_cast<unsigned long long>(s.file_bytes));
    lines += s.lines;
    text += s.text_bytes;
    bytes += s.file_bytes;
  }
  std::printf(
      "%zu shards: %llu lines, %.1f MB text, %.1f MB written in %.2f s (%.0f lines/s, %.1f MB/s)\n",
      shards.size(), static_cast<unsigned long long>(lines), text / 1e6, bytes / 1e6, seconds,
      seconds > 0 ? lines / seconds : 0.0, seconds > 0 ? text / 1e6 / seconds : 0.0);
}

}  // namespace

void add_shard_command(CLI::App& app) {
  auto args = std::make_shared<ShardArgs>();
  auto* cmd = app.add_subcommand(
      "shard",
      "Split text files into N shards balanced by bytes (each line goes to the shard with\n"
      "the fewest bytes so far), optionally compressed and shuffled.");
  cmd->add_option("inputs", args->inputs, "Input files (plain, .gz or .zst; '-' for stdin)")
      ->required();
  cmd->add_option("--out", args->out, "Output prefix: PREFIX-00000-of-0000N.txt[.gz|.zst]")
      ->required();
  cmd->add_option("--shards", args->shards, "Number of shards")
      ->required()
      ->check(CLI::Range(1, 99999));
  cmd->add_option("--compress", args->compress, "Compress shards: gz (level 6) or zst (level 3)")
      ->check(CLI::IsMember({"gz", "zst", "none"}));
  cmd->add_flag("--shuffle", args->shuffle,
                "Shuffle lines through a bounded buffer (local, not global, shuffle)");
  cmd->add_option("--buffer", args->buffer, "Shuffle buffer size in lines")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--seed", args->seed, "Shuffle seed")->capture_default_str();
  cmd->add_flag("--header", args->header,
                "The first line of each input is a header: copy it to the top of every shard");
  cmd->callback([args] { run_shard(*args); });
}

}  // namespace sift::cli
