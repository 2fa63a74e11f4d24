#!/bin/sh
# tf-serve on the GPU: requests sent together share rounds there, and each
# gets the ids tf-run --device cuda writes for its prompt alone, greedy
# and sampled with a seed, on the bf16 and 1-bit models; a lone request
# (the device's own loop of steps) too.
. "$(dirname "$0")/lib-tf.sh"
. "$T_DIR/lib-serve.sh"

if ! tf-run --device cuda $DATA/tiny-q35 </dev/null >/dev/null 2>err; then
	grep -Eq 'no CUDA|without CUDA|no CUDA support' err && skip_all "no CUDA device"
fi

tr ' ' '\n' <$DATA/shakespeare-q35/val4096.ids | awk 'NF' | awk '
	{ id[NR] = $1 }
	END { line(1, 48); line(100, 300); line(500, 3); line(700, 70); line(900, 17); line(1200, 5) }
	function line(a, n,   i) { for (i = 0; i < n; i++) printf "%s%d", (i ? " " : ""), id[a + i]; print "" }' >p.ids
head -1 p.ids >one.ids

for M in $DATA/shakespeare-q35 $DATA/shakespeare-q35-1bit; do
	model=$(basename $M)
	serve_start S tf-serve --device cuda $M -P 8 || { say_ok 1 "$model: tf-serve --device cuda starts"; continue; }
	test_expect "$model: six requests at once get tf-run's greedy ids" "
		serve-ask.py $S_URL 24 <p.ids >got &&
		while IFS= read -r l; do echo \"\$l\" | tf-run --device cuda -n 24 --ignore-eos $M; done <p.ids >want &&
		cmp got want
	"
	test_expect "$model: sampled with a seed, each request its tf-run line" "
		serve-ask.py $S_URL 24 7 <p.ids >got &&
		while IFS= read -r l; do
			echo \"\$l\" | tf-run --device cuda -n 24 --ignore-eos --temp 1 --top-k 50 --seed 7 $M
		done <p.ids >want &&
		cmp got want
	"
	test_expect "$model: a lone request gets tf-run's ids" "
		serve-ask.py $S_URL 40 <one.ids >got &&
		tf-run --device cuda -n 40 --ignore-eos $M one.ids >want &&
		cmp got want
	"
	serve_stop S
	say_ok $? "$model: the server stops on SIGTERM with status 0"
done

done_testing
