#!/bin/sh
# tf-bench: help, usage errors, models and synthetic geometries it cannot
# run, and (on a machine without a GPU) the error that says so. The timed
# runs themselves happen on a GPU machine, never as a test.
. "$(dirname "$0")/lib-tf.sh"

test_expect "-h prints the usage to stdout and exits 0" '
	tf-bench -h >out && grep -q "^usage: tf-bench" out
'
test_expect "-V prints the version" 'tf-bench -V | grep -q "^tf-bench [0-9]"'

usage() {
	title=$1
	shift
	tf-bench "$@" >out 2>err
	rc=$?
	[ $rc = 2 ] && grep -q "^tf-bench: " err && ! [ -s out ]
	say_ok $? "$title"
}
usage "no model and no --synth is a usage error" 
usage "an unknown geometry is a usage error" -s qwen3.5-70b:q4
usage "an unknown form is a usage error" -s qwen3.5-9b:q7
usage "a group other than 32, 64 or 128 is a usage error" -s qwen3.5-9b:q4g16
usage "--synth without a form is a usage error" -s qwen3.5-9b
usage "a bad prompt list is a usage error" -p 512,x -s qwen3.5-9b:q4
usage "a bad depth list is a usage error" -d 4096,-1 -s qwen3.5-9b:q4
usage "--reps 0 is a usage error" -r 0 -s qwen3.5-9b:q4
usage "an unknown output format is a usage error" -o csv -s qwen3.5-9b:q4
usage "a bad --rows list is a usage error" --rows 1,x -s qwen3.5-9b:q4
usage "a pass of more than 64 rows is a usage error" --rows 1,65 -s qwen3.5-9b:q4
test_expect "-h names --rows" 'tf-bench -h | grep -q -- "--rows N"'
usage "a bad --streams list is a usage error" --streams 1,x -s qwen3.5-9b:q4
usage "--streams 0 is a usage error" --streams 0 -s qwen3.5-9b:q4
usage "more than 256 streams is a usage error" --streams 1,300 -s qwen3.5-9b:q4
usage "--streams without a decode length is a usage error" --streams 1,2 -n 0 -s qwen3.5-9b:q4
usage "--intake without --streams is a usage error" --intake 64 -s qwen3.5-9b:q4
usage "--intake 0 is a usage error" --intake 0 --streams 2 -s qwen3.5-9b:q4
usage "an --intake that is not a number is a usage error" --intake many --streams 2 -s qwen3.5-9b:q4
usage "an unknown device is a usage error" --device gpu -s qwen3.5-9b:q4
usage "--synth on the CPU is a usage error" --device cpu -s qwen3.5-9b:q4
usage "--gemv on the CPU is a usage error" --device cpu --gemv $DATA/tiny-q35
test_expect "-h names --streams and --device" 'tf-bench -h | grep -q -- "--streams N" && tf-bench -h | grep -q -- "--device DEV"'
test_expect "--intake on the CPU: a row for 2 and 3 streams, the prompt taken in beside 1 and 2" '
	tf-bench --device cpu -p 0 -n 2 -r 1 --streams 1,2,3 --intake 40 $DATA/tiny-q35 >out &&
	grep -q "| 2 | 40 |" out && grep -q "| 3 | 40 |" out &&
	tf-bench --device cpu -p 0 -n 2 -r 1 --streams 2 --intake 40 --json $DATA/tiny-q35 >j &&
	grep "\"test\": \"intake\"" j | python3 -c "
import json, sys
o = json.loads(sys.stdin.readline())
assert o[\"streams\"] == 2 and o[\"prompt\"] == 40 and o[\"tok_per_s_before\"] > 0 and o[\"tok_per_s_during\"] > 0 and o[\"intake_ms\"] > 0, o
"
'
# lengths past the context (tiny-q35's is 4096; the geometries' 262144),
# refused before any row is printed
test_error "a prompt past the context is refused" tf-bench \
	"tiny-q35: pp5000, a prompt of 5000 ids, passes the model's context of 4096" \
	tf-bench --device cpu -p 5000 -n 0 $DATA/tiny-q35
test_error "a depth plus a decode past the context is refused" tf-bench \
	"tg128 at depth 4000, 4128 positions, passes the model's context of 4096" \
	tf-bench --device cpu -p 0 -d 4000 $DATA/tiny-q35
test_error "an intake past the context is refused" tf-bench "--intake 5000 passes the model's context of 4096" \
	tf-bench --device cpu -p 0 -n 2 --streams 2 --intake 5000 $DATA/tiny-q35
test_error "a synthetic geometry's context holds too" tf-bench \
	"qwen3.5-9b: pp300000, a prompt of 300000 ids, passes the model's context of 262144" \
	tf-bench -s qwen3.5-9b:q4 -p 300000
test_expect "refused: nothing on stdout" '
	! tf-bench --device cpu -p 5000 -n 0 $DATA/tiny-q35 >out 2>/dev/null && ! test -s out
'
test_error "--device cpu: a model that cannot be loaded is named" tf-bench "nope" \
	tf-bench --device cpu -p 0 -n 1 -r 1 --streams 2 nope

if ! tf-run --device cuda $DATA/tiny-q35 </dev/null >/dev/null 2>&1; then
	test_error "without a GPU, tf-bench says why" tf-bench "CUDA" tf-bench -s qwen3.5-0.8b:q4
	test_error "without a GPU, a model is not benchmarked either" tf-bench "CUDA" tf-bench $DATA/tiny-q35
	# a CPU build says why it has no CUDA, and does not blame a missing
	# nvcc when one is there (make NVCC= forced the CPU)
	tf-bench -s qwen3.5-0.8b:q4 2>err
	if grep -q "this build has no CUDA support" err && command -v nvcc >/dev/null; then
		test_expect "a CPU build made where nvcc is does not say nvcc was not found" \
			'! grep -q "no nvcc was found" err && grep -q "built for the CPU only\|cannot build for sm_90a" err'
	fi
fi

done_testing
