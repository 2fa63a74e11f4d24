#!/bin/sh
# The context enforced: max_position_embeddings read (tiny-q35-yarn's is
# 256), a prompt, or a prompt plus -n, past it refused up front with both
# lengths named and nothing written; --ctx sets a smaller context (a larger
# one is refused), and the cache of a sequence at the context is counted
# against memory before anything runs (TF_MEM_AVAILABLE stands in for the
# machine's figure).
. "$(dirname "$0")/lib-tf.sh"
M=$DATA/tiny-q35-yarn

test_expect 'a prompt of 128 ids plus -n 128 fills the context of 256 and runs' '
	tf-run -n 128 --ignore-eos $M $M/prompt.ids >g.ids &&
	test $(wc -w <g.ids) = 128
'
test_error 'a prompt plus -n past the context is refused with both lengths' tf-run \
	"sequence 1: prompt of 128 ids plus -n 129 passes the model's context of 256" \
	tf-run -o out.ids -n 129 $M $M/prompt.ids
test_expect 'refused: no output file' 'test ! -e out.ids'

{ cat $M/prompt.ids; cat $M/prompt.ids $M/prompt.ids | tr '\n' ' '; echo; } >long.ids
test_error 'the second sequence, 256 ids plus -n 1, is named' tf-run \
	"sequence 2: prompt of 256 ids plus -n 1 passes" tf-run -n 1 $M long.ids
test_expect 'scoring 256 ids, the whole context, runs' '
	cat $M/prompt.ids $M/prompt.ids | tr "\n" " " >full.ids && echo >>full.ids &&
	tf-run --raw --last $M full.ids >last.f32 && test $(wc -c <last.f32) = 4096
'
cat $M/prompt.ids $M/prompt.ids $M/prompt.ids | tr '\n' ' ' >over.ids
test_error 'scoring 384 ids is refused' tf-run "sequence 1: prompt of 384 ids passes the model's context of 256" \
	tf-run --raw -o out.f32 $M over.ids
test_expect 'refused: no output file' 'test ! -e out.f32'

test_error '--ctx 100 refuses the 128-id prompt' tf-run \
	"sequence 1: prompt of 128 ids passes the context of 100 that --ctx set" tf-run --ctx 100 --raw $M $M/prompt.ids
test_error '--ctx 140 refuses it with -n 20' tf-run \
	"sequence 1: prompt of 128 ids plus -n 20 passes the context of 140 that --ctx set" \
	tf-run --ctx 140 -n 20 $M $M/prompt.ids
test_expect '--ctx 140 takes it with -n 12, the same ids as without --ctx' '
	tf-run --ctx 140 -n 12 --ignore-eos $M $M/prompt.ids >c.ids &&
	tf-run -n 12 --ignore-eos $M $M/prompt.ids >d.ids && cmp c.ids d.ids
'
test_error '--ctx past the model'\''s context is refused' tf-run \
	"--ctx 257 is more than the model's context of 256 \(max_position_embeddings\)" \
	tf-run --ctx 257 $M $M/prompt.ids
test_expect '--ctx 0 is a usage error' '
	tf-run --ctx 0 $M $M/prompt.ids >out 2>err; test $? = 2 && grep -q -- "--ctx" err
'
test_error 'with -P, every stream is held to the context' tf-run "prompt of 256 ids plus -n 8 passes" \
	tf-run -P 2 -n 8 $M long.ids

# the cache of one sequence at 256 positions: 4 layers, one of them full
# attention (2 x 256 x 2 heads x 64 x 4 bytes), the rest DeltaNet states
test_error 'a cache that does not fit the memory is refused up front, with the --ctx that fits' tf-run \
	"a context of 256 positions needs [0-9.]+ KiB of cache, 100.0 KiB of memory available: --ctx [0-9]+ fits" \
	env TF_MEM_AVAILABLE=100K tf-run --raw $M $M/prompt.ids
test_expect 'that --ctx runs in the same memory' '
	env TF_MEM_AVAILABLE=100K tf-run --raw $M $M/prompt.ids 2>err; n=$(sed -n "s/.*--ctx \([0-9]*\) fits/\1/p" err) &&
	head -c 100 $M/prompt.ids | sed "s/ [0-9]*$//" >short.ids && echo >>short.ids &&
	env TF_MEM_AVAILABLE=100K tf-run --ctx $n --raw $M short.ids >s.f32
'
test_error 'no context fits: said so' tf-run "no context fits" env TF_MEM_AVAILABLE=1K tf-run --raw $M $M/prompt.ids

done_testing
