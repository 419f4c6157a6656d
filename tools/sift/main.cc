// sift: train, evaluate and use text classifiers. Errors are reported here, once.
#include <c10/util/Exception.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/keep_freed_memory.h"
#include "core/nearest_name.h"
#include "core/out_of_memory.h"
#include "core/provenance.h"
#include "core/release_start_pages.h"
#include "framework/train/trainer.h"
#include "tools/sift/commands.h"
#include "tools/sift/exit_status.h"
#include "tools/sift/fasttext_cli.h"

namespace {

// Usage errors (bad options, missing arguments, unknown commands) exit with 2, as getopt
// tools and argparse do; errors while running exit with 1.
constexpr int kUsageError = 2;

// The first argument when it is not an option and names no subcommand: an error with the
// nearest subcommand name ("did you mean 'train'?") when one is within edit distance 2.
bool unknown_command(const CLI::App& app, int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') return false;
  const std::string given = argv[1];
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    names.push_back(sub->get_name());
  }
  const std::string best = sift::nearest_name(given, names, 2);
  if (best == given) return false;
  std::fprintf(stderr, "sift: error: unknown command '%s'", given.c_str());
  if (!best.empty()) std::fprintf(stderr, "; did you mean '%s'?", best.c_str());
  std::fprintf(stderr, "\nRun 'sift --help' for the list of commands.\n");
  return true;
}

// A flag the command does not have ("--top_k"): one error line with the command's nearest
// flag ("did you mean '--top-k'?") when one is within edit distance 2; false when every
// flag of the command line is known (the parser's own message then says what is wrong).
bool unknown_flag(const CLI::App& app, int argc, char** argv) {
  if (argc < 3) return false;
  const CLI::App* command = nullptr;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (sub->get_name() == argv[1]) command = sub;
  }
  if (command == nullptr) return false;
  std::vector<std::string> flags;
  for (const CLI::Option* option : command->get_options()) {
    for (const std::string& name : option->get_lnames()) flags.push_back("--" + name);
  }
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--") break;
    if (arg.rfind("--", 0) != 0) continue;
    const std::string flag = arg.substr(0, arg.find('='));
    if (std::find(flags.begin(), flags.end(), flag) != flags.end()) continue;
    std::fprintf(stderr, "sift: error: %s has no option %s", argv[1], flag.c_str());
    const std::string best = sift::nearest_name(flag, flags, 2);
    if (!best.empty()) std::fprintf(stderr, "; did you mean '%s'?", best.c_str());
    std::fprintf(stderr, " ('sift %s --help' lists them)\n", argv[1]);
    return true;
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  sift::keep_freed_memory();
  sift::release_start_pages();  // LibTorch's static initializers have run: their pages go
  CLI::App app{"Sift: streaming text classification on LibTorch", "sift"};
  app.require_subcommand(1);
  app.set_version_flag(
      "--version", std::string("sift ") + sift::kSiftVersion + " (" + sift::build_commit() + ")");
  sift::cli::add_train_command(app);
  sift::cli::add_pretrain_command(app);
  sift::cli::add_eval_command(app);
  sift::cli::add_predict_command(app);
  sift::cli::add_config_command(app);
  sift::cli::add_tokenizer_command(app);
  sift::cli::add_shard_command(app);
  sift::cli::add_export_command(app);
  sift::cli::add_cv_command(app);
  sift::cli::add_launch_command(app);
  sift::cli::add_import_command(app);
  sift::cli::add_tune_command(app);
  sift::cli::add_report_command(app);
  sift::cli::add_serve_command(app);
  sift::cli::add_fasttext_commands(app);
  // fastText's command lines become the Sift command that does the same.
  std::unique_ptr<sift::cli::FastTextArgv> rewritten;
  try {
    rewritten = std::make_unique<sift::cli::FastTextArgv>(argc, argv);
  } catch (const sift::UsageError& e) {
    std::fprintf(stderr, "sift: error: %s\n", e.what());
    return kUsageError;
  }
  if (unknown_command(app, argc, argv)) return kUsageError;
  return sift::cli::exit_status_of([&] {
    try {
      app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
      if (dynamic_cast<const CLI::ExtrasError*>(&e) && unknown_flag(app, argc, argv)) {
        return kUsageError;
      }
      if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version: their text
      // A bad value, a missing argument: one line, as every other error (CLI11's own print
      // adds a second, "Run with --help for more information.").
      throw sift::UsageError(e.what());
    } catch (const c10::Error& e) {  // its what() carries a backtrace: the message alone
      const std::string message = e.what_without_backtrace();
      throw sift::Error(sift::is_allocation_failure(message) ? sift::out_of_memory_line(message)
                                                             : message);
    }
    return 0;
  });
}
