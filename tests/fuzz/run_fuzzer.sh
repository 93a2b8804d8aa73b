#!/bin/bash
# run_fuzzer.sh BINARY NAME SECONDS FUZZ_DIR SOURCE_DIR SHARED_DATA
# Replays the regression inputs, then fuzzes for SECONDS from a seed corpus
# built from the shipped examples. Fails on any crash, leak or sanitizer
# report, and prints how many executions ran.
set -u
extra=""
bin=$1 name=$2 secs=$3 dir=$4 src=$5 shared=$6
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/corpus"
if [ "$name" = fuzz_parsers ]; then
    # Seeds: each example prefixed with the byte that selects its format
    # (0 lower, 1 upper, 2 full, 3 points, 4 dipha, 5 sparse, 6 binary).
    i=0
    for f in "$src"/docs/examples/*.lower_distance_matrix "$shared"/*.lower_distance_matrix; do
        [ -f "$f" ] && [ "$(stat -c %s "$f")" -lt 20000 ] && { printf '\0'; cat "$f"; } >"$work/corpus/s$((i++))"
    done
    for f in "$src"/docs/examples/*.csv "$shared"/projective_plane.csv; do
        [ -f "$f" ] && { printf '\3'; cat "$f"; } >"$work/corpus/s$((i++))"
        [ -f "$f" ] && { printf '\2'; cat "$f"; } >"$work/corpus/s$((i++))"
    done
    [ -f "$shared/projective_plane.dipha" ] && { printf '\4'; cat "$shared/projective_plane.dipha"; } >"$work/corpus/s$((i++))"
    printf '\0050 1 1.5\n1 2 0.5\n' >"$work/corpus/s$((i++))"
    printf '\6\0\0\200\77\0\0\0\100\0\0\100\100' >"$work/corpus/s$((i++))"
elif [ "$name" = fuzz_diagrams ]; then
    # Seeds: a diagram in each format, prefixed with the byte that selects
    # it (0 auto, 1 json, 2 ripser, 3 gudhi, 4 csv).
    printf '\1{"dims":[{"dim":0,"intervals":[[0,1],[0,null]]},{"dim":1,"intervals":[[0.5,2]]}]}' >"$work/corpus/json"
    printf '\2value range: [0,2]\npersistence intervals in dim 0:\n [0,1)\n [0, )\npersistence intervals in dim 1:\n [1.5,2)\n' >"$work/corpus/ripser"
    printf '\3# x\n0 0 inf\n1 0.25 1e-3\n2 1 1.5 2\n' >"$work/corpus/gudhi"
    printf '\4dim,birth,death\n0,0,inf\n1,0.5,\n' >"$work/corpus/csv"
    printf '\0{"x":[1,{"y":null}],"dims":[]}' >"$work/corpus/auto"
elif [ "$name" = fuzz_cli ]; then
    # Seeds: one command line per subcommand, arguments one a line; @P, @D,
    # @E, @L are the harness's point cloud, diagrams and distance matrix.
    i=0
    for args in 'barcode\n--format\npoint-cloud\n--dim\n2\n@P' 'barcode\n--modulus\n3\n--threshold\n1.5\n@L' \
        'distance\n--metric\ncosine\n--dtype\nf32\n@P' 'edges\n--threshold\n1\n--format\npoint-cloud\n@P' \
        'backends\n--json' 'image\n-W\n4\n-H\n4\n--weight\nlinear\n@D' \
        'features\n--grid\n0:2:7\n-k\n2\n-O\ncsv\n@D' 'compare\n-p\n2\n-O\njson\n@D\n@E' \
        'plot\n--kind\nbarcode\n--size\n300x200\n-t\nT\n@D' 'features\n--max-memory\n1.5M\n@D'; do
        printf "$args" >"$work/corpus/s$((i++))"
    done
    extra="-close_fd_mask=3 -timeout=10"
elif [ "$name" = fuzz_extremes ]; then
    # Seeds: palette picks (see the target), and one raw double.
    printf '\7\10\7\10\4\5' >"$work/corpus/next15"
    printf '\0\12\0\13\21\24' >"$work/corpus/tiny"
    printf '\33\4\34\4\31\4' >"$work/corpus/huge"
    printf '\360\0\0\0\0\0\0\360\177\21' >"$work/corpus/raw"
    extra="-timeout=10"
elif [ "$name" = fuzz_certificates ]; then
    # A certificate as topoml-conformance --certify writes it.
    cp "$dir"/seeds/fuzz_certificates/* "$work/corpus/"
else
    cp "$src/topoml.yaml.example" "$work/corpus/example.yaml"
    printf 'gate: off\nprefer: [cuda]\nmax_memory: 1GiB\n' >"$work/corpus/small.yaml"
fi
if [ -d "$dir/regressions/$name" ]; then
    "$bin" -runs=1 "$dir/regressions/$name"/* || { echo "FAIL: a regression input fails again"; exit 1; }
fi
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
"$bin" -max_total_time="$secs" -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
    -artifact_prefix="$work/" $extra "$work/corpus" 2>"$work/log"
rc=$?
grep -E "stat::number_of_executed_units|ERROR|SUMMARY" "$work/log" | head -20
if [ $rc -ne 0 ]; then
    echo "FAIL: $name found a problem; the input is:"
    ls "$work"/crash-* "$work"/leak-* 2>/dev/null | head -3
    for f in "$work"/crash-* "$work"/leak-*; do [ -f "$f" ] && xxd "$f" | head -20; done
    tail -40 "$work/log"
    exit 1
fi
echo "$name: passed"
