/* fuzz-gguf.c: a GGUF file: the container (metadata of every type, tensor
 * infos, offsets), the tokenizer its keys describe, and a qwen35 model
 * loaded from it (names, types, the reordering of value heads) */
#include <stdlib.h>
#include <unistd.h>

#include "fuzz.h"
#include "model/gguf.h"
#include "model/gguf_qwen35.h"
#include "model/model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64];
	int fd = fuzz_file(data, size, path);
	tf_gguf *g;

	if (fd < 0)
		return 0;
	if ((g = tf_gguf_open(path))) {
		free(tf_gguf_tokenizer_json(g));
		tf_gguf_close(g);
	}
	tf_model_close(tf_model_open(path));
	close(fd);
	return 0;
}
