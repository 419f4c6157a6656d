// `import sift`'s native part (sift._sift): the same model backends as `sift serve`
// (tools/serve: the fastText model on plain arrays, everything else under LibTorch), the
// same predictions as `sift predict` (tools/sift/predict_batch), and the same training
// entry as `sift train`. python/sift/__init__.py is the package users read; this file
// only converts types and releases the GIL around the work.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <csignal>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "config/loader.h"
#include "core/error.h"
#include "core/provenance.h"
#include "datasets/tokenizer.h"
#include "framework/train/trainer.h"
#include "models/base/traits.h"
#include "tools/serve/torch_backend.h"
#include "tools/sift/predict_options.h"
#include "tools/sift/train_options.h"

namespace py = pybind11;

namespace sift::python {

// A model opened once; predict() may be called from several Python threads.
class Model {
 public:
  explicit Model(const std::string& path) : path_(path) {
    py::gil_scoped_release unlocked;
    backend_ = serve::open_any_backend(path);
  }

  const std::vector<std::string>& labels() const { return backend_->labels(); }
  std::string kind() const { return backend_->kind(); }
  bool multi_label() const { return backend_->multi_label(); }
  const std::string& path() const { return path_; }

  std::vector<int64_t> encode(const std::string& text) const {
    std::vector<int64_t> ids;
    backend_->encode(text, ids);
    return ids;
  }

  // `sift predict`'s labels and scores for each text: k labels (single-label) or every
  // label over the threshold (multi-label; None: the run's train.threshold).
  std::vector<cli::Predictions> predict(const std::vector<std::string>& texts, int64_t k,
                                        std::optional<double> threshold) const {
    cli::PredictArgs args;
    args.top_k = k;
    args.threshold = threshold.value_or(-1.0);
    const cli::PredictSettings settings = cli::resolve_predict(
        args, static_cast<int64_t>(labels().size()), multi_label(), backend_->train_threshold());
    py::gil_scoped_release unlocked;
    std::vector<cli::Predictions> out;
    out.reserve(texts.size());
    std::vector<std::vector<int64_t>> ids(kBatch);
    for (size_t start = 0; start < texts.size(); start += kBatch) {
      const size_t end = std::min(texts.size(), start + kBatch);
      std::vector<serve::TextQuery> batch;
      for (size_t i = start; i < end; ++i) {
        std::vector<int64_t>& text_ids = ids[i - start];
        backend_->encode(texts[i], text_ids);
        batch.push_back({&text_ids, settings.k, settings.threshold});
      }
      for (cli::Predictions& p : backend_->predict(batch)) out.push_back(std::move(p));
    }
    return out;
  }

 private:
  // Texts per forward: `sift predict`'s batch (tools/sift/predict_command.cc).
  static constexpr size_t kBatch = 256;
  std::string path_;
  std::unique_ptr<serve::ModelBackend> backend_;
};

// `sift train CONFIG --set ...` in this process: the report as JSON text. Ctrl-C stops
// at the next step, saves last.ckpt and raises KeyboardInterrupt, as the CLI does; the
// caller's SIGINT and SIGTERM handlers are put back afterwards.
std::string train(const std::string& config_path, const std::vector<std::string>& overrides,
                  bool quiet, bool allow_data_change, const std::string& resume) {
  struct sigaction old_int {
  }, old_term{};
  sigaction(SIGINT, nullptr, &old_int);
  sigaction(SIGTERM, nullptr, &old_term);
  TrainOptions options;
  options.quiet = quiet;
  options.allow_data_change = allow_data_change;
  std::string report;
  std::exception_ptr failure;
  {
    py::gil_scoped_release unlocked;
    options.stop_signal = cli::catch_stop_signals();
    try {
      report = (resume.empty()
                    ? sift::train(load_config(config_path, overrides, model_traits()), options)
                    : sift::resume(resume, overrides, options))
                   .dump();
    } catch (...) {
      failure = std::current_exception();
    }
    sigaction(SIGINT, &old_int, nullptr);
    sigaction(SIGTERM, &old_term, nullptr);
  }
  if (failure) std::rethrow_exception(failure);
  return report;
}

std::vector<std::string> tokenize(const std::string& text, bool lowercase, bool split_punctuation,
                                  bool drop_punctuation, bool nfkc) {
  WordTokenizerOptions options;
  options.lowercase = lowercase;
  options.split_punctuation = split_punctuation;
  options.drop_punctuation = drop_punctuation;
  options.nfkc = nfkc;
  std::vector<std::string> tokens;
  WordTokenizer(options).tokenize(text, tokens);
  return tokens;
}

}  // namespace sift::python

PYBIND11_MODULE(_sift, m) {
  using namespace sift::python;
  m.doc() = "Sift's native module; use the sift package (python/sift/__init__.py).";
  m.attr("__version__") = sift::this_process().version;
  static py::exception<sift::Error> error(m, "Error");
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const sift::Interrupted& e) {
      PyErr_SetString(PyExc_KeyboardInterrupt, e.what());
    } catch (const sift::Error& e) {
      error(e.what());
    }
  });
  py::class_<Model>(m, "Model")
      .def(py::init<const std::string&>(), py::arg("path"))
      .def_property_readonly("labels", &Model::labels)
      .def_property_readonly("kind", &Model::kind)
      .def_property_readonly("multi_label", &Model::multi_label)
      .def_property_readonly("path", &Model::path)
      .def("encode", &Model::encode, py::arg("text"))
      .def("predict", &Model::predict, py::arg("texts"), py::arg("k") = 1,
           py::arg("threshold") = py::none());
  m.def("train", &train, py::arg("config_path"), py::arg("overrides"), py::arg("quiet"),
        py::arg("allow_data_change"), py::arg("resume"));
  m.def("tokenize", &tokenize, py::arg("text"), py::arg("lowercase") = true,
        py::arg("split_punctuation") = true, py::arg("drop_punctuation") = false,
        py::arg("nfkc") = false);
}
