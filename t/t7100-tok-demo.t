#!/bin/sh
# the demo pipeline, text to text: tf-tok encode | tf-run --stream |
# tf-tok decode writes the greedy text transformers wrote (reference.json)
. "$(dirname "$0")/lib-tf.sh"

[ -e "$TF_ROOT/bin/tf-run" ] || skip_all 'tf-run not built'

ref_text() {
	python3 -c 'import json, sys; sys.stdout.buffer.write(json.load(open(sys.argv[1]))[sys.argv[2]].encode())' \
		"$1/reference.json" "$2"
}

for m in "$DATA/shakespeare-q35" "$DATA/shakespeare-q35-1bit"; do
	name=$(basename "$m")
	test_expect "$name: the pipeline writes greedy64_text" '
		ref_text "$m" prompt_text >prompt.txt && ref_text "$m" greedy64_text >expect &&
		tf-tok encode "$m" prompt.txt | tf-run "$m" -n 64 --stream | tf-tok decode "$m" >got &&
		cmp expect got
	'
done
test_expect 'demo.sh shows each prompt followed by its greedy text' '
	"$TF_ROOT/t/helper/demo.sh" >out &&
	python3 -c "
import json, sys
out = open(\"out\", \"rb\").read().decode()
for m in sys.argv[1:]:
    ref = json.load(open(m + \"/reference.json\"))
    assert ref[\"prompt_text\"] + ref[\"greedy64_text\"] + \"\n\" in out, m
" "$DATA/shakespeare-q35" "$DATA/shakespeare-q35-1bit"
'

done_testing
