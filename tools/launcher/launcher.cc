// `sift`: starts `sift-main` (the real program, beside this file) with a passive OpenMP
// wait policy unless the user chose one. LibTorch's OpenMP threads otherwise spin after
// every parallel region; beside the data workers on a loaded machine that spinning took
// 10x the CPU time of training itself (configs/sms_spam.yaml: 33 s vs 2.3 s). libgomp
// reads the policy only when it is loaded, before main(), so it must be set before the
// program starts; this launcher loads no LibTorch, so the restart costs about 1 ms.
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

int main(int /*argc*/, char** argv) {
  if (std::getenv("OMP_WAIT_POLICY") == nullptr) setenv("OMP_WAIT_POLICY", "PASSIVE", 1);
  char self[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  std::string dir = ".";
  if (n > 0) {
    const std::string path(self, static_cast<size_t>(n));
    dir = path.substr(0, path.rfind('/'));
  }
  const std::string program = dir + "/sift-main";
  execv(program.c_str(), argv);
  std::fprintf(stderr, "sift: error: cannot start %s: %s\n", program.c_str(), std::strerror(errno));
  return 1;
}
