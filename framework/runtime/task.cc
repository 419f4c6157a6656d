#include "framework/runtime/task.h"

#include <fmt/format.h>

#include <filesystem>
#include <random>

#include "config/loader.h"
#include "core/atomic_file.h"
#include "core/error.h"
#include "core/printable.h"
#include "datasets/paths.h"
#include "datasets/stopwords.h"
#include "datasets/tokenizer.h"
#include "framework/runtime/run_folder.h"
#include "models/model.h"

namespace sift {

Folds folds_of(const SiftConfig& config) { return {config.data.folds, config.data.fold}; }

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
  return t;
}

std::optional<SplitFiles> split_files(const SiftConfig& config, Split split) {
  const bool hashed_valid = config.data.valid.path.empty() && config.data.valid_split > 0.0;
  const bool folds = config.data.folds > 0;
  if (split == Split::test && folds &&
      config.data.test.path.empty()) {  // cross-validation: the held-out fold of the training files
    return SplitFiles{expand_paths(config.data.train.path, "data.train.path"),
                      text_format(config, Split::train), HashPart::held_out};
  }
  if (split == Split::valid && config.data.valid.path.empty()) {
    if (!hashed_valid || config.data.train.path.empty()) return std::nullopt;
    return SplitFiles{expand_paths(config.data.train.path, "data.train.path"),
                      text_format(config, Split::train), HashPart::valid};
  }
  const auto& paths = split_config(config.data, split).path;
  if (paths.empty()) return std::nullopt;
  return SplitFiles{
      expand_paths(paths, "data." + to_string(split) + ".path"), text_format(config, split),
      split == Split::train && (hashed_valid || folds) ? HashPart::train : HashPart::all};
}

std::optional<ExampleStream> open_split(const SiftConfig& config, Split split,
                                        const LabelSet& declared_labels) {
  auto source = split_files(config, split);
  if (!source) return std::nullopt;
  return ExampleStream(source->files, source->format, declared_labels.names(), source->part,
                       config.data.valid_split, static_cast<uint64_t>(config.run.seed),
                       folds_of(config));
}

std::unique_ptr<ShardedStream> open_stream(const SiftConfig& config, const std::string& split,
                                           const TextEncoder& encoder, const LabelSet& labels,
                                           bool training, int64_t rank, int64_t world_size,
                                           const TextEncoder* teacher) {
  auto source = split_files(config, from_string<Split>(split, "split"));
  if (!source) return nullptr;
  StreamOptions o;
  o.rank = rank;
  o.world_size = world_size;
  o.format = source->format;
  o.label_names = labels.names();
  o.part = source->part;
  o.valid_split = config.data.valid_split;
  o.folds = folds_of(config);
  o.seed = static_cast<uint64_t>(config.run.seed);
  o.workers = config.data.workers;
  o.prefetch = config.data.prefetch;
  o.batch_size = training ? config.train.batch_size : 256;
  o.multi_label = config.data.multi_label;
  if (training) {
    o.shuffle_buffer = config.data.shuffle_buffer;
    o.shuffle_shards = config.data.shuffle_shards;
    o.max_tokens = config.data.max_tokens;
    o.bucket_window = config.data.bucket_window;
  }
  return std::make_unique<ShardedStream>(source->files, o, encoder, labels, teacher);
}

std::string empty_split_message(const std::string& split, const ShardedStream& stream) {
  std::vector<std::string> paths;
  for (const auto& s : stream.shards()) paths.push_back(s.path);
  return fmt::format("the {} data ({}) holds no record", split, fmt::join(paths, ", "));
}

TextEncoderOptions encoder_options(const SiftConfig& config) {
  TextEncoderOptions e;
  e.tokenizer.lowercase = config.tokenizer.lowercase;
  e.tokenizer.split_punctuation = config.tokenizer.split_punctuation;
  e.tokenizer.drop_punctuation = config.tokenizer.drop_punctuation;
  e.tokenizer.nfkc = config.tokenizer.normalize == "nfkc";
  e.tokenizer.stopwords = resolve_stopwords(config.tokenizer.stopwords);
  e.kind = find_model(config.model.type).input;
  e.ngrams = static_cast<int>(config.model.ngrams);
  e.buckets = config.model.ngrams > 1 ? config.model.buckets : 0;
  e.max_length = config.data.max_length;
  e.fasttext_compat = config.tokenizer.fasttext_compat;
  return e;
}

TextEncoder make_encoder(const Task& task) {
  return TextEncoder(task.vocab, task.encoder, task.pieces);
}

uint64_t sample_training_text(const SiftConfig& config, uint64_t lines, const std::string& path) {
  auto train = open_split(config, Split::train, LabelSet::from_option(config.data.labels));
  if (!train) throw Error("data.train.path: no training data is configured");
  std::vector<std::string> sample;
  std::mt19937_64 rng(static_cast<uint64_t>(config.run.seed));
  uint64_t seen = 0;
  Example example;
  while (train->next(example)) {
    ++seen;
    if (sample.size() < lines) {
      sample.push_back(example.text);
      continue;
    }
    // Algorithm R: record `seen` replaces a kept one with probability lines / seen.
    const uint64_t slot = std::uniform_int_distribution<uint64_t>(0, seen - 1)(rng);
    if (slot < lines) sample[slot] = example.text;
  }
  if (sample.empty()) throw Error("the training data holds no record to sample");
  std::string text;
  for (auto& s : sample) {
    for (char& c : s) {
      if (c == '\n' || c == '\r') c = ' ';
    }
    text += s;
    text += '\n';
  }
  write_file_atomically(path, text);
  return sample.size();
}

namespace {

// The labels of the valid and test files against the training labels, before training
// starts: a test label unseen in training used to fail only after the whole run. One
// record at a time, so memory stays bounded whatever the files' size; splits cut from the
// training files (valid_split, folds) hold training labels only and are not read again.
void check_held_out_labels(const SiftConfig& config, const LabelSet& labels) {
  for (Split split : {Split::valid, Split::test}) {
    if (split_config(config.data, split).path.empty()) continue;
    auto reader = open_split(config, split, labels);
    Example example;
    while (reader && reader->next(example)) {
      for (const auto& label : example.labels) {
        if (labels.id(label) >= 0) continue;
        const std::string known =
            labels.size() <= 20 ? fmt::format(" ({})", fmt::join(labels.names(), ", ")) : "";
        throw Error(fmt::format(
            "{}:{}: label '{}' of data.{}.path never occurs in the training data{}; fix the "
            "file, or list every label in data.labels",
            reader->current_file(), example.line, printable(label), to_string(split),
            printable(known)));
      }
    }
  }
}

// train.best_label must be one of the labels (a misspelt one would follow an F1 of 0).
void check_best_label(const SiftConfig& config, const LabelSet& labels) {
  const std::string& label = config.train.best_label;
  if (config.train.best_metric != BestMetric::label_f1 || labels.id(label) >= 0) return;
  throw Error(fmt::format("train.best_label: '{}' is not a label of the training data ({})",
                          printable(label), printable(some_labels(labels.names()))));
}

}  // namespace

std::string some_labels(const std::vector<std::string>& names) {
  constexpr size_t kShown = 8;
  if (names.size() <= kShown) return fmt::format("{}", fmt::join(names, ", "));
  return fmt::format("{}, ... {} in all",
                     fmt::join(names.begin(), names.begin() + kShown, ", "), names.size());
}

std::vector<std::string> training_labels(const SiftConfig& config, const std::string& until) {
  LabelSet labels = LabelSet::from_option(config.data.labels);
  if (!labels.empty()) return labels.names();
  auto train = open_split(config, Split::train, labels);
  if (!train) throw Error("data.train.path: no training data is configured");
  Example example;
  while (train->next(example)) {
    for (const auto& label : example.labels) {
      labels.add(label);
      if (label == until) return labels.names();
    }
  }
  labels.sort();
  return labels.names();
}

Task build_task(const SiftConfig& config) {
  Task task;
  const bool pieces = config.tokenizer.type == TokenizerType::sentencepiece;
  if (pieces) {
    if (config.tokenizer.model.empty()) {
      throw Error(
          "tokenizer.model: The SentencePiece model file must be given (train one "
          "with `sift tokenizer train CONFIG`).");
    }
    task.pieces = SentencePieceModel::open(config.tokenizer.model);
  }
  task.labels = LabelSet::from_option(config.data.labels);
  // Fine-tuning from a run folder (train.init_from), an imported fastText model among them:
  // its vocabulary and label order, so that every embedding row and output row keeps its
  // meaning (a vocabulary rebuilt from the new data would give the rows other words).
  const std::string& from = config.train.init_from;
  const bool from_run = !from.empty() && std::filesystem::is_directory(from) && !pieces;
  if (from_run && task.labels.empty()) task.labels = LabelSet::load(run_file(from, kLabelsFile));
  const bool collect_labels = task.labels.empty();
  task.encoder = encoder_options(config);
  auto train = open_split(config, Split::train, task.labels);
  if (!train) throw Error("data.train.path: no training data is configured");

  WordTokenizer tokenizer(task.encoder.tokenizer);
  VocabBuilder builder(static_cast<size_t>(config.tokenizer.count_limit));
  std::vector<std::string> tokens;
  std::unordered_map<std::string, uint64_t> counts;
  Example example;
  while (train->next(example)) {
    ++task.train_records;
    if (example.text.find_first_not_of(" \t\r\n\v\f") == std::string::npos) {
      ++task.train_empty_texts;
    }
    check_label_count(example.labels, config.data.multi_label,
                      [&] { return fmt::format("{}:{}", train->current_file(), example.line); });
    if (!pieces && !from_run) {
      if (task.encoder.fasttext_compat) {
        split_fasttext(example.text, tokens);
        tokens.emplace_back(kFastTextEos);
      } else {
        tokenizer.tokenize(example.text, tokens);
      }
      builder.add(tokens);
    }
    for (const auto& label : example.labels) {
      ++counts[label];
      if (collect_labels) {
        task.labels.add(label);
      } else if (task.labels.id(label) < 0) {
        throw Error(fmt::format("{}:{}: label '{}' is not in data.labels ({})",
                                train->current_file(), example.line, label,
                                fmt::join(task.labels.names(), ", ")));
      }
    }
  }
  task.train_skipped = train->skipped();
  if (task.train_records == 0) {
    throw Error(
        fmt::format("the training data ({}) holds no record", fmt::join(train->files(), ", ")));
  }
  if (collect_labels) task.labels.sort();
  task.label_counts.assign(static_cast<size_t>(task.labels.size()), 0);
  for (const auto& [name, count] : counts) task.label_counts[task.labels.id(name)] += count;
  if (task.labels.size() < 2) {
    throw Error(fmt::format("the training data has {} label(s); a classifier needs at least 2",
                            task.labels.size()));
  }
  check_held_out_labels(config, task.labels);
  check_best_label(config, task.labels);
  if (from_run) {
    task.vocab = std::make_shared<Vocab>(Vocab::load(run_file(from, kVocabFile)));
  } else {
    task.vocab =
        std::make_shared<Vocab>(builder.build(static_cast<uint64_t>(config.tokenizer.min_count),
                                              static_cast<uint64_t>(config.tokenizer.max_size)));
  }
  return task;
}

}  // namespace sift
