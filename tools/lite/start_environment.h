// What `sift` sets before it runs anything or hands a command to sift-main: a passive OpenMP
// wait policy unless the user chose one. LibTorch's OpenMP threads otherwise spin after
// every parallel region; beside the data workers on a loaded machine that spinning took
// 10x the CPU time of training itself (configs/sms_spam.yaml: 33 s vs 2.3 s). libgomp
// reads the policy only when it is loaded, before main(), so it must be set before sift-main
// starts; `sift` itself loads no LibTorch.
//
// It leaves transparent huge pages to the user (GLIBC_TUNABLES=glibc.malloc.hugetlb=1 asks
// for them). It used to add that tunable (SST-2 1.61 -> 1.20 s, when that run took 1.6 s).
// Measured again (bench/huge_pages.py, bench/RESULTS.md "Transparent huge pages"), both CPU
// slots held, medians of 7 pairs, on -> off: SST-2's fastText run 0.20 -> 0.25 s, but with
// runs up to 0.39 s beside 0.24-0.27; a TextCNN run 2.72 -> 2.29 s (system time 0.93 ->
// 0.39 s: malloc's every mapping is madvised); `sift --version` 0.39 -> 0.43 s; 1M lines
// 4.00 -> 4.05 s. With builds beside, SST-2 right after a fastText CLI run (as
// bench/compare_fasttext.sh alternates them) took 0.76 s (0.48-1.03) with huge pages against
// 0.49 s (0.43-0.60) without, system time 0.27 against 0.05 s, in clear_page (perf): 2 MB
// pages come from free blocks this VM's kernel returned to the hypervisor.
// Predictable small runs and LibTorch's runs outweigh SST-2's 0.05 s.
//
// And it starts OpenBLAS with one thread (OPENBLAS_NUM_THREADS=1, unless the user set it,
// GOTO_NUM_THREADS or OMP_NUM_THREADS, which OpenBLAS also reads). Debian's pthread build
// otherwise starts a thread per core when it is loaded, and they spin in sched_yield
// while the program starts. Medians of 5 alternating runs (bench/RESULTS.md, stop 33):
// `sift --version` 0.48 -> 0.38 s (system time 0.17 -> 0.03 s), SST-2 0.82 -> 0.74 s.
// run.threads raises the count where a run wants more (apply_threads).
#pragma once

namespace sift {

// Sets OMP_WAIT_POLICY=PASSIVE and OPENBLAS_NUM_THREADS=1 where the user set neither (for
// OpenBLAS: nor GOTO_NUM_THREADS or OMP_NUM_THREADS, which it also reads).
void set_start_environment();

}  // namespace sift
