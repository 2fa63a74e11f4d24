/*
 * tok_model.h: reading the BPE model and the added tokens of tokenizer.json.
 *
 * model.vocab goes into t->vocab, model.merges (each "a b" or ["a", "b"])
 * into t->bpe by their place in the list; added_tokens into t->added,
 * those marked normalized in normal form (so the normalizer is read first).
 */
#ifndef TF_TOK_MODEL_H
#define TF_TOK_MODEL_H

#include <jansson.h>

#include "tok.h"

int tf_tok_json_model(tf_tok *t, json_t *root);
int tf_tok_json_added(tf_tok *t, json_t *root);

#endif
