// What the trainer does differently in a process group, kept out of trainer.cc: the
// task shared from rank 0, evaluations summed over ranks, each rank's data cursor and
// random state gathered into rank 0's checkpoint, and the world-size check on resume.
// A single process passes a group of one (Distributed()), for which every function does
// exactly what a single process needs and nothing more.
#pragma once

#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "framework/runtime/base/task.h"
#include "framework/runtime/evaluation.h"
#include "framework/train/base/group.h"
#include "framework/train/distributed.h"

namespace sift {

// Joins the group the environment describes (a group of one when there is none). With
// `threads` (run.threads) 0, "all cores", the LOCAL_WORLD_SIZE ranks of one machine share
// its cores.
std::shared_ptr<Distributed> join_for_training(const DistributedOptions& options, int64_t threads);

// Rank 0 runs `make` and every rank gets its result; an error on rank 0 becomes an error
// on every rank (instead of the others waiting for the timeout).
std::string on_primary(Distributed& dist, const std::string& key,
                       const std::function<std::string()>& make);

// The labels, vocabulary and counts. In a group rank 0 makes the one pass over the
// training data and shares the result: every rank gets the identical vocabulary, and
// the other ranks do not repeat a pass whose result they would throw away.
Task build_shared_task(const DataPlan& plan, Distributed& dist);

// The factor on a rank's batch loss that makes the averaged gradient equal to one
// process's over all ranks' examples together: world x n / total for a mean loss (ranks
// with more examples weigh more), world for a summed loss.
double rank_loss_scale(LossReduction loss_reduction, int64_t examples, int64_t total_examples,
                       int64_t world_size);

// Sums confusion matrices and losses over the ranks (each evaluated its partition).
void reduce_evaluation(Distributed& dist, Evaluation& evaluation);

// Refuses to resume a checkpoint written by another number of processes.
void check_world_size(const nlohmann::json& meta, const std::string& path, int64_t world_size);

}  // namespace sift
