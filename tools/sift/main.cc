// sift: train, evaluate and use text classifiers. Errors are reported here, once.
#include <c10/util/Exception.h>
#include <fmt/format.h>

#include <cstdio>

#include "core/error.h"
#include "tools/sift/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"Sift: streaming text classification on LibTorch", "sift"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "sift 0.1.0");
  sift::cli::add_train_command(app);
  sift::cli::add_eval_command(app);
  sift::cli::add_predict_command(app);
  sift::cli::add_config_command(app);
  sift::cli::add_tokenizer_command(app);
  sift::cli::add_shard_command(app);
  sift::cli::add_export_command(app);
  sift::cli::add_cv_command(app);
  sift::cli::add_launch_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
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
