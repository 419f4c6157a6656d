#include "framework/runtime/base/task.h"

#include <fmt/format.h>

#include <random>

#include "config/loader.h"
#include "config/run_paths.h"
#include "core/atomic_file.h"
#include "core/error.h"
#include "core/printable.h"
#include "datasets/paths.h"
#include "datasets/stopwords.h"
#include "datasets/tokenizer.h"
#include "datasets/word_vectors.h"
#include "framework/runtime/base/run_folder.h"
#include "framework/runtime/base/task_cache.h"

namespace sift {

std::optional<SplitFiles> split_files(const DataPlan& plan, Split split) {
  const auto& source = plan.source(split);
  if (!source) return std::nullopt;
  return SplitFiles{expand_paths(source->patterns, source->key), source->format, source->part};
}

std::optional<ExampleStream> open_split(const DataPlan& plan, Split split,
                                        const LabelSet& declared_labels) {
  auto source = split_files(plan, split);
  if (!source) return std::nullopt;
  const StreamOptions& o = plan.eval_stream;
  return ExampleStream(source->files, source->format, declared_labels.names(), source->part,
                       o.valid_split, o.seed, o.folds);
}

std::unique_ptr<ShardedStream> open_stream(const DataPlan& plan, Split split,
                                           const TextEncoder& encoder, const LabelSet& labels,
                                           bool training, int64_t rank, int64_t world_size,
                                           const TextEncoder* teacher, bool keep_text) {
  auto source = split_files(plan, split);
  if (!source) return nullptr;
  StreamOptions o = training ? plan.train_stream : plan.eval_stream;
  o.rank = rank;
  o.world_size = world_size;
  o.format = source->format;
  o.label_names = labels.names();
  o.part = source->part;
  o.keep_text = keep_text;
  return std::make_unique<ShardedStream>(source->files, o, encoder, labels, teacher);
}

std::unique_ptr<ShardedStream> open_transfer_stream(const TransferSource& transfer,
                                                    const TextEncoder& encoder,
                                                    const LabelSet& labels,
                                                    const TextEncoder& teacher, int64_t rank,
                                                    int64_t world_size) {
  StreamOptions o = transfer.stream;
  o.rank = rank;
  o.world_size = world_size;
  o.format = transfer.source.format;
  o.label_names = labels.names();
  o.part = transfer.source.part;
  return std::make_unique<ShardedStream>(
      expand_paths(transfer.source.patterns, transfer.source.key), o, encoder, labels, &teacher);
}

std::string empty_split_message(const std::string& split, const ShardedStream& stream) {
  std::vector<std::string> paths;
  for (const auto& s : stream.shards()) paths.push_back(s.path);
  return fmt::format("the {} data ({}) holds no record", split, fmt::join(paths, ", "));
}

TextEncoder make_encoder(const Task& task) {
  return TextEncoder(task.vocab, task.encoder, task.pieces, task.wordpiece);
}

uint64_t sample_training_text(const DataPlan& plan, uint64_t lines, const std::string& path) {
  auto train = open_split(plan, Split::train, LabelSet::from_option(plan.labels));
  if (!train) throw Error("data.train.path: no training data is configured");
  std::vector<std::string> sample;
  std::mt19937_64 rng(plan.eval_stream.seed);
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
void check_held_out_labels(const DataPlan& plan, const LabelSet& labels) {
  for (Split split : {Split::valid, Split::test}) {
    const auto& source = plan.source(split);
    if (!source || source->part != HashPart::all) continue;
    auto reader = open_split(plan, split, labels);
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

}  // namespace

std::string some_labels(const std::vector<std::string>& names) {
  constexpr size_t kShown = 8;
  if (names.size() <= kShown) return fmt::format("{}", fmt::join(names, ", "));
  return fmt::format("{}, ... {} in all", fmt::join(names.begin(), names.begin() + kShown, ", "),
                     names.size());
}

std::vector<std::string> training_labels(const DataPlan& plan, const std::string& until) {
  LabelSet labels = LabelSet::from_option(plan.labels);
  if (!labels.empty()) return labels.names();
  auto train = open_split(plan, Split::train, labels);
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

void check_best_label(const TrainConfig& train, const LabelSet& labels) {
  const std::string& label = train.best_label;
  if (train.best_metric != BestMetric::label_f1 || labels.id(label) >= 0) return;
  throw Error(fmt::format("train.best_label: '{}' is not a label of the training data ({})",
                          printable(label), printable(some_labels(labels.names()))));
}

namespace {

// The vocabulary pass: reads the training part once, counting words, labels and records.
Task count_task(const DataPlan& plan) {
  Task task;
  const bool pieces = plan.tokenizer == TokenizerType::sentencepiece;
  if (pieces) {
    if (plan.tokenizer_model.empty()) {
      throw Error(
          "tokenizer.model: The SentencePiece model file must be given (train one "
          "with `sift tokenizer train CONFIG`).");
    }
    task.pieces = SentencePieceModel::open(plan.tokenizer_model);
  }
  if (plan.tokenizer == TokenizerType::wordpiece) {
    if (plan.tokenizer_model.empty()) {
      throw Error("tokenizer.model: The WordPiece vocabulary (vocab.txt) must be given.");
    }
    task.wordpiece = open_wordpiece(plan.tokenizer_model, plan.encoder.tokenizer.lowercase);
  }
  task.labels = LabelSet::from_option(plan.labels);
  // Fine-tuning from a run folder (train.init_from), an imported fastText model among them:
  // its vocabulary and label order, so that every embedding row and output row keeps its
  // meaning (a vocabulary rebuilt from the new data would give the rows other words).
  const std::string& from = plan.vocabulary_from;
  const bool from_run = !from.empty();
  if (from_run && task.labels.empty()) task.labels = LabelSet::load(run_file(from, kLabelsFile));
  const bool collect_labels = task.labels.empty();
  task.encoder = plan.encoder;
  auto train = open_split(plan, Split::train, task.labels);
  if (!train) throw Error("data.train.path: no training data is configured");

  WordTokenizer tokenizer(task.encoder.tokenizer);
  VocabBuilder builder(static_cast<size_t>(plan.vocab.count_limit));
  std::vector<std::string> tokens;
  std::unordered_map<std::string, uint64_t> counts;
  Example example;
  while (train->next(example)) {
    ++task.train_records;
    if (example.text.find_first_not_of(" \t\r\n\v\f") == std::string::npos) {
      ++task.train_empty_texts;
    }
    check_label_count(example.labels, plan.multi_label,
                      [&] { return fmt::format("{}:{}", train->current_file(), example.line); });
    if (!pieces && !task.wordpiece && !from_run) {
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
  task.masked_lm = plan.masked_lm.has_value();
  if (task.labels.size() < 2 && !task.masked_lm) {
    throw Error(fmt::format("the training data has {} label(s); a classifier needs at least 2",
                            task.labels.size()));
  }
  check_held_out_labels(plan, task.labels);
  if (from_run) {
    task.vocab = std::make_shared<Vocab>(Vocab::load(run_file(from, kVocabFile)));
  } else {
    task.vocab = std::make_shared<Vocab>(builder.build(plan.vocab.min_count, plan.vocab.max_size));
  }
  return task;
}

// fastText's -pretrainedVectors: every word of the file that the counted vocabulary lacks
// joins it, in the file's order, with no training count. A run that starts from another
// run's vocabulary (train.init_from) keeps it as it is.
void join_pretrained_words(const DataPlan& plan, Task& task) {
  if (plan.vocab.pretrained_words.empty() || !plan.vocabulary_from.empty() || !task.vocab) return;
  auto vocab = std::make_shared<Vocab>(*task.vocab);
  WordVectorFile file(plan.vocab.pretrained_words, plan.vocab.pretrained_dim);
  std::string_view word;
  std::vector<std::string_view> values;
  while (file.next(word, values)) {
    if (!vocab->contains(word)) vocab->add(std::string(word), 0);
  }
  task.vocab = std::move(vocab);
}

}  // namespace

Task build_task(const DataPlan& plan) {
  const std::string identity = task_identity(plan);
  if (std::optional<Task> cached = load_cached_task(plan, identity)) {
    // The training files are the ones counted; the held-out files are read as always.
    check_held_out_labels(plan, cached->labels);
    join_pretrained_words(plan, *cached);
    return std::move(*cached);
  }
  Task task = count_task(plan);
  if (store_cached_task(task, identity)) task.vocabulary_cache = "written";
  join_pretrained_words(plan, task);
  return task;
}

void write_run_text(const std::string& dir, const SiftConfig& given, const Task& task,
                    const DataPlan& plan) {
  write_file_atomically(run_file(dir, kConfigFile),
                        dump_config(with_paths_relative_to(given, dir)));
  task.labels.save(run_file(dir, kLabelsFile));
  task.vocab->save(run_file(dir, kVocabFile));
  if (task.pieces || task.wordpiece) {
    copy_file_atomically(plan.tokenizer_model, run_file(dir, kTokenizerModelFile));
  }
  const auto& stopwords = task.encoder.tokenizer.stopwords;
  if (!stopwords.empty()) save_stopwords(run_file(dir, kStopwordsFile), stopwords);
}

}  // namespace sift
