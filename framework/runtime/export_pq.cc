#include "framework/runtime/export_pq.h"

#include <fmt/format.h>

#include "core/error.h"
#include "framework/runtime/base/task.h"
#include "models/model.h"
#include "models/product_quantizer.h"

namespace sift {

std::string pq_table(const ModelBundle& bundle) {
  const ModelSpec& spec = find_model(bundle.config.model.type);
  if (spec.prune_units) {
    std::map<std::string, torch::Tensor> tensors;
    for (const auto& p : bundle.model->named_parameters()) tensors[p.key()] = p.value();
    for (const auto& g : spec.prune_units(bundle.config.model, PruneStructure::rows, tensors)) {
      if (g.lookup) return g.slices.at(0).param;
    }
  }
  throw Error(fmt::format(
      "--quantize pq: model '{}' has no embedding table looked up by id; pq, --cutoff and "
      "--retrain apply to the fasttext model",
      bundle.config.model.type));
}

torch::Tensor top_norm_rows(const torch::Tensor& table, int64_t k) {
  torch::NoGradGuard no_grad;
  const torch::Tensor norms = table.detach().to(torch::kCPU, torch::kDouble).norm(2, 1);
  const torch::Tensor order =
      std::get<1>(torch::sort(norms, /*stable=*/true, /*dim=*/0, /*descending=*/true));
  torch::Tensor keep = torch::zeros({table.size(0)}, torch::kBool);
  keep.index_fill_(0, order.narrow(0, 0, std::min(k, table.size(0))), true);
  return keep;
}

torch::Tensor kept_rows(const ModelBundle& bundle, const ExportOptions& options) {
  if (options.kept_rows.defined()) return options.kept_rows;
  const std::string table = pq_table(bundle);
  return top_norm_rows(bundle.model->named_parameters()[table], options.cutoff);
}

void without_cut_words(ModelBundle& bundle, ExportOptions& options, TensorMap& tensors) {
  options.kept_rows = kept_rows(bundle, options).to(torch::kBool).contiguous();
  const std::string table = pq_table(bundle);
  const Vocab& vocab = *bundle.task.vocab;
  const int64_t words = vocab.size(), rows = tensors.at(table).size(0);
  const bool word_ids = bundle.task.pieces == nullptr && bundle.task.encoder.kind == InputKind::bag;
  if (!word_ids || make_encoder(bundle.task).num_ids() != rows) return;
  const bool* kept = options.kept_rows.data_ptr<bool>();
  auto pruned = std::make_shared<Vocab>();  // <pad> and <unk> are its ids 0 and 1
  std::vector<int64_t> index = {Vocab::kPad, Vocab::kUnk};
  for (int64_t id = Vocab::kUnk + 1; id < words; ++id) {
    if (!kept[id]) continue;
    pruned->add(vocab.word(id), vocab.count(id));
    index.push_back(id);
  }
  for (int64_t id = words; id < rows; ++id) index.push_back(id);  // the n-gram buckets
  const torch::Tensor order = torch::tensor(index, torch::kLong);
  tensors[table] = tensors.at(table).index_select(0, order);
  options.kept_rows = options.kept_rows.index_select(0, order);
  bundle.task.vocab = std::move(pruned);
}

void check_pq_options(const ModelBundle& bundle, const ExportOptions& options) {
  if (options.quantize != "pq") {
    const char* flag = options.cutoff != 0 ? "--cutoff"
                       : options.dsub != 2 ? "--dsub"
                       : options.qnorm     ? "--qnorm"
                       : options.qout      ? "--qout"
                                           : nullptr;
    if (flag) {
      throw Error(
          fmt::format("{}: applies to --quantize pq only (fastText's quantize), not "
                      "--quantize {}",
                      flag, options.quantize));
    }
    return;
  }
  if (options.dtype != "fp32") {
    throw Error(
        fmt::format("--dtype {} --quantize pq: a pq export keeps its other weights "
                    "in fp32; choose one of the two",
                    options.dtype));
  }
  const torch::Tensor table = bundle.model->named_parameters()[pq_table(bundle)];
  const int64_t rows = table.size(0), dim = table.size(1);
  if (options.cutoff < 0 || options.cutoff > rows) {
    throw Error(
        fmt::format("--cutoff {}: expected 1 to the embedding table's {} rows (0: keep "
                    "them all)",
                    options.cutoff, rows));
  }
  if (options.dsub < 1 || dim % options.dsub != 0) {
    throw Error(fmt::format("--dsub {}: must divide the embedding dimension (model.dim {})",
                            options.dsub, dim));
  }
}

nlohmann::json pq_json(const ExportOptions& options, int64_t rows, int64_t vocabulary) {
  nlohmann::json j = {{"dsub", options.dsub},     {"centroids", kPqCentroids},
                      {"qnorm", options.qnorm},   {"qout", options.qout},
                      {"cutoff", options.cutoff}, {"rows", rows},
                      {"vocabulary", vocabulary}};
  if (!options.retrained.empty()) j["retrained"] = options.retrained;
  return j;
}

}  // namespace sift
