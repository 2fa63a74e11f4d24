/*
 * tok_pipeline.h: reading the stages around the model in tokenizer.json.
 *
 * The normalizer (NFC, NFD, NFKC, NFKD, Sequence) into t->norm; the
 * pre_tokenizer (Split, ByteLevel last, Sequence) into t->pre; and a check
 * that the decoder is ByteLevel and the post_processor ByteLevel or none.
 * Any other type is refused by name.
 */
#ifndef TF_TOK_PIPELINE_H
#define TF_TOK_PIPELINE_H

#include <jansson.h>

#include "tok.h"

int tf_tok_json_normalizer(tf_tok *t, json_t *normalizer);
int tf_tok_json_pipeline(tf_tok *t, json_t *root);

#endif
