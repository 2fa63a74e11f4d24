#!/bin/sh
# Config numbers built to hurt the loader, and files that are not files:
# each a one-line "tf-run: error:" naming the field, exit 1, at once (no
# gigabyte allocated for 2^30 layers, no wait on a FIFO, no NaN logits).
. "$(dirname "$0")/lib-tf.sh"
M=$DATA/tiny-q35

# cfg NAME PYTHON: a copy of the tiny model whose config dict c (and
# generation config g) the statement changes
cfg() {
	mkdir $1 && ln -s $M/model.safetensors $1/ && cp $M/config.json $M/generation_config.json $1/ &&
	python3 -c "
import json
c = json.load(open('$1/config.json')); g = json.load(open('$1/generation_config.json'))
$2
json.dump(c, open('$1/config.json', 'w')); json.dump(g, open('$1/generation_config.json', 'w'))"
}

cfg theta 'c["rope_parameters"]["rope_theta"] = 1e-300' 2>/dev/null ||
	cfg theta 'c["rope_theta"] = 1e-300'
test_error 'rope_theta 1e-300 (0 as a float) is refused' tf-run "rope_theta 1e-300 is not a positive float" \
	tf-run theta $M/prompt.ids
cfg eps 'c["rms_norm_eps"] = 1e300'
test_error 'rms_norm_eps 1e300 (inf as a float) is refused' tf-run "rms_norm_eps 1e\+300 is not a positive float" \
	tf-run eps $M/prompt.ids
cfg prf 'c.get("rope_parameters", c)["partial_rotary_factor"] = 1e300'
test_error 'partial_rotary_factor 1e300 is refused before it becomes an int' tf-run "partial_rotary_factor" \
	tf-run prf $M/prompt.ids
cfg layers 'c["num_hidden_layers"] = 2**30; c.pop("layer_types", None)'
# the limit: what tf-run maps to start (a CUDA build maps cuBLASLt, some
# 540 MB) and some 500 MB more, short of the 1 GiB the layer table of 2^30
# layers took before the bound
if ldd "$(command -v tf-run)" 2>/dev/null | grep -q cublasLt; then vm=1400000; else vm=600000; fi
test_expect "num_hidden_layers 2^30 is refused at once, within $vm KB of address space" '
	(ulimit -v $vm; tf-run layers $M/prompt.ids 2>err); test $? = 1 &&
	grep -q "^tf-run: error: .*num_hidden_layers. is 1073741824, more than 1024" err
'
cfg heads 'c["num_attention_heads"] = 2**29; c["num_key_value_heads"] = 2**29'
test_error 'heads that would overflow 2 * heads * head_dim are refused' tf-run "num_attention_heads. is 536870912" \
	tf-run heads $M/prompt.ids
cfg conv 'c["linear_num_value_heads"] = 2**20; c["linear_value_head_dim"] = 2**20'
test_error 'a DeltaNet width that would overflow the conv width is refused' tf-run "linear_num_value_heads. is 1048576" \
	tf-run conv $M/prompt.ids
cfg eos 'g["eos_token_id"] = 2**40 + 345'
test_error 'an eos id past int32 is refused, not taken as 345' tf-run "eos_token_id 1099511628121 is not a token id" \
	tf-run -n 4 eos $M/prompt.ids
cfg eosstr 'g["eos_token_id"] = "2"'
test_error 'an eos id that is not a number is refused' tf-run "eos_token_id is not an id" \
	tf-run -n 4 eosstr $M/prompt.ids
cfg gen 'pass'
echo '{ "eos_token_id": [1, ' >gen/generation_config.json
test_error 'a generation_config.json that is not JSON is an error, not ignored' tf-run \
	"generation_config.json.* is not valid JSON" tf-run -n 4 gen $M/prompt.ids

# FIFOs where files belong: refused without waiting for a writer
for f in config.json model.safetensors tokenizer.json; do
	mkdir fifo-$f && cp $M/config.json $M/model.safetensors fifo-$f/ && rm -f fifo-$f/$f &&
		mkfifo fifo-$f/$f
	test_error "a FIFO named $f is refused, not waited on" tf-run "not a regular file" \
		timeout 20 tf-run fifo-$f $M/prompt.ids
done

done_testing
