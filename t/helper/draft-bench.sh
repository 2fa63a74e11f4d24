#!/bin/sh
# draft-bench.sh MODEL [REPS]: tf-run --draft against plain decoding on the
# model's held-out ids (val4096.ids as 16 prompts of 256 ids, 64 ids each)
# and on its prompt.ids (256 ids), with --draft mtp too for a model with
# an MTP head: acceptance length (ids a pass), ids a
# drafted pass, and the best ids/s of REPS runs (default 3). The
# acceptance figures are the same on every machine; ids/s is the
# machine's, and moves with whatever else runs on it.
M=${1:?usage: draft-bench.sh MODEL [REPS]}
reps=${2:-3}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/draft-bench.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
xargs -n 256 <"$M/val4096.ids" >"$tmp/val.ids"
# a model with an MTP head: its chains of 1 to 6 and a tree
mtp=
grep -q '"mtp_num_hidden_layers"' "$M/config.json" 2>/dev/null &&
	mtp="mtp:1 mtp:2 mtp:3 mtp:4 mtp:6 mtp_3x3"
printf '%-14s %-4s %-22s %8s %8s %9s\n' input -n draft 'ids/pass' drafted 'ids/s'
for input in val prompt; do
	ids=$tmp/val.ids n=64
	[ $input = prompt ] && ids=$M/prompt.ids n=256
	for d in plain "ngram" "ngram 4x8" "ngram:2" "ngram:2 4x8" "random" $mtp; do
		set --
		case $d in
		plain) ;;
		*\ *) set -- --draft "${d% *}" --draft-tree "${d#* }" ;;
		mtp_*) set -- --draft mtp --draft-tree "${d#mtp_}" ;;
		*) set -- --draft "$d" ;;
		esac
		best=0
		for r in $(seq "$reps"); do
			tf-run "$M" -n $n --ignore-eos "$@" --draft-stats "$ids" 2>"$tmp/st" >/dev/null || exit 1
			best=$(awk -v b=$best '$1 == "speed" { print ($2 > b ? $2 : b) }' "$tmp/st")
		done
		printf '%-14s %-4s %-22s %8s %8s %9s\n' $input.ids $n "$d" \
			"$(awk '$1 == "ids" { print $4 }' "$tmp/st")" "$(awk '$1 == "drafted" { print $7 }' "$tmp/st")" "$best"
	done
done
