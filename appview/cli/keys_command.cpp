#include "appview/cli/keys_command.hpp"

#include <charconv>
#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>

#include "appview/cli/args.hpp"
#include "ordering/order_key.hpp"

namespace bulleted::cli {
namespace {

constexpr const char* kUsage =
    "usage: bulleted-appview keys between A B [--n N] [--seed S]\n"
    "       bulleted-appview keys validate KEY...\n"
    "  A, B      order keys; '-' is an open end\n"
    "  --n N     how many keys, spread evenly (default 1)\n"
    "  --seed S  deterministic jitter: mulberry32(fmix32(S)), S a 32-bit integer\n";

int usage(std::ostream& err, const std::string& problem) {
  err << "error: " << problem << "\n" << kUsage;
  return 2;
}

template <class T>
std::optional<T> parse_number(const std::string& text) {
  T value{};
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

int run_between(const std::vector<std::string>& words, std::ostream& out, std::ostream& err) {
  auto args = parse_args(words, ArgSpec{.valued = {"n", "seed", "config", "db"}, .switches = {}});
  if (!args) return usage(err, args.error());
  if (args->positionals.size() != 2) return usage(err, "keys between takes two keys");
  std::size_t n = 1;
  if (auto text = args->option("n")) {
    auto parsed = parse_number<std::size_t>(*text);
    if (!parsed || *parsed == 0 || *parsed > 10'000'000) {
      return usage(err, "--n must be an integer from 1 to 10000000");
    }
    n = *parsed;
  }
  std::unique_ptr<ordering::RandomSource> jitter;
  if (auto text = args->option("seed")) {
    auto seed = parse_number<std::uint32_t>(*text);
    if (!seed) return usage(err, "--seed must be an integer from 0 to 4294967295");
    jitter = std::make_unique<ordering::Mulberry32>(ordering::Mulberry32::from_seed(*seed));
  } else {
    jitter = std::make_unique<ordering::EntropySource>();
  }
  auto bound = [](const std::string& word) -> std::optional<std::string_view> {
    if (word == "-") return std::nullopt;
    return std::string_view(word);
  };
  auto keys =
      ordering::n_between(bound(args->positionals[0]), bound(args->positionals[1]), n, *jitter);
  if (!keys) {
    err << "error: " << ordering::error_name(keys.error().code) << ": " << keys.error().message
        << "\n";
    return 1;
  }
  for (const auto& key : *keys) out << key << "\n";
  return 0;
}

int run_validate(const std::vector<std::string>& words, std::ostream& out, std::ostream& err) {
  auto args = parse_args(words, ArgSpec{.valued = {"config", "db"}, .switches = {}});
  if (!args) return usage(err, args.error());
  if (args->positionals.empty()) return usage(err, "keys validate takes at least one key");
  int status = 0;
  for (const auto& key : args->positionals) {
    if (auto reason = ordering::invalid_reason(key)) {
      out << "invalid: " << *reason << "\n";
      status = 1;
    } else {
      out << "ok\n";
    }
  }
  return status;
}

}  // namespace

int run_keys_command(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
  if (argv.empty()) return usage(err, "keys needs 'between' or 'validate'");
  const std::vector<std::string> rest(argv.begin() + 1, argv.end());
  if (argv[0] == "between") return run_between(rest, out, err);
  if (argv[0] == "validate") return run_validate(rest, out, err);
  return usage(err, "unknown keys command '" + argv[0] + "'");
}

}  // namespace bulleted::cli
