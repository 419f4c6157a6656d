// `sift serve` of fastText models without LibTorch, with the HTTP server in a plug-in:
// libsift_http.so, beside `sift`, holds run_serve and what it links (cpp-httplib, OpenSSL,
// prometheus-cpp), and `sift` opens it only to serve. Linked into `sift`, those libraries
// were mapped and OpenSSL initialised at every start: 3.8 MB more peak RSS for each
// `sift train` and `sift predict` of the fastText model (the pre-serving sift-lite with
// LD_PRELOAD=libcpp-httplib.so, configs/sst2.yaml with model.buckets 1000: 13.8 -> 17.6 MB).
// sift-main links the server as before.
#pragma once

#include <string>

#include "tools/serve/serve_options.h"
#include "tools/serve/served_models.h"

namespace sift::serve {

inline constexpr const char* kHttpPluginFile = "libsift_http.so";

// The plug-in's entry points (extern "C", found by name): the build it came from
// (build_commit), and run_serve with its exit status, errors printed as `sift` prints them.
using HttpPluginCommit = const char* (*)();
using HttpPluginServe = int (*)(const ServeArgs& args, const ModelLoader& loader,
                                const char* program);

// The plug-in beside this program, or nullptr with `why` (missing, not Sift's, or from
// another build: its types must be this program's).
HttpPluginServe open_http_plugin(std::string* why);

}  // namespace sift::serve
