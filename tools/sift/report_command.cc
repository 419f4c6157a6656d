#include <iostream>

#include "core/atomic_file.h"
#include "framework/train/base/report_html.h"
#include "tools/sift/commands.h"

namespace sift::cli {

void add_report_command(CLI::App& app) {
  struct Args {
    std::vector<std::string> runs;
    std::string out;
    std::string x = "steps";
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand(
      "report", "Write the HTML report of a run folder, or of several side by side.");
  cmd->add_option("runs", args->runs, "Run folders")->required();
  cmd->add_option("--out", args->out, "The HTML file to write (default: stdout)");
  cmd->add_option("--x", args->x,
                  "The curves' x axis: steps, epochs (a step's fraction of the first epoch's "
                  "steps) or time (training seconds), so runs of different lengths compare")
      ->capture_default_str();
  cmd->callback([args] {
    const std::string html = report_html(args->runs, report_axis(args->x));
    if (args->out.empty()) {
      std::cout << html;
    } else {
      write_file_atomically(args->out, html);
      std::cout << args->out << "\n";
    }
  });
}

}  // namespace sift::cli
