// `sift serve` from its options to its exit: loads the models, listens, reloads them on
// SIGHUP, and on SIGTERM (or SIGINT) stops accepting, answers what it accepted within
// --drain-seconds and returns 0. The same for sift-lite (fastText models, no LibTorch)
// and sift-main (any model), which differ only in `loader` and `program`.
#pragma once

#include <string>

#include "tools/serve/serve_options.h"
#include "tools/serve/served_models.h"

namespace sift::serve {

// The exit status. sift::Error (a model that does not load, an address that cannot be
// bound, an option) before serving starts; never exits the process itself.
// `program` says in each model's startup line whether LibTorch is loaded.
int run_serve(ServeArgs args, const ModelLoader& loader, const std::string& program);

}  // namespace sift::serve
