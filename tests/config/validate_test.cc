// The checks between options (config/validate.cc), against made-up model traits: config
// knows no model, only what the registry says of each.
#include "config/validate.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "config/loader.h"
#include "core/error.h"
#include "tests/test_files.h"

namespace sift {
namespace validate_test {

std::vector<ModelTraits> models() {
  ModelTraits bag{"fasttext", "bag of words", {"model.dim", "model.ngrams", "model.buckets"}};
  bag.recomputation = false;
  bag.losses = {Loss::softmax, Loss::hs, Loss::ns, Loss::ova};
  bag.parameters = [](const ModelConfig& m) { return double(m.buckets) * double(m.dim); };
  bag.size_keys = {"model.buckets", "model.dim"};
  ModelTraits cnn{"textcnn", "convolutions", {"model.dim", "model.widths", "model.dropout"}};
  cnn.recomputation = true;
  ModelTraits rnn{"rnn", "recurrent", {"model.dim", "model.cell", "model.hidden"}};
  rnn.recomputation = true;
  rnn.fp16 = false;
  return {bag, cnn, rnn};
}

// The error validate() throws for a config with these overrides (and training data), or "".
std::string error_of(std::vector<std::string> overrides) {
  overrides.insert(overrides.begin(), "data.train.path=[train.txt]");
  try {
    validate(load_config("", overrides), models());
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.rfind(prefix, 0) == 0;
}

TEST(Validate, AConfigOfDefaultsWithTrainingDataPasses) { EXPECT_EQ(error_of({}), ""); }

TEST(Validate, Fp16OnTheCpuIsRefusedNamingTheKey) {
  const std::string m = error_of({"train.precision=fp16", "model.type=textcnn"});
  EXPECT_TRUE(starts_with(m, "train.precision: fp16 needs a CUDA device")) << m;
  EXPECT_EQ(error_of({"train.precision=fp16", "run.device=cuda", "model.type=textcnn"}), "");
  EXPECT_EQ(error_of({"train.precision=bf16"}), "");
}

TEST(Validate, DistillationSettingsWithoutATeacherAreRefusedNamingTheKey) {
  const std::string t = error_of({"train.distill.temperature=4"});
  EXPECT_TRUE(starts_with(t, "train.distill.temperature: Set without train.distill.teacher")) << t;
  const std::string a = error_of({"train.distill.alpha=0.2"});
  EXPECT_TRUE(starts_with(a, "train.distill.alpha: Set without train.distill.teacher")) << a;
  EXPECT_EQ(error_of({"train.distill.teacher=teacher_run", "train.distill.alpha=0.2"}), "");
}

TEST(Validate, ATransferSetWithoutATeacherIsRefusedNamingTheKey) {
  const std::string u = error_of({"train.distill.unlabeled=[more.txt]"});
  EXPECT_TRUE(starts_with(u, "train.distill.unlabeled: Unlabelled texts are scored by the teacher"))
      << u;
  const std::string a = error_of({"train.distill.augment.copies=1"});
  EXPECT_TRUE(starts_with(a, "train.distill.augment.copies: Unlabelled texts")) << a;
  EXPECT_EQ(error_of({"train.distill.teacher=t", "train.distill.unlabeled=[more.txt]",
                      "train.distill.unlabeled_ratio=2", "train.distill.augment.copies=0.5",
                      "train.distill.augment.mask=0.2", "train.distill.augment.ngram=0"}),
            "");
}

TEST(Validate, TransferSettingsWithoutWhatTheyTuneAreRefusedNamingTheKey) {
  const std::string r = error_of({"train.distill.teacher=t", "train.distill.unlabeled_ratio=2"});
  EXPECT_TRUE(starts_with(r, "train.distill.unlabeled_ratio: Set without train.distill.unlabeled"))
      << r;
  const std::string m = error_of({"train.distill.teacher=t", "train.distill.augment.mask=0.3"});
  EXPECT_TRUE(starts_with(m, "train.distill.augment.mask: Set while train.distill.augment.copies"))
      << m;
  const std::string zero =
      error_of({"train.distill.teacher=t", "train.distill.augment.copies=1",
                "train.distill.augment.mask=0", "train.distill.augment.ngram=0"});
  EXPECT_TRUE(starts_with(zero, "train.distill.augment.copies: Both")) << zero;
}

TEST(Validate, TransferRatiosAndProbabilitiesOutOfRangeAreRefusedNamingTheKey) {
  for (const char* bad : {"train.distill.unlabeled_ratio=0", "train.distill.unlabeled_ratio=-1",
                          "train.distill.augment.mask=1.5", "train.distill.augment.ngram=-0.1",
                          "train.distill.augment.copies=-1"}) {
    const std::string key = std::string(bad).substr(0, std::string(bad).find('='));
    const std::string m = error_of({"train.distill.teacher=t", bad});
    EXPECT_NE(m.find(key), std::string::npos) << bad << ": " << m;
  }
}

TEST(Validate, FastTextLossesAreRefusedForOtherModelsNamingTheKey) {
  for (const char* loss : {"hs", "ns", "ova"}) {
    const std::string m = error_of({std::string("train.loss=") + loss, "model.type=textcnn"});
    EXPECT_TRUE(starts_with(m, "train.loss: The textcnn model trains with softmax only")) << m;
    EXPECT_NE(m.find("it works with fasttext"), std::string::npos) << m;
    EXPECT_EQ(error_of({std::string("train.loss=") + loss}), "") << loss;
  }
}

TEST(Validate, TooFewNegativesAreRefusedNamingTheKey) {
  // The option table's own bound, as every --set names its key.
  const std::string m = error_of({"train.loss=ns", "train.neg=0"});
  EXPECT_TRUE(starts_with(m, "--set train.neg: option 'train.neg': The value must be >= 1")) << m;
  EXPECT_EQ(error_of({"train.loss=ns", "train.neg=1"}), "");
}

TEST(Validate, NegativesWithoutNegativeSamplingAreRefused) {
  const std::string m = error_of({"train.loss=hs", "train.neg=10"});
  EXPECT_TRUE(starts_with(m, "train.neg: Negatives are drawn by train.loss ns only")) << m;
}

TEST(Validate, TreeAndSampledLossesRefuseMultiLabelDataAndLossShaping) {
  EXPECT_TRUE(starts_with(error_of({"train.loss=hs", "data.multi_label=true"}), "train.loss: hs"));
  EXPECT_TRUE(starts_with(error_of({"train.loss=ns", "data.multi_label=true"}), "train.loss: ns"));
  EXPECT_EQ(error_of({"train.loss=ova", "data.multi_label=true"}), "");
  const std::string m = error_of({"train.loss=hs", "train.label_smoothing=0.1"});
  EXPECT_TRUE(starts_with(m, "train.loss: hs does not combine with train.label_smoothing")) << m;
}

TEST(Validate, APrecisionTheModelDoesNotTrainInIsRefused) {
  const std::string m = error_of({"train.precision=fp16", "run.device=cuda", "model.type=rnn"});
  EXPECT_TRUE(starts_with(m, "train.precision: The rnn model does not train in fp16")) << m;
}

TEST(Validate, GradientCheckpointingNeedsAModelWithRecomputation) {
  const std::string m = error_of({"train.gradient_checkpointing=all", "model.type=fasttext"});
  EXPECT_TRUE(starts_with(m, "train.gradient_checkpointing: The fasttext model")) << m;
  EXPECT_NE(m.find("it works with textcnn, rnn"), std::string::npos) << m;
  EXPECT_EQ(error_of({"train.gradient_checkpointing=every", "model.type=textcnn"}), "");
}

TEST(Validate, AHeldOutFoldMustBeBelowTheFolds) {
  const std::string m = error_of({"data.folds=3", "data.fold=3"});
  EXPECT_TRUE(starts_with(m, "data.fold: The held-out fold must be below data.folds")) << m;
  EXPECT_EQ(error_of({"data.folds=3", "data.fold=2"}), "");
}

TEST(Validate, CrossValidationRefusesATestPath) {
  const std::string m = error_of({"data.folds=3", "data.test.path=[test.txt]"});
  EXPECT_TRUE(starts_with(m, "data.test.path: Cross-validation")) << m;
}

TEST(Validate, AModelOptionTheModelDoesNotReadIsRefused) {
  const std::string m = error_of({"model.type=textcnn", "model.ngrams=2"});
  EXPECT_NE(m.find("option 'model.ngrams' does not apply to model 'textcnn'"), std::string::npos)
      << m;
  EXPECT_EQ(error_of({"model.type=textcnn", "model.widths=[2, 3]"}), "");
}

TEST(Validate, ADumpedConfigMayListTheOptionsOfEveryModel) {
  const SiftConfig c = load_config("", {"model.type=textcnn", "data.train.path=[a.txt]"});
  const std::string dir = testing::make_temp_dir("sift_validate");
  const std::string path = dir + "/sift_validate_dump.yaml";
  {
    FILE* f = std::fopen(path.c_str(), "w");
    const std::string dump = dump_config(c);
    std::fwrite(dump.data(), 1, dump.size(), f);
    std::fclose(f);
  }
  EXPECT_NO_THROW(validate(load_config(path), models()));
}

TEST(Validate, AnUnknownModelTypeNamesTheKnownOnes) {
  SiftConfig c = load_config("", {"data.train.path=[a.txt]"});
  c.model.type = "bert";
  try {
    validate(c, models());
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "model.type: unknown model type 'bert' (known: fasttext, textcnn, rnn)");
  }
}

TEST(Validate, MicroF1NeedsMultiLabelData) {
  const std::string m = error_of({"train.best_metric=micro_f1"});
  EXPECT_TRUE(starts_with(m, "train.best_metric: micro_f1 is a multi-label metric")) << m;
  EXPECT_EQ(error_of({"train.best_metric=micro_f1", "data.multi_label=true"}), "");
}

TEST(Validate, LabelF1NeedsBestLabelAndBestLabelNeedsLabelF1) {
  const std::string none = error_of({"train.best_metric=label_f1"});
  EXPECT_TRUE(starts_with(none, "train.best_label: train.best_metric label_f1")) << none;
  const std::string alone = error_of({"train.best_label=spam"});
  EXPECT_TRUE(starts_with(alone, "train.best_label: 'spam' is only read with")) << alone;
  EXPECT_EQ(error_of({"train.best_metric=label_f1", "train.best_label=spam"}), "");
}

TEST(Validate, TrainingDataMustBeGiven) {
  try {
    validate(load_config("", {}), models());
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_TRUE(starts_with(e.what(), "data.train.path: The training data must be given"));
  }
}

TEST(Validate, ColumnFormatsNeedTextAndLabelColumns) {
  const std::string m = error_of({"data.valid.format=tsv"});
  EXPECT_TRUE(starts_with(m, "data.valid: The tsv format needs 'text' and 'label' columns")) << m;
  EXPECT_EQ(error_of({"data.format=tsv", "data.text=1", "data.label=0"}), "");
}

TEST(Validate, IndexLabelsNeedLabelNames) {
  const std::string m = error_of({"data.test.label_mapping=index1"});
  EXPECT_TRUE(starts_with(m, "data.test.label_mapping: Index labels need the label names")) << m;
  EXPECT_EQ(error_of({"data.label_mapping=index0", "data.labels=[a, b]"}), "");
}

TEST(Validate, StopWordsApplyToTheWordTokenizerOnly) {
  const std::string m = error_of({"tokenizer.type=sentencepiece", "tokenizer.stopwords=english"});
  EXPECT_TRUE(starts_with(m, "tokenizer.stopwords: Stop words and dropped punctuation")) << m;
  const std::string d =
      error_of({"tokenizer.type=sentencepiece", "tokenizer.drop_punctuation=true"});
  EXPECT_TRUE(starts_with(d, "tokenizer.drop_punctuation:")) << d;
}

}  // namespace validate_test
}  // namespace sift

namespace sift {
namespace validate_test {

TEST(Validate, AModelTooLargeForMemoryIsRefusedNamingItsKeysBeforeAllocating) {
  // 9223372036854775807 x 100 overflowed an int64 size; the estimate is in double.
  const std::string m = error_of({"model.buckets=9223372036854775807"});
  EXPECT_TRUE(starts_with(m, "model.buckets, model.dim: the fasttext model needs about ")) << m;
  EXPECT_NE(m.find("9.22e+20 parameters x 4 bytes x 2: weights, gradients and sgd's state"),
            std::string::npos)
      << m;
  EXPECT_NE(error_of({"model.buckets=1000000000000", "train.optimizer.momentum=0.9"})
                .find("x 3: weights, gradients and sgd's state"),
            std::string::npos);
  // Adam keeps two moments more: 4 tensors per parameter.
  EXPECT_NE(error_of({"model.buckets=1000000000000", "train.optimizer.type=adam"})
                .find("x 4: weights, gradients and adam's state"),
            std::string::npos);
  EXPECT_EQ(error_of({"model.buckets=1000000"}), "");  // 400 MB
}

// tokenizer.piece_ids albert and fairseq read a SentencePiece model's ids (`sift import hf`
// sets them with tokenizer.type sentencepiece).
TEST(Validate, PieceIdsOfAPretrainedModelNeedASentencePieceTokenizer) {
  EXPECT_EQ(error_of({"tokenizer.piece_ids=albert"}),
            "tokenizer.piece_ids: albert reads a SentencePiece model; set tokenizer.type: "
            "sentencepiece");
  EXPECT_EQ(error_of({"tokenizer.piece_ids=fairseq", "tokenizer.type=sentencepiece"}), "");
}

// ALBERT's shared layers (model.layer_repeats) are not gathered by run.shard: parameters,
// which would reduce a shared layer's gradients once per application.
TEST(Validate, SharedLayersAreRefusedUnderParameterSharding) {
  ModelTraits encoder{"enc", "encoder", {"model.dim", "model.layers", "model.layer_repeats"}};
  encoder.recomputation = true;
  encoder.parameter_shards = ParameterShards::layers;
  const auto error = [&](const std::string& repeats) {
    try {
      validate(load_config("", {"data.train.path=[train.txt]", "model.type=enc",
                                "run.shard=parameters", "model.layer_repeats=" + repeats}),
               {encoder});
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(error("1"), "");
  EXPECT_CONTAINS(error("2"), "run.shard: parameters: model.layer_repeats applies each layer's");
}

}  // namespace validate_test
}  // namespace sift
