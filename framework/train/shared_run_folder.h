// The run folder of a group on several machines: rank 0 writes it, and a resume (a
// restart by `sift launch --max-restarts` too) reads it on every rank, so every node must
// see the same folder at the same path (a shared file system). Checked at the start of
// every group run: a node that sees no folder there, another one or a stale copy is
// refused naming the path, the file that differs and the node.
#pragma once

#include <string>

#include "framework/train/distributed.h"

namespace sift {

// Collective: compares what every rank sees at `run_dir` (config.yaml, labels.txt,
// vocab.txt, run.lock, last.ckpt) with rank 0's; any difference is one sift::Error on every
// rank. Nothing for a group of one.
void check_shared_run_folder(Distributed& dist, const std::string& run_dir);

// Before a resumed rank joins its group: a missing last.ckpt on a rank other than 0 says
// that the run folder must be shared (instead of only "cannot open").
void check_run_folder_visible(const std::string& run_dir, const std::string& last_path);

}  // namespace sift
