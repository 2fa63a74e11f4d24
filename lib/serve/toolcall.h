/*
 * toolcall.h: the tool calls in a chat reply's content, as vLLM's
 * qwen3_coder tool parser finds them in the replies of Qwen3.5 models.
 *
 * Given tools, Qwen3.5 calls one in the form its chat template teaches:
 *
 *   Let me look.\n\n<tool_call>\n<function=get_weather>\n<parameter=city>
 *   Paris\n</parameter>\n</function>\n</tool_call>
 *
 * A call begins at "<tool_call>" followed by blanks and "<function=", and
 * ends at the first "</function>" or "</tool_call>" after it. Its name
 * runs up to the first ">" and must not be empty nor hold blanks, quotes
 * or any of {}<> (vLLM's test against names that are not real ones); its
 * parameters become the "arguments" JSON text (toolargs.h). The text
 * before the first call is the content, kept as it is (its newlines
 * too); text between and after calls, a call whose name is no name, and
 * "</tool_call>" go. A call still open when the reply ends (cut by
 * max_tokens, or a model that never closes it) is no call: its text,
 * from its "<tool_call>" on, is content.
 *
 * The text comes in pieces cut anywhere; bytes that may begin a call
 * wait for the next piece, and a call comes out whole once it ends, so
 * what comes out is the same however the text was cut: streamed, the
 * content goes out until a call begins and each call once it is over.
 *
 *   tf_toolcall t;
 *   tf_toolcall_init(&t, tools);
 *   tf_toolcall_push(&t, "Hi<tool_c", 9);   t.content: "Hi"
 *   tf_toolcall_push(&t, "all>\n<function=f>\n</function>", 29);
 *   tf_toolcall_end(&t);                    t.ncalls: 1, "f" with "{}"
 */
#ifndef TF_SERVE_TOOLCALL_H
#define TF_SERVE_TOOLCALL_H

#include <jansson.h>
#include <stddef.h>

#include "sbuf.h"

typedef struct {
	char *name;
	char *arguments;        /* a JSON object's text, as json.dumps writes it */
	char id[32];            /* "call_" and 24 hex digits */
} tf_toolcall_fn;

typedef struct {
	const json_t *tools;    /* the request's tools, for the parameters' types */
	int state;              /* before any call, between calls, inside one */
	size_t body;            /* inside: where its text after "<function=" begins in hold */
	size_t scanned;         /* inside: bytes of hold searched for its end */
	tf_sbuf hold;           /* bytes that may begin a call, or the open call */
	tf_sbuf content;        /* content out, not yet taken */
	tf_toolcall_fn *calls;  /* (ncalls) every call found so far */
	int ncalls, cap;
} tf_toolcall;

/* tools: an array (borrowed for t's life) or NULL */
void tf_toolcall_init(tf_toolcall *t, const json_t *tools);
/* the content's next bytes */
void tf_toolcall_push(tf_toolcall *t, const char *s, size_t n);
/* the reply is over: held bytes and an open call go out as content */
void tf_toolcall_end(tf_toolcall *t);
void tf_toolcall_free(tf_toolcall *t);

#endif
