// Starting another of Sift's programs from the folder of the running one: `sift` hands
// what it does not run without LibTorch to sift-main.
#pragma once

#include <string>

namespace sift {

// `name` in the folder of this process's executable (/proc/self/exe).
std::string sibling_program(const std::string& name);

// Replaces this process with sibling_program(name), given `argv`; returns only when that
// fails, with the reason ("cannot start PATH: ...") for the caller's error line.
std::string exec_sibling(const std::string& name, char** argv);

}  // namespace sift
