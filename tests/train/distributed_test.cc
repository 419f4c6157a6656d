// Data-parallel training on c10d with two real processes on the loopback interface: the
// test starts this binary twice more (DistributedWorker.Run, which skips unless started
// so), with torchrun's environment and a port chosen free at test time.
#include "framework/train/distributed.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <torch/torch.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "../free_port.h"
#include "config/loader.h"
#include "core/error.h"
#include "datasets/shard_writer.h"
#include "framework/runtime/base/task.h"
#include "framework/runtime/checkpoint.h"
#include "framework/train/distributed_training.h"
#include "tests/test_files.h"

extern char** environ;

namespace sift {
namespace distributed_test {

namespace fs = std::filesystem;

// fastText's shape with both kinds of gradient: a sparse and a dense embedding table.
struct NetImpl : torch::nn::Module {
  NetImpl() {
    sparse = register_module(
        "sparse", torch::nn::EmbeddingBag(
                      torch::nn::EmbeddingBagOptions(50, 8).mode(torch::kMean).sparse(true)));
    dense = register_module(
        "dense", torch::nn::EmbeddingBag(torch::nn::EmbeddingBagOptions(50, 8).mode(torch::kSum)));
    out = register_module("out", torch::nn::Linear(8, 3));
  }
  torch::Tensor forward(const torch::Tensor& ids, const torch::Tensor& offsets) {
    return out(torch::tanh(sparse(ids, offsets) + dense(ids, offsets)));
  }
  torch::nn::EmbeddingBag sparse{nullptr}, dense{nullptr};
  torch::nn::Linear out{nullptr};
};
TORCH_MODULE(Net);

struct Example {
  std::vector<int64_t> ids;
  int64_t label;
};

// Global batches of 8, then 5 and 3 examples: with 4 per rank, rank 1 gets 1 and then
// none (uneven inputs: it must add zero gradients and weigh by example count).
std::vector<std::vector<Example>> global_batches() {
  std::mt19937 rng(7);
  std::vector<std::vector<Example>> batches;
  for (int size : {8, 8, 8, 8, 5, 3}) {
    std::vector<Example> batch;
    for (int i = 0; i < size; ++i) {
      Example e;
      const int length = 1 + static_cast<int>(rng() % 5);
      for (int k = 0; k < length; ++k) e.ids.push_back(static_cast<int64_t>(rng() % 50));
      e.label = static_cast<int64_t>(rng() % 3);
      batch.push_back(std::move(e));
    }
    batches.push_back(std::move(batch));
  }
  return batches;
}

constexpr int64_t kPerRank = 4;

// SGD steps over this rank's share of each global batch, as the trainer takes them.
void train_steps(Net& net, Distributed* dist) {
  const int64_t rank = dist ? dist->rank() : 0;
  const int64_t world = dist ? dist->world_size() : 1;
  const int64_t per_rank = dist ? kPerRank : 2 * kPerRank;
  torch::optim::SGD sgd(net->parameters(), torch::optim::SGDOptions(0.5));
  for (const auto& global : global_batches()) {
    const auto begin = std::min<int64_t>(rank * per_rank, global.size());
    const auto end = std::min<int64_t>(begin + per_rank, global.size());
    std::vector<int64_t> ids, offsets, labels;
    for (auto i = begin; i < end; ++i) {
      offsets.push_back(static_cast<int64_t>(ids.size()));
      ids.insert(ids.end(), global[i].ids.begin(), global[i].ids.end());
      labels.push_back(global[i].label);
    }
    const int64_t n = end - begin;
    double scale = 1.0;
    if (dist) {
      const BatchAgreement all = dist->agree_on_batch(n > 0, n);
      ASSERT_TRUE(all.any);
      ASSERT_EQ(all.examples, static_cast<int64_t>(global.size()));
      scale = rank_loss_scale(LossReduction::mean, n, all.examples, world);
    }
    if (n > 0) {
      auto logits = net->forward(torch::tensor(ids), torch::tensor(offsets));
      (torch::nn::functional::cross_entropy(logits, torch::tensor(labels)) * scale).backward();
    }
    if (dist) dist->average_gradients(*net);
    sgd.step();
    sgd.zero_grad();
  }
}

// The worker: started by the tests below with RANK etc. in its environment.
TEST(DistributedWorker, Run) {
  const char* out = std::getenv("SIFT_TEST_DIST_OUT");
  if (out == nullptr) GTEST_SKIP() << "runs only as a child of the Distributed tests";
  at::set_num_threads(1);
  DistributedOptions options;
  options.timeout = std::chrono::seconds(20);
  options.bucket_mb = std::atof(std::getenv("SIFT_TEST_BUCKET_MB"));
  auto dist = join_from_environment(options);
  ASSERT_TRUE(dist);
  const int64_t rank = dist->rank();
  torch::manual_seed(static_cast<uint64_t>(100 + rank));  // different until broadcast
  Net net;
  dist->broadcast_parameters(*net);
  train_steps(net, dist.get());

  nlohmann::json report;
  // Confusion matrices: rank r saw r + 1 examples of class 0 predicted as class 1.
  Evaluation e;
  e.confusion = ConfusionMatrix(2);
  e.loss = 0.5 + static_cast<double>(rank);
  for (int64_t i = 0; i <= rank; ++i) e.confusion.add(0, 1);
  reduce_evaluation(*dist, e);
  report["cells"] = e.confusion.cells();
  report["loss"] = e.loss;
  // Multi-label counts: rank r saw r + 1 records with labels {0}, predicted {0, 1}.
  Evaluation m;
  m.multi_label = true;
  m.multi = MultiLabelCounts(2);
  const uint8_t truth[2] = {1, 0}, predicted[2] = {1, 1};
  for (int64_t i = 0; i <= rank; ++i) m.multi.add(truth, predicted);
  reduce_evaluation(*dist, m);
  report["multi_examples"] = m.multi.examples();
  report["multi_micro_precision"] = m.multi.micro_precision();
  report["gathered"] = dist->all_gather(std::string(static_cast<size_t>(rank) * 3, 'a' + rank));
  report["shared"] = dist->share_from_primary("test", rank == 0 ? "from rank 0" : "");
  report["primary_says"] = dist->primary_says(rank == 0);
  std::ofstream(std::string(out) + ".json") << report.dump();
  std::ofstream(std::string(out) + ".weights", std::ios::binary) << module_bytes(*net);
}

using testing::free_port;

class Distributed2 : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/sift_dist_XXXXXX";
    dir_ = mkdtemp(tmpl);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Runs the worker as ranks 0 and 1; true when both exit cleanly.
  bool run_workers(double bucket_mb) {
    const int port = free_port();
    std::vector<pid_t> pids;
    for (int rank = 0; rank < 2; ++rank) {
      std::vector<std::string> env;
      for (char** e = environ; *e != nullptr; ++e) env.emplace_back(*e);
      env.push_back("RANK=" + std::to_string(rank));
      env.push_back("WORLD_SIZE=2");
      env.push_back("MASTER_ADDR=127.0.0.1");
      env.push_back("MASTER_PORT=" + std::to_string(port));
      env.push_back("SIFT_TEST_BUCKET_MB=" + std::to_string(bucket_mb));
      env.push_back("SIFT_TEST_DIST_OUT=" + dir_ + "/rank" + std::to_string(rank));
      std::vector<char*> envp;
      for (auto& s : env) envp.push_back(s.data());
      envp.push_back(nullptr);
      std::string self = fs::read_symlink("/proc/self/exe").string();
      std::string filter = "--gtest_filter=DistributedWorker.Run";
      char* argv[] = {self.data(), filter.data(), nullptr};
      pid_t pid = 0;
      if (posix_spawn(&pid, self.c_str(), nullptr, nullptr, argv, envp.data()) != 0) return false;
      pids.push_back(pid);
    }
    bool ok = true;
    for (pid_t pid : pids) {
      int status = 0;
      ::waitpid(pid, &status, 0);
      ok = ok && WIFEXITED(status) && WEXITSTATUS(status) == 0;
    }
    return ok;
  }

  nlohmann::json report(int rank) const {
    std::ifstream in(dir_ + "/rank" + std::to_string(rank) + ".json");
    return nlohmann::json::parse(in);
  }

  Net weights(int rank) const {
    Net net;
    load_module_bytes(*net, testing::slurp(dir_ + "/rank" + std::to_string(rank) + ".weights"),
                      "rank weights");
    return net;
  }

  std::string dir_;
};

// Tiny buckets (every tensor its own all-reduce) and one bucket for all: the same result.
TEST_F(Distributed2, TwoRanksWithBatchBMatchOneProcessWithBatch2B) {
  torch::manual_seed(100);
  Net single;
  train_steps(single, nullptr);
  for (double bucket_mb : {0.0001, 25.0}) {
    ASSERT_TRUE(run_workers(bucket_mb)) << "a worker failed (bucket_mb " << bucket_mb << ")";
    Net r0 = weights(0), r1 = weights(1);
    const auto p0 = r0->named_parameters(), p1 = r1->named_parameters();
    const auto ps = single->named_parameters();
    for (const auto& item : p0) {
      const std::string& name = item.key();
      // Identical on both ranks, bit for bit.
      EXPECT_TRUE(torch::equal(item.value(), p1[name])) << name << " differs between ranks";
      // And what one process with the whole batch computes, up to float rounding.
      EXPECT_TRUE(torch::allclose(item.value(), ps[name], 1e-4, 1e-6))
          << name << " max difference " << (item.value() - ps[name]).abs().max().item<float>();
    }
    // The parameters moved (a test whose training did nothing would pass the above).
    torch::manual_seed(100);
    Net initial;
    EXPECT_FALSE(torch::allclose(initial->out->weight, r0->out->weight));
  }
}

TEST_F(Distributed2, SmallCollectivesSumGatherAndShare) {
  ASSERT_TRUE(run_workers(25.0));
  for (int rank = 0; rank < 2; ++rank) {
    const auto r = report(rank);
    // 1 + 2 examples of (truth 0, predicted 1); losses 0.5 x 1 and 1.5 x 2 over 3.
    EXPECT_EQ(r["cells"], nlohmann::json({0, 1, 3}));  // one nonzero cell: (0, 1) x 3
    EXPECT_NEAR(r["loss"].get<double>(), (0.5 + 3.0) / 3.0, 1e-12);
    EXPECT_EQ(r["multi_examples"].get<int64_t>(), 3);
    EXPECT_NEAR(r["multi_micro_precision"].get<double>(), 0.5, 1e-12);
    EXPECT_EQ(r["gathered"], nlohmann::json({"", "bbb"}));
    EXPECT_EQ(r["shared"], "from rank 0");
    EXPECT_EQ(r["primary_says"], true);
  }
}

// The trainer's partition of every split: each record exactly once per epoch over the
// ranks, with shards of very different sizes (gzip cannot be split, so rank 0 reads far
// more than rank 1) over two epochs.
TEST_F(Distributed2, RanksTogetherReadEveryTrainingRecordOncePerEpoch) {
  std::vector<std::string> files;
  int record = 0;
  for (int shard = 0; shard < 3; ++shard) {
    const int lines = shard == 0 ? 400 : 25;
    std::string text;
    for (int i = 0; i < lines; ++i, ++record)
      text += fmt::format("__label__{} w{}\n", record % 2, record);
    const std::string path = dir_ + "/shard" + std::to_string(shard) + ".txt.gz";
    TextFileWriter writer(path, Compression::kGzip);
    writer.write(text);
    writer.commit();
    files.push_back(path);
  }
  const SiftConfig config =
      load_config("", {"data.train.path=" + dir_ + "/shard*.txt.gz", "data.valid_split=0",
                       "data.workers=2", "data.shuffle_buffer=50", "train.batch_size=7"});
  const DataPlan plan = resolve_data(config);
  const Task task = build_task(plan);
  const TextEncoder encoder = make_encoder(task);
  for (uint64_t epoch = 1; epoch <= 2; ++epoch) {
    std::vector<int> seen(static_cast<size_t>(task.vocab->size()), 0);
    std::vector<int64_t> per_rank;
    for (int64_t rank = 0; rank < 2; ++rank) {
      auto stream = open_stream(plan, Split::train, encoder, task.labels, true, rank, 2);
      stream->start_epoch(epoch);
      RawBatch batch;
      int64_t n = 0;
      while (stream->next(batch)) {
        for (int64_t id : batch.ids) ++seen[static_cast<size_t>(id)];
        n += batch.size();
      }
      per_rank.push_back(n);
    }
    EXPECT_EQ(per_rank[0] + per_rank[1], record);
    EXPECT_NE(per_rank[0], per_rank[1]);  // uneven: the trainer must cope
    for (int64_t id = Vocab::kUnk + 1; id < task.vocab->size(); ++id) {
      if (task.vocab->word(id)[0] != 'w') continue;  // "__label__"-free words only
      EXPECT_EQ(seen[static_cast<size_t>(id)], 1) << task.vocab->word(id) << " epoch " << epoch;
    }
  }
}

TEST(DistributedEnvironment, ReadsTorchrunVariablesAndRefusesBadOnes) {
  unsetenv("WORLD_SIZE");
  EXPECT_FALSE(distributed_env_from_environment());
  setenv("WORLD_SIZE", "4", 1);
  setenv("RANK", "2", 1);
  setenv("MASTER_ADDR", "10.0.0.1", 1);
  setenv("MASTER_PORT", "23456", 1);
  unsetenv("LOCAL_RANK");
  const auto env = distributed_env_from_environment();
  ASSERT_TRUE(env);
  EXPECT_EQ(env->rank, 2);
  EXPECT_EQ(env->world_size, 4);
  EXPECT_EQ(env->master_addr, "10.0.0.1");
  EXPECT_EQ(env->master_port, 23456);
  setenv("RANK", "4", 1);
  try {
    distributed_env_from_environment();
    ADD_FAILURE() << "RANK 4 in a world of 4 was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("RANK='4'"), std::string::npos) << e.what();
  }
  for (const char* v : {"WORLD_SIZE", "RANK", "MASTER_ADDR", "MASTER_PORT"}) unsetenv(v);
}

// Inside an epoch each rank's data position is saved; at an epoch's end nothing ties the
// checkpoint to its number of processes.
TEST(DistributedResume, RefusesAnotherWorldSizeInsideAnEpochNamingBoth) {
  const nlohmann::json inside{{"world_size", 2}, {"epoch_complete", false}};
  EXPECT_NO_THROW(check_world_size(inside, "run/last.ckpt", 2));
  EXPECT_NO_THROW(check_world_size({{"epoch_complete", false}}, "run/last.ckpt", 1));
  EXPECT_NO_THROW(
      check_world_size({{"world_size", 3}, {"epoch_complete", true}}, "run/last.ckpt", 2));
  EXPECT_NO_THROW(
      check_world_size({{"world_size", 3}, {"epoch_complete", true}}, "run/last.ckpt", 1));
  try {
    check_world_size(inside, "run/last.ckpt", 1);
    ADD_FAILURE() << "resumed 2 ranks' checkpoint with 1";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("run/last.ckpt was written by a run of 2 process(es) inside an epoch and "
                     "this one has 1"),
              std::string::npos)
        << m;
  }
  EXPECT_EQ(rank_blob("data", 0), "data");
  EXPECT_EQ(rank_blob("data", 3), "data.3");
}

}  // namespace distributed_test
}  // namespace sift

namespace sift {
namespace distributed_test {

// The trainer holds a group of one in a single process: every collective answers from
// this process's own values, so the loop needs no single-process branches.
TEST(DistributedGroupOfOne, AnswersEveryCollectiveWithItsOwnValues) {
  Distributed one;
  EXPECT_FALSE(one.is_group());
  EXPECT_EQ(one.rank(), 0);
  EXPECT_EQ(one.world_size(), 1);
  EXPECT_TRUE(one.is_primary());
  const BatchAgreement all = one.agree_on_batch(true, 7);
  EXPECT_TRUE(all.any);
  EXPECT_EQ(all.examples, 7);
  std::vector<double> values{1.5, 2.5};
  one.sum(values);
  EXPECT_EQ(values, (std::vector<double>{1.5, 2.5}));
  EXPECT_TRUE(one.primary_says(true));
  EXPECT_FALSE(one.primary_says(false));
  EXPECT_EQ(one.all_gather("abc"), std::vector<std::string>{"abc"});
  EXPECT_EQ(one.share_from_primary("k", "v"), "v");
  EXPECT_EQ(rank_loss_scale(LossReduction::mean, 5, 5, 1), 1.0);
}

TEST(DistributedGroupOfOne, IsWhatAnEmptyEnvironmentJoins) {
  unsetenv("WORLD_SIZE");
  auto dist = join_from_environment(DistributedOptions{});
  ASSERT_TRUE(dist);
  EXPECT_FALSE(dist->is_group());
  torch::manual_seed(1);
  Net net;
  const auto before = net->parameters()[0].clone();
  dist->broadcast_parameters(*net);
  EXPECT_TRUE(torch::equal(before, net->parameters()[0]));
}

}  // namespace distributed_test
}  // namespace sift
