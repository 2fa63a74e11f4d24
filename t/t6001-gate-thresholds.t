#!/bin/sh
# t6001-gate-thresholds: thresholds set the exit status (0 within, 1 outside,
# 2 could not compare), TAP and JSON say which held; usage errors exit 2
. "$(dirname "$0")/lib-tf.sh"
. "$TF_ROOT/t/helper/gate-lib.sh"

V=500
test_expect 'numpy writes two streams and their figures' '
	oracle gen . --rows 32 --cols $V --seed 6100 --noise 0.1 --lens 16,16 &&
	oracle figures a.f32 b.f32 --cols $V --targets ids.txt >e.json &&
	tf-test-tool raw2rec $V 16 16 <a.f32 >a.rec &&
	tf-test-tool raw2rec $V 16 16 <b.f32 >b.rec
'
# a figure from numpy's figures, scaled: fig NAME [FACTOR]
fig() {
	python3 -c 'import json, sys; v = json.load(open("e.json"))[sys.argv[1]]; print(repr(abs(v) * float(sys.argv[2])))' "$1" "${2:-1}"
}

test_status 'no thresholds: 0' 0 tf-gate a.rec b.rec
test_status '--exact on a stream and itself: 0' 0 tf-gate --exact a.rec a.rec
test_status '--exact on a stream and itself as bare float32: 0' 0 tf-gate --exact --raw $V a.rec a.f32
test_status '--exact on two streams that differ: 1' 1 tf-gate --exact a.rec b.rec
test_status '--max-abs at the measured figure: 0 (the bound is inclusive)' 0 tf-gate --max-abs $(fig max_abs) a.rec b.rec
test_status '--max-abs just under it: 1' 1 tf-gate --max-abs $(fig max_abs 0.999) a.rec b.rec
test_status '--kl just over the mean KL: 0' 0 tf-gate --kl $(fig kl_mean 1.001) a.rec b.rec
test_status '--kl just under it: 1' 1 tf-gate --kl $(fig kl_mean 0.999) a.rec b.rec
test_status '--kl at the largest row KL, over the mean: 0' 0 tf-gate --kl $(fig kl_max) a.rec b.rec
test_status '--top1 at the measured share: 0' 0 tf-gate --top1 $(fig top1) a.rec b.rec
test_status '--top1 1 with disagreeing rows: 1' 1 tf-gate --top1 1 a.rec b.rec
test_status '--top1 0: 0' 0 tf-gate --top1 0 a.rec b.rec
test_status '--ppl-tol just over the difference: 0' 0 tf-gate --targets ids.txt --ppl-tol $(fig ppl_diff_pct 1.001) a.rec b.rec
test_status '--ppl-tol just under it: 1' 1 tf-gate --targets ids.txt --ppl-tol $(fig ppl_diff_pct 0.999) a.rec b.rec
test_status '--ppl-tol holds in both directions (B against A)' 0 tf-gate --targets ids.txt --ppl-tol $(fig ppl_diff_pct 1.01) b.rec a.rec
test_status 'every threshold within: 0' 0 tf-gate --max-abs 10 --kl 1 --top1 0.5 --targets ids.txt --ppl-tol 50 a.rec b.rec
test_status 'one threshold of four outside: 1' 1 tf-gate --max-abs 10 --kl 1 --top1 0.5 --exact a.rec b.rec

test_expect 'TAP: one line per threshold, the failing one not ok, plan last' '
	{ tf-gate --tap --max-abs 10 --exact --kl 1 a.rec b.rec >tap; test $? = 1; } &&
	grep -E "^not ok 1 - bit-equal rows [0-9]+ of 32$" tap &&
	grep -E "^ok 2 - max abs [0-9.e+-]+ <= 10$" tap &&
	grep -E "^ok 3 - mean kl [0-9.e+-]+ <= 1$" tap &&
	test "$(tail -n1 tap)" = 1..3 &&
	test $(grep -vc "^#" tap) = 4
'
test_expect 'TAP output is TAP: prove reads it and sees the failure' '
	printf "#!/bin/sh\ntf-gate --tap --max-abs 10 --exact $PWD/a.rec $PWD/b.rec\nexit 0\n" >gate.t &&
	chmod +x gate.t &&
	! prove ./gate.t >prove.out 2>&1 &&
	grep -q "Failed 1/2 subtests" prove.out
'
test_expect 'TAP without thresholds: a skip plan' '
	tf-gate --tap a.rec b.rec >tap &&
	test "$(tail -n1 tap)" = "1..0 # SKIP no thresholds given"
'
test_expect 'JSON: each check with its value, limit and result, and pass' '
	{ tf-gate --json --max-abs 10 --top1 1 a.rec b.rec >j.json; test $? = 1; } &&
	python3 - <<-\EOF
	import json
	j = json.load(open("j.json")); e = json.load(open("e.json"))
	c = j["checks"]
	assert [x["check"] for x in c] == ["max_abs", "top1"], c
	assert c[0] == {"check": "max_abs", "value": e["max_abs"], "limit": 10.0, "pass": True}, c[0]
	assert c[1] == {"check": "top1", "value": e["top1"], "limit": 1.0, "pass": False}, c[1]
	assert j["pass"] is False
	EOF
'
test_expect 'a text table names each check' '
	{ tf-gate --max-abs 10 --exact a.rec b.rec >t; test $? = 1; } &&
	grep -E "^ok +max abs" t && grep -E "^FAIL +bit-equal rows" t
'

# usage: exit 2 with a pointer to --help, nothing compared
usage() {
	title=$1
	shift
	test_expect "$title" "
		{ $*; test \$? = 2; } 2>err && grep -q \"Try 'tf-gate --help'\" err
	"
}
usage 'no streams' tf-gate
usage 'one stream without --targets' tf-gate a.rec
usage 'three streams' tf-gate a.rec b.rec a.rec
usage 'comparison thresholds with one stream' tf-gate --targets ids.txt --max-abs 1 a.rec
usage '--ppl-tol without --targets' tf-gate --ppl-tol 1 a.rec b.rec
usage '--top1 above 1' tf-gate --top1 1.5 a.rec b.rec
usage 'negative --kl' tf-gate --kl -1 a.rec b.rec
usage '--max-abs not a number' tf-gate --max-abs x a.rec b.rec
usage '--max-abs nan' tf-gate --max-abs nan a.rec b.rec
usage '--raw 0' tf-gate --raw 0 a.f32 b.f32
usage '--raw past 2^32' tf-gate --raw 4294967296 a.f32 b.f32
usage '--json and --tap' tf-gate --json --tap a.rec b.rec
usage 'two inputs from stdin' tf-gate - - '<a.rec'
usage 'an unknown option' tf-gate --bogus a.rec b.rec
test_expect '--help on stdout, exit 0' 'tf-gate --help >h && grep -q "^usage: tf-gate" h'
test_expect '--version' 'tf-gate --version | grep -Eq "^tf-gate [0-9]+\.[0-9]+"'
done_testing
