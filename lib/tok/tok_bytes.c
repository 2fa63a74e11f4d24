/* tok_bytes.c: the byte <-> character map of byte-level BPE */
#include "base/utf8.h"
#include "tok_bytes.h"

#define NCHAR 0x144     /* characters of the alphabet all lie below U+0144 */

static int32_t to_char[256];
static int16_t to_byte[NCHAR];
static char spelled[256][2];    /* UTF-8 of to_char[b], always 1 or 2 bytes */
static unsigned char spelled_len[256];
static int ready;

static void init(void)
{
	int n = 0;

	for (int c = 0; c < NCHAR; c++)
		to_byte[c] = -1;
	for (int b = 0; b < 256; b++) {
		int printable = (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || b >= 0xae;
		to_char[b] = printable ? b : 256 + n++;
		to_byte[to_char[b]] = b;
		spelled_len[b] = tf_utf8_put(spelled[b], to_char[b]);
	}
	ready = 1;
}

int32_t tf_bytelevel_char(unsigned char b)
{
	if (!ready)
		init();
	return to_char[b];
}

int tf_bytelevel_byte(int32_t cp)
{
	if (!ready)
		init();
	return cp >= 0 && cp < NCHAR ? to_byte[cp] : -1;
}

size_t tf_bytelevel_encode(const char *s, size_t n, char *out)
{
	size_t o = 0;

	if (!ready)
		init();
	for (size_t i = 0; i < n; i++) {
		unsigned char b = s[i];
		out[o] = spelled[b][0];
		out[o + 1] = spelled[b][1];
		o += spelled_len[b];
	}
	return o;
}

long tf_bytelevel_decode(const char *s, size_t n, char *out)
{
	size_t i = 0, o = 0;

	if (!ready)
		init();
	while (i < n) {
		int32_t cp;
		int b;

		i += tf_utf8_next(s + i, n - i, &cp);
		if ((b = tf_bytelevel_byte(cp)) < 0)
			return -1;
		out[o++] = b;
	}
	return o;
}
