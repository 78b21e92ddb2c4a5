#include "appview/cli/backfill_command.hpp"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <ostream>

#include "appview/cli/args.hpp"
#include "appview/cli/common.hpp"
#include "appview/config.hpp"
#include "appview/logging.hpp"
#include "firehose/client/xrpc_client.hpp"
#include "firehose/consumer/discovery.hpp"
#include "firehose/consumer/http_fetcher.hpp"
#include "firehose/consumer/repo_fetcher.hpp"
#include "firehose/identity/identity.hpp"
#include "firehose/ingestor.hpp"
#include "schema/store.hpp"
#include "schema/syntax.hpp"

namespace bulleted::cli {

namespace {

constexpr const char* kUsage =
    "usage: bulleted-appview backfill DID [--pds URL] [--db PATH]\n"
    "       bulleted-appview backfill --all [--pds URL] [--db PATH]\n";

// One line that rewrites itself on a terminal; a line every 100 repos
// otherwise (logs, pipes).
class Progress {
 public:
  Progress(std::ostream& out, std::size_t total)
      : out_(out), total_(total), terminal_(&out == &std::cout && isatty(STDOUT_FILENO) == 1) {}
  void update(std::size_t done, std::size_t failed) {
    if (!terminal_ && done % 100 != 0 && done != total_) return;
    const std::size_t width = 30;
    const std::size_t filled = total_ == 0 ? width : done * width / total_;
    out_ << (terminal_ ? "\r" : "") << "[" << std::string(filled, '#')
         << std::string(width - filled, '.') << "] " << done << "/" << total_ << " repos, "
         << failed << " failed" << (terminal_ ? "" : "\n") << std::flush;
  }
  void finish() {
    if (terminal_) out_ << "\n";
  }

 private:
  std::ostream& out_;
  std::size_t total_;
  bool terminal_;
};

}  // namespace

int run_backfill_command(const std::vector<std::string>& argv, std::ostream& out,
                         std::ostream& err) {
  auto spec = config_arg_spec();
  spec.switches.insert("all");
  auto args = parse_args(argv, spec);
  if (!args) {
    err << "error: " << args.error() << "\n" << kUsage;
    return 2;
  }
  const bool all = args->has("all");
  if (all ? !args->positionals.empty()
          : args->positionals.size() != 1 || !schema::Did::parse(args->positionals[0])) {
    err << kUsage;
    return 2;
  }
  auto config = load_config_or_report(*args, err);
  if (!config) return 2;
  appview::configure_logging(config->log_level, config->log_format);
  std::string service;
  if (config->repo_service_url) {
    service = *config->repo_service_url;
  } else if (config->firehose_url) {
    service = firehose::http_origin_of(*config->firehose_url);
  } else {
    err << "error: name the source with --pds URL (or firehose.repoServiceUrl)\n";
    return 2;
  }
  auto store = open_store_or_report(*config, err);
  if (!store) return 1;
  identity::IdentityResolver identity(
      firehose::make_http_fetcher({.allow_private_addresses = config->allow_private_addresses}),
      {.plc_url = config->plc_url,
       .handle_resolver = config->handle_resolver,
       .allow_private_addresses = config->allow_private_addresses});
  auto fetcher = firehose::make_http_repo_fetcher(
      {.source = service,
       .timeout = std::chrono::seconds(config->fetch_timeout_seconds),
       .max_repo_bytes = static_cast<std::size_t>(config->max_repo_bytes),
       .pds_of = [&identity](const std::string& repo) { return identity.pds_of(repo); },
       .allow_private_addresses = config->allow_private_addresses});
  firehose::FirehoseMetrics metrics;
  // Every repo is verified against its key before anything of it is applied.
  firehose::Ingestor ingestor(
      *store,
      {.keys = &identity, .max_repo_records = static_cast<std::size_t>(config->max_repo_records)},
      metrics);

  std::vector<std::string> dids;
  if (all) {
    auto client = firehose::make_http_xrpc_client(
        std::chrono::seconds(config->fetch_timeout_seconds), 64 << 20);
    auto listed = firehose::discover_repos(
        *client, {.source = service, .on_page = [&dids](const std::vector<std::string>& page) {
                    dids.insert(dids.end(), page.begin(), page.end());
                  }});
    if (!listed) {
      err << "error: cannot list the repos at " << service << ": " << listed.error().message
          << "\n";
      return 1;
    }
    out << "listed " << dids.size() << " repos at " << service << " (" << listed->method << ")\n";
  } else {
    dids.push_back(args->positionals[0]);
  }

  Progress progress(out, dids.size());
  std::size_t done = 0;
  std::size_t failed = 0;
  std::size_t records = 0;
  std::size_t rejected = 0;
  for (const auto& did : dids) {
    auto car = fetcher->get_repo(did);
    auto snapshot = car ? ingestor.resync_from_car(*car, did)
                        : Result<firehose::RepoSnapshot>(std::unexpected(car.error()));
    ++done;
    if (!snapshot) {
      ++failed;
      if (!all) {
        err << "error: " << snapshot.error().message << "\n";
        return 1;
      }
      spdlog::warn("backfill: {}: {}", did, snapshot.error().message);
    } else {
      records += snapshot->records.size();
      rejected += snapshot->rejected.size();
      if (!all) {
        out << "backfilled " << did << " at rev " << snapshot->rev << ": "
            << snapshot->records.size() << " records, " << metrics.ops_applied.load()
            << " changes applied, " << snapshot->rejected.size() << " rejected\n";
        return 0;
      }
    }
    progress.update(done, failed);
  }
  progress.finish();
  out << "backfilled " << (done - failed) << " of " << dids.size() << " repos: " << records
      << " records, " << metrics.ops_applied.load() << " changes applied, " << rejected
      << " rejected, " << failed << " failed\n";
  return failed == 0 ? 0 : 1;
}

}  // namespace bulleted::cli
