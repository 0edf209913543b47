#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz/) with clang, ASan and UBSan in a build directory of
# their own and runs each on a copy of its seed corpus for a bounded time. Exits non-zero when a
# target finds a crash, a leak, a timeout or an out-of-memory; its reproducer is kept under
# <build-dir>/fuzz-artifacts/<target>/.
# Usage: scripts/fuzz.sh [seconds-per-target]   (default 20)
# The build directory is UKES_FUZZ_BUILD_DIR, default build-fuzz.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-20}"
build="${UKES_FUZZ_BUILD_DIR:-build-fuzz}"
targets=(fuzz_run_spec fuzz_typed_spec fuzz_result_assembler fuzz_model_definition)

scripts/install-deps.sh
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DUKES_CUDA=OFF \
  -DUKES_BUILD_TESTS=OFF -DUKES_BUILD_BENCHMARKS=OFF -DUKES_BUILD_FUZZERS=ON >/dev/null
cmake --build "$build" -j "$(nproc)" --target ukes_fuzzers

# Largest input per target: spec texts and typed specs are small; result streams hold several
# chunks of packed doubles.
max_len() {
  case "$1" in
    fuzz_result_assembler) echo 16384 ;;
    *) echo 4096 ;;
  esac
}

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
failed=()
summary=()
for t in "${targets[@]}"; do
  corpus="$work/$t"
  cp -r "tests/fuzz/corpus/$t" "$corpus"
  artifacts="$build/fuzz-artifacts/$t"  # this run's reproducers only
  rm -rf "$artifacts"
  mkdir -p "$artifacts"
  dict=()
  case "$t" in  # spec keywords: JSON tokens for the text, the strings for the typed message
    fuzz_run_spec | fuzz_typed_spec) dict=(-dict=tests/fuzz/run_spec.dict) ;;
    fuzz_model_definition) dict=(-dict=tests/fuzz/model_definition.dict) ;;
  esac
  echo "fuzz: $t for ${seconds} s on $(find "$corpus" -type f | wc -l) seeds" >&2
  log="$work/$t.log"
  rc=0
  "$build/tests/fuzz/$t" "${dict[@]}" -max_total_time="$seconds" -rss_limit_mb=2048 \
    -malloc_limit_mb=1024 -timeout=10 -max_len="$(max_len "$t")" -print_final_stats=1 \
    -artifact_prefix="$artifacts/" "$corpus" >"$log" 2>&1 || rc=$?
  # The last status line (#N DONE/pulse/NEW ... cov: ft: corp:) and the executions.
  last="$(grep -E '^#[0-9]+' "$log" | tail -n 1 || true)"
  cov="$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")"
  ft="$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")"
  corp="$(sed -n 's/.* corp: \([^ ]*\).*/\1/p' <<<"$last")"
  execs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)"
  line="$(printf '%-22s execs %-9s cov %-6s ft %-6s corpus %s' "$t" "${execs:-?}" "${cov:-?}" \
    "${ft:-?}" "${corp:-?}")"
  if [ "$rc" -ne 0 ]; then
    line="$line   FAILED (exit $rc)"
    failed+=("$t")
    echo "fuzz: $t failed; its log:" >&2
    tail -n 80 "$log" >&2
    echo "fuzz: reproducer(s) in $artifacts:" >&2
    ls -l "$artifacts" >&2
  fi
  summary+=("$line")
done

echo "fuzz: ${seconds} s per target" >&2
printf '  %s\n' "${summary[@]}" >&2
if [ ${#failed[@]} -ne 0 ]; then
  echo "fuzz: FAILED: ${failed[*]}" >&2
  exit 1
fi
