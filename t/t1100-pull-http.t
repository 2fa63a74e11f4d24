#!/bin/sh
# tf-pull over HTTP against the stand-in hub: a full pull is byte-identical to
# the served files and laid out as huggingface_hub lays out its cache; a
# second pull downloads nothing; revisions, include and exclude patterns.
. "$(dirname "$0")/lib-tf.sh"
. "$T_DIR/lib-hub.sh"

SRC=$DATA/shakespeare-q35
mkdir dev && cp "$SRC/config.json" "$SRC/tokenizer.json" dev/ &&
	printf '{"dev": true}\n' >dev/extra.json
mkdir -p deep/a/b && cp "$SRC/config.json" deep/a/b/config.json && cp "$SRC/config.json" deep/
start_hub --repo org/shake="$SRC" --repo org/shake@dev="$TMP/dev" --repo org/deep="$TMP/deep"
R=$(repo_dir org/shake)
COMMIT=$(api_commit org/shake)
DEV=$(api_commit org/shake dev)
SNAP=$R/snapshots/$COMMIT
DEFAULT='config.json generation_config.json model.safetensors reference.json tokenizer.json tokenizer_config.json'

test_expect 'a pull prints the snapshot folder on stdout and is quiet on stderr' '
	tf-pull org/shake >out 2>err &&
	echo "$SNAP" >want && cmp want out && test ! -s err
'

test_expect 'refs/main holds the commit the hub reports, without a newline' '
	printf %s "$COMMIT" | cmp - "$R/refs/main"
'

test_expect 'the default patterns take config, tokenizer and safetensors files' '
	(cd "$SNAP" && ls) | tr "\n" " " >got && echo "$DEFAULT" | tr -d "\n" >want &&
	test "$(cat got)" = "$(cat want) "
'

test_expect 'every file equals the served one byte for byte' '
	for f in $DEFAULT; do cmp "$SRC/$f" "$SNAP/$f" || exit 1; done
'

test_expect 'snapshot entries are relative links to blobs named by sha256 or git sha1' '
	test "$(readlink "$SNAP/model.safetensors")" = "../../blobs/$(sha256 "$SRC/model.safetensors")" &&
	for f in config.json tokenizer.json reference.json; do
		test "$(readlink "$SNAP/$f")" = "../../blobs/$(git_sha1 "$SRC/$f")" || exit 1
	done
'

test_expect 'CACHEDIR.TAG is written and nothing is left half done' '
	head -n 1 "$HF_HUB_CACHE/CACHEDIR.TAG" | grep -qx "Signature: 8a477f597d28d172789f06886806bc55" &&
	test -z "$(find "$HF_HUB_CACHE" -name "*.incomplete" -o -name "*.tmp.*")"
'

test_expect 'the LFS file came through the redirect, the others straight' '
	hub_count "^GET	/_lfs/$(sha256 "$SRC/model.safetensors")	-	200" >n && test "$(cat n)" = 1 &&
	hub_count "^HEAD	/org/shake/resolve/$COMMIT/model.safetensors	-	302" >n && test "$(cat n)" = 1 &&
	hub_count "^GET	/org/shake/resolve/$COMMIT/config.json	-	200" >n && test "$(cat n)" = 1
'

: >"$HUB_LOG"
test_expect 'a second pull downloads nothing: one listing request, no file request' '
	tf-pull org/shake >out2 2>err && cmp out out2 && test ! -s err &&
	test "$(wc -l <"$HUB_LOG")" = 1 && hub_count "^GET	/api/models/org/shake/revision/main" >n &&
	test "$(cat n)" = 1
'

: >"$HUB_LOG"
test_expect '--include "*" fetches only the files still missing' '
	tf-pull --include "*" org/shake >out3 && cmp out out3 &&
	for f in $(cd "$SRC" && ls); do cmp "$SRC/$f" "$SNAP/$f" || exit 1; done &&
	test "$(hub_count "^GET	/org/shake/resolve/")" = 4 &&
	test "$(hub_count "^GET	/_lfs/")" = 0
'

test_expect '--exclude drops files, on a fresh cache' '
	HF_HUB_CACHE=$TMP/c2 tf-pull -x "*.safetensors" -x "generation*" org/shake >out &&
	s=$(cat out) && test -f "$s/config.json" && test ! -e "$s/model.safetensors" &&
	test ! -e "$s/generation_config.json" && test -f "$s/tokenizer.json"
'

test_expect 'a branch @dev gets its own snapshot and refs/dev' '
	tf-pull -i "*" org/shake@dev >out && echo "$R/snapshots/$DEV" >want && cmp want out &&
	printf %s "$DEV" | cmp - "$R/refs/dev" && cmp dev/extra.json "$R/snapshots/$DEV/extra.json" &&
	printf %s "$COMMIT" | cmp - "$R/refs/main"
'

test_expect '--revision dev is the same as @dev' '
	tf-pull -i "*" --revision dev org/shake >out && echo "$R/snapshots/$DEV" >want && cmp want out
'

test_expect 'a commit hash as revision resolves without writing a ref for it' '
	tf-pull org/shake@$COMMIT >out && echo "$SNAP" >want && cmp want out &&
	test ! -e "$R/refs/$COMMIT"
'

test_expect 'files in folders link back with one ../ per level' '
	tf-pull org/deep >out && s=$(cat out) &&
	test "$(readlink "$s/a/b/config.json")" = "../../../../blobs/$(git_sha1 "$SRC/config.json")" &&
	cmp "$SRC/config.json" "$s/a/b/config.json" && cmp "$SRC/config.json" "$s/config.json"
'

test_expect 'HF_HOME/hub is the cache when HF_HUB_CACHE is unset' '
	env -u HF_HUB_CACHE HF_HOME="$TMP/home2" tf-pull -q org/shake >out &&
	echo "$TMP/home2/hub/models--org--shake/snapshots/$COMMIT" >want && cmp want out
'

test_expect 'XDG_CACHE_HOME/huggingface/hub comes next' '
	env -u HF_HUB_CACHE -u HF_HOME XDG_CACHE_HOME="$TMP/xdg" tf-pull org/shake >out &&
	echo "$TMP/xdg/huggingface/hub/models--org--shake/snapshots/$COMMIT" >want && cmp want out
'

test_expect 'then ~/.cache/huggingface/hub' '
	env -u HF_HUB_CACHE -u HF_HOME HOME="$TMP/h3" tf-pull org/shake >out &&
	echo "$TMP/h3/.cache/huggingface/hub/models--org--shake/snapshots/$COMMIT" >want && cmp want out
'

test_expect '--cache-dir wins over the environment' '
	tf-pull --cache-dir "$TMP/c4" org/shake >out &&
	echo "$TMP/c4/models--org--shake/snapshots/$COMMIT" >want && cmp want out
'

test_expect 'HF_ENDPOINT with a trailing slash works the same' '
	HF_ENDPOINT=$HF_ENDPOINT/ tf-pull org/shake >out && echo "$SNAP" >want && cmp want out
'

test_error 'a full stdout is an error, not a silent success' tf-pull 'write to stdout' \
	sh -c 'tf-pull org/shake >/dev/full'

test_expect '--help goes to stdout and exits 0, --version names the program' '
	tf-pull --help >out 2>err && grep -q "^usage: tf-pull" out && test ! -s err &&
	tf-pull -V >out && grep -q "^tf-pull [0-9]" out
'

for args in '' 'a/b/c' '-j 0' '-j 65 org/shake' '--bogus org/shake' 'org/shake org/x' \
	'org/shake@' 'org/sh..ake' 'org/shake@a..b' '--list --as x/y' 'org/shake@main -r dev'; do
	test_expect "usage error exits 2: tf-pull $args" '
		tf-pull $args >out 2>err; test $? = 2 && test ! -s out && grep -q "tf-pull" err
	'
done

test_expect 'a local path without --as is a usage error that says so' '
	tf-pull dev >out 2>err; test $? = 2 && grep -q "with --as" err
'

done_testing
