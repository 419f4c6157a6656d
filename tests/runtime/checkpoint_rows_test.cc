// Tables that began as a uniform fill are stored as the rows that differ from it
// (Checkpoint::fills): smaller files, the same tensors back bit for bit.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "framework/runtime/checkpoint.h"
#include "models/init.h"
#include "tests/test_files.h"

namespace sift {
namespace checkpoint_rows_test {

using sift::testing::error_of;

constexpr int64_t kRows = 5000;
constexpr int64_t kWidth = 10;
constexpr uint64_t kDenseBytes = kRows * kWidth * sizeof(float);

struct TableImpl : torch::nn::Module {
  TableImpl() {
    table = register_parameter("table", torch::empty({kRows, kWidth}));
    bias = register_parameter("bias", torch::randn({3}));
  }
  torch::Tensor table, bias;
};
TORCH_MODULE(Table);

uint32_t version_of(const std::string& path) {
  const std::string bytes = testing::slurp(path);
  uint32_t version = 0;
  std::memcpy(&version, bytes.data() + 8, sizeof(version));
  return version;
}

bool bitwise_equal(const torch::Tensor& a, const torch::Tensor& b) {
  return a.sizes() == b.sizes() &&
         std::memcmp(a.data_ptr(), b.data_ptr(), a.numel() * a.element_size()) == 0;
}

class CheckpointRowsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::make_temp_dir("sift_checkpoint_rows");
    torch::manual_seed(5);
    fill_ = fast_uniform_(saved_->table, -0.1, 0.1).value();
  }
  // Saves saved_ with its fill; returns the path.
  std::string save(const std::string& name) {
    Checkpoint c;
    c.meta = {{"model", "table"}};
    c.tensor_blobs["model"] = named_tensors(*saved_);
    c.fills["model"] = {{"table", fill_}};
    const std::string path = dir_ + "/" + name;
    save_checkpoint(path, c);
    return path;
  }
  // A module whose table holds another fill.
  Table fresh() {
    Table t;
    torch::manual_seed(77);
    fast_uniform_(t->table, -0.5, 0.5);
    return t;
  }
  std::string dir_;
  Table saved_;
  UniformFill fill_;
};

TEST_F(CheckpointRowsTest, ATableTrainingBarelyTouchedIsStoredAsItsChangedRows) {
  torch::NoGradGuard no_grad;
  saved_->table[3] += 1.0;
  saved_->table[4999][9] = -0.0f;  // differs from the fill's value in its bits
  saved_->table[2500][0] = std::numeric_limits<float>::quiet_NaN();
  saved_->table[2501].zero_();
  const std::string path = save("rows.ckpt");
  EXPECT_LT(testing::slurp(path).size(), kDenseBytes / 50);
  EXPECT_EQ(version_of(path), kCheckpointVersion);
  for (const std::vector<std::string>& on_disk : {std::vector<std::string>{}, {"model"}}) {
    Table loaded = fresh();
    ASSERT_FALSE(bitwise_equal(loaded->table, saved_->table));
    const TensorFills fills = load_model_weights(*loaded, load_checkpoint(path, on_disk), path);
    EXPECT_TRUE(bitwise_equal(loaded->table, saved_->table));
    EXPECT_TRUE(bitwise_equal(loaded->bias, saved_->bias));
    ASSERT_EQ(fills.count("table"), 1u);
    EXPECT_EQ(fills.at("table").state, fill_.state);
    EXPECT_EQ(fills.at("table").lo, fill_.lo);
    EXPECT_EQ(fills.at("table").hi, fill_.hi);
  }
}

TEST_F(CheckpointRowsTest, ATableMostlyChangedIsStoredWhole) {
  torch::NoGradGuard no_grad;
  saved_->table.slice(0, 0, kRows / 2 + 100).mul_(0.5);
  const std::string path = save("dense.ckpt");
  EXPECT_GT(testing::slurp(path).size(), kDenseBytes);
  EXPECT_EQ(version_of(path), 1u);  // older builds read it
  Table loaded = fresh();
  EXPECT_TRUE(load_model_weights(*loaded, load_checkpoint(path), path).empty());
  EXPECT_TRUE(bitwise_equal(loaded->table, saved_->table));
}

TEST_F(CheckpointRowsTest, AnUntouchedTableIsStoredAsItsFillAlone) {
  const std::string path = save("untouched.ckpt");
  EXPECT_LT(testing::slurp(path).size(), 1000u);
  Table loaded = fresh();
  load_model_weights(*loaded, load_checkpoint(path), path);
  EXPECT_TRUE(bitwise_equal(loaded->table, saved_->table));
}

TEST_F(CheckpointRowsTest, ARowIndexOutOfOrderIsNamedAsCorruption) {
  torch::NoGradGuard no_grad;
  saved_->table[10] += 1.0;
  saved_->table[20] += 1.0;
  const std::string path = save("rows.ckpt");
  std::string bytes = load_checkpoint(path).blobs.at("model");
  // The indices 10 and 20 as int64 follow the fill; make the second 5.
  const int64_t ten = 10, twenty = 20, five = 5;
  const auto at = bytes.find(std::string(reinterpret_cast<const char*>(&ten), 8) +
                             std::string(reinterpret_cast<const char*>(&twenty), 8));
  ASSERT_NE(at, std::string::npos);
  std::memcpy(&bytes[at + 8], &five, 8);
  Table loaded = fresh();
  const std::string m = error_of([&] { load_module_bytes(*loaded, bytes, path); });
  EXPECT_CONTAINS(m, path);
  EXPECT_CONTAINS(m, "corrupted checkpoint (tensor 'table')");
}

TEST_F(CheckpointRowsTest, ATableOfAnotherShapeIsRefusedAsBefore) {
  const std::string path = save("rows.ckpt");
  struct SmallImpl : torch::nn::Module {
    SmallImpl() {
      register_parameter("table", torch::zeros({kRows - 1, kWidth}));
      register_parameter("bias", torch::zeros({3}));
    }
  };
  SmallImpl small;
  const std::string m = error_of([&] { load_model_weights(small, load_checkpoint(path), path); });
  EXPECT_CONTAINS(m, "do not fit");
  EXPECT_CONTAINS(m, "[5000, 10]");
}

}  // namespace checkpoint_rows_test
}  // namespace sift
