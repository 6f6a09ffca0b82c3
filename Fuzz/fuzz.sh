#!/usr/bin/env bash
# Builds and runs the libFuzzer targets in Fuzz/targets (see Fuzz/README.md).
#
#   Fuzz/fuzz.sh [SECONDS] [TARGET...]     # every target when none is named
#
# Build: the library modules (Support, ImageFormats, Fetch, DiskCache,
# HTTPCaching, RemoteCache, Loader, and the C targets they import) are
# compiled once with `swiftc -sanitize=fuzzer,address` into .build/fuzz, then
# each target file is linked against the modules it imports and theirs, no
# more (the image targets: ImageFormats and CCRC); libFuzzer gives the main.
# Nothing here touches SwiftPM's own build folders.
# Run: each target starts from its seeds (Fuzz/seeds/TARGET, plus Fixtures/
# for the image targets) and the corpus it grew before (.build/fuzz/corpus),
# for SECONDS seconds. A crash leaves its input in .build/fuzz/crashes and
# makes the script fail; turn it into a unit test (Fuzz/README.md).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
seconds=${1:-${FUZZ_SECONDS:-60}}
shift || true
out=$root/.build/fuzz
mkdir -p "$out/obj" "$out/corpus" "$out/crashes"

# The library modules the targets import, in dependency order, and what each
# one imports (Package.swift's graph), so a target links only what it needs.
# (No target imports Loader, ImageDecoding or RemoteCache's users: they are not built.)
MODULES=(Support ImageFormats Fetch DiskCache HTTPCaching RemoteCache)
declare -A IMPORTS=(
    [Support]="" [ImageFormats]="CCRC" [Fetch]="CCurl CDecode Support" [DiskCache]="CCrypto CXXHash Support"
    [HTTPCaching]="Fetch DiskCache Support" [RemoteCache]="Fetch DiskCache Support"
)
# -package-name: as SwiftPM gives every module of the package one, so that
# `package` declarations (DiskCacheStore's answer-only lookup) compile here too.
SWIFT_FLAGS=(-sanitize=fuzzer,address -parse-as-library -swift-version 6 -O -g -enable-testing -package-name asyncfetch)

CFLAGS=()
sources() { find "Sources/$1" -name '*.swift' | sort; }

build() {
    local stamp="$out/obj/stamp" newest log="$out/build.log"
    newest=$(find Sources Fuzz/targets -newer "$stamp" -type f 2>/dev/null | head -1 || true)
    if [[ -f $stamp && -z $newest ]]; then return; fi
    echo "fuzz: building the modules and targets (-sanitize=fuzzer,address; log in $log)"
    if ! build_all > "$log" 2>&1; then cat "$log" >&2; echo "fuzz: build failed" >&2; exit 2; fi
    touch "$stamp"
}

build_all() {
    local links=()
    # C targets: object file and module map each.
    for dir in Sources/C*/; do
        local name; name=$(basename "$dir")
        local extra=()
        # CVips.c sees glib's headers (Package.swift gives the same paths).
        [[ $name == CVips ]] && read -r -a extra <<< "$(pkg-config --cflags-only-I vips)"
        # Every C file of the corner (CCurl has two), joined into one object for the module.
        local parts=() file
        for file in "$dir"*.c; do
            parts+=("$out/obj/$name-$(basename "$file" .c).o")
            clang -c -O1 -g -fsanitize=fuzzer-no-link,address -I "$dir/include" "${extra[@]}" "$file" -o "${parts[-1]}"
        done
        ld -r "${parts[@]}" -o "$out/obj/$name.o"
        printf 'module %s {\n    header "%s"\n    export *\n}\n' "$name" "$root/$dir/include/$name.h" > "$out/obj/$name.modulemap"
        CFLAGS+=(-Xcc "-fmodule-map-file=$out/obj/$name.modulemap" -Xcc -I"$root/$dir/include")
    done
    for module in "${MODULES[@]}"; do
        # shellcheck disable=SC2046
        swiftc "${SWIFT_FLAGS[@]}" "${CFLAGS[@]}" -I "$out/obj" -module-name "$module" -wmo \
            -emit-module -emit-module-path "$out/obj/$module.swiftmodule" -c -o "$out/obj/$module.o" $(sources "$module")
    done
    for file in Fuzz/targets/*.swift; do
        local target objects=() links=() module
        target=$(basename "$file" .swift)
        # shellcheck disable=SC2046
        for module in $(closure $(sed -n 's/^\(@testable \)\{0,1\}import \([A-Za-z]*\).*/\2/p' "$file") | sort -u); do
            [[ -f $out/obj/$module.o ]] || continue          # Foundation, Glibc, …
            objects+=("$out/obj/$module.o")
            # A C corner's libraries, from its target in Package.swift (which may span lines).
            mapfile -t -O "${#links[@]}" links < <(awk -v name="name: \"$module\"" \
                'index($0, name) { found = 1 } found { print } found && /\]\)/ { exit }' Package.swift \
                | grep -o 'linkedLibrary("[^"]*")' | sed 's/linkedLibrary("\(.*\)")/-l\1/')
        done
        echo "fuzz: $target links ${objects[*]##*/} ${links[*]}"
        swiftc "${SWIFT_FLAGS[@]}" "${CFLAGS[@]}" -I "$out/obj" -module-name "Fuzz$target" "$file" \
            "${objects[@]}" "${links[@]}" -o "$out/$target"
    done
}

# The modules named and every module they import, one per line.
closure() {
    local module
    for module in "$@"; do
        echo "$module"
        # shellcheck disable=SC2086
        [[ -n ${IMPORTS[$module]:-} ]] && closure ${IMPORTS[$module]}
    done
    true
}

# Seeds: the checked-in ones, the fixtures for image targets, and the files
# every previous crash left (so a fixed crash stays covered).
seed() {
    local target=$1 corpus=$out/corpus/$1
    mkdir -p "$corpus"
    [[ -d Fuzz/seeds/$target ]] && cp -n Fuzz/seeds/"$target"/* "$corpus"/ 2>/dev/null || true
    if [[ $target == image || $target == svg ]]; then cp -n Fixtures/images/* "$corpus"/ 2>/dev/null || true; fi
    for crash in "$out/crashes/$target"-*; do [[ -f $crash ]] && cp -n "$crash" "$corpus"/; done
    true
}

build
if (( $# )); then targets=("$@"); else
    targets=(); for file in Fuzz/targets/*.swift; do targets+=("$(basename "$file" .swift)"); done
fi
failed=()
printf '%-14s %12s %8s  %s\n' target executions exec/s result
for target in "${targets[@]}"; do
    seed "$target"
    log=$out/$target.log
    status=0
    SWIFT_BACKTRACE=enable=no ASAN_OPTIONS=detect_leaks=0 "$out/$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
        -max_len=65536 -print_final_stats=1 -artifact_prefix="$out/crashes/$target-" \
        "$out/corpus/$target" > "$log" 2>&1 || status=$?
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
    rate=$(( runs / (seconds > 0 ? seconds : 1) ))
    if (( status != 0 )); then
        failed+=("$target")
        printf '%-14s %12s %8s  %s\n' "$target" "$runs" "$rate" "CRASH (see $log and $out/crashes)"
        grep -E 'ERROR|Fatal error|SUMMARY|Test unit written' "$log" | head -5 || true
    else
        printf '%-14s %12s %8s  %s\n' "$target" "$runs" "$rate" ok
    fi
done
if (( ${#failed[@]} )); then echo "fuzz: crashes in ${failed[*]}" >&2; exit 1; fi
