/* tok_regex.c: tokenizer.json patterns (Oniguruma syntax) compiled by PCRE2 */
#include <stdlib.h>

#include "base/err.h"
#include "tok_regex.h"

/* tokenizers runs its patterns with Oniguruma, where \s is the Unicode
 * White_Space property and \h a hex digit; in PCRE2 \s also takes U+180E
 * and \h means horizontal space. Those escapes are rewritten to the
 * properties they stand for; everything else means the same to both.
 * from[i] is the pattern offset output byte i came from. */
static char *onig_to_pcre2(const char *pat, size_t len, size_t *out_len, size_t **from)
{
	static const char *const sub[][2] = {
		{ "s", "\\p{White_Space}" }, { "S", "\\P{White_Space}" },
		{ "h", "\\p{ASCII_Hex_Digit}" }, { "H", "\\P{ASCII_Hex_Digit}" },
	};
	char *out = tf_malloc(20 * len + 1);
	size_t o = 0, *map = tf_malloc((20 * len + 1) * sizeof *map);

	for (size_t i = 0; i < len; i++) {
		const char *rep = NULL;

		if (pat[i] == '\\' && i + 1 < len)
			for (size_t k = 0; k < sizeof sub / sizeof sub[0]; k++)
				if (pat[i + 1] == sub[k][0][0])
					rep = sub[k][1];
		if (rep) {
			for (; *rep; rep++)
				map[o] = i, out[o++] = *rep;
			i++;
			continue;
		}
		map[o] = i, out[o++] = pat[i];
		if (pat[i] == '\\' && i + 1 < len)     /* an escaped character stays itself */
			map[o] = i + 1, out[o++] = pat[++i];
	}
	map[o] = len;
	*out_len = o;
	*from = map;
	return out;
}

pcre2_code *tf_regex_compile(const char *pat, size_t len, int literal)
{
	size_t n = len, *from = NULL;
	char *re_text = literal ? (char *)pat : onig_to_pcre2(pat, len, &n, &from);
	int err;
	PCRE2_SIZE off;
	pcre2_code *re = pcre2_compile((PCRE2_SPTR)re_text, n,
				       literal ? PCRE2_UTF | PCRE2_LITERAL : PCRE2_UTF | PCRE2_UCP, &err, &off, NULL);

	if (!re) {
		PCRE2_UCHAR msg[256];
		pcre2_get_error_message(err, msg, sizeof msg);
		tf_err("regex '%.*s' is rejected by PCRE2 at offset %zu: %s", (int)(len > 200 ? 200 : len), pat,
		       from ? from[off <= n ? off : n] : (size_t)off, (char *)msg);
	} else {
		/* JIT is an optimisation: where it is unavailable the
		 * interpreter gives the same matches */
		pcre2_jit_compile(re, PCRE2_JIT_COMPLETE);
	}
	if (!literal)
		free(re_text);
	free(from);
	return re;
}
