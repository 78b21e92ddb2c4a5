#include "appview/imports/import_jobs.hpp"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <random>
#include <set>

#include "appview/signin/secret_box.hpp"
#include "firehose/ingestor.hpp"
#include "ordering/order_key.hpp"
#include "ordering/random_source.hpp"
#include "schema/base64.hpp"
#include "schema/datetime.hpp"
#include "schema/sqlite.hpp"
#include "schema/syntax.hpp"

namespace bulleted::appview {

namespace {

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

using nlohmann::json;
constexpr std::size_t kMaxJobErrors = 20;

// The first few characters of a text, for a job's report (never cutting
// a character in two).
std::string excerpt(const std::string& text) {
  std::size_t end = std::min<std::size_t>(text.size(), 40);
  while (end > 0 && end < text.size() && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) {
    --end;
  }
  return text.substr(0, end) + (end < text.size() ? "\u2026" : "");
}
constexpr std::chrono::seconds kRetryAfterFailure{30};

std::string new_job_id() { return random_id("imp_", 12); }

std::string today() { return schema::now_datetime().substr(0, 10); }

ordering::RandomSource& planning_jitter() {
  thread_local ordering::EntropySource source;
  return source;
}

}  // namespace

std::string append_error(const std::string& errors_json, const std::string& message) {
  json errors = json::parse(errors_json, nullptr, false);
  if (!errors.is_array()) errors = json::array();
  errors.push_back(schema::now_datetime() + " " + message);
  while (errors.size() > kMaxJobErrors) errors.erase(errors.begin());
  return errors.dump();
}

Result<schema::ImportJobRow> plan_import(schema::Store& store, GroupLocks& locks,
                                         ordering::TidClock& clock,
                                         const ImportPlanRequest& request,
                                         const outline::Outline& outline) {
  const std::string& did = request.did;
  const std::string created_at = schema::now_datetime();
  // The records, checked against the same limits as any record.
  std::vector<schema::PlannedRecord> plan;
  plan.reserve(outline.nodes.size() + 1);
  std::vector<std::string> rkeys(outline.nodes.size());
  for (auto& rkey : rkeys) rkey = clock.next().str();
  const std::string root_rkey = clock.next().str();

  // Order keys: one n_between run per sibling group (the root's children are
  // group -1), in document order.
  std::map<std::ptrdiff_t, std::size_t> group_sizes;
  for (const auto& node : outline.nodes) ++group_sizes[node.parent];
  std::map<std::ptrdiff_t, std::vector<std::string>> group_keys;
  for (const auto& [group, size] : group_sizes) {
    auto keys = ordering::n_between(std::nullopt, std::nullopt, size, planning_jitter());
    if (!keys) return std::unexpected(key_error(keys.error()));
    group_keys[group] = std::move(*keys);
  }
  std::map<std::ptrdiff_t, std::size_t> used;
  // Facets the records may not carry are dropped, the text kept, and each
  // listed in the job's errors.
  json errors = json::array();
  std::size_t facet_problems = 0;
  const std::string root_uri = schema::record_uri(did, schema::kNodeCollection, root_rkey);
  for (std::size_t i = 0; i < outline.nodes.size(); ++i) {
    const auto& node = outline.nodes[i];
    schema::NodeRecord record;
    record.text = node.text;
    record.note = node.note;
    record.completed = node.completed;
    std::vector<std::string> problems;
    record.facets = schema::sanitize_facets(node.text, node.facets, &problems);
    for (const auto& problem : problems) {
      if (++facet_problems <= kMaxJobErrors) {
        errors.push_back(created_at + " node " + std::to_string(i + 1) + ": " + problem);
      }
    }
    // A text past the published record's limits loses nothing: the record
    // carries the rest beside it (schema::written_text), and the job says so.
    // (A note's published limits are the most of a note this app view reads:
    // one past them is refused below, with the node's number.)
    auto kept_whole = [&](const char* field, const std::string& value) {
      auto reason = schema::written_field_error(field, value);
      if (!reason || ++facet_problems > kMaxJobErrors) return;
      errors.push_back(created_at + " node " + std::to_string(i + 1) + " (\"" + excerpt(node.text) +
                       "\"): " + *reason +
                       ": the rest is kept in the record (textRest), and export gives it back");
    };
    kept_whole("text", node.text);
    record.created_at = created_at;
    record.parent = node.parent < 0
                        ? root_uri
                        : schema::record_uri(did, schema::kNodeCollection,
                                             rkeys[static_cast<std::size_t>(node.parent)]);
    record.sort_key = group_keys[node.parent][used[node.parent]++];
    record.sort_key_valid = true;
    auto json = schema::to_json(record);
    if (auto checked = schema::parse_node_record(json); !checked) {
      return fail(ErrorCode::kInvalidRequest, "node " + std::to_string(i + 1) + " (\"" +
                                                  excerpt(node.text) +
                                                  "\") cannot be a record: " + checked.error());
    }
    plan.push_back({rkeys[i], json.dump()});
  }

  // The root goes last under the chosen parent, placed under its group's lock
  // so the key is right for the group as it is now; the job row and the whole
  // plan are stored before the lock is released.
  schema::NodeRecord root;
  root.text = "Imported from " + request.source_name + " \u2014 " + today();
  root.created_at = created_at;
  root.sort_key_valid = true;
  const std::string group = schema::target_group(did, request.parent_rkey);
  auto guard = locks.lock(did, {group});
  NeighbourIntent intent;
  intent.parent_rkey = request.parent_rkey;
  intent.position = PositionIntent::last();
  auto placement = place(store, did, intent, std::nullopt, planning_jitter());
  if (!placement) return std::unexpected(placement.error());
  root.parent = placement->parent_uri;
  root.sort_key = placement->sort_key;
  // Equal-key siblings the placement wanted re-keyed are left as they are:
  // the root goes after the last of them either way.
  plan.insert(plan.begin(), {root_rkey, schema::to_json(root).dump()});

  schema::ImportJobRow job;
  job.id = new_job_id();
  job.did = did;
  job.root_rkey = root_rkey;
  job.format = request.format == outline::Format::kOpml ? "opml" : "text";
  job.state = schema::ImportState::kRunning;
  job.total = static_cast<std::int64_t>(plan.size());
  job.session = request.session;
  if (request.runner) {
    job.runner = request.runner;
    job.lease_until_ms = now_ms() + schema::kImportLeaseMs;
  }
  if (facet_problems > kMaxJobErrors) {
    errors.push_back(created_at + " " + std::to_string(facet_problems - kMaxJobErrors) +
                     " more facets dropped");
  }
  job.errors_json = errors.dump();
  if (auto r = store.import_jobs().create(job, plan); !r) return std::unexpected(r.error());
  spdlog::info("import {}: planned {} nodes for {} under {}", job.id, job.total, did,
               request.parent_rkey.value_or("the top level"));
  auto stored = store.import_jobs().find(job.id);
  if (!stored) return std::unexpected(stored.error());
  return **stored;
}

Result<void> move_job(schema::Store& store, schema::ImportJobRow& job, schema::ImportState to,
                      const std::optional<std::string>& resume_at, const std::string& errors_json) {
  if (!schema::allowed_transition(job.state, to)) {
    return fail(ErrorCode::kInternal, "import " + job.id + ": no move from " +
                                          std::string(to_string(job.state)) + " to " +
                                          std::string(to_string(to)));
  }
  if (auto r = store.import_jobs().set_state(job.id, to, resume_at, errors_json); !r) return r;
  job.state = to;
  job.resume_at = resume_at;
  job.errors_json = errors_json;
  return {};
}

Result<schema::ImportJobRow> abandon_import(schema::Store& store, const std::string& job_id) {
  auto tx = store.begin_write();
  if (!tx) return std::unexpected(tx.error());
  auto found = store.import_jobs().find(job_id);
  if (!found) return std::unexpected(found.error());
  if (!*found) return fail(ErrorCode::kNotFound, "no import job " + job_id);
  schema::ImportJobRow job = std::move(**found);
  if (job.state == schema::ImportState::kDone) return job;
  if (job.state != schema::ImportState::kFailed) {
    if (auto r = move_job(store, job, schema::ImportState::kFailed, std::nullopt,
                          append_error(job.errors_json, "abandoned by the operator"));
        !r) {
      return std::unexpected(r.error());
    }
  }
  auto dropped = store.import_jobs().drop_plan(job.id);
  if (!dropped) return std::unexpected(dropped.error());
  if (auto r = tx->commit(); !r) return std::unexpected(r.error());
  spdlog::info("import {}: abandoned at {}/{}; {} plan rows dropped", job.id, job.done, job.total,
               *dropped);
  return job;
}

Result<schema::ImportJobRow> resume_failed_import(schema::Store& store, const std::string& job_id) {
  auto tx = store.begin_write();
  if (!tx) return std::unexpected(tx.error());
  auto found = store.import_jobs().find(job_id);
  if (!found) return std::unexpected(found.error());
  if (!*found) return fail(ErrorCode::kNotFound, "no import job " + job_id);
  schema::ImportJobRow job = std::move(**found);
  if (job.state != schema::ImportState::kFailed) return job;
  auto rows = store.import_jobs().plan_rows(job.id);
  if (!rows) return std::unexpected(rows.error());
  if (*rows <= job.done && job.done < job.total) {
    return fail(ErrorCode::kInvalidRequest,
                "import " + job.id + " was abandoned: its plan is gone; import the file again");
  }
  if (auto r = move_job(store, job, schema::ImportState::kRunning, std::nullopt, job.errors_json);
      !r) {
    return std::unexpected(r.error());
  }
  if (auto r = tx->commit(); !r) return std::unexpected(r.error());
  return job;
}

std::string runner_name(std::string_view what) {
  std::random_device random;
  return std::string(what) + " " + std::to_string(::getpid()) + " " + std::to_string(random());
}

Result<bool> claim_job(schema::Store& store, const std::string& job, const std::string& runner) {
  return store.import_jobs().claim(job, runner, now_ms());
}

std::optional<std::chrono::system_clock::time_point> resume_time(const schema::ImportJobRow& job) {
  if (!job.resume_at) return std::nullopt;
  auto ms = schema::datetime_ms(*job.resume_at);
  if (!ms) return std::nullopt;
  return std::chrono::system_clock::time_point(std::chrono::milliseconds(*ms));
}

namespace {

// A batch holding the job's root, committed again after the repo changed:
// the root goes last in its group as the group is now (the rest of the
// batch is under the root, where nothing else writes).
Result<void> place_root_again(schema::Store& store, const schema::ImportJobRow& job,
                              RecordWrite& first, GroupLocks* locks) {
  if (first.rkey != job.root_rkey || !first.record) return {};
  std::optional<std::string> parent_rkey;
  if (first.record->parent) {
    parent_rkey = first.record->parent->substr(first.record->parent->rfind('/') + 1);
  }
  std::optional<GroupLocks::Guard> guard;
  if (locks != nullptr) {
    guard.emplace(locks->lock(job.did, {schema::target_group(job.did, parent_rkey)}));
  }
  NeighbourIntent intent;
  intent.parent_rkey = parent_rkey;
  intent.position = PositionIntent::last();
  auto placement = place(store, job.did, intent, first.rkey, planning_jitter());
  if (!placement) return std::unexpected(placement.error());
  first.record->sort_key = placement->sort_key;
  return {};
}

}  // namespace

Result<schema::ImportJobRow> step_import(schema::Store& store, RecordSink& sink,
                                         schema::ImportJobRow job, bool first_of_run,
                                         bool resume_now, GroupLocks* locks) {
  using schema::ImportState;
  if (schema::is_terminal(job.state)) return job;
  if (job.state == ImportState::kWaiting) {
    const auto resume = resume_time(job);
    if (!resume_now && resume && *resume > std::chrono::system_clock::now()) return job;
    if (auto r = move_job(store, job, ImportState::kRunning, std::nullopt, job.errors_json); !r) {
      return std::unexpected(r.error());
    }
    first_of_run = true;  // the last attempt may have reached the repo
  }
  auto outcome = run_import_batch(store, sink, job.id, first_of_run, locks);
  if (outcome) return outcome;
  spdlog::error("import {}: {}", job.id, outcome.error().message);
  if (auto r =
          move_job(store, job, ImportState::kWaiting,
                   schema::format_datetime(std::chrono::system_clock::now() + kRetryAfterFailure),
                   append_error(job.errors_json, outcome.error().message));
      !r) {
    return std::unexpected(r.error());
  }
  return job;
}

namespace {

// A job whose plan is all written: done, its plan dropped with it, and the
// pages that freed given back to the system (a few at a time, so writers
// wait little).
Result<schema::ImportJobRow> finish_job(schema::Store& store, schema::ImportJobRow job) {
  spdlog::info("import {}: done, {} nodes", job.id, job.done);
  if (auto r = move_job(store, job, schema::ImportState::kDone, std::nullopt, job.errors_json);
      !r) {
    return std::unexpected(r.error());
  }
  if (auto given = store.give_back_free_pages(); !given) {
    spdlog::warn("import {}: the free pages could not be given back: {}", job.id,
                 given.error().message);
  } else if (*given > 0) {
    spdlog::info("import {}: {} free pages given back to the system", job.id, *given);
  }
  return job;
}

// A batch whose commit failed: waiting for the host's rate limit, retried
// later after a failure upstream, or failed for good.
Result<schema::ImportJobRow> after_failed_commit(schema::Store& store, schema::ImportJobRow job,
                                                 const Error& error) {
  using schema::ImportState;
  const auto now = std::chrono::system_clock::now();
  ImportState state = ImportState::kFailed;
  std::optional<std::string> resume_at;
  std::string errors = append_error(job.errors_json, error.message);
  switch (error.code) {
    case ErrorCode::kRateLimited:
      state = ImportState::kWaiting;
      resume_at = schema::format_datetime(
          now + std::chrono::seconds(std::max(1, error.retry_after_seconds)));
      errors = job.errors_json;
      spdlog::info("import {}: rate limited at {}/{}; waiting until {}", job.id, job.done,
                   job.total, *resume_at);
      break;
    case ErrorCode::kUpstreamFailure:
    case ErrorCode::kUnavailable:
    case ErrorCode::kRepoChanged:
      state = ImportState::kWaiting;
      resume_at = schema::format_datetime(now + kRetryAfterFailure);
      spdlog::warn("import {}: {}; retrying at {}", job.id, error.message, *resume_at);
      break;
    default:
      spdlog::error("import {}: failed at {}/{}: {}", job.id, job.done, job.total, error.message);
  }
  if (auto r = move_job(store, job, state, resume_at, errors); !r)
    return std::unexpected(r.error());
  return job;
}

}  // namespace

Result<schema::ImportJobRow> run_import_batch(schema::Store& store, RecordSink& sink,
                                              const std::string& job_id, bool first_of_run,
                                              GroupLocks* locks) {
  auto loaded = store.import_jobs().find(job_id);
  if (!loaded) return std::unexpected(loaded.error());
  if (!*loaded) return fail(ErrorCode::kNotFound, "no import job " + job_id);
  schema::ImportJobRow job = std::move(**loaded);
  using schema::ImportState;
  auto set_state = [&](ImportState state, const std::optional<std::string>& resume_at,
                       const std::string& errors) -> Result<schema::ImportJobRow> {
    if (auto r = move_job(store, job, state, resume_at, errors); !r)
      return std::unexpected(r.error());
    return job;
  };
  if (job.state != ImportState::kRunning) {
    return fail(ErrorCode::kInvalidRequest,
                "import " + job.id + " is " + std::string(to_string(job.state)) + ", not running");
  }
  auto rows = store.import_jobs().plan(job.id, job.done, kImportBatch);
  if (!rows) return std::unexpected(rows.error());
  if (rows->empty()) return finish_job(store, std::move(job));
  // A batch is one commit of at most kImportBatch records: a bullet with a
  // note is two, and the rows that do not fit go in the next batch.
  std::vector<RecordWrite> writes;
  writes.reserve(rows->size());
  std::size_t taken = 0;
  for (const auto& row : *rows) {
    auto record = schema::parse_node_record(json::parse(row.record_json, nullptr, false));
    if (!record) return fail(ErrorCode::kCorrupt, "import plan row unreadable: " + record.error());
    const std::size_t records = record->note && !record->note->empty() ? 2 : 1;
    if (taken > 0 && writes.size() + records > static_cast<std::size_t>(kImportBatch)) break;
    push_created(job.did, row.rkey, std::move(*record), writes);
    ++taken;
  }
  rows->resize(taken);
  const std::int64_t after = job.done + static_cast<std::int64_t>(rows->size());
  if (first_of_run) {
    // A batch is one commit: if its first record is in the repo, all are.
    auto held = sink.holds(store, job.did, rows->front().rkey);
    if (held && *held) {
      spdlog::info("import {}: rows {}-{} are already in the repo", job.id, job.done, after);
      if (auto r = store.import_jobs().set_done(job.id, after); !r)
        return std::unexpected(r.error());
      job.done = after;
      return job;
    }
  }
  // Like every write, against the commit the index holds: a change made
  // meanwhile by anyone else is detected, not overwritten.
  const CommitOptions options{.swap = true, .import_done = std::pair{job.id, after}};
  auto committed = sink.commit(store, job.did, writes, options);
  if (!committed && committed.error().code == ErrorCode::kRepoChanged) {
    // The repo moved on: bring the index up to it and commit the same
    // batch, with the same record keys, on top. Nothing is written twice:
    // a commit that did land is found by its first record.
    spdlog::info(
        "import {}: the repo changed meanwhile; refreshing it and committing rows {}-{} "
        "again",
        job.id, job.done, after);
    if (auto refreshed = sink.refresh(store, job.did); !refreshed) {
      committed = std::unexpected(refreshed.error());
    } else if (auto held = sink.holds(store, job.did, rows->front().rkey); held && *held) {
      if (auto r = store.import_jobs().set_done(job.id, after); !r)
        return std::unexpected(r.error());
      job.done = after;
      return job;
    } else if (auto replaced = place_root_again(store, job, writes.front(), locks); !replaced) {
      committed = std::unexpected(replaced.error());
    } else {
      committed = sink.commit(store, job.did, writes, options);
    }
  }
  if (!committed) return after_failed_commit(store, std::move(job), committed.error());
  job.done = after;
  // Paced by the host's rate-limit headers: with nothing left in the window,
  // wait for its reset rather than run into a 429.
  if (committed->rate_remaining && *committed->rate_remaining <= 0 && committed->rate_reset &&
      job.done < job.total) {
    const auto reset =
        std::chrono::system_clock::time_point(std::chrono::seconds(*committed->rate_reset));
    if (reset > std::chrono::system_clock::now()) {
      spdlog::info("import {}: the rate-limit window is used up; waiting until {}", job.id,
                   schema::format_datetime(reset));
      return set_state(ImportState::kWaiting, schema::format_datetime(reset), job.errors_json);
    }
  }
  return job;
}

}  // namespace bulleted::appview
