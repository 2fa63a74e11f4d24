#!/bin/sh
# tf-serve and bad input: each gets its HTTP status and an OpenAI error
# object ({"error": {"message", "type", ...}}) naming what is wrong, and
# the server goes on answering: bad JSON, wrong types, values out of range,
# a prompt past --ctx, an unknown model, a body past the limit, a missing
# or wrong API key, a full queue (503), a client that never reads and one
# that never finishes its request. A client that leaves mid-answer frees
# its slot at once.
. "$(dirname "$0")/lib-tf.sh"
. "$T_DIR/lib-serve.sh"

command -v curl >/dev/null && command -v jq >/dev/null || skip_all "curl and jq are needed"

printf 'sesame\n' >key && chmod 600 key
serve_start S tf-serve $M -P 1 --queue 1 --ctx 64 --max-body 4K --api-key-file key --timeout 3 ||
	skip_all "tf-serve did not start"
U=$S_URL
A='Authorization: Bearer sesame'

# bad STATUS TYPE PARAM BODY [ENDPOINT]: the status, an error object of
# that type naming that field, and the server still answers
bad() {
	ep=${5:-/v1/completions}
	code=$(curl -s -o err.json -w '%{http_code}' -H "$A" "$U$ep" -d "$4") &&
	test "$code" = "$1" || { echo "status $code, not $1"; cat err.json; return 1; }
	jq -e --arg t "$2" --arg p "$3" '(.error.message | type) == "string" and (.error.message | length) > 0 and
		.error.type == $t and (.error.param // "") == $p' err.json || { cat err.json; return 1; }
	curl -sf "$U/health" >/dev/null
}

test_expect "bad JSON: 400, and the server goes on" "bad 400 invalid_request_error '' '{\"prompt\": '"
test_expect "a body that is not an object: 400" "bad 400 invalid_request_error '' '[1, 2]'"
test_expect "no prompt: 400 naming it" "bad 400 invalid_request_error prompt '{\"max_tokens\": 2}'"
test_expect "a prompt of the wrong type: 400 naming it" "bad 400 invalid_request_error prompt '{\"prompt\": {\"a\": 1}}'"
test_expect "a token id past the vocabulary: 400" "bad 400 invalid_request_error prompt '{\"prompt\": [1, 99999]}'"
test_expect "an empty prompt: 400" "bad 400 invalid_request_error prompt '{\"prompt\": \"\"}'"
test_expect "max_tokens < 0: 400 naming it" "bad 400 invalid_request_error max_tokens '{\"prompt\": \"a\", \"max_tokens\": -1}'"
test_expect "max_tokens not an integer: 400" "bad 400 invalid_request_error max_tokens '{\"prompt\": \"a\", \"max_tokens\": \"5\"}'"
test_expect "temperature as a string: 400 naming it" "bad 400 invalid_request_error temperature '{\"prompt\": \"a\", \"temperature\": \"hot\"}'"
test_expect "temperature out of range: 400" "bad 400 invalid_request_error temperature '{\"prompt\": \"a\", \"temperature\": 9}'"
test_expect "top_p 0: 400" "bad 400 invalid_request_error top_p '{\"prompt\": \"a\", \"top_p\": 0}'"
test_expect "top_k a float: 400" "bad 400 invalid_request_error top_k '{\"prompt\": \"a\", \"top_k\": 1.5}'"
test_expect "seed a string: 400" "bad 400 invalid_request_error seed '{\"prompt\": \"a\", \"seed\": \"x\"}'"
test_expect "stream not a boolean: 400" "bad 400 invalid_request_error stream '{\"prompt\": \"a\", \"stream\": 1}'"
test_expect "five stop strings: 400" "bad 400 invalid_request_error stop '{\"prompt\": \"a\", \"stop\": [\"a\",\"b\",\"c\",\"d\",\"e\"]}'"
test_expect "n 0: 400" "bad 400 invalid_request_error n '{\"prompt\": \"a\", \"n\": 0}'"
test_expect "messages not an array: 400" "bad 400 invalid_request_error messages '{\"messages\": \"hi\"}' /v1/chat/completions"
test_expect "a message role the template refuses: 400 with its message" "
	bad 400 invalid_request_error messages '{\"messages\": [{\"role\": \"user\", \"content\": \"a\"}, {\"role\": \"bard\", \"content\": \"b\"}]}' /v1/chat/completions &&
	jq -e '.error.message == \"Unexpected message role.\"' err.json
"
test_expect "an image: 400, the model reads text alone" "
	bad 400 invalid_request_error messages '{\"messages\": [{\"role\": \"user\", \"content\": [{\"type\": \"image_url\", \"image_url\": {\"url\": \"x\"}}]}]}' /v1/chat/completions
"
test_expect "a prompt past --ctx: 400 context_length_exceeded" "
	bad 400 invalid_request_error prompt \"{\\\"prompt\\\": [\$(seq -s , 1 64)]}\" &&
	jq -e '.error.code == \"context_length_exceeded\" and (.error.message | test(\"64\"))' err.json
"
test_expect "a prompt and max_tokens past --ctx: 400 naming max_tokens" "
	bad 400 invalid_request_error max_tokens '{\"prompt\": [1, 2, 3], \"max_tokens\": 62}'
"
test_expect "an unknown model: 404 model_not_found" "
	bad 404 invalid_request_error model '{\"prompt\": \"a\", \"model\": \"gpt-9\"}' &&
	jq -e '.error.code == \"model_not_found\"' err.json
"
head -c 5000 /dev/zero | tr '\0' a >big
test_expect "a body past --max-body: 413" "
	printf '{\"prompt\": \"%s\"}' \$(cat big) >big.json &&
	test \$(curl -s -o err.json -w '%{http_code}' -H '$A' $U/v1/completions --data-binary @big.json) = 413 &&
	jq -e '.error.code == \"request_too_large\"' err.json &&
	test \$(curl -s -o err.json -w '%{http_code}' -H '$A' -H 'Transfer-Encoding: chunked' $U/v1/completions --data-binary @big.json) = 413
"
test_expect "no API key: 401 invalid_api_key" "
	test \$(curl -s -o err.json -w '%{http_code}' $U/v1/completions -d '{\"prompt\": \"a\"}') = 401 &&
	jq -e '.error.code == \"invalid_api_key\"' err.json &&
	test \$(curl -s -o /dev/null -w '%{http_code}' $U/v1/models) = 401
"
test_expect "a wrong API key: 401" "
	test \$(curl -s -o err.json -w '%{http_code}' -H 'Authorization: Bearer sesam' $U/v1/completions -d '{\"prompt\": \"a\"}') = 401 &&
	test \$(curl -s -o err.json -w '%{http_code}' -H 'Authorization: Bearer sesame2' $U/v1/completions -d '{\"prompt\": \"a\"}') = 401
"
test_expect "the right key is let in" "
	curl -sf -H '$A' $U/v1/completions -d '{\"prompt\": \"a\", \"max_tokens\": 2}' | jq -e '.usage.completion_tokens >= 0'
"

# a full queue, then clients that leave: -P 1 and --queue 1, jobs long
# enough (20000 tokens, a minute or more) to be there when looked at
long_model long 32768
serve_start Q tf-serve long -P 1 --queue 1 --ctx 30000 || exit 1
cat >hold.py <<'EOF'
import socket, sys, time
# hold.py URL BODY_FILE OUT: a streaming request whose answer is read
# until the first event, then the socket is held open until stdin closes
host, port = sys.argv[1].split("//")[1].split(":")
body = open(sys.argv[2], "rb").read()
s = socket.create_connection((host, int(port)))
s.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer sesame\r\n"
          b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
got = b""
while b"data: " not in got:
    got += s.recv(4096)
open(sys.argv[3], "wb").write(got)
sys.stdin.read()
s.close()
EOF
printf '{"prompt": "ROMEO:", "max_tokens": 20000, "temperature": 0, "ignore_eos": true, "stream": true}' >long.json
mkfifo hold1 hold2
$PY hold.py $Q_URL long.json first1 <hold1 & h1=$!
exec 7>hold1
test_expect "one client in the one slot" "wait_metric $Q_URL tf_serve_slots_in_use 1"
$PY hold.py $Q_URL long.json first2 <hold2 7>&- & h2=$!
exec 8>hold2
test_expect "... and one in the queue" "wait_metric $Q_URL tf_serve_queue_length 1"
test_expect "the next gets 503 server_busy, and the server still answers" "
	U=$Q_URL bad 503 server_busy '' '{\"prompt\": \"a\", \"max_tokens\": 2}'
"
exec 7>&-
wait $h1
test_expect "the first client leaves: its slot goes to the queued one at once" "
	wait_metric $Q_URL tf_serve_queue_length 0 && wait_metric $Q_URL tf_serve_slots_in_use 1
"
exec 8>&-
wait $h2
test_expect "the second leaves too: every slot free, both cancelled long before their 20000 tokens" "
	wait_metric $Q_URL tf_serve_slots_in_use 0 &&
	test \$(metric $Q_URL tf_serve_jobs_cancelled_total) = 2 &&
	test \$(metric $Q_URL tf_serve_generated_tokens_total) -lt 20000 &&
	grep -q 'data: ' first1 && grep -q 'data: ' first2
"

serve_stop Q
say_ok $? "the queue's server exits 0 on SIGTERM"

cat >slow.py <<'EOF'
import socket, sys, time
# slow.py URL MODE: "noread" sends a streaming request and never reads;
# "partial" sends half a request and stops; both hold the socket open
# until stdin closes
host, port = sys.argv[1].split("//")[1].split(":")
s = socket.create_connection((host, int(port)))
body = b'{"prompt": "ROMEO:", "max_tokens": 40, "temperature": 0, "ignore_eos": true, "stream": true}'
req = (b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer sesame\r\n"
       b"Content-Length: %d\r\n\r\n" % len(body) + body)
s.sendall(req if sys.argv[2] == "noread" else req[:30])
print("sent", flush=True)
sys.stdin.read()
EOF
mkfifo slow1 slow2
before=$(metric $U tf_serve_generated_tokens_total)
$PY slow.py $U noread <slow1 >noread.out & s1=$!
exec 7>slow1
$PY slow.py $U partial <slow2 >partial.out 7>&- & s2=$!
exec 8>slow2
test_expect "a client that never reads: its job runs to its end and frees its slot" "
	i=0 && while [ \$i -lt 600 ] && ! { grep -q sent noread.out && grep -q sent partial.out; }; do sleep 0.1; i=\$((i + 1)); done &&
	i=0 && while [ \$i -lt 1200 ] && [ \$(metric $U tf_serve_generated_tokens_total) -lt \$((before + 40)) ]; do sleep 0.1; i=\$((i + 1)); done &&
	test \$(metric $U tf_serve_generated_tokens_total) = \$((before + 40)) &&
	wait_metric $U tf_serve_slots_in_use 0
"
test_expect "... and neither it nor one that never ends its request holds anyone up" "
	curl -sf -H '$A' $U/v1/completions -d '{\"prompt\": \"a\", \"max_tokens\": 3, \"ignore_eos\": true}' | jq -e '.usage.completion_tokens == 3'
"
exec 7>&- 8>&-
wait $s1 $s2

# the context at start: --ctx past the model's (shakespeare-q35's is 8192)
# refused, the default 4096 or the model's where less, and caches of it
# for every slot held to memory
test_error "--ctx past the model's context stops it at start" tf-serve \
	"--ctx 9000 is more than the model's context of 8192" tf-serve $M --ctx 9000 --port 0
test_error "caches of the context for every slot past memory stop it at start" tf-serve \
	"a context of 4096 positions needs .* of cache for each of 8 sequences, 20.0 MiB of memory available: --ctx [0-9]+ fits" \
	env TF_MEM_AVAILABLE=20M tf-serve $M --port 0
long_model short 2048
serve_start C tf-serve short -P 1 || exit 1
test_expect "the default context is the model's where it is below 4096" "
	curl -sf $C_URL/v1/models | jq -e '.data[0].max_model_len == 2048'
"
test_expect "a request past it: 400 context_length_exceeded" "
	test \$(curl -s -o c.json -w '%{http_code}' $C_URL/v1/completions -d '{\"prompt\": [1, 2], \"max_tokens\": 2047}') = 400 &&
	jq -e '.error.code == \"context_length_exceeded\" and .error.param == \"max_tokens\"' c.json
"
serve_stop C
say_ok $? "that server exits 0 on SIGTERM"

test_expect "after all of it the server answers" "curl -sf $U/health >/dev/null"
serve_stop S
say_ok $? "... and exits 0 on SIGTERM"
test_expect "no sanitizer report and no error logged" "
	! grep -q Sanitizer $TMP/S.err
"

done_testing
