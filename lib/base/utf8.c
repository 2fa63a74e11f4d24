/* utf8.c: validating, stepping and splitting UTF-8 */
#include "utf8.h"

/* bytes in a character that starts with lead byte c; 0 for a byte that
 * cannot start one (continuation bytes, C0, C1, F5..FF) */
static int seq_len(unsigned char c)
{
	if (c < 0x80)
		return 1;
	if (c < 0xc2)
		return 0;
	if (c < 0xe0)
		return 2;
	if (c < 0xf0)
		return 3;
	if (c < 0xf5)
		return 4;
	return 0;
}

/* whether the second byte b is allowed after lead byte c (overlongs,
 * surrogates and values past U+10FFFF are ruled out here) */
static int second_ok(unsigned char c, unsigned char b)
{
	switch (c) {
	case 0xe0: return b >= 0xa0 && b <= 0xbf;
	case 0xed: return b >= 0x80 && b <= 0x9f;
	case 0xf0: return b >= 0x90 && b <= 0xbf;
	case 0xf4: return b >= 0x80 && b <= 0x8f;
	default:   return (b & 0xc0) == 0x80;
	}
}

size_t tf_utf8_valid(const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0;

	while (i < n) {
		int len;

		/* most text is ASCII: skip it eight bytes at a time */
		while (i + 8 <= n) {
			uint64_t w;
			__builtin_memcpy(&w, s + i, 8);
			if (w & 0x8080808080808080ull)
				break;
			i += 8;
		}
		if (i >= n)
			break;
		len = seq_len(s[i]);
		if (!len || i + len > n)
			return i;
		if (len > 1 && !second_ok(s[i], s[i + 1]))
			return i;
		for (int k = 2; k < len; k++)
			if ((s[i + k] & 0xc0) != 0x80)
				return i;
		i += len;
	}
	return n;
}

int tf_utf8_next(const char *str, size_t n, int32_t *cp)
{
	const unsigned char *s = (const unsigned char *)str;
	int len = seq_len(s[0]);
	int32_t c;

	if (len == 0 || (size_t)len > n) {
		*cp = s[0];
		return 1;
	}
	c = len == 1 ? s[0] : s[0] & (0x7f >> len);
	for (int k = 1; k < len; k++)
		c = c << 6 | (s[k] & 0x3f);
	*cp = c;
	return len;
}

int tf_utf8_put(char *out, int32_t cp)
{
	unsigned char *o = (unsigned char *)out;

	if (cp < 0x80) {
		o[0] = cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = 0xc0 | cp >> 6;
		o[1] = 0x80 | (cp & 0x3f);
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = 0xe0 | cp >> 12;
		o[1] = 0x80 | (cp >> 6 & 0x3f);
		o[2] = 0x80 | (cp & 0x3f);
		return 3;
	}
	o[0] = 0xf0 | cp >> 18;
	o[1] = 0x80 | (cp >> 12 & 0x3f);
	o[2] = 0x80 | (cp >> 6 & 0x3f);
	o[3] = 0x80 | (cp & 0x3f);
	return 4;
}

size_t tf_utf8_pending(const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;

	/* look back over at most three continuation bytes for the lead byte
	 * of the last character; hold it only if it is a correct beginning
	 * still short of bytes (anything invalid goes out as it is) */
	for (size_t back = 1; back <= 4 && back <= n; back++) {
		unsigned char c = s[n - back];
		int len;

		if ((c & 0xc0) == 0x80)
			continue;
		len = seq_len(c);
		if (len <= (int)back)
			return 0;
		if (back >= 2 && !second_ok(c, s[n - back + 1]))
			return 0;
		return back;
	}
	return 0;
}
