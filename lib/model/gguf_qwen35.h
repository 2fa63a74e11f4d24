/*
 * gguf_qwen35.h: a qwen35 GGUF (or split set) as a store (gguf_qwen35.c),
 * its tokenizer (gguf_tok.c), and a listing of its tensors.
 */
#ifndef TF_GGUF_QWEN35_H
#define TF_GGUF_QWEN35_H

#include <stdio.h>

#include "gguf.h"
#include "store.h"

/* fills s from the GGUF at path: config, tokenizer, every tensor under our
 * name; -1 with a message */
int tf_gguf_store_load(tf_store *s, const char *path);
/* the tokenizer.json text that the tokenizer.ggml.* keys describe; NULL
 * when there are none (no message) or they are bad (a message: tell by
 * whether tokenizer.ggml.tokens exists) */
char *tf_gguf_tokenizer_json(const tf_gguf *g);
/* a line a tensor: its GGUF name, type and shape, our name and form */
int tf_gguf_show(const char *path, FILE *out);

#endif
