#!/bin/bash
# The CLI's contract: exit 0 on success, 2 on bad usage, 1 on errors, with
# a message on stderr that names the file and the reason; nothing ever
# exits by a signal.
topoml=$1 data=$2
pass=0 fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
expect() { # expect STATUS PATTERN -- command...
    local want=$1 pattern=$2
    shift 3
    "$@" >"$tmp/out" 2>"$tmp/err"
    local got=$?
    if [ "$got" -eq "$want" ] && grep -qE -- "$pattern" "$tmp/out" "$tmp/err"; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        echo "FAIL: $* -> status $got (want $want), pattern '$pattern'"
        head -5 "$tmp/out" "$tmp/err"
    fi
}
expect 2 "Usage" -- "$topoml"
expect 0 "Commands" -- "$topoml" --help
expect 0 "^topoml [0-9]+\.[0-9]+\.[0-9]+" -- "$topoml" --version
expect 2 "unknown command" -- "$topoml" frobnicate
for c in barcode distance edges backends; do
    expect 0 "Usage: topoml $c" -- "$topoml" "$c" --help
done
expect 2 "unknown --format" -- "$topoml" barcode --format nope "$data/random16.lower_distance_matrix"
expect 2 "--dim needs" -- "$topoml" barcode --dim -1 "$data/random16.lower_distance_matrix"
expect 2 "--threshold needs" -- "$topoml" barcode --threshold abc "$data/random16.lower_distance_matrix"
expect 2 "--modulus needs" -- "$topoml" barcode --modulus 1 "$data/random16.lower_distance_matrix"
expect 2 "more than one input" -- "$topoml" barcode a b
expect 2 "--threshold is required" -- "$topoml" edges "$data/random16.lower_distance_matrix"
expect 1 "/nonexistent/file" -- "$topoml" barcode /nonexistent/file
expect 1 "not a prime" -- "$topoml" barcode --modulus 4 "$data/random16.lower_distance_matrix"
printf '0,1\n1,nan\n' >"$tmp/nan.csv"
expect 1 "nan.csv:2" -- "$topoml" barcode --format point-cloud "$tmp/nan.csv"
expect 1 "memory limit" -- "$topoml" distance --max-memory 1K "$data/o3_1024.txt"
expect 1 "unknown key" -- env TOPOML_CONFIG=/dev/null "$topoml" backends --config <(echo "bogus: 1")
expect 0 "scalar \(built in\)" -- "$topoml" backends
expect 0 "topoml-backend-scalar.so" -- "$topoml" backends
expect 0 '"name":"scalar"' -- "$topoml" backends --json
expect 0 "persistence intervals in dim 0" -- "$topoml" barcode --dim 0 - <"$data/random16.lower_distance_matrix"
expect 0 '^[0-9]+ [0-9]+ [0-9.e+-]+$' -- "$topoml" edges --threshold 1000 --format point-cloud "$data/o3_1024.txt"
expect 0 "^dim,birth,death" -- "$topoml" barcode --dim 0 --output csv "$data/random16.lower_distance_matrix"
expect 0 '"dims"' -- "$topoml" barcode --dim 0 --output json "$data/random16.lower_distance_matrix"
# --verbose: a timeline of the stages, and the backend that ran. The default
# choice for Rips is never cpp-compat (a cross-check, chosen by name only):
# one of the backends that may be chosen for Rips by default (threads is the
# multi-threaded CPU backend).
expect 0 "s: dim 2: [0-9]+ to do" -- "$topoml" barcode --verbose --backend scalar --dim 2 "$data/random16.lower_distance_matrix"
expect 0 "s: done" -- "$topoml" barcode --verbose --backend scalar --dim 2 "$data/random16.lower_distance_matrix"
expect 0 "ran on backend '(scalar|cuda|threads)'" -- "$topoml" barcode --verbose --dim 2 "$data/random16.lower_distance_matrix"
expect 0 "choice: +by name only" -- "$topoml" backends
# The same line for every command that runs an op, and only with --verbose.
expect 0 "^topoml: ran on backend '[a-z0-9-]+' \(" -- "$topoml" distance --verbose -o "$tmp/d.txt" "$data/o3_1024.txt"
expect 0 "^topoml: ran on backend '[a-z0-9-]+' \(" -- "$topoml" edges --verbose --threshold 0.1 --format point-cloud -o "$tmp/e.txt" "$data/o3_1024.txt"
printf 'dim,birth,death\n1,0.1,0.5\n1,0.2,0.9\n' >"$tmp/dgm.csv"
expect 0 "^topoml: ran on backend '[a-z0-9-]+' \(" -- "$topoml" image --verbose -o "$tmp/i.csv" "$tmp/dgm.csv"
"$topoml" distance -o "$tmp/d.txt" "$data/o3_1024.txt" 2>"$tmp/quiet.err"
check_quiet() { ! grep -q "ran on backend" "$tmp/quiet.err"; }
if check_quiet; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: distance without --verbose names its backend"; fi
# A point cloud is never guessed (a square one reads as a matrix): edges,
# like barcode, says so and how to name it; distance reads points only.
expect 1 "format is named" -- "$topoml" edges --threshold 0.1 "$data/o3_1024.txt"
expect 0 "--format point-cloud" -- "$topoml" edges --help
expect 0 "reads points only" -- "$topoml" distance --help
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
