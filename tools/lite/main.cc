// `sift`, the program users start. It runs `sift predict` with a fastText run folder or
// export, `sift train` of the fastText model on its fast path and `sift serve` of fastText
// models without LibTorch. Loading LibTorch's 286 shared libraries and registering its
// operators takes 0.35-0.6 s on these machines, more than `fasttext predict` takes for all
// 7,600 AG News test texts and more than `fasttext supervised` takes for TREC; the fastText
// model's forward and fused step need none of it (framework/runtime/base/fasttext_predictor.h,
// framework/train/base/lite_trainer.h). Everything else (other commands and models,
// int8/bf16 exports, --quantized-engine, runs off the fast path or with more threads,
// --resume, a config that does not load) it hands to sift-main with the same arguments, in the
// same process (exec), which then answers as it always did; SIFT_LITE=0 hands every command
// over. One program decides, and at most one exec follows (a launcher once stood in front
// of both). SIFT_LITE_WHY=1 prints why a command went to sift-main. Reports and messages
// call this path sift-lite.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>

#include "config/loader.h"
#include "core/error.h"
#include "core/sibling_program.h"
#include "framework/runtime/base/fasttext_predictor.h"
#include "framework/train/base/lite_trainer.h"
#include "models/base/traits.h"
#include "tools/lite/start_environment.h"
#include "tools/serve/fasttext_backend.h"
#include "tools/serve/http_plugin.h"
#include "tools/serve/serve_config.h"
#include "tools/sift/exit_status.h"
#include "tools/sift/fasttext_cli.h"
#include "tools/sift/predict_options.h"
#include "tools/sift/train_options.h"

namespace {

using sift::FastTextPredictor;
using sift::cli::PredictArgs;

[[noreturn]] void hand_to_sift_main(char** argv, const std::string& why) {
  if (const char* say = std::getenv("SIFT_LITE_WHY"); say != nullptr && say[0] == '1') {
    std::fprintf(stderr, "sift-lite: sift-main %s: %s\n", argv[1] == nullptr ? "" : argv[1],
                 why.c_str());
  }
  std::fflush(stdout);
  const std::string failed = sift::exec_sibling("sift-main", argv);
  std::fprintf(stderr, "sift: error: %s\n", failed.c_str());
  std::_Exit(1);
}

// The options of subcommand `name`, declared by `add` (predict_options.h, train_options.h),
// or nullptr (help, version or a usage error: sift-main's to print).
template <class Args>
std::unique_ptr<Args> parse(int argc, char** argv, const char* name,
                            void (*add)(CLI::App&, Args&)) {
  auto args = std::make_unique<Args>();
  CLI::App app{"", "sift"};
  add(*app.add_subcommand(name, ""), *args);
  try {
    app.parse(argc, argv);
  } catch (const CLI::Error&) {
    return nullptr;
  }
  return args;
}

void print_predictions(FastTextPredictor& model, const PredictArgs& args) {
  const auto& run = model.run();
  const sift::cli::PredictSettings s =
      sift::cli::resolve_predict(args, run.labels.size(), model.multi_label(),
                                 run.config.train.threshold, run.config.data.max_line_bytes);
  sift::cli::PredictOutput output = sift::cli::predict_output(args);
  output.label_prefix = run.config.data.label_prefix;
  sift::cli::TextInput in(args.input, s.max_line_bytes, output.label_prefix);
  std::vector<int64_t> ids;
  std::string line;
  while (in.next(line)) {
    model.encoder().encode(line, ids);
    std::cout << sift::cli::prediction_line(
                     line, sift::serve::fasttext_predictions(model, ids, s.k, s.threshold), output)
              << "\n";
  }
  std::cout.flush();
}

// `sift train CONFIG` when lite_refusal takes the loaded config; sift-main otherwise, and
// for a config that does not load, which it reports as it always has. Only the program that
// trains checks the config between options (resolve_run), and sift-lite reports a failed
// check as sift-main does (UsageError: exit 2).
int train(int argc, char** argv) {
  const auto args = parse(argc, argv, "train", sift::cli::add_train_options);
  if (!args) hand_to_sift_main(argv, "not a train command sift-lite reads");
  if (!args->resume.empty()) hand_to_sift_main(argv, "--resume");
  if (!args->dump_config.empty()) hand_to_sift_main(argv, "--dump-config");
  sift::SiftConfig config;
  try {
    config =
        sift::load_config(args->config, sift::cli::train_overrides(*args), sift::model_traits());
    if (const std::string why = sift::lite_refusal(config); !why.empty()) {
      hand_to_sift_main(argv, why);
    }
  } catch (const std::exception& e) {
    hand_to_sift_main(argv, e.what());
  }
  sift::TrainOptions options;
  options.quiet = args->quiet;
  options.stop_signal = sift::cli::catch_stop_signals();
  return sift::cli::exit_status_of([&] {
    sift::cli::print_train_report(sift::lite_train(config, options), args->json);
    return 0;
  });
}

int predict(int argc, char** argv) {
  const auto args = parse(argc, argv, "predict", sift::cli::add_predict_options);
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
  return sift::cli::exit_status_of([&] {
    print_predictions(*model, *args);
    return 0;
  });
}

// `sift serve` when every model is a fastText one this path reads and the HTTP plug-in
// (tools/serve/http_plugin.h) opens; sift-main otherwise.
// The models opened to decide are the ones served (a reload opens the path again, and
// refuses a model that is no longer a fastText one: sift-lite cannot serve it).
int serve(int argc, char** argv) {
  auto args = std::make_unique<sift::serve::ServeArgs>();
  CLI::App app{"", "sift"};
  CLI::App* cmd = app.add_subcommand("serve", "");
  sift::serve::add_serve_options(*cmd, *args);
  try {
    app.parse(argc, argv);
  } catch (const CLI::Error&) {
    hand_to_sift_main(argv, "not a serve command sift-lite reads");
  }
  std::string no_plugin;
  const sift::serve::HttpPluginServe run_serve = sift::serve::open_http_plugin(&no_plugin);
  if (run_serve == nullptr) hand_to_sift_main(argv, no_plugin);
  std::map<std::string, std::unique_ptr<sift::serve::ModelBackend>> opened;
  try {
    sift::serve::apply_serve_config(*cmd, *args);
    for (const auto& spec : sift::serve::model_specs(*args)) {
      std::string why;
      auto model = sift::serve::open_fasttext_backend(spec.path, &why);
      if (!model) hand_to_sift_main(argv, spec.name + ": " + why);
      opened[spec.path] = std::move(model);
    }
  } catch (const std::exception& e) {
    hand_to_sift_main(argv, e.what());  // which reports it as it always has
  }
  const sift::serve::ModelLoader loader = [&opened](const std::string& path) {
    if (auto it = opened.find(path); it != opened.end() && it->second) return std::move(it->second);
    std::string why;
    auto model = sift::serve::open_fasttext_backend(path, &why);
    if (!model) throw sift::Error(why + " (sift-lite serves fastText models; restart to serve it)");
    return model;
  };
  return run_serve(*args, loader, "LibTorch not loaded (sift-lite)");
}

}  // namespace

int main(int argc, char** argv) {
  sift::set_start_environment();
  if (const char* lite = std::getenv("SIFT_LITE"); lite != nullptr && std::strcmp(lite, "0") == 0) {
    hand_to_sift_main(argv, "SIFT_LITE=0");
  }
  // fastText's predict and predict-prob command lines, as sift-main rewrites them.
  std::unique_ptr<sift::cli::FastTextArgv> rewritten;
  if (argc > 1 &&
      (std::strcmp(argv[1], "predict") == 0 || std::strcmp(argv[1], "predict-prob") == 0)) {
    try {
      rewritten = std::make_unique<sift::cli::FastTextArgv>(argc, argv);
    } catch (const sift::UsageError& e) {
      std::fprintf(stderr, "sift: error: %s\n", e.what());
      return 2;
    }
  }
  if (argc > 1 && std::strcmp(argv[1], "train") == 0) return train(argc, argv);
  if (argc > 1 && std::strcmp(argv[1], "predict") == 0) return predict(argc, argv);
  if (argc > 1 && std::strcmp(argv[1], "serve") == 0) return serve(argc, argv);
  hand_to_sift_main(argv, "not a command sift-lite runs");
}
