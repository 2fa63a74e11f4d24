#!/bin/sh
# tf-run -P: many sequences generated in shared rounds. Every line equals
# the line -P 1 writes (greedy, sampled, step mode; bf16, 1-bit and 4-bit
# weights), lines come out in input order with an empty line for an empty
# input line, identical prompts sample apart, --stream writes the same ids,
# a small --mem-budget makes streams wait and changes nothing, a sequence
# that can never fit is an error with no output, and bad values of -P and
# of the budget are usage errors. t/unit/round.c holds every stream's
# logits to its logits alone, bit for bit.
. "$(dirname "$0")/lib-tf.sh"

. "$T_DIR/lib-streams.sh"
stream_lines 1024 >tiny.ids
stream_lines 2048 >sh.ids

for M in tiny-q35 shakespeare-q35 shakespeare-q35-1bit; do
	ids=sh.ids
	test $M = tiny-q35 && ids=tiny.ids
	test_expect "$M: -P 8 writes the lines of -P 1, greedy" "
		tf-run -n 24 --ignore-eos -P 1 $DATA/$M $ids >p1 &&
		tf-run -n 24 --ignore-eos -P 8 $DATA/$M $ids >p8 &&
		tf-run -n 24 --ignore-eos -P 3 $DATA/$M $ids >p3 &&
		test \$(wc -l <p1) = 7 && cmp p1 p8 && cmp p1 p3
	"
	test_expect "$M: -P 8 writes the lines of -P 1, sampled" "
		tf-run -n 24 --ignore-eos --temp 1 --top-k 50 --seed 9 -P 1 $DATA/$M $ids >s1 &&
		tf-run -n 24 --ignore-eos --temp 1 --top-k 50 --seed 9 -P 8 $DATA/$M $ids >s8 &&
		cmp s1 s8
	"
done

test_expect "4-bit weights: -P 8 writes the lines of -P 1" "
	tf-pack -q --bits 4 $DATA/shakespeare-q35 q4.tfb &&
	tf-run -n 16 --ignore-eos -P 1 q4.tfb sh.ids >q1 &&
	tf-run -n 16 --ignore-eos -P 8 q4.tfb sh.ids >q8 &&
	cmp q1 q8
"

M=$DATA/shakespeare-q35
test_expect "greedy lines in rounds are the lines of each sequence alone, in input order" "
	tf-run -n 16 --ignore-eos -P 8 $M sh.ids >all &&
	while IFS= read -r l; do
		if [ -z \"\$l\" ]; then echo; else echo \"\$l\" | tf-run -n 16 --ignore-eos $M; fi
	done <sh.ids >alone &&
	cmp all alone
"
test_expect "an empty input line gives an empty output line in its place" "
	tf-run -n 8 -P 4 $M sh.ids >e &&
	test \"\$(sed -n 2p e)\" = '' && test \"\$(sed -n 6p e)\" = '' &&
	test -n \"\$(sed -n 1p e)\" && test -n \"\$(sed -n 7p e)\"
"
test_expect "only empty lines: as many empty lines" "
	printf '\n\n\n' | tf-run -n 8 -P 2 $M >e3 && printf '\n\n\n' | cmp - e3
"
test_expect "identical prompts sample apart (each sequence its own seed)" "
	tf-run -n 24 --ignore-eos --temp 1 --seed 9 -P 8 $M sh.ids >s &&
	test \"\$(sed -n 1p s)\" != \"\$(sed -n 4p s)\"
"
test_expect "greedy identical prompts give identical lines" "
	test \"\$(sed -n 1p all)\" = \"\$(sed -n 4p all)\"
"
test_expect "--stream under -P writes the same ids, each followed by a space" "
	tf-run -n 16 --ignore-eos --stream -P 8 $M sh.ids >st &&
	sed 's/ \$//' st | cmp - all
"
test_expect "--mode step: -P 4 writes the lines of -P 1" "
	tf-run -n 8 --mode step -P 1 $M sh.ids >m1 &&
	tf-run -n 8 --mode step -P 4 $M sh.ids >m4 &&
	cmp m1 m4
"
test_expect "end ids end lines in rounds as alone" "
	tf-run -n 64 -P 1 $M sh.ids >x1 && tf-run -n 64 -P 8 $M sh.ids >x8 && cmp x1 x8
"

# a stream of 48 + 16 positions takes about 540 KiB here (most of it the
# recurrent states), 300 + 16 about 1 MiB: 1100K holds two short ones or
# the long one alone, 600K never the long one
test_expect "a small --mem-budget makes streams wait and writes the same lines" "
	tf-run -n 16 --ignore-eos -P 8 --mem-budget 1100K $M sh.ids >b &&
	cmp b all &&
	TF_MEM_BUDGET=1100K tf-run -n 16 --ignore-eos -P 8 $M sh.ids >b2 && cmp b2 all
"
test_error "a sequence that never fits the budget: the error says what would" tf-run \
	"sequence 3 needs [0-9.]+ MiB of cache, the budget is 600.0 KiB \(it holds a prompt of at most [0-9]+ ids with -n 16\)" \
	tf-run -n 16 -P 8 --mem-budget 600K -o never.out $M sh.ids
test_expect "... and leaves no output behind" '! test -e never.out && ! ls never.out* 2>/dev/null'
test_error "a budget too small for any sequence" tf-run "the budget is 1.0 KiB \(it holds no prompt" \
	tf-run -n 16 --mem-budget 1K $M $M/prompt.ids
test_expect "... and writes nothing to stdout" "
	tf-run -n 16 --mem-budget 1K $M $M/prompt.ids >so 2>/dev/null; test \$? = 1 && ! test -s so
"

usage() {
	title=$1
	shift
	tf-run "$@" $M $M/prompt.ids >out 2>err
	rc=$?
	[ $rc = 2 ] && grep -q "^tf-run: " err && ! [ -s out ]
	say_ok $? "$title"
}
usage "-P 0 is a usage error" -n 4 -P 0
usage "-P -1 is a usage error" -n 4 -P -1
usage "-P x is a usage error" -n 4 -P x
usage "-P 2x is a usage error" -n 4 --parallel 2x
usage "-P without -n is a usage error" -P 2
usage "--mem-budget without -n is a usage error" --mem-budget 1M
usage "--mem-budget 0 is a usage error" -n 4 --mem-budget 0
usage "--mem-budget 1T is a usage error" -n 4 --mem-budget 1T
usage "--mem-budget junk is a usage error" -n 4 --mem-budget lots
TF_MEM_BUDGET=lots tf-run -n 4 $M $M/prompt.ids >out 2>err
test $? = 2 && grep -q "TF_MEM_BUDGET must be" err
say_ok $? "a bad TF_MEM_BUDGET is a usage error that names it"
test_expect "-h names -P and --mem-budget" 'tf-run -h | grep -q -- "--parallel N" && tf-run -h | grep -q -- "--mem-budget"'

done_testing
