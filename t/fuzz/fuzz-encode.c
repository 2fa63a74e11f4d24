/*
 * fuzz-encode.c: any bytes through the encoder of t/data's Shakespeare
 * tokenizer (the Qwen pre-tokenizer regex, NFC, added tokens, BPE), and
 * the ids back through the decoder's pieces
 */
#include <stdlib.h>

#include "base/err.h"
#include "fuzz.h"
#include "io/ids.h"
#include "tok/tok.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static tf_tok *t;
	tf_seq ids = { 0 };

	if (!t) {
		const char *dir = getenv("TF_FUZZ_DATA");
		char path[4096];

		snprintf(path, sizeof path, "%s/shakespeare-q35", dir ? dir : "t/data");
		if (!(t = tf_tok_load(path)))
			tf_die_err();
	}
	if (tf_tok_encode(t, (const char *)data, size, &ids) == 0)
		for (size_t i = 0; i < ids.n; i++) {
			size_t len;
			tf_tok_piece(t, ids.ids[i], &len);
		}
	tf_seq_free(&ids);
	return 0;
}
