// Setting a training run up: the process (threads, seed, group), the run folder's
// files, the model's starting weights and frozen parameters, class weights, the
// optimizer, recomputation and loss scaling.
#pragma once

#include <string>
#include <vector>

#include "config/config.h"
#include "framework/train/base/train_options.h"
#include "framework/train/run.h"

namespace sift {

// Threads, the random seed (rank 0 initialises as a single process would and its weights
// are broadcast; the other ranks draw other dropout masks), the process group, the
// device.
void start_run(Run& run, const SiftConfig& config, const TrainOptions& options);

// Creates and locks the run folder (rank 0; a non-empty one only with run.overwrite) and
// writes what loading it needs: config.yaml, labels.txt, vocab.txt, the tokenizer model
// and stop words.
void write_run_folder(Run& run);

// train.init_from: a checkpoint file, or a run folder's best (else last) checkpoint. The
// output layer (other labels) and a pretraining head may differ: those stay initialised,
// and the returned line says so ("" when every tensor was loaded).
std::string init_from(ClassifierImpl& model, const std::string& from);

// Freezing, the model on its device, class weights, the optimizer, recomputation, the
// loss scaler and the training path (fast_path.h): what both a new and a resumed run need before
// the first step.
void prepare_training(Run& run);

// Refuses --set overrides of a resumed run that change the saved model's shape or
// inputs (model.*, tokenizer.*, data.labels, data.multi_label).
void refuse_shape_changes(const std::vector<std::string>& overrides);

// The --set keys of a resume that choose the training or validation data (data.train.path,
// data.valid.path, data.valid_split, data.folds, data.fold). Without `allowed`, the first
// is refused naming it: after `--resume --set data.valid_split=0.5`, validation scored 2,287
// records the model had trained on and reported 0.9969 (issue #42).
std::vector<std::string> data_keys_changed(const std::vector<std::string>& overrides, bool allowed);

}  // namespace sift
