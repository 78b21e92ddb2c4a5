#include "appview/cli/import_command.hpp"

#include <spdlog/spdlog.h>

#include <fstream>
#include <ostream>
#include <sstream>
#include <thread>

#include "appview/cli/args.hpp"
#include "appview/cli/common.hpp"
#include "appview/cli/progress.hpp"
#include "appview/config.hpp"
#include "appview/imports/import_jobs.hpp"
#include "appview/logging.hpp"
#include "firehose/client/xrpc_client.hpp"
#include "schema/syntax.hpp"

namespace bulleted::cli {
namespace {

constexpr const char* kUsage =
    "usage: bulleted-appview import FILE --repo DID [--parent RKEY] [--format opml|text]\n"
    "                               [--server URL --token T] [--db PATH] [--config FILE]\n"
    "       bulleted-appview import --resume JOB [--db PATH] [--config FILE]\n"
    "       bulleted-appview import --abandon JOB [--db PATH] [--config FILE]\n";

std::optional<std::string> read_whole(const std::string& path, std::size_t limit,
                                      std::ostream& err) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    err << "error: cannot read " << path << "\n";
    return std::nullopt;
  }
  in.seekg(0, std::ios::end);
  const auto size = static_cast<std::size_t>(in.tellg());
  if (size > limit) {
    err << "error: " << path << " is " << size << " bytes, over the import limit of " << limit
        << " bytes (limits.maxImportBytes)\n";
    return std::nullopt;
  }
  in.seekg(0);
  std::string content(size, '\0');
  in.read(content.data(), static_cast<std::streamsize>(size));
  return content;
}

appview::outline::Format format_of(const Args& args, const std::string& path) {
  if (auto named = args.option("format")) {
    if (auto format = appview::outline::parse_format(*named)) return *format;
  }
  const bool xml = path.ends_with(".opml") || path.ends_with(".xml");
  return xml ? appview::outline::Format::kOpml : appview::outline::Format::kText;
}

// Runs a local job to its end with a progress display; 0 when done.
int run_local_job(schema::Store& store, ordering::TidClock& clock, const std::string& id,
                  const std::string& runner, std::ostream& out, std::ostream& err) {
  auto job = store.import_jobs().find(id);
  if (!job || !*job) {
    err << "error: no import job " << id << "\n";
    return 1;
  }
  appview::LocalSink sink(clock);
  Progress progress(err, stderr_is_terminal(), (*job)->total, "nodes");
  schema::ImportJobRow current = **job;
  bool first = true;
  while (!schema::is_terminal(current.state)) {
    // One runner at a time: a server on the same file leaves a job this
    // command runs alone (and this command one the server runs).
    auto claimed = appview::claim_job(store, id, runner);
    if (!claimed) {
      err << "\nerror: " << claimed.error().message << "\n";
      return 1;
    }
    if (!*claimed) {
      err << "\nerror: the import " << id
          << " is being run by another process (the server on this database); it goes on there\n";
      return 1;
    }
    if (current.state == schema::ImportState::kWaiting && !first) {
      // Local writes wait only when the database is busy or full: a second
      // is enough, whatever resume_at says.
      progress.update(current.done, "waiting");
      std::this_thread::sleep_for(std::chrono::seconds(1));
    }
    auto next = appview::step_import(store, sink, current, first, true);
    first = false;
    if (!next) {
      err << "\nerror: " << next.error().message << "\n";
      return 1;
    }
    current = std::move(*next);
    if (current.state == schema::ImportState::kRunning) progress.update(current.done);
  }
  progress.finish(current.done);
  if (current.state != schema::ImportState::kDone) {
    err << "error: the import " << id << " " << to_string(current.state) << ": "
        << current.errors_json << "\n";
    return 1;
  }
  out << "imported " << current.total << " nodes under " << current.root_rkey << " (job " << id
      << ")\n";
  return 0;
}

int import_through_server(const Args& args, const std::string& content,
                          appview::outline::Format format, std::ostream& out, std::ostream& err) {
  auto token = args.option("token");
  if (!token) {
    err << "error: --server needs --token (a bearer token for the repo)\n" << kUsage;
    return 2;
  }
  std::string server = *args.option("server");
  while (server.ends_with("/")) server.pop_back();
  auto client = firehose::make_http_xrpc_client(std::chrono::seconds(120), 16 * 1024 * 1024);
  nlohmann::json body = {{"repo", *args.option("repo")},
                         {"format", format == appview::outline::Format::kOpml ? "opml" : "text"},
                         {"content", content}};
  if (auto parent = args.option("parent")) body["parentRkey"] = *parent;
  auto started = client->call({.method = "POST",
                               .base_url = server,
                               .path = "/xrpc/app.bulleted.importOutline",
                               .body = std::move(body),
                               .bearer = *token});
  if (!started) {
    err << "error: " << started.error().message << "\n";
    return 1;
  }
  if (started->status != 200) {
    err << "error: the server refused the import: HTTP " << started->status << " "
        << started->error_name() << ": " << started->error_message() << "\n";
    return 1;
  }
  const std::string id = started->json().value("jobId", "");
  out << "job " << id << " started under " << started->json().value("rootRkey", "") << "\n";
  std::optional<Progress> progress;
  while (true) {
    auto polled = client->call(
        {.base_url = server, .path = "/xrpc/app.bulleted.getImportJob", .query = {{"id", id}}});
    if (!polled || polled->status != 200) {
      err << "\nerror: cannot follow job " << id << "\n";
      return 1;
    }
    const auto job = polled->json();
    const auto done = job.value("done", std::int64_t{0});
    const std::string state = job.value("state", "");
    if (!progress)
      progress.emplace(err, stderr_is_terminal(), job.value("total", std::int64_t{0}), "nodes");
    if (state == "done") {
      progress->finish(done);
      out << "imported " << done << " nodes (job " << id << ")\n";
      return 0;
    }
    if (state == "failed") {
      progress->finish(done);
      err << "error: the import failed: " << job.value("errors", nlohmann::json::array()).dump()
          << "\n";
      return 1;
    }
    progress->update(done, state == "waiting" ? "waiting until " + job.value("resumeAt", "") : "");
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
}

}  // namespace

int run_import_command(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
  ArgSpec spec = config_arg_spec();
  spec.valued.insert({"repo", "parent", "format", "server", "token", "resume", "abandon"});
  auto args = parse_args(argv, spec);
  if (!args) {
    err << "error: " << args.error() << "\n" << kUsage;
    return 2;
  }
  auto config = load_config_or_report(*args, err);
  if (!config) return 2;
  appview::configure_logging(config->log_level == "info" ? "warn" : config->log_level,
                             config->log_format);
  if (auto resume = args->option("resume")) {
    auto store = open_store_or_report(*config, err);
    if (!store) return 1;
    // A failed job runs again once its operator has mended the cause.
    if (auto resumed = appview::resume_failed_import(*store, *resume); !resumed) {
      err << "error: " << resumed.error().message << "\n";
      return 1;
    }
    ordering::TidClock clock;
    return run_local_job(*store, clock, *resume, appview::runner_name("import"), out, err);
  }
  if (auto abandon = args->option("abandon")) {
    auto store = open_store_or_report(*config, err);
    if (!store) return 1;
    auto job = appview::abandon_import(*store, *abandon);
    if (!job) {
      err << "error: " << job.error().message << "\n";
      return 1;
    }
    out << "import " << job->id << " is " << to_string(job->state) << " at " << job->done << "/"
        << job->total << (job->state == schema::ImportState::kDone ? "" : "; its plan is dropped")
        << "\n";
    return 0;
  }
  auto repo = args->option("repo");
  if (args->positionals.size() != 1 || !repo || !schema::Did::parse(*repo)) {
    err << kUsage;
    return 2;
  }
  if (auto parent = args->option("parent"); parent && !schema::RecordKey::parse(*parent)) {
    err << "error: --parent must be a record key\n" << kUsage;
    return 2;
  }
  if (auto format = args->option("format"); format && !appview::outline::parse_format(*format)) {
    err << "error: --format must be opml or text\n" << kUsage;
    return 2;
  }
  const std::string path = args->positionals[0];
  auto content = read_whole(path, config->max_import_bytes, err);
  if (!content) return 1;
  const auto format = format_of(*args, path);
  if (args->option("server")) return import_through_server(*args, *content, format, out, err);

  appview::outline::ImportLimits limits;
  limits.max_bytes = config->max_import_bytes;
  auto tree = appview::outline::parse_outline(format, *content, limits);
  if (!tree) {
    err << "error: " << path << ": " << tree.error().message << "\n";
    return 1;
  }
  auto store = open_store_or_report(*config, err);
  if (!store) return 1;
  appview::GroupLocks locks;
  ordering::TidClock clock;
  const std::string runner = appview::runner_name("import");
  auto job = appview::plan_import(
      *store, locks, clock,
      {*repo, args->option("parent"), format, std::nullopt, "WorkFlowy", runner}, *tree);
  if (!job) {
    err << "error: " << job.error().message << "\n";
    return 1;
  }
  err << "job " << job->id << ": " << job->total
      << " nodes planned (resume with: bulleted-appview import --resume " << job->id << ")\n";
  return run_local_job(*store, clock, job->id, runner, out, err);
}

}  // namespace bulleted::cli
