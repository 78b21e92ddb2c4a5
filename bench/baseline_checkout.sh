# Sourced by the scripts that measure this checkout against an earlier
# build: checks BASELINE (default $1) out as a git worktree in
# .scratch/upkeep-baseline and configures its Release build there (tests
# off), unless that worktree already holds it. Sets base_dir and baseline.
# Usage (from the checkout's root): . bench/baseline_checkout.sh DEFAULT_COMMIT
baseline="${BASELINE:-$1}"
base_dir="$root/.scratch/upkeep-baseline"
if [ ! -f "$base_dir/build/CMakeCache.txt" ] || \
   [ "$(git -C "$base_dir" rev-parse HEAD 2>/dev/null)" != "$(git rev-parse "$baseline")" ]; then
  rm -rf "$base_dir"
  git worktree prune
  git worktree add --detach "$base_dir" "$baseline" >/dev/null
  cmake -S "$base_dir" -B "$base_dir/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DBULLETED_TESTS=OFF >/dev/null
fi
