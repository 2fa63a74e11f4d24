#!/bin/sh
# Progress bars: drawn on stderr when it is a terminal (a pseudo-terminal
# here), one line per download and a total; never with -q or
# HF_HUB_DISABLE_PROGRESS_BARS=1, and never on stdout.
. "$(dirname "$0")/lib-tf.sh"
. "$T_DIR/lib-hub.sh"

SRC=$DATA/shakespeare-q35
start_hub --repo org/shake="$SRC" --chunk-delay 0.003
COMMIT=$(api_commit org/shake)
echo "$(repo_dir org/shake)/snapshots/$COMMIT" >want

test_expect 'on a terminal, per-file bars and a total line are drawn' '
	python3 "$T_DIR/helper/pty-run.py" tty tf-pull -j 2 org/shake >out && cmp want out &&
	grep -q "model.safetensors .*%.*\[" tty && grep -q "total [0-9]/6 files" tty &&
	grep -q "6/6 files, .* fetched in" tty
'
test_expect 'the bars are redrawn in place' '
	test "$(tr "\r" "\n" <tty | grep -c "total ")" -gt 2
'
rm -rf "$HF_HUB_CACHE"
test_expect '-q keeps the terminal quiet' '
	python3 "$T_DIR/helper/pty-run.py" tty tf-pull -q org/shake >out && cmp want out && test ! -s tty
'
rm -rf "$HF_HUB_CACHE"
test_expect 'so does HF_HUB_DISABLE_PROGRESS_BARS=1' '
	HF_HUB_DISABLE_PROGRESS_BARS=1 python3 "$T_DIR/helper/pty-run.py" tty tf-pull org/shake >out &&
	cmp want out && test ! -s tty
'
test_expect 'errors still reach the terminal' '
	python3 "$T_DIR/helper/pty-run.py" tty tf-pull org/none >out; test $? = 1 &&
	grep -q "tf-pull: error: cannot resolve" tty && test ! -s out
'

done_testing
