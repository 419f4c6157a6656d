// `sift train` of the fastText model on its fast path without LibTorch (the sift-lite
// program, tools/lite/). Loading LibTorch takes 0.35-0.5 s on these machines, more than
// the fastText CLI's whole training on TREC; the fast path (fused SGD on plain arrays)
// needs none of it. Its learner is the one sift-main's fast path takes (fasttext_learner.h),
// over arrays of its own: the same steps on the same batches (on one thread: the same bytes)
// and the same run folder (config, labels,
// vocabulary, last.ckpt and best.ckpt, metrics.csv and metrics.jsonl, train.log, the reports), so
// that predict, eval, export and `sift train --resume` read it as they read sift-main's. What it
// does not take (lite_refusal) is trained by sift-main.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "config/config.h"
#include "framework/train/base/train_options.h"

namespace sift {

// What the fastText learner on plain arrays honours besides the values the fast path's
// rules check (fast_path_rules.h): every key of a group ending in "." and each key named.
const std::vector<std::string>& lite_honours();

// Why this trainer does not take the run `config` asks for (the first reason found), or
// "" when it does: the fastText model with the softmax, hs or ova loss on the fast path
// (fast_path_rules.h, on one thread or train.fast_path_threads Hogwild threads), one
// process, no SentencePiece, and no key set off its default that lite_honours() does not
// name (the key is the reason): a new option goes to sift-main until this learner honours
// it. A resume (a command option, not the config's) is sift-main's too.
// It reads the loaded config without checking it between options (validate): the program
// that trains it checks it, once (resolve_run, run_plan.h), so a config handed to
// sift-main is checked there and nowhere else.
std::string lite_refusal(const SiftConfig& config);

// Trains and evaluates as train() (trainer.h) does, from the same plan (plan_training);
// the report says which program trained (report.json "environment"). Call only when
// lite_refusal(config) is "". A config error is thrown as sift-main throws it.
nlohmann::json lite_train(const SiftConfig& config, const TrainOptions& options = {});

}  // namespace sift
