// Gives back the shared-library pages that start-up alone needed.
#pragma once

#include <cstdint>

namespace sift {

// Before main(), LibTorch's 289 shared libraries run their static initializers (operator
// registration) and touch about 100 MB of their code and read-only data, counted in the
// process's resident memory from then on although training uses a fraction of it. This
// drops the process's hold on the pages of every loaded object's read-only segments
// (code, constants: dl_iterate_phdr's PT_LOAD without PF_W), which are never written, so
// each page still equals its file and an access maps it back from the page cache (a
// minor fault). Relocated data, RELRO included, lies in the writable segments, left
// alone. Measured: `sift train configs/sst2.yaml` peak RSS 264 -> 190 MB (bench/RESULTS.md,
// "Peak RSS near fastText's"). Returns the bytes of address range released (resident or
// not).
int64_t release_start_pages();

}  // namespace sift
