#include "framework/train/sharding.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <unordered_map>

#include "core/error.h"
#include "framework/runtime/untouched_zeros.h"
#include "framework/train/adadelta.h"
#include "framework/train/optimization.h"

namespace sift {

// A part of the flat space held by one 1-D tensor: elements [start, start + numel).
struct Segment {
  int64_t start;
  torch::Tensor flat;
};

// Elements [begin, end) of the flat space.
struct Span {
  int64_t begin;
  int64_t end;
};
// Each rank's spans, in rank order: its slice is their elements one after another.
using Spans = std::vector<std::vector<Span>>;

namespace {

using ParamState = torch::optim::OptimizerParamState;

// A cut inside a tensor is a multiple of this many elements from its start: ATen's CPU
// loops take 2 x 8 floats (AVX2) or 2 x 16 (AVX-512) at a time and the rest one by one,
// and the two may round differently where the compiler fuses a multiply-add in one.
constexpr int64_t kCutAlign = 64;

// One parameter's state as the sharding moves it: its step count (null: the type keeps
// none) and the tensors the config makes it keep, in a fixed order.
struct StateRefs {
  int64_t* step = nullptr;
  std::vector<torch::Tensor*> tensors;
};

template <class S>
S& state_as(ParamState& s) {
  return static_cast<S&>(s);
}

StateRefs state_refs(const OptimizerConfig& o, ParamState& s) {
  switch (o.type) {
    case OptimizerType::adam: {
      auto& a = state_as<torch::optim::AdamParamState>(s);
      return {&a.step(), {&a.exp_avg(), &a.exp_avg_sq()}};
    }
    case OptimizerType::adamw: {
      auto& a = state_as<torch::optim::AdamWParamState>(s);
      return {&a.step(), {&a.exp_avg(), &a.exp_avg_sq()}};
    }
    case OptimizerType::adagrad: {
      auto& a = state_as<torch::optim::AdagradParamState>(s);
      return {&a.step(), {&a.sum()}};
    }
    case OptimizerType::rmsprop: {
      auto& a = state_as<torch::optim::RMSpropParamState>(s);
      StateRefs r{&a.step(), {&a.square_avg()}};
      if (o.momentum > 0) r.tensors.push_back(&a.momentum_buffer());
      return r;
    }
    case OptimizerType::adadelta: {
      auto& a = state_as<AdadeltaParamState>(s);
      return {&a.step(), {&a.square_avg(), &a.acc_delta()}};
    }
    case OptimizerType::sgd:
      break;
  }
  auto& a = state_as<torch::optim::SGDParamState>(s);
  return {nullptr, o.momentum > 0 ? std::vector<torch::Tensor*>{&a.momentum_buffer()}
                                  : std::vector<torch::Tensor*>{}};
}

std::unique_ptr<ParamState> new_state(OptimizerType type) {
  switch (type) {
    case OptimizerType::adam:
      return std::make_unique<torch::optim::AdamParamState>();
    case OptimizerType::adamw:
      return std::make_unique<torch::optim::AdamWParamState>();
    case OptimizerType::adagrad:
      return std::make_unique<torch::optim::AdagradParamState>();
    case OptimizerType::rmsprop:
      return std::make_unique<torch::optim::RMSpropParamState>();
    case OptimizerType::adadelta:
      return std::make_unique<AdadeltaParamState>();
    case OptimizerType::sgd:
      break;
  }
  return std::make_unique<torch::optim::SGDParamState>();
}

std::string state_key(const torch::Tensor& p) {
  return c10::guts::to_string(p.unsafeGetTensorImpl());
}

// Calls f(the part of a segment inside [begin, end), its offset from begin).
template <class F>
void overlap(const std::vector<Segment>& segments, int64_t begin, int64_t end, F f) {
  for (const auto& s : segments) {
    const int64_t a = std::max(begin, s.start);
    const int64_t b = std::min(end, s.start + s.flat.numel());
    if (a < b) f(s.flat.narrow(0, a - s.start, b - a), a - begin);
  }
}

int64_t length_of(const std::vector<Span>& spans) {
  int64_t n = 0;
  for (const auto& s : spans) n += s.end - s.begin;
  return n;
}

// Calls f(begin, end, at) for the flat elements [begin, end) that are elements
// [from, from + n) of the slice `spans` make, `at` counted from `from`.
template <class F>
void in_slice(const std::vector<Span>& spans, int64_t from, int64_t n, F f) {
  int64_t p = 0;  // where the span starts in the slice
  for (const auto& s : spans) {
    const int64_t length = s.end - s.begin;
    const int64_t a = std::max(from, p), b = std::min(from + n, p + length);
    if (a < b) f(s.begin + (a - p), s.begin + (b - p), a - from);
    p += length;
  }
}

using Clock = std::chrono::steady_clock;

}  // namespace

std::vector<int64_t> shard_cuts(const std::vector<int64_t>& numels, int64_t ranks) {
  int64_t total = 0;
  for (const int64_t n : numels) total += n;
  std::vector<int64_t> cuts{0};
  for (int64_t r = 1; r < ranks; ++r) {
    const int64_t target = static_cast<int64_t>(static_cast<__int128>(total) * r / ranks);
    int64_t start = 0;
    for (const int64_t n : numels) {
      if (target < start + n) break;
      start += n;
    }
    const int64_t cut = start + (target - start) / kCutAlign * kCutAlign;
    cuts.push_back(std::max(cut, cuts.back()));
  }
  cuts.push_back(total);
  return cuts;
}

struct ShardedOptimizer::Impl {
  Distributed& dist;
  ShardStage stage;
  OptimizerConfig config;
  std::vector<torch::Tensor> params;
  std::vector<int64_t> starts;  // each parameter's first element in the flat space
  std::vector<Segment> whole;   // every parameter that stays whole on every rank, flat
  Spans slices;                 // what each rank steps
  Spans replicated;             // its part of `whole`: all-gathered after a step
  // run.shard: parameters: each layer's elements [begin, end) and its cuts over the ranks.
  std::vector<Span> units;
  std::vector<std::vector<int64_t>> unit_cuts;
  std::vector<Segment> pieces;  // this rank's slice: views of the parameters, or kept apart
  std::vector<size_t> piece_param;
  std::vector<int64_t> piece_unit;  // the layer a piece kept apart belongs to; -1: a view
  std::unique_ptr<torch::optim::Optimizer> optimizer;  // over the pieces; null: none
  int64_t bucket = 0;                                  // elements per all-gather
  double gather_seconds = 0;
  // A save's whole state (rank 0; prepare_state to end_state_write).
  bool saving = false;
  std::vector<torch::Tensor> whole_state;
  std::unordered_map<const void*, size_t> whole_index;  // by data pointer
  torch::Tensor filled;                                 // the one gathered last
  int64_t save_peak = 0;

  Impl(Distributed& d, ShardStage s, const OptimizerConfig& o) : dist(d), stage(s), config(o) {}

  int64_t me() const { return dist.rank(); }
  int64_t slice_length(int64_t r) const { return length_of(slices[r]); }

  // Cuts the parameters [first, last) into world_size slices of their own.
  std::vector<int64_t> cut(const std::vector<int64_t>& numels, size_t first, size_t last) {
    std::vector<int64_t> cuts =
        shard_cuts(std::vector<int64_t>(numels.begin() + static_cast<int64_t>(first),
                                        numels.begin() + static_cast<int64_t>(last)),
                   dist.world_size());
    for (auto& c : cuts) c += starts[first];
    for (int64_t r = 0; r < dist.world_size(); ++r) {
      if (cuts[r] == cuts[r + 1]) continue;
      slices[r].push_back({cuts[r], cuts[r + 1]});
    }
    return cuts;
  }

  // Stages 1 and 2: one flat space cut once. Parameters: each run of parameters of one
  // layer (units[i] >= 0), and each run between layers, cut apart.
  void cut_space(const std::vector<int64_t>& numels, const std::vector<int64_t>& of_unit) {
    slices.assign(dist.world_size(), {});
    replicated.assign(dist.world_size(), {});
    size_t first = 0;
    while (first < numels.size()) {
      size_t last = first + 1;
      while (last < numels.size() && !of_unit.empty() && of_unit[last] == of_unit[first]) ++last;
      if (of_unit.empty()) last = numels.size();
      const std::vector<int64_t> cuts = cut(numels, first, last);
      const int64_t unit = of_unit.empty() ? -1 : of_unit[first];
      if (unit >= 0) {
        if (static_cast<int64_t>(units.size()) <= unit) {
          units.resize(unit + 1, {0, 0});
          unit_cuts.resize(unit + 1);
        }
        units[unit] = {cuts.front(), cuts.back()};
        unit_cuts[unit] = cuts;
      } else {
        for (int64_t r = 0; r < dist.world_size(); ++r) {
          if (cuts[r] < cuts[r + 1]) replicated[r].push_back({cuts[r], cuts[r + 1]});
        }
      }
      first = last;
    }
  }

  // The slices `by_rank` of `mine` (this rank's, as segments) from every rank into
  // `into`'s segments (null: received and dropped), a bucket of each slice at a time.
  void all_gather(const Spans& by_rank, const std::vector<Segment>& mine,
                  const std::vector<Segment>* into, bool skip_own) {
    int64_t longest = 0;
    for (const auto& spans : by_rank) longest = std::max(longest, length_of(spans));
    const int64_t world = dist.world_size();
    const auto options = params.front().options();
    for (int64_t from = 0; from < longest; from += bucket) {
      const int64_t n = std::min(bucket, longest - from);
      auto in = torch::zeros({n}, options);
      in_slice(by_rank[me()], from, n, [&](int64_t a, int64_t b, int64_t at) {
        overlap(mine, a, b, [&](const torch::Tensor& t, int64_t off) {
          in.narrow(0, at + off, t.numel()).copy_(t);
        });
      });
      auto out = torch::empty({world * n}, options);
      dist.all_gather_into(in, out);
      if (into == nullptr) continue;
      for (int64_t r = 0; r < world; ++r) {
        if (skip_own && r == me()) continue;
        in_slice(by_rank[r], from, n, [&](int64_t a, int64_t b, int64_t at) {
          overlap(*into, a, b, [&](const torch::Tensor& t, int64_t off) {
            t.copy_(out.narrow(0, r * n + at + off, t.numel()));
          });
        });
      }
    }
  }

  // Layer `unit`'s spans on every rank.
  Spans unit_spans(int64_t unit) const {
    Spans by_rank;
    const auto& cuts = unit_cuts[unit];
    for (int64_t r = 0; r < dist.world_size(); ++r) by_rank.push_back({{cuts[r], cuts[r + 1]}});
    return by_rank;
  }

  // f(piece, its part of layer `unit`'s flat tensor of `length` elements).
  template <class F>
  void each_unit_piece(int64_t unit, F f) {
    for (size_t k = 0; k < pieces.size(); ++k) {
      if (piece_unit[k] != unit) continue;
      f(pieces[k].flat, pieces[k].start - units[unit].begin);
    }
  }

  // Rows `ids` (sorted, unique) of layer `unit`, a table rows.size(1) wide: copies this
  // rank's elements of them into `rows` (to_rows), or adds `rows`' elements to its
  // slice's gradient. A piece's rows: the whole ones in one step, the one or two cut by
  // the piece's ends (cuts fall on 64 elements, not on rows) element by element.
  void move_rows(int64_t unit, const torch::Tensor& ids, const torch::Tensor& rows, bool to_rows) {
    const int64_t dim = rows.size(1), count = ids.numel();
    const int64_t* id = ids.data_ptr<int64_t>();
    each_unit_piece(unit, [&](torch::Tensor& piece, int64_t at) {
      if (!to_rows && !piece.grad().defined()) piece.mutable_grad() = torch::zeros_like(piece);
      const torch::Tensor target = to_rows ? piece : piece.grad();
      const int64_t end = at + piece.numel();
      const int64_t whole_begin = (at + dim - 1) / dim, whole_end = end / dim;  // rows
      const int64_t* lo = std::lower_bound(id, id + count, at / dim);
      const int64_t* hi = std::upper_bound(id, id + count, (end - 1) / dim);
      int64_t first = -1, n = 0;  // the ids of whole rows: [first, first + n)
      for (const int64_t* p = lo; p < hi; ++p) {
        const int64_t row = *p;
        if (row >= whole_begin && row < whole_end) {
          if (first < 0) first = p - id;
          ++n;
          continue;
        }
        const int64_t a = std::max(at, row * dim), b = std::min(end, (row + 1) * dim);
        const auto in_piece = target.narrow(0, a - at, b - a);
        const auto in_rows = rows[p - id].narrow(0, a - row * dim, b - a);
        if (to_rows) {
          in_rows.copy_(in_piece);
        } else {
          in_piece.add_(in_rows);
        }
      }
      if (n == 0) return;
      const auto table =
          target.narrow(0, whole_begin * dim - at, (whole_end - whole_begin) * dim).view({-1, dim});
      const auto local = ids.narrow(0, first, n).to(target.device()) - whole_begin;
      const auto part = rows.narrow(0, first, n);
      if (to_rows) {
        part.copy_(table.index_select(0, local));
      } else {
        table.index_add_(0, local, part);
      }
    });
  }

  // The state tensors each parameter's optimizer state keeps.
  size_t fields() const { return state_refs(config, *new_state(config.type)).tensors.size(); }

  // State tensor k (of parameter k / fields, field k % fields), whole, into `into` (null:
  // this rank only sends its part).
  void gather_state_tensor(size_t k, const torch::Tensor* into) {
    const size_t i = k / fields(), field = k % fields();
    const int64_t begin = starts[i], end = begin + params[i].numel();
    Spans by_rank(slices.size());
    for (size_t r = 0; r < slices.size(); ++r) {
      for (const Span& s : slices[r]) {
        const int64_t a = std::max(begin, s.begin), b = std::min(end, s.end);
        if (a < b) by_rank[r].push_back({a, b});
      }
    }
    std::vector<Segment> target;
    if (into) target.push_back({begin, into->view(-1)});
    all_gather(by_rank, piece_states(field), into ? &target : nullptr, false);
  }

  std::vector<Segment> piece_states(size_t field) const {
    std::vector<Segment> out;
    for (const auto& piece : pieces) {
      auto& s = *optimizer->state().at(state_key(piece.flat));
      out.push_back({piece.start, *state_refs(config, s).tensors[field]});
    }
    return out;
  }
};

ShardedOptimizer::ShardedOptimizer(Distributed& dist, ShardStage stage,
                                   const OptimizerConfig& config, std::vector<torch::Tensor> params,
                                   double bucket_mb, std::vector<int64_t> units)
    : impl_(std::make_unique<Impl>(dist, stage, config)) {
  auto& impl = *impl_;
  if (params.empty()) throw Error("run.shard: the model has no trainable parameters to shard");
  std::vector<int64_t> numels;
  int64_t start = 0;
  for (size_t i = 0; i < params.size(); ++i) {
    const auto& p = params[i];
    if (!p.is_contiguous() || p.scalar_type() != params.front().scalar_type()) {
      throw Error(fmt::format(
          "run.shard: a parameter of shape {} is {}; sharding needs "
          "contiguous parameters of one dtype",
          fmt::join(p.sizes(), "x"), p.is_contiguous() ? "of another dtype" : "not contiguous"));
    }
    impl.starts.push_back(start);
    if (units.empty() || units[i] < 0) impl.whole.push_back({start, p.detach().view(-1)});
    numels.push_back(p.numel());
    start += p.numel();
  }
  impl.params = std::move(params);
  impl.cut_space(numels, units);
  for (int64_t r = 0; r < dist.world_size(); ++r) {
    if (impl.slice_length(r) > 0) continue;
    throw Error(
        fmt::format("run.shard: the model's {} trainable values leave rank {} of {} no "
                    "slice; use fewer processes or run.shard: none",
                    start, r, dist.world_size()));
  }
  std::vector<torch::Tensor> leaves;
  for (const Span& mine : impl.slices[impl.me()]) {
    for (size_t i = 0; i < impl.params.size(); ++i) {
      const Segment param{impl.starts[i], impl.params[i].detach().view(-1)};
      overlap({param}, mine.begin, mine.end, [&](const torch::Tensor& t, int64_t at) {
        const int64_t unit = units.empty() ? -1 : units[i];
        // A view of the parameter, stepped in place; or (a layer's) kept apart, as the
        // parameter's memory is freed between its uses. Trainable for create_optimizer.
        auto leaf = (unit < 0 ? t : t.clone()).requires_grad_(true);
        impl.pieces.push_back({mine.begin + at, leaf});
        impl.piece_param.push_back(i);
        impl.piece_unit.push_back(unit);
        leaves.push_back(leaf);
      });
    }
  }
  const int64_t element = static_cast<int64_t>(impl.params.front().element_size());
  impl.bucket =
      std::max<int64_t>(kCutAlign, static_cast<int64_t>(bucket_mb * 1024 * 1024) / element);
  if (!leaves.empty()) {
    impl.optimizer = create_optimizer(config, leaves);  // Adagrad's state: made here
  }
}

ShardedOptimizer::~ShardedOptimizer() = default;

void ShardedOptimizer::set_lr(double lr) {
  if (impl_->optimizer) sift::set_lr(*impl_->optimizer, lr);
}

void ShardedOptimizer::step() {
  auto& impl = *impl_;
  torch::NoGradGuard no_grad;
  for (size_t k = 0; k < impl.pieces.size(); ++k) {
    auto& piece = impl.pieces[k].flat;
    if (impl.piece_unit[k] >= 0) {  // a layer's: reduced in backward (add_unit_gradient)
      if (!piece.grad().defined()) piece.mutable_grad() = torch::zeros_like(piece);
      continue;
    }
    const auto& p = impl.params[impl.piece_param[k]];
    const auto& g = p.grad();
    if (g.defined() && g.is_sparse()) {
      throw Error("run.shard: a parameter's gradient is sparse; sharding slices dense ones");
    }
    const int64_t offset = impl.pieces[k].start - impl.starts[impl.piece_param[k]];
    auto slice =
        g.defined() ? g.reshape(-1).narrow(0, offset, piece.numel()) : torch::zeros_like(piece);
    // gradients: a copy of the slice, so that the whole gradient can go now.
    piece.mutable_grad() = impl.stage != ShardStage::optimizer ? slice.clone() : slice;
  }
  if (impl.stage != ShardStage::optimizer) {
    for (auto& p : impl.params) p.mutable_grad() = torch::Tensor();
  }
  if (impl.optimizer) impl.optimizer->step();
  for (auto& piece : impl.pieces) piece.flat.mutable_grad() = torch::Tensor();
  const auto start = Clock::now();
  impl.all_gather(impl.replicated, impl.pieces, &impl.whole, /*skip_own=*/true);
  impl.gather_seconds += std::chrono::duration<double>(Clock::now() - start).count();
}

int64_t ShardedOptimizer::unit_elements(int64_t unit) const {
  return impl_->units[unit].end - impl_->units[unit].begin;
}

void ShardedOptimizer::gather_unit(int64_t unit, const torch::Tensor& flat) {
  auto& impl = *impl_;
  torch::NoGradGuard no_grad;
  const auto start = Clock::now();
  const std::vector<Segment> into{{impl.units[unit].begin, flat}};
  impl.all_gather(impl.unit_spans(unit), impl.pieces, &into, /*skip_own=*/false);
  impl.gather_seconds += std::chrono::duration<double>(Clock::now() - start).count();
}

void ShardedOptimizer::keep_unit(int64_t unit, const torch::Tensor& flat) {
  torch::NoGradGuard no_grad;
  impl_->each_unit_piece(unit, [&](torch::Tensor& piece, int64_t at) {
    piece.copy_(flat.narrow(0, at, piece.numel()));
  });
}

void ShardedOptimizer::add_unit_gradient(int64_t unit, const torch::Tensor& gradient) {
  torch::NoGradGuard no_grad;
  impl_->each_unit_piece(unit, [&](torch::Tensor& piece, int64_t at) {
    const auto slice = gradient.narrow(0, at, piece.numel());
    if (piece.grad().defined()) {
      piece.mutable_grad().add_(slice);
    } else {
      piece.mutable_grad() = slice.clone();
    }
  });
}

void ShardedOptimizer::gather_unit_rows(int64_t unit, const torch::Tensor& ids,
                                        torch::Tensor& rows) {
  torch::NoGradGuard no_grad;
  const auto start = Clock::now();
  impl_->move_rows(unit, ids, rows, /*to_rows=*/true);
  impl_->dist.sum(rows);
  impl_->gather_seconds += std::chrono::duration<double>(Clock::now() - start).count();
}

void ShardedOptimizer::add_unit_rows(int64_t unit, const torch::Tensor& ids,
                                     const torch::Tensor& gradient) {
  torch::NoGradGuard no_grad;
  impl_->move_rows(unit, ids, gradient, /*to_rows=*/false);
}

std::vector<torch::Tensor> ShardedOptimizer::kept_apart() const {
  std::vector<torch::Tensor> out;
  for (size_t k = 0; k < impl_->pieces.size(); ++k) {
    if (impl_->piece_unit[k] >= 0) out.push_back(impl_->pieces[k].flat);
  }
  return out;
}

int64_t ShardedOptimizer::kept_apart_bytes() const {
  int64_t bytes = 0;
  for (const auto& piece : kept_apart()) bytes += static_cast<int64_t>(piece.nbytes());
  return bytes;
}

bool ShardedOptimizer::prepare_state(torch::optim::Optimizer& full) {
  auto& impl = *impl_;
  const size_t fields = impl.fields();
  // The same on every rank: whether the pieces have stepped (a state exists).
  std::vector<int64_t> stepped{impl.optimizer && !impl.optimizer->state().empty() ? 1 : 0};
  impl.dist.sum(stepped);
  impl.saving = fields > 0 && stepped[0] == impl.dist.world_size();
  if (!impl.saving) return false;  // no state yet (or none kept)
  std::vector<int64_t> step{0};
  if (impl.me() == 0) {
    auto& first = *impl.optimizer->state().at(state_key(impl.pieces.front().flat));
    const auto refs = state_refs(impl.config, first);
    if (refs.step) step[0] = *refs.step;
  }
  impl.dist.sum(step);  // rank 0's count on every rank (all pieces step together)
  if (impl.me() != 0) return true;
  for (const auto& p : impl.params) {
    auto state = new_state(impl.config.type);
    const auto refs = state_refs(impl.config, *state);
    if (refs.step) *refs.step = step[0];
    for (torch::Tensor* t : refs.tensors) {
      *t = untouched_zeros(p.sizes(), p.options());
      if (t->nbytes() > 0) impl.whole_index[t->data_ptr()] = impl.whole_state.size();
      impl.whole_state.push_back(*t);
    }
    full.state()[state_key(p)] = std::move(state);
  }
  return true;
}

const std::vector<torch::Tensor>& ShardedOptimizer::state_tensors() const {
  return impl_->whole_state;
}

void ShardedOptimizer::fill_state(const torch::Tensor& tensor) {
  auto& impl = *impl_;
  const auto it = impl.whole_index.find(tensor.data_ptr());
  if (!impl.saving || impl.me() != 0 || it == impl.whole_index.end()) {
    throw Error("run.shard: a save asked for an optimizer state tensor this rank did not prepare");
  }
  const torch::Tensor before = impl.filled;
  if (before.defined()) give_back_pages(before);
  std::vector<int64_t> which{static_cast<int64_t>(it->second)};
  impl.dist.sum(which);  // the others give 0
  impl.gather_state_tensor(it->second, &tensor);
  impl.filled = tensor;
  impl.save_peak = std::max(
      impl.save_peak, resident_bytes(tensor) + (before.defined() ? resident_bytes(before) : 0));
}

void ShardedOptimizer::end_state_write() {
  auto& impl = *impl_;
  if (!impl.saving) return;
  int64_t resident = 0;
  for (const auto& t : impl.whole_state) resident += resident_bytes(t);
  impl.save_peak = std::max(impl.save_peak, resident);
  impl.filled = torch::Tensor();
  impl.whole_state.clear();
  impl.whole_index.clear();
  impl.saving = false;
  std::vector<int64_t> which{-1};
  impl.dist.sum(which);
}

void ShardedOptimizer::send_state() {
  auto& impl = *impl_;
  for (; impl.saving;) {
    std::vector<int64_t> which{0};
    impl.dist.sum(which);  // rank 0's choice
    if (which[0] < 0) break;
    impl.gather_state_tensor(static_cast<size_t>(which[0]), nullptr);
  }
  impl.saving = false;
}

int64_t ShardedOptimizer::save_peak_bytes() const { return impl_->save_peak; }

void ShardedOptimizer::scatter_state(torch::optim::Optimizer& full) {
  auto& impl = *impl_;
  torch::NoGradGuard no_grad;
  const size_t fields = impl.fields();
  if (full.state().empty() || fields == 0 || !impl.optimizer) {
    full.state().clear();
    return;
  }
  for (size_t k = 0; k < impl.pieces.size(); ++k) {
    const size_t i = impl.piece_param[k];
    const auto it = full.state().find(state_key(impl.params[i]));
    if (it == full.state().end()) continue;
    auto from = state_refs(impl.config, *it->second);
    auto piece = new_state(impl.config.type);
    auto to = state_refs(impl.config, *piece);
    if (to.step) *to.step = *from.step;
    const int64_t offset = impl.pieces[k].start - impl.starts[i];
    for (size_t f = 0; f < fields; ++f) {
      *to.tensors[f] =
          from.tensors[f]->reshape(-1).narrow(0, offset, impl.pieces[k].flat.numel()).clone();
    }
    impl.optimizer->state()[state_key(impl.pieces[k].flat)] = std::move(piece);
  }
  full.state().clear();
}

int64_t ShardedOptimizer::state_bytes() const {
  return impl_->optimizer ? optimizer_state_bytes(impl_->config, *impl_->optimizer) : 0;
}

int64_t ShardedOptimizer::slice_elements() const { return impl_->slice_length(impl_->me()); }
double ShardedOptimizer::gather_seconds() const { return impl_->gather_seconds; }

int64_t optimizer_state_bytes(const OptimizerConfig& config, torch::optim::Optimizer& optimizer) {
  int64_t bytes = 0;
  for (auto& entry : optimizer.state()) {
    for (const torch::Tensor* t : state_refs(config, *entry.second).tensors) {
      if (t->defined()) bytes += static_cast<int64_t>(t->nbytes());
    }
  }
  return bytes;
}

}  // namespace sift
