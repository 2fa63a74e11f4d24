/* fuzz-tokenizer.c: a tokenizer.json, then a text through what it built */
#include <string.h>

#include "fuzz.h"
#include "io/ids.h"
#include "tok/tok.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char text[] = "Hello, world!\n  <|im_start|>user 12345 caf\xc3\xa9 \xe4\xb8\xad\xf0\x9f\x98\x80";
	tf_tok *t = tf_tok_load_json((const char *)data, size, "fuzz");
	tf_seq ids = { 0 };

	if (t) {
		tf_tok_encode(t, text, strlen(text), &ids);
		tf_seq_free(&ids);
		tf_tok_free(t);
	}
	return 0;
}
