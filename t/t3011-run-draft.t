#!/bin/sh
# tf-run --draft: speculative decoding writes the ids plain decoding
# writes, token for token, on every t/data model and a 4-bit bundle:
# greedy and sampled (temperature 0.7 and 1, top-k and top-p), with the
# ngram drafter as a chain and as trees, and with a drafter of random ids
# (nothing it proposes is right, so every id is the target's own); at
# short -n limits, at end ids placed where drafts run across them, under
# -P and --stream. --draft-stats shows that the ngram drafts were taken
# (more than one id a pass), so the exactness above covers accepted
# drafts and not only rejected ones. Bad drafters and tree shapes are
# errors that say what is wrong. t/unit/draft.c holds the pieces.
. "$(dirname "$0")/lib-tf.sh"
. "$T_DIR/lib-draft.sh"

# lines of 48 ids, none, 160, 3 and the prompt, in a vocabulary of v
lines() {
	{ tr ' ' '\n' <$DATA/shakespeare-q35/val4096.ids | awk 'NF' | awk -v v=$1 '
		{ id[NR] = $1 % v }
		END { line(1, 48); print ""; line(100, 160); line(500, 3) }
		function line(a, n,   i) { for (i = 0; i < n; i++) printf "%s%d", (i ? " " : ""), id[a + i]; print "" }'
	  cat $DATA/shakespeare-q35/prompt.ids; }
}
lines 1024 >tiny.ids
lines 2048 >sh.ids
tf-pack -q --bits 4 $DATA/shakespeare-q35 q4.tfb || exit 1

DRAFTS="ngram ngram:2|4x6 random:5 random:6|3x3"

for M in tiny-q35 shakespeare-q35 shakespeare-q35-1bit q4.tfb; do
	ids=sh.ids path=$DATA/$M
	test $M = tiny-q35 && ids=tiny.ids
	test $M = q4.tfb && path=q4.tfb
	test_expect "$M: drafted greedy ids are the plain ones" "
		same -n 32 --ignore-eos $path $ids
	"
	test_expect "$M: drafted ids at temperature 0.7, top-k 40, are the plain ones" "
		same -n 32 --ignore-eos --temp 0.7 --top-k 40 --seed 4 $path $ids
	"
	test_expect "$M: drafted ids at temperature 1, top-p 0.9, are the plain ones" "
		same -n 32 --ignore-eos --temp 1 --top-p 0.9 --seed 5 $path $ids
	"
done

M=$DATA/shakespeare-q35
# what --draft-stats says about a run: field $1's value
stat() {
	awk -v k="$1" '$1 == k { print $2 }' stats
}
test_expect "ngram drafts are taken greedily: more than one id a pass" "
	tf-run -n 64 --ignore-eos --draft ngram --draft-stats $M $M/prompt.ids >o 2>stats &&
	test \$(stat ids) = 63 &&
	awk '\$1 == \"ids\" { exit !(\$4 > 1) }' stats &&
	awk '\$1 == \"drafted\" { exit !(\$4 > 0) }' stats
"
test_expect "... and sampled at temperature 0.7" "
	tf-run -n 64 --ignore-eos --temp 0.7 --seed 4 --draft ngram:2 --draft-tree 4x6 --draft-stats \
		$M $M/prompt.ids >o 2>stats &&
	awk '\$1 == \"drafted\" { exit !(\$4 > 0) }' stats
"
# the last id of a line leaves no room for a draft: a plain step
test_expect "random drafts are never taken, every pass but the last drafted" "
	tf-run -n 24 --ignore-eos --draft random:1 --draft-stats $M $M/prompt.ids >o 2>stats &&
	awk '\$1 == \"passes\" { exit !(\$2 == 23 && \$3 == \"(22\") }' stats &&
	awk '\$1 == \"ids\" { exit !(\$4 == \"1.000\") }' stats
"
test_expect "--draft-stats alone reports the plain decode: one id a pass" "
	tf-run -n 24 --ignore-eos --draft-stats $M $M/prompt.ids >o 2>stats &&
	test \$(stat passes) = 23 && grep -q '^speed  *[0-9.]* ids/s\$' stats &&
	grep -q '^time  *[0-9.]* s decoding: draft [0-9.]*%, verify [0-9.]*%, other [0-9.]*%\$' stats
"

test_expect "at -n 1 to 10 the drafted ids are the plain ones, never more" "
	for n in 1 2 3 4 5 6 7 8 9 10; do
		DRAFTS='ngram random:5|3x3' same -n \$n --ignore-eos $M sh.ids || exit 1
		test \$(wc -w <drafted) -le \$((n * 4)) || exit 1
	done
"

# an end id at the first place each of a few ids of the plain run comes
# up: drafted runs stop there as the plain run does, drafts running
# across it or not
tf-run -n 64 --ignore-eos $M $M/prompt.ids | tr ' ' '\n' >greedy
cp -r $M m && chmod -R u+w m
for k in 3 9 17 30 45; do
	e=$(sed -n ${k}p greedy)
	python3 -c '
import json, sys
for f in ("m/config.json", "m/generation_config.json"):
    c = json.load(open(f)); c["eos_token_id"] = int(sys.argv[1]); json.dump(c, open(f, "w"))' $e
	test_expect "an end id (the plain run's id $k, $e) ends drafted lines where it ends plain ones" "
		same -n 64 m $M/prompt.ids && test \$(wc -w <plain) -lt 64 &&
		same -n 64 --temp 0.7 --seed 3 m sh.ids
	"
done

test_expect "-P 4 with --draft writes the lines of -P 1 without" "
	tf-run -n 32 --ignore-eos -P 1 $M sh.ids >p1 &&
	tf-run -n 32 --ignore-eos -P 4 --draft ngram:2 --draft-tree 3x4 $M sh.ids >p4 && cmp p1 p4 &&
	tf-run -n 32 --ignore-eos --temp 1 --top-k 50 --seed 9 -P 1 $M sh.ids >s1 &&
	tf-run -n 32 --ignore-eos --temp 1 --top-k 50 --seed 9 -P 4 --draft ngram $M sh.ids >s4 && cmp s1 s4
"
test_expect "--stream with --draft writes the same ids" "
	tf-run -n 32 --ignore-eos --stream --draft ngram $M sh.ids | sed 's/ \$//' | cmp - p1
"

test_error "an unknown drafter is named" tf-run "no drafter 'nope': not ngram\[:N\], mtp\[:K\] or random\[:SEED\]" \
	tf-run -n 4 --draft nope $M $M/prompt.ids
test_error "ngram:0 is no n-gram" tf-run "bad drafter 'ngram:0': ngram:N takes an n-gram of 1 to 64 ids" \
	tf-run -n 4 --draft ngram:0 $M $M/prompt.ids
test_error "ngram:65 is too long" tf-run "bad drafter 'ngram:65'" tf-run -n 4 --draft ngram:65 $M $M/prompt.ids
test_error "ngram:x is no number" tf-run "bad drafter 'ngram:x'" tf-run -n 4 --draft ngram:x $M $M/prompt.ids
test_error "ngram: is no number" tf-run "bad drafter 'ngram:'" tf-run -n 4 --draft ngram: $M $M/prompt.ids
test_error "random:-1 is no seed" tf-run "bad drafter 'random:-1'" tf-run -n 4 --draft random:-1 $M $M/prompt.ids
test_error "a folder that is no drafter" tf-run "drafter '$M' is a folder, and drafter checkpoints \(DFlash\) are not supported" \
	tf-run -n 4 --draft $M $M $M/prompt.ids
test_error "a path to nothing" tf-run "no drafter 'no/such': not ngram" \
	tf-run -n 4 --draft no/such $M $M/prompt.ids
for shape in 0x3 3x0 3 4x x4 65x2 2x65 axb 4x6x2; do
	test_error "--draft-tree $shape is a bad shape" tf-run "bad draft tree '$shape'" \
		tf-run -n 4 --draft ngram --draft-tree $shape $M $M/prompt.ids
done
test_error "a tree of more nodes than a pass takes" tf-run "bad draft tree '32x64': 2049 nodes, a tree pass takes at most 1024" \
	tf-run -n 4 --draft ngram --draft-tree 32x64 $M $M/prompt.ids
test_error "--draft-tree auto is not implemented, and says so" tf-run "draft tree 'auto' \(a shape chosen by timing\) is not implemented" \
	tf-run -n 4 --draft ngram --draft-tree auto $M $M/prompt.ids
test_expect "... and a bad drafter writes nothing" "
	tf-run -n 4 --draft nope -o bad.out $M $M/prompt.ids 2>/dev/null; test \$? = 1 && ! test -e bad.out
"

usage() {
	title=$1
	shift
	tf-run "$@" $M $M/prompt.ids >out 2>err
	rc=$?
	[ $rc = 2 ] && grep -q "^tf-run: " err && ! [ -s out ]
	say_ok $? "$title"
}
usage "--draft without -n is a usage error" --draft ngram
usage "--draft-stats without -n is a usage error" --draft-stats
usage "--draft-tree without --draft is a usage error" -n 4 --draft-tree 2x2
test_expect "-h names --draft, --draft-tree and --draft-stats" '
	tf-run -h | grep -q -- "--draft SPEC" && tf-run -h | grep -q -- "--draft-tree SHAPE" &&
	tf-run -h | grep -q -- "--draft-stats"
'

done_testing
