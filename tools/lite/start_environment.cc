#include "tools/lite/start_environment.h"

#include <cstdlib>
#include <initializer_list>

namespace sift {

void set_start_environment() {
  if (std::getenv("OMP_WAIT_POLICY") == nullptr) setenv("OMP_WAIT_POLICY", "PASSIVE", 1);
  for (const char* name : {"OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS"}) {
    if (std::getenv(name) != nullptr) return;  // the user's choice
  }
  setenv("OPENBLAS_NUM_THREADS", "1", 1);
}

}  // namespace sift
