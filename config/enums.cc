#include "config/enums.h"

#include <fmt/format.h>

#include "config/metric_table.h"
#include "core/error.h"

namespace sift {

std::string not_a_choice(const std::string& text, const std::vector<std::string>& choices) {
  return fmt::format("The value '{}' is not one of: {}.", text, fmt::join(choices, ", "));
}

void throw_not_a_choice(const std::string& key, const std::string& text,
                        const std::vector<std::string>& choices) {
  throw Error(fmt::format("{}: {}", key, not_a_choice(text, choices)));
}

#define SIFT_ENUM_NAMES(E, ...)                                  \
  template <>                                                    \
  const std::vector<std::string>& enum_names<E>() {              \
    static const std::vector<std::string> names = {__VA_ARGS__}; \
    return names;                                                \
  }

SIFT_ENUM_NAMES(OptimizerType, "sgd", "adam", "adamw", "adagrad", "rmsprop", "adadelta")
SIFT_ENUM_NAMES(SchedulerType, "constant", "linear", "warmup_linear", "warmup_cosine")
SIFT_ENUM_NAMES(Precision, "fp32", "bf16", "fp16")
SIFT_ENUM_NAMES(GradientCheckpointing, "off", "all", "every")
SIFT_ENUM_NAMES(LossScaling, "auto", "dynamic", "off")
SIFT_ENUM_NAMES(LossReduction, "mean", "sum")
SIFT_ENUM_NAMES(Loss, "softmax", "hs", "ns", "ova")
SIFT_ENUM_NAMES(OnNonfinite, "stop", "skip_batch")
SIFT_ENUM_NAMES(SaveLast, "epoch", "end", "auto")
SIFT_ENUM_NAMES(FastPath, "auto", "off")
SIFT_ENUM_NAMES(ShardStage, "none", "optimizer", "gradients", "parameters")
SIFT_ENUM_NAMES(PruneStructure, "unstructured", "filters", "heads", "ffn", "rows", "hidden")
// The metric table's rows that can choose best.ckpt (metric_table.cc), in its order.
template <>
const std::vector<std::string>& enum_names<BestMetric>() {
  static const std::vector<std::string> names = metric_keys(&MetricName::chooses_best);
  return names;
}
SIFT_ENUM_NAMES(TokenizerType, "word", "sentencepiece", "wordpiece")
SIFT_ENUM_NAMES(PieceIds, "sift", "albert", "fairseq")
SIFT_ENUM_NAMES(FileFormat, "fasttext", "tsv", "csv", "label_first", "jsonl")
SIFT_ENUM_NAMES(TextEncoding, "utf-8", "latin-1")
SIFT_ENUM_NAMES(LabelMapping, "name", "index0", "index1")
SIFT_ENUM_NAMES(BadLinePolicy, "error", "skip")
SIFT_ENUM_NAMES(Split, "train", "valid", "test")

#undef SIFT_ENUM_NAMES

}  // namespace sift
