// The closed sets of the config, parsed once at load time. Each enum has one string
// table (enums.cc), read by one to_string / from_string pair and by the option table,
// so the spelling of a value and the list of choices live in one place.
#pragma once

#include <string>
#include <vector>

namespace sift {

enum class OptimizerType { sgd, adam, adamw, adagrad, rmsprop, adadelta };
enum class SchedulerType { constant, linear, warmup_linear, warmup_cosine };
enum class Precision { fp32, bf16, fp16 };
// Activation recomputation (train.gradient_checkpointing).
enum class GradientCheckpointing { off, all, every };
enum class LossScaling { automatic, dynamic, off };  // "auto": on for fp16 only
enum class LossReduction { mean, sum };
// The output layer's loss (train.loss), fastText's -loss: softmax cross-entropy,
// hierarchical softmax over a Huffman tree of the label counts, negative sampling, or
// one binary logistic loss per label (one-vs-all).
enum class Loss { softmax, hs, ns, ova };
// What training does on a non-finite loss or gradient (train.on_nonfinite).
enum class OnNonfinite { stop, skip_batch };
// When training writes last.ckpt besides its end (train.save_last): at every epoch's end,
// only at the end, or at the ends of epochs that outlast the save ("auto").
enum class SaveLast { epoch, end, automatic };
// Whether fastText-style runs train through the fused SGD loop (train.fast_path): "auto"
// when the config qualifies, or off (always autograd).
enum class FastPath { automatic, off };
// What each rank of a distributed run keeps only its slice of (run.shard; ZeRO's stages
// 1 and 2): nothing (every rank holds everything: data parallelism), the optimizer
// state, or the optimizer state and the gradients between steps.
enum class ShardStage { none, optimizer, gradients, parameters };
// What train.prune removes: single weights by magnitude (unstructured), or whole units
// (TextCNN filters, Transformer attention heads and feed-forward units, embedding rows,
// RNN hidden units).
enum class PruneStructure { unstructured, filters, heads, ffn, rows, hidden };
// train.best_metric: the metric table's rows that can choose best.ckpt, in its order
// (config/metric_table.h); label_f1 is the F1 of train.best_label.
enum class BestMetric { accuracy, macro_f1, micro_f1, loss, label_f1, masked_accuracy };
enum class TokenizerType { word, sentencepiece, wordpiece };
// tokenizer.piece_ids: how SentencePiece pieces become a model's input ids.
enum class PieceIds {
  sift,     // piece p is id p + 1, 0 the padding id (models Sift trains)
  albert,   // ALBERT's: [CLS] pieces [SEP] in the model's own ids, its text normalisation
  fairseq,  // XLM-R's: <s> pieces </s>, piece p is id p + 1, the unknown piece id 3
};

enum class FileFormat {
  fasttext,     // "__label__a __label__b text ...": labels anywhere as __label__ tokens
  tsv,          // tab-separated columns
  csv,          // RFC 4180: comma-separated, "quoted, fields" with "" escapes, may span lines
  label_first,  // "label text ...": the first space-separated token is the label
  jsonl,        // one JSON object per line
};

enum class TextEncoding {
  utf8,    // "utf-8": invalid bytes replaced by U+FFFD
  latin1,  // "latin-1": ISO-8859-1, converted to UTF-8
};

// How label values map to names: as written, or as an index into the label list.
enum class LabelMapping { name, index0, index1 };

enum class BadLinePolicy { error, skip };

// A data split.
enum class Split { train, valid, test };

// The spellings of E's values, in declaration order (specialised in enums.cc).
template <class E>
const std::vector<std::string>& enum_names();

// The spelling of `value`.
template <class E>
const std::string& to_string(E value) {
  return enum_names<E>()[static_cast<size_t>(value)];
}

// Whether `text` spells a value of E; stores it in `out` when it does.
template <class E>
bool try_from_string(const std::string& text, E& out) {
  const auto& names = enum_names<E>();
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == text) {
      out = static_cast<E>(i);
      return true;
    }
  }
  return false;
}

// "The value 'x' is not one of: a, b." (the sentence from_string throws after the key).
std::string not_a_choice(const std::string& text, const std::vector<std::string>& choices);

// Throws sift::Error("<key>: " + not_a_choice(text, choices)).
[[noreturn]] void throw_not_a_choice(const std::string& key, const std::string& text,
                                     const std::vector<std::string>& choices);

// The value spelled `text`; throws sift::Error naming `key` and the choices
// ("train.precision: The value 'fp8' is not one of: fp32, bf16, fp16.").
template <class E>
E from_string(const std::string& text, const std::string& key) {
  E value{};
  if (!try_from_string(text, value)) throw_not_a_choice(key, text, enum_names<E>());
  return value;
}

#define SIFT_DECLARE_ENUM_NAMES(E) \
  template <>                      \
  const std::vector<std::string>& enum_names<E>();
SIFT_DECLARE_ENUM_NAMES(OptimizerType)
SIFT_DECLARE_ENUM_NAMES(SchedulerType)
SIFT_DECLARE_ENUM_NAMES(Precision)
SIFT_DECLARE_ENUM_NAMES(GradientCheckpointing)
SIFT_DECLARE_ENUM_NAMES(LossScaling)
SIFT_DECLARE_ENUM_NAMES(LossReduction)
SIFT_DECLARE_ENUM_NAMES(Loss)
SIFT_DECLARE_ENUM_NAMES(OnNonfinite)
SIFT_DECLARE_ENUM_NAMES(SaveLast)
SIFT_DECLARE_ENUM_NAMES(FastPath)
SIFT_DECLARE_ENUM_NAMES(ShardStage)
SIFT_DECLARE_ENUM_NAMES(PruneStructure)
SIFT_DECLARE_ENUM_NAMES(BestMetric)
SIFT_DECLARE_ENUM_NAMES(TokenizerType)
SIFT_DECLARE_ENUM_NAMES(PieceIds)
SIFT_DECLARE_ENUM_NAMES(FileFormat)
SIFT_DECLARE_ENUM_NAMES(TextEncoding)
SIFT_DECLARE_ENUM_NAMES(LabelMapping)
SIFT_DECLARE_ENUM_NAMES(BadLinePolicy)
SIFT_DECLARE_ENUM_NAMES(Split)
#undef SIFT_DECLARE_ENUM_NAMES

}  // namespace sift
