// The typed configuration of a run. Every field is declared as an option, with its
// help text and check, once, in options.cc; defaults live here as initialisers.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "config/enums.h"

namespace sift {

struct RunConfig {
  std::string dir = "runs";        // parent folder of run folders
  std::string name;                // run folder name; empty: "<config name>-<timestamp>"
  bool overwrite = false;          // replace a non-empty run folder instead of refusing
  bool overwrite_foreign = false;  // ... even one holding files Sift did not write
  int64_t seed = 42;               // seeds model init, shuffling and the validation split
  int64_t threads = 0;             // intra-op threads; 0: all cores
  std::string device = "cpu";
  double dist_timeout_seconds = 1800.0;  // distributed: rendezvous and collectives
  std::string dist_backend = "auto";
  ShardStage shard = ShardStage::none;  // distributed: what each rank keeps a slice of
};

// How a split's files are laid out. `data.*` holds the shared defaults that each of
// `data.train.*`, `data.valid.*`, `data.test.*` may override.
struct FormatConfig {
  FileFormat format = FileFormat::fasttext;
  std::vector<std::string> text;
  std::string label;
  bool header = false;
  TextEncoding encoding = TextEncoding::utf8;
  bool unescape = false;
  LabelMapping label_mapping = LabelMapping::name;
};

struct SplitConfig : FormatConfig {
  std::vector<std::string> path;  // files, globs, folders or @list files
};

struct DataConfig : FormatConfig {
  SplitConfig train, valid, test;
  std::vector<std::string> labels;         // label names, or one names file (a single path)
  bool multi_label = false;                // several labels per record: sigmoid + BCE, threshold
  std::string label_separator;             // splits a tsv/csv/label_first label field into a list
  std::string label_prefix = "__label__";  // marks a label token of the fasttext format
  double valid_split = 0.1;  // hashed share of train used as validation when no valid.path
  int64_t folds = 0;         // cross-validation: folds of the training data by hash; 0: off
  int64_t fold = 0;          // the held-out fold, the test split
  int64_t shuffle_buffer = 10000;
  bool shuffle_shards = true;
  int64_t workers = 2;
  int64_t prefetch = 1024;
  int64_t max_length = 0;
  int64_t max_tokens = 0;
  int64_t bucket_window = 0;
  BadLinePolicy on_bad_line = BadLinePolicy::error;
  int64_t max_line_bytes = 1 << 20;
  bool truncate_long_lines = false;
};

inline SplitConfig& split_config(DataConfig& data, Split split) {
  return split == Split::train ? data.train : split == Split::valid ? data.valid : data.test;
}
inline const SplitConfig& split_config(const DataConfig& data, Split split) {
  return split == Split::train ? data.train : split == Split::valid ? data.valid : data.test;
}

struct TokenizerConfig {
  TokenizerType type = TokenizerType::word;
  std::string model;
  int64_t vocab_size = 8000;
  std::string model_type = "unigram";
  PieceIds piece_ids = PieceIds::sift;  // how the model's input ids follow from the pieces
  int64_t sample_lines = 200000;
  bool lowercase = true;
  bool split_punctuation = true;
  bool drop_punctuation = false;   // punctuation separates words and is not a token
  std::string normalize = "none";  // none or nfkc: Unicode normalisation before splitting
  bool fasttext_compat = false;    // read text and hash n-grams exactly as fastText (imports)
  std::string stopwords;           // "", "english" or a file of words to leave out
  int64_t min_count = 1;
  int64_t max_size = 0;
  int64_t count_limit = 5000000;
};

struct ModelConfig {
  std::string type = "fasttext";
  int64_t dim = 100;
  int64_t ngrams = 1;
  int64_t buckets = 2000000;
  // Character n-grams of each word (fastText's -minn/-maxn), hashed into the buckets; 0: none.
  int64_t minn = 0;
  int64_t maxn = 0;
  std::vector<int64_t> widths = {3, 4, 5};
  int64_t filters = 100;
  double dropout = 0.5;
  std::string cell = "lstm";
  int64_t hidden = 256;
  int64_t layers = 1;
  bool bidirectional = true;
  std::string pooling = "max";
  int64_t heads = 4;
  int64_t ff_dim = 512;
  std::string positions = "learned";
  int64_t max_positions = 512;
  std::string pretrained;
  bool freeze_embeddings = false;
  // The BERT-family encoder (model.type bert); `sift import hf` sets them from config.json.
  int64_t token_types = 2;    // token type embeddings (BERT's type_vocab_size); 0: none
  int64_t embedding_dim = 0;  // ELECTRA's narrower embeddings, projected to dim; 0: dim
  double layer_norm_eps = 1e-12;
  std::string head_activation = "tanh";  // the head's dense layer: tanh, relu or gelu
  std::string ff_activation = "gelu";    // the blocks' feed-forward: gelu (erf) or gelu_tanh
  int64_t layer_repeats = 1;             // ALBERT: each layer applied this many times in a row
  int64_t position_offset = 0;           // RoBERTa, XLM-R: the first token's position id
  // BERT-family: LayerNorm before each sublayer and once after the last block (pre-LN).
  bool pre_norm = false;
};

struct OptimizerConfig {
  OptimizerType type = OptimizerType::sgd;
  double lr = 0.1;
  double momentum = 0.0;
  double weight_decay = 0.0;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  bool nesterov = false;
  double alpha = 0.99;
  double rho = 0.9;  // Adadelta
  // Layer-wise learning-rate decay (an encoder's layers): layer i of L gets lr x
  // layer_decay^(L + 1 - depth), the embeddings depth 0, the head L + 1; 1: off.
  double layer_decay = 1.0;
};

struct SchedulerConfig {
  SchedulerType type = SchedulerType::constant;
  double final_lr_ratio = 0.0;
  int64_t warmup_steps = 0;
  double warmup_ratio = 0.0;
};

// train.distill.augment: Tang et al. 2019's transfer-set augmentation of the training
// texts (word masking, n-gram sampling); the augmented texts are scored by the teacher only.
struct AugmentConfig {
  double copies = 0.0;  // augmented examples per labelled one in each batch; 0: off
  double mask = 0.1;    // each word becomes the mask token with this probability
  double ngram = 0.25;  // with this probability only a random n-gram (n in 1..5) is kept
};

// train.distill: knowledge distillation from a trained teacher (Hinton et al. 2015).
struct DistillConfig {
  std::string teacher;       // a run folder or an exported .pt; empty: no distillation
  double temperature = 2.0;  // softens both distributions of the soft loss
  double alpha = 0.5;        // weight of the hard-label loss; the soft loss gets 1 - alpha
  std::vector<std::string> unlabeled;  // files of texts without labels, one per line
  double unlabeled_ratio = 1.0;        // unlabelled examples per labelled one in each batch
  AugmentConfig augment;
};

// train.prune: gradual magnitude pruning (Zhu & Gupta 2017). Off while structure is empty.
struct PruneConfig {
  std::vector<PruneStructure> structure;  // what is pruned, each to `sparsity`
  double sparsity = 0.0;                  // final share of units (or weights) pruned
  int64_t start_step = 0;                 // first mask update (optimizer steps)
  int64_t end_step = 1000;                // the final sparsity is reached here
  int64_t every = 100;                    // steps between mask updates
  std::vector<std::string> params;        // unstructured: parameter name patterns
};

struct TrainConfig {
  int64_t epochs = 5;
  int64_t batch_size = 32;
  LossReduction loss_reduction = LossReduction::mean;
  Loss loss = Loss::softmax;  // the output layer's loss; hs, ns, ova: the fasttext model only
  int64_t neg = 5;            // train.loss ns: negatives drawn per example
  int64_t max_steps = 0;
  int64_t log_every = 0;
  bool tensorboard = false;   // RUN/tb/ event files with metrics.csv's scalars
  bool profile = false;       // RUN/profile/trace.json of profile_steps steps
  int64_t profile_from = 10;  // the first step profiled (after the first steps' warm-up)
  int64_t profile_steps = 5;
  double checkpoint_minutes = 10.0;
  SaveLast save_last = SaveLast::automatic;  // which epoch ends write last.ckpt
  int64_t accumulate = 1;
  double clip_norm = 0.0;
  OnNonfinite on_nonfinite = OnNonfinite::stop;  // a NaN/inf loss or gradient
  double max_norm = 0.0;    // bound on the L2 norm of each output-layer weight row; 0: off
  double bucket_mb = 25.0;  // distributed: dense gradients per all-reduce
  double label_smoothing = 0.0;
  std::vector<std::string> class_weights;
  int64_t eval_every = 0;
  BestMetric best_metric = BestMetric::accuracy;
  std::string best_label;  // the label whose F1 best_metric label_f1 follows
  double threshold = 0.5;  // multi-label: a label is predicted when its probability exceeds this
  int64_t patience = 0;
  double min_delta = 0.0;
  std::string init_from;
  std::vector<std::string> freeze;
  Precision precision = Precision::fp32;  // autocast
  // Activation recomputation; every: blocks 0, k, 2k, ... (k: gradient_checkpointing_every).
  GradientCheckpointing gradient_checkpointing = GradientCheckpointing::off;
  int64_t gradient_checkpointing_every = 2;
  LossScaling loss_scaling = LossScaling::automatic;  // auto: on for fp16 only
  int64_t loss_scale_growth_interval = 2000;
  // The fused SGD loop without autograd (models with one, plain SGD, fp32, CPU, one
  // process); threads > 1 train Hogwild-style and give up bit-exact resume.
  FastPath fast_path = FastPath::automatic;
  int64_t fast_path_threads = 1;
  OptimizerConfig optimizer;
  SchedulerConfig scheduler;
  DistillConfig distill;
  PruneConfig prune;
};

// pretrain: masked-token pretraining of an encoder (`sift pretrain`, issue #43). A config
// with pretrain.files pretrains; the data.* splits are then not read.
struct PretrainConfig {
  std::vector<std::string> files;  // unlabelled texts, one a line (patterns, as data.train.path)
  std::vector<std::string> valid;  // held-out unlabelled texts for masked-token accuracy
  double mask_rate = 0.15;         // share of the tokens (or words) predicted
  bool whole_word = false;         // choose words with their "##" continuations
  int64_t max_tokens = 128;        // packed sequence length
  int64_t unigram_lines = 10000;   // texts whose id shares start the head's bias (0: zero)
};

struct SiftConfig {
  RunConfig run;
  DataConfig data;
  TokenizerConfig tokenizer;
  ModelConfig model;
  TrainConfig train;
  PretrainConfig pretrain;

  // Where each explicitly given key came from ("file.yaml:12" or "--set"); keys not
  // here hold their defaults.
  std::map<std::string, std::string> origin;
  std::string source;  // the config file it was read from
};

}  // namespace sift
