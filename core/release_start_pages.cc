#include "core/release_start_pages.h"

#include <elf.h>
#include <link.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

namespace sift {
namespace {

// An object whose code is patched by relocations (DT_TEXTREL) holds copies in its
// read-only segments; none of Debian's libraries should, but such an object is skipped.
bool has_text_relocations(const dl_phdr_info* info) {
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_DYNAMIC) continue;
    const auto* dyn = reinterpret_cast<const ElfW(Dyn)*>(info->dlpi_addr + ph.p_vaddr);
    for (; dyn->d_tag != DT_NULL; ++dyn) {
      if (dyn->d_tag == DT_TEXTREL) return true;
      if (dyn->d_tag == DT_FLAGS && (dyn->d_un.d_val & DF_TEXTREL) != 0) return true;
    }
  }
  return false;
}

int release_object(dl_phdr_info* info, size_t, void* data) {
  auto* released = static_cast<int64_t*>(data);
  // The vDSO is the kernel's, not a file's.
  if (info->dlpi_addr == ::getauxval(AT_SYSINFO_EHDR) || has_text_relocations(info)) return 0;
  const auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    // Relocated data (RELRO included) lies in the writable segment; the others are
    // mapped from the file and never written.
    if (ph.p_type != PT_LOAD || (ph.p_flags & PF_W) != 0) continue;
    const uintptr_t start = info->dlpi_addr + ph.p_vaddr;
    // Whole pages only: a page shared with a neighbouring segment is left alone.
    const uintptr_t begin = (start + page - 1) / page * page;
    const uintptr_t end = (start + ph.p_memsz) / page * page;
    if (end <= begin) continue;
    if (::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED) == 0) {
      *released += static_cast<int64_t>(end - begin);
    }
  }
  return 0;
}

}  // namespace

int64_t release_start_pages() {
  int64_t released = 0;
  dl_iterate_phdr(release_object, &released);
  return released;
}

}  // namespace sift
