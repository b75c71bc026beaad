# bench_summary LOG: the last "== summary" block of a benchmark's log (the
# figures judged against targets), else its last lines. Sourced by
# scripts/gpu-run.sh and scripts/compare-builds.sh.
bench_summary() {
  if grep -q '^== summary' "$1"; then
    awk '/^== summary/{buf=""; keep=1} keep{buf=buf $0 "\n"} END{printf "%s", buf}' "$1" | tail -n +2
  else
    tail -n "${2:-12}" "$1"
  fi
}
