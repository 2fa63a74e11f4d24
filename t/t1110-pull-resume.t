#!/bin/sh
# tf-pull resumes: from an .incomplete file left by an earlier run (Range
# request, 206), after the server cuts a transfer in the middle (retried at
# once from where it stopped), and starts over when the server ignores Range.
. "$(dirname "$0")/lib-tf.sh"
. "$T_DIR/lib-hub.sh"

SRC=$DATA/shakespeare-q35
MODEL=$SRC/model.safetensors
SIZE=$(wc -c <"$MODEL")
SHA=$(sha256 "$MODEL")
R=$(repo_dir org/shake)

fresh() {
	rm -rf "$HF_HUB_CACHE"
	mkdir -p "$R/blobs"
}

start_hub --repo org/shake="$SRC"
COMMIT=$(api_commit org/shake)
SNAP=$R/snapshots/$COMMIT

fresh
head -c 5000000 "$MODEL" >"$R/blobs/$SHA.incomplete"
test_expect 'an .incomplete file from an earlier run is resumed with a Range request' '
	tf-pull org/shake >out && cmp "$MODEL" "$SNAP/model.safetensors" &&
	test "$(hub_count "^GET	/_lfs/$SHA	bytes=5000000-	206")" = 1 &&
	test "$(hub_count "^GET	/_lfs/$SHA	-	")" = 0 &&
	test ! -e "$R/blobs/$SHA.incomplete"
'
stop_hub

start_hub --repo org/shake="$SRC" --fault model.safetensors=cut:1
fresh
test_expect 'a transfer cut in the middle continues at once from where it stopped' '
	tf-pull org/shake >out 2>err && cmp "$MODEL" "$SNAP/model.safetensors" &&
	test "$(hub_count "^GET	/_lfs/$SHA	-	200")" = 1 &&
	grep -E "^GET	/_lfs/$SHA	bytes=[1-9][0-9]*-	206" "$HUB_LOG" >ranged &&
	test "$(wc -l <ranged)" = 1 &&
	test ! -e "$R/blobs/$SHA.incomplete"
'
stop_hub

start_hub --repo org/shake="$SRC" --fault model.safetensors=cut:1 --fault model.safetensors=get500
fresh
test_error 'when the server then fails for good, the pull fails and says what it kept' tf-pull \
	"'model.safetensors' of 'org/shake': HTTP 500.*; $((SIZE / 2)) bytes kept in" tf-pull org/shake
test_expect '... keeping the bytes it got in the .incomplete file, and no ref or link' '
	test "$(wc -c <"$R/blobs/$SHA.incomplete")" = $((SIZE / 2)) &&
	test ! -e "$R/blobs/$SHA" && test ! -e "$R/refs/main" && test ! -e "$SNAP/model.safetensors"
'
stop_hub

start_hub --repo org/shake="$SRC"
test_expect 'the next run asks for the rest only and completes the blob' '
	tf-pull org/shake >out && cmp "$MODEL" "$SNAP/model.safetensors" &&
	test "$(hub_count "^GET	/_lfs/$SHA	bytes=$((SIZE / 2))-	206")" = 1 &&
	test "$(hub_count "^GET	/_lfs/")" = 1 && printf %s "$COMMIT" | cmp - "$R/refs/main"
'
stop_hub

start_hub --repo org/shake="$SRC" --fault model.safetensors=norange
fresh
head -c 3000000 "$MODEL" >"$R/blobs/$SHA.incomplete"
test_expect 'a server that ignores Range (200) makes the download start over' '
	tf-pull org/shake >out && cmp "$MODEL" "$SNAP/model.safetensors" &&
	test "$(hub_count "^GET	/_lfs/$SHA	bytes=3000000-	200")" = 1
'
stop_hub

start_hub --repo org/shake="$SRC" --fault tokenizer.json=short:1
fresh
TOK=$(git_sha1 "$SRC/tokenizer.json")
test_expect 'a body shorter than the file is completed with a Range request' '
	tf-pull org/shake >out && cmp "$SRC/tokenizer.json" "$SNAP/tokenizer.json" &&
	n=$(($(wc -c <"$SRC/tokenizer.json") / 2)) &&
	test "$(hub_count "^GET	/org/shake/resolve/$COMMIT/tokenizer.json	bytes=$n-	206")" = 1
'

fresh
cp "$MODEL" "$R/blobs/$SHA.incomplete"
: >"$HUB_LOG"
test_expect 'a whole .incomplete file is checked and moved into place without a GET' '
	tf-pull org/shake >out && cmp "$MODEL" "$SNAP/model.safetensors" &&
	test "$(hub_count "^GET	/_lfs/")" = 0 && test ! -e "$R/blobs/$SHA.incomplete"
'

fresh
cat "$MODEL" "$MODEL" >"$R/blobs/$SHA.incomplete"
test_expect 'an .incomplete file longer than the blob is thrown away' '
	tf-pull org/shake >out && cmp "$MODEL" "$SNAP/model.safetensors"
'

fresh
head -c 4000000 /dev/zero >"$R/blobs/$SHA.incomplete"
test_error 'a resumed file whose start is wrong fails the checksum' tf-pull \
	"checksum mismatch for 'model.safetensors'" tf-pull org/shake
test_expect '... and is deleted, so the next run downloads it whole' '
	test ! -e "$R/blobs/$SHA.incomplete" && test ! -e "$R/blobs/$SHA" &&
	tf-pull org/shake >out && cmp "$MODEL" "$SNAP/model.safetensors"
'

done_testing
