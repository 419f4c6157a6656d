#include "tools/serve/http_plugin.h"

#include "core/provenance.h"
#include "tools/serve/serve_main.h"
#include "tools/sift/exit_status.h"

extern "C" const char* sift_http_commit() { return sift::build_commit(); }

extern "C" int sift_http_serve(const sift::serve::ServeArgs& args,
                               const sift::serve::ModelLoader& loader, const char* program) {
  return sift::cli::exit_status_of([&] { return sift::serve::run_serve(args, loader, program); });
}
