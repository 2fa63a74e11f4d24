/*
 * pyjson.h: JSON values written as Python writes them, for the chat
 * template: its tojson filter is json.dumps(x, ensure_ascii=False) in
 * transformers' template environment (", " and ": " between items, keys in
 * their order, control characters as \u00xx, other characters as they are,
 * floats in their shortest form that reads back), and its string filter is
 * str(x) (True, False, None, repr of a float).
 */
#ifndef TF_PYJSON_H
#define TF_PYJSON_H

#include <jansson.h>

#include "sbuf.h"

void tf_py_dumps(tf_sbuf *b, const json_t *v);
void tf_py_str(tf_sbuf *b, const json_t *v);

#endif
