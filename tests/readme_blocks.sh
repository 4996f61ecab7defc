#!/bin/sh
# readme_blocks.sh — the shell blocks of README.md run as written, in order,
# from the top of a checkout after scripts/example (issue #19 point 1).
#
# Usage: readme_blocks.sh SOURCE_ROOT BUILD_ROOT [FILE]
#
# FILE (default README.md) is another Markdown file of the checkout whose
# blocks are held to the same rule (meson test contributing_blocks:
# CONTRIBUTING.md).
#
# Every fenced block of README.md other than ```c, ```python and ```text
# (code, output and text programs, tested elsewhere or not commands) must
# be marked by an HTML comment on the line right before its fence:
#
#   <!-- readme: run -->             run it
#   <!-- readme: run if onnx -->     run it when the build has the ONNX importer
#   <!-- readme: run if onnx torch --> ... and the checkout's .venv/bin/python has torch and onnx
#   <!-- readme: skip (REASON) -->   illustrative, or too slow: never run
#
# An unmarked block fails the test, so that no untested command enters the
# README unnoticed. The blocks marked run are sourced, in README order, by
# one `sh` with `set -e` (what one block exports, the next sees), in a
# scratch directory that stands for the checkout: every top-level entry git
# tracks in SOURCE_ROOT (every entry outside git) and .venv linked in, and a
# build/ holding BUILD_ROOT's tools/, python/ and examples/ with
# build/scale.kiln written as scripts/example writes it.
# BUILD_ROOT/tools comes first on PATH, so `kiln` is the binary under test.
set -eu
root=$(cd "$1" && pwd)
build=$(cd "$2" && pwd)
doc=${3:-README.md}
readme=$root/$doc
tmp=$(mktemp -d "${TMPDIR:-/tmp}/kiln-readme-blocks-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/blocks"

# Split README.md: blocks/N.sh holds block N's lines; the manifest has one
# line per block, "N<TAB>LINE<TAB>LANG<TAB>MARKER" (LANG "-" when the fence
# names none, MARKER the line before the fence when it is a readme comment);
# a readme comment not right before a fence is reported as "stray".
awk -v dir="$tmp/blocks" '
    function marker(line) { return line ~ /^<!-- readme:.*-->[ \t]*$/ }
    !inside && /^```/ {
        inside = 1; n++; start = NR
        lang = substr($0, 4); gsub(/[ \t]/, "", lang)
        file = dir "/" n ".sh"; printf "" > file
        printf "%d\t%d\t%s\t%s\n", n, NR, lang == "" ? "-" : lang, marker(last) ? last : ""
        last = $0; next
    }
    inside && /^```[ \t]*$/ { inside = 0; close(file); last = $0; next }
    inside { print > file; last = $0; next }
    marker(last) { printf "stray\t%d\t-\t%s\n", NR - 1, last }
    { last = $0 }
    END { if (inside) printf "open\t%d\t-\t\n", start }
' "$readme" > "$tmp/manifest"

has_onnx() { kiln --help | grep -q '^  import-onnx '; }
has_torch() { "$root/.venv/bin/python" -c 'import torch, onnx' >/dev/null 2>&1; }

PATH="$build/tools:$PATH"
export PATH
problems=0
ran=0
skipped=0
tab=$(printf '\t')
{
    echo 'set -e'
    while IFS="$tab" read -r n line lang mark; do
        case $n in
        stray) echo "$doc:$line: '$mark' is not right before a fence" >&2; problems=$((problems + 1)); continue ;;
        open) echo "$doc:$line: a block that is never closed" >&2; problems=$((problems + 1)); continue ;;
        esac
        case $lang in c | python | text) continue ;; esac
        why=
        case $mark in
        "<!-- readme: run -->") ;;
        "<!-- readme: run if "*" -->")
            needs=${mark#"<!-- readme: run if "}
            for need in ${needs%" -->"}; do
                case $need in
                onnx) has_onnx || why="${why:+$why; }this kiln has no ONNX importer" ;;
                torch) has_torch || why="${why:+$why; }.venv/bin/python lacks torch or onnx" ;;
                *) echo "$doc:$line: unknown need '$need' in '$mark' (onnx, torch)" >&2; problems=$((problems + 1)) ;;
                esac
            done ;;
        "<!-- readme: skip ("?*") -->") why=${mark#"<!-- readme: skip ("}; why=${why%") -->"} ;;
        "")
            echo "$doc:$line: a \`\`\`${lang#-} block marked neither '<!-- readme: run -->' nor '<!-- readme: skip (REASON) -->'" >&2
            problems=$((problems + 1)); continue ;;
        *) echo "$doc:$line: unknown marker '$mark'" >&2; problems=$((problems + 1)); continue ;;
        esac
        if [ -n "$why" ]; then
            echo "$doc:$line: skipped ($why)" >&2
            skipped=$((skipped + 1))
            continue
        fi
        # Say which block runs (the commands, as a user would see them), then run it here.
        printf 'echo %s > "%s"\n' "$line" "$tmp/current"
        printf "echo; echo '== $doc:%s'\n" "$line"
        printf "sed 's/^/\$ /' '%s'\n" "$tmp/blocks/$n.sh"
        printf ". '%s'\n" "$tmp/blocks/$n.sh"
        ran=$((ran + 1))
    done < "$tmp/manifest"
    echo "echo done > '$tmp/current'"
    echo "$problems $ran $skipped" > "$tmp/counts"
} > "$tmp/run.sh"
read -r problems ran skipped < "$tmp/counts"
if [ "$problems" -ne 0 ]; then
    echo "$doc: $problems problem(s) with its blocks' markers" >&2
    exit 1
fi

# The checkout after scripts/example, in the scratch directory.
work=$tmp/checkout
mkdir -p "$work/build"
# In a git checkout, only what git tracks (and .venv, the environment the
# blocks run with): files a user made at the top of the checkout, such as
# the keys the README's own blocks write there, must not be in the way.
if git -C "$root" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    entries=$(git -C "$root" ls-files | cut -d/ -f1 | sort -u)
    [ -e "$root/.venv" ] && entries="$entries .venv"
else
    entries=$(cd "$root" && for e in * .[!.]*; do [ -e "$e" ] && echo "$e"; done)
fi
for name in $entries; do
    case $name in build | .git) continue ;; esac
    if [ -e "$root/$name" ]; then ln -s "$root/$name" "$work/$name"; fi
done
for part in tools python examples; do
    ln -s "$build/$part" "$work/build/$part"
done
"$build/examples/scale" "$work/build/scale.kiln" >/dev/null

status=0
(cd "$work" && sh "$tmp/run.sh" </dev/null) || status=$?
if [ "$status" -ne 0 ]; then
    echo "$doc: the block at line $(cat "$tmp/current" 2>/dev/null || echo '?') failed (exit $status)" >&2
    exit 1
fi
echo "$doc: $ran shell blocks ran as written, $skipped skipped"
