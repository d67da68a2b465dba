#!/bin/sh
# Re-write the Pi 1.6.0 fixtures (fixtures/pi16-*.jsonl) and re-record Pi 1.6.0's answers for
# every fixture and corpus file (tests/data/pi16-reference-*.jsonl). Needs `npm ci` here first.
# The corpus is ../shared/corpus beside the checkout, or $PI_JSONL_CORPUS; skipped when absent.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
node="$here/node_modules/.bin/node"
"$node" "$here/write-fixtures.mjs" "$root/fixtures" >/dev/null
cd "$root/fixtures"
# shellcheck disable=SC2046 # fixture names have no blanks
"$node" "$here/reference.mjs" $(ls -- *.jsonl | LC_ALL=C sort) >"$root/tests/data/pi16-reference-fixtures.jsonl"
corpus=${PI_JSONL_CORPUS:-$root/../shared/corpus}
if [ -d "$corpus" ]; then
	cd "$corpus"
	# shellcheck disable=SC2046 # corpus file names have no blanks
	"$node" "$here/reference.mjs" $(find . -type f ! -name README.md -printf '%P\n' | LC_ALL=C sort) \
		>"$root/tests/data/pi16-reference-corpus.jsonl"
else
	echo "record.sh: no corpus at $corpus (set PI_JSONL_CORPUS); its answers were not re-recorded" >&2
fi
