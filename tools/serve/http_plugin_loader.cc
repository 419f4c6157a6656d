#include <dlfcn.h>

#include <cstring>

#include "core/provenance.h"
#include "core/sibling_program.h"
#include "tools/serve/http_plugin.h"

namespace sift::serve {

HttpPluginServe open_http_plugin(std::string* why) {
  const std::string path = sibling_program(kHttpPluginFile);
  // Never closed: the process serves until it ends.
  void* lib = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* error = ::dlerror();
    *why = error != nullptr ? error : path + ": cannot open";
    return nullptr;
  }
  auto commit = reinterpret_cast<HttpPluginCommit>(::dlsym(lib, "sift_http_commit"));
  auto serve = reinterpret_cast<HttpPluginServe>(::dlsym(lib, "sift_http_serve"));
  if (commit == nullptr || serve == nullptr) {
    *why = path + ": not Sift's HTTP plug-in";
    return nullptr;
  }
  if (std::strcmp(commit(), build_commit()) != 0) {
    *why = path + ": built from " + commit() + ", this program from " + build_commit();
    return nullptr;
  }
  return serve;
}

}  // namespace sift::serve
