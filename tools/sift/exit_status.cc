#include "tools/sift/exit_status.h"

#include <cstdio>
#include <iostream>
#include <new>

#include "core/error.h"
#include "core/out_of_memory.h"
#include "framework/train/base/train_options.h"

namespace sift::cli {

int exit_status_of(const std::function<int()>& command) {
  const auto say = [](const char* prefix, const char* message) {
    std::cout.flush();
    std::fprintf(stderr, "sift: %s%s\n", prefix, message);
  };
  try {
    return command();
  } catch (const Interrupted& e) {  // saved and stopped, as asked: not an error
    say("", e.what());
    return 128 + e.signal();
  } catch (const UsageError& e) {
    say("error: ", e.what());
    return 2;
  } catch (const std::bad_alloc&) {
    say("error: ", out_of_memory_line().c_str());
    return 1;
  } catch (const std::exception& e) {
    say("error: ", e.what());
    return 1;
  }
}

}  // namespace sift::cli
