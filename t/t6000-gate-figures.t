#!/bin/sh
# t6000-gate-figures: tf-gate's figures against numpy's, computed apart from
# it, on synthetic streams (records, bare float32, stdin) and the tiny-q35 data
. "$(dirname "$0")/lib-tf.sh"
. "$TF_ROOT/t/helper/gate-lib.sh"

V=1000
LENS="20 1 30 13"

test_expect 'numpy writes two streams of 64 rows and their targets' '
	oracle gen . --rows 64 --cols $V --seed 6000 --noise 0.05 --lens 20,1,30,13 &&
	oracle figures a.f32 b.f32 --cols $V --hash >ab.json &&
	oracle figures a.f32 b.f32 --cols $V --targets ids.txt >ab-ppl.json &&
	oracle figures a.f32 --cols $V --targets ids.txt --hash >a-ppl.json &&
	tf-test-tool raw2rec $V $LENS <a.f32 >a.rec &&
	tf-test-tool raw2rec $V $LENS <b.f32 >b.rec &&
	tf-test-tool raw2rec -s $V $LENS <b.f32 >b-step.rec &&
	test $(wc -c <a.rec) = $((4 * 48 + 64 * V * 4)) &&
	test $(wc -c <b-step.rec) = $((64 * 48 + 64 * V * 4))
'

test_expect 'records against records: every figure and row hash as numpy has them' '
	tf-gate --json --hash a.rec b.rec >got.json &&
	oracle check ab.json got.json
'
test_expect 'bare float32 with --raw: the same figures' '
	tf-gate --json --hash --raw $V a.f32 b.f32 >got.json &&
	oracle check ab.json got.json
'
test_expect 'records against bare float32' '
	tf-gate --json --hash --raw $V a.rec b.f32 >got.json &&
	oracle check ab.json got.json
'
test_expect 'one record per sequence against one record per row' '
	tf-gate --json --hash a.rec b-step.rec >got.json &&
	oracle check ab.json got.json
'
test_expect 'A from stdin' '
	tf-gate --json --hash - b.rec <a.rec >got.json &&
	oracle check ab.json got.json
'
test_expect 'B from a pipe, bare float32' '
	cat b.f32 | tf-gate --json --hash --raw $V a.f32 - >got.json &&
	oracle check ab.json got.json
'
test_expect 'perplexity of both streams and the difference, with targets' '
	tf-gate --json --targets ids.txt a.rec b.rec >got.json &&
	oracle check ab-ppl.json got.json
'
test_expect 'targets as ids records give the same' '
	tf-test-tool ids2rec <ids.txt >ids.rec &&
	tf-gate --json --targets ids.rec a.rec b-step.rec >got.json &&
	oracle check ab-ppl.json got.json
'
test_expect 'targets from stdin' '
	tf-gate --json --targets - --raw $V a.f32 b.f32 <ids.txt >got.json &&
	oracle check ab-ppl.json got.json
'
test_expect 'one stream scored alone: its perplexity and row hashes' '
	tf-gate --json --hash --targets ids.txt a.rec >got.json &&
	oracle check a-ppl.json got.json &&
	tf-gate --json --hash --targets ids.txt --raw $V a.f32 >got.json &&
	oracle check a-ppl.json got.json
'

test_expect 'the table: rows, bit-equal, max abs, top-1 as numpy counts them' '
	tf-gate a.rec b.rec >table &&
	python3 - ab.json table <<-\EOF
	import json, sys
	e = json.load(open(sys.argv[1]))
	lines = open(sys.argv[2]).read().splitlines()
	want = ["rows        %d of %d values" % (e["rows"], e["cols"]),
	        "bit-equal   %d of %d" % (e["rows_equal"], e["rows"]),
	        "max abs     %.6g (row %d)" % (e["max_abs"], e["max_abs_row"]),
	        "top-1       %.6g (%d of %d)" % (e["top1"], e["top1_rows"], e["rows"])]
	missing = [w for w in want if w not in lines]
	print("\n".join(["missing: " + w for w in missing] + lines))
	sys.exit(1 if missing else 0)
	EOF
'
test_expect '--hash in the table: one line a row, sha256 of A and B' '
	tf-gate --hash a.rec b.rec >table &&
	python3 - ab.json table <<-\EOF
	import json, sys
	e = json.load(open(sys.argv[1]))
	want = ["row %d %s %s %s" % (h["row"], h["sha256_a"], h["sha256_b"], "equal" if h["equal"] else "differs")
	        for h in e["row_sha256"]]
	got = [l for l in open(sys.argv[2]).read().splitlines() if l.startswith("row ")]
	sys.exit(0 if got == want else 1)
	EOF
'

# the real vocabulary width, a few rows (8 MB a stream)
test_expect 'rows of 248320 values' '
	mkdir big && oracle gen big --rows 16 --cols 248320 --seed 6001 --noise 0.01 --lens 16 &&
	oracle figures big/a.f32 big/b.f32 --cols 248320 --targets big/ids.txt >big.json &&
	tf-test-tool raw2rec -s 248320 <big/a.f32 >big/a.rec &&
	tf-gate --json --raw 248320 --targets big/ids.txt big/a.rec big/b.f32 >got.json &&
	oracle check big.json got.json
'

# the tiny-q35 logits transformers wrote, against themselves and scored
T=$DATA/tiny-q35
test_expect 'tiny-q35 logits: perplexity of prompt.ids as numpy has it' '
	oracle figures $T/prompt.logits.f32 --cols 1024 --targets $T/prompt.ids >tiny.json &&
	tf-gate --json --raw 1024 --targets $T/prompt.ids $T/prompt.logits.f32 >got.json &&
	oracle check tiny.json got.json
'
test_expect 'tiny-q35 logits as records equal the bare file bit for bit' '
	tf-test-tool raw2rec 1024 <$T/prompt.logits.f32 >tiny.rec &&
	tf-gate --exact --max-abs 0 --kl 0 --top1 1 --raw 1024 tiny.rec $T/prompt.logits.f32 >out &&
	grep -x "bit-equal   48 of 48" out
'
done_testing
