# lib-streams.sh: the input of the tests of many sequences at once (t3010,
# t9102); source it after lib-tf.sh.
#
#   stream_lines V    lines of 48 ids, none, 300 (past a prompt chunk of
#                     256 and the delta rule's chunks of 64), the first
#                     again, 3, none, 70: held-out ids modulo V

stream_lines() {
	tr ' ' '\n' <$DATA/shakespeare-q35/val4096.ids | awk 'NF' | awk -v v=$1 '
		{ id[NR] = $1 % v }
		END {
			line(1, 48); print ""; line(100, 300); line(1, 48); line(500, 3); print ""; line(700, 70)
		}
		function line(a, n,   i) { for (i = 0; i < n; i++) printf "%s%d", (i ? " " : ""), id[a + i]; print "" }'
}
