/*
 * think.h: a chat reply split into its thinking (reasoning_content) and
 * its answer (content), as vLLM's qwen3 reasoning parser splits the
 * replies of Qwen3.5 models.
 *
 * With thinking on, the Qwen3.5 template ends the prompt inside an open
 * block ("<|im_start|>assistant\n<think>\n"), so the reply is its
 * thinking up to the first "</think>" and its answer after it:
 *
 *   "Fair.\n</think>\n\nGood morrow."  ->  "Fair.\n" and "\n\nGood morrow."
 *
 * The tags go; the text on each side stays as the model wrote it, the
 * newline before the tag and the two after it included, as vLLM keeps
 * them (the template strips them itself when the turn comes back as
 * history). Besides "</think>":
 *
 *   - a "<think>" the model writes itself (as models of the older Qwen3
 *     template do, which leave the block to the model) is dropped, the
 *     first one only: a later one is thinking text;
 *   - "<tool_call>" followed by blanks and "<function" and a blank or "="
 *     ends the thinking too: Qwen3.5 may call a tool without closing its
 *     block, and the call, from "<tool_call>" on, is the answer;
 *   - a reply that never closes the block (cut by max_tokens, or a model
 *     that never learnt to) is all thinking.
 *
 * With thinking off the template closes the block in the prompt
 * ("<think>\n\n</think>\n\n"): the reply is all answer and nothing in it
 * is looked at. The text comes in pieces cut anywhere, a tag split across
 * them; bytes that may begin a tag wait for the next piece, so what comes
 * out is the same however the reply was cut. Tags are ASCII, so cutting
 * at them never splits a UTF-8 character.
 *
 *   tf_think t;
 *   tf_think_init(&t, 1);
 *   tf_think_push(&t, "Fair.\n</th", 10);   t.reasoning: "Fair.\n"
 *   tf_think_push(&t, "ink>\n\nGood", 10);  t.content: "\n\nGood"
 *   tf_think_end(&t);
 */
#ifndef TF_SERVE_THINK_H
#define TF_SERVE_THINK_H

#include <stddef.h>

#include "sbuf.h"

typedef struct {
	int thinking;           /* inside the block: what comes is reasoning */
	int closed;             /* the block ended in the reply ("</think>" or a tool call) */
	int opened;             /* the model's own "<think>" was dropped */
	tf_sbuf hold;           /* bytes that may begin a tag, waiting */
	tf_sbuf reasoning;      /* reasoning out, not yet taken */
	tf_sbuf content;        /* content out, not yet taken */
} tf_think;

/* open: the prompt leaves a think block open (thinking on) */
void tf_think_init(tf_think *t, int open);
/* the reply's next bytes */
void tf_think_push(tf_think *t, const char *s, size_t n);
/* the reply is over: the bytes held go out as what they are (the start
 * of a tag that never came is reasoning) */
void tf_think_end(tf_think *t);
void tf_think_free(tf_think *t);
/* what one of t's outputs holds, as a new string (its length to *n); the
 * output is emptied */
char *tf_think_take(tf_sbuf *out, size_t *n);

/* whether a prompt's text leaves a think block open: its last "<think>"
 * comes after its last "</think>" */
int tf_think_open_in(const char *prompt, size_t n);

#endif
