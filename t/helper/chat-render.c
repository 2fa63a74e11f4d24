/*
 * chat-render: tf-serve's chat template (lib/serve/chat.h) as a filter, for
 * the jinja2 oracle. Each input line is a JSON object {"messages": [...],
 * "tools": [...], "enable_thinking": bool, "add_generation_prompt": bool}
 * (only messages needed); each output line is {"text": "..."} or
 * {"error": "..."}.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "serve/chat.h"

int main(void)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;

	tf_prog = "chat-render";
	while ((n = getline(&line, &cap, stdin)) > 0) {
		json_error_t je;
		json_t *in = json_loadb(line, n, 0, &je), *out;
		if (!in)
			tf_die("line is not JSON: %s", je.text);
		const json_t *agp = json_object_get(in, "add_generation_prompt");
		tf_chat_opts o = { .add_generation_prompt = !agp || json_is_true(agp),
				   .thinking_off = json_is_false(json_object_get(in, "enable_thinking")) };
		tf_sbuf b = { 0 };
		if (tf_chat_render(&b, json_object_get(in, "messages"), json_object_get(in, "tools"), &o) < 0)
			out = json_pack("{s:s}", "error", tf_errmsg());
		else
			out = json_pack("{s:s%}", "text", b.s ? b.s : "", b.len);
		char *s = json_dumps(out, JSON_COMPACT);
		puts(s);
		free(s);
		json_decref(out);
		json_decref(in);
		tf_sbuf_free(&b);
	}
	free(line);
	return fflush(stdout) || ferror(stdout);
}
