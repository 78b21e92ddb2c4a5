#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz with clang-16 (ASan + UBSan) into
# build-fuzz/ and runs each for SECONDS (default 60), seeded from the test
# fixtures. Corpora grow in build-fuzz/corpus/<target>; a crash leaves its
# input in build-fuzz/artifacts/ and fails the script.
# Usage: scripts/fuzz.sh [SECONDS] [TARGET...]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
seconds="${1:-60}"
shift || true
./scripts/install-deps.sh
build=build-fuzz
if [ ! -f "$build/CMakeCache.txt" ]; then
  CXX=clang++-16 cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBULLETED_FUZZ=ON >/dev/null
fi
cmake --build "$build" --parallel "$(nproc)"

seed_outline() {  # the import fixtures, each prefixed with the byte that picks its parser
  local dir="$build/seed/outline_fuzz"
  mkdir -p "$dir"
  { printf '\x00'; cat tests/fixtures/import/workflowy.opml; } > "$dir/opml"
  { printf '\x01'; cat tests/fixtures/import/workflowy.txt; } > "$dir/text"
  printf '\x02Messy <b>bold <i>both</b> italic</i> </u>Q&A &amp; <a href="x">l</a>' > "$dir/html"
  find "$dir" -type f
}

seed_dag_cbor() {  # the interop data-model fixtures, as CBOR bytes
  local dir="$build/seed/dag_cbor_fuzz"
  mkdir -p "$dir"
  python3 - "$dir" <<'PY'
import base64, json, pathlib, sys
out = pathlib.Path(sys.argv[1])
for i, case in enumerate(json.load(open("tests/fixtures/interop/data-model/data-model-fixtures.json"))):
    cbor = case.get("cbor_base64")
    if cbor:
        (out / f"fixture-{i}").write_bytes(base64.b64decode(cbor + "=" * (-len(cbor) % 4)))
PY
  find "$dir" -type f
}

seed_order_keys() {  # seed (4 bytes), count, then "lower|upper"
  local dir="$build/seed/order_key_fuzz"
  mkdir -p "$dir"
  printf '\x01\x00\x00\x00\x03a0|a1' > "$dir/adjacent"
  printf '\x02\x00\x00\x00\x05|a0' > "$dir/prepend"
  printf '\x03\x00\x00\x00\x07zzzzzzzzzzzzzzzzzzzzzzzzzzz|' > "$dir/largest"
  printf '\x04\x00\x00\x00\x02A00000000000000000000000000V|a0V' > "$dir/smallest"
  find "$dir" -type f
}

seed_api() {  # one body per procedure: the first byte picks it
  local dir="$build/seed/api_fuzz"
  mkdir -p "$dir"
  printf '\x00{"repo":"did:plc:fuzzer","text":"a","position":"first"}' > "$dir/create"
  printf '\x01{"repo":"did:plc:fuzzer","rkey":"3jzfcijpj2z2a","parentRkey":"x","afterRkey":"y"}' > "$dir/move"
  printf '\x02{"repo":"did:plc:fuzzer","rkey":"3jzfcijpj2z2a","text":"b","completed":true}' > "$dir/update"
  printf '\x03{"repo":"did:plc:fuzzer","rkey":"3jzfcijpj2z2a"}' > "$dir/delete"
  printf '\x04{"repo":"did:plc:fuzzer","format":"text","content":"- a\\n  - b\\n"}' > "$dir/import"
  printf '\x05{"identifier":"alice.test","password":"x"}' > "$dir/session"
  find "$dir" -type f
}

seed_search() {  # one query a file: the vector file's rows
  local dir="$build/seed/search_query_fuzz"
  mkdir -p "$dir"
  local n=0
  while IFS= read -r line; do
    case "$line" in ''|//*) continue ;; esac
    n=$((n + 1))
    printf '%s' "${line% => *}" > "$dir/row$n"
  done < tests/schema/search_query_vectors.txt
  find "$dir" -type f
}

seed() {  # seed TARGET: fixture files that make a good starting corpus
  case "$1" in
    frame_fuzz) find tests/fixtures/firehose -name '*.bin' -o -name '*.cbor' ;;
    outline_fuzz) seed_outline ;;
    dag_cbor_fuzz) seed_dag_cbor ;;
    car_fuzz) find tests/fixtures/firehose/run -name '*.car' ;;
    order_key_fuzz) seed_order_keys ;;
    api_fuzz) seed_api ;;
    search_query_fuzz) seed_search ;;
  esac
}

targets=("$@")
if [ "${#targets[@]}" -eq 0 ]; then
  mapfile -t targets < <(find "$build/tests/fuzz" -maxdepth 1 -type f -perm -u+x -name '*_fuzz' -printf '%f\n' | sort)
fi
mkdir -p "$build/artifacts"
status=0
for target in "${targets[@]}"; do
  corpus="$build/corpus/$target"
  mkdir -p "$corpus"
  # Named by their whole path: fixtures of different folders share file names.
  while IFS= read -r file; do cp -n "$file" "$corpus/${file//\//_}" 2>/dev/null || true; done < <(seed "$target")
  echo "fuzz: $target for ${seconds}s ($(ls "$corpus" | wc -l) inputs in the corpus)"
  if ! "$build/tests/fuzz/$target" "$corpus" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
      -artifact_prefix="$build/artifacts/$target-" -print_final_stats=1 2>"$build/$target.log"; then
    echo "fuzz: $target FAILED; see $build/$target.log and $build/artifacts/"
    tail -n 30 "$build/$target.log"
    status=1
  else
    grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$build/$target.log" | sed "s/^/fuzz: $target /"
  fi
done
exit "$status"
