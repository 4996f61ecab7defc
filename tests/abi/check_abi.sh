#!/bin/sh
# check_abi.sh — a shared library's ABI against the baseline of the 1.0
# release (tests/abi/NAME.abi for libNAME.so.*: libkiln.abi, libkiln-onnx.abi,
# written by abidw at the release commit).
#
# Usage: check_abi.sh SOURCE_ROOT SHARED_LIBRARY            compare
#        check_abi.sh SOURCE_ROOT SHARED_LIBRARY --update   write the baseline (a release does this)
#
# abidiff's exit status is a bit mask: 1 an error, 2 a usage error, 4 an
# ABI change, 8 an incompatible one. Added functions and fields at the end
# of versioned structs are changes a 1.x release may make (bit 4: reported,
# the check passes; growth of a versioned struct is suppressed below, and
# any other struct that changed size fails); a removed function or a changed layout or signature
# breaks every program built against 1.0 (bit 8: the check fails, naming
# each). Only the public headers' types count (include/kiln/).
# Exit 77 (meson's "skipped") when abidiff is not installed
# (scripts/install-deps installs Debian's abigail-tools) or no baseline is
# committed yet.
set -eu
root=$1
library=$2
name=$(basename "$library")
baseline="$root/tests/abi/${name%%.so*}.abi"
if ! command -v abidiff >/dev/null 2>&1; then
    echo "check_abi: abidiff is not installed (Debian's abigail-tools; scripts/install-deps): skipped"
    exit 77
fi
if [ "${3:-}" = "--update" ]; then
    abidw --headers-dir "$root/include/kiln" --drop-private-types --no-corpus-path \
        --out-file "$baseline" "$library"
    echo "check_abi: wrote $baseline from $library"
    exit 0
fi
if [ ! -f "$baseline" ]; then
    echo "check_abi: no baseline $baseline yet (the release commit writes it): skipped"
    exit 77
fi
report=$(mktemp)
suppressions=$(mktemp)
trap 'rm -f "$report" "$suppressions"' EXIT
# A versioned struct (its first member `size_t struct_size`) may grow at its
# end: the library reads a caller's shorter struct by its struct_size. Such
# growth is suppressed for those structs only, found in the headers (an
# unversioned struct, e.g. one passed in arrays, must never grow); libabigail
# never suppresses a removed member or a shrinking struct.
versioned=$(awk '/^typedef struct kiln_[a-z_0-9]+ \{/ { name = $3; getline; if ($0 ~ /size_t struct_size;/) print name }' \
    "$root"/include/kiln/*.h | paste -sd '|' -)
printf '[suppress_type]\n  type_kind = struct\n  name_regexp = ^(%s)$\n  has_data_member_inserted_at = end\n' \
    "$versioned" >"$suppressions"
status=0
abidiff --headers-dir2 "$root/include/kiln" --drop-private-types --suppressions "$suppressions" "$baseline" \
    "$library" >"$report" 2>&1 || status=$?
cat "$report"
if [ $((status & 3)) -ne 0 ]; then
    echo "check_abi: abidiff failed (status $status)"
    exit 1
fi
# abidiff calls a changed layout an ABI change (4), not an incompatible one
# (8): a field inserted before others, a member or enumerator removed or
# retyped, a changed return or parameter type are refused here by name.
# What a 1.x release may do stays allowed: functions added, fields appended
# to a versioned struct (its struct_size grows), enumerators appended.
broken=$(grep -E "offset changed|data member deletion|type of '[^']*' changed|return type changed|parameter [0-9]+ of type '[^']*' changed|value changed from|enumerator deletion|parameter [0-9]+ of type '[^']*' was (added|removed)|size of symbol" "$report" || true)
# The suppression above also hides what is reached through a versioned
# struct (an unversioned kiln_dim_bound grown behind kiln_session_options'
# pointer), and abidiff leaves repeated changes out: so every struct whose
# size changed, from a report with nothing suppressed or left out, must be
# versioned.
abidiff --redundant --headers-dir2 "$root/include/kiln" --drop-private-types "$baseline" "$library" \
    >"$report" 2>&1 || true
grown=$(awk "/type 'struct kiln_[a-z_0-9]+'.* changed:/ { match(\$0, /struct kiln_[a-z_0-9]+/); \
             name = substr(\$0, RSTART + 7, RLENGTH - 7); getline; if (\$0 ~ /type size changed/) print name }" \
    "$report" | sort -u | grep -vxE "$versioned" || true)
for name in $grown; do
    line="struct $name changed size, and it has no struct_size: callers built against 1.0 (arrays of it, fields after it) break"
    if [ -n "$broken" ]; then broken="$broken
$line"; else broken=$line; fi
done
if [ $((status & 8)) -ne 0 ] || [ -n "$broken" ]; then
    [ -n "$broken" ] && printf '%s\n' "$broken" | sed 's/^ */check_abi: breaks: /'
    echo "check_abi: the ABI above breaks programs built against kiln 1.0 ($baseline):"
    echo "check_abi: keep the old function or layout beside the new one, or make it a new major version"
    exit 1
fi
if [ $((status & 4)) -ne 0 ]; then
    echo "check_abi: compatible changes against 1.0 (listed above)"
fi
echo "check_abi: compatible with the 1.0 baseline"
