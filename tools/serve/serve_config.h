// `sift serve --config FILE`: the serve: section of a YAML file, read through the same
// option table as the flags (serve_options.h) and checked by the same ranges, once,
// before anything is served. A flag given on the command line overrides the file.
#pragma once

#include <CLI/CLI.hpp>

#include "tools/serve/serve_options.h"

namespace sift::serve {

// Sets every option of args.config_file's serve: section that `cmd` did not get on the command
// line. Nothing to do without --config. sift::Error naming FILE:LINE and the key: an unknown
// or repeated key, a value of the wrong type or out of its range, any section but serve:.
void apply_serve_config(const CLI::App& cmd, ServeArgs& args);

}  // namespace sift::serve
