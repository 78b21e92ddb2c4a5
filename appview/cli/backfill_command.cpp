#include "appview/cli/backfill_command.hpp"

#include <filesystem>
#include <ostream>

#include "appview/cli/args.hpp"
#include "appview/cli/common.hpp"
#include "appview/config.hpp"
#include "appview/logging.hpp"
#include "firehose/consumer/repo_fetcher.hpp"
#include "firehose/ingestor.hpp"
#include "schema/store.hpp"
#include "schema/syntax.hpp"

namespace bulleted::cli {

int run_backfill_command(const std::vector<std::string>& argv, std::ostream& out,
                         std::ostream& err) {
  auto args = parse_args(argv, config_arg_spec());
  if (!args) {
    err << "error: " << args.error()
        << "\nusage: bulleted-appview backfill DID [--pds URL] [--db PATH]\n";
    return 2;
  }
  if (args->positionals.size() != 1 || !schema::Did::parse(args->positionals[0])) {
    err << "usage: bulleted-appview backfill DID [--pds URL] [--db PATH]\n";
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
    err << "error: name the repo's PDS with --pds URL (or firehose.repoServiceUrl)\n";
    return 2;
  }
  const std::string did = args->positionals[0];
  auto store = open_store_or_report(*config, err);
  if (!store) return 1;
  auto fetcher = firehose::make_http_repo_fetcher(
      service, std::chrono::seconds(config->fetch_timeout_seconds));
  auto car = fetcher->get_repo(did);
  if (!car) {
    err << "error: " << car.error().message << "\n";
    return 1;
  }
  firehose::FirehoseMetrics metrics;
  firehose::Ingestor ingestor(*store, {}, metrics);
  auto snapshot = ingestor.resync_from_car(*car, did);
  if (!snapshot) {
    err << "error: " << snapshot.error().message << "\n";
    return 1;
  }
  out << "backfilled " << did << " at rev " << snapshot->rev << ": " << snapshot->records.size()
      << " records, " << metrics.ops_applied.load() << " changes applied, "
      << snapshot->rejected.size() << " rejected\n";
  return 0;
}

}  // namespace bulleted::cli
