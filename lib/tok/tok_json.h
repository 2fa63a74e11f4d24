/*
 * tok_json.h: small readers for the fields of tokenizer.json (jansson).
 *
 * The loaders of tok_model.c and tok_pipeline.c return 0, or -1 with the
 * message set; tf_tok_load_json puts the file's name in front once.
 */
#ifndef TF_TOK_JSON_H
#define TF_TOK_JSON_H

#include <jansson.h>
#include <stdint.h>

#include "base/err.h"
#include "tok.h"

/* the "type" of a section, NULL if it has none */
static inline const char *tf_json_type(json_t *o)
{
	json_t *t = json_object_get(o, "type");

	return json_is_string(t) ? json_string_value(t) : NULL;
}

/* a boolean field that may be absent (then def) */
static inline int tf_json_bool(json_t *o, const char *key, int def)
{
	json_t *v = json_object_get(o, key);

	return json_is_boolean(v) ? json_is_true(v) : def;
}

/* an id: an integer in [0, TF_TOK_MAXID); what and key name it in the error */
static inline int tf_json_id(json_t *v, const char *what, const char *key, int32_t *id)
{
	json_int_t x;

	if (!json_is_integer(v))
		return tf_err("%s '%s' has no integer id", what, key);
	x = json_integer_value(v);
	if (x < 0 || x >= TF_TOK_MAXID)
		return tf_err("%s '%s' has id %lld, out of range", what, key, (long long)x);
	*id = x;
	return 0;
}

#endif
