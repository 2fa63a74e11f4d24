#!/bin/sh
# Progress of a prompt: drawn on stderr when it is a terminal (a
# pseudo-terminal here), redrawn in place and erased when a sequence is
# done; never with -q, never when stderr is not a terminal, and stdout the
# same byte for byte either way.
. "$(dirname "$0")/lib-tf.sh"

M=$DATA/tiny-q35
cat $M/prompt.ids $M/prompt.ids $M/prompt.ids >p.ids
tf-run --text 3 $M p.ids >want 2>err && test ! -s err

test_expect 'on a terminal, each sequence shows its prompt pass' '
	python3 "$T_DIR/helper/pty-run.py" tty tf-run --text 3 $M p.ids >out && cmp want out &&
	grep -q "tf-run: sequence 1, prompt of 48 tokens (25%)" tty &&
	grep -q "tf-run: sequence 3, prompt of 48 tokens (100%)" tty
'
test_expect 'the line is redrawn in place and erased at the end' '
	test "$(tr "\r" "\n" <tty | grep -c "tf-run: sequence ")" -ge 6 &&
	test "$(tail -c 4 tty | od -An -c | tr -d " ")" = "\r033[K"
'
test_expect 'generating shows the prompt too, and stdout is the same' '
	tf-run -n 4 $M p.ids >gwant &&
	python3 "$T_DIR/helper/pty-run.py" tty tf-run -n 4 $M p.ids >gout && cmp gwant gout &&
	grep -q "tf-run: sequence 2, prompt of 48 tokens" tty
'
test_expect '-q keeps the terminal quiet' '
	python3 "$T_DIR/helper/pty-run.py" tty tf-run -q --text 3 $M p.ids >out && cmp want out && test ! -s tty
'
test_expect 'step mode and windows are not prompt passes: nothing drawn' '
	python3 "$T_DIR/helper/pty-run.py" tty tf-run --window 8 --text 3 $M p.ids >out && test ! -s tty
'
test_expect 'not a terminal: nothing on stderr' '
	tf-run --text 3 $M p.ids >out 2>err && cmp want out && test ! -s err &&
	tf-run -n 4 $M p.ids >gout 2>err && cmp gwant gout && test ! -s err
'
test_expect 'errors still reach the terminal, the progress line gone' '
	printf "1 2 99999\n" >bad.ids &&
	python3 "$T_DIR/helper/pty-run.py" tty tf-run $M bad.ids >out; test $? = 1 &&
	grep -q "tf-run: error:" tty
'

done_testing
