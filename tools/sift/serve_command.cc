// `sift serve` in sift-main: any model `sift predict` reads. The fastText model still runs
// on plain arrays (tools/serve/fasttext_backend.h); everything else under LibTorch. The
// launcher sends `sift serve` to sift-lite first, which serves fastText-only sets of
// models without loading LibTorch at all and hands the rest here.
#include <algorithm>
#include <thread>

#include "framework/runtime/compute_threads.h"
#include "tools/serve/serve_config.h"
#include "tools/serve/serve_main.h"
#include "tools/serve/torch_backend.h"
#include "tools/sift/commands.h"

namespace sift::cli {

namespace {

void run(serve::ServeArgs& args) {
  // Workers x compute threads = the cores: the split bench/serve_bench.sh measures.
  const int64_t cores = std::max(1u, std::thread::hardware_concurrency());
  apply_threads(args.compute_threads > 0 ? args.compute_threads
                                         : std::max<int64_t>(1, cores / args.batch.workers));
  serve::run_serve(args, serve::open_any_backend, "LibTorch loaded (sift-main)");
}

}  // namespace

void add_serve_command(CLI::App& app) {
  auto args = std::make_shared<serve::ServeArgs>();
  auto* cmd = app.add_subcommand("serve",
                                 "Serve models over HTTP (JSON; KServe v2) with dynamic batching.");
  serve::add_serve_options(*cmd, *args);
  cmd->callback([cmd, args] {
    serve::apply_serve_config(*cmd, *args);
    run(*args);
  });
}

}  // namespace sift::cli
