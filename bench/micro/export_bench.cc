// Inference speed of a trained model in the framework (the C++ module a run folder
// loads) against its TorchScript export loaded in C++ (`sift export`): latency at batch 1
// and throughput at batch 256, on real texts, inputs already encoded (tokenizing is the
// same code for both and is measured by sift-data-bench).
//
//   sift-export-bench --case NAME=RUN_DIR,FILE.pt [--case ...] --texts FILE
//                     [--threads N] [--benchmark_* flags]
//
// bench/export_bench.sh trains the models, exports them and runs this.
#include <benchmark/benchmark.h>

#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/keep_freed_memory.h"
#include "datasets/batch.h"
#include "framework/runtime/base/task.h"
#include "framework/runtime/collate.h"
#include "framework/runtime/compute_threads.h"
#include "framework/runtime/export.h"

namespace sift {
namespace {

struct Case {
  std::string name;
  ModelBundle framework;
  ModelBundle exported;
  std::vector<ModelInput> single;   // batch 1, one per text
  std::vector<ModelInput> batches;  // batch 256
};

std::vector<ModelInput> encode(ModelBundle& b, const std::vector<std::string>& texts,
                               size_t batch_size) {
  TextEncoder encoder = make_encoder(b.task);
  std::vector<ModelInput> inputs;
  RawBatch batch;
  std::vector<int64_t> ids;
  for (size_t i = 0; i < texts.size(); ++i) {
    encoder.encode(texts[i], ids);
    batch.add(ids, 0);
    if (batch.labels.size() == batch_size) {
      inputs.push_back(to_input(batch, b.task.encoder.kind, torch::kCPU));
      batch.clear();
    }
  }
  return inputs;
}

void run_forward(benchmark::State& state, Classifier model, const std::vector<ModelInput>* inputs,
                 int64_t batch_size) {
  torch::NoGradGuard no_grad;
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(model->forward((*inputs)[i]));
    i = (i + 1) % inputs->size();
  }
  state.SetItemsProcessed(state.iterations() * batch_size);
}

}  // namespace
}  // namespace sift

int main(int argc, char** argv) {
  sift::keep_freed_memory();  // the allocator settings `sift` runs with (main.cc)
  benchmark::Initialize(&argc, argv);
  std::vector<std::string> specs;
  std::string texts_path;
  int threads = 1;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--case")
      specs.push_back(argv[i + 1]);
    else if (flag == "--texts")
      texts_path = argv[i + 1];
    else if (flag == "--threads")
      threads = std::stoi(argv[i + 1]);
    else {
      std::cerr << "sift-export-bench: unknown argument " << flag << "\n";
      return 2;
    }
  }
  if (specs.empty() || texts_path.empty()) {
    std::cerr << "usage: sift-export-bench --case NAME=RUN_DIR,FILE.pt ... --texts FILE\n";
    return 2;
  }
  sift::apply_threads(threads);
  std::vector<std::string> texts;
  std::ifstream in(texts_path);
  for (std::string line; std::getline(in, line);) texts.push_back(line);
  if (texts.size() < 256) {
    std::cerr << "sift-export-bench: " << texts_path << " needs at least 256 lines\n";
    return 2;
  }
  static std::vector<std::unique_ptr<sift::Case>> cases;
  try {
    for (const auto& spec : specs) {
      const auto eq = spec.find('='), comma = spec.find(',');
      auto c = std::make_unique<sift::Case>();
      c->name = spec.substr(0, eq);
      c->framework = sift::load_run(spec.substr(eq + 1, comma - eq - 1));
      c->exported = sift::load_export(spec.substr(comma + 1));
      c->single = sift::encode(c->framework, texts, 1);
      c->batches = sift::encode(c->framework, texts, 256);
      cases.push_back(std::move(c));
    }
  } catch (const sift::Error& e) {
    std::cerr << "sift-export-bench: error: " << e.what() << "\n";
    return 1;
  }
  for (auto& c : cases) {
    for (const char* kind : {"framework", "export"}) {
      auto model = std::string(kind) == "framework" ? c->framework.model : c->exported.model;
      {  // the TorchScript executor profiles its first calls: not part of the timing
        torch::NoGradGuard no_grad;
        for (int i = 0; i < 3; ++i) model->forward(c->batches[0]), model->forward(c->single[0]);
      }
      benchmark::RegisterBenchmark((c->name + "/" + kind + "/batch:1").c_str(), sift::run_forward,
                                   model, &c->single, 1)
          ->Unit(benchmark::kMicrosecond);
      benchmark::RegisterBenchmark((c->name + "/" + kind + "/batch:256").c_str(), sift::run_forward,
                                   model, &c->batches, 256)
          ->Unit(benchmark::kMillisecond);
    }
  }
  benchmark::RunSpecifiedBenchmarks();
  return 0;
}
