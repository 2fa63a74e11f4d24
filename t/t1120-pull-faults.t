#!/bin/sh
# tf-pull against a failing or hostile hub: tokens (401), missing repositories,
# revisions and files (404), server errors (500, retried), wrong checksums,
# unsafe or broken listings, renamed repositories (relative redirects).
. "$(dirname "$0")/lib-tf.sh"
. "$T_DIR/lib-hub.sh"

SRC=$DATA/shakespeare-q35
R=$(repo_dir org/shake)
SHA=$(sha256 "$SRC/model.safetensors")

# nothing in the cache may stay behind from a failed pull but locks and
# .incomplete files
no_blob() {
	test ! -e "$R/blobs/$1" && test ! -e "$R/blobs/$1.incomplete"
}

start_hub --repo org/shake="$SRC" --token s3cret
COMMIT=$(HF_TOKEN=s3cret python3 -c 'import json, os, sys, urllib.request
q = urllib.request.Request(sys.argv[1] + "/api/models/org/shake/revision/main",
                           headers={"Authorization": "Bearer " + os.environ["HF_TOKEN"]})
print(json.load(urllib.request.urlopen(q))["sha"])' "$HF_ENDPOINT")
SNAP=$R/snapshots/$COMMIT

test_error 'without a token a gated repository is refused (401) with a hint' tf-pull \
	"cannot resolve 'main' for 'org/shake': HTTP 401 \(GatedRepo; a gated or private repository needs HF_TOKEN\)" \
	tf-pull org/shake
test_error 'a wrong token is refused' tf-pull 'HTTP 401 .*the token was refused' \
	env HF_TOKEN=nope tf-pull org/shake
test_expect 'nothing was written for a refused pull' 'test ! -e "$R"'

: >"$HUB_LOG"
test_expect 'HF_TOKEN is sent as a bearer token and the pull works' '
	HF_TOKEN=s3cret tf-pull org/shake >out && cmp "$SRC/model.safetensors" "$SNAP/model.safetensors" &&
	test "$(hub_count "noauth$")" = 1 && hub_count "^GET	/_lfs/$SHA	-	200	noauth" >/dev/null
'
test_expect '... and not to the other host the LFS redirect leads to' '
	test "$(hub_count "^GET	/_lfs/.*	auth$")" = 0 &&
	test "$(hub_count "^(HEAD|GET)	/(api|org)/.*	noauth$")" = 0
'

rm -rf "$HF_HUB_CACHE"
test_expect 'HUGGING_FACE_HUB_TOKEN works too' '
	HUGGING_FACE_HUB_TOKEN=s3cret tf-pull -i config.json org/shake >out
'
mkdir -p "$HF_HOME" && printf 's3cret\n' >"$HF_HOME/token"
test_expect 'and so does the token file in HF_HOME' '
	tf-pull -i tokenizer.json org/shake >out && test -f "$(cat out)/tokenizer.json"
'
rm "$HF_HOME/token"
test_error 'a token that cannot go into a header is refused' tf-pull 'HF_TOKEN.*cannot be sent' \
	env "HF_TOKEN=$(printf 'a\tb')" tf-pull org/shake
stop_hub

start_hub --repo org/shake="$SRC" --rename old/shake=org/shake
COMMIT=$(api_commit org/shake)
SNAP=$R/snapshots/$COMMIT
test_error 'a missing repository is a 404' tf-pull \
	"cannot resolve 'main' for 'org/none': HTTP 404 \(RepoNotFound\)" tf-pull org/none
test_error 'a missing revision is a 404' tf-pull \
	"cannot resolve 'nope' for 'org/shake': HTTP 404 \(RevisionNotFound\)" tf-pull org/shake@nope

: >"$HUB_LOG"
test_expect 'a renamed repository is followed through relative redirects' '
	tf-pull old/shake >out &&
	cmp "$SRC/model.safetensors" "$(repo_dir old/shake)/snapshots/$COMMIT/model.safetensors" &&
	hub_count "^GET	/api/models/old/shake/revision/main.*	307	" >/dev/null &&
	hub_count "^HEAD	/old/shake/resolve/$COMMIT/config.json	-	307	" >/dev/null &&
	hub_count "^HEAD	/org/shake/resolve/$COMMIT/config.json	-	200	" >/dev/null
'
stop_hub

rm -rf "$HF_HUB_CACHE"
start_hub --repo org/shake="$SRC" --fault config.json=404
test_error 'a listed file the server will not give is a 404 naming it' tf-pull \
	"cannot fetch 'config.json' of 'org/shake': HTTP 404" tf-pull org/shake
test_expect 'the snapshot is not given a ref while a file is missing' 'test ! -e "$R/refs/main"'
stop_hub

rm -rf "$HF_HUB_CACHE"
start_hub --repo org/shake="$SRC" --fault api=500
test_error 'a server that keeps failing (500) fails the pull after retries' tf-pull \
	"cannot resolve 'main' for 'org/shake': HTTP 500" tf-pull org/shake
test_expect '... three tries in all' 'test "$(hub_count "^GET	/api/")" = 3'
stop_hub

start_hub --repo org/shake="$SRC" --fault api=500:1 --fault config.json=500:1 \
	--fault tokenizer.json=get500:1
test_expect 'a passing 500 on the listing, a HEAD and a GET is retried' '
	tf-pull org/shake >out && cmp "$SRC/config.json" "$SNAP/config.json" &&
	cmp "$SRC/tokenizer.json" "$SNAP/tokenizer.json" &&
	test "$(hub_count "	500	")" = 3
'
stop_hub

rm -rf "$HF_HUB_CACHE"
start_hub --repo org/shake="$SRC" --fault model.safetensors=get500
test_error 'a download that keeps failing (500) fails the pull' tf-pull \
	"cannot fetch 'model.safetensors' of 'org/shake': HTTP 500" tf-pull org/shake
test_expect '... and leaves no empty .incomplete behind' '
	test -z "$(find "$HF_HUB_CACHE" -name "*.incomplete" -size 0)"
'
stop_hub

rm -rf "$HF_HUB_CACHE"
start_hub --repo org/shake="$SRC" --fault model.safetensors=badsha
test_error 'an LFS blob with a wrong sha256 is refused' tf-pull \
	"checksum mismatch for 'model.safetensors': expected sha256 $SHA, got [0-9a-f]{64}; the download was deleted" \
	tf-pull org/shake
test_expect '... and deleted: no blob, no .incomplete, no link, no ref' '
	no_blob "$SHA" && test ! -e "$SNAP/model.safetensors" && test ! -e "$R/refs/main"
'
stop_hub

rm -rf "$HF_HUB_CACHE"
start_hub --repo org/shake="$SRC" --fault config.json=badsha
CFG=$(git_sha1 "$SRC/config.json")
test_error 'a small file whose git blob hash is wrong is refused' tf-pull \
	"checksum mismatch for 'config.json': expected git sha1 $CFG" tf-pull -i config.json org/shake
test_expect '... and deleted' 'no_blob "$CFG"'
stop_hub

start_hub --repo org/shake="$SRC" --fault config.json=commit
test_error 'a HEAD answering for another commit is refused' tf-pull \
	"'config.json': the server answered for commit '0{40}'" tf-pull -i config.json org/shake
stop_hub

rm -rf "$HF_HUB_CACHE"
start_hub --repo org/shake="$SRC" --fault api=unsafe
test_error 'a listing with a path that climbs out is refused' tf-pull \
	"the file list of 'org/shake' names an unsafe path '\.\./evil\.json'" tf-pull -i "*" org/shake
test_expect '... before anything is written' '
	test ! -e "$HF_HUB_CACHE" && test -z "$(find "$TMP" -name evil.json)"
'
stop_hub

start_hub --repo org/shake="$SRC" --fault api=badjson
test_error 'a listing that is not JSON is refused' tf-pull 'not a JSON object' tf-pull org/shake
stop_hub

rm -rf "$HF_HUB_CACHE"
start_hub --repo org/shake="$SRC" --fault config.json=hang:1 --fault model.safetensors=stall:1
test_expect 'a HEAD that gets no answer and a download that stalls time out and are retried' '
	t0=$(date +%s) &&
	HF_HUB_ETAG_TIMEOUT=1 HF_HUB_DOWNLOAD_TIMEOUT=1 tf-pull org/shake >out &&
	test $(($(date +%s) - t0)) -lt 20 &&
	cmp "$SRC/config.json" "$SNAP/config.json" && cmp "$SRC/model.safetensors" "$SNAP/model.safetensors" &&
	hub_count "^GET	/_lfs/$SHA	bytes=[1-9][0-9]*-	206" >/dev/null
'
stop_hub

rm -rf "$HF_HUB_CACHE"
start_hub --repo org/shake="$SRC" --fault api=trickle:1 --fault model.safetensors=trickle:1
test_expect 'a listing and a download trickling a byte every half second hit the deadline and are retried' '
	t0=$(date +%s) &&
	HF_HUB_DOWNLOAD_TIMEOUT=30 HF_HUB_ETAG_TIMEOUT=30 tf-pull --deadline 3 org/shake >out &&
	test $(($(date +%s) - t0)) -lt 25 &&
	cmp "$SRC/config.json" "$SNAP/config.json" && cmp "$SRC/model.safetensors" "$SNAP/model.safetensors"
'
stop_hub
test_expect 'a deadline that is not a number of seconds is a usage error' '
	tf-pull --deadline soon org/shake 2>err; test $? = 2 && grep -q "deadline" err
'

test_error 'a hub that cannot be reached fails cleanly' tf-pull \
	"cannot resolve 'main' for 'org/shake': 'http://127.0.0.1:9/api/models/org/shake/revision/main\?blobs=true'" \
	tf-pull org/shake

done_testing
