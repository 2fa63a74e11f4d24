#!/bin/sh
# t/helper/serve-bench.py against tf-serve on the test model, at small
# counts so that it ends in seconds: its table has its header and a row a
# count of concurrent requests, five figures each; --json holds every
# request, each of exactly max_tokens tokens (greedy with ignore_eos);
# a server that refuses some requests (a full queue) or a prompt past the
# context stops it with an error, never a table. Speed is never asserted.
. "$(dirname "$0")/lib-tf.sh"
. "$T_DIR/lib-serve.sh"

B="$PY $T_DIR/helper/serve-bench.py"
serve_start S tf-serve $M -P 4 || skip_all "tf-serve did not start"
U=$S_URL

test_expect "the table: a line on what ran, the header, a row for 1, 2 and 5 requests at once" "
	$B $U -c 1,2,5 -p 20 -n 6 --warmup 1 --timeout 120 >table &&
	sed -n 1p table | grep -qx 'prompt 20 ids, 6 tokens a request (greedy, ignore_eos); at each count 1 timed round, 1 untimed before' &&
	sed -n 3p table | grep -qx '| requests | ttft ms (median) | ttft ms (p90) | tokens/s a request (median) | tokens/s aggregate |' &&
	sed -n 4p table | grep -qx '|---:|---:|---:|---:|---:|' &&
	test \$(wc -l <table) = 7 &&
	sed -n '5,7p' table | awk -F' [|] ' '{ sub(/^[|] /, \"\"); sub(/ [|]\$/, \"\"); print NF, \$1 }' >shape &&
	printf '5 1\n5 2\n5 5\n' | cmp - shape &&
	! sed -n '5,7p' table | grep -Evq '^[|] [0-9]+( [|] [0-9]+[.][0-9])+ [|]\$'
"
test_expect "--json: every request of every round made exactly max_tokens tokens" "
	$B $U -c 1,3 -p 300 -n 9 -r 2 --warmup 0 --json --timeout 120 >b.json &&
	$PY -c '
import json, sys
j = json.load(open(\"b.json\"))
assert j[\"max_tokens\"] == 9 and j[\"prompt_len\"] == 300 and j[\"rounds\"] == 2, j
assert [r[\"concurrency\"] for r in j[\"results\"]] == [1, 3], j
for r in j[\"results\"]:
    assert len(r[\"requests\"]) == 2 * r[\"concurrency\"], r
    assert all(q[\"tokens\"] == 9 and q[\"ttft_ms\"] > 0 and q[\"tokens_per_s\"] > 0 for q in r[\"requests\"]), r
    assert r[\"ttft_ms_p90\"] >= r[\"ttft_ms_median\"] > 0 and r[\"tokens_per_s_aggregate\"] > 0, r
'
"
test_expect "... counted as the server counts them: 4 requests of 5 tokens, 20 more generated" "
	before=\$(metric $U tf_serve_generated_tokens_total) &&
	$B $U -c 4 -p 8 -n 5 --warmup 0 --json --timeout 120 >c.json &&
	test \$(metric $U tf_serve_generated_tokens_total) = \$((before + 20))
"
test_error "a prompt past the context stops it" serve-bench "request 0: HTTP 400: .*context length" \
	$B $U -c 1 -p 5000 -n 4 --warmup 0
test_error "bad counts are refused" serve-bench "bad --concurrency 'x'" $B $U -c x
test_error "a URL that is not http is refused" serve-bench "bad URL 'ftp://x'" $B ftp://x
serve_stop S
say_ok $? "SIGTERM: exit status 0"

serve_start Q tf-serve $M -P 1 --queue 0 || skip_all "tf-serve did not start"
test_error "a full queue (503) stops it, with no table" serve-bench "HTTP 503" \
	$B $Q_URL -c 3 -p 8 -n 40 --warmup 0
test_expect "... and nothing went to stdout" "! test -s $TMP/.stdout"
serve_stop Q

done_testing
