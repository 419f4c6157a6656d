#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

#include "config/loader.h"
#include "core/error.h"
#include "core/open_for_writing.h"
#include "core/out_of_memory.h"
#include "framework/runtime/compute_threads.h"
#include "framework/runtime/evaluation.h"
#include "framework/runtime/export.h"
#include "framework/runtime/model_bundle.h"
#include "tools/sift/commands.h"
#include "tools/sift/summary.h"

namespace sift::cli {
namespace {

struct EvalArgs {
  std::string model;
  std::string quantized_engine;  // empty: LibTorch's default
  std::vector<std::string> data;
  std::string format, label, encoding, label_mapping;
  std::vector<std::string> text;
  bool header = false;
  bool no_header = false;
  std::vector<std::string> overrides;
  bool json = false;
  int64_t k = 0;
  double k_threshold = 0.0;      // with --k: only labels of at least this probability
  bool fasttext_output = false;  // `sift test`: fastText's N, P@k and R@k lines only
};

// `--data -`: standard input, copied to a temporary file that the stream reads like any
// other (it is removed when eval ends).
struct StdinCopy {
  std::string path;
  StdinCopy() {
    std::string dir = (std::filesystem::temp_directory_path() / "sift-eval-XXXXXX").string();
    if (!::mkdtemp(dir.data()))
      throw Error(fmt::format("cannot create a temporary folder: {}", std::strerror(errno)));
    path = dir + "/stdin.txt";
    std::FILE* out = fopen_for_writing(path, WriteMode::truncate);
    char buffer[1 << 16];
    bool ok = true;
    while (ok && std::cin.read(buffer, sizeof(buffer)).gcount() > 0) {
      const auto n = static_cast<size_t>(std::cin.gcount());
      ok = std::fwrite(buffer, 1, n, out) == n;
    }
    if (std::fclose(out) != 0 || !ok) throw Error(fmt::format("cannot write {}", path));
  }
  ~StdinCopy() {
    std::error_code ec;
    std::filesystem::remove_all(std::filesystem::path(path).parent_path(), ec);
  }
};

// The eval flags become overrides of the run's test split.
std::vector<std::string> test_overrides(const EvalArgs& a) {
  std::vector<std::string> o;
  // Quoted: pasted in as they are, '*.tsv', '@list' and 'a,b.tsv' were not read as strings.
  if (!a.data.empty()) o.push_back("data.test.path=" + yaml_quoted_list(a.data));
  if (!a.format.empty()) o.push_back("data.test.format=" + yaml_quoted(a.format));
  if (!a.text.empty()) o.push_back("data.test.text=" + yaml_quoted_list(a.text));
  if (!a.label.empty()) o.push_back("data.test.label=" + yaml_quoted(a.label));
  if (!a.encoding.empty()) o.push_back("data.test.encoding=" + yaml_quoted(a.encoding));
  if (!a.label_mapping.empty()) {
    o.push_back("data.test.label_mapping=" + yaml_quoted(a.label_mapping));
  }
  if (a.header) o.push_back("data.test.header=true");
  if (a.no_header) o.push_back("data.test.header=false");
  o.insert(o.end(), a.overrides.begin(), a.overrides.end());
  return o;
}

void run_eval(EvalArgs args) {
  if (args.k < 0) throw UsageError("--k: the number of top labels must be >= 1.");
  if (args.k_threshold > 0 && args.k < 1) {
    throw UsageError("--k-threshold: applies to the top labels of --k K; give --k");
  }
  if (args.fasttext_output && args.k < 1) {
    throw UsageError("--fasttext-output: give --k K (fastText's P@K and R@K)");
  }
  std::unique_ptr<StdinCopy> stdin_copy;
  for (std::string& path : args.data) {
    if (path != "-") continue;
    if (!stdin_copy) stdin_copy = std::make_unique<StdinCopy>();
    path = stdin_copy->path;
  }
  if (!args.quantized_engine.empty()) use_quantized_engine(args.quantized_engine);
  ModelBundle bundle = load_model(args.model, test_overrides(args));
  apply_threads(bundle.config.run.threads);
  const TextEncoder encoder = make_encoder(bundle.task);
  auto batches =
      open_stream(resolve_data(bundle.config), Split::test, encoder, bundle.task.labels, false);
  if (!batches) throw Error("no data to evaluate: give --data PATH");
  LabelMode mode = label_mode(bundle.config);
  mode.top_k = args.k;
  mode.top_k_threshold = args.k_threshold;
  const Allocating activations("an evaluation batch's activations",
                               "train.batch_size, data.max_length");
  const Evaluation e = evaluate(bundle.model, *batches, bundle.task.encoder.kind,
                                bundle.task.labels.size(), bundle.device, mode);
  if (e.examples() == 0) throw Error(empty_split_message("test", *batches));
  nlohmann::json report = {{"run_dir", bundle.run_dir}};
  report["splits"]["test"] = e.to_json(bundle.task.labels.names());
  if (args.json) {
    std::cout << summary_json(report).dump(2) << std::endl;
    return;
  }
  if (args.fasttext_output) {
    std::cout << e.fasttext_test_lines();
    return;
  }
  std::cout << e.to_text(bundle.task.labels.names());
  if (batches->skipped() > 0)
    std::cout << "skipped " << batches->skipped() << " malformed records\n";
}

}  // namespace

void add_eval_command(CLI::App& app) {
  auto args = std::make_shared<EvalArgs>();
  auto* cmd = app.add_subcommand("eval", "Evaluate a trained model on labelled data.");
  cmd->add_option("--model", args->model,
                  "Run folder of a trained model, or a file from `sift export`")
      ->required();
  cmd->add_option("--data", args->data,
                  "Files, globs or folders to evaluate; - for standard input (default: the run's "
                  "test split)");
  cmd->add_option("--format", args->format, "fasttext, tsv, csv, label_first or jsonl");
  cmd->add_option("--text", args->text, "Text column(s)");
  cmd->add_option("--label", args->label, "Label column");
  cmd->add_flag("--header", args->header, "Files start with a header line");
  cmd->add_flag("--no-header", args->no_header, "Files have no header line");
  cmd->add_option("--encoding", args->encoding, "utf-8 or latin-1");
  cmd->add_option("--label-mapping", args->label_mapping, "name, index0 or index1");
  cmd->add_option("--set", args->overrides, "Override a key of the run's config")
      ->type_name("KEY=VALUE");
  cmd->add_flag("--json", args->json, "Print a machine-readable summary on stdout");
  cmd->add_option("--quantized-engine", args->quantized_engine,
                  "int8 exports: the quantized engine their weights are packed for when "
                  "loaded (onednn, qnnpack or fbgemm, as this LibTorch has; default: "
                  "LibTorch's own choice)")
      ->envname("SIFT_QUANTIZED_ENGINE");
  cmd->add_option("--k", args->k,
                  "Also report precision@k and recall@k as `fasttext test` does: the top k "
                  "labels of every example against its gold labels");
  cmd->add_option("--k-threshold", args->k_threshold,
                  "With --k: predict only the top labels of probability at least P, as "
                  "`fasttext test MODEL FILE k th` does (P@k counts the labels predicted)")
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_flag("--fasttext-output", args->fasttext_output,
                "Print only `fasttext test`'s lines (N, P@K, R@K; needs --k): what `sift test "
                "MODEL FILE K` prints");
  cmd->callback([args] { run_eval(*args); });
}

}  // namespace sift::cli
