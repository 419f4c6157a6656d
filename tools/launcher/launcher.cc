// `sift`: starts `sift-main` (the real program, beside this file) with a passive OpenMP
// wait policy unless the user chose one. LibTorch's OpenMP threads otherwise spin after
// every parallel region; beside the data workers on a loaded machine that spinning took
// 10x the CPU time of training itself (configs/sms_spam.yaml: 33 s vs 2.3 s). libgomp
// reads the policy only when it is loaded, before main(), so it must be set before the
// program starts; this launcher loads no LibTorch, so the restart costs about 1 ms.
//
// It leaves transparent huge pages to the user (GLIBC_TUNABLES=glibc.malloc.hugetlb=1 asks
// for them). It used to add that tunable (SST-2 1.61 -> 1.20 s, when that run took 1.6 s).
// Measured again (bench/huge_pages.py, bench/RESULTS.md "Transparent huge pages"), both CPU
// slots held, medians of 7 pairs, on -> off: SST-2's fastText run 0.20 -> 0.25 s, but with
// runs up to 0.39 s beside 0.24-0.27; a TextCNN run 2.72 -> 2.29 s (system time 0.93 ->
// 0.39 s: malloc's every mapping is madvised); `sift --version` 0.39 -> 0.43 s; 1M lines
// 4.00 -> 4.05 s. On a busy machine SST-2 with huge pages took 0.39-0.85 s against
// 0.45-0.56 s without, the slow runs spending up to 0.67 s of system time in clear_page
// (perf): 2 MB pages come from free blocks this VM's kernel returned to the hypervisor.
// Predictable small runs and LibTorch's runs outweigh SST-2's 0.05 s.
//
// And it starts OpenBLAS with one thread (OPENBLAS_NUM_THREADS=1, unless the user set it,
// GOTO_NUM_THREADS or OMP_NUM_THREADS, which OpenBLAS also reads). Debian's pthread build
// otherwise starts a thread per core when it is loaded, and they spin in sched_yield
// while the program starts. Medians of 5 alternating runs (bench/RESULTS.md, stop 33):
// `sift --version` 0.48 -> 0.38 s (system time 0.17 -> 0.03 s), SST-2 0.82 -> 0.74 s.
// run.threads raises the count where a run wants more (apply_threads).
//
// `sift predict`, `sift train` and `sift serve` start sift-lite instead (tools/lite/): it
// predicts with and serves fastText run folders and trains the fastText model on its fast
// path without loading LibTorch, and hands anything else to sift-main. SIFT_LITE=0 sends them to
// sift-main.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "core/sibling_program.h"

namespace {

// OpenBLAS reads the first of these that is set.
void start_openblas_with_one_thread() {
  for (const char* name : {"OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS"}) {
    if (std::getenv(name) != nullptr) return;  // the user's choice
  }
  setenv("OPENBLAS_NUM_THREADS", "1", 1);
}

bool goes_to_lite(int argc, char** argv) {
  const char* lite = std::getenv("SIFT_LITE");
  return argc > 1 &&
         (std::strcmp(argv[1], "predict") == 0 || std::strcmp(argv[1], "predict-prob") == 0 ||
          std::strcmp(argv[1], "train") == 0 || std::strcmp(argv[1], "serve") == 0) &&
         (lite == nullptr || std::strcmp(lite, "0") != 0);
}

}  // namespace

int main(int argc, char** argv) {
  if (std::getenv("OMP_WAIT_POLICY") == nullptr) setenv("OMP_WAIT_POLICY", "PASSIVE", 1);
  start_openblas_with_one_thread();
  const std::string why =
      sift::exec_sibling(goes_to_lite(argc, argv) ? "sift-lite" : "sift-main", argv);
  std::fprintf(stderr, "sift: error: %s\n", why.c_str());
  return 1;
}
