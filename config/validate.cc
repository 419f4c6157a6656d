#include "config/validate.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <utility>

#include "config/loader.h"
#include "config/metric_table.h"
#include "config/options.h"
#include "core/error.h"
#include "core/memory.h"

namespace sift {
namespace {

const ModelTraits& model_of(const SiftConfig& config, const std::vector<ModelTraits>& models) {
  std::vector<std::string> names;
  for (const auto& m : models) {
    if (m.name == config.model.type) return m;
    names.push_back(m.name);
  }
  throw Error(fmt::format("model.type: unknown model type '{}' (known: {})", config.model.type,
                          fmt::join(names, ", ")));
}

// The names of the models that have a capability, for "it works with ..." hints.
template <class Has>
std::string models_with(const std::vector<ModelTraits>& models, Has has) {
  std::vector<std::string> names;
  for (const auto& m : models) {
    if (has(m)) names.push_back(m.name);
  }
  return fmt::format("{}", fmt::join(names, ", "));
}

// A dumped config (a run folder's config.yaml, read again to resume) gives every option,
// those of the other models too; it says nothing of which model.* keys were chosen.
bool gives_every_option(const SiftConfig& config) {
  return std::all_of(all_options().begin(), all_options().end(),
                     [&](const Option& option) { return is_set(config, option.name); });
}

// Every explicitly set model.* key must be one the model reads.
void check_model_options(const SiftConfig& config, const ModelTraits& model) {
  if (gives_every_option(config)) return;
  for (const auto& [key, origin] : config.origin) {
    if (key.rfind("model.", 0) != 0 || key == "model.type") continue;
    if (std::find(model.options.begin(), model.options.end(), key) == model.options.end()) {
      throw Error(fmt::format("{}: option '{}' does not apply to model '{}' (its options: {})",
                              origin, key, model.name, fmt::join(model.options, ", ")));
    }
  }
}

void check_precision(const SiftConfig& config, const std::vector<ModelTraits>& models,
                     const ModelTraits& model) {
  const TrainConfig& t = config.train;
  const bool cuda = config.run.device.rfind("cuda", 0) == 0;
  if (t.precision == Precision::fp16 && !cuda) {
    throw Error(fmt::format(
        "train.precision: fp16 needs a CUDA device (run.device is '{}'); LibTorch has no fp16 "
        "autocast on the CPU: use bf16 there.",
        config.run.device));
  }
  if ((t.precision == Precision::bf16 && !model.bf16) ||
      (t.precision == Precision::fp16 && !model.fp16)) {
    throw Error(fmt::format("train.precision: The {} model does not train in {}; use fp32.",
                            model.name, to_string(t.precision)));
  }
  if (t.gradient_checkpointing != GradientCheckpointing::off && !model.recomputation) {
    throw Error(fmt::format(
        "train.gradient_checkpointing: The {} model has no layers whose activations could be "
        "recomputed; set it to off (it works with {}).",
        model.name, models_with(models, [](const ModelTraits& m) { return m.recomputation; })));
  }
}

void check_folds(const DataConfig& d) {
  if (d.folds == 0) return;
  if (d.fold >= d.folds) {
    throw Error(
        fmt::format("data.fold: The held-out fold must be below data.folds ({} is not "
                    "below {}).",
                    d.fold, d.folds));
  }
  if (!d.test.path.empty()) {
    throw Error(
        "data.test.path: Cross-validation (data.folds) tests on the held-out fold of the "
        "training data; leave data.test.path empty.");
  }
}

// label_f1 and train.best_label go together; whether the label occurs is checked once the
// training labels are known (build_task).
void check_best_label(const TrainConfig& t) {
  if (t.best_metric == BestMetric::label_f1 && t.best_label.empty()) {
    throw Error(
        "train.best_label: train.best_metric label_f1 follows the F1 of one label; name it "
        "(e.g. --set train.best_label=spam)");
  }
  if (t.best_metric != BestMetric::label_f1 && !t.best_label.empty()) {
    throw Error(fmt::format(
        "train.best_label: '{}' is only read with train.best_metric: label_f1 (it is {})",
        t.best_label, to_string(t.best_metric)));
  }
}

// pretrain.files: an encoder's masked-token pretraining over WordPiece ids, with no labels.
void check_pretrain(const SiftConfig& config, const ModelTraits& model) {
  const PretrainConfig& p = config.pretrain;
  const std::string best = to_string(config.train.best_metric);
  if (p.files.empty()) {
    if (config.train.best_metric == BestMetric::masked_accuracy) {
      throw Error(
          "train.best_metric: masked_accuracy is masked-token pretraining's (pretrain.files); "
          "a classifier chooses by accuracy, macro_f1 or loss");
    }
    return;
  }
  if (!model.masked_lm) {
    throw Error(fmt::format(
        "model.type: '{}' is not an encoder that masked-token pretraining trains (pretrain.files "
        "needs model.type bert)",
        model.name));
  }
  if (config.tokenizer.type != TokenizerType::wordpiece &&
      config.tokenizer.type != TokenizerType::sentencepiece) {
    throw Error(fmt::format(
        "tokenizer.type: masked-token pretraining reads WordPiece or SentencePiece ids "
        "(tokenizer.type wordpiece with a vocab.txt holding [MASK], or sentencepiece with a "
        "model holding it: `sift tokenizer train`), not {}",
        to_string(config.tokenizer.type)));
  }
  if (config.train.best_metric != BestMetric::masked_accuracy &&
      config.train.best_metric != BestMetric::loss) {
    throw Error(
        fmt::format("train.best_metric: a pretraining run (pretrain.files) has no labels; choose "
                    "masked_accuracy or loss, not {}",
                    best));
  }
  if (p.max_tokens > config.model.max_positions) {
    throw Error(
        fmt::format("pretrain.max_tokens: packed sequences of {} tokens exceed the encoder's "
                    "model.max_positions {}",
                    p.max_tokens, config.model.max_positions));
  }
  if (!config.train.distill.teacher.empty() || config.data.multi_label) {
    throw Error(
        fmt::format("{}: a pretraining run (pretrain.files) reads unlabelled text only",
                    config.data.multi_label ? "data.multi_label" : "train.distill.teacher"));
  }
}

// tokenizer.piece_ids albert and fairseq are a SentencePiece model's ids.
void check_piece_ids(const TokenizerConfig& t) {
  if (t.piece_ids == PieceIds::sift || t.type == TokenizerType::sentencepiece) return;
  throw Error(
      fmt::format("tokenizer.piece_ids: {} reads a SentencePiece model; set tokenizer.type: "
                  "sentencepiece",
                  to_string(t.piece_ids)));
}

void check_data(const SiftConfig& config) {
  check_piece_ids(config.tokenizer);
  if (!config.pretrain.files.empty()) return;  // pretraining reads pretrain.files instead
  if (config.data.train.path.empty()) {
    throw Error("data.train.path: The training data must be given (a path, a glob or a list).");
  }
  for (Split split : {Split::train, Split::valid, Split::test}) {
    const FormatConfig f = resolved_format(config, split);
    const bool columns =
        f.format == FileFormat::tsv || f.format == FileFormat::csv || f.format == FileFormat::jsonl;
    if (columns && (f.text.empty() || f.label.empty())) {
      throw Error(
          fmt::format("data.{}: The {} format needs 'text' and 'label' columns "
                      "(set data.text and data.label).",
                      to_string(split), to_string(f.format)));
    }
    if (f.label_mapping != LabelMapping::name && config.data.labels.empty()) {
      throw Error(
          fmt::format("data.{}.label_mapping: Index labels need the label names in "
                      "data.labels.",
                      to_string(split)));
    }
  }
}

// Tensors per parameter the optimizer keeps besides the weights and their gradients.
int optimizer_state(const OptimizerConfig& o) {
  switch (o.type) {
    case OptimizerType::sgd:
      return o.momentum > 0 ? 1 : 0;
    case OptimizerType::adagrad:
      return 1;
    case OptimizerType::rmsprop:
      return o.momentum > 0 ? 2 : 1;
    default:  // adam, adamw: two moments; adadelta: two running averages
      return 2;
  }
}

// Plain SGD on a model whose tables take sparse gradients: they are built sparse.
bool takes_sparse_gradients(const SiftConfig& config, const ModelTraits& model) {
  const OptimizerConfig& o = config.train.optimizer;
  return model.sparse_gradients && o.type == OptimizerType::sgd && o.momentum == 0.0 &&
         o.weight_decay == 0.0;
}

// run.shard: parameters: what it gathers layer by layer, and what reads every gradient or
// weight at once (each rank holds only its slice of the layers' gradients). train.clip_norm
// takes the norm from the slices (LayerShards::clip_gradients); train.max_norm bounds the
// output layer, which stays whole.
void check_parameter_shards(const SiftConfig& config, const ModelTraits& model) {
  if (config.run.shard != ShardStage::parameters) return;
  const TrainConfig& t = config.train;
  std::string why;
  if (model.parameter_shards == ParameterShards::none) {
    why = fmt::format(
        "the {} model has neither layers it gathers one at a time (transformer and bert do) "
        "nor a table it gathers by rows (fasttext does); use run.shard: gradients",
        model.name);
  } else if (config.model.layer_repeats > 1) {
    why =
        "model.layer_repeats applies each layer's gathered weights several times, and its "
        "gradients would be reduced once per application; use run.shard: gradients";
  } else if (!t.prune.structure.empty()) {
    why = "train.prune masks whole weights and gradients; use run.shard: gradients";
  } else if (t.loss_scaling == LossScaling::dynamic ||
             (t.loss_scaling == LossScaling::automatic && t.precision == Precision::fp16)) {
    why =
        "loss scaling (fp16) would have each rank skip steps on its own slice's overflow; "
        "train in bf16 or fp32, or use run.shard: gradients";
  }
  if (why.empty()) return;
  throw Error(fmt::format("run.shard: parameters: {}", why));
}

// run.shard slices the flat space of dense gradients; a sparse one is a batch's rows.
void check_shard(const SiftConfig& config, const ModelTraits& model) {
  check_parameter_shards(config, model);
  if (config.run.shard == ShardStage::none || !takes_sparse_gradients(config, model)) return;
  throw Error(fmt::format(
      "run.shard: {} cannot shard the {} model under plain SGD: its embedding tables take "
      "sparse gradients (a batch's rows), which have no optimizer state and no slice to "
      "keep; use run.shard: none, or train.optimizer.type adam (or momentum) for dense "
      "gradients",
      to_string(config.run.shard), model.name));
}

std::string gib(double bytes) { return fmt::format("{:.3g} GiB", bytes / (1024.0 * 1024 * 1024)); }

// The model's parameters (what its options imply: a lower bound) with their gradients and
// optimizer state, against the memory left, before anything is allocated: model.buckets
// of 1e9-1e12 reached LibTorch's allocator with a message naming no key, and
// 9223372036854775807 overflowed.
void check_memory(const SiftConfig& config, const ModelTraits& model) {
  if (!model.parameters) return;
  const double parameters = model.parameters(config.model);
  const OptimizerConfig& o = config.train.optimizer;
  // Sparse gradients (plain SGD on a table that takes them) are a batch's rows, not a
  // second table: sift-lite trained 4M x 200 buckets (3.2 GB) under `ulimit -v 4000000`.
  const bool sparse = takes_sparse_gradients(config, model);
  const int tensors = (sparse ? 1 : 2) + optimizer_state(o);
  const double bytes = parameters * 4 * tensors;
  const MemoryLimit limit = available_memory();
  if (limit.bytes == 0 || bytes <= static_cast<double>(limit.bytes)) return;
  throw Error(fmt::format(
      "{}: the {} model needs about {} ({:.3g} parameters x 4 bytes x {}: weights{} and {}'s "
      "state), more than the {} available ({}); make them smaller",
      fmt::join(model.size_keys, ", "), model.name, gib(bytes), parameters, tensors,
      sparse ? "" : ", gradients", to_string(o.type), gib(static_cast<double>(limit.bytes)),
      limit.source));
}

// train.prune.*: each refusal names its key.
void check_prune(const SiftConfig& config, const ModelTraits& model) {
  const PruneConfig& p = config.train.prune;
  if (p.structure.empty()) {
    if (p.sparsity > 0) {
      throw Error(
          "train.prune.structure: train.prune.sparsity is set but nothing is pruned; list "
          "what to prune (unstructured, filters, heads, ffn, rows, hidden).");
    }
    return;
  }
  for (const PruneStructure s : p.structure) {
    if (std::find(model.prune.begin(), model.prune.end(), s) != model.prune.end()) continue;
    std::vector<std::string> names;
    for (const PruneStructure m : model.prune) names.push_back(to_string(m));
    throw Error(
        fmt::format("train.prune.structure: The {} model cannot prune {} (it can prune: {}).",
                    model.name, to_string(s), fmt::join(names, ", ")));
  }
  const bool unstructured = std::find(p.structure.begin(), p.structure.end(),
                                      PruneStructure::unstructured) != p.structure.end();
  if (unstructured != !p.params.empty()) {
    throw Error(unstructured ? "train.prune.params: Unstructured pruning needs the parameters to "
                               "prune, by name pattern (\"layers.*.weight\")."
                             : "train.prune.params: Parameter patterns apply to unstructured "
                               "pruning only; add unstructured to train.prune.structure.");
  }
  if (p.end_step <= p.start_step) {
    throw Error(fmt::format(
        "train.prune.end_step: The final sparsity is reached at end_step, which must come "
        "after train.prune.start_step ({} is not after {}).",
        p.end_step, p.start_step));
  }
  if (config.train.fast_path_threads > 1) {
    throw Error(
        "train.fast_path_threads: Pruned runs train through autograd, not the fast path "
        "these threads belong to; set it to 1.");
  }
}

// train.distill.*: the soft loss's settings mean nothing without a teacher; given alone
// they were ignored silently. A dumped config lists them all and is not refused.
void check_distill(const SiftConfig& config) {
  const DistillConfig& d = config.train.distill;
  const bool teacher = !d.teacher.empty();
  // A transfer set without a teacher has no labels at all: refused even in a dump.
  if (!teacher && (!d.unlabeled.empty() || d.augment.copies > 0)) {
    const char* key =
        !d.unlabeled.empty() ? "train.distill.unlabeled" : "train.distill.augment.copies";
    throw Error(
        fmt::format("{}: Unlabelled texts are scored by the teacher alone, and there is none; give "
                    "train.distill.teacher (a run folder or an exported .pt) or leave {} out.",
                    key, key));
  }
  if (gives_every_option(config)) return;
  for (const char* key : {"train.distill.temperature", "train.distill.alpha"}) {
    if (teacher || !is_set(config, key)) continue;
    throw Error(fmt::format(
        "{}: Set without train.distill.teacher, so nothing is distilled; give the teacher "
        "(a run folder or an exported .pt) or leave {} out.",
        key, key));
  }
  if (d.unlabeled.empty() && is_set(config, "train.distill.unlabeled_ratio")) {
    throw Error(
        "train.distill.unlabeled_ratio: Set without train.distill.unlabeled, so there is "
        "nothing to mix in; give the files of unlabelled texts or leave it out.");
  }
  for (const char* key : {"train.distill.augment.mask", "train.distill.augment.ngram"}) {
    if (d.augment.copies > 0 || !is_set(config, key)) continue;
    throw Error(
        fmt::format("{}: Set while train.distill.augment.copies is 0, so nothing is augmented; set "
                    "copies (augmented texts per labelled one) or leave {} out.",
                    key, key));
  }
  if (d.augment.copies > 0 && d.augment.mask == 0 && d.augment.ngram == 0) {
    throw Error(
        "train.distill.augment.copies: Both train.distill.augment.mask and .ngram are 0, so "
        "the augmented texts would be the training texts again; raise one of them.");
  }
}

// train.loss and train.neg: each refusal names its key.
void check_loss(const SiftConfig& config, const std::vector<ModelTraits>& models,
                const ModelTraits& model) {
  const TrainConfig& t = config.train;
  if (t.loss != Loss::ns && is_set(config, "train.neg") && !gives_every_option(config)) {
    throw Error(
        fmt::format("train.neg: Negatives are drawn by train.loss ns only (train.loss is {}).",
                    to_string(t.loss)));
  }
  if (t.loss == Loss::softmax) return;
  const std::string loss = to_string(t.loss);
  if (std::find(model.losses.begin(), model.losses.end(), t.loss) == model.losses.end()) {
    throw Error(
        fmt::format("train.loss: The {} model trains with softmax only, not {} (it works with {}).",
                    model.name, loss, models_with(models, [&](const ModelTraits& m) {
                      return std::find(m.losses.begin(), m.losses.end(), t.loss) != m.losses.end();
                    })));
  }
  if (config.data.multi_label && t.loss != Loss::ova) {
    throw Error(fmt::format(
        "train.loss: {} trains single-label data; multi-label data (data.multi_label) trains "
        "with softmax or ova (both a sigmoid per label).",
        loss));
  }
  const char* other = t.label_smoothing > 0        ? "train.label_smoothing"
                      : !t.class_weights.empty()   ? "train.class_weights"
                      : !t.distill.teacher.empty() ? "train.distill.teacher"
                                                   : nullptr;
  if (other != nullptr) {
    throw Error(fmt::format("train.loss: {} does not combine with {}; use train.loss softmax.",
                            loss, other));
  }
}

// A known trap, warned of once the checks pass: a model that learns with per-example SGD
// steps (its defaults sum the batch's loss: the fastText model) given a mean at an SGD
// rate of that size takes steps batch_size times smaller (TREC: 0.188 test accuracy with
// batch_size 32 and mean at lr 0.1, against 0.828 for fastText's defaults).
void warn_of_traps(const SiftConfig& config, const ModelTraits& model) {
  const TrainConfig& t = config.train;
  const auto sums = std::find(model.defaults.begin(), model.defaults.end(),
                              std::pair<std::string, std::string>("train.loss_reduction", "sum"));
  if (sums == model.defaults.end() || t.optimizer.type != OptimizerType::sgd ||
      t.loss_reduction != LossReduction::mean || t.batch_size < 8 || t.optimizer.lr > 1.0) {
    return;
  }
  std::fprintf(stderr,
               "sift: warning: train.loss_reduction: mean with SGD at lr %g divides each "
               "example's step by train.batch_size (%lld): the %s model then learns little; "
               "use train.loss_reduction: sum (its default) or a larger train.optimizer.lr\n",
               t.optimizer.lr, static_cast<long long>(t.batch_size), model.name.c_str());
}

}  // namespace

void validate(const SiftConfig& config, const std::vector<ModelTraits>& models) {
  const ModelTraits& model = model_of(config, models);
  check_model_options(config, model);
  check_precision(config, models, model);
  check_memory(config, model);
  check_folds(config.data);
  check_prune(config, model);
  check_distill(config);
  check_loss(config, models, model);
  check_shard(config, model);
  const std::string best = to_string(config.train.best_metric);
  if (metric_named(best).multi_label_only && !config.data.multi_label) {
    throw Error(
        fmt::format("train.best_metric: {} is a multi-label metric; set data.multi_label: true "
                    "or choose accuracy, macro_f1 or loss.",
                    best));
  }
  check_best_label(config.train);
  check_pretrain(config, model);
  check_data(config);
  if (config.train.fast_path_threads > 1 && config.train.eval_every > 0) {
    throw Error(fmt::format(
        "train.eval_every: Validation inside an epoch needs one training thread "
        "(train.fast_path_threads is {}); set train.eval_every: 0 to validate at epoch ends.",
        config.train.fast_path_threads));
  }
  if (config.tokenizer.type == TokenizerType::sentencepiece &&
      (!config.tokenizer.stopwords.empty() || config.tokenizer.drop_punctuation)) {
    throw Error(
        fmt::format("tokenizer.{}: Stop words and dropped punctuation apply to the word "
                    "tokenizer only, not to SentencePiece pieces.",
                    config.tokenizer.stopwords.empty() ? "drop_punctuation" : "stopwords"));
  }
  if (config.tokenizer.fasttext_compat && config.tokenizer.type == TokenizerType::sentencepiece) {
    throw Error(
        "tokenizer.fasttext_compat: fastText's reading of text applies to the word "
        "tokenizer only, not to SentencePiece pieces.");
  }
  const ModelConfig& m = config.model;
  if (m.maxn > 0 && m.minn > m.maxn) {
    throw Error(
        fmt::format("model.minn: character n-grams need model.minn <= model.maxn "
                    "(got {} and {})",
                    m.minn, m.maxn));
  }
  warn_of_traps(config, model);
}

}  // namespace sift
