/*
 * chat.h: a conversation as the Qwen3.5 chat template renders it, written
 * natively: system, user, assistant (with its reasoning and tool calls) and
 * tool turns, the tools' signatures in the system turn, the assistant's
 * turn opened with thinking on (<think>\n) or off (an empty think block).
 * The text equals what Python's jinja2 renders from the template text
 * (t/data/qwen3.5-chat-template.jinja) in transformers' template
 * environment; where the template raises an exception the render fails
 * with the same message. Images and videos, which the template would mark
 * with vision tokens, are refused: the models served read text alone.
 *
 * One departure an OpenAI client needs: a tool call's "arguments" given as
 * a string holding a JSON object (as OpenAI sends them) is read as that
 * object, as vLLM does, so that the parameters are rendered.
 */
#ifndef TF_SERVE_CHAT_H
#define TF_SERVE_CHAT_H

#include <jansson.h>

#include "sbuf.h"

typedef struct {
	int add_generation_prompt;
	int thinking_off;       /* enable_thinking given as false */
} tf_chat_opts;

/* messages: an array of objects; tools: an array, or NULL. -1 with a
 * message on input the template refuses */
int tf_chat_render(tf_sbuf *b, const json_t *messages, const json_t *tools, const tf_chat_opts *o);

/* whether a chat template's text is the Qwen3.5 family's, the one format
 * tf_chat_render writes */
int tf_chat_template_known(const char *text);

#endif
