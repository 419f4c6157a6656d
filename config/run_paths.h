// File paths in a run folder's config.yaml are relative to that folder (as LightningCLI
// and Hugging Face resolve a config's paths against the config file), so a run resumes,
// evaluates its splits and retrains its export (`sift export --retrain`) from any working
// folder, and a project moved as a whole keeps its runs' data. A path given on the
// command line or in the config that started the run is relative to the working folder.
// The options concerned: the splits' data.*.path, train.distill.unlabeled and teacher, and
// train.init_from (the model.* and tokenizer.* paths are read only when a run starts,
// and are part of config.yaml's hash).
#pragma once

#include <string>

#include "config/config.h"

namespace sift {

// The config as a run folder `run_dir` saves it: each relative path (relative to the
// working folder) made relative to `run_dir`; absolute paths stay.
SiftConfig with_paths_relative_to(SiftConfig config, const std::string& run_dir);

// A run folder's config as read back: each relative path read from its config.yaml (not
// one given by --set) taken against `run_dir`, so it is relative to the working folder.
void resolve_paths_against(SiftConfig& config, const std::string& run_dir);

}  // namespace sift
