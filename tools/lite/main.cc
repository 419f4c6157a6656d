// sift-lite: `sift predict` with a fastText run folder or export, without LibTorch. Loading
// LibTorch's 286 shared libraries and registering its operators takes 0.35-0.6 s on these
// machines, more than `fasttext predict` takes for all 7,600 AG News test texts; the
// fastText model's forward needs none of it (framework/runtime/fasttext_predictor.h).
// Everything else (other commands and models, int8/bf16 exports, --quantized-engine, any
// error while loading) goes to sift-main with the same arguments, which then answers as it
// always did. SIFT_LITE_WHY=1 prints why a predict went to sift-main.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "core/sibling_program.h"
#include "framework/runtime/fasttext_predictor.h"
#include "tools/sift/predict_options.h"

namespace {

using sift::FastTextPredictor;
using sift::cli::PredictArgs;

[[noreturn]] void hand_to_sift_main(char** argv, const std::string& why) {
  if (const char* say = std::getenv("SIFT_LITE_WHY"); say != nullptr && say[0] == '1') {
    std::fprintf(stderr, "sift-lite: sift-main predicts: %s\n", why.c_str());
  }
  std::fflush(stdout);
  const std::string failed = sift::exec_sibling("sift-main", argv);
  std::fprintf(stderr, "sift: error: %s\n", failed.c_str());
  std::_Exit(1);
}

// The parsed options, or nullptr (help, version or a usage error: sift-main's to print).
std::unique_ptr<PredictArgs> parse(int argc, char** argv) {
  if (argc < 2 || std::strcmp(argv[1], "predict") != 0) return nullptr;
  auto args = std::make_unique<PredictArgs>();
  CLI::App app{"", "sift"};
  sift::cli::add_predict_options(*app.add_subcommand("predict", ""), *args);
  try {
    app.parse(argc, argv);
  } catch (const CLI::Error&) {
    return nullptr;
  }
  return args;
}

void predict(FastTextPredictor& model, const PredictArgs& args) {
  const auto& run = model.run();
  const sift::cli::PredictSettings s = sift::cli::resolve_predict(
      args, run.labels.size(), model.multi_label(), run.config.train.threshold);
  std::ifstream file;
  std::istream& in = sift::cli::open_input(args.input, file);
  std::vector<int64_t> ids;
  std::string line;
  sift::cli::Predictions predictions;
  while (sift::cli::next_text(in, line)) {
    model.encoder().encode(line, ids);
    predictions.clear();
    if (model.multi_label()) {
      predictions = sift::cli::labels_over(model.label_probabilities(ids).data(),
                                           run.labels.names(), s.threshold);
    } else {
      for (const auto& [label, p] : model.top_k(ids, s.k, s.threshold)) {
        predictions.emplace_back(run.labels.name(label), p);
      }
    }
    std::cout << sift::cli::prediction_line(line, predictions, args.json) << "\n";
  }
  std::cout.flush();
}

}  // namespace

int main(int argc, char** argv) {
  const std::unique_ptr<PredictArgs> args = parse(argc, argv);
  if (!args) hand_to_sift_main(argv, "not a predict command sift-lite reads");
  if (!args->quantized_engine.empty()) hand_to_sift_main(argv, "--quantized-engine");
  const bool run_folder = std::filesystem::is_directory(args->model);
  if (!run_folder && !std::filesystem::is_regular_file(args->model)) {
    hand_to_sift_main(argv, "no such run folder or file");
  }
  std::unique_ptr<FastTextPredictor> model;
  std::string why;
  try {
    model = run_folder ? FastTextPredictor::open(args->model, &why)
                       : FastTextPredictor::open_export(args->model, &why);
  } catch (const std::exception& e) {
    hand_to_sift_main(argv, e.what());  // which reports it as it always has
  }
  if (!model) hand_to_sift_main(argv, why);
  try {
    predict(*model, *args);
  } catch (const std::exception& e) {
    std::cout.flush();
    std::fprintf(stderr, "sift: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
