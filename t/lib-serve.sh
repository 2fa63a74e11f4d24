# lib-serve.sh: tf-serve's tests start and stop servers with these; source
# it after lib-tf.sh.
#
#   serve_start NAME tf-serve args...   starts it on a free port (--port 0);
#                                       $NAME_URL is its URL, $NAME_PID its pid
#   serve_stop NAME                     SIGTERM, then its exit status
#   long_model DIR N                    DIR: $M with max_position_embeddings N
#                                       (plain rope turns alike at any length),
#                                       for jobs longer than its 8192
#
# The server prints its URL on stdout once it listens; start-up on a slow
# machine takes seconds, so the wait is long and bounded.

M=$DATA/shakespeare-q35
PY=${PYTHON:-python3}

long_model() {
	mkdir -p "$1" && for f in "$M"/*; do ln -sf "$f" "$1/"; done && rm "$1/config.json" &&
	sed "s/\"max_position_embeddings\": [0-9]*/\"max_position_embeddings\": $2/" "$M/config.json" >"$1/config.json"
}

serve_start() {
	name=$1
	shift
	rm -f "$TMP/$name.url"
	"$@" --port 0 >"$TMP/$name.url" 2>"$TMP/$name.err" &
	eval "${name}_PID=$!"
	i=0
	while [ $i -lt 1200 ]; do
		if [ -s "$TMP/$name.url" ]; then
			eval "${name}_URL=\$(head -1 \"\$TMP/\$name.url\")"
			return 0
		fi
		eval "kill -0 \$${name}_PID" 2>/dev/null || break
		sleep 0.1
		i=$((i + 1))
	done
	echo "# $name did not start:"
	sed 's/^/#   /' "$TMP/$name.err"
	return 1
}

# serve_stop NAME: SIGTERM and the exit status (the wait is bounded by
# the server's --drain)
serve_stop() {
	eval "pid=\$${1}_PID"
	kill -TERM "$pid" 2>/dev/null
	wait "$pid"
}

# metric URL NAME: a value from /metrics
metric() {
	curl -sf "$1/metrics" | awk -v n="$2" '$1 == n { print $2 }'
}

# wait_metric URL NAME VALUE: until /metrics shows it, at most 120 s
wait_metric() {
	i=0
	while [ $i -lt 1200 ]; do
		[ "$(metric "$1" "$2")" = "$3" ] && return 0
		sleep 0.1
		i=$((i + 1))
	done
	echo "$2 is $(metric "$1" "$2"), not $3"
	return 1
}
