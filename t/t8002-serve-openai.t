#!/bin/sh
# tf-serve through the openai Python client: models, completions and chat
# completions (reasoning_content among the message's and the deltas'
# fields), streaming and not, logprobs, tools, errors as the client's
# exceptions; greedy and seeded ids equal tf-run's (the lone prompt is
# tf-run's sequence 0), with an API key and without.
. "$(dirname "$0")/lib-tf.sh"
. "$T_DIR/lib-serve.sh"

$PY -c 'import openai' 2>/dev/null || skip_all "the openai package is missing (make test puts it in .venv)"

cp $M/prompt.ids prompt.ids
tf-run -n 12 --ignore-eos $M prompt.ids >greedy.ids
tf-run -n 12 --ignore-eos --temp 0.8 --top-p 0.95 --seed 11 $M prompt.ids >seeded.ids

serve_start S tf-serve $M -P 4 || skip_all "tf-serve did not start"
$PY "$T_DIR/helper/serve-openai.py" $S_URL shakespeare-q35 >tap 2>err
rc=$?
# the client's TAP lines, renumbered as this file's
while IFS= read -r line; do
	case $line in
	"ok "*) say_ok 0 "${line#* - }" ;;
	"not ok "*) say_ok 1 "${line#* - }" ;;
	*) echo "$line" ;;
	esac
done <tap
say_ok $rc "the client ran to its end"
[ $rc = 0 ] || sed 's/^/#   /' err
test $(grep -c '^ok' tap) = 20
say_ok $? "every check of the client ran"
serve_stop S
say_ok $? "SIGTERM: exit status 0"

printf 'sesame\n' >key && chmod 600 key
serve_start K tf-serve $M --api-key-file key || exit 1
test_expect "with --api-key-file: the client with the key is let in, one without gets AuthenticationError" "
	$PY -c '
import openai, sys
url = sys.argv[1] + \"/v1\"
assert [m.id for m in openai.OpenAI(base_url=url, api_key=\"sesame\", max_retries=0).models.list().data] == [\"shakespeare-q35\"]
try:
    openai.OpenAI(base_url=url, api_key=\"sesam\", max_retries=0).models.list()
    sys.exit(\"a wrong key was let in\")
except openai.AuthenticationError as e:
    assert e.status_code == 401 and e.body[\"code\"] == \"invalid_api_key\"
' $K_URL
"
serve_stop K
say_ok $? "SIGTERM: exit status 0"

done_testing
