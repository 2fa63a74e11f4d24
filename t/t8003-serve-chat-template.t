#!/bin/sh
# tf-serve's chat template against the real one: Python's jinja2, in
# transformers' template environment, renders t/data/qwen3.5-chat-template.jinja
# (Qwen3.5's chat_template.jinja) over thousands of made-up conversations
# (system, user, assistant, tool turns; reasoning in the content and
# apart; tool calls with arguments of every JSON type; tools; thinking on
# and off; what the template refuses, with its message), and tf-serve's
# rendering must equal it in every one. Then the server: the prompt it
# takes for a conversation is the tokenized rendering, and tool-call
# arguments as a JSON string render as the object they hold.
. "$(dirname "$0")/lib-tf.sh"
. "$T_DIR/lib-serve.sh"

$PY -c 'import jinja2' 2>/dev/null || skip_all "jinja2 is missing (make test puts it in .venv)"
TPL=$DATA/qwen3.5-chat-template.jinja

for seed in 1 2 3; do
	test_expect "3000 conversations of seed $seed: no difference from jinja2" "
		$PY $T_DIR/helper/chat-oracle.py $TPL chat-render 3000 $seed >out &&
		grep -Eq '^3000 cases \\([0-9]{4} rendered, [0-9]+ refused by the template\\), 0 different$' out
	"
done

test_expect "the oracle sees a changed template" "
	sed 's/<think>.n.n<.think>.n.n/<think>\\\\n<\\/think>\\\\n\\\\n/' $TPL >changed.jinja &&
	! cmp -s $TPL changed.jinja &&
	! $PY $T_DIR/helper/chat-oracle.py changed.jinja chat-render 300 1 >out
"

serve_start S tf-serve $M || skip_all "tf-serve did not start"

cat >conv.py <<'PYEOF'
import json, sys
import jinja2, jinja2.ext
from jinja2.sandbox import ImmutableSandboxedEnvironment
# conv.py TEMPLATE: a conversation with tools, a tool call and a tool
# turn; writes its rendering (render.txt) and two request bodies: the
# tool call's arguments as an object (obj.json) and as a JSON string
# (str.json)
def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)
env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[jinja2.ext.loopcontrols])
env.filters["tojson"] = tojson
tools = [{"type": "function", "function": {"name": "get_weather", "description": "the sky over a city",
          "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}}}}]
args = {"city": "Verona", "days": 3, "hourly": [1.5, None, True]}
def conv(a):
    return [{"role": "system", "content": "You are brief."}, {"role": "user", "content": "Weather in Verona?"},
            {"role": "assistant", "content": "<think>\nI should ask.\n</think>\n\nLet me look.",
             "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": a}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "fair, 21 C"}]
text = env.from_string(open(sys.argv[1]).read()).render(messages=conv(args), tools=tools, add_generation_prompt=True,
                                                         enable_thinking=False)
open("render.txt", "w").write(text)
for name, a in (("obj.json", args), ("str.json", json.dumps(args))):
    json.dump({"messages": conv(a), "tools": tools, "max_tokens": 1, "temperature": 0,
               "chat_template_kwargs": {"enable_thinking": False}}, open(name, "w"))
PYEOF

test_expect "a conversation's prompt is the tokenized rendering of the template" "
	$PY conv.py $TPL &&
	tf-tok encode $M <render.txt | wc -w >n &&
	test \$(cat n) -gt 300 &&
	curl -sf $S_URL/v1/chat/completions -d @obj.json >a.json &&
	jq -e \".usage.prompt_tokens == \$(cat n)\" a.json
"
test_expect "tool-call arguments as a JSON string give the same prompt as the object" "
	curl -sf $S_URL/v1/chat/completions -d @str.json >b.json &&
	jq -e \".usage.prompt_tokens == \$(cat n)\" b.json &&
	grep -q '<parameter=hourly>' render.txt
"
serve_stop S
say_ok $? "SIGTERM: exit status 0"

# a model folder whose template is another family's (ChatML without
# thinking or the XML tool calls): chats are refused, completions served
mkdir other && ln -s $M/config.json $M/model.safetensors $M/tokenizer.json other/ &&
	printf '%s\n' '{"chat_template": "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"}' \
		>other/tokenizer_config.json
serve_start O tf-serve other || exit 1
test_expect "another family's template: a warning at start" "
	grep -q '^tf-serve: warning: the model.s chat template is not the Qwen3.5 family.s.*/v1/chat/completions is refused' $TMP/O.err
"
test_expect "... a chat gets 400 chat_template_unsupported, a completion is served" "
	test \$(curl -s -o e.json -w '%{http_code}' $O_URL/v1/chat/completions -d '{\"messages\": [{\"role\": \"user\", \"content\": \"a\"}]}') = 400 &&
	jq -e '.error.code == \"chat_template_unsupported\"' e.json &&
	curl -sf $O_URL/v1/completions -d '{\"prompt\": \"a\", \"max_tokens\": 2}' | jq -e '.object == \"text_completion\"'
"
serve_stop O
say_ok $? "SIGTERM: exit status 0"

done_testing
