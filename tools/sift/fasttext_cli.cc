#include "tools/sift/fasttext_cli.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "core/error.h"
#include "core/nearest_name.h"

namespace sift::cli {
namespace {

// What Sift does with one of fastText's flags.
enum class Use {
  key,        // the value goes to a config key (`to`)
  flag,       // a flag without a value: the Sift flag `to`
  no_effect,  // read and ignored, as `fasttext supervised` ignores it
  refused,    // not supported: `to` says why
  autotune    // makes the command `sift tune`: the key or flag `to` of the search
};

struct FastTextFlag {
  Use use;
  std::string to;
  bool takes_value = true;
};

// Every flag of fastText 0.9.2's supervised and quantize (docs/fasttext.md has the same
// table for readers; tests/tools/fasttext_cli_test.cc checks it against `fasttext`'s help).
const std::map<std::string, FastTextFlag>& supervised_flags() {
  static const std::map<std::string, FastTextFlag> flags = {
      {"-input", {Use::key, "data.train.path"}},
      {"-output", {Use::key, "run"}},
      {"-lr", {Use::key, "train.optimizer.lr"}},
      {"-dim", {Use::key, "model.dim"}},
      {"-epoch", {Use::key, "train.epochs"}},
      {"-minCount", {Use::key, "tokenizer.min_count"}},
      {"-wordNgrams", {Use::key, "model.ngrams"}},
      {"-bucket", {Use::key, "model.buckets"}},
      {"-loss", {Use::key, "train.loss"}},
      {"-neg", {Use::key, "train.neg"}},
      {"-thread", {Use::key, "train.fast_path_threads"}},
      {"-seed", {Use::key, "run.seed"}},
      {"-verbose", {Use::key, "verbose"}},
      {"-ws", {Use::no_effect, "the context window of word-vector training"}},
      {"-t", {Use::no_effect, "the sampling threshold of word-vector training"}},
      {"-lrUpdateRate", {Use::no_effect, "Sift decays the rate at every step"}},
      {"-minn", {Use::key, "model.minn"}},
      {"-maxn", {Use::key, "model.maxn"}},
      {"-minCountLabel", {Use::refused, "labels are kept whatever their count"}},
      {"-label", {Use::key, "data.label_prefix"}},
      {"-pretrainedVectors", {Use::key, "model.pretrained"}},
      {"-saveOutput",
       {Use::refused,
        "fastText writes the output matrix as text to PATH.output; Sift writes no such "
        "file: the matrix is the tensor output.weight of the run's best.ckpt (and of its "
        "`sift export`)",
        false}},
      {"-autotune-validation", {Use::autotune, "data.valid.path"}},
      {"-autotune-metric", {Use::autotune, "--metric"}},
      {"-autotune-predictions",
       {Use::refused, "sift tune scores each validation line's top label (k = 1)"}},
      {"-autotune-duration", {Use::autotune, "--budget"}},
      {"-autotune-modelsize", {Use::autotune, "--max-model-size"}},
      {"-dump-config", {Use::flag, "--dump-config"}},
  };
  return flags;
}

const std::map<std::string, FastTextFlag>& quantize_flags() {
  static const std::map<std::string, FastTextFlag> flags = {
      {"-output", {Use::key, "run"}},
      {"-input", {Use::flag, "--data"}},
      {"-cutoff", {Use::flag, "--cutoff"}},
      {"-dsub", {Use::flag, "--dsub"}},
      {"-qnorm", {Use::flag, "--qnorm", false}},
      {"-qout", {Use::flag, "--qout", false}},
      {"-retrain", {Use::flag, "--retrain", false}},
      {"-epoch", {Use::key, "train.epochs"}},
      {"-lr", {Use::key, "train.optimizer.lr"}},
      {"-thread", {Use::no_effect, "the run's threads"}},
      {"-verbose", {Use::no_effect, "quantizing prints nothing"}},
  };
  return flags;
}

using Args = std::vector<std::string>;

// `-flag value` pairs (and value-less flags) of a fastText command line, from args[1].
std::map<std::string, std::string> read_flags(const Args& args,
                                              const std::map<std::string, FastTextFlag>& flags) {
  std::map<std::string, std::string> out;
  std::vector<std::string> names;
  for (const auto& [name, flag] : flags) names.push_back(name);
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& name = args[i];
    const auto it = flags.find(name);
    if (it == flags.end()) {
      const std::string best = nearest_name(name, names, 3);
      throw UsageError(fmt::format("{}: fastText's {} has no flag {}{}", args[0], args[0], name,
                                   best.empty() ? "" : "; did you mean " + best + "?"));
    }
    if (it->second.use == Use::refused) {
      throw UsageError(fmt::format("{} {}: not supported: {}", args[0], name, it->second.to));
    }
    if (!it->second.takes_value) {
      out[name] = "";
      continue;
    }
    if (i + 1 >= args.size())
      throw UsageError(fmt::format("{} {}: a value is missing", args[0], name));
    out[name] = args[++i];
  }
  return out;
}

// -output PATH: the run folder PATH (fastText writes PATH.bin; Sift writes a folder).
void add_output(Args& sift, const std::string& output) {
  const std::filesystem::path path(output);
  const std::string dir = path.has_parent_path() ? path.parent_path().string() : ".";
  sift.insert(sift.end(),
              {"--set", "run.dir=" + dir, "--set", "run.name=" + path.filename().string()});
}

// fastText's autotune flags as `sift tune`'s: the validation file, the budget (fastText's
// default 300 s), the metric (fastText's f1 over single labels at k = 1 is accuracy,
// tune's default) and the model size.
void add_autotune(Args& sift, const std::map<std::string, std::string>& given) {
  if (!given.count("-autotune-validation")) {
    throw UsageError(
        "supervised: the -autotune-* flags need -autotune-validation FILE, as fastText's do");
  }
  if (given.count("-dump-config")) {
    throw UsageError("supervised -dump-config: not with -autotune-*; the search writes best.yaml");
  }
  sift.front() = "tune";
  sift.insert(sift.end(), {"--set", "data.valid.path=" + given.at("-autotune-validation")});
  const auto duration = given.find("-autotune-duration");
  sift.insert(
      sift.end(),
      {"--budget", (duration == given.end() ? std::string("300") : duration->second) + "s"});
  const auto metric = given.find("-autotune-metric");
  if (metric != given.end() && metric->second != "f1") {
    sift.insert(sift.end(), {"--metric", metric->second});
  }
  const auto size = given.find("-autotune-modelsize");
  if (size != given.end()) sift.insert(sift.end(), {"--max-model-size", size->second});
}

Args supervised(const Args& args) {
  const auto given = read_flags(args, supervised_flags());
  if (!given.count("-input") || !given.count("-output")) {
    throw UsageError("supervised: give -input FILE and -output PATH, as fastText needs them");
  }
  const bool autotune = std::any_of(given.begin(), given.end(), [](const auto& g) {
    return supervised_flags().at(g.first).use == Use::autotune;
  });
  // fastText's reading and its defaults where the fastText model's differ: every line
  // trains (no validation split), text split as fastText splits it.
  Args sift = {"train",
               "--set",
               "data.format=fasttext",
               "--set",
               "data.valid_split=0",
               "--set",
               "tokenizer.fasttext_compat=true",
               "--set",
               "model.type=fasttext"};
  for (const auto& [name, value] : given) {
    const FastTextFlag& flag = supervised_flags().at(name);
    if (flag.use == Use::no_effect || flag.use == Use::autotune) continue;
    if (flag.use == Use::flag) {
      sift.insert(sift.end(), {flag.to, value});
    } else if (flag.to == "run" && autotune) {
      sift.insert(sift.end(), {"--out", value});  // the search folder
    } else if (flag.to == "run") {
      add_output(sift, value);
    } else if (flag.to == "verbose") {
      if (value == "0") sift.push_back("--quiet");
    } else {
      const std::string v = name == "-loss" && value == "one-vs-all" ? "ova" : value;
      sift.insert(sift.end(), {"--set", flag.to + "=" + v});
    }
  }
  if (autotune) add_autotune(sift, given);
  return sift;
}

Args quantize(const Args& args) {
  const auto given = read_flags(args, quantize_flags());
  if (!given.count("-output")) throw UsageError("quantize: give -output PATH (the run folder)");
  const std::string run = given.at("-output");
  Args sift = {"export", run, "--quantize", "pq", "--out", run + ".ftz"};
  // -input, -epoch and -lr are read by -retrain alone, as by fastText.
  const bool retrain = given.count("-retrain") > 0;
  for (const auto& [name, value] : given) {
    const FastTextFlag& flag = quantize_flags().at(name);
    const bool for_retrain = name == "-input" || (flag.use == Use::key && flag.to != "run");
    if (flag.use == Use::no_effect || flag.to == "run" || (for_retrain && !retrain)) continue;
    if (flag.use == Use::key) {
      sift.insert(sift.end(), {"--set", flag.to + "=" + value});
      continue;
    }
    sift.push_back(flag.to);
    if (flag.takes_value) sift.push_back(value);
  }
  return sift;
}

// MODEL FILE [k] [th], as fastText's test, predict and predict-prob take them.
struct Positional {
  std::string model, input, k = "1", threshold;
};

Positional positional(const Args& args) {
  if (args.size() < 3 || args.size() > 5) {
    throw UsageError(
        fmt::format("{}: give MODEL FILE [k] [th], as fastText's {}", args[0], args[0]));
  }
  Positional p;
  p.model = args[1];
  p.input = args[2];
  if (args.size() > 3) p.k = args[3];
  if (args.size() > 4) p.threshold = args[4];
  if (std::filesystem::is_regular_file(p.model) &&
      std::filesystem::path(p.model).extension() == ".bin") {
    throw UsageError(fmt::format(
        "{}: {} is a fastText model; bring it in first: sift import fasttext {} --out RUN", args[0],
        p.model, p.model));
  }
  return p;
}

Args test(const Args& args) {
  const Positional p = positional(args);
  Args sift = {"eval",     "--model",  p.model, "--data", p.input,
               "--format", "fasttext", "--k",   p.k,      "--fasttext-output"};
  if (!p.threshold.empty()) sift.insert(sift.end(), {"--k-threshold", p.threshold});
  return sift;
}

Args predict(const Args& args, bool probabilities) {
  const Positional p = positional(args);
  Args sift = {"predict", "--model",  p.model,
               "--input", p.input,    "--top-k",
               p.k,       "--format", probabilities ? "fasttext-prob" : "fasttext"};
  if (!p.threshold.empty()) sift.insert(sift.end(), {"--threshold", p.threshold});
  return sift;
}

}  // namespace

namespace {

// "  -input FILE  -> data.train.path" lines for a command's --help.
std::string flag_lines(const std::map<std::string, FastTextFlag>& flags) {
  std::string out;
  for (const auto& [name, flag] : flags) {
    const char* what = flag.use == Use::key         ? "-> "
                       : flag.use == Use::flag      ? "-> "
                       : flag.use == Use::autotune  ? "-> sift tune "
                       : flag.use == Use::no_effect ? "no effect: "
                                                    : "not supported: ";
    out +=
        fmt::format("  {:<22} {}{}\n", name, what, flag.to == "run" ? "the run folder" : flag.to);
  }
  return out;
}

}  // namespace

void add_fasttext_commands(CLI::App& app) {
  const std::string table = " Every flag: docs/fasttext.md.";
  struct Command {
    const char* name;
    std::string description;
    std::string footer;
  };
  const std::vector<Command> commands = {
      {"supervised",
       "fastText's `supervised -input FILE -output PATH [flags]`: sift train of the fastText "
       "model on a run folder PATH, reading text as fastText does." +
           table,
       "fastText's flags and the Sift keys they set:\n" + flag_lines(supervised_flags())},
      {"test",
       "fastText's `test MODEL FILE [k] [th]`: N, P@k and R@k (sift eval --fasttext-output "
       "--k k --k-threshold th)." +
           table,
       ""},
      {"predict-prob",
       "fastText's `predict-prob MODEL FILE [k] [th]`: __label__A 0.87 lines (sift predict "
       "--format fasttext-prob); `sift predict MODEL FILE [k] [th]` writes the labels alone." +
           table,
       ""},
      {"quantize",
       "fastText's `quantize -output RUN [flags]`: sift export RUN --quantize pq --out RUN.ftz." +
           table,
       "fastText's flags and the Sift flags they become:\n" + flag_lines(quantize_flags())},
  };
  for (const Command& c : commands) {
    CLI::App* cmd = app.add_subcommand(c.name, c.description);
    cmd->allow_extras();
    if (!c.footer.empty()) cmd->footer(c.footer);
  }
}

std::optional<std::vector<std::string>> from_fasttext_command_line(const Args& args) {
  if (args.empty()) return std::nullopt;
  for (const std::string& a : args) {
    if (a == "-h" || a == "--help") return std::nullopt;  // the command's own help
  }
  const std::string& command = args[0];
  if (command == "supervised") return supervised(args);
  if (command == "quantize") return quantize(args);
  if (command == "test") return test(args);
  if (command == "predict-prob") return predict(args, true);
  // `sift predict MODEL FILE`: fastText's form (Sift's own predict takes --model).
  if (command == "predict" && args.size() > 1 && args[1].rfind("-", 0) != 0) {
    return predict(args, false);
  }
  return std::nullopt;
}

FastTextArgv::FastTextArgv(int& argc, char**& argv) {
  auto sift_args = from_fasttext_command_line({argv + 1, argv + argc});
  if (!sift_args) return;
  args_ = std::move(*sift_args);
  argv_.push_back(argv[0]);
  for (std::string& a : args_) argv_.push_back(a.data());
  argc = static_cast<int>(argv_.size());
  argv_.push_back(nullptr);  // as a program's argv ends
  argv = argv_.data();
}

}  // namespace sift::cli
