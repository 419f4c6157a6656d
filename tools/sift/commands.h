// The sift subcommands: each registers its options on the CLI app and runs.
#pragma once

#include <CLI/CLI.hpp>

namespace sift::cli {

void add_train_command(CLI::App& app);
void add_pretrain_command(CLI::App& app);
void add_eval_command(CLI::App& app);
void add_predict_command(CLI::App& app);
void add_config_command(CLI::App& app);
void add_tokenizer_command(CLI::App& app);
void add_shard_command(CLI::App& app);
void add_export_command(CLI::App& app);
void add_cv_command(CLI::App& app);
void add_launch_command(CLI::App& app);
void add_import_command(CLI::App& app);
void add_tune_command(CLI::App& app);
void add_report_command(CLI::App& app);
void add_serve_command(CLI::App& app);

}  // namespace sift::cli
