#!/bin/sh
# Damaged models and bad input: a clear "tf-run: error:", an exit status
# below 128, and no output file left behind.
. "$(dirname "$0")/lib-tf.sh"
M=$DATA/tiny-q35

bad() {
	title=$1 kind=$2 pat=$3
	python3 "$TF_ROOT/t/helper/mkbad.py" $M bad-$kind $kind
	test_error "$title" tf-run "$pat" tf-run -o out-$kind.rec bad-$kind $M/prompt.ids
	test_expect "$title: no output file" "test ! -e out-$kind.rec && ! ls out-$kind.rec.tmp.* 2>/dev/null"
}

bad 'truncated safetensors' truncated 'outside the .* data buffer'
bad 'header length past the end' hdrlen 'header length .* runs past the end'
bad 'overlapping data_offsets' overlap 'overlap'
bad 'an overlap an empty tensor between the two hides' overlap-hidden 'overlap'
bad 'out-of-range data_offsets' range 'outside the .* data buffer'
bad 'unknown dtype' dtype "unknown dtype 'Q7'"
bad 'header that is not an object' notobject 'not a JSON object'
bad 'a missing tensor' missing "missing tensor 'layers.1.mlp.up_proj.weight'"
bad 'a wrong shape' shape "'layers.0.mlp.gate_proj' has shape \[256, 512\], expected \[512, 256\]"
bad 'config.json that is not JSON' config-notjson 'config.json.* is not valid JSON'
bad 'config.json without a field' config-nofield "missing field 'num_attention_heads'"

test_error 'a model folder that does not exist' tf-run "cannot open 'nowhere'" tf-run nowhere $M/prompt.ids

echo '1 2 1024' >oob.ids
test_error 'an id at vocab_size' tf-run 'line 1: id 1024 is out of range \(vocab_size 1024\)' \
	tf-run -o out.rec $M oob.ids
test_expect 'an id at vocab_size: no output file' 'test ! -e out.rec'

printf '1 2 3\n4 five 6\n' >text.ids
test_error 'text that is not ids' tf-run "line 2: 'five' is not a token id" tf-run -o out.rec $M text.ids
test_expect 'text that is not ids: no output file' 'test ! -e out.rec'

printf '\211TFX\r\n\032\n%040d' 0 >magic.rec
test_error 'a binary record with a bad magic' tf-run 'bad magic' tf-run $M magic.rec

python3 -c '
import struct, sys
h = b"\x89TFR\r\n\x1a\n" + struct.pack("<HHHHIIQQQ", 1, 1, 1, 48, 1, 10, 0, 0, 0)
sys.stdout.buffer.write(h + struct.pack("<5i", 1, 2, 3, 4, 5))' >short.rec
test_error 'an ids record with a short payload' tf-run 'truncated record' tf-run $M short.rec

test_expect 'stdout closed: the error is reported' '
	tf-run --raw $M $M/prompt.ids >&- 2>err; rc=$?
	test $rc = 1 && grep -q "^tf-run: error: write" err
'
test_expect 'a pipe closed early: a quiet end by SIGPIPE, as cat ends' '
	{ tf-run --raw $M $M/prompt.ids 2>err; echo $? >rc; } | head -c 10 >/dev/null
	test "$(cat rc)" = 141 && test ! -s err
'

# options that would be accepted and then ignored are usage errors
for opts in "--top-k 5 -n 3" "--top-p 0.5 -n 3" "--temp 1" "--seed 3" "--stream" "-n 3 --raw" \
	    "-n 3 --last" "-n 3 --text 2" "-n 3 --window 4" "-n 0"; do
	test_expect "tf-run $opts: a usage error, not an option ignored" "
		tf-run $opts \$M \$M/prompt.ids >out 2>err; test \$? = 2 && test ! -s out &&
		grep -q \"Try 'tf-run --help'\" err
	"
done
test_expect 'TF_THREADS that is not a count is a usage error, not all CPUs' '
	TF_THREADS=abc tf-run $M $M/prompt.ids >/dev/null 2>err; test $? = 2 && grep -q "TF_THREADS must be a number" err
'
test_expect 'binary records to a terminal are refused' '
	script -qec "tf-run $M $M/prompt.ids" /dev/null >tty.out; rc=$?
	test $rc = 1 && grep -q "tf-run: error: refusing to write binary records to a terminal" tty.out
'
test_expect 'a bad option value exits 2' '
	tf-run --mode sideways $M </dev/null 2>err; test $? = 2 && grep -q "mode" err
'
test_expect 'a seed that is not a number exits 2' '
	tf-run -n 1 --temp 1 --seed x $M </dev/null 2>err; test $? = 2 && grep -q "seed must be a non-negative integer" err
'

done_testing
