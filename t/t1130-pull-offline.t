#!/bin/sh
# tf-pull --offline and HF_HUB_OFFLINE=1: revisions resolve through refs/ and
# snapshots/ with no HTTP at all (the endpoint is a closed port, so any
# request would fail the run); what is not cached is an error.
. "$(dirname "$0")/lib-tf.sh"
. "$T_DIR/lib-hub.sh"

SRC=$DATA/shakespeare-q35
R=$(repo_dir org/shake)
start_hub --repo org/shake="$SRC" --repo org/shake@dev="$SRC"
COMMIT=$(api_commit org/shake)
SNAP=$R/snapshots/$COMMIT
tf-pull org/shake >/dev/null || echo "Bail out! the first pull failed"
stop_hub
echo "$SNAP" >want

test_expect '--offline resolves main from refs/main' '
	tf-pull --offline org/shake >out 2>err && cmp want out && test ! -s err
'
test_expect 'HF_HUB_OFFLINE=1 does the same' '
	HF_HUB_OFFLINE=1 tf-pull org/shake >out && cmp want out
'
test_expect 'so does TRANSFORMERS_OFFLINE=1' '
	TRANSFORMERS_OFFLINE=1 tf-pull org/shake >out && cmp want out
'
test_expect 'a cached commit resolves to its snapshot' '
	tf-pull -o org/shake@$COMMIT >out && cmp want out
'
test_expect 'the snapshot offline is the very content pulled' '
	for f in config.json model.safetensors tokenizer.json; do cmp "$SRC/$f" "$SNAP/$f" || exit 1; done
'
test_error 'a revision never pulled is not in the cache' tf-pull \
	"revision 'dev' of 'org/shake' is not in the cache \(offline\)" tf-pull --offline org/shake@dev
test_error 'a repository never pulled is not in the cache' tf-pull \
	"'org/other' is not in the cache '$HF_HUB_CACHE' \(offline\)" tf-pull --offline org/other
test_error 'files never pulled do not match' tf-pull \
	"no cached file of 'org/shake' at 'main' matches the include patterns" \
	tf-pull --offline -i "*.ids" org/shake
test_expect 'HF_HUB_OFFLINE=0 is not offline (and the closed endpoint fails)' '
	HF_HUB_OFFLINE=0 HF_HUB_ETAG_TIMEOUT=1 tf-pull org/shake >out 2>err; test $? = 1 &&
	grep -q "cannot resolve" err
'

BLOB=$(readlink "$SNAP/config.json")
mv "$SNAP/$BLOB" blob.save
test_error 'a snapshot whose blob is gone is an error naming the file' tf-pull \
	"'config.json' is in the cached snapshot but its blob is missing" tf-pull --offline org/shake
mv blob.save "$SNAP/$BLOB"

printf 'not a hash' >"$R/refs/main"
test_error 'a damaged ref is an error, not a guess' tf-pull 'refs/main. does not hold a commit hash' \
	tf-pull --offline org/shake

done_testing
