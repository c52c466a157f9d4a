# common.sh - what the bench scripts share, sourced by them: where things
# are (here, root, out, STINT) and the checks made before measuring.
here="$(cd "$(dirname "${BASH_SOURCE[1]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
out="$here/out"
STINT="${STINT:-$root/build/stint}"

# Each named program on PATH, else say what installs it and stop.
bench_need() {
	for t in "$@"; do
		command -v "$t" >/dev/null 2>&1 || {
			echo "bench: $t is missing: bash scripts/deps.sh --bench" >&2
			exit 1
		}
	done
}

# stint built, and each named variable a positive number.
bench_check() {
	[ -x "$STINT" ] || { echo "bench: no stint at '$STINT' (build it first, or set STINT=)" >&2; exit 1; }
	for v in "$@"; do
		[[ "${!v}" =~ ^[1-9][0-9]*$ ]] || { echo "bench: $v must be a positive number, not '${!v}'" >&2; exit 1; }
	done
	mkdir -p "$out"
}
