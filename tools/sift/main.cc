// sift: train, evaluate and use text classifiers. Errors are reported here, once.
#include <c10/util/Exception.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/keep_freed_memory.h"
#include "core/nearest_name.h"
#include "core/provenance.h"
#include "core/release_start_pages.h"
#include "framework/train/trainer.h"
#include "tools/sift/commands.h"

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

}  // namespace

int main(int argc, char** argv) {
  sift::keep_freed_memory();
  sift::release_start_pages();  // LibTorch's static initializers have run: their pages go
  CLI::App app{"Sift: streaming text classification on LibTorch", "sift"};
  app.require_subcommand(1);
  app.set_version_flag(
      "--version", std::string("sift ") + sift::kSiftVersion + " (" + sift::build_commit() + ")");
  sift::cli::add_train_command(app);
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
  if (unknown_command(app, argc, argv)) return kUsageError;
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);  // prints the message (or the help / version text)
    return code == 0 ? 0 : kUsageError;
  } catch (const sift::Interrupted& e) {
    std::fprintf(stderr, "sift: %s\n", e.what());  // training saved and stopped, as asked
    return 128 + e.signal();
  } catch (const sift::Error& e) {
    std::fprintf(stderr, "sift: error: %s\n", e.what());
    return 1;
  } catch (const c10::Error& e) {
    std::fprintf(stderr, "sift: error: %s\n", e.what_without_backtrace());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sift: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
