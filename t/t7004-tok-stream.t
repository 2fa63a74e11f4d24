#!/bin/sh
# tf-tok decode as a stream: each token's bytes come out as soon as its id
# is complete, before the line or the input ends, except the beginning of
# a character whose other bytes are still to come
. "$(dirname "$0")/lib-tf.sh"

M=$DATA/shakespeare-q35

# wait_for FILE BYTES: until FILE holds at least BYTES bytes (10 s at most)
wait_for() {
	i=0
	while [ "$(wc -c <"$1")" -lt "$2" ] && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	[ "$(wc -c <"$1")" -ge "$2" ]
}

# the writer side of a fifo stays open between the steps, so decode sees
# no end of input until the test closes it (or a timeout ends it)
start_decode() {
	rm -f in out
	mkfifo in
	: >out
	timeout 30 tf-tok decode "$@" "$M" <in >out 2>err &
	exec 3>in
}

test_expect 'a token is written as soon as its id is followed by a blank' '
	start_decode &&
	printf "827 " >&3 && wait_for out 5 && printf ROMEO | cmp - out &&
	printf "271" >&3 && sleep 0.3 && printf ROMEO | cmp - out &&
	printf " 43\n" >&3 && wait_for out 8 && printf "ROMEO:\nI" | cmp - out &&
	exec 3>&- && wait && printf "ROMEO:\nI" | cmp - out
'
printf "\360\237\221\215\303\251" >emoji.txt     # U+1F44D, then e-acute
tf-tok encode "$M" emoji.txt >emoji.ids
test_expect 'the bytes of a character split across tokens are held until complete' '
	test $(wc -w <emoji.ids) -ge 3 &&
	start_decode &&
	for id in $(cat emoji.ids); do
		printf "%s " $id >&3 && sleep 0.2 && size=$(wc -c <out) &&
		case $size in 0|4|6) ;; *) echo "partial character: $size bytes"; exit 1;; esac
	done &&
	exec 3>&- && wait && cmp emoji.txt out
'
test_expect 'the end of a line ends the text, complete or not' '
	first=$(cut -d" " -f1 emoji.ids) &&
	start_decode --lines &&
	printf "%s\n" $first >&3 && wait_for out 2 &&
	printf "827\n" >&3 && wait_for out 8 &&
	exec 3>&- && wait &&
	{ tf-tok decode "$M" <<-EOF
	$first
	EOF
	printf "\nROMEO\n"; } | cmp - out
'
test_expect 'encode --lines answers each line of a pipe as it comes' '
	rm -f in out && mkfifo in && : >out &&
	{ timeout 30 tf-tok encode --lines "$M" <in >out & } &&
	exec 3>in && printf "ROMEO:\n" >&3 && wait_for out 2 &&
	printf "I will\n" >&3 && exec 3>&- && wait &&
	{ printf "ROMEO:" | tf-tok encode "$M"; printf "I will" | tf-tok encode "$M"; } | cmp - out
'

done_testing
