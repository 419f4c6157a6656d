#include "config/options.h"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>

#include "config/enums.h"
#include "config/flow_text.h"
#include "config/option_types.h"
#include "core/nearest_name.h"
#include "core/printable.h"

namespace sift {
namespace {

class Table {
 public:
  template <class T, class Get>
  void add(std::string name, Get get, std::string help,
           std::function<std::string(const T&)> check = {}) {
    Option& o = new_option(std::move(name), option_types::type_name<T>(), std::move(help));
    o.parse = [get](SiftConfig& c, const YAML::Node& n) { return option_types::read(n, get(c)); };
    o.emit = [get](const SiftConfig& c) {
      return option_types::write(get(const_cast<SiftConfig&>(c)));
    };
    if (check) {
      o.check = [get, check](const SiftConfig& c) {
        return check(get(const_cast<SiftConfig&>(c)));
      };
    }
  }

  // A string field with a closed set of spellings that the code keeps as text.
  template <class Get>
  void add_choice(std::string name, Get get, std::vector<std::string> choices, std::string help) {
    add<std::string>(std::move(name), get, std::move(help),
                     [choices](const std::string& v) -> std::string {
                       if (std::find(choices.begin(), choices.end(), v) != choices.end()) return "";
                       return not_a_choice(v, choices);
                     });
    options_.back().type = "enum";
    options_.back().choices = std::move(choices);
  }

  // An enum field: parsed, written and documented from the enum's own string table.
  template <class E, class Get>
  void add_enum(std::string name, Get get, std::string help) {
    Option& o = new_option(std::move(name), "enum", std::move(help));
    o.choices = enum_names<E>();
    o.parse = [get](SiftConfig& c, const YAML::Node& n) -> std::string {
      const std::string expected = fmt::format("one of {}", fmt::join(enum_names<E>(), ", "));
      std::string text;
      if (!option_types::read(n, text).empty()) return expected;
      E& field = get(c);
      return try_from_string(text, field) ? std::string() : expected;
    };
    o.emit = [get](const SiftConfig& c) {
      return option_types::write(to_string<E>(get(const_cast<SiftConfig&>(c))));
    };
  }

  // A list of an enum's values, parsed and written through its string table.
  template <class E, class Get>
  void add_enum_list(std::string name, Get get, std::string help) {
    Option& o = new_option(std::move(name), "list", std::move(help));
    o.parse = [get](SiftConfig& c, const YAML::Node& n) -> std::string {
      const std::string expected =
          fmt::format("a list of values from {}", fmt::join(enum_names<E>(), ", "));
      std::vector<std::string> texts;
      if (!option_types::read(n, texts).empty()) return expected;
      std::vector<E>& field = get(c);
      field.clear();
      for (const auto& text : texts) {
        E value{};
        if (!try_from_string(text, value)) return expected;
        field.push_back(value);
      }
      return "";
    };
    o.emit = [get](const SiftConfig& c) {
      std::vector<std::string> texts;
      for (const E value : get(const_cast<SiftConfig&>(c))) texts.push_back(to_string<E>(value));
      return option_types::write(texts);
    };
  }

  // The default search space of the option declared last.
  void tunable(SearchSpace space) { options_.back().space = std::move(space); }

  std::vector<Option> take() { return std::move(options_); }

 private:
  // A new option, for the caller to give its parse, emit and check.
  Option& new_option(std::string name, std::string type, std::string help) {
    Option& o = options_.emplace_back();
    o.name = std::move(name);
    o.type = std::move(type);
    o.help = std::move(help);
    return o;
  }

  std::vector<Option> options_;
};

// Checks, each a full sentence naming the bound.
std::function<std::string(const int64_t&)> at_least(int64_t lo) {
  return [lo](const int64_t& v) {
    return v >= lo ? std::string() : fmt::format("The value must be >= {} (got {}).", lo, v);
  };
}
std::function<std::string(const int64_t&)> between(int64_t lo, int64_t hi, const char* why) {
  return [lo, hi, why](const int64_t& v) {
    return v >= lo && v <= hi
               ? std::string()
               : fmt::format("The value must be in [{}, {}] (got {}): {}.", lo, hi, v, why);
  };
}
// run.name: one folder inside run.dir. "../x", "/tmp/x" or ".." wrote (and deleted) files
// outside run.dir (issue #19); empty means a generated name.
std::string single_path_component(const std::string& v) {
  if (v == "." || v == "..") return fmt::format("'{}' is not a folder name inside run.dir.", v);
  if (v.find('/') != std::string::npos) {
    return "The run name must be one folder name inside run.dir, without '/'.";
  }
  if (has_control_byte(v)) return "The run name must not hold control characters.";
  return "";
}

std::function<std::string(const double&)> positive_number() {
  return [](const double& v) {
    return v > 0 ? std::string() : fmt::format("The value must be > 0 (got {}).", v);
  };
}
// `ends`: whether lo and hi are in the range ('[', ']') or not ('(', ')').
std::function<std::string(const double&)> in_range(double lo, double hi, const char* ends = "[]") {
  return [lo, hi, ends](const double& v) {
    const bool in = (ends[0] == '[' ? v >= lo : v > lo) && (ends[1] == ']' ? v <= hi : v < hi);
    return in ? std::string()
              : fmt::format("The value must be in {}{}, {}{} (got {}).", ends[0], lo, hi, ends[1],
                            v);
  };
}

std::function<std::string(const double&)> between_0_and_1() {
  return [](const double& v) {
    return v > 0.0 && v < 1.0
               ? std::string()
               : fmt::format("The value must be between 0 and 1, exclusive (got {}).", v);
  };
}

#define SIFT_FIELD(path) \
  [](SiftConfig & c) -> auto& { return c.path; }

// The layout options exist once per split and once as the shared default.
template <class Get>
void add_format_options(Table& t, const std::string& prefix, Get get, const std::string& scope) {
  auto field = [get](auto member) {
    return [ get, member ](SiftConfig & c) -> auto& { return get(c).*member; };
  };
  t.add_enum<FileFormat>(prefix + ".format", field(&FormatConfig::format),
                         "File format " + scope +
                             ": fasttext (__label__ tokens), tsv, csv (quoted fields), "
                             "label_first (\"label text\"), jsonl.");
  t.add<std::vector<std::string>>(prefix + ".text", field(&FormatConfig::text),
                                  "Text columns " + scope +
                                      " (tsv/csv: header names or 0-based indices; jsonl: "
                                      "field names); several are joined with a space.");
  t.add<std::string>(prefix + ".label", field(&FormatConfig::label),
                     "Label column " + scope + " (name or 0-based index; jsonl: field name).");
  t.add<bool>(prefix + ".header", field(&FormatConfig::header),
              "Whether the first line of each file is a header " + scope + ".");
  t.add_enum<TextEncoding>(
      prefix + ".encoding", field(&FormatConfig::encoding),
      "Text encoding " + scope + "; invalid UTF-8 bytes are replaced by U+FFFD.");
  t.add<bool>(prefix + ".unescape", field(&FormatConfig::unescape),
              "Turn \\n and \\t escapes in the text into spaces and \\\\ into \\ " + scope + ".");
  t.add_enum<LabelMapping>(prefix + ".label_mapping", field(&FormatConfig::label_mapping),
                           "How label values map to names " + scope +
                               ": as written, or as a 0- or 1-based index into data.labels.");
}

std::vector<Option> declare() {
  Table t;
  t.add<std::string>("run.dir", SIFT_FIELD(run.dir), "Folder that holds run folders.");
  t.add<std::string>("run.name", SIFT_FIELD(run.name),
                     "Run folder name inside run.dir (one name, no '/'); empty: the config file "
                     "name plus a timestamp.",
                     single_path_component);
  t.add<bool>("run.overwrite", SIFT_FIELD(run.overwrite),
              "Train into a run folder that is not empty by replacing it (atomically) "
              "instead of refusing; the same as `sift train --overwrite`. A folder that holds "
              "files Sift did not write is still refused, naming them, unless "
              "run.overwrite_foreign is set too.");
  t.add<bool>("run.overwrite_foreign", SIFT_FIELD(run.overwrite_foreign),
              "With run.overwrite: replace the folder even when it holds files Sift did not "
              "write (they are deleted with it, and listed); the same as `sift train "
              "--overwrite --overwrite`.");
  t.add<int64_t>("run.seed", SIFT_FIELD(run.seed),
                 "Seed for initialisation, shuffling and the validation split.", at_least(0));
  t.add<int64_t>("run.threads", SIFT_FIELD(run.threads),
                 "Compute threads (LibTorch's and OpenBLAS's); 0 uses all cores. Given as 0 on the "
                 "fastText model's fast path, the cores are split between trainers and readers "
                 "(train.fast_path_threads, data.workers), the threads in all the cores.",
                 at_least(0));
  t.add_choice("run.device", SIFT_FIELD(run.device), {"cpu", "cuda"}, "Device to train on.");
  t.add<double>("run.dist_timeout_seconds", SIFT_FIELD(run.dist_timeout_seconds),
                "Distributed training: how long a rank waits for the others (rendezvous, "
                "each collective) before it stops with an error.",
                in_range(0.5, 1e6));
  t.add_choice("run.dist_backend", SIFT_FIELD(run.dist_backend), {"auto", "gloo", "nccl"},
               "Distributed training: c10d backend; auto is nccl on CUDA when LibTorch has it, "
               "else gloo.");
  t.add_enum<ShardStage>(
      "run.shard", SIFT_FIELD(run.shard),
      "Distributed training: what each rank keeps only its 1/N slice of (ZeRO stages 1 "
      "to 3; docs/distributed.md): none: everything on every rank (data parallelism); "
      "optimizer: the optimizer state (each rank steps its slice of the parameters, then "
      "they are all-gathered); gradients: the optimizer state and, after each step's "
      "reduction, the gradients; parameters (transformer, bert): also each layer's "
      "weights, gathered before the layer runs and freed after (every layer is "
      "recomputed in backward); parameters (fasttext): also a block of its table's rows, "
      "each batch's rows gathered from the ranks that keep them. The weights equal "
      "none's (docs/distributed.md: where within a stated bound). Needs a distributed "
      "run (sift launch --nproc N).");

  add_format_options(t, "data", SIFT_FIELD(data), "(default for every split)");
  for (Split split : {Split::train, Split::valid, Split::test}) {
    const std::string prefix = "data." + to_string(split);
    auto get = [split](SiftConfig& c) -> SplitConfig& { return split_config(c.data, split); };
    t.add<std::vector<std::string>>(
        prefix + ".path", [get](SiftConfig & c) -> auto& { return get(c).path; },
        "Files of the " + to_string(split) + " split: paths, globs, folders or @list files.");
    add_format_options(t, prefix, get, "of the " + to_string(split) + " split");
  }
  t.add<std::vector<std::string>>("data.labels", SIFT_FIELD(data.labels),
                                  "Label names in order, or a file with one name per line; "
                                  "empty: collected from the training data.");
  t.add<bool>("data.multi_label", SIFT_FIELD(data.multi_label),
              "Records may carry several labels (several __label__ tokens, a JSON array, or "
              "a list split by data.label_separator): one sigmoid per label with binary "
              "cross-entropy, labels predicted above train.threshold.");
  t.add<std::string>("data.label_separator", SIFT_FIELD(data.label_separator),
                     "Splits the label field of tsv, csv and label_first records into a list "
                     "of labels (e.g. \",\" or \"|\"); empty: the field is one label.");
  t.add<std::string>("data.label_prefix", SIFT_FIELD(data.label_prefix),
                     "The prefix that marks a label token in the fasttext format (fastText's "
                     "-label); predict ignores such tokens in its input and writes it before "
                     "each label in --format fasttext.",
                     [](const std::string& v) -> std::string {
                       if (v.empty()) return "a label prefix must not be empty";
                       if (v.find_first_of(" \t\r\n\v\f") != std::string::npos)
                         return "a label prefix must not contain whitespace";
                       return "";
                     });
  t.add<double>("data.valid_split", SIFT_FIELD(data.valid_split),
                "Share of training records (chosen by hash) used for validation when "
                "data.valid.path is empty.",
                in_range(0.0, 0.9));
  t.add<int64_t>("data.folds", SIFT_FIELD(data.folds),
                 "Cross-validation: split the training data by hash into this many folds and "
                 "hold out data.fold as the test split (`sift cv` runs every fold); 0: off.",
                 [](const int64_t& v) {
                   return v == 0 || v >= 2
                              ? std::string()
                              : fmt::format("The value must be 0 or >= 2 (got {}).", v);
                 });
  t.add<int64_t>("data.fold", SIFT_FIELD(data.fold),
                 "Cross-validation: the held-out fold, from 0 to data.folds - 1.", at_least(0));
  t.add<int64_t>("data.shuffle_buffer", SIFT_FIELD(data.shuffle_buffer),
                 "Records held in the shuffle buffer (in all: the fast path's Hogwild threads "
                 "share it); 0 or 1 disables shuffling.",
                 at_least(0));
  t.add<bool>("data.shuffle_shards", SIFT_FIELD(data.shuffle_shards),
              "Reshuffle the order of the training shards every epoch (seeded).");
  t.add<int64_t>("data.workers", SIFT_FIELD(data.workers),
                 "Threads that read, parse and tokenize; the batch order depends on the seed "
                 "and this number only; at most 256 (each holds data.prefetch records and a "
                 "file reader: more threads than that only add memory on any machine we "
                 "know).",
                 between(1, 256, "more data workers than that only add memory"));
  t.add<int64_t>("data.prefetch", SIFT_FIELD(data.prefetch),
                 "Records each worker may read ahead of training (bounds memory).", at_least(1));
  t.add<int64_t>("data.max_length", SIFT_FIELD(data.max_length),
                 "Tokens kept per text (longer texts are truncated); 0: no limit.", at_least(0));
  t.add<int64_t>("data.max_tokens", SIFT_FIELD(data.max_tokens),
                 "Cut training batches at this many padded tokens as well as at "
                 "train.batch_size; 0: by count only.",
                 at_least(0));
  t.add<int64_t>("data.bucket_window", SIFT_FIELD(data.bucket_window),
                 "Sort windows of this many batches by length before cutting them (less "
                 "padding); 0 or 1: off.",
                 at_least(0));
  t.add_enum<BadLinePolicy>(
      "data.on_bad_line", SIFT_FIELD(data.on_bad_line),
      "What a malformed record does: stop with its file and line, or skip and count.");
  t.add<int64_t>("data.max_line_bytes", SIFT_FIELD(data.max_line_bytes),
                 "Longest record accepted, in bytes; longer ones are malformed unless "
                 "data.truncate_long_lines.",
                 at_least(16));
  t.add<bool>("data.truncate_long_lines", SIFT_FIELD(data.truncate_long_lines),
              "Keep the first data.max_line_bytes of a longer record instead of treating it "
              "as malformed.");

  t.add_enum<TokenizerType>(
      "tokenizer.type", SIFT_FIELD(tokenizer.type),
      "Tokenizer: word (whitespace and punctuation split, vocabulary counted from the "
      "training data) or sentencepiece (pieces of tokenizer.model).");
  t.add<std::string>("tokenizer.model", SIFT_FIELD(tokenizer.model),
                     "SentencePiece model file: read by tokenizer.type sentencepiece, written by "
                     "`sift tokenizer train`.");
  t.add<int64_t>("tokenizer.vocab_size", SIFT_FIELD(tokenizer.vocab_size),
                 "Pieces in a SentencePiece model trained by `sift tokenizer train`.", at_least(8));
  t.add_choice("tokenizer.model_type", SIFT_FIELD(tokenizer.model_type), {"unigram", "bpe"},
               "SentencePiece algorithm for `sift tokenizer train`.");
  t.add_enum<PieceIds>(
      "tokenizer.piece_ids", SIFT_FIELD(tokenizer.piece_ids),
      "tokenizer.type sentencepiece: how pieces become the model's input ids: sift (piece p "
      "is id p + 1, 0 the padding id), albert (ALBERT's: the text's spaces collapsed, "
      "accents stripped, lower-cased with tokenizer.lowercase, then [CLS] pieces [SEP] in "
      "the model's own ids; set by `sift import hf`), fairseq (XLM-R's: <s> pieces </s>, "
      "piece p is id p + 1, the unknown piece id 3; set by `sift import hf`).");
  t.add<int64_t>("tokenizer.sample_lines", SIFT_FIELD(tokenizer.sample_lines),
                 "Training lines sampled uniformly from all shards (reservoir sampling) to "
                 "train a SentencePiece model; bounds its memory.",
                 at_least(1));
  t.add<bool>("tokenizer.lowercase", SIFT_FIELD(tokenizer.lowercase),
              "Fold case (full Unicode case folding: \"ȘTIRI\" -> \"știri\", \"ß\" -> \"ss\").");
  t.add<bool>("tokenizer.fasttext_compat", SIFT_FIELD(tokenizer.fasttext_compat),
              "Read text exactly as fastText does (set by `sift import fasttext`): split on "
              "ASCII whitespace only, no lower-casing or punctuation splitting, \"</s>\" "
              "appended to every line, n-grams hashed as fastText hashes them (bytes as "
              "signed chars). Word tokenizers with model.type fasttext only.");
  t.add<bool>("tokenizer.split_punctuation", SIFT_FIELD(tokenizer.split_punctuation),
              "Make each punctuation character (Unicode P*, Sm, Sc, Sk) and symbol (So: "
              "emoji) a token of its own.");
  t.add<bool>("tokenizer.drop_punctuation", SIFT_FIELD(tokenizer.drop_punctuation),
              "Punctuation separates words and is dropped (wins over "
              "tokenizer.split_punctuation); symbols such as emoji stay tokens.");
  t.add_choice("tokenizer.normalize", SIFT_FIELD(tokenizer.normalize), {"none", "nfkc"},
               "Unicode normalisation of each text before the word tokenizer splits it: none, "
               "or nfkc (compatibility characters such as full-width letters and ligatures "
               "become their plain forms; decomposed accents are composed).");
  t.add<std::string>("tokenizer.stopwords", SIFT_FIELD(tokenizer.stopwords),
                     "Words left out of every text: \"\" none, \"english\" the built-in list, "
                     "or a file of words separated by whitespace (kept in the run folder).");
  t.add<int64_t>("tokenizer.min_count", SIFT_FIELD(tokenizer.min_count),
                 "Words seen fewer times in training are unknown.", at_least(1));
  t.tunable(SearchSpace::integer(1, 5));
  t.add<int64_t>("tokenizer.max_size", SIFT_FIELD(tokenizer.max_size),
                 "Most words kept in the vocabulary (most frequent first); 0: no limit.",
                 at_least(0));
  t.add<int64_t>("tokenizer.count_limit", SIFT_FIELD(tokenizer.count_limit),
                 "Most distinct words held while counting; rare ones are pruned beyond it, "
                 "which bounds memory.",
                 at_least(1000));

  t.add<std::string>("model.type", SIFT_FIELD(model.type),
                     "Model architecture: a name in the model registry (models/registry.cc): "
                     "fasttext, textcnn, rnn, transformer, mlp, or one you add.");
  t.add<int64_t>("model.dim", SIFT_FIELD(model.dim), "Embedding dimension.", at_least(1));
  t.tunable(SearchSpace::integer_log(10, 300));
  t.add<int64_t>("model.ngrams", SIFT_FIELD(model.ngrams),
                 "Longest word n-gram (1: words only); n-grams are hashed into buckets; at "
                 "most 16 (fastText users take 1 to 5; every order adds one hashed id per "
                 "word, and 1e9 reached 18 GB in a minute).",
                 between(1, 16, "each order adds one id per word of every text"));
  t.tunable(SearchSpace::integer(1, 3));
  t.add<int64_t>("model.buckets", SIFT_FIELD(model.buckets),
                 "Hash buckets for word n-grams and character n-grams.", at_least(1));
  t.tunable(SearchSpace::integer_log(100000, 2000000));
  t.add<int64_t>("model.minn", SIFT_FIELD(model.minn),
                 "Shortest character n-gram of a word (fastText's -minn), with model.maxn.",
                 between(0, 16, "longer runs are whole words"));
  t.tunable(SearchSpace::choice({"0", "2", "3"}));
  t.add<int64_t>("model.maxn", SIFT_FIELD(model.maxn),
                 "Longest character n-gram of a word (fastText's -maxn): each word's vector is "
                 "averaged with the vectors of its character n-grams of model.minn..maxn "
                 "characters, with \"<\" and \">\" at its ends, hashed into model.buckets as "
                 "fastText hashes them; words never seen still get a vector from theirs. 0: none.",
                 between(0, 16, "longer runs are whole words"));
  t.tunable(SearchSpace::choice({"0", "4", "5", "6"}));
  t.add<std::vector<int64_t>>(
      "model.widths", SIFT_FIELD(model.widths), "TextCNN filter widths, in tokens.",
      [](const std::vector<int64_t>& v) {
        for (auto w : v) {
          if (w < 1) return std::string("Every width must be >= 1.");
        }
        return v.empty() ? std::string("Give at least one width.") : std::string();
      });
  t.tunable(SearchSpace::choice({"[3, 4, 5]", "[2, 3, 4]", "[1, 2, 3]", "[3, 5, 7]"}));
  t.add<int64_t>("model.filters", SIFT_FIELD(model.filters), "TextCNN filters per width.",
                 at_least(1));
  t.tunable(SearchSpace::integer_log(32, 300));
  t.add<double>("model.dropout", SIFT_FIELD(model.dropout), "Dropout probability.",
                in_range(0.0, 0.95));
  t.tunable(SearchSpace::linear(0.0, 0.6));
  t.add_choice("model.cell", SIFT_FIELD(model.cell), {"lstm", "gru"}, "RNN cell.");
  t.add<int64_t>("model.hidden", SIFT_FIELD(model.hidden),
                 "RNN hidden size per direction; MLP hidden-layer width.", at_least(1));
  t.tunable(SearchSpace::integer_log(32, 512));
  t.add<int64_t>("model.layers", SIFT_FIELD(model.layers),
                 "RNN, Transformer or MLP (hidden) layers.", at_least(1));
  t.tunable(SearchSpace::integer(1, 3));
  t.add<bool>("model.bidirectional", SIFT_FIELD(model.bidirectional), "Bidirectional RNN.");
  t.add_choice("model.pooling", SIFT_FIELD(model.pooling), {"max", "mean", "attention", "cls"},
               "How token states become one vector: max, mean or attention (RNN); cls, mean or max "
               "(Transformer, BERT).");
  t.add<int64_t>("model.heads", SIFT_FIELD(model.heads), "Transformer attention heads.",
                 at_least(1));
  t.tunable(SearchSpace::choice({"2", "4"}));
  t.add<int64_t>("model.ff_dim", SIFT_FIELD(model.ff_dim), "Transformer feed-forward width.",
                 at_least(1));
  t.tunable(SearchSpace::choice({"256", "512", "1024"}));
  t.add_choice("model.positions", SIFT_FIELD(model.positions), {"learned", "sinusoidal"},
               "Transformer position embeddings; BERT-family encoder: sinusoidal starts its "
               "learned table as sinusoids (at BERT's spread, 0.02) instead of N(0, 0.02).");
  t.add<int64_t>("model.max_positions", SIFT_FIELD(model.max_positions),
                 "Longest sequence the Transformer's positions cover (longer input is cut).",
                 at_least(1));
  t.add<std::string>("model.pretrained", SIFT_FIELD(model.pretrained),
                     "Word vectors to initialise the embeddings from (.vec text format: "
                     "fastText/word2vec); empty: random.");
  t.add<bool>("model.freeze_embeddings", SIFT_FIELD(model.freeze_embeddings),
              "Keep the embeddings fixed during training.");
  t.add<int64_t>("model.token_types", SIFT_FIELD(model.token_types),
                 "BERT-family encoder: token type embeddings (type_vocab_size; 0: none, as "
                 "DistilBERT); texts are all of type 0.",
                 at_least(0));
  t.add<int64_t>("model.embedding_dim", SIFT_FIELD(model.embedding_dim),
                 "BERT-family encoder: embedding width when narrower than model.dim (ELECTRA's "
                 "embedding_size, projected to model.dim); 0: model.dim.",
                 at_least(0));
  t.add<double>("model.layer_norm_eps", SIFT_FIELD(model.layer_norm_eps),
                "BERT-family encoder: LayerNorm epsilon (1e-12 in BERT, DistilBERT and ELECTRA; "
                "`sift import hf` sets it from config.json).",
                in_range(1e-15, 0.1));
  t.add<bool>("model.pre_norm", SIFT_FIELD(model.pre_norm),
              "BERT-family encoder: LayerNorm before each block's attention and feed-forward "
              "network, and once after the last block (pre-LN, as Cramming pretrains: stable "
              "at large learning rates); false: after each (post-LN: BERT's own, what `sift "
              "import hf` brings).");
  t.add_choice("model.head_activation", SIFT_FIELD(model.head_activation), {"tanh", "relu", "gelu"},
               "BERT-family encoder: the activation after the head's dense layer on the pooled "
               "state: tanh (BERT's pooler), relu (DistilBERT's pre_classifier), gelu (ELECTRA's "
               "classification head).");
  t.add_choice("model.ff_activation", SIFT_FIELD(model.ff_activation), {"gelu", "gelu_tanh"},
               "BERT-family encoder: the feed-forward networks' activation: gelu (exact, erf: "
               "BERT's) or gelu_tanh (the tanh approximation: ALBERT's gelu_new).");
  t.add<int64_t>("model.layer_repeats", SIFT_FIELD(model.layer_repeats),
                 "BERT-family encoder: each of the model.layers layers is applied this many "
                 "times in a row, with the same weights (ALBERT's cross-layer sharing: 1 "
                 "layer applied num_hidden_layers times).",
                 at_least(1));
  t.add<int64_t>("model.position_offset", SIFT_FIELD(model.position_offset),
                 "BERT-family encoder: the position id of a text's first token (RoBERTa and "
                 "XLM-R: padding_idx + 1 = 2; BERT: 0); model.max_positions counts the rows "
                 "below it too.",
                 at_least(0));

  t.add<int64_t>("train.epochs", SIFT_FIELD(train.epochs), "Passes over the training data.",
                 at_least(1));
  t.tunable(SearchSpace::integer(2, 30));
  t.add<int64_t>("train.batch_size", SIFT_FIELD(train.batch_size), "Records per batch.",
                 at_least(1));
  t.tunable(SearchSpace::choice({"16", "32", "64"}));
  t.add_enum<LossReduction>(
      "train.loss_reduction", SIFT_FIELD(train.loss_reduction),
      "Reduce the batch loss by mean, or by sum (fastText's per-example step size).");
  t.add_enum<Loss>(
      "train.loss", SIFT_FIELD(train.loss),
      "The output layer's loss, as fastText's -loss: softmax (cross-entropy; multi-label "
      "data: a sigmoid per label); hs (hierarchical softmax over a Huffman tree of the "
      "training label counts: a step touches the depth of the tree, not every label); ns "
      "(negative sampling: the true label and train.neg labels drawn by count^0.5, a "
      "sigmoid each); ova (one sigmoid per label, binary logistic loss each). hs, ns and "
      "ova: model.type fasttext only; ns and ova predict a sigmoid per label.");
  t.add<int64_t>("train.neg", SIFT_FIELD(train.neg),
                 "train.loss ns: negative labels drawn per example (fastText's -neg).",
                 at_least(1));
  t.add<int64_t>("train.max_steps", SIFT_FIELD(train.max_steps),
                 "Stop after this many optimizer steps; 0: no limit.", at_least(0));
  t.add<int64_t>("train.log_every", SIFT_FIELD(train.log_every),
                 "Steps between log lines (and metrics.csv rows) when not on a terminal; 0: about "
                 "20 per epoch.",
                 at_least(0));
  t.add<bool>("train.tensorboard", SIFT_FIELD(train.tensorboard),
              "Also write metrics.csv's scalars as TensorBoard event files under RUN/tb/.");
  t.add<bool>("train.profile", SIFT_FIELD(train.profile),
              "Record train.profile_steps steps with LibTorch's profiler into "
              "RUN/profile/trace.json (Chrome trace: chrome://tracing or ui.perfetto.dev), "
              "operators inside named phases (data_wait, copy, forward, backward, allreduce, "
              "optimizer, checkpoint, validation). Off: no cost.");
  t.add<int64_t>("train.profile_from", SIFT_FIELD(train.profile_from),
                 "The first step train.profile records (steps before it warm up caches and "
                 "allocators).",
                 at_least(0));
  t.add<int64_t>("train.profile_steps", SIFT_FIELD(train.profile_steps),
                 "How many steps train.profile records.", at_least(1));
  t.add<double>("train.checkpoint_minutes", SIFT_FIELD(train.checkpoint_minutes),
                "Minutes between saves of last.ckpt and best.ckpt inside an epoch (checked "
                "after every optimizer step; 0: after every step), with any "
                "train.save_last.",
                in_range(0.0, 1e6));
  t.add_enum<SaveLast>(
      "train.save_last", SIFT_FIELD(train.save_last),
      "When last.ckpt (and best.ckpt) are written besides every train.checkpoint_minutes "
      "and when training ends or is stopped (SIGINT/SIGTERM, train.max_steps): epoch: at "
      "the end of every epoch; auto: at the end of an epoch when the training since the "
      "last save took at least 10 times as long as a save takes (a fastText table of 80 MB "
      "takes longer to write than a small set's epoch to train); end: at no epoch's end.");
  t.add<int64_t>("train.accumulate", SIFT_FIELD(train.accumulate),
                 "Batches whose gradients add up before each optimizer step.", at_least(1));
  t.add<double>("train.clip_norm", SIFT_FIELD(train.clip_norm),
                "Clip the gradients' global L2 norm to this; 0: no clipping.", in_range(0.0, 1e9));
  t.add_enum<OnNonfinite>(
      "train.on_nonfinite", SIFT_FIELD(train.on_nonfinite),
      "On a NaN/inf loss or gradient (outside loss scaling's skipped steps): stop the run "
      "with an error, keeping the last good checkpoint; or skip_batch: skip that update "
      "and count it (the run still stops after 100 in a row).");
  t.add<double>("train.max_norm", SIFT_FIELD(train.max_norm),
                "After each optimizer step, scale each row of the output layer's weight (one "
                "per label) down to this L2 norm if above it (Kim 2014: 3); 0: off.",
                in_range(0.0, 1e9));
  t.add<double>("train.bucket_mb", SIFT_FIELD(train.bucket_mb),
                "Distributed training: megabytes of dense gradients per all-reduce bucket.",
                in_range(0.001, 1e5));
  t.add<double>("train.label_smoothing", SIFT_FIELD(train.label_smoothing),
                "Label smoothing of the cross-entropy.", in_range(0.0, 0.5));
  t.add<std::vector<std::string>>(
      "train.class_weights", SIFT_FIELD(train.class_weights),
      "Loss weight per label, in label order; \"balanced\": inversely proportional to each "
      "label's training count; empty: equal.");
  t.add<int64_t>("train.eval_every", SIFT_FIELD(train.eval_every),
                 "Validate every this many optimizer steps; 0: at the end of each epoch.",
                 at_least(0));
  t.add_enum<BestMetric>(
      "train.best_metric", SIFT_FIELD(train.best_metric),
      "Validation metric that picks best.ckpt and drives early stopping (loss: lower "
      "is better; micro_f1 needs data.multi_label; multi-label accuracy is the share "
      "of records whose label set is predicted exactly; label_f1: the F1 of "
      "train.best_label).");
  t.add<std::string>("train.best_label", SIFT_FIELD(train.best_label),
                     "The label (as in labels.txt, without __label__) whose F1 "
                     "train.best_metric: label_f1 follows; every validation writes each "
                     "label's precision, recall and F1 to metrics.jsonl.");
  t.add<double>("train.threshold", SIFT_FIELD(train.threshold),
                "Multi-label decision threshold: a label is predicted when its sigmoid "
                "probability exceeds this.",
                between_0_and_1());
  t.add<int64_t>("train.patience", SIFT_FIELD(train.patience),
                 "Stop after this many validations without improvement; 0: never stop early.",
                 at_least(0));
  t.add<double>("train.min_delta", SIFT_FIELD(train.min_delta),
                "Smallest change of train.best_metric that counts as an improvement.",
                in_range(0.0, 1e9));
  t.add<std::string>("train.init_from", SIFT_FIELD(train.init_from),
                     "Start from the weights of this checkpoint file or run folder "
                     "(fine-tuning); the model's shape must match. A run folder also gives its "
                     "vocabulary and label order (the tokenizer options must be its own).");
  t.add<std::vector<std::string>>(
      "train.freeze", SIFT_FIELD(train.freeze),
      "Parameters to keep fixed, by name pattern (shell wildcards: \"embedding.*\", "
      "\"layers.0.*\").");
  t.add_enum<Precision>(
      "train.precision", SIFT_FIELD(train.precision),
      "Mixed precision: matmuls, linear layers and convolutions of the forward pass "
      "run in bf16 (CPU or CUDA) or fp16 (CUDA only, with loss scaling) through "
      "autocast; weights, optimizer state and the loss stay fp32.");
  t.add_enum<GradientCheckpointing>(
      "train.gradient_checkpointing", SIFT_FIELD(train.gradient_checkpointing),
      "Gradient checkpointing: recompute the activations of Transformer layers, RNN "
      "layers or TextCNN filter widths in backward instead of keeping them (all), or "
      "of one block in train.gradient_checkpointing_every (every).");
  t.add<int64_t>("train.gradient_checkpointing_every",
                 SIFT_FIELD(train.gradient_checkpointing_every),
                 "With train.gradient_checkpointing: every, recompute blocks 0, k, 2k, ... for "
                 "this k.",
                 at_least(1));
  t.add_enum<LossScaling>(
      "train.loss_scaling", SIFT_FIELD(train.loss_scaling),
      "Dynamic loss scaling (skip a step with inf/nan gradients and halve the scale, "
      "double it after train.loss_scale_growth_interval clean steps); auto: on for "
      "fp16 only.");
  t.add<int64_t>("train.loss_scale_growth_interval", SIFT_FIELD(train.loss_scale_growth_interval),
                 "Clean optimizer steps in a row before the loss scale doubles.", at_least(1));
  t.add_enum<FastPath>(
      "train.fast_path", SIFT_FIELD(train.fast_path),
      "The fused SGD loop (forward, gradient and update in plain loops, no autograd) for "
      "models that have one (fasttext): auto takes it when the run qualifies (optimizer "
      "sgd without momentum or weight decay, fp32, CPU, one process, single-label, no "
      "class weights, label smoothing, clipping, max_norm, accumulation or freezing); "
      "off always trains through autograd. The run summary says which was taken.");
  t.add<int64_t>("train.fast_path_threads", SIFT_FIELD(train.fast_path_threads),
                 "Training threads of the fast path, each reading all of the data and "
                 "training on its own share of the records (by hash, so a file sorted by "
                 "label gives every thread every label), updating the shared weights "
                 "without locks (Hogwild, as fastText). 1 "
                 "keeps runs deterministic and resume bit-exact; more trade both for speed, "
                 "and save last.ckpt only at epoch ends; at most 256.",
                 between(1, 256, "each thread holds a data reader and its prefetched records"));
  t.add_enum<OptimizerType>("train.optimizer.type", SIFT_FIELD(train.optimizer.type), "Optimizer.");
  t.add<double>("train.optimizer.lr", SIFT_FIELD(train.optimizer.lr), "Peak learning rate.",
                positive_number());
  // Adam-family range; the fastText model narrows it to SGD rates (models/registry.cc).
  t.tunable(SearchSpace::log(1e-4, 1e-2));
  t.add<double>("train.optimizer.momentum", SIFT_FIELD(train.optimizer.momentum), "SGD momentum.",
                in_range(0.0, 0.999));
  t.add<bool>("train.optimizer.nesterov", SIFT_FIELD(train.optimizer.nesterov),
              "Nesterov momentum (SGD; needs momentum > 0).");
  t.add<double>("train.optimizer.alpha", SIFT_FIELD(train.optimizer.alpha),
                "RMSprop smoothing constant.", in_range(0.0, 0.99999));
  t.add<double>("train.optimizer.rho", SIFT_FIELD(train.optimizer.rho),
                "Adadelta decay of its running averages of squared gradients and updates "
                "(Kim 2014 used 0.95 with eps 1e-6 and lr 1).",
                in_range(0.0, 0.99999));
  t.add<double>("train.optimizer.weight_decay", SIFT_FIELD(train.optimizer.weight_decay),
                "Weight decay (decoupled for adamw, which leaves biases and LayerNorm weights "
                "undecayed, as BERT's fine-tuning does).",
                in_range(0.0, 1.0));
  t.add<double>("train.optimizer.layer_decay", SIFT_FIELD(train.optimizer.layer_decay),
                "Layer-wise learning-rate decay of an encoder (model.type bert): the head "
                "learns at lr, the top layer at lr x layer_decay, each layer below at "
                "layer_decay times the one above, the embeddings lowest (Howard and Ruder "
                "2018; 0.8 to 0.95 for fine-tuning). 1: every parameter at lr.",
                in_range(0.0, 1.0, "(]"));
  t.add<double>("train.optimizer.beta1", SIFT_FIELD(train.optimizer.beta1), "Adam beta1.",
                in_range(0.0, 0.9999));
  t.add<double>("train.optimizer.beta2", SIFT_FIELD(train.optimizer.beta2), "Adam beta2.",
                in_range(0.0, 0.99999));
  t.add<double>("train.optimizer.eps", SIFT_FIELD(train.optimizer.eps),
                "Epsilon of adam, adamw, adagrad, rmsprop and adadelta.", positive_number());
  t.add_enum<SchedulerType>(
      "train.scheduler.type", SIFT_FIELD(train.scheduler.type),
      "Learning-rate schedule: constant; linear decay to final_lr_ratio x lr; or a "
      "linear warm-up, then linear or cosine decay.");
  t.add<int64_t>("train.scheduler.warmup_steps", SIFT_FIELD(train.scheduler.warmup_steps),
                 "Warm-up length in optimizer steps (takes precedence over warmup_ratio).",
                 at_least(0));
  t.add<double>("train.scheduler.warmup_ratio", SIFT_FIELD(train.scheduler.warmup_ratio),
                "Warm-up length as a share of all steps.", in_range(0.0, 1.0));
  t.add<double>("train.scheduler.final_lr_ratio", SIFT_FIELD(train.scheduler.final_lr_ratio),
                "Final learning rate of the linear schedule, as a share of lr.",
                in_range(0.0, 1.0));
  t.add<std::string>(
      "train.distill.teacher", SIFT_FIELD(train.distill.teacher),
      "Knowledge distillation: a trained run folder or `sift export` file whose predictions "
      "the model learns from as well as the labels (any model type and tokenizer: the "
      "teacher reads each text with its own encoder). Its labels must be the data's. "
      "Empty: off.");
  t.add<double>("train.distill.temperature", SIFT_FIELD(train.distill.temperature),
                "Distillation temperature T: teacher and student logits are divided by T "
                "before the softmax (multi-label: sigmoid) of the soft loss, which is scaled "
                "by T^2 (Hinton et al. 2015).",
                positive_number());
  t.add<double>("train.distill.alpha", SIFT_FIELD(train.distill.alpha),
                "Distillation: weight of the hard-label loss; the soft loss (KL divergence "
                "from the teacher's distribution; multi-label: from its sigmoids, summed "
                "over labels) gets 1 - alpha. 1: the labels alone.",
                in_range(0.0, 1.0));
  // The transfer set (issue #14): texts without labels that only the teacher scores.
  t.add<std::vector<std::string>>(
      "train.distill.unlabeled", SIFT_FIELD(train.distill.unlabeled),
      "Distillation: files (patterns, folders or lists, as data.train.path) of texts "
      "without labels, one per line, plain, .gz or .zst, read as a stream. The teacher "
      "labels them on the fly; each batch gets train.distill.unlabeled_ratio of them per "
      "labelled example, which only the soft loss sees. They run across the labelled "
      "epochs, starting over when they end. Empty: off.");
  t.add<double>("train.distill.unlabeled_ratio", SIFT_FIELD(train.distill.unlabeled_ratio),
                "Unlabelled examples (train.distill.unlabeled) per labelled one in each "
                "batch: round(ratio x train.batch_size) rows, at least 1, appended to every "
                "batch.",
                in_range(0.0, 64.0, "(]"));
  t.add<double>("train.distill.augment.copies", SIFT_FIELD(train.distill.augment.copies),
                "Distillation's transfer-set augmentation (Tang et al. 2019): augmented "
                "training texts per labelled example in each batch (round(copies x "
                "train.batch_size) rows appended to every batch, read from the training "
                "data in an order of their own, augmented anew each pass). The teacher "
                "scores them; only the soft loss sees them. 0: off.",
                in_range(0.0, 64.0));
  t.add<double>("train.distill.augment.mask", SIFT_FIELD(train.distill.augment.mask),
                "Augmentation: the probability that a word of an augmented text becomes "
                "the mask token <mask>.",
                in_range(0.0, 1.0));
  t.add<double>("train.distill.augment.ngram", SIFT_FIELD(train.distill.augment.ngram),
                "Augmentation: the probability that an augmented text keeps only n "
                "consecutive words (n uniform in 1..5), after masking.",
                in_range(0.0, 1.0));
  // train.prune.*: gradual magnitude pruning (issue #14, framework/train/pruning.cc).
  t.add_enum_list<PruneStructure>(
      "train.prune.structure", SIFT_FIELD(train.prune.structure),
      "What gradual magnitude pruning removes, each to train.prune.sparsity (empty: no "
      "pruning): unstructured (single weights of train.prune.params), filters (TextCNN), "
      "heads and ffn (Transformer attention heads and feed-forward units: both may be "
      "listed), rows (fastText embedding rows, the words' and the n-gram buckets'), hidden "
      "(RNN hidden units, per layer and direction: a unit's gate rows and what reads its "
      "state). Units "
      "are ranked by the L2 norm of their weights within each layer; sift export removes "
      "pruned units from the matrices.");
  t.add<double>("train.prune.sparsity", SIFT_FIELD(train.prune.sparsity),
                "Final share of each layer's units (or of each parameter's weights) pruned, "
                "in [0, 1), reached at train.prune.end_step on Zhu & Gupta's cubic schedule "
                "s_t = s (1 - (1 - (t - start_step) / (end_step - start_step))^3).",
                in_range(0.0, 1.0, "[)"));
  t.add<int64_t>("train.prune.start_step", SIFT_FIELD(train.prune.start_step),
                 "Optimizer step of the first mask update.", at_least(0));
  t.add<int64_t>("train.prune.end_step", SIFT_FIELD(train.prune.end_step),
                 "Optimizer step at which the final sparsity is reached; the masks stay fixed "
                 "after it, and only validations from it on can choose best.ckpt.",
                 at_least(1));
  t.add<int64_t>("train.prune.every", SIFT_FIELD(train.prune.every),
                 "Optimizer steps between mask updates.", at_least(1));
  t.add<std::vector<std::string>>(
      "train.prune.params", SIFT_FIELD(train.prune.params),
      "Unstructured pruning: the parameters pruned, by name pattern (shell wildcards: "
      "\"layers.*.weight\"); each parameter gets its own mask.");
  // pretrain.*: masked-token pretraining of an encoder (issue #43, docs/pretraining.md).
  t.add<std::vector<std::string>>(
      "pretrain.files", SIFT_FIELD(pretrain.files),
      "`sift pretrain`: files (patterns, folders or lists, as data.train.path) of unlabelled "
      "texts, one per line, plain, .gz or .zst, read by the streaming dataset. A config that "
      "sets them pretrains the encoder (masked-token prediction) instead of classifying; "
      "data.* paths are not read.");
  t.add<std::vector<std::string>>(
      "pretrain.valid", SIFT_FIELD(pretrain.valid),
      "`sift pretrain`: held-out unlabelled texts whose masked-token loss and accuracy each "
      "validation reports (and train.best_metric masked_accuracy follows). Empty: none.");
  t.add<double>("pretrain.mask_rate", SIFT_FIELD(pretrain.mask_rate),
                "Share of the tokens (with pretrain.whole_word: of the words) that are "
                "predicted; of those 80% become [MASK], 10% a random token, 10% stay.",
                between_0_and_1());
  t.add<bool>("pretrain.whole_word", SIFT_FIELD(pretrain.whole_word),
              "Whole-word masking: a word is chosen with its \"##\" continuations.");
  t.add<int64_t>("pretrain.max_tokens", SIFT_FIELD(pretrain.max_tokens),
                 "Length of the packed sequences: each batch's texts are laid end to end and "
                 "cut every max_tokens tokens (no padding but in a batch's last sequence); at "
                 "most model.max_positions.",
                 at_least(2));
  t.add<int64_t>("pretrain.unigram_lines", SIFT_FIELD(pretrain.unigram_lines),
                 "A new encoder's masked-token head starts its bias per id at the log of that "
                 "id's share of the tokens of the first unigram_lines texts of pretrain.files "
                 "(the unigram distribution, which the head otherwise learns first through the "
                 "tied embedding rows); 0: at zero, BERT's. Not with train.init_from.",
                 at_least(0));
  return t.take();
}

}  // namespace

const std::vector<OptionAlias>& option_aliases() {
  static const std::vector<OptionAlias> aliases = {
      {"train.checkpointing", "train.gradient_checkpointing"},
      {"train.checkpoint_every", "train.gradient_checkpointing_every"},
  };
  return aliases;
}

const OptionAlias* find_alias(const std::string& name) {
  for (const auto& a : option_aliases()) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

const std::vector<Option>& all_options() {
  static const std::vector<Option> options = declare();
  return options;
}

const Option* find_option(const std::string& name) {
  static const std::unordered_map<std::string, const Option*> index = [] {
    std::unordered_map<std::string, const Option*> m;
    for (const auto& o : all_options()) m.emplace(o.name, &o);
    return m;
  }();
  auto it = index.find(name);
  return it == index.end() ? nullptr : it->second;
}

std::string emitted(const Option& option, const SiftConfig& config) {
  return flow_text(option.emit(config));
}

std::vector<std::string> keys_off_default(const SiftConfig& config) {
  static const SiftConfig defaults;
  std::vector<std::string> keys;
  for (const auto& o : all_options()) {
    if (emitted(o, config) != emitted(o, defaults)) keys.push_back(o.name);
  }
  return keys;
}

std::string closest_option(const std::string& name) {
  std::vector<std::string> names;
  for (const auto& o : all_options()) names.push_back(o.name);
  return nearest_name(name, names);
}

bool is_option_group(const std::string& prefix) {
  const std::string p = prefix + ".";
  return std::any_of(all_options().begin(), all_options().end(),
                     [&](const Option& o) { return o.name.compare(0, p.size(), p) == 0; });
}

}  // namespace sift
