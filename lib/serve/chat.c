/* chat.c: the Qwen3.5 chat template, written natively (chat.h) */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/utf8.h"
#include "chat.h"
#include "pyjson.h"

static const char tools_head[] = "<|im_start|>system\n# Tools\n\nYou have access to the following functions:\n\n<tools>";
static const char tools_tail[] =
	"\n</tools>"
	"\n\nIf you choose to call a function ONLY reply in the following format with NO suffix:\n\n"
	"<tool_call>\n<function=example_function_name>\n<parameter=example_parameter_1>\nvalue_1\n</parameter>\n"
	"<parameter=example_parameter_2>\nThis is the value for the second parameter\nthat can span\nmultiple lines\n"
	"</parameter>\n</function>\n</tool_call>\n\n<IMPORTANT>\nReminder:\n"
	"- Function calls MUST follow the specified format: an inner <function=...></function> block must be "
	"nested within <tool_call></tool_call> XML tags\n"
	"- Required parameters MUST be specified\n"
	"- You may provide optional reasoning for your function call in natural language BEFORE the function "
	"call, but NOT after\n"
	"- If there is no function call available, answer the question like normal with your current knowledge "
	"and do not tell the user about function calls\n</IMPORTANT>";

/* a piece of a string */
typedef struct {
	const char *s;
	size_t n;
} str;

/* Python's str.isspace for one character */
static int py_space(int32_t c)
{
	return (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x20) || c == 0x85 || c == 0xa0 || c == 0x1680 ||
	       (c >= 0x2000 && c <= 0x200a) || c == 0x2028 || c == 0x2029 || c == 0x202f || c == 0x205f ||
	       c == 0x3000;
}

/* the jinja trim filter: str.strip() */
static str trim(str x)
{
	int32_t c;

	while (x.n) {
		int k = tf_utf8_next(x.s, x.n, &c);
		if (!py_space(c))
			break;
		x.s += k, x.n -= k;
	}
	while (x.n) {
		size_t k = 1;
		while (k < x.n && k < 4 && ((unsigned char)x.s[x.n - k] & 0xc0) == 0x80)
			k++;
		tf_utf8_next(x.s + x.n - k, k, &c);
		if (!py_space(c))
			break;
		x.n -= k;
	}
	return x;
}

static str strip_nl_left(str x)
{
	while (x.n && x.s[0] == '\n')
		x.s++, x.n--;
	return x;
}

static str strip_nl_right(str x)
{
	while (x.n && x.s[x.n - 1] == '\n')
		x.n--;
	return x;
}

/* where t occurs first in x, or -1 */
static long find(str x, const char *t)
{
	size_t tn = strlen(t);

	for (size_t i = 0; i + tn <= x.n; i++)
		if (!memcmp(x.s + i, t, tn))
			return (long)i;
	return -1;
}

static long rfind(str x, const char *t)
{
	size_t tn = strlen(t);

	if (tn > x.n)
		return -1;
	for (size_t i = x.n - tn + 1; i-- > 0;)
		if (!memcmp(x.s + i, t, tn))
			return (long)i;
	return -1;
}

/* split(t)[0] and split(t)[-1] */
static str before_first(str x, const char *t)
{
	long at = find(x, t);

	if (at >= 0)
		x.n = at;
	return x;
}

static str after_last(str x, const char *t)
{
	long at = rfind(x, t);

	if (at >= 0) {
		x.s += at + strlen(t);
		x.n -= at + strlen(t);
	}
	return x;
}

static int starts(str x, const char *t)
{
	size_t tn = strlen(t);
	return x.n >= tn && !memcmp(x.s, t, tn);
}

static int ends(str x, const char *t)
{
	size_t tn = strlen(t);
	return x.n >= tn && !memcmp(x.s + x.n - tn, t, tn);
}

static void add(tf_sbuf *b, str x)
{
	tf_sbuf_add(b, x.s, x.n);
}

/* the template's render_content macro: a message's content as text into
 * out; -1 with a message */
static int render_content(tf_sbuf *out, const json_t *content)
{
	if (!content || json_is_null(content))
		return 0;
	if (json_is_string(content)) {
		tf_sbuf_add(out, json_string_value(content), json_string_length(content));
		return 0;
	}
	if (!json_is_array(content))
		return tf_err("Unexpected content type.");
	size_t i;
	json_t *item;
	json_array_foreach(content, i, item) {
		if (!json_is_object(item))
			return tf_err("a content part must be an object, not %s", json_is_string(item) ? "a string" : "this");
		const json_t *type = json_object_get(item, "type");
		int typed = json_is_string(type);
		if (json_object_get(item, "image") || json_object_get(item, "image_url") ||
		    json_object_get(item, "video") ||
		    (typed && (!strcmp(json_string_value(type), "image") || !strcmp(json_string_value(type), "video"))))
			return tf_err("images and videos are not supported: the model reads text alone");
		const json_t *text = json_object_get(item, "text");
		if (!text)
			return tf_err("Unexpected item type in content.");
		if (!json_is_string(text))
			return tf_err("a text part's text must be a string");
		tf_sbuf_add(out, json_string_value(text), json_string_length(text));
	}
	return 0;
}

/* render_content(...)|trim as a new string in *b (freed by the caller) */
static int content_trimmed(tf_sbuf *b, const json_t *content, str *out)
{
	b->len = 0;
	if (b->s)
		b->s[0] = 0;
	if (render_content(b, content) < 0)
		return -1;
	*out = trim((str){ b->s ? b->s : "", b->len });
	return 0;
}

static const char *role_of(const json_t *m)
{
	const json_t *r = json_object_get(m, "role");
	return json_is_string(r) ? json_string_value(r) : "";
}

/* a tool call's parameters, as the template writes a mapping's */
static int render_arguments(tf_sbuf *b, const json_t *args)
{
	const char *k;
	json_t *v;

	json_object_foreach((json_t *)args, k, v) {
		tf_sbuf_puts(b, "<parameter=");
		tf_sbuf_puts(b, k);
		tf_sbuf_puts(b, ">\n");
		if (json_is_object(v) || json_is_array(v))
			tf_py_dumps(b, v);
		else
			tf_py_str(b, v);
		tf_sbuf_puts(b, "\n</parameter>\n");
	}
	return 0;
}

static int render_tool_calls(tf_sbuf *b, const json_t *calls, str content)
{
	size_t i;
	json_t *call;

	json_array_foreach(calls, i, call) {
		if (!json_is_object(call))
			return tf_err("a tool call must be an object");
		const json_t *fn = json_object_get(call, "function");
		if (fn) {
			if (!json_is_object(fn))
				return tf_err("a tool call's function must be an object");
			call = (json_t *)fn;
		}
		const json_t *name = json_object_get(call, "name");
		if (!json_is_string(name))
			return tf_err("a tool call's name must be a string");
		if (i == 0)
			tf_sbuf_puts(b, trim(content).n ? "\n\n<tool_call>\n<function=" : "<tool_call>\n<function=");
		else
			tf_sbuf_puts(b, "\n<tool_call>\n<function=");
		tf_sbuf_add(b, json_string_value(name), json_string_length(name));
		tf_sbuf_puts(b, ">\n");
		const json_t *args = json_object_get(call, "arguments");
		json_t *parsed = NULL;
		if (json_is_string(args)) {
			parsed = json_loadb(json_string_value(args), json_string_length(args), JSON_DECODE_ANY, NULL);
			if (json_is_object(parsed))
				args = parsed;
		}
		if (json_is_object(args))
			render_arguments(b, args);
		json_decref(parsed);
		tf_sbuf_puts(b, "</function>\n</tool_call>");
	}
	return 0;
}

static int render(tf_sbuf *b, const json_t *messages, const json_t *tools, const tf_chat_opts *o, tf_sbuf *tmp)
{
	size_t n = json_array_size(messages);
	str c;

	if (!json_is_array(messages))
		return tf_err("'messages' must be an array");
	if (!n)
		return tf_err("No messages provided.");
	for (size_t i = 0; i < n; i++)
		if (!json_is_object(json_array_get(messages, i)))
			return tf_err("message %zu must be an object", i);
	if (tools && !json_is_null(tools) && !json_is_array(tools))
		return tf_err("'tools' must be an array");
	const json_t *first = json_array_get(messages, 0);
	int first_system = !strcmp(role_of(first), "system");
	if (json_array_size(tools)) {
		size_t i;
		json_t *t;
		tf_sbuf_puts(b, tools_head);
		json_array_foreach(tools, i, t) {
			tf_sbuf_puts(b, "\n");
			tf_py_dumps(b, t);
		}
		tf_sbuf_puts(b, tools_tail);
		if (first_system) {
			if (content_trimmed(tmp, json_object_get(first, "content"), &c) < 0)
				return -1;
			if (c.n) {
				tf_sbuf_puts(b, "\n\n");
				add(b, c);
			}
		}
		tf_sbuf_puts(b, "<|im_end|>\n");
	} else if (first_system) {
		if (content_trimmed(tmp, json_object_get(first, "content"), &c) < 0)
			return -1;
		tf_sbuf_puts(b, "<|im_start|>system\n");
		add(b, c);
		tf_sbuf_puts(b, "<|im_end|>\n");
	}

	/* the last user turn that is not only tool responses: the assistant
	 * turns after it keep their reasoning */
	long last_query = -1;
	for (size_t i = n; i-- > 0;) {
		const json_t *m = json_array_get(messages, i);
		if (strcmp(role_of(m), "user"))
			continue;
		if (content_trimmed(tmp, json_object_get(m, "content"), &c) < 0)
			return -1;
		if (!(starts(c, "<tool_response>") && ends(c, "</tool_response>"))) {
			last_query = (long)i;
			break;
		}
	}
	if (last_query < 0)
		return tf_err("No user query found in messages.");

	for (size_t i = 0; i < n; i++) {
		const json_t *m = json_array_get(messages, i);
		const char *role = role_of(m);
		if (content_trimmed(tmp, json_object_get(m, "content"), &c) < 0)
			return -1;
		if (!strcmp(role, "system")) {
			if (i)
				return tf_err("System message must be at the beginning.");
		} else if (!strcmp(role, "user")) {
			tf_sbuf_puts(b, "<|im_start|>user\n");
			add(b, c);
			tf_sbuf_puts(b, "<|im_end|>\n");
		} else if (!strcmp(role, "assistant")) {
			str reasoning = { "", 0 };
			const json_t *rc = json_object_get(m, "reasoning_content");
			if (json_is_string(rc)) {
				reasoning = (str){ json_string_value(rc), json_string_length(rc) };
			} else if (find(c, "</think>") >= 0) {
				reasoning = strip_nl_left(after_last(strip_nl_right(before_first(c, "</think>")), "<think>"));
				c = strip_nl_left(after_last(c, "</think>"));
			}
			reasoning = trim(reasoning);
			if ((long)i > last_query) {
				tf_sbuf_puts(b, "<|im_start|>assistant\n<think>\n");
				add(b, reasoning);
				tf_sbuf_puts(b, "\n</think>\n\n");
				add(b, c);
			} else {
				tf_sbuf_puts(b, "<|im_start|>assistant\n");
				add(b, c);
			}
			const json_t *calls = json_object_get(m, "tool_calls");
			if (calls && !json_is_null(calls) && !json_is_array(calls))
				return tf_err("'tool_calls' must be an array");
			if (json_array_size(calls) && render_tool_calls(b, calls, c) < 0)
				return -1;
			tf_sbuf_puts(b, "<|im_end|>\n");
		} else if (!strcmp(role, "tool")) {
			if (i && strcmp(role_of(json_array_get(messages, i - 1)), "tool"))
				tf_sbuf_puts(b, "<|im_start|>user");
			tf_sbuf_puts(b, "\n<tool_response>\n");
			add(b, c);
			tf_sbuf_puts(b, "\n</tool_response>");
			if (i + 1 == n || strcmp(role_of(json_array_get(messages, i + 1)), "tool"))
				tf_sbuf_puts(b, "<|im_end|>\n");
		} else {
			return tf_err("Unexpected message role.");
		}
	}
	if (o->add_generation_prompt)
		tf_sbuf_puts(b, o->thinking_off ? "<|im_start|>assistant\n<think>\n\n</think>\n\n"
						: "<|im_start|>assistant\n<think>\n");
	return 0;
}

int tf_chat_render(tf_sbuf *b, const json_t *messages, const json_t *tools, const tf_chat_opts *o)
{
	tf_sbuf tmp = { 0 };
	/* content_trimmed's results point into tmp: each is used before the next */
	int rc = render(b, messages, tools, o, &tmp);
	tf_sbuf_free(&tmp);
	return rc;
}

int tf_chat_template_known(const char *text)
{
	/* the marks of the family's format: ChatML turns, thinking blocks and
	 * the XML tool calls */
	return strstr(text, "<|im_start|>") && strstr(text, "<think>") && strstr(text, "<tool_call>") &&
	       strstr(text, "<function=") && strstr(text, "<tool_response>");
}
