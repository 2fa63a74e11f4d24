/* tok_chat.c: a text as a ChatML user turn */
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "tok_chat.h"

static const char head[] = "<|im_start|>user\n";
static const char tail[] = "<|im_end|>\n<|im_start|>assistant\n";

int tf_tok_has_chat(const tf_tok *t)
{
	return tf_tok_added_id(t, "<|im_start|>") >= 0 && tf_tok_added_id(t, "<|im_end|>") >= 0;
}

/* one text, not three: the turn's newline and the text's first bytes may
 * make one word */
int tf_tok_encode_chat(tf_tok *t, const char *text, size_t len, tf_seq *out)
{
	size_t nh = sizeof head - 1, nt = sizeof tail - 1;
	char *buf = tf_malloc(nh + len + nt);

	memcpy(buf, head, nh);
	memcpy(buf + nh, text, len);
	memcpy(buf + nh + len, tail, nt);
	int rc = tf_tok_encode(t, buf, nh + len + nt, out);
	free(buf);
	return rc;
}
