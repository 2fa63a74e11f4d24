# lib-hub.sh: a private hub cache and a stand-in hub for tf-pull's tests;
# source it after lib-tf.sh.
#
#   start_hub --repo org/name="$DATA/shakespeare-q35" [more hub.py options]
#   tf-pull org/name           # talks to the stand-in on 127.0.0.1 only
#   hub_count 'GET	/_lfs/'    # how many logged requests match an ERE
#   stop_hub
#
# Nothing of the user's environment leaks in: the cache is $TMP/cache, there
# is no token, and HF_ENDPOINT points at a closed local port until a hub is
# started, so a test never reaches beyond 127.0.0.1.

unset HF_TOKEN HUGGING_FACE_HUB_TOKEN HF_TOKEN_PATH HF_HUB_OFFLINE TRANSFORMERS_OFFLINE \
	HF_HUB_DISABLE_PROGRESS_BARS HUGGINGFACE_HUB_CACHE XDG_CACHE_HOME LLAMA_CACHE \
	HF_HUB_ETAG_TIMEOUT HF_HUB_DOWNLOAD_TIMEOUT http_proxy https_proxy HTTP_PROXY \
	HTTPS_PROXY ALL_PROXY all_proxy
HF_HUB_CACHE=$TMP/cache
HF_HOME=$TMP/hf-home
HF_ENDPOINT=http://127.0.0.1:9
NO_PROXY='*'
export HF_HUB_CACHE HF_HOME HF_ENDPOINT NO_PROXY
HUB_LOG=$TMP/hub.log
HUB_PID=

start_hub() {
	: >"$HUB_LOG"
	: >"$TMP/hub.port"
	python3 "$T_DIR/helper/hub.py" --lifetime 300 --log "$HUB_LOG" "$@" \
		>"$TMP/hub.port" 2>"$TMP/hub.err" &
	HUB_PID=$!
	_i=0
	while [ ! -s "$TMP/hub.port" ] && [ $_i -lt 200 ]; do
		sleep 0.05
		_i=$((_i + 1))
	done
	_port=$(head -n 1 "$TMP/hub.port")
	case $_port in
	''|*[!0-9]*)
		echo "Bail out! the stand-in hub did not start"
		sed 's/^/# /' "$TMP/hub.err"
		exit 1 ;;
	esac
	HF_ENDPOINT=http://127.0.0.1:$_port
	export HF_ENDPOINT
}

stop_hub() {
	if [ -n "$HUB_PID" ]; then
		kill "$HUB_PID" 2>/dev/null
		wait "$HUB_PID" 2>/dev/null
	fi
	HUB_PID=
	HF_ENDPOINT=http://127.0.0.1:9
}

trap 'stop_hub; rm -rf "$TMP"' EXIT

# hub_count ERE: logged requests matching ERE (tab-separated: METHOD PATH RANGE STATUS AUTH)
hub_count() {
	grep -Ec "$1" "$HUB_LOG"
}

# repo_dir ORG/NAME: the repository's folder in the test cache
repo_dir() {
	echo "$HF_HUB_CACHE/models--$(echo "$1" | sed 's|/|--|')"
}

# git_sha1 FILE: git's blob hash, computed apart from tf-pull
git_sha1() {
	python3 -c 'import hashlib, sys
d = open(sys.argv[1], "rb").read()
print(hashlib.sha1(b"blob %d\0" % len(d) + d).hexdigest())' "$1"
}

sha256() {
	sha256sum "$1" | cut -d " " -f 1
}

# api_commit ORG/NAME [REV]: the commit the hub itself reports
api_commit() {
	python3 -c 'import json, sys, urllib.request
u = "%s/api/models/%s/revision/%s" % tuple(sys.argv[1:4])
print(json.load(urllib.request.urlopen(u))["sha"])' "$HF_ENDPOINT" "$1" "${2:-main}"
}

# manifest_commit DIR [PATH...]: the snapshot name tf-pull gives an archive
# of DIR's files (all of them, or the PATHs): the git blob hash of their
# sha256sum lines sorted by path, computed here apart from tf-pull
manifest_commit() {
	python3 -c 'import hashlib, os, sys
root, paths = sys.argv[1], sys.argv[2:]
if not paths:
    for d, dirs, names in os.walk(root):
        paths += [os.path.relpath(os.path.join(d, n), root) for n in names]
lines = "".join("%s  %s\n" % (hashlib.sha256(open(os.path.join(root, p), "rb").read()).hexdigest(), p)
                for p in sorted(paths, key=os.fsencode)).encode()
print(hashlib.sha1(b"blob %d\0" % len(lines) + lines).hexdigest())' "$@"
}
