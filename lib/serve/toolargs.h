/*
 * toolargs.h: a tool call's parameters, as Qwen3.5 writes them, made
 * into the JSON object of OpenAI's "arguments", as vLLM's qwen3_coder
 * tool parser makes it.
 *
 * The body of "<function=NAME>...</function>" holds parameters
 *
 *   <parameter=city>
 *   Paris
 *   </parameter>
 *
 * each value from after its "<parameter=KEY>" up to "</parameter>", the
 * next "<parameter=" or the body's end, one newline at its start and one
 * at its end dropped. A later parameter of the same name takes the
 * earlier one's place. Each value is typed by the tool's JSON schema
 * (the request's tools: function.parameters.properties.KEY.type, or the
 * first type of its anyOf that is not "null"):
 *
 *   string, str, text, varchar, char, enum   the text as it is
 *   a parameter the schema does not name     the text as it is
 *   "null" or "none" (any case), any other   null
 *   type, or a string one that allows null
 *   int*, uint*, long*, short*, unsigned*    Python's int(), else the text
 *   num*, float*                             Python's float(), an integer
 *                                            when it is whole, else the text
 *                                            (and the text for inf and nan)
 *   boolean, bool, binary                    true when it is "true" in any
 *                                            case, false otherwise
 *   object, array, arr, dict*, list*         JSON, else a Python literal,
 *                                            else the text
 *   anything else                            a Python literal
 *                                            (ast.literal_eval), else the text
 *
 * The Python literals read are numbers, strings ('...' or "..."),
 * True, False, None, lists, tuples and dicts of them; what else Python
 * would read (sets, bytes, complex numbers) stays text. The object is
 * written as Python's json.dumps(d, ensure_ascii=False) writes it:
 * {"city": "Paris", "days": 3}.
 */
#ifndef TF_SERVE_TOOLARGS_H
#define TF_SERVE_TOOLARGS_H

#include <jansson.h>
#include <stddef.h>

#include "sbuf.h"

/* body[0..n): the text after "<function=NAME>"; tools: the request's
 * tools array (or NULL). The arguments' JSON text is added to out */
void tf_toolargs(tf_sbuf *out, const json_t *tools, const char *name, const char *body, size_t n);

/* s[0..n) as Python's ast.literal_eval reads it, as a JSON value, or
 * NULL when it is not a literal of the forms above */
json_t *tf_py_literal(const char *s, size_t n);

#endif
