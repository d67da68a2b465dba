#!/usr/bin/env bash
# Compares pi-usage with ccusage's `pi session` report (recorded-cost mode) on the same files.
#
#   scripts/compare-ccusage.sh [FILE...]     (default: every file of ../shared/corpus)
#
# Installs ccusage 20.0.24 with npm into a temporary directory (never into the repository),
# copies the files into a Pi sessions directory there as f001.jsonl, f002.jsonl, ... (ccusage
# names a session after its file), runs
#   ccusage pi session --json --offline --mode display --pi-path DIR
# and pi-usage --no-dedup over the copies (ccusage does not remove repeats), and prints every
# session whose token counts or cost differ, then both grand totals. See docs/USAGE-COMPARISON.md.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${PI_USAGE:-$root/target/release/pi-usage}
[ -x "$bin" ] || (cd "$root" && cargo build --release --bin pi-usage)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
npm install --silent --prefix "$tmp" ccusage@20.0.24 >/dev/null
sessions=$tmp/sessions/--compare--
mkdir -p "$sessions"
if [ $# -eq 0 ]; then
    mapfile -t files < <(find "$root/../shared/corpus" -type f ! -name README.md | sort)
else
    files=("$@")
fi
i=0
for f in "${files[@]}"; do
    i=$((i + 1))
    n=$(printf 'f%03d' "$i")
    cp "$f" "$sessions/$n.jsonl"
    printf '%s\t%s\n' "$n" "$f" >>"$tmp/map.tsv"
done
HOME=$tmp/home "$tmp/node_modules/.bin/ccusage" pi session --json --offline --mode display \
    --pi-path "$tmp/sessions" >"$tmp/ccusage.json"
"$bin" --json --no-dedup "$sessions"/*.jsonl 2>/dev/null >"$tmp/pi-usage.jsonl" || true
jq -r -n --slurpfile ours "$tmp/pi-usage.jsonl" --slurpfile cc "$tmp/ccusage.json" --rawfile map "$tmp/map.tsv" '
  ($map | split("\n") | map(select(. != "") | split("\t") | {key: .[0], value: .[1]}) | from_entries) as $names
  | ($ours | map({key: (.file | split("/") | last | sub("\\.jsonl$"; "")),
                  value: [.total.input, .total.output, .total.cache_read, .total.cache_write, .total.cost]})
           | from_entries) as $a
  | ($cc[0].sessions | map({key: .sessionId,
                  value: [.inputTokens, .outputTokens, .cacheReadTokens, .cacheCreationTokens, .totalCost]})
           | from_entries) as $b
  | ([$a, $b] | map(keys) | add | unique) as $all
  | ($all | map(select(($a[.] // [0,0,0,0,0]) as $x | ($b[.] // [0,0,0,0,0]) as $y
        | ($x[0:4] != $y[0:4]) or (($x[4] // 0) - ($y[4] // 0) | fabs) > 1e-9))) as $diff
  | "sessions: pi-usage \($a | length), ccusage \($b | length); same tokens and cost (within 1e-9 $): \($all | length - ($diff | length)) of \($all | length)",
    ($diff[] | "differs: \(.) \($names[.]): pi-usage \($a[.] // "no session"), ccusage \($b[.] // "no session")"),
    "pi-usage --no-dedup total: \($ours | map(.total) | [map(.input), map(.output), map(.cache_read), map(.cache_write)] | map(add)) $\($ours | map(.total.cost // 0) | add)",
    "ccusage total:             \($cc[0].totals | [.inputTokens, .outputTokens, .cacheReadTokens, .cacheCreationTokens]) $\($cc[0].totals.totalCost)"'
