#!/bin/sh
# tf-serve under load on loopback: waves of 72 streaming clients at once
# (more than --parallel and the rounds take, so many wait in the queue),
# greedy and seeded, prompts of 4 to 300 ids (past a 256-id chunk), every
# sixth client leaving after its third event. After each wave every
# complete answer equals tf-run's ids for its prompt and settings, /metrics
# shows every slot free and the queue empty, and the server lives; its
# memory after the last wave is what it was after the second. The waves
# are bounded in count, not in time: a slow machine takes longer, never
# fails for it.
. "$(dirname "$0")/lib-tf.sh"
. "$T_DIR/lib-serve.sh"

command -v curl >/dev/null || skip_all "curl is needed"

# 8 prompts from the held-out text
tr ' ' '\n' <$M/val4096.ids | awk 'NF' | awk '
	{ id[NR] = $1 }
	END { line(1, 4); line(10, 40); line(100, 300); line(500, 17); line(900, 1); line(1000, 64); line(1200, 129); line(2000, 9) }
	function line(a, n,   i) { for (i = 0; i < n; i++) printf "%s%d", (i ? " " : ""), id[a + i]; print "" }' >prompts.ids

# what tf-run draws: greedy for all, seeded for each prompt alone (its
# sequence 0), 40 ids, which the clients' shorter answers begin with
tf-run -n 40 --ignore-eos -P 8 $M prompts.ids >greedy.ids
i=0
while IFS= read -r line; do
	echo "$line" | tf-run -n 40 --ignore-eos --temp 0.9 --top-k 40 --seed $((100 + i)) $M - >>seeded.ids
	i=$((i + 1))
done <prompts.ids
test_expect "tf-run's answers to hold the server to" "test \$(wc -l <greedy.ids) = 8 && test \$(wc -l <seeded.ids) = 8"

serve_start S tf-serve $M -P 16 --queue 128 || skip_all "tf-serve did not start"
U=$S_URL
pid=$S_PID

cat >check.py <<'EOF'
import json, sys
# check.py RESULTS: every complete answer begins tf-run's ids, in full
greedy = [l.split() for l in open("greedy.ids")]
seeded = [l.split() for l in open("seeded.ids")]
n = bad = 0
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["dropped"]:
        continue
    want = [int(x) for x in (seeded if r["sampled"] else greedy)[r["prompt"]][:r["max_tokens"]]]
    n += 1
    if r["ids"] != want or r["finish"] != "length":
        bad += 1
        print("client", r["client"], "got", r["ids"], "want", want)
print(n, "complete answers,", bad, "different")
sys.exit(1 if bad or n < 50 else 0)
EOF

for wave in 1 2 3; do
	test_expect "wave $wave: 72 clients, 12 of them leaving mid-answer; every other one complete" "
		$PY $T_DIR/helper/serve-load.py $U 72 prompts.ids w$wave.json
	"
	test_expect "wave $wave: every complete answer equals tf-run's ids" "$PY check.py w$wave.json"
	test_expect "wave $wave: then every slot is free and the queue empty" "
		wait_metric $U tf_serve_slots_in_use 0 && wait_metric $U tf_serve_queue_length 0
	"
	awk '/^VmRSS/ { print $2 }' /proc/$pid/status >rss$wave
done
test_expect "the clients that left were cancelled, not run to their end" "
	test \$(metric $U tf_serve_jobs_cancelled_total) -ge 24
"
test_expect "memory is flat: after wave 3 within 10% of after wave 2" "
	test \$(cat rss3) -le \$((\$(cat rss2) * 11 / 10))
"
diag "server RSS after each wave: $(cat rss1) $(cat rss2) $(cat rss3) KiB"
test_expect "the server still answers" "curl -sf $U/health >/dev/null"
serve_stop S
say_ok $? "SIGTERM: exit status 0, no crash"

done_testing
