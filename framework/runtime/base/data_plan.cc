#include "framework/runtime/base/data_plan.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "config/loader.h"
#include "config/options.h"
#include "datasets/encoder_config.h"
#include "models/base/traits.h"

namespace sift {
namespace {

TextFormat text_format(const SiftConfig& config, Split split) {
  const FormatConfig f = resolved_format(config, split);
  TextFormat t;
  t.format = f.format;
  t.text_columns = f.text;
  t.label_column = f.label;
  t.header = f.header;
  t.encoding = f.encoding;
  t.unescape = f.unescape;
  t.label_mapping = f.label_mapping;
  t.max_line_bytes = static_cast<uint64_t>(config.data.max_line_bytes);
  t.on_bad_line = config.data.on_bad_line;
  t.truncate_long_lines = config.data.truncate_long_lines;
  t.label_separator = config.data.label_separator;
  t.label_prefix = config.data.label_prefix;
  return t;
}

SplitSource source_of(const SiftConfig& config, Split files, HashPart part) {
  return {split_config(config.data, files).path, "data." + to_string(files) + ".path",
          text_format(config, files), part};
}

// Without data.valid.path, validation is the hashed share of the training files; with
// data.folds and no data.test.path, the test split is the held-out fold of them.
std::optional<SplitSource> split_source(const SiftConfig& config, Split split) {
  const DataConfig& d = config.data;
  const bool hashed_valid = d.valid.path.empty() && d.valid_split > 0.0;
  const bool folds = d.folds > 0;
  if (split == Split::test && folds && d.test.path.empty()) {
    return source_of(config, Split::train, HashPart::held_out);
  }
  if (split == Split::valid && d.valid.path.empty()) {
    if (!hashed_valid || d.train.path.empty()) return std::nullopt;
    return source_of(config, Split::train, HashPart::valid);
  }
  if (split_config(d, split).path.empty()) return std::nullopt;
  const bool carved = split == Split::train && (hashed_valid || folds);
  return source_of(config, split, carved ? HashPart::train : HashPart::all);
}

StreamOptions stream_options(const SiftConfig& config, bool training) {
  const DataConfig& d = config.data;
  StreamOptions o;
  o.valid_split = d.valid_split;
  o.folds = {d.folds, d.fold};
  o.seed = static_cast<uint64_t>(config.run.seed);
  o.workers = d.workers;
  o.prefetch = d.prefetch;
  o.batch_size = training ? config.train.batch_size : 256;
  o.multi_label = d.multi_label;
  if (training) {
    o.shuffle_buffer = d.shuffle_buffer;
    o.shuffle_shards = d.shuffle_shards;
    o.max_tokens = d.max_tokens;
    o.bucket_window = d.bucket_window;
  }
  return o;
}

// Files of texts without labels: the training data's encoding, line limit and bad-line
// policy; the rest is one text per line (a plain format: no csv quotes spanning lines, no
// header, no escapes).
TextFormat text_only_format(const SiftConfig& config) {
  const TextFormat data = text_format(config, Split::train);
  TextFormat t;
  t.text_only = true;
  t.encoding = data.encoding;
  t.max_line_bytes = data.max_line_bytes;
  t.on_bad_line = data.on_bad_line;
  t.truncate_long_lines = data.truncate_long_lines;
  return t;
}

// pretrain.*: the training split is pretrain.files, validation pretrain.valid, no test
// split; records carry no label.
void resolve_pretraining(const SiftConfig& config, DataPlan& p) {
  const PretrainConfig& c = config.pretrain;
  p.train = SplitSource{c.files, "pretrain.files", text_only_format(config)};
  p.valid = std::nullopt;
  if (!c.valid.empty()) p.valid = SplitSource{c.valid, "pretrain.valid", text_only_format(config)};
  p.test = std::nullopt;
  p.train_stream.unlabeled = p.eval_stream.unlabeled = true;
  p.train_stream.max_tokens = 0;  // batches of train.batch_size texts, then packed
  MaskedLmPlan m;
  m.masking.rate = c.mask_rate;
  m.masking.whole_word = c.whole_word;
  m.sequence_tokens = c.max_tokens;
  m.unigram_lines = c.unigram_lines;
  p.masked_lm = m;
}

// Rows per labelled batch: round(share x batch_size), at least 1.
int64_t rows_per_batch(double share, int64_t batch_size) {
  return std::max<int64_t>(1, std::llround(share * static_cast<double>(batch_size)));
}

// train.distill.unlabeled and train.distill.augment: the transfer set's streams, shuffled
// as the training data, each in an order of its own (order_salt), never multi-label (the
// teacher's soft loss reads no label).
std::vector<TransferSource> transfer_sources(const SiftConfig& config,
                                             const std::optional<SplitSource>& train,
                                             const StreamOptions& training) {
  const DistillConfig& d = config.train.distill;
  std::vector<TransferSource> out;
  if (d.teacher.empty()) return out;
  StreamOptions base = training;
  base.unlabeled = true;
  base.multi_label = false;
  base.max_tokens = 0;  // the labelled batch alone is cut by size
  if (!d.unlabeled.empty()) {
    TransferSource t;
    t.name = "unlabeled";
    t.source.patterns = d.unlabeled;
    t.source.key = "train.distill.unlabeled";
    t.source.format = text_only_format(config);
    t.stream = base;
    t.stream.order_salt = 0x756E6C6162656C64ULL;  // "unlabeld"
    t.stream.batch_size = rows_per_batch(d.unlabeled_ratio, config.train.batch_size);
    out.push_back(std::move(t));
  }
  if (d.augment.copies > 0 && train) {
    TransferSource t;
    t.name = "augment";
    t.source = *train;  // the training part only: validation texts stay unseen
    t.stream = base;
    t.stream.augment = {d.augment.mask, d.augment.ngram};
    t.stream.order_salt = 0x6175676D656E7421ULL;  // "augment!"
    t.stream.batch_size = rows_per_batch(d.augment.copies, config.train.batch_size);
    out.push_back(std::move(t));
  }
  return out;
}

// The options the vocabulary pass's result may depend on (task_cache.h): listed from the
// option table by prefix, so that a new data.* or tokenizer.* option is part of the key
// without anyone remembering to add it.
std::string options_identity(const SiftConfig& config) {
  std::string out;
  for (const Option& o : all_options()) {
    // pretrain.*: a pretraining run counts its unlabelled files, not data.*'s.
    const bool counted = o.name.rfind("data.", 0) == 0 || o.name.rfind("tokenizer.", 0) == 0 ||
                         o.name.rfind("pretrain.", 0) == 0 || o.name == "model.type" ||
                         o.name == "run.seed";
    if (counted) out += o.name + "=" + emitted(o, config) + "\n";
  }
  return out;
}

}  // namespace

const std::optional<SplitSource>& DataPlan::source(Split split) const {
  return split == Split::train ? train : split == Split::valid ? valid : test;
}

DataPlan resolve_data(const SiftConfig& config, InputKind input) {
  DataPlan p;
  p.train = split_source(config, Split::train);
  p.valid = split_source(config, Split::valid);
  p.test = split_source(config, Split::test);
  p.train_stream = stream_options(config, true);
  p.eval_stream = stream_options(config, false);
  p.labels = config.data.labels;
  p.multi_label = config.data.multi_label;
  p.encoder = encoder_options(config, input);
  p.tokenizer = config.tokenizer.type;
  p.tokenizer_model = config.tokenizer.model;
  p.vocab.count_limit = static_cast<uint64_t>(config.tokenizer.count_limit);
  p.vocab.min_count = static_cast<uint64_t>(config.tokenizer.min_count);
  p.vocab.max_size = static_cast<uint64_t>(config.tokenizer.max_size);
  if (!config.model.pretrained.empty() && p.tokenizer == TokenizerType::word &&
      traits_of(config.model.type).pretrained_words_join_vocabulary) {
    p.vocab.pretrained_words = config.model.pretrained;
    p.vocab.pretrained_dim = config.model.dim;
  }
  const std::string& from = config.train.init_from;
  // Subword runs keep their tokenizer's own ids; a word run's vocabulary and labels carry over.
  const bool pieces = p.tokenizer != TokenizerType::word;
  if (!from.empty() && !pieces && std::filesystem::is_directory(from)) p.vocabulary_from = from;
  p.transfer = transfer_sources(config, p.train, p.train_stream);
  if (!config.pretrain.files.empty()) resolve_pretraining(config, p);
  p.options_identity = options_identity(config);
  return p;
}

DataPlan resolve_data(const SiftConfig& config) {
  return resolve_data(config, traits_of(config.model.type).input);
}

}  // namespace sift
