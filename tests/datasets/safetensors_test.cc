#include "datasets/safetensors.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "core/error.h"
#include "tests/test_files.h"

namespace sift {
namespace safetensors_test {

using sift::testing::error_of;
using sift::testing::make_temp_dir;
using sift::testing::slurp;
using sift::testing::write_file;

// A file of raw header text and data bytes.
std::string file_of(const std::string& header, const std::string& data) {
  std::string out(8, '\0');
  const uint64_t n = header.size();
  std::memcpy(out.data(), &n, 8);
  return out + header + data;
}

std::string parse_error(const std::string& header, const std::string& data) {
  return error_of([&] { parse_safetensors_header(file_of(header, data), "m.safetensors"); });
}

TEST(Safetensors, WrittenTensorsReadBackWithTheirShapesDtypesAndMetadata) {
  const std::string path = make_temp_dir("sift_st") + "/model.safetensors";
  const std::vector<float> w{0.5f, -2.0f, 65504.0f, std::ldexp(1.0f, -24), 0.0f, -0.0f};
  write_safetensors(path,
                    {{"a.weight", SafeDtype::f32, {2, 3}, safe_tensor_bytes(w, SafeDtype::f32)},
                     {"b.weight", SafeDtype::f16, {6}, safe_tensor_bytes(w, SafeDtype::f16)},
                     {"c.bias", SafeDtype::bf16, {3, 2}, safe_tensor_bytes(w, SafeDtype::bf16)},
                     {"empty", SafeDtype::f32, {0, 4}, ""}},
                    {{"format", "pt"}});
  const SafetensorsFile file(path);
  EXPECT_EQ(file.header().metadata.at("format"), "pt");
  ASSERT_EQ(file.header().tensors.size(), 4u);
  EXPECT_EQ(file.header().data_offset % 8, 0u) << "the header is padded to 8 bytes";
  EXPECT_EQ(file.find("a.weight")->shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(file.floats(*file.find("a.weight")), w);
  EXPECT_EQ(file.floats(*file.find("b.weight")), w) << "each value is exact in float16";
  const std::vector<float> bf = file.floats(*file.find("c.bias"));
  EXPECT_EQ(bf[0], 0.5f);
  EXPECT_EQ(bf[1], -2.0f);
  EXPECT_EQ(bf[2], 65536.0f) << "65504 rounds to 65536 in bfloat16";
  EXPECT_TRUE(file.floats(*file.find("empty")).empty());
  EXPECT_EQ(file.find("missing"), nullptr);
}

// Half and bfloat16 rounding against numpy's (python3-numpy comes with python3-torch).
TEST(Safetensors, HalfAndBfloat16RoundToNearestEvenAsNumpyAndTorchDo) {
  std::mt19937 rng(7);
  std::vector<float> values;
  for (int i = 0; i < 4000; ++i) {
    uint32_t bits = rng();
    float f;
    std::memcpy(&f, &bits, 4);
    if (std::isnan(f)) continue;
    values.push_back(i % 2 ? f
                           : std::ldexp(static_cast<float>(rng() % 100000) - 50000.0f,
                                        static_cast<int>(rng() % 50) - 40));
  }
  const std::string dir = make_temp_dir("sift_st_round");
  write_file(dir + "/f32", safe_tensor_bytes(values, SafeDtype::f32));
  write_file(dir + "/f16", safe_tensor_bytes(values, SafeDtype::f16));
  write_file(dir + "/bf16", safe_tensor_bytes(values, SafeDtype::bf16));
  const std::string script =
      "import sys, numpy as np, torch\n"
      "d = sys.argv[1]\n"
      "x = np.fromfile(d + '/f32', dtype=np.float32)\n"
      "h = np.fromfile(d + '/f16', dtype=np.uint16)\n"
      "b = np.fromfile(d + '/bf16', dtype=np.uint16)\n"
      "want_h = x.astype(np.float16).view(np.uint16)\n"
      "want_b = torch.from_numpy(x).to(torch.bfloat16).view(torch.int16).numpy().view(np.uint16)\n"
      "print(int((h != want_h).sum()), int((b != want_b).sum()))\n";
  write_file(dir + "/check.py", script);
  const std::string cmd =
      "/usr/bin/python3 " + dir + "/check.py " + dir + " > " + dir + "/out 2>" + dir + "/err";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << slurp(dir + "/err");
  EXPECT_EQ(slurp(dir + "/out"), "0 0\n") << "values that round differently: half, bfloat16";
}

TEST(Safetensors, ALengthPastTheFileOrOverTheLimitIsRefusedBeforeReading) {
  std::string file = file_of("{}", "");
  const uint64_t huge = uint64_t{1} << 40;
  std::memcpy(file.data(), &huge, 8);
  EXPECT_CONTAINS(error_of([&] { parse_safetensors_header(file, "m.safetensors"); }),
                  "safetensors file m.safetensors: declares a header of 1099511627776 bytes, "
                  "over the 104857600-byte limit");
  const uint64_t past = 100;
  std::memcpy(file.data(), &past, 8);
  EXPECT_CONTAINS(error_of([&] { parse_safetensors_header(file, "m.safetensors"); }),
                  "declares a header of 100 bytes, the file has 2 after the length");
  EXPECT_CONTAINS(error_of([] { parse_safetensors_header("abc", "m.safetensors"); }),
                  "shorter than its 8-byte header length");
}

TEST(Safetensors, EachHeaderViolationIsOneErrorNamingTheTensor) {
  const std::string four(4, '\0');
  EXPECT_CONTAINS(parse_error("[1]", ""), "the header does not start with '{'");
  EXPECT_CONTAINS(parse_error("{\"a\": ", ""), "the header is not valid JSON");
  EXPECT_CONTAINS(parse_error(R"({"a":{"dtype":"I64","shape":[1],"data_offsets":[0,8]}})",
                              std::string(8, '\0')),
                  "tensor 'a': dtype I64 is not one of F32, F16, BF16");
  EXPECT_CONTAINS(parse_error(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}})", four),
                  "tensor 'a': shape [2] of F32 needs 8 bytes, data_offsets give 4");
  EXPECT_CONTAINS(parse_error(R"({"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})", four),
                  "tensor 'a': \"shape\" holds -1, not a non-negative integer");
  EXPECT_CONTAINS(parse_error(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0]}})", four),
                  "tensor 'a': \"data_offsets\" must hold two numbers");
  EXPECT_CONTAINS(parse_error(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                              R"("a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
                              four + four),
                  "tensor 'a': named twice in the header");
  EXPECT_CONTAINS(parse_error(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                              R"("b":{"dtype":"F32","shape":[1],"data_offsets":[2,6]}})",
                              four + four),
                  "tensor 'b': its data overlaps the tensor before it");
  EXPECT_CONTAINS(
      parse_error(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", four + four),
      "tensor 'a': a gap of 4 bytes lies before its data");
  EXPECT_CONTAINS(parse_error(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", ""),
                  "tensor 'a': data_offsets end at 4, past the data section's 0 bytes");
  EXPECT_CONTAINS(
      parse_error(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", four + "xx"),
      "the data section holds 6 bytes, its tensors account for 4");
  EXPECT_CONTAINS(parse_error(R"({"__metadata__":{"k":1}})", ""),
                  "\"__metadata__\" key 'k' is not a string");
  EXPECT_CONTAINS(parse_error(R"({"a":{"dtype":"F32","shape":[4611686018427387904,4],)"
                              R"("data_offsets":[0,4]}})",
                              four),
                  "tensor 'a': shape is too large");
}

TEST(Safetensors, AMissingOrNonRegularFileIsOneError) {
  EXPECT_CONTAINS(error_of([] { SafetensorsFile f("/nonexistent/m.safetensors"); }),
                  "cannot open safetensors file /nonexistent/m.safetensors");
  const std::string dir = make_temp_dir("sift_st_dir");
  EXPECT_CONTAINS(error_of([&] { SafetensorsFile f(dir); }), "is not a regular file");
}

// Random byte flips, cuts and length edits of a valid file: every outcome is a checked
// header or one sift::Error, and every tensor of a header that passes lies in the file.
TEST(Safetensors, MutatedFilesGiveACheckedHeaderOrOneErrorNeverACrash) {
  const std::string valid = safetensors_bytes(
      {{"w", SafeDtype::f16, {2, 2}, safe_tensor_bytes({1, 2, 3, 4}, SafeDtype::f16)},
       {"b", SafeDtype::f32, {2}, safe_tensor_bytes({5, 6}, SafeDtype::f32)}},
      {{"format", "pt"}});
  std::mt19937 rng(42);
  int accepted = 0;
  for (int round = 0; round < 3000; ++round) {
    std::string file = valid;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      const size_t at = rng() % file.size();
      switch (rng() % 4) {
        case 0:
          file[at] = static_cast<char>(rng());
          break;
        case 1:
          file.resize(at);
          break;
        case 2:
          file.insert(at, 1, "{}[]\",:0123456789 "[rng() % 19]);
          break;
        default:
          file[at % 8] = static_cast<char>(rng());
          break;
      }
      if (file.empty()) break;
    }
    try {
      const SafetensorsHeader h = parse_safetensors_header(file, "fuzz");
      for (const SafeTensorInfo& t : h.tensors) {
        ASSERT_LE(h.data_offset + t.end, file.size());
        ASSERT_EQ(t.end - t.begin, static_cast<uint64_t>(t.numel()) * safe_dtype_bytes(t.dtype));
      }
      ++accepted;
    } catch (const Error&) {
    }
  }
  EXPECT_LT(accepted, 3000) << "the mutations must reach the checks";
}

}  // namespace safetensors_test
}  // namespace sift
