// sift: train, evaluate and use text classifiers. Errors are reported here, once.
#include <c10/util/Exception.h>
#include <fmt/format.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "framework/error.h"
#include "tools/sift/commands.h"

namespace {

// LibTorch's OpenMP threads spin after every parallel region by default. Beside the data
// workers, on a loaded machine, that spinning took 10x the CPU time of the training
// itself (measured: 33 s vs 2.3 s for configs/sms_spam.yaml). libgomp reads its wait
// policy only when it is loaded, before main(), so the process restarts itself once
// with a passive policy unless the user chose one.
void use_passive_openmp_threads(char** argv) {
  if (std::getenv("OMP_WAIT_POLICY") != nullptr) return;
  setenv("OMP_WAIT_POLICY", "PASSIVE", 1);
  execv("/proc/self/exe", argv);  // returns only on failure: then run as we are
}

}  // namespace

int main(int argc, char** argv) {
  use_passive_openmp_threads(argv);
  CLI::App app{"Sift: streaming text classification on LibTorch", "sift"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "sift 0.1.0");
  sift::cli::add_train_command(app);
  sift::cli::add_eval_command(app);
  sift::cli::add_predict_command(app);
  sift::cli::add_config_command(app);
  sift::cli::add_shard_command(app);
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
