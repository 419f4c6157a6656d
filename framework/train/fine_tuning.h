// Fine-tuning from a run folder (train.init_from), an imported Hugging Face model among
// them: the output layer belongs to the labels it was trained for. When the task's labels
// are the run's (in any order), the task takes the run's order and the head is kept; when
// they differ, the output layer starts anew from the model's own initialisation, whatever
// its shape. Either way the run says which, in train.log.
#pragma once

#include <string>

#include "datasets/labels.h"
#include "models/model.h"

namespace sift {

// The run folder `from`'s labels.txt order for `labels` when both hold the same names;
// `labels` unchanged otherwise (or when `from` is a checkpoint file). `counts`, indexed by
// label id, follows the new order.
void take_label_order(LabelSet& labels, std::vector<uint64_t>& counts, const std::string& from);

// Loads train.init_from into `model` (setup.h's init_from), then gives the output layer
// back its initial values when `labels` are not the run folder's. Returns the line for
// train.log: what the loader left out, then the head kept or started anew (the latter not
// for a checkpoint file, which names no labels); lines end with '\n' between them.
std::string fine_tune_from(ClassifierImpl& model, const std::string& from, const LabelSet& labels);

}  // namespace sift
