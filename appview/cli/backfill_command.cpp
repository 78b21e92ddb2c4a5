#include "appview/cli/backfill_command.hpp"

#include <filesystem>
#include <ostream>

#include "appview/cli/args.hpp"
#include "appview/cli/common.hpp"
#include "appview/config.hpp"
#include "appview/logging.hpp"
#include "firehose/client/xrpc_client.hpp"
#include "firehose/consumer/repo_fetcher.hpp"
#include "firehose/identity/identity.hpp"
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
  identity::IdentityResolver identity(
      firehose::make_http_xrpc_client(std::chrono::seconds(config->fetch_timeout_seconds), 1 << 20),
      {.plc_url = config->plc_url,
       .handle_resolver = config->handle_resolver,
       .allow_private_addresses = config->allow_private_addresses});
  auto fetcher = firehose::make_http_repo_fetcher(
      {.source = service,
       .timeout = std::chrono::seconds(config->fetch_timeout_seconds),
       .pds_of = [&identity](const std::string& repo) { return identity.pds_of(repo); },
       .allow_private_addresses = config->allow_private_addresses});
  auto car = fetcher->get_repo(did);
  if (!car) {
    err << "error: " << car.error().message << "\n";
    return 1;
  }
  firehose::FirehoseMetrics metrics;
  // The repo is verified against its key before anything of it is applied.
  firehose::Ingestor ingestor(*store, {.keys = &identity}, metrics);
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
