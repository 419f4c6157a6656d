// Sift's reader of fastText model files (tools/sift/fasttext_model_file.h, with the .ftz
// codes decoded by fasttext_pq.h and pq_decode) against Debian's libfasttext-dev
// (FastText::loadModel, then every input row through getInputVector): the time each takes
// to give the input matrix's rows as floats, and whether the rows agree.
//   sift-fasttext-reader-bench MODEL [--reader sift|libfasttext|both] [--rows N]
// Prints one JSON line. --reader libfasttext needs --rows (libfasttext does not say how
// many rows a pruned .ftz has); `both` prints it. bench/fasttext_readers.sh runs it.
#include <fasttext/fasttext.h>
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cmath>
#include <iostream>
#include <vector>

#include "tools/sift/fasttext_model_file.h"
#include "tools/sift/fasttext_pq.h"

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// Sift's reader: the input rows (fastText's order) as a float tensor [rows, dim].
torch::Tensor sift_rows(const std::string& path) {
  std::vector<float> input, output;
  const auto m =
      sift::cli::read_fasttext_model(path, [&](const char* matrix, int64_t rows, int64_t cols) {
        auto& v = std::string(matrix) == "input matrix" ? input : output;
        v.resize(static_cast<size_t>(rows * cols));
        return v.data();
      });
  if (m.input.quantized) return sift::pq_decode(sift::cli::pq_table_of(*m.input.quantized));
  return torch::from_blob(input.data(), {m.input.rows, m.input.cols}).clone();
}

// libfasttext's: loadModel, then each row through getInputVector.
torch::Tensor libfasttext_rows(const std::string& path, int64_t rows) {
  fasttext::FastText ft;
  ft.loadModel(path);
  const int64_t dim = ft.getDimension();
  torch::Tensor out = torch::empty({rows, dim});
  fasttext::Vector v(dim);
  float* p = out.data_ptr<float>();
  for (int64_t r = 0; r < rows; ++r) {
    ft.getInputVector(v, static_cast<int32_t>(r));
    std::copy(v.data(), v.data() + dim, p + r * dim);
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("Sift's fastText reader against libfasttext's");
  std::string model, reader = "both";
  int64_t rows = 0;
  app.add_option("model", model, "A fastText .bin or .ftz")->required();
  app.add_option("--reader", reader, "sift, libfasttext or both")
      ->check(CLI::IsMember({"sift", "libfasttext", "both"}));
  app.add_option("--rows", rows, "The input matrix's rows (for --reader libfasttext)");
  CLI11_PARSE(app, argc, argv);
  try {
    torch::Tensor ours, theirs;
    double sift_s = 0, lib_s = 0;
    if (reader != "libfasttext") {
      const auto t = Clock::now();
      ours = sift_rows(model);
      sift_s = seconds_since(t);
      rows = ours.size(0);
    }
    if (reader != "sift") {
      if (rows < 1) throw std::runtime_error("--reader libfasttext needs --rows N");
      const auto t = Clock::now();
      theirs = libfasttext_rows(model, rows);
      lib_s = seconds_since(t);
    }
    std::string agree;
    if (reader == "both") {
      const torch::Tensor diff = (ours - theirs).abs();
      agree = fmt::format(", \"max_abs_diff\": {}, \"rows_differing\": {}",
                          diff.max().item<float>(), (diff.amax(1) > 0).sum().item<int64_t>());
    }
    std::cout << fmt::format(
        "{{\"model\": \"{}\", \"rows\": {}, \"sift_s\": {:.4f}, \"libfasttext_s\": {:.4f}{}}}\n",
        model, rows, sift_s, lib_s, agree);
  } catch (const std::exception& e) {
    std::cerr << "sift-fasttext-reader-bench: error: " << e.what() << "\n";
    return 1;
  }
}
