# Shared by the scripts/bench*.sh benchmarks (sourced, not run).

# write_section MD NAME SECTION_FILE: puts SECTION_FILE into the report MD between the
# markers <!-- NAME:begin --> and <!-- NAME:end --> (which SECTION_FILE itself starts and
# ends with), replacing the previous figures of that benchmark, or appending them.
write_section() {
    local md=$1 name=$2 section=$3
    local b="<!-- $name:begin -->" e="<!-- $name:end -->"
    if [ -f "$md" ] && grep -qF "$b" "$md"; then
        awk -v b="$b" -v e="$e" -v f="$section" '
            $0 == b { while ((getline line < f) > 0) print line; skip = 1; next }
            $0 == e { skip = 0; next }
            !skip { print }' "$md" >"$md.tmp"
        mv "$md.tmp" "$md"
    else
        [ -f "$md" ] || printf '# Benchmarks\n\nFigures written by the scripts named in each section; rerun them with `make bench`.\n' >"$md"
        { echo; cat "$section"; } >>"$md"
    fi
}
